#!/usr/bin/python3
"""Measure convlab's CPU strategies and write docs/results.md from the measurements.

    bench/results/make_results.py --convbench build/release/bench/convbench   # measure + write
    bench/results/make_results.py --from bench/results/data                   # rewrite only

Every table and every claim in docs/results.md comes from this script and the CSVs it
reads: claims are computed from the tables (counts, ranges, crossovers), so they cannot say
more than the tables show, and each names the machine it was measured on. The machine
record (CPU model, cores, ISA, library versions, threads and CPU affinity, load average) is
taken when measuring and stored beside the CSVs in machine.json.

Uses /usr/bin/python3 with matplotlib (python3-matplotlib) for the figures, through
bench/plot_sweep.py.
"""

import argparse
import json
import os
import pathlib
import platform
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
BENCH = HERE.parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(HERE))

import plot_sweep  # noqa: E402  (the CSV reader and the figures)

# The sweeps behind docs/results.md: name -> (what it shows, convbench run arguments). MB and
# REPS are filled in from the command line; --max-time 0 makes every case run every rep.
SWEEPS = {
    "convnet": ("convnet-benchmarks L1-L5, every pass",
                ["--suite", "convnet-benchmarks", "--mb", "{mb}",
                 "--passes", "fwd,bwd_data,bwd_filter"]),
    "resnet50": ("ResNet-50's 3x3 layers and two 1x1 layers (one strided), every pass",
                 ["--shape", 'mb{mb}ic64ih56oc64oh56kh1n"resnet50:res2a_branch2a"',
                  "--shape", 'mb{mb}ic64ih56oc64oh56kh3ph1n"resnet50:res2a_branch2b"',
                  "--shape", 'mb{mb}ic256ih56oc128oh28kh1sh2n"resnet50:res3a_branch2a"',
                  "--shape", 'mb{mb}ic128ih28oc128oh28kh3ph1n"resnet50:res3a_branch2b"',
                  "--shape", 'mb{mb}ic256ih14oc256oh14kh3ph1n"resnet50:res4a_branch2b"',
                  "--shape", 'mb{mb}ic512ih7oc512oh7kh3ph1n"resnet50:res5a_branch2b"',
                  "--passes", "fwd,bwd_data,bwd_filter"]),
    "crossover": ("forward time and memory against the kernel size, 32 -> 32 channels, 64x64",
                  ["--shape", "mb{mb}ic32ih64oc32kh3", "--vary", "kh=1:13:2", "--passes", "fwd"]),
}
# Every CPU strategy and oneDNN's kernel of each strategy it has (and its own choice).
ALGORITHMS = ("cpu.im2col,cpu.winograd,cpu.fft,cpu.fft_tiled,cpu.onednn.direct,"
              "cpu.onednn.winograd,cpu.onednn")


def shell_word(text):
    """A command-line word as a POSIX shell reads it back."""
    safe = all(c.isalnum() or c in "-_=.,:/+*" for c in text)
    return text if safe and text else "'" + text.replace("'", "'\\''") + "'"


