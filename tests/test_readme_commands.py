#!/usr/bin/env python3
"""The README's quick start and CI agree: .ci/run takes the command it runs from the README
(.ci/readme_command.py), and the two commands do what the README says they do."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(root / ".ci"))
from readme_command import quick_start_commands  # noqa: E402

failures = []
try:
    commands = quick_start_commands((root / "README.md").read_text())
except ValueError as e:
    sys.exit(str(e))
first, test = commands["first"], commands["test"]
ci = (root / ".ci" / "run").read_text()
ci_code = "\n".join(l for l in ci.splitlines() if not l.lstrip().startswith("#"))

if not re.search(r'readme_command\.py" "\$root/root/convlab/README\.md" "\$which"', ci_code):
    failures.append(".ci/run does not take its command from the cloned README")
if not re.search(r'chroot "\$root" .*\n.*\n\s*/bin/bash -c "cd /root/convlab && \$command"',
                 ci_code):
    failures.append(".ci/run does not run the command in the chroot, in the clone")
if "debootstrap --variant=minbase bookworm" not in ci_code:
    failures.append(".ci/run does not make a minimal Debian 12 root")
if not first.startswith("scripts/setup &&") or not first.endswith("bench/convbench run"):
    failures.append(f"first command does not set up, then run convbench: {first!r}")
if "--target convbench" not in first:
    failures.append(f"first command builds more than convbench and the library: {first!r}")
if not test.startswith("scripts/setup --tests &&"):
    failures.append(f"test command does not install the test packages first: {test!r}")
if not re.search(r"scripts/test_summary( build/\w+)+$", test):
    failures.append(f"test command does not end with the skip summary: {test!r}")
for f in failures:
    print("FAIL:", f)
print(f"README commands and .ci/run agree: {5 + 2 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
