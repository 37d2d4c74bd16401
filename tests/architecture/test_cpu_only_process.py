#!/usr/bin/env python3
"""A CPU-only process loads no CUDA library, and the default thread count follows the
process's CPU affinity.

Usage: test_cpu_only_process.py CONVBENCH LIBRARY_DIR CPU_ONLY_PROCESS PRINT_THREADS
                                HAVE_CUDA(0/1) [unittest args]

Each check has a control that shows it can see what it looks for: the dynamic section of
convbench lists libconvlab_core (so a CUDA entry would be listed too), and with CUDA built,
`convbench list` does load libcudart.
"""
import json
import os
import re
import subprocess
import sys
import unittest
from pathlib import Path

CONVBENCH = LIBRARY_DIR = CPU_ONLY_PROCESS = PRINT_THREADS = None
HAVE_CUDA = False
CUDA_LIBRARY = re.compile(r"lib(cudart|cublas|cublasLt|cufft|cudnn[a-z_]*|cuda)\.so")
TINY = ["--shape", "mb1ic2ih8oc2kh3", "--reps", "1", "--warmup", "0"]


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if k != "CONVLAB_NUM_THREADS"}
    env.update(extra)
    return env


def needed(binary):
    out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def loaded_libraries(args):
    """The shared objects the dynamic loader opened while convbench ran (LD_DEBUG=files)."""
    r = subprocess.run([str(CONVBENCH)] + args, capture_output=True, text=True,
                       env=environment(LD_DEBUG="files"), timeout=120)
    if r.returncode != 0:
        raise AssertionError(f"convbench {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}")
    return sorted(set(re.findall(r"file=(\S+)\s+\[\d+\];\s+(?:needed|dynamically)", r.stderr)))


class DynamicSection(unittest.TestCase):
    def test_convbench_and_the_core_need_no_cuda_library(self):
        bench = needed(CONVBENCH)
        self.assertTrue(any(n.startswith("libconvlab_core.so") for n in bench), bench)
        self.assertEqual([n for n in bench if CUDA_LIBRARY.search(n)], [], bench)
        core = needed(Path(LIBRARY_DIR) / "libconvlab_core.so")
        self.assertEqual([n for n in core if CUDA_LIBRARY.search(n)], [], core)

    def test_the_cuda_module_is_what_needs_them(self):
        if not HAVE_CUDA:
            self.skipTest("built without CUDA: there is no module")
        module = needed(Path(LIBRARY_DIR) / "libconvlab_cuda.so")
        self.assertTrue(any(n.startswith("libcudart.so") for n in module), module)


class LoadedLibraries(unittest.TestCase):
    def test_a_cpu_run_loads_no_cuda_library(self):
        for args in (["run", "--algos", "cpu.*"] + TINY,
                     ["run", "--algos", "cpu.im2col,reference", "--check"] + TINY):
            libs = loaded_libraries(args)
            self.assertTrue(any("libconvlab_core" in lib for lib in libs), libs)
            self.assertEqual([lib for lib in libs if CUDA_LIBRARY.search(lib)], [], args)

    def test_listing_every_algorithm_loads_the_cuda_module(self):
        if not HAVE_CUDA:
            self.skipTest("built without CUDA: there is no module to load")
        libs = loaded_libraries(["list"])
        self.assertTrue(any("libconvlab_cuda.so" in lib for lib in libs), libs)
        self.assertTrue(any("libcudart.so" in lib for lib in libs), libs)

    def test_the_library_api_path(self):
        r = subprocess.run([str(CPU_ONLY_PROCESS)], capture_output=True, text=True,
                           env=environment(), timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("ran cpu.im2col", r.stdout)


class DefaultThreads(unittest.TestCase):
    def threads(self, command, **env):
        r = subprocess.run(command, capture_output=True, text=True, env=environment(**env),
                           timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def test_the_default_is_the_affinity_mask(self):
        self.assertEqual(int(self.threads([str(PRINT_THREADS)])), len(os.sched_getaffinity(0)))
        self.assertEqual(int(self.threads(["taskset", "-c", "0", str(PRINT_THREADS)])), 1)

    def test_convbench_reports_one_thread_under_taskset(self):
        out = self.threads(["taskset", "-c", "0", str(CONVBENCH), "run", "--algos",
                            "reference", "--format", "json"] + TINY)
        self.assertEqual(json.loads(out)["context"]["threads"], 1, out[:400])

    def test_the_environment_still_overrides_it(self):
        self.assertEqual(
            int(self.threads(["taskset", "-c", "0", str(PRINT_THREADS)], CONVLAB_NUM_THREADS="3")),
            3)


if __name__ == "__main__":
    CONVBENCH, LIBRARY_DIR, CPU_ONLY_PROCESS, PRINT_THREADS = sys.argv[1:5]
    HAVE_CUDA = sys.argv[5] == "1"
    del sys.argv[1:6]
    unittest.main()