def cpu_record():
    """CPU model, cores, ISA extensions that matter for these kernels, affinity, load."""
    model, flags, ids = platform.processor() or "unknown", set(), {}
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            key = key.strip()
            if key == "model name":
                model = value.strip()
            elif key == "flags":
                flags = set(value.split())
            elif key in ("cpu family", "model", "stepping") and value.strip().isdigit():
                ids.setdefault("cpu_" + key.replace("cpu ", ""), int(value))
    except OSError:
        pass
    isa = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl",
                       "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags]
    return {
        "cpu": model,
        **ids,
        "logical_cpus": os.cpu_count(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "isa": isa,
        "caches": cache_record(),
        "transparent_hugepage": transparent_hugepage_mode(),
        "kernel": platform.release(),
    }


def cache_record():
    """CPU 0's data caches as sysfs gives them, e.g. "L1d 48 KiB, L2 2 MiB, L3 480 MiB (2 CPUs)".

    A virtual machine may report a family and model that name no real CPU (a hypervisor's
    choice), so the caches are what tells such machines apart; the blocking bounds of the
    strategies are also tuned against them.
    """
    parts = []
    for index in sorted(pathlib.Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = ((index / f).read_text().strip() for f in ("level", "type", "size"))
            shared = (index / "shared_cpu_list").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        sharing = sum(int(b) - int(a) + 1 for a, _, b in
                      (r.partition("-") if "-" in r else (r, "", r) for r in shared.split(",")))
        parts.append(f"L{level}{'d' if kind == 'Data' else ''} {binary_size(size)}" +
                     (f" ({sharing} CPUs)" if sharing > 1 else ""))
    return ", ".join(parts) or "unknown"


def binary_size(sysfs_size):
    """sysfs's "2048K" as "2 MiB"; a size it writes otherwise is kept as written."""
    match = re.fullmatch(r"(\d+)K", sysfs_size)
    if not match:
        return sysfs_size
    kib = int(match.group(1))
    return f"{kib // 1024} MiB" if kib % 1024 == 0 else f"{kib} KiB"


def transparent_hugepage_mode():
    """The kernel's transparent huge page mode ("always", "madvise", "never"): with "always"
    large buffers may sit on 2 MiB pages, which changes their TLB misses and so the times."""
    try:
        text = pathlib.Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return "unknown"
    chosen = re.search(r"\[(\w+)\]", text)
    return chosen.group(1) if chosen else text.strip()


def pinning_record(env):
    keys = ("CONVLAB_NUM_THREADS", "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES",
            "GOMP_CPU_AFFINITY", "OPENBLAS_NUM_THREADS")
    return {k: env.get(k, "unset") for k in keys}


def measure(args, data):
    data.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["CONVLAB_NUM_THREADS"] = str(args.thread_count)
    record = {"machine": cpu_record(), "environment": pinning_record(env), "sweeps": {}}
    for name, (_, template) in SWEEPS.items():
        out = data / f"{name}.csv"
        shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
        command = [args.convbench, "run", *[a.format(mb=args.mb) for a in template],
                   "--algos", ALGORITHMS, "--reps", str(args.reps), "--warmup", "1",
                   "--max-time", "0", "--out", str(out), "--format", "csv"]
        shown_command = command[:-4] + ["--out", str(shown)]
        load_before = os.getloadavg()
        start = time.monotonic()
        result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        wall = time.monotonic() - start
        if result.returncode not in (0, 1):
            sys.exit(f"make_results: {' '.join(command)} failed: {result.stderr.strip()}")
        record["sweeps"][name] = {
            "command": "CONVLAB_NUM_THREADS={} convbench {}".format(
                args.thread_count, " ".join(shell_word(a) for a in shown_command[1:])),
            "wall_s": round(wall, 1),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
        }
        print(f"make_results: {name}: {wall:.0f} s", file=sys.stderr)
    (data / "machine.json").write_text(json.dumps(record, indent=1) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--convbench", help="the convbench binary: measure now")
    parser.add_argument("--from", dest="source", help="read the CSVs of an earlier measurement")
    parser.add_argument("--data", default=str(HERE / "data"),
                        help="where measuring writes threads-N/ with its CSVs and machine.json")
    parser.add_argument("--mb", type=int, default=8, help="batch of every layer")
    parser.add_argument("--reps", type=int, default=7, help="timed repetitions (>= 5)")
    parser.add_argument("--threads", default=f"1,{len(os.sched_getaffinity(0))}",
                        help="comma-separated thread counts, one measurement each")
    parser.add_argument("--out", default=str(ROOT / "docs" / "results.md"))
    parser.add_argument("--img", default=str(ROOT / "docs" / "img"))
    args = parser.parse_args()
    if bool(args.convbench) == bool(args.source):
        parser.error("give --convbench (measure) or --from DIR (rewrite from CSVs)")
    if args.reps < 5:
        parser.error("--reps: medians of at least 5 repetitions")
    data = pathlib.Path(args.source or args.data)
    if args.convbench:
        for threads in sorted({int(t) for t in args.threads.split(",")}):
            args.thread_count = threads
            measure(args, data / f"threads-{threads}")
    datasets = []
    for folder in sorted(data.glob("threads-*"), key=lambda f: int(f.name.split("-")[1])):
        machine = json.loads((folder / "machine.json").read_text())
        sweeps = {name: plot_sweep.read_rows(str(folder / f"{name}.csv")) for name in SWEEPS}
        n = int(folder.name.split("-")[1])
        datasets.append((f"{n} thread{'s' if n > 1 else ''}", folder, machine, sweeps))
    if not datasets:
        sys.exit(f"make_results: no threads-N/ measurements in {data}")
    import results_tables  # noqa: E402  (after measuring: a measurement needs no matplotlib)

    text = results_tables.document(datasets, SWEEPS, pathlib.Path(args.img),
                                   pathlib.Path(args.out).parent)
    out = pathlib.Path(args.out)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(text)
    partial.replace(out)  # the page appears whole or keeps its old text
    print(f"make_results: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
