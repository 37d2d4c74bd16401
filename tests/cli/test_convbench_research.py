#!/usr/bin/env python3
"""convbench's issue-5 commands and flags as a user runs them: memory, predict (and
--calibrate), --memory-budget/--card/--select, --resume after SIGKILL, SIGINT, the progress
line, --shard (and its SLURM_ARRAY_* defaults), merge, --devices, --vary, plot_sweep.py.
Standard library only (plot_sweep.py itself needs /usr/bin/python3 with matplotlib).

    test_convbench_research.py CONVBENCH [unittest arguments, e.g. a TestCase name]
"""
import csv
import io
import json
import os
import pathlib
import pty
import select
import signal
import subprocess
import sys
import tempfile
import time
import unittest

CONVBENCH = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
HERE = pathlib.Path(__file__).resolve().parent
PLOT = HERE.parent.parent / "bench" / "plot_sweep.py"
QUICK = ["--reps", "1", "--warmup", "0"]
SMALL = ["--shape", 'mb2ic8ih12oc8kh3ph1n"a"', "--shape", 'mb2ic4ih9oc6kh5ph2sh2n"b"']


def second_cpu_algorithm():
    """A CPU algorithm beside cpu.im2col that runs every layer of these tests: oneDNN or the
    FFT where the build has them, else the reference (slow, but in every build), so that a
    build without the optional backends runs these tests instead of failing on a name."""
    if CONVBENCH is None:
        return "reference"
    listing = subprocess.run([CONVBENCH, "list", "--format", "json"], capture_output=True,
                             text=True, timeout=60)
    built = {a["name"] for a in json.loads(listing.stdout)["algorithms"] if a["available"]}
    return next((a for a in ("cpu.onednn", "cpu.fft") if a in built), "reference")


CPU_ALGOS = ("cpu.im2col", second_cpu_algorithm())
CPU = ["--algos", ",".join(CPU_ALGOS)]
# A CPU described as a card, for calibration (figures are nominal: the efficiency absorbs them).
HOST_CARD = {"id": "host", "name": "this host", "memory": "8GiB", "bandwidth_gbs": 10,
             "fp32_tflops": 0.1, "architecture": "x86-64", "year": 2020}


