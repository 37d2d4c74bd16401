#!/usr/bin/python3
"""bench/plot_sweep.py: each kind of figure rendered from a small CSV written here, checked as
an image (PNG structure and content, SVG parsed for its title, axis labels, legend and the
error bars and frontier drawn). Needs matplotlib (python3-matplotlib); exits 77 (ctest: skipped)
without it.

    test_plot_sweep.py [unittest arguments]
"""
import pathlib
import struct
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = pathlib.Path(__file__).resolve().parent
PLOT = HERE.parent.parent / "bench" / "plot_sweep.py"
sys.path.insert(0, str(PLOT.parent))

META = {"git_commit": "abc123def456", "date": "2026-01-02T03:04:05Z", "cpu": "Test CPU 9000",
        "threads": "2", "devices": "cpu (2 threads)"}
HEADER = ("suite,layer,descriptor,pass,algorithm,device,status,reason,plan_ms,time_ms,"
          "time_ms_min,time_ms_max,reps,cv,gflops,workspace_bytes,total_bytes,max_abs_err,"
          "max_rel_err")
SVG = "{http://www.w3.org/2000/svg}"


def row(layer, descriptor, pass_name, algorithm, t, lo, hi, workspace, status="ok"):
    times = (t, lo, hi) if status == "ok" else ("", "", "")
    return ",".join(map(str, ["tsuite", f"tsuite:{layer}", descriptor, pass_name, algorithm,
                              "cpu", status, "" if status == "ok" else "not here", 1,
                              *times, 5, 0.01, 1, workspace, workspace + 4096, "", ""]))


def sweep_csv(path, vary=None):
    lines = [f"# {k}: {v}" for k, v in META.items()]
    body = []
    if vary:
        lines.append(f"# vary: {vary}")
        for kh in (1, 3, 5):
            d = f"g1mb2ic4ih16iw16oc4oh{17 - kh}ow{17 - kh}kh{kh}kw{kh}sh1sw1ph0pw0dh0dw0"
            body.append(row(f"kh={kh}", d, "fwd", "algo.slow", 10 * kh, 9 * kh, 11 * kh, 2**20))
            body.append(row(f"kh={kh}", d, "fwd", "algo.fast", 5, 4, 6, 3 * 2**20))
    else:
        for layer, d in (("L1", "g1mb2ic4ih16iw16oc4oh16ow16kh3kw3sh1sw1ph1pw1dh0dw0"),
                         ("L2", "g1mb2ic8ih8iw8oc8oh8ow8kh5kw5sh1sw1ph2pw2dh0dw0")):
            for pass_name in ("fwd", "bwd_data"):
                body.append(row(layer, d, pass_name, "algo.base", 20, 18, 25, 2**20))
                body.append(row(layer, d, pass_name, "algo.fast", 10, 9, 12, 4 * 2**20))
                body.append(row(layer, d, pass_name, "algo.lean", 30, 28, 33, 0))
                body.append(row(layer, d, pass_name, "algo.none", 0, 0, 0, 0,
                                status="unsupported"))
    path.write_text("\n".join(lines + [HEADER] + body) + "\n")


