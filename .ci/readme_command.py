#!/usr/bin/env python3
"""Prints one of the README's two quick-start commands, as written: `first` (build and run
the default sweep) or `test` (the whole test suite). CI and the tests that prove the README
read the commands from here, so they cannot drift from what a new user copies."""
import pathlib
import re
import sys


def quick_start_commands(readme_text):
    section = readme_text.split("## Quick start", 1)
    if len(section) != 2:
        raise ValueError("README.md has no '## Quick start' section")
    body = section[1].split("\n## ", 1)[0]
    blocks = [b.strip() for b in re.findall(r"```sh\n(.*?)\n```", body, re.S)]
    if len(blocks) != 2:
        raise ValueError(f"README quick start: expected two sh commands, found {len(blocks)}")
    for b in blocks:
        if "\n" in b:
            raise ValueError(f"README quick start: a command must be one line: {b!r}")
    return {"first": blocks[0], "test": blocks[1]}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[2] not in ("first", "test"):
        sys.exit("usage: readme_command.py README.md first|test")
    try:
        print(quick_start_commands(pathlib.Path(sys.argv[1]).read_text())[sys.argv[2]])
    except ValueError as e:
        sys.exit(str(e))
