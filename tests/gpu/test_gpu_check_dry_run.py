#!/usr/bin/env python3
"""scripts/gpu_check without a GPU: the dry run over this build tree, and its classifier.

Usage: test_gpu_check_dry_run.py GPU_CHECK BUILD_DIR SCRATCH_DIR

1. The dry run (--no-build over BUILD_DIR's real binaries) must exit 3 with the device phases
   NO-GPU, the host phases PASS, the build phases SKIP, and OUT holding at most 8 plain files
   (summary.txt, logs.tgz, ...) no more than two folders down, as the device tool returns them.
   Where the real binaries see a usable GPU the dry run is not a dry run: exit 77 (skipped).
2. Over stub binaries (shell scripts standing in for the test binaries), the classifier:
   a binary that does not load (exit 127) is FAIL, never NO-GPU; a device line that says
   "not usable" without the marker is no GPU; a sweep cut by the time limit keeps the rows
   that finished and is SKIP, and a phase with no time left is SKIP.
3. The summary table's cuda.fft columns (default, cached filters, fused crop, contiguous
   layout) each read their own sweep file.
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile

ALLOWED = {"summary.txt", "logs.tgz", "sweep_mb32.csv", "sweep_mb128.csv", "sweep_mb32_cached.csv",
           "check_mb1.csv", "ceilings.csv"}
NAME = re.compile(r"^[A-Za-z0-9._-]+$")
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def run(gpu_check, build, out, *extra, env=None):
    shutil.rmtree(out, ignore_errors=True)
    e = dict(os.environ, **(env or {}))
    e.pop("OUT", None)
    p = subprocess.run([gpu_check, "--no-build", "--build-dir", build, *extra, out], env=e,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    print(p.stdout)
    return p.returncode


def statuses(out):
    """{phase: status} from summary.txt's table, and its RESULT line."""
    table, result = {}, None
    with open(os.path.join(out, "summary.txt")) as f:
        lines = f.read().splitlines()
    for line in lines:
        if line.startswith("RESULT "):
            result = dict(w.split("=", 1) for w in line.split()[1:])
        fields = line.split()
        if len(fields) >= 2 and fields[1] in ("PASS", "FAIL", "SKIP", "NO-GPU"):
            table[fields[0]] = fields[1]
    expect(len(lines) <= 60, "summary.txt is longer than one screen: %d lines" % len(lines))
    return table, result


def check_layout(out):
    files = []
    for dirpath, dirnames, filenames in os.walk(out):
        depth = os.path.relpath(dirpath, out).count(os.sep) + (dirpath != out)
        expect(depth <= 2, "folder too deep: " + dirpath)
        for name in dirnames + filenames:
            expect(NAME.match(name) is not None, "name the device tool refuses: " + name)
        for name in filenames:
            path = os.path.join(dirpath, name)
            expect(stat.S_ISREG(os.lstat(path).st_mode), "not a plain file: " + path)
            files.append(os.path.relpath(path, out))
    expect(len(files) <= 8, "%d files in OUT (at most 8 come back): %s" % (len(files), files))
    expect(set(files) <= ALLOWED, "unexpected files in OUT: %s" % sorted(set(files) - ALLOWED))
    expect("summary.txt" in files and "logs.tgz" in files, "summary.txt or logs.tgz missing")
    with tarfile.open(os.path.join(out, "logs.tgz")) as t:
        names = {os.path.normpath(n) for n in t.getnames()}
    for needed in ("summary.txt", "env.log", "test_cuda_host.log", "gpu_check.log"):
        expect(needed in names, "logs.tgz lacks " + needed)


