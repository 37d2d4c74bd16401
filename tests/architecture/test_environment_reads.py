#!/usr/bin/env python3
"""No behaviour may depend on an unrecorded environment variable: the library reads the
environment only in lib/src/knob_defaults.cpp (convlab::environment_default, which records
what it read, and environment_placement), and convbench only to record what the libraries
under it read (bench/output/context.cpp, the library_environment metadata). This test lists
every other getenv/secure_getenv/environ use in the sources of the library, its backends, the
reference and convbench, and fails if there is one.

usage: test_environment_reads.py SOURCE_DIR
It first checks itself on a scratch tree with one forbidden read, which it must find.
"""
import pathlib
import re
import sys
import tempfile

ROOTS = ("lib", "cuda", "cpu_reference", "bench")
SUFFIXES = {".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".cu", ".cuh", ".inc"}
ALLOWED = {"lib/src/knob_defaults.cpp": "the one module that reads and records defaults",
           "bench/output/context.cpp": "copies the libraries' variables into the metadata "
                                       "(library_environment); acts on none"}
READ = re.compile(r"\b(secure_getenv|getenv|environ)\b")


def reads(source_dir):
    found = []
    for root in ROOTS:
        base = pathlib.Path(source_dir) / root
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(source_dir).as_posix()
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                code = line.split("//", 1)[0]
                if READ.search(code):
                    found.append((rel, number, line.strip()))
    return found


def forbidden(source_dir):
    bad = []
    for rel, number, line in reads(source_dir):
        if rel in ALLOWED:
            continue
        bad.append(f"{rel}:{number}: {line}")
    return bad


def main():
    with tempfile.TemporaryDirectory() as scratch:
        planted = pathlib.Path(scratch) / "lib" / "src" / "planted.cpp"
        planted.parent.mkdir(parents=True)
        planted.write_text('const char* v = std::getenv("CONVLAB_X");\n')
        if not forbidden(scratch):
            print("the checker missed a planted getenv")
            return 1
    bad = forbidden(sys.argv[1])
    for b in bad:
        print("reads the environment outside environment_default():", b)
    print(f"{len(bad)} forbidden environment reads")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
