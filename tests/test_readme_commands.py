#!/usr/bin/env python3
"""The README's quick start and .ci/run must agree: CI runs exactly the README test command."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
readme = (root / "README.md").read_text()
ci = (root / ".ci" / "run").read_text()

blocks = re.findall(r"```sh\n(.*?)\n```", readme.split("## Quick start", 1)[1].split("\n## ", 1)[0],
                    re.S)
if len(blocks) != 2:
    sys.exit(f"README quick start: expected two sh commands, found {len(blocks)}")
sweep, test = (b.strip() for b in blocks)
ci_lines = [l.strip() for l in ci.splitlines() if l.strip() and not l.lstrip().startswith("#")]
ci_commands = [l for l in ci_lines if not l.startswith(("set ", "cd "))]
if ci_commands != [test]:
    sys.exit(f".ci/run runs {ci_commands!r}, the README's test command is {test!r}")
if "convbench run" not in sweep or "scripts/setup" not in sweep:
    sys.exit(f"README sweep command does not set up and run convbench: {sweep!r}")
print("README commands and .ci/run agree: 1 passed, 0 failed")
