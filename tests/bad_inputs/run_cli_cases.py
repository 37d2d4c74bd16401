#!/usr/bin/env python3
"""The convbench half of the bad-input corpus: runs every case of cli_cases.json.

    run_cli_cases.py --convbench BIN --cases cli_cases.json --data tests/data [-k NAME]

Each case gives convbench's arguments and what must come of them:
  status   the exit status: 2 bad input, 1 a runtime failure (never a signal)
  stderr   substrings the message on stderr must contain (the offending value, quoted)
  stdout   substrings stdout must contain (the reason in a row, for runtime failures)
Every bad-input `run` case also gets, unless it names its own --out, an --out pointing at an
existing file holding a sentinel, and afterwards (every case):
  - that file is byte for byte unchanged (a failed run never clobbers an existing output);
  - no other file appeared in the case's folder, except, for a runtime failure, complete
    output files (CSV whose lines all end and all have the header's columns; JSON that
    parses): nothing is left half-written;
  - a bad-input message is one line starting with "convbench: ".
Placeholders in arguments: @TMP (the case's folder), @DATA (tests/data), and fixtures made
in @TMP: @EMPTY, @COMMENTS, @BINARY, @BADLINE, @OPTIONLINE, @UNREADABLE, @MISSING, @DIR,
@SHARD (a valid one-row sweep CSV, for merge), and for the output-path checks @SYMLINK (a
symbolic link to the existing --out file), @FIFO, @SHAPES (a valid shape file), @SHAPES_LINK
(a hard link to it), @CARDS (a cards file), @JOURNALED (an output whose FILE.partial is a
symbolic link to the existing --out file), @BAD_COUNT and @BAD_SHARD (@SHARD with a damaged
sweep_cases or shard in its metadata). "no_injected_out": true leaves --out out.
"unchanged": [placeholders] names fixtures that must be byte for byte as they were after the
run (an input that was also given as the output). "stdout_to": "/dev/full" runs convbench
with its stdout on that device instead of a pipe.
"replaces_out": true is for a sweep that finished with error rows (exit 1, the rows are its
result): there the existing file must instead have been replaced by a complete output.
"stderr_max_chars": N fails a case whose stderr is longer (messages quote excerpts only);
"arg_repeat": [index, text, times] replaces args[index] by text repeated `times` times.
"address_space_gib": N runs convbench under an address-space limit (RLIMIT_AS) of N GiB,
for cases about memory: a regression that allocates then fails there with another message
instead of pushing this machine into the OOM killer.
A case may say "requires": "not_root" or "no_cuda" (skipped, with the reason, otherwise),
"algorithms": [NAME, ...] for the algorithms it runs (skipped, with the build's reason, where
one is not built: a build without an optional backend still runs every other case),
and "known_failure": "what convbench must change" for a case that documents a missing
behaviour: it is reported as XFAIL while it fails, and as an error once it passes (so that
the marker is removed when the fix lands). Standard library only.
"""
import argparse
import csv
import fnmatch
import io
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile

SENTINEL = "sentinel: an earlier run's results, which no failed run may touch\n"


def make_fixtures(tmp):
    (tmp / "empty.txt").write_text("")
    (tmp / "comments.txt").write_text("# only comments\n\n  # and blank lines\n")
    (tmp / "binary.bin").write_bytes(b"mb1ic3ih5oc8kh3\n\x00\x01\x02\xfe\xff")
    (tmp / "badline.txt").write_text("mb1ic3ih5oc8kh3\nmb1ic3ih5oc8kh3xx1\n")
    (tmp / "optionline.txt").write_text("--dir=FWD_B mb1ic3ih5oc8kh3\n")
    unreadable = tmp / "unreadable.txt"
    unreadable.write_text("mb1ic3ih5oc8kh3\n")
    unreadable.chmod(0)
    (tmp / "adir").mkdir()
    shutil.copy(SHARD, tmp / "shard.csv")
    (tmp / "link.csv").symlink_to("existing.csv")
    os.mkfifo(tmp / "fifo.csv")
    (tmp / "shapes.txt").write_text("mb1ic3ih5oc8kh3\n")
    os.link(tmp / "shapes.txt", tmp / "shapes_link.csv")
    (tmp / "cards.json").write_text('{"cards": []}\n')
    (tmp / "journaled.csv.partial").symlink_to("existing.csv")
    shard = (tmp / "shard.csv").read_text()
    (tmp / "bad_count.csv").write_text(shard.replace("# sweep_cases: 1", "# sweep_cases: 1x")
                                       .replace("# fill:", "# shard: 1/1\n# fill:"))
    (tmp / "bad_shard.csv").write_text(shard.replace("# fill:", "# shard: 2/x\n# fill:"))


