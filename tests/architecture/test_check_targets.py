#!/usr/bin/env python3
"""The include checker (scripts/check_targets.py) on small trees made for the purpose: it
passes a tree that follows the rule and fails, naming the file and the rule, each way a
tree can break it.

Usage: test_check_targets.py SOURCE_DIR (the repository, for the checker's path)
"""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECKER = None

TARGETS = {"targets": [
    {"name": "core", "folders": ["lib/include", "lib/src"], "public": ["lib/include"],
     "deps": []},
    {"name": "cpu", "folders": ["lib/cpu"], "public": ["lib/cpu/register_cpu.hpp"],
     "deps": ["core"]},
    {"name": "cuda", "folders": ["cuda"], "public": [], "deps": ["core"]},
    {"name": "convlab", "folders": ["lib/aggregate"], "public": [], "deps": ["cpu"]},
]}

GOOD = {
    "lib/include/convlab/problem.hpp": "#pragma once\n",
    "lib/src/detail.hpp": "#pragma once\n",
    "lib/src/problem.cpp": '#include "convlab/problem.hpp"\n#include "detail.hpp"\n',
    "lib/cpu/register_cpu.hpp": '#include "convlab/problem.hpp"\n',
    "lib/cpu/fft/plan.hpp": "#pragma once\n",
    "lib/cpu/fft/plan.cpp": '#include "plan.hpp"\n#include "cpu/register_cpu.hpp"\n',
    "cuda/common/check.hpp": '#include "convlab/problem.hpp"\n',
    "cuda/fft/fft.cu": '#include "cuda/common/check.hpp"\n#include "cuda_runtime.h"\n',
    # through cpu, which links core: a dependency of a dependency may be included
    "lib/aggregate/registry.cpp": '#include "cpu/register_cpu.hpp"\n'
                                  '#include "convlab/problem.hpp"\n',
}


def run_checker(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        (root / "targets.json").write_text(json.dumps(TARGETS))
        return subprocess.run([sys.executable, str(CHECKER), str(root / "targets.json"),
                               str(root)], capture_output=True, text=True)


class CheckTargets(unittest.TestCase):
    def assert_fails(self, extra, *expected):
        r = run_checker({**GOOD, **extra})
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        for e in expected:
            self.assertIn(e, r.stdout)

    def test_a_tree_that_follows_the_rule_passes(self):
        r = run_checker(GOOD)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_another_targets_private_header(self):
        self.assert_fails({"cuda/register.cpp": '#include "lib/src/detail.hpp"\n'},
                          "cuda/register.cpp:1", "lib/src/detail.hpp is private to core")

    def test_a_private_header_by_relative_path(self):
        self.assert_fails({"lib/cpu/im2col/x.cpp": '\n#include "../../src/detail.hpp"\n'},
                          "lib/cpu/im2col/x.cpp:2", "private to core")

    def test_a_linked_targets_internal_header(self):
        self.assert_fails({"lib/aggregate/x.cpp": '#include "cpu/fft/plan.hpp"\n'},
                          "lib/cpu/fft/plan.hpp is private to cpu")

    def test_the_core_including_a_backend(self):
        self.assert_fails({"lib/src/registry.cpp": '#include "cpu/register_cpu.hpp"\n'},
                          "lib/src/registry.cpp:1", "core does not link cpu")

    def test_a_backend_including_another_backend(self):
        self.assert_fails({"cuda/x.cpp": '#include "lib/cpu/register_cpu.hpp"\n'},
                          "cuda does not link cpu")

    def test_a_file_of_no_target(self):
        self.assert_fails({"bench/row.hpp": "#pragma once\n",
                           "lib/cpu/y.cpp": '#include "bench/row.hpp"\n'},
                          "bench/row.hpp belongs to no library target")


if __name__ == "__main__":
    CHECKER = Path(sys.argv.pop(1)) / "scripts" / "check_targets.py"
    unittest.main()
