#!/usr/bin/python3
"""Figures from a convbench sweep CSV, for reading and for papers.

    bench/plot_sweep.py results.csv -o sweep.png                       # time + memory per layer
    bench/plot_sweep.py results.csv -o speedup.svg --kind speedup --baseline cpu.onednn
    bench/plot_sweep.py results.csv -o frontier.svg --kind frontier --pass fwd
    bench/plot_sweep.py vary.csv -o crossover.svg                      # a --vary sweep

Kinds (--kind; default: crossover for a --vary sweep, else time):
  time      per pass, the median time per layer and algorithm with min-max error bars, and
            the memory (tensors + workspace); over_budget cases show their memory hatched
  crossover time (with min-max error bars) and memory against the varied parameter, one
            line per algorithm (and per value of any other varied parameter)
  speedup   the baseline's median time over each algorithm's, per layer and pass; the error
            bar is the widest ratio the two ranges allow (baseline max / algorithm min ...)
  frontier  one panel per layer: time against workspace, one point per algorithm, with the
            Pareto frontier (the points no other point beats on both) joined by a line

Every figure is titled with the suites, the layers (their descriptors when few), the device
and CPU, the threads and the commit, all read from the CSV's metadata. The format follows
the output's suffix: .png, .svg (text kept as text) or .pdf; -o may be repeated. Cases that
did not run have no time. Rows of --select are not drawn.

Uses matplotlib's Agg backend (no display) from Debian: run it with /usr/bin/python3.
"""

import argparse
import csv
import math
import re
import sys
import textwrap
from collections import OrderedDict, defaultdict

PASSES = ["fwd", "bwd_data", "bwd_filter"]
REQUIRED = ["descriptor", "pass", "algorithm", "status", "time_ms", "total_bytes"]
KINDS = ["time", "crossover", "speedup", "frontier"]


def read_rows(path):
    """The metadata ('# key: value' lines) and the rows of a convbench CSV file."""
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"plot_sweep: cannot read {path}: {e.strerror}")
    return parse_rows(text, path)


def parse_rows(text, path="<text>"):
    """The metadata and the rows of a convbench CSV's text; rows of --select left out."""
    lines = text.splitlines(keepends=True)
    meta = {}
    for line in lines:
        if line.startswith("# "):
            key, _, value = line[2:].rstrip("\r\n").partition(": ")
            meta[key] = value
    reader = csv.DictReader([line for line in lines if not line.startswith("#")])
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        sys.exit(f"plot_sweep: {path} is not a convbench CSV: no column {', '.join(missing)}")
    rows = list(reader)
    if not rows:
        sys.exit(f"plot_sweep: {path} has no rows")
    return meta, [r for r in rows if r["algorithm"] != "select"]


