#!/usr/bin/env python3
"""convbench run --dry-run as a user runs it: the cases it lists are the ones a real run of the
same flags writes (after --match, --shard, --resume and a budget), with the memory of
`convbench memory` and the calibrated times of `convbench predict`; it creates, changes and
locks no file; refused combinations exit 2. Standard library only.

    test_convbench_dry_run.py CONVBENCH [unittest arguments]
"""
import json
import os
import pathlib
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import test_convbench_research as research  # noqa: E402  (its helpers: convbench, parse_csv)

from test_convbench_research import (CPU, HOST_CARD, QUICK, SMALL, case_keys,  # noqa: E402
                                     convbench, parse_csv, read_csv)

# Three named layers: --match keeps two of them.
LAYERS = ["--shape", 'mb2ic8ih12oc8kh3ph1n"conv_a"', "--shape", 'mb2ic4ih9oc6kh5ph2sh2n"conv_b"',
          "--shape", 'mb1ic3ih10oc4kh3n"fc_c"']


def listing(tmp):
    return sorted(p.name for p in pathlib.Path(tmp).iterdir())


def identities(rows):
    return [(r["suite"], r["layer"], r["descriptor"], r["pass"], r["algorithm"], r["device"])
            for r in rows]


class DryRun(unittest.TestCase):

    def test_lists_what_a_run_writes_and_touches_nothing(self):
        # The knob changes cpu.im2col's workspace: the listed one must be the one planned.
        flags = [*LAYERS, *CPU, *QUICK, "--match", "^conv", "--shard", "2/3",
                 "--memory-budget", "40KiB", "--knob", "cpu.im2col.images_per_gemm=1"]
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "sweep.csv")
            dry = convbench("run", *flags, "--out", str(out), "--dry-run", "--format", "csv")
            self.assertEqual(dry.returncode, 0, dry.stderr)
            self.assertEqual(listing(tmp), [], "a dry run created a file")
            meta, _, listed = parse_csv(dry.stdout)
            self.assertIn("nothing was run", meta["dry_run"])
            self.assertEqual(int(meta["dry_run_cases"]), len(listed))
            self.assertIn(f"{len(listed)} cases to run of the sweep's", dry.stderr)
            real = convbench("run", *flags, "--out", str(out))
            self.assertEqual(real.returncode, 0, real.stderr)
            _, _, rows = read_csv(out)
            self.assertTrue(listed)
            self.assertEqual(identities(listed), identities(rows))
            self.assertEqual(meta["sweep_digest"], read_csv(out)[0]["sweep_digest"])
            # The budget: what the dry run marks over it is what the run refused, with the
            # same memory; the rest ran with the workspace the dry run listed.
            over = [r for r in listed if r["over_budget"] == "yes"]
            self.assertTrue(over and len(over) < len(listed), "the budget splits no cases")
            for d, r in zip(listed, rows):
                self.assertEqual(d["over_budget"] == "yes", r["status"] == "over_budget", r)
                self.assertEqual(d["workspace_bytes"], r["workspace_bytes"], r)
                if r["status"] == "over_budget":
                    self.assertEqual(d["total_bytes"], r["total_bytes"], r)

    def test_memory_is_convbench_memory(self):
        dry = convbench("run", *SMALL, *CPU, "--dry-run", "--format", "csv")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        memory = convbench("memory", *SMALL, *CPU, "--format", "csv")
        self.assertEqual(memory.returncode, 0, memory.stderr)
        expected = {(r["descriptor"], r["pass"], r["algorithm"]):
                    [r[k] for k in ("x_bytes", "w_bytes", "y_bytes", "workspace_bytes",
                                    "total_bytes")]
                    for r in parse_csv(memory.stdout)[2] if r["kind"] == "layer"}
        listed = parse_csv(dry.stdout)[2]
        self.assertEqual(len(listed), len(expected))
        for r in listed:
            self.assertEqual([r[k] for k in ("x_bytes", "w_bytes", "y_bytes", "workspace_bytes",
                                             "total_bytes")],
                             expected[(r["descriptor"], r["pass"], r["algorithm"])], r)
            self.assertEqual(r["estimated_ms"], "")  # no --calibrate: no estimate

    def test_interleaved_peak_is_the_largest_layer_and_pass_held_at_once(self):
        flags = [*LAYERS, *CPU, "--dry-run", "--format", "csv"]
        dry = convbench("run", *flags, "--interleave")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        meta, _, listed = parse_csv(dry.stdout)
        groups = {}
        for r in listed:
            if r["total_bytes"]:
                key = (r["layer"], r["pass"])
                groups[key] = groups.get(key, 0) + int(r["total_bytes"])
        self.assertGreater(len(groups), 1)
        (layer, pass_), most = max(groups.items(), key=lambda kv: kv[1])
        cases = sum(1 for r in listed if (r["layer"], r["pass"]) == (layer, pass_)
                    and r["total_bytes"])
        peak = meta["interleaved_peak"]
        self.assertTrue(peak.startswith(f"cpu {most} bytes ("), peak)
        self.assertTrue(peak.endswith(f", {layer} {pass_}, {cases} cases)"), peak)
        plain = parse_csv(convbench("run", *flags).stdout)[0]
        self.assertTrue(plain["interleaved_peak"].startswith("none: not interleaved"))

    def test_resume_lists_only_the_cases_left(self):
        flags = [*SMALL, *CPU, *QUICK]
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "sweep.csv")
            r = convbench("run", *flags, "--out", str(out), "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            # Drop the last three rows: a sweep that stopped three cases short.
            lines = out.read_text().splitlines(keepends=True)
            dropped = parse_csv("".join(l for l in lines if l.startswith("#")) +
                                next(l for l in lines if not l.startswith("#")) +
                                "".join(lines[-3:]))[2]
            out.write_text("".join(lines[:-3]))
            before, mtime = out.read_bytes(), out.stat().st_mtime_ns
            dry = convbench("run", *flags, "--out", str(out), "--resume", "--dry-run",
                            "--format", "json")
            self.assertEqual(dry.returncode, 0, dry.stderr)
            self.assertEqual((out.read_bytes(), out.stat().st_mtime_ns), (before, mtime))
            self.assertEqual(listing(tmp), ["sweep.csv"], "a dry run left a file")
            doc = json.loads(dry.stdout)
            self.assertEqual(identities(doc["cases"]), identities(dropped))
            self.assertEqual(doc["context"]["dry_run_cases"], 3)
            self.assertTrue(all(isinstance(c["total_bytes"], int) for c in doc["cases"]))
            # The real resume runs exactly those.
            real = convbench("run", *flags, "--out", str(out), "--resume")
            self.assertEqual(real.returncode, 0, real.stderr)
            self.assertIn("convbench: 3 cases to run", real.stderr)
            self.assertEqual(case_keys(read_csv(out)[2])[-3:], identities(dropped))
            # A journal of another sweep is refused as a real --resume refuses it, untouched.
            before = out.read_bytes()
            bad = convbench("run", *SMALL, *CPU, *QUICK, "--passes", "fwd", "--out", str(out),
                            "--resume", "--dry-run")
            self.assertEqual(bad.returncode, 2)
            self.assertIn("was written by another sweep", bad.stderr)
            self.assertEqual(out.read_bytes(), before)

    def test_estimates_are_predict_calibrated_times(self):
        with tempfile.TemporaryDirectory() as tmp:
            sweep = pathlib.Path(tmp, "cpu.csv")
            cards = pathlib.Path(tmp, "host.json")
            cards.write_text(json.dumps([HOST_CARD]))
            r = convbench("run", *SMALL, "--algos", "cpu.im2col", "--reps", "3", "--out",
                          str(sweep), "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            calibration = ["--cards", str(cards), "--calibrate", str(sweep), "--calibrate-card",
                           "host"]
            dry = convbench("run", *SMALL, *CPU, "--dry-run", "--format", "csv", *calibration)
            self.assertEqual(dry.returncode, 0, dry.stderr)
            meta, _, listed = parse_csv(dry.stdout)
            self.assertIn("on host", meta["calibration"])
            self.assertIn("of warm-up and timed runs", meta["estimate"])
            predict = convbench("predict", *SMALL, *CPU, "--cards", str(cards), "--cards",
                                "host", "--calibrate", str(sweep), "--calibrate-card", "host",
                                "--format", "csv")
            self.assertEqual(predict.returncode, 0, predict.stderr)
            predicted = {(r["descriptor"], r["pass"], r["algorithm"]): r
                         for r in parse_csv(predict.stdout)[2] if r["kind"] == "case"}
            for r in listed:
                p = predicted[(r["descriptor"], r["pass"], r["algorithm"])]
                if r["algorithm"] == "cpu.im2col":
                    self.assertEqual(r["estimated_ms"], p["time_ms"])
                    self.assertEqual(r["estimated_ms_low"], p["predicted_ms_low"])
                    self.assertEqual(r["estimated_ms_high"], p["predicted_ms_high"])
                    self.assertLessEqual(float(r["estimated_ms_low"]), float(r["estimated_ms"]))
                    self.assertLessEqual(float(r["estimated_ms"]), float(r["estimated_ms_high"]))
                else:  # not in the calibration: no estimate, never a guess
                    self.assertEqual((r["estimated_ms"], r["estimated_ms_low"]), ("", ""))
            table = convbench("run", *SMALL, *CPU, "--dry-run", *calibration)
            self.assertIn("no estimate", table.stdout)
            self.assertRegex(table.stdout, r"\d \([0-9.e+-]+\u2013[0-9.e+-]+\)")
            self.assertEqual(sorted(p.name for p in pathlib.Path(tmp).iterdir()),
                             ["cpu.csv", "host.json"])

    def test_table_says_the_count_and_refused_combinations_exit_2(self):
        r = convbench("run", *SMALL, *CPU, "--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Dry run: 12 cases would run; nothing is run", r.stdout)
        self.assertIn("no estimate (give --calibrate SWEEP.csv)", r.stdout)
        for args, fragment in ((["--dry-run", "--devices", "0,1"], "--dry-run with --devices"),
                               (["--calibrate", "x.csv"], "add --dry-run"),
                               (["--dry-run", "--resume"], "--resume appends")):
            bad = convbench("run", *SMALL, *CPU, *args)
            self.assertEqual(bad.returncode, 2, args)
            self.assertIn(fragment, bad.stderr)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    research.CONVBENCH = os.path.abspath(sys.argv[1])
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)


if __name__ == "__main__":
    main()
