#!/usr/bin/env python3
"""Checks every source of the library's targets against the dependency rule.

Usage: check_targets.py TARGET_MAP SOURCE_DIR

TARGET_MAP is the JSON the build writes (build/<preset>/convlab_targets.json): for each
target, the folders it owns, the headers other targets may include ("public", files or
folders) and the targets it links ("deps"). Every #include "..." of every file in those
folders is resolved the way the compiler would (next to the including file, then the
include roots below) and must name either a file of the same target or a public header of
a target it links, directly or through its dependencies. Anything else is reported with the
file, line and the rule it breaks; the exit status is 1 then, 0 when all is well.
"""
import json
import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".inc"}
# Where a quoted include is looked for after the including file's folder: the roots the
# targets' include directories amount to (lib/include for convlab/..., the folder roots
# for strategy/..., cpu/..., cuda/..., cpu_reference/...).
ROOTS = ["lib/include", "lib", "."]
GENERATED = {"convlab/config.hpp": "convlab_core"}  # written by CMake into the build tree


def closure(name, targets):
    seen, todo = set(), list(targets[name]["deps"])
    while todo:
        d = todo.pop()
        if d not in seen and d in targets:
            seen.add(d)
            todo.extend(targets[d]["deps"])
    return seen


def owner(path, targets):
    best, best_len = None, -1
    for name, t in targets.items():
        for folder in t["folders"]:
            parts = Path(folder).parts
            if path.parts[: len(parts)] == parts and len(parts) > best_len:
                best, best_len = name, len(parts)
    return best


def is_public(path, target):
    for p in target["public"]:
        parts = Path(p).parts
        if path.parts[: len(parts)] == parts:
            return True
    return False


def resolve(source_dir, including, text):
    for base in [including.parent] + [source_dir / r for r in ROOTS]:
        candidate = (base / text).resolve()
        if candidate.is_file():
            return candidate
    return None


def check(target_map, source_dir):
    source_dir = source_dir.resolve()
    targets = {t["name"]: t for t in json.loads(Path(target_map).read_text())["targets"]}
    problems = []
    for name, target in targets.items():
        allowed = closure(name, targets)
        for folder in target["folders"]:
            for f in sorted((source_dir / folder).rglob("*")):
                if f.suffix not in SOURCE_SUFFIXES or not f.is_file():
                    continue
                rel_f = f.resolve().relative_to(source_dir)
                if owner(rel_f, targets) != name:
                    continue  # a nested folder another target owns
                for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    text = m.group(1)
                    where = f"{rel_f}:{number}: #include \"{text}\""
                    if text in GENERATED:
                        hit = GENERATED[text]
                        if hit != name and hit not in allowed:
                            problems.append(f"{where}: {name} does not link {hit}")
                        continue
                    found = resolve(source_dir, f, text)
                    if found is None:
                        continue  # a system or toolkit header spelled with quotes
                    try:
                        rel = found.relative_to(source_dir)
                    except ValueError:
                        continue  # outside the source tree
                    other = owner(rel, targets)
                    if other == name:
                        continue
                    if other is None:
                        problems.append(f"{where}: {rel} belongs to no library target")
                    elif other not in allowed:
                        problems.append(f"{where}: {name} does not link {other} "
                                        f"(dependencies point one way: docs/design.md)")
                    elif not is_public(rel, targets[other]):
                        problems.append(f"{where}: {rel} is private to {other}")
    return problems


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems = check(argv[1], Path(argv[2]))
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the dependency rule", file=sys.stderr)
        return 1
    print("every include of the library's targets follows the dependency rule")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