def number(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def timing(row):
    """(median, min, max) in ms of an ok row, else None; min/max default to the median."""
    t = number(row.get("time_ms")) if row.get("status") == "ok" else None
    if t is None:
        return None
    lo, hi = number(row.get("time_ms_min")), number(row.get("time_ms_max"))
    return t, (lo if lo is not None else t), (hi if hi is not None else t)


def descriptor_fields(descriptor):
    """benchdnn keys and values of a descriptor, e.g. {'mb': 2, 'ic': 3, 'kh': 11, ...}."""
    text = re.sub(r'n"[^"]*"$', "", descriptor)
    return {k: int(v) for k, v in re.findall(r"([a-z]+)(\d+)", text)}


def varied_fields(meta):
    """The fields of a --vary sweep, from its metadata ("kh=3:15:2; ih=16:256:*2")."""
    return [part.strip().partition("=")[0] for part in meta.get("vary", "").split(";")
            if part.strip()]


def layer_label(row):
    name = row.get("layer") or ""
    if name:
        return name.split(":")[-1] if ":" in name else name
    f = descriptor_fields(row["descriptor"])
    return "ic{ic} {ih}x{iw} oc{oc} k{kh}x{kw} s{sh}".format(
        **{k: f.get(k, "?") for k in ("ic", "ih", "iw", "oc", "kh", "kw", "sh")})


def mib(value):
    return None if value is None else value / 2**20


def figure_title(meta, rows, what):
    """What is drawn, of which suites and layers; then device, CPU, threads and commit."""
    suites = list(OrderedDict.fromkeys(r.get("suite") or "--shape" for r in rows))
    layers = list(OrderedDict.fromkeys(r["descriptor"] for r in rows))
    mbs = sorted({descriptor_fields(d).get("mb") for d in layers} - {None})
    named = list(OrderedDict.fromkeys(layer_label(r) for r in rows))
    if len(layers) == 1:
        shapes = layers[0]
    elif len(named) <= 6:
        shapes = ", ".join(named) + f"; mb {'/'.join(map(str, mbs))}"
    else:
        shapes = f"{len(layers)} layers, mb {'/'.join(map(str, mbs))}"
    vary = f"; vary {meta['vary']}" if meta.get("vary") else ""
    device = meta.get("devices") or "device unknown"
    cpu = meta.get("cpu", "CPU unknown")
    where = device if (not device.startswith("cpu") or cpu in device) else f"{device} on {cpu}"
    threads = "" if "thread" in where else f", {meta.get('threads', '?')} threads"
    first = f"{what}: {', '.join(suites)} ({shapes}{vary})"
    second = (f"{where}{threads}, commit {meta.get('git_commit', 'unknown')}"
              f"{', ' + meta['date'] if meta.get('date') else ''}")
    return "\n".join(textwrap.wrap(first, 110) + [second])


def passes_of(rows, only):
    passes = [p for p in PASSES if any(r["pass"] == p for r in rows)]
    if only:
        if only not in passes:
            sys.exit(f"plot_sweep: --pass {only}: the sweep has {', '.join(passes)}")
        return [only]
    return passes


def layers_of(rows):
    """(suite, descriptor) in first-seen order, and a label for each."""
    layers = list(OrderedDict.fromkeys((r.get("suite", ""), r["descriptor"]) for r in rows))
    labels = {}
    for r in rows:
        labels.setdefault((r.get("suite", ""), r["descriptor"]), layer_label(r))
    return layers, labels


def error_bar(ax, xs, points, gid, **style):
    """Median markers with min-max bars; `points` are timing() triples."""
    ys = [p[0] for p in points]
    err = [[p[0] - p[1] for p in points], [p[2] - p[0] for p in points]]
    return ax.errorbar(xs, ys, yerr=err, capsize=2, gid=gid, **style)


def per_layer(args, meta, rows, plt):
    passes = passes_of(rows, args.pass_name)
    algorithms = list(OrderedDict.fromkeys(r["algorithm"] for r in rows))
    layers, labels = layers_of(rows)
    width = 0.8 / max(len(algorithms), 1)
    fig, axes = plt.subplots(len(passes), 2, squeeze=False,
                             figsize=(max(8, 0.55 * len(layers) * 2 + 4), 3.6 * len(passes)))
    cmap = plt.get_cmap("tab10")
    for row_index, pass_name in enumerate(passes):
        ax_time, ax_mem = axes[row_index]
        cases = {(r.get("suite", ""), r["descriptor"], r["algorithm"]): r
                 for r in rows if r["pass"] == pass_name}
        for a_index, algorithm in enumerate(algorithms):
            color = cmap(a_index % 10)
            xs, points = [], []
            for l_index, layer in enumerate(layers):
                r = cases.get((layer[0], layer[1], algorithm))
                if r is None:
                    continue
                x = l_index + (a_index - (len(algorithms) - 1) / 2) * width
                m = mib(number(r["total_bytes"]))
                if m:
                    hatched = r["status"] == "over_budget"
                    ax_mem.bar([x], [m], width, color=color, hatch="//" if hatched else None,
                               edgecolor="black" if hatched else color)
                if timing(r):
                    xs.append(x)
                    points.append(timing(r))
            ax_time.bar(xs, [p[0] for p in points], width, label=algorithm, color=color)
            if xs:
                error_bar(ax_time, xs, points, f"errorbar:{pass_name}:{algorithm}", fmt="none",
                          ecolor="black", elinewidth=0.8)
        for ax, title, unit in ((ax_time, "time", "ms (median, min-max; log)"),
                                (ax_mem, "memory: tensors + workspace", "MiB (log)")):
            ax.set_yscale("log")
            ax.set_title(f"{pass_name}: {title}")
            ax.set_ylabel(unit)
            ax.set_xticks(range(len(layers)))
            ax.set_xticklabels([labels[layer] for layer in layers], rotation=60, ha="right",
                               fontsize=8)
            ax.grid(axis="y", which="both", alpha=0.3)
        ax_time.legend(fontsize=8)
        if any(r["status"] == "over_budget" for r in rows if r["pass"] == pass_name):
            ax_mem.text(0.01, 0.97, "hatched: over budget (not run)", transform=ax_mem.transAxes,
                        fontsize=8, va="top")
    return fig, "time and memory per layer"


def crossover(args, meta, rows, plt):
    varied = varied_fields(meta) or [args.x]
    if args.x and args.x not in varied:
        sys.exit(f"plot_sweep: --x {args.x}: the sweep varied {', '.join(varied)}")
    x_field = args.x or varied[0]
    if not x_field:
        sys.exit("plot_sweep: --kind crossover needs a --vary sweep or --x FIELD")

    def x_of(r):
        return descriptor_fields(r["descriptor"]).get(x_field)

    def series_of(r):
        fields = descriptor_fields(r["descriptor"])
        others = [f"{k}={fields.get(k)}" for k in varied if k != x_field]
        return " ".join([r["algorithm"]] + others)

    passes = passes_of(rows, args.pass_name)
    fig, axes = plt.subplots(len(passes), 2, squeeze=False, figsize=(12, 3.8 * len(passes)))
    for row_index, pass_name in enumerate(passes):
        ax_time, ax_mem = axes[row_index]
        series = defaultdict(list)
        for r in rows:
            if r["pass"] == pass_name and x_of(r) is not None:
                series[series_of(r)].append(r)
        for name, points in series.items():
            points.sort(key=x_of)
            ok = [p for p in points if timing(p)]
            bars = error_bar(ax_time, [x_of(p) for p in ok], [timing(p) for p in ok],
                             f"errorbar:{pass_name}:{name}", marker="o", label=name)
            color = bars.lines[0].get_color()
            mem = [p for p in points if number(p["total_bytes"])]
            ax_mem.plot([x_of(p) for p in mem], [mib(number(p["total_bytes"])) for p in mem],
                        marker="o", color=color, label=name)
        for ax, title, unit in ((ax_time, "time", "ms (median, min-max; log)"),
                                (ax_mem, "memory: tensors + workspace", "MiB (log)")):
            ax.set_yscale("log")
            ax.set_xlabel(x_field)
            ax.set_ylabel(unit)
            ax.set_title(f"{pass_name}: {title} against {x_field}")
            ax.grid(which="both", alpha=0.3)
        ax_time.legend(fontsize=8)
    return fig, f"time and memory against {x_field}"


def speedup(args, meta, rows, plt):
    baseline = args.baseline
    algorithms = list(OrderedDict.fromkeys(r["algorithm"] for r in rows))
    if baseline not in algorithms:
        sys.exit(f"plot_sweep: --baseline {baseline}: the sweep has {', '.join(algorithms)}")
    others = [a for a in algorithms if a != baseline]
    passes = passes_of(rows, args.pass_name)
    layers, labels = layers_of(rows)
    width = 0.8 / max(len(others), 1)
    fig, axes = plt.subplots(len(passes), 1, squeeze=False,
                             figsize=(max(8, 0.45 * len(layers) * len(others) + 4),
                                      3.4 * len(passes)))
    cmap = plt.get_cmap("tab10")
    for row_index, pass_name in enumerate(passes):
        ax = axes[row_index][0]
        cases = {(r.get("suite", ""), r["descriptor"], r["algorithm"]): r
                 for r in rows if r["pass"] == pass_name}
        for a_index, algorithm in enumerate(others):
            xs, points = [], []
            for l_index, layer in enumerate(layers):
                base = cases.get((layer[0], layer[1], baseline))
                mine = cases.get((layer[0], layer[1], algorithm))
                if not (base and mine and timing(base) and timing(mine)):
                    continue
                (b, b_lo, b_hi), (t, t_lo, t_hi) = timing(base), timing(mine)
                xs.append(l_index + (a_index - (len(others) - 1) / 2) * width)
                points.append((b / t, b_lo / t_hi, b_hi / t_lo))
            color = cmap((algorithms.index(algorithm)) % 10)
            ax.bar(xs, [p[0] for p in points], width, label=algorithm, color=color)
            if xs:
                error_bar(ax, xs, points, f"errorbar:{pass_name}:{algorithm}", fmt="none",
                          ecolor="black", elinewidth=0.8)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_title(f"{pass_name}: speed-up over {baseline}")
        ax.set_ylabel(f"{baseline} time / time (log)")
        ax.set_xticks(range(len(layers)))
        ax.set_xticklabels([labels[layer] for layer in layers], rotation=60, ha="right",
                           fontsize=8)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return fig, f"speed-up over {baseline}"


def pareto(points):
    """The points (workspace, time, ...) that no other point beats on both, by workspace."""
    front = []
    for p in sorted(points, key=lambda p: (p[0], p[1])):
        if not front or p[1] < front[-1][1]:
            front.append(p)
    return front


def plain_ticks(ax):
    """Major ticks as plain numbers (1, 0.5, 200), no minor labels: log axes spanning less
    than a decade otherwise print labels like 2.46e-1 at every minor tick."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def frontier(args, meta, rows, plt):
    passes = passes_of(rows, args.pass_name)
    layers, labels = layers_of(rows)
    algorithms = list(OrderedDict.fromkeys(r["algorithm"] for r in rows))
    cmap = plt.get_cmap("tab10")
    columns = min(4, len(layers))
    panel_rows = math.ceil(len(layers) / columns) * len(passes)
    fig, axes = plt.subplots(panel_rows, columns, squeeze=False,
                             figsize=(3.6 * columns, 3.2 * panel_rows))
    for ax in axes.flat:
        ax.set_visible(False)
    for p_index, pass_name in enumerate(passes):
        for l_index, layer in enumerate(layers):
            row_index = p_index * math.ceil(len(layers) / columns) + l_index // columns
            ax = axes[row_index][l_index % columns]
            ax.set_visible(True)
            points = []
            for r in rows:
                if (r.get("suite", ""), r["descriptor"]) != layer or r["pass"] != pass_name:
                    continue
                ws = number(r.get("workspace_bytes"))
                if timing(r) and ws is not None:
                    points.append((mib(ws), *timing(r), r["algorithm"]))
            for ws, t, lo, hi, algorithm in points:
                error_bar(ax, [ws], [(t, lo, hi)], f"point:{pass_name}:{algorithm}",
                          marker="o", linestyle="none",
                          color=cmap(algorithms.index(algorithm) % 10), label=algorithm)
            front = pareto(points)
            if len(front) > 1:
                ax.plot([p[0] for p in front], [p[1] for p in front], color="gray",
                        linestyle="--", linewidth=0.8, gid=f"frontier:{pass_name}")
            ax.set_yscale("log")
            # Linear from 0: workspace can be 0 (1x1 shortcuts), and the distance between
            # strategies in bytes is what a memory budget sees.
            ax.set_xlim(left=0, right=max([p[0] for p in points] + [1e-3]) * 1.08)
            plain_ticks(ax)
            ax.set_title(f"{labels[layer]} {pass_name}", fontsize=9)
            ax.set_xlabel("workspace MiB", fontsize=8)
            ax.set_ylabel("ms (median, min-max)", fontsize=8)
            ax.grid(which="both", alpha=0.3)
            ax.legend(fontsize=7)
    return fig, "memory/speed frontier (time vs workspace, dashed: Pareto frontier)"


def render(args):
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text, editable in papers
    import matplotlib.pyplot as plt

    meta, rows = read_rows(args.csv)
    kind = args.kind or ("crossover" if varied_fields(meta) or args.x else "time")
    if kind == "speedup" and not args.baseline:
        sys.exit("plot_sweep: --kind speedup needs --baseline ALGO")
    draw = {"time": per_layer, "crossover": crossover, "speedup": speedup,
            "frontier": frontier}[kind]
    fig, what = draw(args, meta, rows, plt)
    fig.suptitle(args.title or figure_title(meta, rows, what), fontsize=10)
    fig.tight_layout()
    for output in args.output:
        try:
            fig.savefig(output, dpi=args.dpi)
        except (OSError, ValueError) as e:
            sys.exit(f"plot_sweep: cannot write {output}: {getattr(e, 'strerror', None) or e}")
        print(f"wrote {output}")
    plt.close(fig)


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("csv", help="a convbench run CSV (--out FILE.csv)")
    p.add_argument("-o", "--output", action="append",
                   help="image to write, .png/.svg/.pdf by suffix (repeatable; default "
                        "sweep.png)")
    p.add_argument("--kind", choices=KINDS, help="what to draw (default: crossover for a "
                   "--vary sweep, else time)")
    p.add_argument("--baseline", metavar="ALGO", help="--kind speedup: the algorithm to divide by")
    p.add_argument("--pass", dest="pass_name", choices=PASSES, help="draw one pass only")
    p.add_argument("--x", metavar="FIELD", help="the varied parameter to draw against (kh, ih)")
    p.add_argument("--title", help="figure title (default: from the CSV's metadata)")
    p.add_argument("--dpi", type=int, default=110, help="PNG resolution")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    args.output = args.output or ["sweep.png"]
    render(args)


if __name__ == "__main__":
    main()