def convbench(*args, env=None, timeout=300):
    return subprocess.run([CONVBENCH, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def parse_csv(text):
    lines = text.splitlines()
    meta = {}
    while lines and lines[0].startswith("# "):
        key, _, value = lines.pop(0)[2:].partition(": ")
        meta[key] = value
    reader = csv.DictReader(io.StringIO("\n".join(lines) + "\n"))
    return meta, reader.fieldnames, list(reader)


def read_csv(path):
    return parse_csv(pathlib.Path(path).read_text())


def algorithms():
    listing = json.loads(convbench("list", "--format", "json").stdout)
    return {a["name"]: a for a in listing["algorithms"]}


def case_keys(rows):
    return [(r["suite"], r["layer"], r["descriptor"], r["pass"], r["algorithm"], r["device"])
            for r in rows if r["algorithm"] != "select"]


class MemoryAndPredict(unittest.TestCase):
    """memory and predict: every term shown, fits per card, rankings, calibration."""

    def test_list_shows_the_card_table(self):
        listing = json.loads(convbench("list", "--format", "json").stdout)
        cards = {c["id"]: c for c in listing["cards"]}
        for wanted in ("gtx580", "gtx680", "gtx960", "gtx970", "gtx980", "gtx980ti", "titan",
                       "titan-x", "grid-k520", "t4", "v100", "a100-40gb", "a100-80gb",
                       "rtx3090", "rtx4090", "l4", "h100-sxm", "h200"):
            self.assertIn(wanted, cards)
        for c in cards.values():
            for key in ("memory_bytes", "usable_bytes", "bandwidth_gbs", "fp32_tflops", "year"):
                self.assertGreater(c[key], 0, c)
            self.assertLessEqual(c["usable_bytes"], c["memory_bytes"])
            self.assertTrue(c["source"] and c["architecture"], c)
        self.assertEqual(cards["gtx970"]["usable_bytes"], 3584 * 2**20)
        self.assertIn("gtx970", convbench("list").stdout)

    def test_memory_rows_show_their_terms(self):
        r = convbench("memory", *SMALL, "--cards", "gtx970,h200", "--memory-budget", "1MiB",
                      "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        meta, header, rows = parse_csv(r.stdout)
        self.assertEqual(meta["cards"], "gtx970,h200")
        layers = [x for x in rows if x["kind"] == "layer"]
        nets = [x for x in rows if x["kind"] == "network"]
        names = {x["algorithm"] for x in layers}
        self.assertEqual(len(layers), 2 * 3 * len(names))
        for x in layers:
            if x["source"] != "plan":
                self.assertTrue(x["reason"], x)
                continue
            total = sum(int(x[k]) for k in ("x_bytes", "w_bytes", "y_bytes", "workspace_bytes"))
            self.assertEqual(int(x["total_bytes"]), total, x)
            self.assertEqual(x["over_budget"], "yes" if total > 2**20 else "no")
            self.assertEqual(x["fits"], "gtx970;h200")  # small layers fit both
        self.assertEqual(len(nets), len(names))
        for n in nets:
            if n["source"] != "plan":  # a strategy that cannot plan every layer (say, 3x3 only)
                self.assertEqual(n["source"], "incomplete", n)
                self.assertTrue(n["reason"], n)
                continue
            terms = ("weights_bytes", "weight_grad_bytes", "optimizer_bytes", "activation_bytes",
                     "gradient_bytes", "workspace_bytes")
            self.assertEqual(int(n["total_bytes"]), sum(int(n[k]) for k in terms), n)
            self.assertEqual(n["weights_bytes"], n["weight_grad_bytes"])
            batches = dict(p.split("=") for p in n["largest_batch"].split(";"))
            self.assertEqual(set(batches), {"gtx970", "h200"})
        # AlexNet at batch 32: the largest batch per card grows with the card's memory.
        r = convbench("memory", "--suite", "alexnet", "--mb", "32", "--algos", "cpu.im2col",
                      "--cards", "gtx580,gtx970,h200", "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        net = next(x for x in parse_csv(r.stdout)[2] if x["kind"] == "network")
        batches = [int(p.split("=")[1].rstrip("*+")) for p in net["largest_batch"].split(";")]
        self.assertEqual(len(batches), 3)
        self.assertTrue(0 < batches[0] < batches[1] < batches[2], batches)

    def test_memory_json_and_unavailable_algorithms(self):
        gpu = [n for n, a in algorithms().items() if a["device"] == "gpu" and not a["available"]]
        args = ["memory", *SMALL, "--format", "json", "--passes", "fwd"]
        if gpu:
            args += ["--algos", "cpu.im2col," + gpu[0]]
        r = convbench(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(set(doc), {"context", "layers", "networks"})
        if gpu:
            gone = [x for x in doc["layers"] if x["algorithm"] == gpu[0]]
            self.assertTrue(gone)
            for x in gone:
                self.assertEqual(x["source"], "unavailable")
                self.assertIsNone(x["workspace_bytes"])
                self.assertTrue(x["reason"])

    def test_memory_bad_input(self):
        for args, fragment in ((["--cards", "gtx9700"], "unknown card 'gtx9700'"),
                               (["--memory-budget", "8G"], "ambiguous"),
                               (["--cards", "/no/such/cards.json"], "/no/such/cards.json")):
            r = convbench("memory", *SMALL, *args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(fragment, r.stderr)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_memory_with_a_cards_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            cards = pathlib.Path(tmp, "cards.json")
            tiny = dict(HOST_CARD, id="tiny", memory="8KiB")
            cards.write_text(json.dumps({"cards": [tiny]}))
            r = convbench("memory", *SMALL, "--cards", str(cards), "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            _, _, rows = parse_csv(r.stdout)
            self.assertTrue(all(x["does_not_fit"] == "tiny" for x in rows
                                if x["kind"] == "layer" and x["source"] == "plan"))

    def test_list_output_reads_back_as_cards(self):
        # The whole `list --format json` output, unedited, is a cards file.
        r = convbench("list", "--format", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        listed = json.loads(r.stdout)
        with tempfile.TemporaryDirectory() as tmp:
            same = pathlib.Path(tmp, "list.json")
            same.write_text(r.stdout)
            back = convbench("memory", *SMALL, "--cards", str(same), "--format", "csv")
            self.assertEqual(back.returncode, 0, back.stderr)
            # Its byte fields are read as bytes: shrunk to 8 KiB, every card is too small.
            for card in listed["cards"]:
                card["id"] += "-tiny"
                card["memory_bytes"] = card["usable_bytes"] = 8192
            tiny = pathlib.Path(tmp, "tiny.json")
            tiny.write_text(json.dumps(listed))
            r = convbench("memory", *SMALL, "--cards", str(tiny), "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            _, _, rows = parse_csv(r.stdout)
            ids = sorted(c["id"] for c in listed["cards"])
            plan_rows = [x for x in rows if x["kind"] == "layer" and x["source"] == "plan"]
            self.assertTrue(plan_rows)
            for row in plan_rows:
                self.assertEqual(sorted(row["does_not_fit"].split(";")), ids, row)

    def test_card_fits_say_they_are_modelled(self):
        r = convbench("memory", *SMALL, *CPU, "--cards", "gtx970")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("modelled, not measured", r.stdout)
        self.assertIn("Host (CPU) algorithms do not run on a card", r.stdout)
        r = convbench("memory", *SMALL, *CPU, "--cards", "gtx970", "--format", "csv")
        self.assertIn("# card_fits: Fits per card are modelled", r.stdout)
        r = convbench("memory", *SMALL, *CPU)
        self.assertNotIn("modelled, not measured", r.stdout)

    def test_predict_ranks_cards(self):
        r = convbench("predict", "--suite", "alexnet", "--cards", "gtx580,gtx970,h200",
                      "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        meta, _, rows = parse_csv(r.stdout)
        self.assertEqual(meta["calibration"], "none")
        cases = [x for x in rows if x["kind"] == "case"]
        for x in cases:
            self.assertAlmostEqual(float(x["time_ms"]),
                                   max(float(x["compute_ms"]), float(x["memory_ms"])),
                                   delta=1e-5 * float(x["time_ms"]))
            self.assertEqual(x["calibrated"], "no")
            # A roofline is a bound, not a spread: no range without a calibration.
            self.assertEqual((x["predicted_ms_low"], x["predicted_ms_high"]), ("", ""))
        ranking = [x for x in rows if x["kind"] == "ranking" and
                   x["algorithm"] == "fastest per case"]
        self.assertEqual([x["card"] for x in ranking], ["h200", "gtx970", "gtx580"])
        self.assertEqual([x["rank"] for x in ranking], ["1", "2", "3"])

    def test_predict_calibrated_on_a_cpu_sweep_reproduces_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            sweep = pathlib.Path(tmp, "cpu.csv")
            cards = pathlib.Path(tmp, "host.json")
            cards.write_text(json.dumps([HOST_CARD]))
            r = convbench("run", *SMALL, *CPU, "--reps", "5", "--out", str(sweep),
                          "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            bad = convbench("predict", *SMALL, *CPU, "--calibrate", str(sweep))
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--calibrate-card", bad.stderr)
            r = convbench("predict", *SMALL, *CPU, "--cards", str(cards), "--calibrate",
                          str(sweep), "--calibrate-card", "host", "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            meta, _, rows = parse_csv(r.stdout)
            self.assertIn("on host", meta["calibration"])
            _, _, measured = read_csv(sweep)
            for algo in CPU_ALGOS:
                predicted = sum(float(x["time_ms"]) for x in rows
                                if x["kind"] == "case" and x["algorithm"] == algo)
                lo = sum(float(x["time_ms_min"]) for x in measured if x["algorithm"] == algo)
                hi = sum(float(x["time_ms_max"]) for x in measured if x["algorithm"] == algo)
                # The CSV rounds to 6 digits; the sums may differ in the last of them.
                self.assertGreaterEqual(predicted, lo * (1 - 1e-5), algo)
                self.assertLessEqual(predicted, hi * (1 + 1e-5), algo)
                self.assertTrue(all(x["calibrated"] == "yes" for x in rows
                                    if x["kind"] == "case" and x["algorithm"] == algo))
            # Each range holds its point, and on the card the sweep ran on, each measured
            # case lies inside the range predicted for it.
            ranges = {(x["descriptor"], x["pass"], x["algorithm"]):
                      (float(x["predicted_ms_low"]), float(x["time_ms"]),
                       float(x["predicted_ms_high"]))
                      for x in rows if x["kind"] == "case"}
            for low, point, high in ranges.values():
                self.assertLessEqual(low, point)
                self.assertLessEqual(point, high)
            for x in measured:
                low, _, high = ranges[(x["descriptor"], x["pass"], x["algorithm"])]
                self.assertGreaterEqual(float(x["time_ms"]), low * (1 - 1e-5), x)
                self.assertLessEqual(float(x["time_ms"]), high * (1 + 1e-5), x)
            table = convbench("predict", *SMALL, *CPU, "--cards", str(cards), "--calibrate",
                              str(sweep), "--calibrate-card", "host", "--passes", "fwd")
            self.assertRegex(table.stdout, r"\d\* \([0-9.e+-]+\u2013[0-9.e+-]+\)")


    def test_predict_finds_the_card_of_a_gpu_sweep(self):
        # A GPU sweep's devices line names the card; the rows here are made up, as this
        # machine may have no GPU: only the lookup and the calibration are under test.
        with tempfile.TemporaryDirectory() as tmp:
            sweep = pathlib.Path(tmp, "gpu.csv")
            sweep.write_text(
                "# devices: cpu (2 threads); NVIDIA H200 (sm_90, 139.8 GiB, 132 SMs)\n"
                "suite,layer,descriptor,pass,algorithm,device,status,time_ms\n"
                "s,a,mb2ic8ih12oc8kh3ph1,fwd,cuda.fft,gpu,ok,0.05\n"
                "s,a,mb2ic8ih12oc8kh3ph1,fwd,cpu.im2col,cpu,ok,0.5\n")
            r = convbench("predict", "--shape", "mb2ic8ih12oc8kh3ph1", "--algos", "cuda.fft",
                          "--passes", "fwd", "--cards", "h200,t4", "--calibrate", str(sweep),
                          "--calibrate-device", "gpu", "--format", "csv")
            if r.returncode == 2 and "cuda.fft" in r.stderr:
                self.skipTest("cuda.fft is not built here")
            self.assertEqual(r.returncode, 0, r.stderr)
            meta, _, rows = parse_csv(r.stdout)
            self.assertIn("on h200 (gpu)", meta["calibration"])
            self.assertTrue(all(x["calibrated"] == "yes" for x in rows if x["kind"] == "case"))
            r = convbench("predict", "--shape", "mb2ic8ih12oc8kh3ph1", "--passes", "fwd",
                          "--calibrate", str(sweep))
            self.assertEqual(r.returncode, 2)
            self.assertIn("several devices", r.stderr)


class BudgetsAndSelect(unittest.TestCase):
    """--memory-budget and --card refuse what does not fit; --select names the choice."""

    def test_budget_marks_over_budget_instead_of_running(self):
        r = convbench("run", *SMALL, *CPU, *QUICK, "--memory-budget", "4KiB", "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        meta, _, rows = parse_csv(r.stdout)
        self.assertIn("4.00 KiB", meta["memory_budget"])
        self.assertTrue(rows)
        for x in rows:
            self.assertEqual(x["status"], "over_budget", x)
            self.assertIn("over the budget of 4.00 KiB", x["reason"])
            self.assertEqual(x["time_ms"], "")
            self.assertGreater(int(x["total_bytes"]), 4096)
        r = convbench("run", *SMALL, *CPU, *QUICK, "--card", "gtx970", "--format", "csv")
        meta, _, rows = parse_csv(r.stdout)
        self.assertIn("gtx970 usable 3.50 GiB", meta["memory_budget"])
        self.assertTrue(all(x["status"] == "ok" for x in rows))
        for args, fragment in ((["--card", "nope"], "unknown card 'nope'"),
                               (["--memory-budget", "lots"], "invalid size 'lots'")):
            bad = convbench("run", *SMALL, *args)
            self.assertEqual(bad.returncode, 2)
            self.assertIn(fragment, bad.stderr)

    def test_select_rows_name_the_fastest_that_fits(self):
        r = convbench("run", *SMALL, "--algos", "cpu.*", *QUICK, "--select", "--format", "csv")
        self.assertEqual(r.returncode, 0, r.stderr)
        _, _, rows = parse_csv(r.stdout)
        chosen = [x for x in rows if x["algorithm"] == "select"]
        self.assertEqual(len(chosen), 2 * 3)  # one per layer and pass
        for s in chosen:
            group = [x for x in rows if x["descriptor"] == s["descriptor"] and
                     x["pass"] == s["pass"] and x["algorithm"] != "select" and x["status"] == "ok"]
            fastest = min(group, key=lambda x: float(x["time_ms"]))
            self.assertEqual(s["time_ms"], fastest["time_ms"], s)
            self.assertTrue(s["reason"].startswith("chose " + fastest["algorithm"]), s)
        # A budget below FFT's workspace makes the choice one that fits.
        fft = [x for x in rows if x["algorithm"] == "cpu.fft" and x["status"] == "ok"]
        if fft:
            budget = min(int(x["total_bytes"]) for x in fft) - 1
            r = convbench("run", *SMALL, "--algos", "cpu.*", *QUICK, "--select",
                          "--memory-budget", str(budget), "--format", "csv")
            _, _, rows = parse_csv(r.stdout)
            for s in (x for x in rows if x["algorithm"] == "select" and x["status"] == "ok"):
                self.assertNotIn("chose cpu.fft", s["reason"])
                self.assertLessEqual(int(s["total_bytes"]), budget)


class SurvivingSweeps(unittest.TestCase):
    """Rows survive SIGKILL (in FILE.partial, FILE untouched until the sweep finishes);
    --resume completes the sweep with every case exactly once."""

    ARGS = ["run", "--suite", "alexnet", "--mb", "1", *CPU, "--reps", "2", "--warmup", "0",
            "--format", "csv"]

    def complete_keys(self, tmp):
        full = pathlib.Path(tmp, "full.csv")
        r = convbench(*self.ARGS, "--passes", "fwd", "--out", str(full))
        self.assertEqual(r.returncode, 0, r.stderr)
        return full

    def rows_written(self, path):
        try:
            return max(0, sum(1 for l in pathlib.Path(path).read_text().splitlines()
                              if l and not l.startswith("#")) - 1)
        except FileNotFoundError:
            return 0

    def assert_whole(self, path, expected):
        text = pathlib.Path(path).read_text()
        self.assertTrue(text.endswith("\n"))
        meta, header, rows = parse_csv(text)
        self.assertEqual(text.count("# convbench_version:"), 1)
        self.assertEqual(text.count("suite,layer,descriptor"), 1)
        for line in text.splitlines():
            if not line.startswith("#"):
                self.assertEqual(len(next(csv.reader([line]))), len(header), line)
        keys = case_keys(rows)
        self.assertEqual(sorted(keys), sorted(set(keys)), "a case appears twice")
        self.assertEqual(set(keys), expected)

    def test_sigkill_then_resume(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "sweep.csv")
            partial = pathlib.Path(tmp, "sweep.csv.partial")
            out.write_text("an earlier sweep's rows\n")
            expected = set(case_keys(read_csv(self.complete_keys(tmp))[2]))
            expected = {k[:3] + (p,) + k[4:] for k in expected
                        for p in ("fwd", "bwd_data", "bwd_filter")}
            proc = subprocess.Popen([CONVBENCH, *self.ARGS, "--out", str(out)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 120
            while (self.rows_written(partial) < 5 and time.time() < deadline and
                   proc.poll() is None):
                time.sleep(0.02)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            written = self.rows_written(partial)
            self.assertLess(written, len(expected), "the sweep finished before the kill")
            self.assertEqual(out.read_text(), "an earlier sweep's rows\n", "FILE was touched")
            # A torn row as a kill in the middle of a write would leave it.
            with open(partial, "a") as f:
                f.write("alexnet,alexnet:conv5,g1mb1ic384")
            r = convbench(*self.ARGS, "--out", str(out), "--resume")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("already in " + str(partial), r.stderr)
            self.assertIn("torn last row", r.stderr)
            self.assert_whole(out, expected)
            self.assertFalse(partial.exists(), "the finished sweep left its .partial")
            # A finished FILE: --resume reads it, finds nothing left and keeps it whole.
            again = convbench(*self.ARGS, "--out", str(out), "--resume")
            self.assertIn(f"{len(expected)} of {len(expected)} cases already in {out}",
                          again.stderr)
            self.assert_whole(out, expected)
            self.assertFalse(partial.exists())

    def test_resume_refuses_other_settings_and_json(self):
        with tempfile.TemporaryDirectory() as tmp:
            full = self.complete_keys(tmp)
            args = [a if a != "2" else "3" for a in self.ARGS]  # --reps 2 -> --reps 3
            r = convbench(*args, "--passes", "fwd", "--out", str(full), "--resume")
            self.assertEqual(r.returncode, 2)
            self.assertIn("reps: '2' vs '3'", r.stderr)
            r = convbench(*self.ARGS, "--out", str(pathlib.Path(tmp, "x.json")), "--resume")
            self.assertEqual(r.returncode, 2)
            self.assertIn("CSV", r.stderr)

    def test_sigint_finishes_the_row_and_exits_cleanly(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "sweep.csv")
            partial = pathlib.Path(tmp, "sweep.csv.partial")
            proc = subprocess.Popen([CONVBENCH, *self.ARGS, "--out", str(out)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 120
            while self.rows_written(partial) < 3 and time.time() < deadline:
                time.sleep(0.02)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
            self.assertEqual(proc.returncode, 130, err)
            self.assertIn("interrupted (SIGINT)", err)
            self.assertIn("--resume", err)
            self.assertIn("rows in " + str(partial), err)
            self.assertFalse(out.exists(), "an interrupted sweep wrote FILE")
            text = partial.read_text()
            self.assertTrue(text.endswith("\n"))
            _, header, rows = parse_csv(text)
            self.assertTrue(all(None not in r.values() for r in rows))

    def test_progress_line_only_on_a_terminal(self):
        r = convbench("run", *SMALL, *CPU, *QUICK, "--passes", "fwd")
        self.assertNotIn("\r", r.stderr)
        leader, follower = pty.openpty()
        proc = subprocess.Popen([CONVBENCH, "run", *SMALL, *CPU, *QUICK, "--passes", "fwd"],
                                stdout=subprocess.DEVNULL, stderr=follower)
        os.close(follower)
        seen = b""
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        proc.wait(timeout=60)
        os.close(leader)
        text = seen.decode(errors="replace")
        self.assertIn("[1/4]", text)
        self.assertIn("elapsed", text)
        self.assertIn("left", text)


class ShardsAndMerge(unittest.TestCase):
    """--shard I/N (and SLURM_ARRAY_*) cover each case once; merge finds what is off."""

    ARGS = ["run", "--suite", "alexnet", "--mb", "1", *CPU,
            "--passes", "fwd,bwd_data", *QUICK, "--format", "csv"]

    def shards(self, tmp, n, **env_extra):
        paths = []
        for i in range(1, n + 1):
            path = pathlib.Path(tmp, f"shard{i}.csv")
            if env_extra:
                env = dict(os.environ, SLURM_ARRAY_TASK_ID=str(i - 1 + env_extra.get("base", 0)),
                           SLURM_ARRAY_TASK_COUNT=str(n),
                           SLURM_ARRAY_TASK_MIN=str(env_extra.get("base", 0)))
                r = convbench(*self.ARGS, "--out", str(path), env=env)
            else:
                r = convbench(*self.ARGS, "--shard", f"{i}/{n}", "--out", str(path))
            self.assertEqual(r.returncode, 0, r.stderr)
            paths.append(path)
        return paths

    def test_shards_cover_every_case_once_and_merge(self):
        with tempfile.TemporaryDirectory() as tmp:
            whole = pathlib.Path(tmp, "whole.csv")
            self.assertEqual(convbench(*self.ARGS, "--out", str(whole)).returncode, 0)
            expected = case_keys(read_csv(whole)[2])
            paths = self.shards(tmp, 3)
            parts = [case_keys(read_csv(p)[2]) for p in paths]
            self.assertEqual(sorted(sum(parts, [])), sorted(expected))
            for p, keys in zip(paths, parts):
                meta = read_csv(p)[0]
                self.assertEqual(meta["sweep_cases"], str(len(expected)))
                self.assertEqual(meta["shard_cases"], str(len(keys)))
            self.assertEqual(read_csv(paths[1])[0]["shard_source"], "--shard 2/3")
            env_paths = self.shards(tmp, 3, base=1)  # SLURM_ARRAY_TASK_ID 1..3, MIN 1
            self.assertEqual([case_keys(read_csv(p)[2]) for p in env_paths], parts)
            self.assertEqual(read_csv(env_paths[1])[0]["shard_source"],
                             "SLURM_ARRAY_TASK_ID=2 SLURM_ARRAY_TASK_COUNT=3 "
                             "SLURM_ARRAY_TASK_MIN=1")
            self.assertEqual(convbench("merge", str(pathlib.Path(tmp, "mixed.csv")),
                                       str(paths[0]), str(env_paths[1]), str(paths[2]))
                             .returncode, 0, "parts of one sweep differ only in shard_source")
            merged = pathlib.Path(tmp, "merged.csv")
            r = convbench("merge", str(merged), *map(str, paths))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("complete", r.stderr)
            meta, _, rows = read_csv(merged)
            self.assertNotIn("shard", meta)
            self.assertEqual(sorted(case_keys(rows)), sorted(expected))

    def test_merge_reports_missing_duplicate_and_other_settings(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = self.shards(tmp, 2)
            lines = paths[1].read_text().splitlines(keepends=True)
            dropped = next(csv.reader([lines[-1]]))
            paths[1].write_text("".join(lines[:-1]))
            merged = pathlib.Path(tmp, "merged.csv")
            r = convbench("merge", str(merged), str(paths[0]), str(paths[1]), str(paths[0]))
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("duplicate:", r.stderr)
            self.assertIn("missing:", r.stderr)
            self.assertIn(dropped[4], r.stderr.split("missing:")[1])
            self.assertFalse(merged.exists(), "a failed merge wrote OUT")
            self.assertIn(dropped[0], pathlib.Path(tmp, "merged.csv.partial").read_text())
            r = convbench("merge", str(merged), str(paths[0]))
            self.assertEqual(r.returncode, 1)
            self.assertIn("shard 2/2: no file", r.stderr)
            other = pathlib.Path(tmp, "other.csv")
            r = convbench(*[a if a != "1" else "2" for a in self.ARGS], "--shard", "2/2",
                          "--out", str(other))
            r = convbench("merge", str(merged), str(paths[0]), str(other))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("other settings", r.stderr)

    def test_bad_shards(self):
        for value in ("0/3", "4/3", "3", "a/b"):
            r = convbench(*self.ARGS, "--shard", value)
            self.assertEqual(r.returncode, 2, value)
            self.assertIn("--shard", r.stderr)
        env = dict(os.environ, SLURM_ARRAY_TASK_ID="7", SLURM_ARRAY_TASK_COUNT="3")
        r = convbench(*self.ARGS, env=env)
        self.assertEqual(r.returncode, 2)
        self.assertIn("SLURM_ARRAY_TASK_ID=7", r.stderr)

    def test_devices_run_one_worker_each(self):
        with tempfile.TemporaryDirectory() as tmp:
            whole = pathlib.Path(tmp, "whole.csv")
            self.assertEqual(convbench(*self.ARGS, "--out", str(whole)).returncode, 0)
            out = pathlib.Path(tmp, "devices.csv")
            r = convbench(*self.ARGS, "--devices", "0,1", "--out", str(out))
            self.assertEqual(r.returncode, 0, r.stderr)
            meta, _, rows = read_csv(out)
            self.assertEqual(sorted(case_keys(rows)), sorted(case_keys(read_csv(whole)[2])))
            self.assertIn("2 (devices 0,1)", meta["workers"])
            self.assertEqual(list(pathlib.Path(tmp).glob("*.worker*")), [])
            _, _, printed = parse_csv(r.stdout)
            self.assertEqual(len(printed), len(rows))


class VaryAndPlot(unittest.TestCase):
    """--vary sweeps a field; invalid combinations are skipped; plot_sweep.py draws both."""

    def test_vary_and_plots(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "vary.csv")
            r = convbench("run", "--shape", "mb1ic4ih12oc4kh3", "--vary", "kh=3:15:4",
                          "--vary", "ih=12:24:*2", *CPU, *QUICK, "--passes", "fwd",
                          "--out", str(out), "--format", "csv")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("--vary: skipped kh=15 ih=12", r.stderr)
            self.assertIn("plot_sweep.py", r.stderr)
            meta, _, rows = read_csv(out)
            self.assertEqual(meta["vary"], "kh=3:15:4; ih=12:24:*2")
            layers = {x["layer"] for x in rows}
            self.assertEqual(len(layers), 4 * 2 - 1)
            self.assertIn("kh=11 ih=24", layers)
            bad = convbench("run", "--shape", "mb1ic4ih12oc4kh3", "--vary", "kh=3:1")
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--vary 'kh=3:1'", bad.stderr)
            bad = convbench("run", "--suite", "alexnet", "--vary", "kh=3:5")
            self.assertEqual(bad.returncode, 2)
            self.assertIn("--shape", bad.stderr)
            python = "/usr/bin/python3"
            have = subprocess.run([python, "-c", "import matplotlib"], capture_output=True)
            if have.returncode != 0:
                self.skipTest("no matplotlib for /usr/bin/python3")
            for csv_path, extra in ((out, ["--x", "kh"]), (out, [])):
                png = pathlib.Path(tmp, "plot.png")
                p = subprocess.run([python, str(PLOT), str(csv_path), "-o", str(png), *extra],
                                   capture_output=True, text=True)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(png.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")
            plain = pathlib.Path(tmp, "plain.csv")
            convbench("run", *SMALL, *CPU, *QUICK, "--out", str(plain))
            p = subprocess.run([python, str(PLOT), str(plain), "-o", str(png)],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertGreater(png.stat().st_size, 10000)


class SlurmLocalhost(unittest.TestCase):
    """bench/slurm/sweep.sbatch on a real one-node Slurm cluster on localhost (Debian's
    slurm-wlm and munge, daemons started here with their own config, socket and ports, as
    root). Skipped with the reason when that is not possible; ShardsAndMerge tests the
    SLURM_ARRAY_* path without Slurm either way."""

    def setUp(self):
        import shutil
        import socket
        missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo")
                   if not shutil.which(b, path=os.environ.get("PATH", "") + ":/usr/sbin")]
        if missing:
            self.skipTest("no " + ", ".join(missing) + " (apt-get install slurm-wlm munge)")
        if os.geteuid() != 0:
            self.skipTest("the one-node cluster runs its daemons as root")
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        self.pids = []
        host = socket.gethostname().split(".")[0]
        ports = []
        for _ in range(2):
            with socket.socket() as probe:
                probe.bind(("", 0))
                ports.append(probe.getsockname()[1])
        d = self.dir
        (d / "munge").mkdir(mode=0o711)
        (d / "state").mkdir()
        (d / "spool").mkdir()
        key = d / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        sock = d / "munge" / "munge.sock"
        subprocess.run(["/usr/sbin/munged", f"--socket={sock}", f"--key-file={key}",
                        f"--pid-file={d}/munged.pid", f"--log-file={d}/munged.log",
                        f"--seed-file={d}/munged.seed", "--force"], check=True)
        self.pid_files = [d / "munged.pid"]
        conf = d / "slurm.conf"
        conf.write_text("\n".join([
            "ClusterName=convlabtest", f"SlurmctldHost={host}", "SlurmUser=root",
            f"SlurmctldPort={ports[0]}", f"SlurmdPort={ports[1]}", "AuthType=auth/munge",
            f"AuthInfo=socket={sock}", "CredType=cred/munge", f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool", f"SlurmctldPidFile={d}/slurmctld.pid",
            f"SlurmdPidFile={d}/slurmd.pid", f"SlurmctldLogFile={d}/slurmctld.log",
            f"SlurmdLogFile={d}/slurmd.log", "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none", "JobCompType=jobcomp/none",
            "SwitchType=switch/none", "MpiDefault=none", "ReturnToService=2",
            "SchedulerType=sched/builtin", "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU", f"NodeName={host} CPUs={os.cpu_count()} State=UNKNOWN",
            f"PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP", ""]))
        self.env = dict(os.environ, SLURM_CONF=str(conf))
        for daemon in (["/usr/sbin/slurmctld", "-i"], ["/usr/sbin/slurmd"]):
            subprocess.run(daemon, check=True, env=self.env)
        self.pid_files += [d / "slurmctld.pid", d / "slurmd.pid"]
        deadline = time.time() + 60
        while time.time() < deadline:
            state = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                                   env=self.env).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        self.fail(f"the node did not come up: {state!r}; see {d}/slurmd.log")

    def tearDown(self):
        if not hasattr(self, "pid_files"):
            return
        subprocess.run(["scancel", "--user", "root"], env=self.env, capture_output=True)
        for pid_file in reversed(self.pid_files):  # only the daemons this test started
            try:
                pid = int(pid_file.read_text().split()[0])
                os.kill(pid, signal.SIGTERM)
                for _ in range(100):
                    os.kill(pid, 0)
                    time.sleep(0.05)
            except (FileNotFoundError, ValueError, ProcessLookupError):
                pass
        self.tmp.cleanup()

    def test_array_job_and_merge(self):
        script = HERE.parent.parent / "bench" / "slurm" / "sweep.sbatch"
        results = self.dir / "results"
        sweep = f"--suite alexnet --mb 1 --algos {','.join(CPU_ALGOS)} --passes fwd,bwd_data " \
                "--reps 1 --warmup 0"
        env = dict(self.env, CONVBENCH=CONVBENCH, SWEEP=sweep, RESULTS=str(results))
        submit = subprocess.run(["sbatch", "--parsable", "--array=1-3", "--cpus-per-task=1",
                                 f"--chdir={self.dir}", str(script)],
                                capture_output=True, text=True, env=env, check=True)
        job = submit.stdout.strip().split(";")[0]
        merge = subprocess.run(["sbatch", "--parsable", f"--dependency=afterany:{job}",
                                f"--export=ALL,MERGE={job}", "--cpus-per-task=1",
                                f"--chdir={self.dir}", str(script)],
                               capture_output=True, text=True, env=env, check=True)
        merge_job = merge.stdout.strip().split(";")[0]
        deadline = time.time() + 240
        while time.time() < deadline:
            queue = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=env)
            if not queue.stdout.strip():
                break
            time.sleep(1)
        shards = sorted(results.glob(f"shard-{job}-*.csv"))
        self.assertEqual(len(shards), 3, list(self.dir.iterdir()))
        self.assertEqual(sorted(read_csv(s)[0]["shard"] for s in shards), ["1/3", "2/3", "3/3"])
        log = next(self.dir.glob(f"convbench-{merge_job}_*.log")).read_text()
        self.assertIn("0 duplicate, complete", log)
        whole = self.dir / "whole.csv"
        r = convbench("run", *sweep.split(), "--out", str(whole))
        self.assertEqual(r.returncode, 0, r.stderr)
        merged = read_csv(results / f"sweep-{job}.csv")[2]
        self.assertEqual(sorted(case_keys(merged)), sorted(case_keys(read_csv(whole)[2])))


def main():
    if CONVBENCH is None:
        sys.exit(__doc__)
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:], verbosity=2)


if __name__ == "__main__":
    main()
