#!/usr/bin/env python3
"""The README's first quick-start command (set-up, configure, build convbench, default
sweep), run as written from a clone of the committed HEAD, with arguments appended to its
`convbench run` that cut the sweep to one small layer, so that what is proven is that the
command gets from a checkout to a sweep, not how long the sweep takes.

    test_first_command.py SOURCE_DIR WORK_DIR

The clone is kept in WORK_DIR/convlab and brought to HEAD on each run, so a rerun builds
only what changed; in a fresh build tree (as in CI) everything is built from nothing.
Exits 77 ("skipped: ...") when SOURCE_DIR is not a git checkout.
"""
import os
import pathlib
import re
import subprocess
import sys
import time

source, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
sys.path.insert(0, str(source / ".ci"))
from readme_command import quick_start_commands  # noqa: E402

SHORT_SWEEP = " --shape mb1ic3ih8oc4kh3 --reps 1 --warmup 0"


def git(*args, cwd=None):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def main():
    command = quick_start_commands((source / "README.md").read_text())["first"]
    if not command.endswith("convbench run"):
        sys.exit(f"README first command does not end with 'convbench run': {command!r}")
    if subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"],
                      capture_output=True).returncode != 0:
        print(f"skipped: {source} is not a git checkout (the test clones its HEAD)")
        return 77
    clone = work / "convlab"
    if (clone / ".git").is_dir():
        git("fetch", "-q", str(source), "HEAD", cwd=clone)
        git("checkout", "-q", "--force", "FETCH_HEAD", cwd=clone)
        git("clean", "-q", "-ffdx", "-e", "/build/", cwd=clone)
    else:
        work.mkdir(parents=True, exist_ok=True)
        git("clone", "-q", str(source), str(clone))
    head = git("rev-parse", "--short", "HEAD", cwd=clone).stdout.strip()
    print(f"in {clone} at {head}: {command}{SHORT_SWEEP}", flush=True)
    start = time.monotonic()
    run = subprocess.run(["bash", "-c", command + SHORT_SWEEP], cwd=clone,
                         capture_output=True, text=True)
    elapsed = time.monotonic() - start
    print(run.stdout[-4000:], run.stderr[-8000:], sep="\n")
    print(f"exit {run.returncode} after {elapsed:.0f} s")
    if run.returncode != 0:
        return 1
    summary = re.search(r"(\d+) cases: (\d+) ok, .* (\d+) error", run.stderr)
    if not summary or int(summary.group(2)) == 0 or int(summary.group(3)) != 0:
        print("the sweep's summary line shows no ok case, or errors")
        return 1
    print(f"README first command: {summary.group(0)}: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
