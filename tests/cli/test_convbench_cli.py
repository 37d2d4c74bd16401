#!/usr/bin/env python3
"""convbench run as a user runs it: exit codes, one-line messages naming the bad value,
outputs that Python's csv and json modules read, --check, --dump, and the foundation issue's
done-when command. Standard library only.

    test_convbench_cli.py CONVBENCH [unittest arguments, e.g. a TestCase name]
"""
import csv
import io
import json
import math
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import unittest

CONVBENCH = None  # set from argv in main

# The columns of a row, in order (docs/convbench.md documents each).
COLUMNS = ["suite", "layer", "descriptor", "pass", "algorithm", "device", "status", "reason",
           "plan_ms", "time_ms", "time_ms_min", "time_ms_max", "reps", "cv", "gflops",
           "workspace_bytes", "total_bytes", "max_abs_err", "max_rel_err", "plan_kernel",
           "plan_transform", "plan_tile", "plan_workspace_split", "plan_details", "knobs",
           "math_mode", "family"]
CONTEXT_KEYS = ["convbench_version", "git_commit", "date", "host", "cpu", "cpu_id", "cpu_features",
                "cpu_caches", "logical_cpus", "transparent_hugepages", "threads",
                "library_environment", "devices", "gpu_driver", "libraries", "compiler",
                "build_type", "math_mode", "seed", "reps", "warmup", "max_time_s", "interleave",
                "check", "mb", "passes", "algorithms", "command", "sweep_cases", "sweep_digest",
                "knobs", "environment_defaults", "fill"]
TINY = "mb2ic3ih7oc4kh3ph1n\"tiny\""
QUICK = ["--reps", "2", "--warmup", "0"]