def plot(*args):
    return subprocess.run(["/usr/bin/python3", str(PLOT), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def svg_texts(path):
    root = ET.parse(path).getroot()
    return [" ".join(t.itertext()) for t in root.iter(SVG + "text")], root


def svg_ids(root):
    return [g.get("id", "") for g in root.iter(SVG + "g")]


def check_png(test, path):
    data = path.read_bytes()
    test.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
    length, kind = struct.unpack(">I4s", data[8:16])
    test.assertEqual(kind, b"IHDR")
    width, height = struct.unpack(">II", data[16:24])
    test.assertGreater(width, 300)
    test.assertGreater(height, 200)
    test.assertEqual(data[-8:-4], b"IEND")
    import matplotlib.image
    pixels = matplotlib.image.imread(str(path))
    test.assertGreater(pixels.std(), 0.05, "the image is not blank")


class Kinds(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        self.csv = self.dir / "sweep.csv"
        sweep_csv(self.csv)

    def tearDown(self):
        self.tmp.cleanup()

    def render(self, *args, csv=None):
        svg, png = self.dir / "f.svg", self.dir / "f.png"
        r = plot(csv or self.csv, "-o", svg, "-o", png, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        check_png(self, png)
        texts, root = svg_texts(svg)
        # The title's two lines are two text elements, first the layers, then the machine.
        first = next(i for i, t in enumerate(texts) if "commit" in t) - 1
        title = texts[first] + "\n" + texts[first + 1]
        for part in ("abc123def456", "Test CPU 9000", "tsuite (", "2026-01-02"):
            self.assertIn(part, title)
        return texts, svg_ids(root)

    def test_time_has_error_bars_per_algorithm_and_memory_panels(self):
        texts, ids = self.render("--kind", "time")
        self.assertIn("ms (median, min-max; log)", texts)
        self.assertIn("MiB (log)", texts)
        self.assertIn("fwd: time", texts)
        self.assertIn("bwd_data: memory: tensors + workspace", texts)
        for algorithm in ("algo.base", "algo.fast", "algo.lean"):
            self.assertIn(algorithm, texts)
            self.assertIn(f"errorbar:fwd:{algorithm}", ids)
        # An unsupported algorithm has no time, so no error bar.
        self.assertNotIn("errorbar:fwd:algo.none", ids)
        self.assertIn("L1", texts)

    def test_speedup_against_a_baseline(self):
        texts, ids = self.render("--kind", "speedup", "--baseline", "algo.base")
        self.assertIn("fwd: speed-up over algo.base", texts)
        self.assertIn("algo.base time / time (log)", texts)
        self.assertIn("errorbar:bwd_data:algo.fast", ids)
        self.assertNotIn("errorbar:fwd:algo.base", ids)
        r = plot(self.csv, "-o", self.dir / "x.png", "--kind", "speedup", "--baseline", "nope")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("--baseline nope", r.stderr)

    def test_frontier_one_point_per_algorithm_and_the_pareto_line(self):
        texts, ids = self.render("--kind", "frontier", "--pass", "fwd")
        self.assertIn("workspace MiB", texts)
        self.assertIn("L2 fwd", texts)
        self.assertNotIn("L2 bwd_data", texts)
        # Per layer: base, fast and lean are all on the frontier (lean: least memory, fast:
        # least time, base between on both), so each panel draws one frontier line.
        self.assertEqual(ids.count("frontier:fwd"), 2)
        self.assertIn("point:fwd:algo.fast", ids)
        self.assertIn("point:fwd:algo.lean", ids)
        self.assertNotIn("point:bwd_data:algo.fast", ids)

    def test_crossover_from_a_vary_sweep(self):
        vary = self.dir / "vary.csv"
        sweep_csv(vary, vary="kh=1:5:2")
        texts, ids = self.render(csv=vary)
        self.assertIn("fwd: time against kh", texts)
        self.assertIn("kh", texts)
        self.assertIn("errorbar:fwd:algo.slow", ids)
        self.assertIn("vary kh=1:5:2", " ".join(texts))

    def test_bad_inputs_are_named(self):
        r = plot(self.dir / "missing.csv", "-o", self.dir / "x.png")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("missing.csv", r.stderr)
        r = plot(self.csv, "-o", self.dir / "x.png", "--kind", "speedup")
        self.assertIn("needs --baseline", r.stderr)
        r = plot(self.csv, "-o", self.dir / "x.png", "--pass", "bwd_filter")
        self.assertIn("--pass bwd_filter", r.stderr)


class Helpers(unittest.TestCase):
    def test_pareto_keeps_what_nothing_beats_on_both(self):
        import plot_sweep
        points = [(0, 30), (1, 20), (2, 25), (4, 10), (5, 10)]
        self.assertEqual(plot_sweep.pareto(points), [(0, 30), (1, 20), (4, 10)])

    def test_timing_defaults_and_statuses(self):
        import plot_sweep
        self.assertEqual(plot_sweep.timing({"status": "ok", "time_ms": "2", "time_ms_min": "1",
                                            "time_ms_max": "3"}), (2, 1, 3))
        self.assertEqual(plot_sweep.timing({"status": "ok", "time_ms": "2"}), (2, 2, 2))
        self.assertIsNone(plot_sweep.timing({"status": "error", "time_ms": "2"}))


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("skipped: no matplotlib for /usr/bin/python3 (python3-matplotlib)")
        sys.exit(77)
    unittest.main()