def dry_run(gpu_check, build, scratch):
    out = os.path.join(scratch, "out")
    # The real host tests under a loaded ctest -j on a small machine can take several times
    # what they take on the 16-core device machine: scale the caps, not the expectations.
    code = run(gpu_check, build, out, env={"GPU_CHECK_CAP_SCALE": "4"})
    table, result = statuses(out)
    if table.get("probe") == "PASS":
        print("a usable GPU is here: the dry run would be a real check; skipped")
        sys.exit(77)
    expect(code == 3, "the dry run exited %d, not 3 (no GPU)" % code)
    for phase in ("probe", "workspace", "math_modes", "graphs", "ceilings", "gpu_tests", "sweep",
                  "check", "sweep_mb128", "sweep_cached", "sweep_crop", "sweep_layout"):
        expect(table.get(phase) == "NO-GPU", "%s is %s, not NO-GPU" % (phase, table.get(phase)))
    for phase in ("env", "host_tests", "convbench"):
        expect(table.get(phase) == "PASS", "%s is %s, not PASS" % (phase, table.get(phase)))
    for phase in ("gtest", "configure", "build"):
        expect(table.get(phase) == "SKIP", "%s is %s, not SKIP" % (phase, table.get(phase)))
    expect(result is not None and result.get("overall") == "NO-GPU" and result.get("fail") == "0",
           "RESULT line: %s" % result)
    check_layout(out)


# What `convbench list --format json` prints with the CUDA module loaded (the part gpu_check
# reads), and with a module the dynamic loader refused.
LIST_LOADED = ('''[[ $1 == list ]] && echo '{"algorithms": [{"name": "cuda.fft"}, '''
               '''{"name": "cuda.im2col"}], "not_built": []}' && exit 0''')
LIST_UNLOADED = ('''[[ $1 == list ]] && echo '{"algorithms": [], "not_built": [{"name": '''
                 '''"cuda.*", "reason": "libconvlab_cuda.so: libcufft.so.12: cannot open"}]}' '''
                 '''&& exit 0''')

STUB_GTEST = """#!/bin/sh
echo "[  PASSED  ] 1 test."
"""


def stub_tree(root, host_line, workspace_body, convbench_body=LIST_LOADED):
    """A build folder of shell scripts named like gpu_check's binaries."""
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(os.path.join(root, "tests"))
    os.makedirs(os.path.join(root, "bench"))
    bodies = {
        "tests/test_cuda_host": "#!/bin/sh\necho '%s'\necho '[  PASSED  ] 1 test.'\n" % host_line,
        "tests/test_cuda_fft_host": STUB_GTEST,
        "tests/test_cuda_emulated": STUB_GTEST,
        "tests/test_cuda_winograd_host": STUB_GTEST,
        "tests/test_gpu_algorithms": STUB_GTEST,
        "tests/test_gpu_math_modes": STUB_GTEST,
        "tests/test_gpu_graph": STUB_GTEST,
        "tests/test_gpu_workspace": "#!/bin/sh\n" + workspace_body + "\n",
        "tests/test_gpu_ceilings":
            "#!/bin/sh\necho 'CEILINGS device=\"stub\" copy_gb_per_s=4000 sgemm_gflop_per_s=50000'\n",
        "bench/convbench": "#!/bin/bash\n" + convbench_body + "\n",
    }
    for name, body in bodies.items():
        path = os.path.join(root, name)
        with open(path, "w") as f:
            f.write(body)
        os.chmod(path, 0o755)


# A convbench stand-in for a GPU machine: `run --out F` writes two rows to F.partial and
# waits; on SIGTERM it stops as convbench does (F.partial kept, F not written).
SLOW_CONVBENCH = LIST_LOADED + r"""
out=""
while (($#)); do [[ $1 == --out ]] && out=$2; shift; done
printf 'layer,pass,algorithm,status,time_ms,gflops,total_bytes,workspace_bytes\n' > "$out.partial"
printf 'L1,fwd,cudnn.gemm,ok,2.0,100,1000,0\nL1,fwd,cuda.fft,ok,1.0,200,1000,0\n' >> "$out.partial"
trap 'exit 130' TERM
sleep 200 & wait
"""


