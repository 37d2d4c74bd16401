#!/usr/bin/python3
"""Turn a convbench sweep CSV into a PNG.

    bench/plot_sweep.py results.csv -o sweep.png

One row of panels per pass. Left: time per layer per algorithm (log scale); right: memory
(total_bytes: tensors + workspace) per layer per algorithm. Cases that did not run (status
unsupported, over_budget, error) have no time; over_budget cases still show their memory,
hatched, so the reason they were skipped is visible.

For a --vary sweep (its metadata has a line "# vary: kh=3:15:2"), time and memory are drawn
against the varied parameter instead, one line per algorithm (and per value of any other
varied parameter); each point's value is read from its descriptor. --x FIELD picks the
parameter when several were varied, or draws any sweep against a descriptor field.
Rows of --select (algorithm "select") are not drawn.

Uses matplotlib from Debian (python3-matplotlib): run it with /usr/bin/python3.
"""

import argparse
import csv
import math
import re
import sys
from collections import OrderedDict, defaultdict

PASSES = ["fwd", "bwd_data", "bwd_filter"]
REQUIRED = ["descriptor", "pass", "algorithm", "status", "time_ms", "total_bytes"]


def read_rows(path):
    """The metadata ('# key: value' lines) and the rows of a convbench CSV."""
    try:
        with open(path, newline="") as f:
            lines = f.readlines()
    except OSError as e:
        sys.exit(f"plot_sweep: cannot read {path}: {e.strerror}")
    meta = {}
    for line in lines:
        if line.startswith("# "):
            key, _, value = line[2:].rstrip("\n").partition(": ")
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


def per_layer(args, rows, plt):
    passes = [p for p in PASSES if any(r["pass"] == p for r in rows)]
    algorithms = list(OrderedDict.fromkeys(r["algorithm"] for r in rows))
    # Layers in first-seen order, keyed by (suite, descriptor) so repeated names stay apart.
    layers = list(OrderedDict.fromkeys((r.get("suite", ""), r["descriptor"]) for r in rows))
    labels = {}
    for r in rows:
        labels.setdefault((r.get("suite", ""), r["descriptor"]), layer_label(r))
    width = 0.8 / max(len(algorithms), 1)
    fig, axes = plt.subplots(len(passes), 2, squeeze=False,
                             figsize=(max(8, 0.55 * len(layers) * 2 + 4), 3.6 * len(passes)))
    cmap = plt.get_cmap("tab10")
    for row_index, pass_name in enumerate(passes):
        ax_time, ax_mem = axes[row_index]
        cases = {(r.get("suite", ""), r["descriptor"], r["algorithm"]): r
                 for r in rows if r["pass"] == pass_name}
        for a_index, algorithm in enumerate(algorithms):
            xs, times, mems, hatched = [], [], [], []
            for l_index, layer in enumerate(layers):
                r = cases.get((layer[0], layer[1], algorithm))
                if r is None:
                    continue
                x = l_index + (a_index - (len(algorithms) - 1) / 2) * width
                t = number(r["time_ms"]) if r["status"] == "ok" else None
                m = mib(number(r["total_bytes"]))
                xs.append(x)
                times.append(t)
                mems.append(m)
                hatched.append(r["status"] == "over_budget")
            color = cmap(a_index % 10)
            tx = [x for x, t in zip(xs, times) if t]
            ax_time.bar(tx, [t for t in times if t], width, label=algorithm, color=color)
            for x, m, h in zip(xs, mems, hatched):
                if m:
                    ax_mem.bar([x], [m], width, color=color, hatch="//" if h else None,
                               edgecolor="black" if h else color)
        for ax, title, unit in ((ax_time, "time", "ms (median, log)"),
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
    return fig


def against_parameter(args, meta, rows, plt):
    varied = varied_fields(meta) or [args.x]
    if args.x and args.x not in varied:
        sys.exit(f"plot_sweep: --x {args.x}: the sweep varied {', '.join(varied)}")
    x_field = args.x or varied[0]

    def x_of(r):
        return descriptor_fields(r["descriptor"]).get(x_field)

    def series_of(r):
        fields = descriptor_fields(r["descriptor"])
        others = [f"{k}={fields.get(k)}" for k in varied if k != x_field]
        return " ".join([r["algorithm"]] + others)

    passes = [p for p in PASSES if any(r["pass"] == p for r in rows)]
    fig, axes = plt.subplots(len(passes), 2, squeeze=False, figsize=(12, 3.8 * len(passes)))
    for row_index, pass_name in enumerate(passes):
        ax_time, ax_mem = axes[row_index]
        series = defaultdict(list)
        for r in rows:
            if r["pass"] == pass_name and x_of(r) is not None:
                series[series_of(r)].append(r)
        for name, points in series.items():
            points.sort(key=x_of)
            ok = [p for p in points if p["status"] == "ok" and number(p["time_ms"])]
            line, = ax_time.plot([x_of(p) for p in ok], [number(p["time_ms"]) for p in ok],
                                 marker="o", label=name)
            mem = [p for p in points if number(p["total_bytes"])]
            ax_mem.plot([x_of(p) for p in mem], [mib(number(p["total_bytes"])) for p in mem],
                        marker="o", color=line.get_color(), label=name)
        for ax, title, unit in ((ax_time, "time", "ms (median, log)"),
                                (ax_mem, "memory: tensors + workspace", "MiB (log)")):
            ax.set_yscale("log")
            ax.set_xlabel(x_field)
            ax.set_ylabel(unit)
            ax.set_title(f"{pass_name}: {title} against {x_field}")
            ax.grid(which="both", alpha=0.3)
        ax_time.legend(fontsize=8)
    return fig


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", help="a convbench run CSV (--out FILE.csv)")
    parser.add_argument("-o", "--output", default="sweep.png", help="PNG to write")
    parser.add_argument("--x", help="the varied parameter to draw against (e.g. kh, ih)")
    parser.add_argument("--title", help="figure title (default: the CSV's file name)")
    args = parser.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta, rows = read_rows(args.csv)
    if varied_fields(meta) or args.x:
        fig = against_parameter(args, meta, rows, plt)
    else:
        fig = per_layer(args, rows, plt)
    fig.suptitle(args.title or args.csv)
    fig.tight_layout()
    try:
        fig.savefig(args.output, dpi=110)
    except OSError as e:
        sys.exit(f"plot_sweep: cannot write {args.output}: {e.strerror}")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
