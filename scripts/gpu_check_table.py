#!/usr/bin/env python3
"""The sweep table of scripts/gpu_check's summary.

Usage: gpu_check_table.py SWEEP.csv [CHECK.csv] [CEILINGS.csv] [CACHED.csv] [CROP_FUSED.csv]
                          [CONTIGUOUS.csv]

Per (layer, pass) at mb 32: the fastest legacy cudnn.* algorithm and its time, the layer's
floor max(flops / SGEMM rate, tensor bytes / copy bandwidth) from the measured ceilings
(tensor bytes = total_bytes - workspace_bytes), and the speed of cuda.fft and cuda.im2col
relative to that cuDNN time (>= 1 is faster), and of cuda.fft with its filter spectra cached
(CACHED.csv: the sweep of cuda.fft with cache_filters on), with its crop fused into the C2R
(CROP_FUSED.csv: crop=fused) and with contiguous transforms (CONTIGUOUS.csv:
layout=contiguous). Then the check's status count per algorithm.
Missing or partial files give the rows they have.
"""
import collections
import csv
import sys


def rows(path):
    try:
        with open(path) as f:
            return list(csv.DictReader(line for line in f if not line.startswith("#")))
    except OSError:
        return []


def number(row, key):
    try:
        return float(row[key])
    except (KeyError, TypeError, ValueError):
        return None


# (argument index, table name) of cuda.fft's sweeps under other knob values.
VARIANTS = [(4, "cuda.fft cached"), (5, "cuda.fft crop fused"), (6, "cuda.fft contiguous")]


def main(argv):
    timed = rows(argv[1])
    checked = rows(argv[2]) if len(argv) > 2 else []
    ceilings = rows(argv[3]) if len(argv) > 3 else []
    # cuda.fft's knob sweeps, each a column of its own.
    for index, name in VARIANTS:
        for r in rows(argv[index]) if len(argv) > index else []:
            if r.get("algorithm") == "cuda.fft":
                timed.append(dict(r, algorithm=name))
    copy = number(ceilings[0], "copy_gb_per_s") if ceilings else None
    sgemm = number(ceilings[0], "sgemm_gflop_per_s") if ceilings else None
    floor = {}
    best = collections.OrderedDict()
    for r in timed:
        key = (r.get("layer", "?"), r.get("pass", "?"))
        best.setdefault(key, {})
        t = number(r, "time_ms")
        gflops, total, ws = number(r, "gflops"), number(r, "total_bytes"), number(r, "workspace_bytes")
        if copy and sgemm and None not in (t, gflops, total, ws):
            flops = gflops * 1e9 * t * 1e-3
            floor[key] = max(flops / (sgemm * 1e6), (total - ws) / (copy * 1e6))
        if r.get("status") != "ok" or t is None:
            continue
        a = r.get("algorithm", "?")
        group = "cudnn" if a.startswith("cudnn.") and a != "cudnn.find" else a
        if group not in best[key] or t < best[key][group][1]:
            best[key][group] = (a, t)
    if best:
        print("%-28s %-10s %-24s %8s %8s %8s %8s %8s %8s %8s" % (
            "layer (mb 32)", "pass", "fastest cudnn.*", "ms", "floor ms", "fft", "fft cach",
            "fft crop", "fft cont", "im2col"))
    for (layer, p), g in best.items():
        c = g.get("cudnn")

        def ratio(name):
            return "%.2fx" % (c[1] / g[name][1]) if c and name in g else "-"

        f = floor.get((layer, p))
        print("%-28s %-10s %-24s %8s %8s %8s %8s %8s %8s %8s" % (
            layer[:28], p, c[0][:24] if c else "-", "%.3f" % c[1] if c else "-",
            "%.3f" % f if f else "-", ratio("cuda.fft"), ratio("cuda.fft cached"),
            ratio("cuda.fft crop fused"), ratio("cuda.fft contiguous"), ratio("cuda.im2col")))
    status = collections.Counter((r.get("algorithm"), r.get("status")) for r in checked)
    if checked:
        print("check at mb 1 (status per algorithm):")
        for a in sorted({k[0] for k in status}):
            print("  %-24s %s" % (a, ", ".join("%s %d" % (s, n) for (b, s), n in
                                               sorted(status.items()) if b == a)))


if __name__ == "__main__":
    main(sys.argv)
