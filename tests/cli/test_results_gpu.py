#!/usr/bin/python3
"""bench/results/make_results_gpu.py: the GPU results page from gpu_check's files.

Its figures are checked against values worked out by hand for a made-up sweep, and its
refusals: rows measured without a GPU, no sweep, no ceilings. A refused page leaves the old
page as it was.

    test_results_gpu.py [unittest arguments]
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "bench" / "results" / "make_results_gpu.py"
COLUMNS = ("suite,layer,descriptor,pass,algorithm,device,status,reason,time_ms,time_ms_min,"
           "time_ms_max,gflops,workspace_bytes,total_bytes,max_rel_err,math_mode")
DESCRIPTOR = "g1mb32ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0"


def sweep(driver="580.159.04", rows=None):
    meta = [f"# gpu_driver: {driver}", "# devices: cuda:0 NVIDIA H200, cpu (16 threads)",
            "# git_commit: abc123", "# command: convbench run --mb 32"]
    # 2 ms at 100 GFLOP/s is 2e8 flops; 1.2e9 bytes in all of which 2e8 are workspace.
    rows = rows or [
        f"s,s:L,{DESCRIPTOR},fwd,cuda.fft,gpu,ok,,2,1.5,3,100,200000000,1200000000,,fp32",
        f"s,s:L,{DESCRIPTOR},fwd,cudnn.direct,gpu,unsupported,no kernel,,,,,,,,fp32"]
    return "\n".join(meta + [COLUMNS] + rows) + "\n"


CEILINGS = 'device,copy_gb_per_s,sgemm_gflop_per_s\n"NVIDIA H200",1000,50000\n'
CHECK = "\n".join([COLUMNS, f"s,s:L,{DESCRIPTOR},fwd,cuda.fft,gpu,ok,,1,1,1,1,0,1,3.5e-06,fp32"])


class Page(unittest.TestCase):
    def make(self, files):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        source = pathlib.Path(tmp.name, "gpu")
        source.mkdir()
        for name, text in files.items():
            (source / name).write_text(text)
        out = pathlib.Path(tmp.name, "results-gpu.md")
        out.write_text("the old page\n")
        r = subprocess.run([sys.executable, str(SCRIPT), "--from", str(source), "--out", str(out)],
                           capture_output=True, text=True, timeout=60)
        return r, out.read_text()

    def test_figures_are_the_hand_computed_ones(self):
        r, page = self.make({"sweep_mb32.csv": sweep(), "ceilings.csv": CEILINGS,
                             "check_mb1.csv": CHECK})
        self.assertEqual(r.returncode, 0, r.stderr)
        # 1e9 tensor bytes in 2 ms: 500 GB/s; the floor is max(2e8 / 5e13, 1e9 / 1e12) = 1 ms,
        # half of the 2 ms measured.
        self.assertIn("| L | fwd | cuda.fft | 2 [1.5–3] | 100 | 500 | 50% | 190.7 | fp32 | "
                      "3.5e-06 |", page)
        self.assertIn("cudnn.direct 1 cases (first: no kernel)", page)
        self.assertIn("driver 580.159.04", page)
        self.assertIn("copy 1000 GB/s, SGEMM 50000 GFLOP/s", page)
        self.assertNotIn("## mb 128", page)

    def test_summary_divides_by_the_fastest_cudnn_algorithm(self):
        rows = [
            f"s,s:L,{DESCRIPTOR},fwd,cuda.fft,gpu,ok,,3,3,3,100,104857600,1200000000,,fp32",
            f"s,s:L,{DESCRIPTOR},fwd,cuda.winograd,gpu,ok,,1,1,1,100,0,1000000000,,fp32",
            f"s,s:L,{DESCRIPTOR},fwd,cudnn.fft,gpu,ok,,4,4,4,100,0,1000000000,,fp32",
            f"s,s:L,{DESCRIPTOR},fwd,cudnn.gemm,gpu,ok,,2,2,2,100,0,1000000000,,fp32",
            # cudnn.find is cuDNN's pick of the others, not one more algorithm to beat.
            f"s,s:L,{DESCRIPTOR},fwd,cudnn.find,gpu,ok,,0.5,0.5,0.5,100,0,1000000000,,fp32"]
        r, page = self.make({"sweep_mb32.csv": sweep(rows=rows), "ceilings.csv": CEILINGS})
        self.assertEqual(r.returncode, 0, r.stderr)
        # 3 ms and 1 ms over cudnn.gemm's 2 ms; cuda.fft's 100 MiB workspace; no cuda.im2col row.
        self.assertIn("| L | fwd | cudnn.gemm | 2 | - | 1.50× (100) | - | 0.50× (0) |", page)

    def test_driver_comes_from_nvidia_smi_when_the_sweep_misread_it(self):
        summary = "env         PASS    gpu: NVIDIA H200, 580.159.04; cuDNN 9.19.0; 16 cores\n"
        r, page = self.make({"sweep_mb32.csv": sweep(driver="for"), "ceilings.csv": CEILINGS,
                             "summary.txt": summary})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("driver 580.159.04 (nvidia-smi, gpu_check's env phase)", page)
        self.assertNotIn("driver for", page)

    def test_rows_without_a_gpu_are_refused_and_the_old_page_kept(self):
        r, page = self.make({"sweep_mb32.csv": sweep(driver="none"), "ceilings.csv": CEILINGS})
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("without a GPU", r.stderr)
        self.assertEqual(page, "the old page\n")

    def test_no_sweep_or_no_ceilings_is_refused(self):
        r, page = self.make({"ceilings.csv": CEILINGS})
        self.assertIn("nothing to claim", r.stderr)
        r, page = self.make({"sweep_mb32.csv": sweep()})
        self.assertIn("no ceilings", r.stderr)
        self.assertEqual(page, "the old page\n")


if __name__ == "__main__":
    unittest.main()