SHARD = None  # a valid one-row sweep CSV, made once by main() for the merge cases


def make_shard(convbench, folder):
    """A real sweep CSV (one tiny case), written by convbench itself."""
    path = folder / "shard.csv"
    subprocess.run([convbench, "run", "--shape", "mb1ic2ih5oc2kh3", "--algos", "reference",
                    "--passes", "fwd", "--reps", "1", "--warmup", "0", "--out", str(path)],
                   check=True, capture_output=True, timeout=120)
    return path


def substitute(arg, tmp, data):
    table = {
        "@EMPTY": tmp / "empty.txt", "@COMMENTS": tmp / "comments.txt",
        "@BINARY": tmp / "binary.bin", "@BADLINE": tmp / "badline.txt",
        "@OPTIONLINE": tmp / "optionline.txt", "@UNREADABLE": tmp / "unreadable.txt",
        "@MISSING": tmp / "no_such_file.txt", "@DIR": tmp / "adir", "@SHARD": tmp / "shard.csv",
        "@SYMLINK": tmp / "link.csv", "@FIFO": tmp / "fifo.csv", "@SHAPES": tmp / "shapes.txt",
        "@SHAPES_LINK": tmp / "shapes_link.csv", "@CARDS": tmp / "cards.json",
        "@JOURNALED": tmp / "journaled.csv", "@BAD_COUNT": tmp / "bad_count.csv",
        "@BAD_SHARD": tmp / "bad_shard.csv",
    }
    for token in sorted(table, key=len, reverse=True):
        arg = arg.replace(token, str(table[token]))
    return arg.replace("@TMP", str(tmp)).replace("@DATA", str(data))


def complete_output(path):
    """Why `path` is not a complete CSV/JSON output, or None when it is."""
    text = path.read_text(errors="replace")
    if path.suffix == ".json":
        try:
            json.loads(text)
        except ValueError as e:
            return "not complete JSON: %s" % e
        return None
    if text and not text.endswith("\n"):
        return "the last line is cut off"
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if rows and any(len(r) != len(rows[0]) for r in rows):
        return "a row does not have the header's %d columns" % len(rows[0])
    return None


