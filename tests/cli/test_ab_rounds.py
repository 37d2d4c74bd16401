#!/usr/bin/env python3
"""bench/ab_rounds.py with the built convbench: the rounds' order, what each run records, the
summary's figures from the CSVs, a failing variant beside working ones, and the refusals.

    test_ab_rounds.py CONVBENCH [unittest arguments]
"""

import csv
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOL = ROOT / "bench" / "ab_rounds.py"
CONVBENCH = None
# A layer small enough that a run takes a fraction of a second.
RUN = ["--shape", 'mb1ic8ih10oc8kh3ph1n"tiny"', "--algos", "cpu.im2col,cpu.fft",
       "--passes", "fwd,bwd_data", "--reps", "3", "--warmup", "0", "--max-time", "0",
       "--interleave"]


def ab(*args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True,
                          timeout=240)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


class AbRounds(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = pathlib.Path(self.tmp.name) / "ab"

    def tearDown(self):
        self.tmp.cleanup()

    def test_rounds_alternate_and_the_summary_comes_from_the_csvs(self):
        r = ab("--out", str(self.out), "--rounds", "3", "--threads", "1", "--against",
               "cpu.fft", "--variant", "auto", CONVBENCH, "--variant", "buffer", CONVBENCH,
               "cpu.im2col.columns=buffer", "--", *RUN)
        self.assertEqual(r.returncode, 0, r.stderr)
        record = json.loads((self.out / "record.json").read_text())
        self.assertEqual([(run["variant"], run["round"]) for run in record["runs"]],
                         [("auto", 1), ("buffer", 1), ("buffer", 2), ("auto", 2),
                          ("auto", 3), ("buffer", 3)])
        self.assertEqual(record["environment"]["CONVLAB_NUM_THREADS"], "1")
        self.assertIn("cpu", record["machine"])
        # Each variant's knobs reach its runs, and are recorded in their rows.
        for n in (1, 2, 3):
            buffer_rows = rows_of(self.out / f"buffer-round{n}.csv")
            auto_rows = rows_of(self.out / f"auto-round{n}.csv")
            im2col = [row for row in buffer_rows if row["algorithm"] == "cpu.im2col"]
            self.assertTrue(im2col and all("columns=buffer" in row["knobs"] for row in im2col))
            self.assertFalse(any("columns=buffer" in row["knobs"] for row in auto_rows))
        summary = (self.out / "summary.md").read_text()
        self.assertEqual(r.stdout.strip(), summary.strip())
        # The auto variant's forward row: the median over the rounds, its min and max, 1.000
        # against itself, and each round's speed = cpu.fft's time over cpu.im2col's, same run.
        mine, speeds = [], []
        for n in (1, 2, 3):
            t = {row["algorithm"]: float(row["time_ms"])
                 for row in rows_of(self.out / f"auto-round{n}.csv") if row["pass"] == "fwd"}
            mine.append(t["cpu.im2col"])
            speeds.append(t["cpu.fft"] / t["cpu.im2col"])
        expected = (f"| tiny | fwd | cpu.im2col | auto | 3 | {statistics.median(mine):.4g} "
                    f"({min(mine):.4g}–{max(mine):.4g}) | 1.000 | "
                    + "/".join(f"{s:.2f}" for s in speeds) + " |")
        self.assertIn(expected, summary.splitlines())
        self.assertIn("| tiny | bwd_data | cpu.im2col | buffer | 3 |", summary)
        self.assertNotIn("| cpu.fft |", summary)  # the algorithm compared against has no row

    def test_a_failing_variant_leaves_the_others_whole(self):
        r = ab("--out", str(self.out), "--rounds", "2", "--variant", "good", CONVBENCH,
               "--variant", "badknob", CONVBENCH, "cpu.im2col.no_such_knob=1", "--variant",
               "missing", str(self.out.parent / "no-convbench-here"), "--", *RUN)
        self.assertEqual(r.returncode, 1)
        self.assertTrue((self.out / "good-round1.csv").exists())
        self.assertTrue((self.out / "good-round2.csv").exists())
        self.assertFalse((self.out / "badknob-round1.csv").exists())
        summary = (self.out / "summary.md").read_text()
        self.assertIn("| tiny | fwd | cpu.im2col | good | 2 |", summary)
        self.assertIn("| tiny | fwd | cpu.im2col | badknob | 0 | — |", summary)
        self.assertIn("no knob 'no_such_knob'", summary)  # convbench's own message
        self.assertIn("missing round 2:", summary)
        self.assertIn("no-convbench-here", r.stderr)

    def test_a_run_argument_every_variant_rejects_stops_after_the_first_round(self):
        r = ab("--out", str(self.out), "--rounds", "3", "--variant", "a", CONVBENCH,
               "--variant", "b", CONVBENCH, "--", "--shape", "mb1ic8ih10oc8kh3",
               "--algos", "no.such.algorithm")
        self.assertEqual(r.returncode, 1)
        self.assertIn("no more rounds", r.stderr)
        self.assertEqual(sorted(p.name for p in self.out.iterdir()),
                         ["a-round1.log", "b-round1.log", "record.json", "summary.md"])

    def test_refusals_name_the_bad_value_and_touch_no_file(self):
        self.out.mkdir()
        kept = self.out / "earlier.csv"
        kept.write_text("an earlier measurement\n")
        r = ab("--out", str(self.out), "--variant", "a", CONVBENCH, "--variant", "b",
               CONVBENCH, "--", *RUN)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(str(self.out), r.stderr)
        self.assertEqual(kept.read_text(), "an earlier measurement\n")
        self.assertEqual([p.name for p in self.out.iterdir()], ["earlier.csv"])
        fresh = str(self.out.parent / "fresh")
        two = ["--variant", "a", CONVBENCH, "--variant", "b", CONVBENCH]
        for args, said in [
                (two + ["--", *RUN, "--out", "x.csv"], "--out"),
                (two + ["--", *RUN, "--format=json"], "--format=json"),
                (["--variant", "a", CONVBENCH, "--variant", "a", CONVBENCH, "--", *RUN],
                 "--variant a"),
                (["--variant", "a", CONVBENCH, "--", *RUN], "two or more"),
                (["--variant", "a", CONVBENCH, "--variant", "b", CONVBENCH, "columns", "--",
                  *RUN], "columns is not ALGO.KNOB=VALUE"),
                (["--variant", "a/b", CONVBENCH, "--variant", "b", CONVBENCH, "--", *RUN],
                 "--variant a/b"),
                (["--rounds", "0"] + two + ["--", *RUN], "--rounds 0"),
                (["--cpus", "0,x"] + two + ["--", *RUN], "--cpus 0,x"),
                (two, "after --")]:
            r = ab("--out", fresh, *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(said, r.stderr, args)
            self.assertFalse(pathlib.Path(fresh).exists(), args)


if __name__ == "__main__":
    CONVBENCH = sys.argv.pop(1)
    unittest.main()