def convbench(*args, cwd=None):
    return subprocess.run([CONVBENCH, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def parse_csv(text):
    """The metadata (leading '# key: value' lines) and the rows of a convbench CSV."""
    lines = text.splitlines()
    meta = {}
    while lines and lines[0].startswith("# "):
        key, _, value = lines.pop(0)[2:].partition(": ")
        meta[key] = value
    reader = csv.DictReader(io.StringIO("\n".join(lines) + "\n"))
    rows = list(reader)
    return meta, reader.fieldnames, rows


def read_npy(path):
    """A float32 C-order .npy file: (shape, values)."""
    data = pathlib.Path(path).read_bytes()
    assert data[:6] == b"\x93NUMPY" and data[6] == 1, "not an .npy 1.x file"
    (length,) = struct.unpack("<H", data[8:10])
    header = eval(data[10:10 + length].decode("latin1"))  # a Python literal dict, by spec
    assert (10 + length) % 64 == 0, "header not aligned to 64 bytes"
    assert header["descr"] == "<f4" and not header["fortran_order"]
    count = math.prod(header["shape"])
    values = struct.unpack("<%df" % count, data[10 + length:])
    return tuple(header["shape"]), values


def available_algorithms():
    listing = json.loads(convbench("list", "--format", "json").stdout)
    return {a["name"]: a for a in listing["algorithms"]}


class ExitCodesAndMessages(unittest.TestCase):
    """Bad input exits 2 with one line on stderr that names what was wrong."""

    def bad(self, *args, expect):
        result = convbench(*args)
        self.assertEqual(result.returncode, 2, f"{args}: {result.stderr}")
        self.assertEqual(result.stdout, "", f"{args}: bad input must print no result")
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, f"{args}: message is not one line: {result.stderr!r}")
        for fragment in expect:
            self.assertIn(fragment, lines[0], f"{args}")
        return lines[0]

    def test_no_subcommand(self):
        self.bad(expect=["subcommand"])

    def test_unknown_flag(self):
        self.bad("run", "--shape", TINY, "--bogus", expect=["--bogus"])

    def test_bad_numbers(self):
        self.bad("run", "--shape", TINY, "--reps", "0", expect=["--reps", "0"])
        self.bad("run", "--shape", TINY, "--reps", "many", expect=["--reps", "many"])
        self.bad("run", "--shape", TINY, "--mb", "-3", expect=["--mb", "-3"])
        self.bad("run", "--shape", TINY, "--warmup", "-1", expect=["--warmup", "-1"])

    def test_bad_format(self):
        self.bad("run", "--shape", TINY, "--format", "xml", expect=["--format", "xml"])
        self.bad("list", "--format", "csv", expect=["--format", "csv"])

    def test_unknown_suite_lists_known(self):
        self.bad("run", "--suite", "alexnett",
                 expect=["'alexnett'", "alexnet", "vgg16", "resnet50", "googlenet",
                         "convnet-benchmarks", "deepbench"])

    def test_unknown_algorithm_lists_known(self):
        self.bad("run", "--shape", TINY, "--algos", "cpu.nosuch",
                 expect=["'cpu.nosuch'", "reference"])

    def test_bad_pass(self):
        self.bad("run", "--shape", TINY, "--passes", "fwd,sideways", expect=["sideways"])

    def test_bad_descriptor_says_where(self):
        self.bad("run", "--shape", "mb2ic3xx7", expect=["mb2ic3xx7", "character"])

    def test_invalid_problem_names_the_values(self):
        self.bad("run", "--shape", "mb1ic3ih5oc8kh7", expect=["kernel 7", "5"])

    def test_unreadable_batch_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "no_such_file")
            self.bad("run", "--batch-file", missing, expect=[missing])
            self.bad("run", "--batch-file", tmp, expect=[tmp])
            bad = pathlib.Path(tmp, "bad_shapes")
            bad.write_text("# fine\nmb2ic3ih7oc4kh3\nmb2ic3ih7oc4kh3zz9\n")
            self.bad("run", "--batch-file", str(bad), expect=[f"{bad}:3", "zz"])

    def test_bad_out_and_dump(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.bad("run", "--shape", TINY, "--out", os.path.join(tmp, "rows.txt"),
                     expect=["rows.txt", ".csv", ".json"])
            self.bad("run", "--shape", TINY, "--out", os.path.join(tmp, "no", "rows.csv"),
                     expect=["does not exist"])
            self.bad("run", "--shape", TINY, "--out", tmp, expect=["directory"])
            blocker = pathlib.Path(tmp, "file")
            blocker.write_text("x")
            self.bad("run", "--shape", TINY, "--dump", str(blocker), expect=["not a directory"])

    def test_failed_run_leaves_existing_output_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "results.csv")
            out.write_text("precious\n")
            self.bad("run", "--shape", "mb2ic3ih7oc4kh3zz", "--out", str(out), expect=["zz"])
            self.bad("run", "--suite", "nosuch", "--out", str(out), expect=["nosuch"])
            self.bad("run", "--shape", TINY, "--bogus", "--out", str(out), expect=["--bogus"])
            self.assertEqual(out.read_text(), "precious\n")

    def test_help_and_version_exit_0(self):
        for args in (["--help"], ["run", "--help"], ["--version"]):
            result = convbench(*args)
            self.assertEqual(result.returncode, 0, args)
            self.assertTrue(result.stdout.strip(), args)
        self.assertIn("--batch-file", convbench("run", "--help").stdout)


