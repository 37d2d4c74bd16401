#!/usr/bin/env python3
"""`convbench compare` as a user runs it: formats, --out, exit codes and messages. The
verdicts' statistics are tested in test_convbench_compare.cpp with a scripted clock; here B
is A's file with one algorithm's times scaled, so no verdict depends on this machine's timing.
Standard library only.

    test_convbench_compare.py CONVBENCH [unittest arguments]
"""
import csv
import io
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

CONVBENCH = None  # set from argv in main
SHAPES = ["--shape", 'mb2ic4ih10oc4kh3ph1n"a"', "--shape", 'mb2ic4ih9oc6kh5ph2n"b"']
TIME_COLUMNS = ("time_ms", "time_ms_min", "time_ms_max")


def convbench(*args):
    return subprocess.run([CONVBENCH, *args], capture_output=True, text=True, timeout=300)


def split_csv(text):
    lines = text.splitlines(keepends=True)
    meta = [line for line in lines if line.startswith("# ")]
    rows = list(csv.DictReader(io.StringIO("".join(l for l in lines if not l.startswith("#")))))
    return meta, rows


def write_scaled(source, target, algorithm, factor):
    """The CSV `source` with every time of `algorithm` multiplied by `factor`."""
    meta, rows = split_csv(pathlib.Path(source).read_text())
    with open(target, "w", newline="") as f:
        f.writelines(meta)
        writer = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            if row["algorithm"] == algorithm and row["status"] == "ok":
                for column in TIME_COLUMNS:
                    row[column] = repr(float(row[column]) * factor)
            writer.writerow(row)


class Compare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = pathlib.Path(cls.tmp.name)
        cls.a = cls.dir / "a.csv"
        r = convbench("run", *SHAPES, "--algos", "cpu.im2col,reference", "--passes", "fwd",
                      "--reps", "5", "--warmup", "0", "--out", str(cls.a), "--format", "csv")
        assert r.returncode == 0, r.stderr
        cls.slow = cls.dir / "slow.csv"
        # Far beyond any spread of A: every B repetition is slower than every A repetition.
        _, rows = split_csv(cls.a.read_text())
        spread = max(float(r["time_ms_max"]) / float(r["time_ms_min"]) for r in rows)
        write_scaled(cls.a, cls.slow, "cpu.im2col", 2 * spread)
        cls.factor = 2 * spread

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_a_file_against_itself_has_no_verdict_and_ratio_one(self):
        r = convbench("compare", str(self.a), str(self.a), "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        meta, rows = split_csv(r.stdout)
        self.assertEqual(len(rows), 4)
        self.assertEqual({row["verdict"] for row in rows}, {"within_noise"})
        self.assertEqual({row["ratio"] for row in rows}, {"1"})
        self.assertIn("# geomean_ratio: 1\n", meta)
        self.assertTrue(all(row["a_cv"] for row in rows), "rows of 5 reps carry a cv")

    def test_scaled_algorithm_is_slower_and_the_other_is_not(self):
        r = convbench("compare", str(self.a), str(self.slow), "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        result = json.loads(r.stdout)
        by_algorithm = result["by_algorithm"]
        self.assertEqual(by_algorithm["cpu.im2col"]["slower"], 2)
        self.assertEqual(by_algorithm["reference"]["within_noise"], 2)
        self.assertAlmostEqual(by_algorithm["cpu.im2col"]["geomean"], self.factor, places=3)
        self.assertAlmostEqual(result["summary"]["geomean"], self.factor ** 0.5, places=3)
        for case in result["cases"]:
            if case["verdict"] == "slower":
                self.assertAlmostEqual(case["p_value"], 2 / 252)
                self.assertEqual(case["a_reps"], 5)

    def test_table_names_both_runs_and_the_geometric_mean(self):
        r = convbench("compare", str(self.a), str(self.slow))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("a_git_commit: ", r.stdout)
        self.assertIn("b_cpu: ", r.stdout)
        self.assertIn("geometric mean of B/A: ", r.stdout)
        self.assertIn("  cpu.im2col: ", r.stdout)
        self.assertIn("slower", r.stdout)

    def test_out_writes_csv_or_json_and_refuses_an_input(self):
        out = self.dir / "ab.json"
        r = convbench("compare", str(self.a), str(self.slow), "--out", str(out))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(json.loads(out.read_text())["cases"]), 4)
        self.assertFalse((self.dir / "ab.json.partial").exists())
        r = convbench("compare", str(self.a), str(self.slow), "--out", str(self.slow))
        self.assertEqual(r.returncode, 2)
        self.assertIn("is also an input", r.stderr)
        r = convbench("compare", str(self.a), str(self.slow), "--out", str(self.dir / "x.txt"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("name it .csv or .json", r.stderr)

    def test_bad_inputs_exit_2_naming_the_file(self):
        missing = self.dir / "missing.csv"
        r = convbench("compare", str(self.a), str(missing))
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.csv", r.stderr)
        other = self.dir / "other.csv"
        other.write_text("x,y\n1,2\n")
        r = convbench("compare", str(other), str(self.a))
        self.assertEqual(r.returncode, 2)
        self.assertIn("other.csv", r.stderr)
        r = convbench("compare", str(self.a), str(self.a), "--alpha", "0")
        self.assertEqual(r.returncode, 2)

    def test_rows_without_their_range_get_no_verdict(self):
        bare = self.dir / "bare.csv"
        meta, rows = split_csv(self.slow.read_text())
        with open(bare, "w", newline="") as f:
            f.writelines(meta)
            columns = [c for c in rows[0] if c not in ("time_ms_min", "time_ms_max")]
            writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore",
                                    lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        r = convbench("compare", str(self.a), str(bare), "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        _, out = split_csv(r.stdout)
        self.assertEqual({row["verdict"] for row in out}, {"too_few_reps"})
        self.assertEqual({row["note"] for row in out}, {"B has no min and max"})
        self.assertTrue(all(row["ratio"] for row in out))

    def test_files_without_a_common_case_exit_2(self):
        lone = self.dir / "lone.csv"
        r = convbench("run", "--shape", "mb1ic2ih6oc2kh3", "--algos", "reference",
                      "--passes", "fwd", "--reps", "1", "--warmup", "0", "--out", str(lone),
                      "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = convbench("compare", str(self.a), str(lone))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no case in common", r.stderr)


def main():
    global CONVBENCH
    CONVBENCH = sys.argv.pop(1)
    unittest.main()


if __name__ == "__main__":
    main()