def is_address_sanitized(binary):
    """AddressSanitizer reserves terabytes of shadow memory at start, so no address-space
    limit a test could set lets an instrumented binary run at all."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def check_case(case, convbench, data, is_root, has_cuda, not_built):
    """(verdict, detail): verdict is pass, fail or skip. `not_built` maps the globs of the
    algorithms this build lacks to the reason."""
    if case.get("address_space_gib") and is_address_sanitized(convbench):
        return "skip", ("an AddressSanitizer build cannot run under an address-space limit "
                        "(its shadow memory alone exceeds it)")
    requires = case.get("requires")
    if requires == "not_root" and is_root:
        return "skip", "running as root: file permissions do not stop root"
    if requires == "no_cuda" and has_cuda:
        return "skip", "this build has CUDA algorithms"
    for name in case.get("algorithms", []):
        for glob, reason in not_built.items():
            if fnmatch.fnmatchcase(name, glob):
                return "skip", "%s: %s" % (name, reason)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="convbench_bad_"))
    try:
        make_fixtures(tmp)
        before = set(p.name for p in tmp.iterdir())
        args = [substitute(a, tmp, data) for a in case["args"]]
        if case.get("arg_repeat"):
            index, text, times = case["arg_repeat"]
            args[index] = text * times
        existing = tmp / "existing.csv"
        existing.write_text(SENTINEL)
        # Bad input: an existing --out must survive. (A runtime failure's cases name their
        # own --out, to check it separately.)
        if (case["status"] == 2 and args and args[0] == "run" and "--out" not in args and
                not case.get("no_injected_out")):
            args[1:1] = ["--out", str(existing)]  # first: a later flag may lack its value
        unchanged = {name: pathlib.Path(substitute(name, tmp, data)).read_bytes()
                     for name in case.get("unchanged", [])}
        limit = case.get("address_space_gib")

        def limited():
            if limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit << 30, limit << 30))

        try:
            if case.get("stdout_to"):
                with open(case["stdout_to"], "w") as sink:
                    proc = subprocess.run([convbench, *args], stdout=sink,
                                          stderr=subprocess.PIPE, text=True, timeout=120,
                                          cwd=tmp, preexec_fn=limited)
                proc.stdout = ""
            else:
                proc = subprocess.run([convbench, *args], capture_output=True, text=True,
                                      timeout=120, cwd=tmp, preexec_fn=limited)
        except subprocess.TimeoutExpired:
            return "fail", "no answer within 120 s (a bad input must fail at once)\n      " \
                "args: " + " ".join(args)
        problems = []
        if proc.returncode < 0:
            problems.append("killed by signal %d" % -proc.returncode)
        elif proc.returncode != case["status"]:
            problems.append("exit status %d, expected %d" % (proc.returncode, case["status"]))
        for text in case.get("stderr", []):
            text = substitute(text, tmp, data)
            if text not in proc.stderr:
                problems.append("stderr lacks %r" % text)
        if len(proc.stderr) > case.get("stderr_max_chars", len(proc.stderr)):
            problems.append("stderr is %d characters, at most %d expected" %
                            (len(proc.stderr), case["stderr_max_chars"]))
        for text in case.get("stdout", []):
            if text not in proc.stdout:
                problems.append("stdout lacks %r" % text)
        for name, content in unchanged.items():
            if pathlib.Path(substitute(name, tmp, data)).read_bytes() != content:
                problems.append("the input %s was changed" % name)
        if case["status"] == 2:
            lines = proc.stderr.strip().splitlines()
            if len(lines) != 1 or not lines[0].startswith("convbench: "):
                problems.append("the message is not one line starting with 'convbench: '")
        if case.get("replaces_out"):
            if existing.read_text() == SENTINEL:
                problems.append("the finished sweep did not replace the existing --out file")
            else:
                why = complete_output(existing)
                if why:
                    problems.append("the replaced --out file is half-written: " + why)
        elif existing.read_text() != SENTINEL:
            problems.append("the existing --out file was clobbered")
        for path in sorted(tmp.iterdir()):
            if path.name in before or path.name == "existing.csv":
                continue
            if case["status"] == 2:
                problems.append("bad input left a file behind: %s" % path.name)
            elif path.is_file():
                why = complete_output(path)
                if why:
                    problems.append("%s is half-written: %s" % (path.name, why))
        detail = "; ".join(problems) or "ok"
        if problems:
            detail += "\n      args: %s\n      status %d, stderr: %s" % (
                " ".join(args), proc.returncode, proc.stderr.strip()[:400])
        return ("fail" if problems else "pass"), detail
    finally:
        (tmp / "unreadable.txt").chmod(0o600)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--convbench", required=True)
    parser.add_argument("--cases", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("-k", dest="only", help="run only cases whose name contains this")
    options = parser.parse_args()
    options.convbench = os.path.abspath(options.convbench)
    cases = json.loads(pathlib.Path(options.cases).read_text())["cases"]
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        print("duplicate case names in %s" % options.cases)
        return 1
    global SHARD
    shard_dir = pathlib.Path(tempfile.mkdtemp(prefix="convbench_shard_"))
    SHARD = make_shard(options.convbench, shard_dir)
    listing = json.loads(subprocess.run([options.convbench, "list", "--format", "json"],
                                        capture_output=True, text=True, check=True).stdout)
    has_cuda = any(a["device"] == "gpu" for a in listing["algorithms"])
    not_built = {m["name"]: m["reason"] for m in listing["not_built"]}
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    tally = {"pass": 0, "fail": 0, "skip": 0, "xfail": 0, "xpass": 0}
    for case in cases:
        if options.only and options.only not in case["name"]:
            continue
        verdict, detail = check_case(case, options.convbench, options.data, is_root, has_cuda,
                                     not_built)
        known = case.get("known_failure")
        if known and verdict == "fail":
            verdict, detail = "xfail", "%s\n      known: %s" % (detail, known)
        elif known and verdict == "pass":
            verdict, detail = "xpass", "passes now: remove its known_failure marker"
        tally[verdict] += 1
        print("%-5s %s%s" % (verdict.upper(), case["name"],
                             "" if verdict == "pass" else ": " + detail))
    shutil.rmtree(shard_dir, ignore_errors=True)
    print("bad_inputs.cli: %d cases: %d passed, %d failed, %d skipped, %d known failures, "
          "%d unexpectedly passing" % (sum(tally.values()), tally["pass"], tally["fail"],
                                       tally["skip"], tally["xfail"], tally["xpass"]))
    return 1 if tally["fail"] or tally["xpass"] else 0


if __name__ == "__main__":
    sys.exit(main())