class OutputFormats(unittest.TestCase):
    """CSV and JSON as scripts read them, the table as people read it."""

    def test_csv_parses_with_metadata_and_documented_columns(self):
        result = convbench("run", "--shape", TINY, "--shape", "mb1ic2ih5iw6oc3kh2kw3",
                           "--algos", "reference", "--format", "csv", "--seed", "42", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        meta, header, rows = parse_csv(result.stdout)
        self.assertEqual(header, COLUMNS)
        self.assertEqual(list(meta), CONTEXT_KEYS)
        self.assertEqual(meta["seed"], "42")
        self.assertEqual(meta["math_mode"], "fp32, tf32 off")
        self.assertEqual(len(rows), 2 * 3)  # layers x passes
        for row in rows:
            self.assertEqual(row["status"], "ok", row)
            self.assertEqual(row["reason"], "")
            self.assertEqual(row["algorithm"], "reference")
            self.assertEqual(row["device"], "cpu")
            self.assertEqual(row["reps"], "2")
            t, lo, hi = (float(row[k]) for k in ("time_ms", "time_ms_min", "time_ms_max"))
            self.assertTrue(0 <= lo <= t <= hi, row)
            self.assertEqual(row["max_abs_err"], "")  # no --check
        self.assertEqual([r["pass"] for r in rows[:3]], ["fwd", "bwd_data", "bwd_filter"])
        self.assertEqual(rows[0]["layer"], "tiny")
        self.assertEqual(rows[0]["descriptor"], "g1mb2ic3ih7iw7oc4oh7ow7kh3kw3sh1sw1ph1pw1dh0dw0")
        # total = x + w + y bytes (+ the reference's empty workspace)
        self.assertEqual(int(rows[0]["total_bytes"]), 4 * (2 * 3 * 49 + 4 * 3 * 9 + 2 * 4 * 49))
        self.assertIn("6 cases: 6 ok, 0 unsupported, 0 over_budget, 0 error", result.stderr)

    def test_interleave_keeps_the_rows_order_and_is_recorded(self):
        args = ["run", "--shape", TINY, "--shape", "mb1ic2ih5iw6oc3kh2kw3", "--algos",
                "cpu.im2col,reference", "--check", "--format", "csv", "--reps", "3",
                "--warmup", "0"]
        rows_of = {}
        for flag in ([], ["--interleave"]):
            result = convbench(*args, *flag)
            self.assertEqual(result.returncode, 0, result.stderr)
            meta, _, rows = parse_csv(result.stdout)
            self.assertEqual(meta["interleave"], "on" if flag else "off")
            for row in rows:
                self.assertEqual((row["status"], row["reps"]), ("ok", "3"), row)
                self.assertNotEqual(row["max_abs_err"], "", row)  # checked after the rounds
            rows_of[bool(flag)] = [(r["descriptor"], r["pass"], r["algorithm"]) for r in rows]
        self.assertEqual(len(rows_of[True]), 2 * 3 * 2)
        self.assertEqual(rows_of[True], rows_of[False])
        table = convbench("run", "--shape", TINY, "--algos", "reference", "--passes", "fwd",
                          "--interleave", *QUICK)
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("warm-up, algorithms interleaved)", table.stdout)

    def test_json_parses_with_context_rows_and_summary(self):
        result = convbench("run", "--shape", TINY, "--algos", "reference", "--passes", "fwd",
                           "--format", "json", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        doc = json.loads(result.stdout)
        self.assertEqual(list(doc["context"]), CONTEXT_KEYS)
        self.assertIsInstance(doc["context"]["threads"], int)
        self.assertEqual(len(doc["rows"]), 1)
        row = doc["rows"][0]
        self.assertEqual(list(row), COLUMNS)
        self.assertEqual(row["status"], "ok")
        self.assertIsInstance(row["time_ms"], float)
        self.assertIsNone(row["max_abs_err"])
        self.assertEqual(doc["summary"], {"cases": 1, "ok": 1, "unsupported": 0,
                                          "over_budget": 0, "error": 0})

    def test_table_is_aligned(self):
        result = convbench("run", "--shape", TINY, "--shape", "mb1ic2ih5oc3kh2n\"a_longer_name\"",
                           "--algos", "reference", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        header = next(i for i, l in enumerate(lines) if l.startswith("layer "))
        table = [lines[header]] + lines[header + 2:]
        self.assertEqual(len(table), 1 + 6)
        for column in ("pass", "algorithm", "status", "time_ms"):
            start = lines[header].index(column)
            for line in table[1:]:
                self.assertEqual(line[start - 2:start], "  ", (column, line))
        self.assertTrue(any("a_longer_name" in l for l in table))

    def test_out_file_by_suffix_and_by_format(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, fmt in (("rows.csv", []), ("rows.json", []), ("rows.dat", ["--format", "csv"])):
                out = pathlib.Path(tmp, name)
                result = convbench("run", "--shape", TINY, "--algos", "reference",
                                   "--passes", "fwd", "--out", str(out), *fmt, *QUICK)
                self.assertEqual(result.returncode, 0, result.stderr)
                text = out.read_text()
                if name.endswith(".json"):
                    self.assertEqual(json.loads(text)["rows"][0]["status"], "ok")
                    self.assertIn("layer ", result.stdout)  # stdout keeps the table
                else:
                    self.assertEqual(parse_csv(text)[2][0]["status"], "ok")
                self.assertIn(str(out), result.stderr)

    def test_batch_file_reads_benchdnn_files_as_they_are(self):
        with tempfile.TemporaryDirectory() as tmp:
            shapes = pathlib.Path(tmp, "shapes_small")
            shapes.write_text("# a benchdnn shape file\n\n"
                              "g2mb4ic4ih6oc4oh6kh3ph1n\"small:grouped*3\"  # comment\n"
                              "mb4ic2ih9oc2kh3sh2dh1n\"small:dilated\"\n")
            result = convbench("run", "--batch-file", str(shapes), "--mb", "1", "--algos",
                               "reference", "--passes", "bwd_data", "--format", "csv", *QUICK)
            self.assertEqual(result.returncode, 0, result.stderr)
            _, _, rows = parse_csv(result.stdout)
            self.assertEqual([r["layer"] for r in rows], ["small:grouped", "small:dilated"])
            self.assertEqual({r["suite"] for r in rows}, {str(shapes)})
            self.assertTrue(all("mb1" in r["descriptor"] for r in rows))  # --mb applied
            self.assertIn("dh1", rows[1]["descriptor"])

    def test_list_shows_algorithms_and_suites(self):
        result = convbench("list")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("reference", result.stdout)
        listing = json.loads(convbench("list", "--format", "json").stdout)
        suites = {s["name"]: (s["layers"], s["convolutions"]) for s in listing["suites"]}
        self.assertEqual(suites, {"alexnet": (5, 5), "vgg16": (9, 13), "resnet50": (20, 53),
                                  "googlenet": (51, 59), "convnet-benchmarks": (5, 5),
                                  "deepbench": (18, 18)})
        for a in listing["algorithms"]:
            self.assertEqual(set(a), {"name", "device", "available", "why_not",
                                      "deterministic", "description"})
            self.assertEqual(a["available"], a["why_not"] == "", a)
        self.assertIsInstance(listing["not_built"], list)


class SweepBehaviour(unittest.TestCase):
    """Dispositions, exit status 1 for error rows, --check and --dump."""

    def test_check_with_reference(self):
        result = convbench("run", "--shape", TINY, "--algos", "reference", "--check",
                           "--format", "csv", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)
        meta, _, rows = parse_csv(result.stdout)
        self.assertEqual(meta["check"], "reference, auto")
        self.assertEqual(len(rows), 3)
        for row in rows:
            self.assertEqual(row["status"], "ok")
            self.assertEqual(float(row["max_abs_err"]), 0.0)  # the reference against itself
            self.assertEqual(float(row["max_rel_err"]), 0.0)

    def test_check_every_available_cpu_algorithm(self):
        algorithms = [n for n, a in available_algorithms().items()
                      if a["available"] and a["device"] == "cpu"]
        result = convbench("run", "--shape", "mb2ic4ih9iw7oc6kh3kw2sh2ph1", "--algos",
                           ",".join(algorithms), "--check", "--format", "csv", *QUICK)
        _, _, rows = parse_csv(result.stdout)
        self.assertEqual(len(rows), 3 * len(algorithms))
        for row in rows:
            self.assertIn(row["status"], ("ok", "unsupported"), row)
            if row["status"] == "ok":
                self.assertLess(float(row["max_rel_err"]), 1e-5, row)
            else:
                self.assertTrue(row["reason"], row)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_unavailable_algorithm_is_unsupported_with_its_reason(self):
        unavailable = [a for a in available_algorithms().values() if not a["available"]]
        if not unavailable:
            self.skipTest("every compiled-in algorithm can run here")
        a = unavailable[0]
        result = convbench("run", "--shape", TINY, "--algos", a["name"], "--passes", "fwd",
                           "--format", "csv", *QUICK)
        self.assertEqual(result.returncode, 0, result.stderr)  # unsupported is not a failure
        row = parse_csv(result.stdout)[2][0]
        self.assertEqual((row["status"], row["reason"]), ("unsupported", a["why_not"]))
        self.assertIn("1 unsupported", result.stderr)

    def test_case_that_throws_is_an_error_row_and_the_sweep_goes_on(self):
        # 2^45 floats per activation tensor: valid, but far beyond this machine's memory, so
        # the harness refuses it before allocating (out_of_memory); the next case still runs.
        huge = "mb1ic1ih4194304iw8388608oc1kh1kw1"
        result = convbench("run", "--shape", huge, "--shape", TINY, "--algos", "reference",
                           "--passes", "fwd", "--format", "csv", *QUICK)
        self.assertEqual(result.returncode, 1, result.stderr)
        _, _, rows = parse_csv(result.stdout)
        self.assertEqual([r["status"] for r in rows], ["error", "ok"])
        self.assertTrue(rows[0]["reason"].startswith("out_of_memory: "), rows[0])
        self.assertIn("1 ok, 0 unsupported, 0 over_budget, 1 error", result.stderr)

    def test_seed_fixes_the_inputs_and_dump_cross_checks(self):
        with tempfile.TemporaryDirectory() as tmp:
            dirs = {}
            for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
                dirs[name] = pathlib.Path(tmp, name, "nested")
                result = convbench("run", "--shape", TINY, "--algos", "reference", "--seed",
                                   seed, "--dump", str(dirs[name]), *QUICK)
                self.assertEqual(result.returncode, 0, result.stderr)
            manifest = json.loads((dirs["a"] / "manifest.json").read_text())
            self.assertEqual(len(manifest["cases"]), 3)
            roles = {c["pass"]: (c["inputs"], c["output"]) for c in manifest["cases"]}
            self.assertEqual(roles, {"fwd": (["x", "w"], "y"), "bwd_data": (["y", "w"], "x"),
                                     "bwd_filter": (["x", "y"], "w")})
            fwd = next(c for c in manifest["cases"] if c["pass"] == "fwd")
            self.assertEqual(fwd["descriptor"], "g1mb2ic3ih7iw7oc4oh7ow7kh3kw3sh1sw1ph1pw1dh0dw0")
            self.assertEqual(fwd["algorithm"], "reference")
            files = fwd["files"]
            same = (dirs["a"] / files["x"]).read_bytes() == (dirs["b"] / files["x"]).read_bytes()
            differ = (dirs["a"] / files["x"]).read_bytes() != (dirs["c"] / files["x"]).read_bytes()
            self.assertTrue(same and differ, "--seed must fix the inputs, and only the seed")
            # The dumped output is the convolution of the dumped inputs, recomputed here.
            xs, x = read_npy(dirs["a"] / files["x"])
            ws, w = read_npy(dirs["a"] / files["w"])
            ys, y = read_npy(dirs["a"] / files["y"])
            self.assertEqual((xs, ws, ys), ((2, 3, 7, 7), (4, 3, 3, 3), (2, 4, 7, 7)))
            p = fwd["problem"]
            worst = 0.0
            for n in range(2):
                for k in range(4):
                    for oh in range(7):
                        for ow in range(7):
                            acc = 0.0
                            for c in range(3):
                                for r in range(3):
                                    for s in range(3):
                                        ih, iw = oh - p["pad_h"] + r, ow - p["pad_w"] + s
                                        if 0 <= ih < 7 and 0 <= iw < 7:
                                            acc += (x[((n * 3 + c) * 7 + ih) * 7 + iw] *
                                                    w[((k * 3 + c) * 3 + r) * 3 + s])
                            got = y[((n * 4 + k) * 7 + oh) * 7 + ow]
                            worst = max(worst, abs(got - acc))
            self.assertLess(worst, 1e-5)


class DoneWhen(unittest.TestCase):
    """The foundation issue's done-when command: one ok row per layer and pass (15 rows).
    --warmup 0 --reps 1 keep it to one run per case (about 25 s of CPU time)."""

    def test_convnet_benchmarks_reference_all_passes(self):
        result = convbench("run", "--suite", "convnet-benchmarks", "--mb", "2", "--algos",
                           "reference", "--passes", "fwd,bwd_data,bwd_filter", "--format",
                           "csv", "--warmup", "0", "--reps", "1")
        self.assertEqual(result.returncode, 0, result.stderr)
        _, header, rows = parse_csv(result.stdout)
        self.assertEqual(header, COLUMNS)
        self.assertEqual(len(rows), 15)
        self.assertEqual([(r["layer"], r["pass"]) for r in rows],
                         [(f"convnet-benchmarks:L{i}", p) for i in range(1, 6)
                          for p in ("fwd", "bwd_data", "bwd_filter")])
        for row in rows:
            self.assertEqual(row["status"], "ok", row)
            self.assertIn("mb2", row["descriptor"])
            self.assertGreater(float(row["gflops"]), 0)


def main():
    global CONVBENCH
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CONVBENCH = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