def classifier(gpu_check, scratch):
    out = os.path.join(scratch, "stub_out")
    tree = os.path.join(scratch, "stub_unloadable")
    stub_tree(tree, "CONVLAB_GPU usable=no reason=CUDA device 0 is not usable",
              "echo 'test_gpu_workspace: error while loading shared libraries: libcudnn.so.9' >&2; "
              "exit 127")
    code = run(gpu_check, tree, out)
    table, _ = statuses(out)
    expect(code == 1, "a binary that does not load: exit %d, not 1" % code)
    expect(table.get("workspace") == "FAIL", "unloadable binary is %s" % table.get("workspace"))
    expect(table.get("ceilings") == "NO-GPU", "'not usable' read as %s" % table.get("ceilings"))
    check_layout(out)

    tree = os.path.join(scratch, "stub_nomodule")
    stub_tree(tree, "CONVLAB_GPU usable=no reason=none", "exit 0", LIST_UNLOADED)
    run(gpu_check, tree, out)
    table, _ = statuses(out)
    expect(table.get("convbench") == "FAIL",
           "a CUDA module that did not load: convbench is %s" % table.get("convbench"))
    with open(os.path.join(out, "summary.txt")) as f:
        expect("libcufft.so.12" in f.read(), "the summary does not name the loader's message")

    tree = os.path.join(scratch, "stub_nomarker")
    stub_tree(tree, "CUDA device 0: not usable", "exit 0")
    run(gpu_check, tree, out)
    table, _ = statuses(out)
    expect(table.get("probe") == "FAIL", "no marker line: probe is %s" % table.get("probe"))
    expect(table.get("workspace") != "PASS", "'not usable' prose was read as a GPU")

    tree = os.path.join(scratch, "stub_gpu")
    stub_tree(tree, "CONVLAB_GPU usable=yes", "echo '[  PASSED  ] 1 test.'", SLOW_CONVBENCH)
    # 32 s: the sweep gets what is left after the 15 s reserve, the check nothing.
    code = run(gpu_check, tree, out, "--budget", "32")
    table, result = statuses(out)
    expect(table.get("workspace") == "PASS", "stub GPU: workspace is %s" % table.get("workspace"))
    expect(table.get("sweep") == "SKIP", "a sweep cut by the limit is %s" % table.get("sweep"))
    for phase in ("check", "sweep_mb128"):
        expect(table.get(phase) == "SKIP", "a phase without time: %s is %s" % (phase, table.get(phase)))
    expect(code == 0, "stub GPU run exited %d: %s" % (code, result))
    sweep = os.path.join(out, "sweep_mb32.csv")
    expect(os.path.exists(sweep), "the cut sweep left no sweep_mb32.csv")
    if os.path.exists(sweep):
        with open(sweep) as f:
            expect(len(f.read().splitlines()) == 3, "the cut sweep lost its finished rows")
    with open(os.path.join(out, "summary.txt")) as f:
        text = f.read()
    expect("2.00x" in text, "the summary has no table from the cut sweep's rows")
    expect("ceilings:" in text and os.path.exists(os.path.join(out, "ceilings.csv")),
           "the ceilings line is not in the summary")
    check_layout(out)


def knob_columns(gpu_check, scratch):
    """The summary table's cuda.fft columns: each knob sweep's time relative to cuDNN's."""
    table = os.path.join(os.path.dirname(gpu_check), "gpu_check_table.py")
    header = "layer,pass,algorithm,status,time_ms\n"
    files = {"sweep": "L1,fwd,cudnn.gemm,ok,2.0\nL1,fwd,cuda.fft,ok,1.0\n",
             "cached": "L1,fwd,cuda.fft,ok,0.8\n", "crop": "L1,fwd,cuda.fft,ok,0.5\n",
             "contiguous": "L1,fwd,cuda.fft,ok,4.0\n"}
    paths = {}
    for name, body in files.items():
        paths[name] = os.path.join(scratch, "table_%s.csv" % name)
        with open(paths[name], "w") as f:
            f.write(header + body)
    missing = os.path.join(scratch, "absent.csv")
    text = subprocess.run([sys.executable, table, paths["sweep"], missing, missing,
                           paths["cached"], paths["crop"], paths["contiguous"]],
                          capture_output=True, text=True).stdout
    row = next((line.split() for line in text.splitlines() if line.startswith("L1")), [])
    # fastest cudnn, ms, floor, fft, fft cached, fft crop, fft contiguous, im2col
    expect(row[2:] == ["cudnn.gemm", "2.000", "-", "2.00x", "2.50x", "4.00x", "0.50x", "-"],
           "the table's cuda.fft columns: %s" % text)


def main():
    gpu_check, build, scratch = sys.argv[1:4]
    os.makedirs(scratch, exist_ok=True)
    knob_columns(gpu_check, scratch)
    dry_run(gpu_check, build, scratch)
    classifier(gpu_check, scratch)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("gpu_check dry run and classifier: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
