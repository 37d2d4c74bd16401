#!/usr/bin/python3
"""docs/results.md and docs/answers.md are generated: results.md must be exactly what
bench/results/make_results.py writes from the committed CSVs (so no table or claim is edited
by hand, and every claim is the script's computation), and the helpers that turn rows into
claims follow the noise rule of `convbench compare`. Needs matplotlib for the figures
(exits 77, ctest: skipped, without it).

    test_results_docs.py [unittest arguments]
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
RESULTS = ROOT / "bench" / "results"
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(RESULTS))


def row(algorithm, t, lo, hi, descriptor="g1mb8ic4ih8iw8oc4oh8ow8kh3kw3sh1sw1ph1pw1dh0dw0",
        pass_name="fwd", layer="s:L", status="ok", total=100, workspace=10):
    return {"layer": layer, "descriptor": descriptor, "pass": pass_name, "algorithm": algorithm,
            "status": status, "time_ms": str(t), "time_ms_min": str(lo), "time_ms_max": str(hi),
            "total_bytes": str(total), "workspace_bytes": str(workspace), "cv": "0.1"}


class Generated(unittest.TestCase):
    def test_results_md_is_what_the_script_writes_from_the_committed_data(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "results.md")
            r = subprocess.run(["/usr/bin/python3", str(RESULTS / "make_results.py"), "--from",
                                str(RESULTS / "data"), "--out", str(out), "--img",
                                str(pathlib.Path(tmp, "img"))],
                               capture_output=True, text=True, timeout=280, cwd=ROOT)
            self.assertEqual(r.returncode, 0, r.stderr)
            committed = (ROOT / "docs" / "results.md").read_text()
            self.assertEqual(out.read_text(), committed,
                             "docs/results.md differs from make_results.py --from "
                             "bench/results/data: regenerate it, do not edit it")
            for image in pathlib.Path(tmp, "img").glob("*.png"):
                self.assertEqual(image.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")
                self.assertTrue((ROOT / "docs" / "img" / image.name).exists(), image.name)

    def test_vendor_ratios_md_is_what_the_script_writes_from_the_committed_data(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp, "vendor-ratios.md")
            r = subprocess.run(["/usr/bin/python3", str(RESULTS / "make_vendor_ratios.py"),
                                "--from", str(RESULTS / "data" / "vendor-ratios"), "--out",
                                str(out)], capture_output=True, text=True, timeout=120, cwd=ROOT)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(out.read_text(), (ROOT / "docs" / "vendor-ratios.md").read_text(),
                             "docs/vendor-ratios.md differs from make_vendor_ratios.py --from "
                             "bench/results/data/vendor-ratios: regenerate it, do not edit it")

    def test_answers_md_has_a_reproduce_and_a_limit_per_question(self):
        text = (ROOT / "docs" / "answers.md").read_text()
        sections = text.split("\n## ")[1:]
        self.assertGreaterEqual(len(sections), 4)
        for section in sections:
            self.assertIn("Reproduce", section, section.splitlines()[0])
            self.assertIn("Cannot yet answer", section, section.splitlines()[0])


class Claims(unittest.TestCase):
    def setUp(self):
        import results_tables
        self.t = results_tables

    def test_separated_needs_disjoint_ranges(self):
        self.assertEqual(self.t.separated(row("a", 10, 9, 11), row("b", 5, 4, 6)), 1)
        self.assertEqual(self.t.separated(row("a", 5, 4, 6), row("b", 10, 9, 11)), -1)
        self.assertEqual(self.t.separated(row("a", 10, 6, 11), row("b", 5, 4, 6.5)), 0)
        self.assertIsNone(self.t.separated(row("a", 1, 1, 1, status="error"), row("b", 1, 1, 1)))

    def test_ratio_is_marked_within_noise_when_ranges_overlap(self):
        text, value = self.t.speed_ratio(row("x", 5, 4, 6), row("cpu.onednn", 10, 9, 11))
        self.assertEqual((text, value), ("2.00×", 2.0))
        text, _ = self.t.speed_ratio(row("x", 9, 8, 12), row("cpu.onednn", 10, 9, 11))
        self.assertTrue(text.startswith("≈"))

    def test_fastest_names_the_algorithms_within_noise_of_it(self):
        group = {"a": row("a", 5, 4, 6), "b": row("b", 5.5, 5, 7), "c": row("c", 20, 19, 21)}
        self.assertEqual(self.t.fastest(group), "a (≈ b)")
        group["b"] = row("b", 8, 7, 9)
        self.assertEqual(self.t.fastest(group), "a")

    def test_crossover_is_where_fft_stays_ahead(self):
        def kh(k):
            return f"g1mb8ic4ih16iw16oc4oh{17 - k}ow{17 - k}kh{k}kw{k}sh1sw1ph0pw0dh0dw0"
        rows = []
        for k, im2col, fft in ((1, 5, 10), (3, 10, 9.5), (5, 20, 10), (7, 40, 10)):
            rows.append(row("cpu.im2col", im2col, im2col * 0.95, im2col * 1.05, kh(k),
                            total=10 * k))
            rows.append(row("cpu.fft", fft, fft * 0.95, fft * 1.05, kh(k), total=35))
            rows.append(row("cpu.onednn", 1, 1, 1, kh(k)))
        _, time_cross, mem_cross = self.t.crossover_table(rows)
        self.assertEqual(time_cross, 5)  # at kh 3 the ranges overlap: no claim there
        self.assertEqual(mem_cross, 5)   # 35 < 50 from kh 5 on

    def test_prediction_holds_out_the_whole_layer(self):
        import make_prediction
        points = [("L1 fwd", 10.0, 20.0), ("L1 bwd", 10.0, 20.0), ("L2 fwd", 10.0, 40.0),
                  ("L3 fwd", 10.0, 80.0)]
        held = {key: (point, low, high) for key, _, _, point, low, high in
                make_prediction.leave_one_out(points)}
        # L1 from L2 and L3 only (efficiencies 0.25 and 0.125), never from its twin.
        self.assertAlmostEqual(held["L1 fwd"][1], 40.0)
        self.assertAlmostEqual(held["L1 fwd"][2], 80.0)
        self.assertAlmostEqual(held["L1 fwd"][0], 10.0 / 0.1875)
        doc = (ROOT / "docs" / "prediction.md").read_text()
        self.assertIn(make_prediction.BEGIN, doc)
        self.assertIn(make_prediction.END, doc)

    def test_vendor_ratios_count_the_medians_at_the_target(self):
        import json
        import make_vendor_ratios as v
        layer = "g1mb16ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0"
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp, "cpu-f6m1", "threads-1")
            folder.mkdir(parents=True)
            runs = {}
            # Run 1: im2col at 10 against 9.5 (0.95), run 2 at 10 against 8 (0.80); Winograd
            # 0.85 twice.
            for run, direct in ((1, 9.5), (2, 8.0)):
                lines = ["# git_commit: abc", "descriptor,pass,algorithm,status,time_ms,total_bytes"]
                for algo, t in (("cpu.im2col", 10), ("cpu.onednn.direct", direct),
                                ("cpu.winograd", 10), ("cpu.onednn.winograd", 8.5)):
                    lines.append(f"{layer},fwd,{algo},ok,{t},1")
                pathlib.Path(folder, f"run-{run}.csv").write_text("\n".join(lines) + "\n")
                runs[str(run)] = {"command": "c", "load_before": [0.5], "load_after": [0.7]}
            machine = {"machine": {"cpu": "CPU", "logical_cpus": 2, "isa": ["avx2"]},
                       "environment": {"CONVLAB_NUM_THREADS": "1"}, "cpus_used": [1],
                       "runs": runs}
            pathlib.Path(folder, "machine.json").write_text(json.dumps(machine))
            text = v.document(pathlib.Path(tmp))
        self.assertIn("\n## CPU (family ?, model ?), 2 logical CPUs\n", text)
        self.assertIn("| ic64ih56 | 2.4 % | fwd | 10.0/10.0 | 9.5/8.0 | 0.95/**0.80** |", text)
        self.assertIn("at or above 0.9 in 1 of 2 medians", text)
        self.assertIn("at or above 0.8 in 2 of 2 medians", text)
        # A layer and pass where cpu.im2col ran its tap classes says so beside the padding.
        with tempfile.TemporaryDirectory() as tmp:
            folder = pathlib.Path(tmp, "cpu-f6m1", "threads-1")
            folder.mkdir(parents=True)
            lines = ["# git_commit: abc",
                     "descriptor,pass,algorithm,status,time_ms,total_bytes,plan_details"]
            for pas, details in (("fwd", "taps=in_image;isa=avx512"),
                                 ("bwd_filter", "taps=all;isa=avx512")):
                lines.append(f"{layer},{pas},cpu.im2col,ok,10,1,{details}")
                lines.append(f"{layer},{pas},cpu.onednn.direct,ok,9,1,")
            pathlib.Path(folder, "run-1.csv").write_text("\n".join(lines) + "\n")
            machine["runs"] = {"1": runs["1"]}
            pathlib.Path(folder, "machine.json").write_text(json.dumps(machine))
            text = v.document(pathlib.Path(tmp))
        self.assertIn("| ic64ih56 | 2.4 %, skipped | fwd | 10.0 | 9.0 | 0.90 |", text)
        self.assertIn("| ic64ih56 | 2.4 % | bwd_filter | 10.0 | 9.0 | 0.90 |", text)

    def test_vendor_ratios_keep_each_machine_apart(self):
        import make_vendor_ratios as v
        self.assertEqual(v.machine_folder({"cpu": "Intel(R) Xeon(R) Processor", "cpu_family": 6,
                                           "cpu_model": 207}), "intel-xeon-processor-f6m207")
        self.assertEqual(v.machine_folder({"cpu": "AMD EPYC", "cpu_family": 25,
                                           "cpu_model": 17}), "amd-epyc-f25m17")

    def test_vendor_ratios_name_a_machine_the_table_does_not_know_by_its_caches(self):
        import json
        import make_vendor_ratios as v
        machine = {"cpu": "Intel(R) Xeon(R) Processor", "cpu_family": 6, "cpu_model": 167,
                   "logical_cpus": 2, "caches": "L1d 48 KiB, L2 2 MiB, L3 480 MiB (2 CPUs)"}
        with tempfile.TemporaryDirectory() as tmp:
            (pathlib.Path(tmp) / "machine.json").write_text(json.dumps({"machine": machine}))
            self.assertEqual(v.machine_heading(pathlib.Path(tmp)),
                             "## Intel(R) Xeon(R) Processor (family 6, model 167; caches L1d "
                             "48 KiB, L2 2 MiB, L3 480 MiB (2 CPUs)), 2 logical CPUs\n")
            (pathlib.Path(tmp) / "machine.json").write_text(
                json.dumps({"machine": {**machine, "cpu_model": 207}}))
            self.assertIn("(Emerald Rapids", v.machine_heading(pathlib.Path(tmp)))

    def test_machine_record_writes_cache_sizes_in_binary_units(self):
        import make_results as r
        self.assertEqual(r.binary_size("48K"), "48 KiB")
        self.assertEqual(r.binary_size("2048K"), "2 MiB")
        self.assertEqual(r.binary_size("491520K"), "480 MiB")
        self.assertEqual(r.binary_size("1280K"), "1280 KiB")
        self.assertEqual(r.binary_size("2M"), "2M")

    def test_vendor_ratios_show_a_near_miss_with_the_digit_that_makes_it_one(self):
        import make_vendor_ratios as v
        self.assertEqual(v.shown_speed(0.8996, 0.9), "**0.8996**")
        self.assertEqual(v.shown_speed(0.8951, 0.9), "**0.895**")
        self.assertEqual(v.shown_speed(0.884, 0.9), "**0.88**")
        self.assertEqual(v.shown_speed(0.9004, 0.9), "0.90")

    def test_vendor_ratios_share_of_taps_in_the_padding(self):
        import make_vendor_ratios as v
        # 56x56, 3x3, pad 1: per axis 2 of 168 taps read the padding; 1 - (166/168)^2.
        share = v.padding_share("g1mb16ic64ih56iw56oc64oh56ow56kh3kw3sh1sw1ph1pw1dh0dw0")
        self.assertAlmostEqual(share, 1 - (166 / 168) ** 2)
        # 7x7: 2 of 21 per axis. 5x5 with pad 2 on 27x27: 2+1+1+2 = 6 of 135 per axis.
        self.assertAlmostEqual(v.padding_share("g1mb1ic8ih7iw7oc8oh7ow7kh3kw3sh1sw1ph1pw1dh0dw0"),
                               1 - (19 / 21) ** 2)
        self.assertAlmostEqual(
            v.padding_share('g2mb16ic96ih27iw27oc256oh27ow27kh5kw5sh1sw1ph2pw2dh0dw0n"c2"'),
            1 - (129 / 135) ** 2)
        # No padding, strided: none.
        self.assertEqual(
            v.padding_share("g1mb1ic3ih227iw227oc96oh55ow55kh11kw11sh4sw4ph0pw0dh0dw0"), 0)
        self.assertEqual(v.layer_set("vgg16:conv1_1"), 1)
        self.assertEqual(v.layer_set("resnet50:res2a_branch2b"), 0)
        self.assertEqual(v.layer_set("ic64ih56"), 0)

    def test_answers_ranks_share_ties(self):
        import make_answers
        self.assertEqual(make_answers.ranks([3, 1, 3, 2]), [3.5, 1, 3.5, 2])

    def test_answers_memory_ratios_cover_the_layers_both_plan(self):
        import make_answers as a

        def row(layer, algorithm, workspace, total):
            return {"layer": layer, "pass": "fwd", "algorithm": algorithm,
                    "workspace_bytes": workspace, "total_bytes": total}
        report = {"layers": [row("n:a", "cpu.im2col", 100, 1000),
                             row("n:a", "cpu.winograd", 400, 2000),
                             row("n:b", "cpu.im2col", 0, 500),
                             row("n:b", "cpu.winograd", 2**30, 1500),
                             row("n:c", "cpu.im2col", 10, 100),
                             row("n:c", "cpu.winograd", None, None)],  # refused
                  "networks": [{"algorithm": "cpu.im2col", "source": "plan"},
                               {"algorithm": "cpu.winograd", "source": "incomplete"}]}
        ratios = a.over_im2col(report, "cpu.winograd")
        self.assertEqual(ratios, [(2.0, 4.0, 400, "n:a", "fwd"), (3.0, None, 2**30, "n:b", "fwd")])
        # Median and max of the totals, the workspace median over the layers where im2col
        # needs one, the largest workspace in GiB.
        self.assertEqual(a.ratio_cells(ratios), "2 | 2.5× | 3.0× (b, fwd) | 4.0× | 1.00 GiB")
        self.assertEqual(a.ratio_cells([]), "0 | — | — | — | —")
        # An equal total ratio with im2col's workspace 0 beside one with a workspace: the
        # later layer name is the max, and no None is compared.
        tied = [(2.0, None, 1, "n:z", "fwd"), (2.0, 3.0, 1, "n:a", "fwd")]
        self.assertEqual(a.ratio_cells(tied), "2 | 2.0× | 2.0× (z, fwd) | 3.0× | 0.00 GiB")
        nets, partial = a.trained_networks(report)
        self.assertEqual([n["algorithm"] for n in nets], ["cpu.im2col"])
        self.assertEqual(partial, ["cpu.winograd"])


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skipped: no matplotlib for /usr/bin/python3 (python3-matplotlib)")
        sys.exit(77)
    unittest.main()
