#!/usr/bin/env python3
"""Runs output_hashes in two separate processes and requires identical lines.

usage: run_twice.py OUTPUT_HASHES cpu|gpu
Exit 0 when both runs agree on every case, 1 when a case differs (each one printed), 77
(CTest's skip) when no algorithm of the device can run here, with the reasons printed.
"""
import subprocess
import sys

SKIPPED = 77


def run(probe, device):
    done = subprocess.run([probe, device], capture_output=True, text=True, timeout=600)
    if done.returncode not in (0, SKIPPED):
        sys.stderr.write(done.stderr)
        sys.exit(f"{probe} {device} exited {done.returncode}")
    return done.returncode, done.stdout.splitlines()


def main():
    probe, device = sys.argv[1], sys.argv[2]
    code, first = run(probe, device)
    if code == SKIPPED:
        print("\n".join(first))
        print(f"no {device} algorithm can run here: skipped")
        return SKIPPED
    _, second = run(probe, device)
    for line in first:
        if line.startswith("skipped "):
            print(line)
    cases = [line for line in first if not line.startswith("skipped ")]
    if not cases:
        print("no case ran")
        return 1
    differ = [(a, b) for a, b in zip(first, second) if a != b]
    if len(first) != len(second):
        print(f"the runs printed {len(first)} and {len(second)} lines")
        return 1
    for a, b in differ:
        print(f"differs between processes:\n  first:  {a}\n  second: {b}")
    print(f"{len(cases)} cases, {len(differ)} differ between two processes")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
