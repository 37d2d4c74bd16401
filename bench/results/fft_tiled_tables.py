#!/usr/bin/env python3
"""The tables of docs/strategy-fft-tiled.md: workspace of cpu.fft_tiled against cpu.im2col and
cpu.fft, and time against cpu.fft, on convnet-benchmarks L1-L5 and ResNet-50's 3x3 layers.

    bench/results/fft_tiled_tables.py --convbench build/release/bench/convbench \
        --threads 2 --mb 16 --out-dir /tmp/fft_tiled

Runs `convbench memory` (at the suites' own batch) and `convbench run` (at --mb, every pass,
medians of --reps), keeps the CSVs in --out-dir, and prints Markdown tables and the machine
(CPU model, cores, threads) on stdout. Every number printed comes from those two runs.
"""
import argparse
import csv
import os
import platform
import pathlib
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import plot_sweep  # noqa: E402  (the CSV reader, with the run's metadata)

ALGOS = ["cpu.im2col", "cpu.fft", "cpu.fft_tiled"]
RESNET_3X3 = ["res2a_branch2b", "res3a_branch2b", "res4a_branch2b", "res5a_branch2b"]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def wanted(layer):
    name = layer.split(":")[-1].split("*")[0]
    return layer.startswith("convnet-benchmarks:") or name in RESNET_3X3


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def isa():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(l for l in f if l.startswith("flags")).split()
        return ", ".join(x for x in ("avx2", "fma", "avx512f") if x in flags)
    except (OSError, StopIteration):
        return "unknown"


def mib(b):
    return f"{int(b) / 2**20:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--convbench", default="build/release/bench/convbench")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--mb", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out-dir", default="fft_tiled_results")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    env = dict(os.environ, CONVLAB_NUM_THREADS=str(args.threads))
    suites = "convnet-benchmarks,resnet50"
    mem_csv = os.path.join(args.out_dir, "memory.csv")
    run_csv = os.path.join(args.out_dir, "run.csv")
    subprocess.run([args.convbench, "memory", "--suite", suites, "--algos", ",".join(ALGOS),
                    "--format", "csv", "--out", mem_csv], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    # The run: only the wanted layers, as --shape descriptors read from the memory rows.
    shapes = []
    for r in read_rows(mem_csv):
        if r["kind"] == "layer" and wanted(r["layer"]):
            d = f'{r["descriptor"]}n"{r["layer"].split(":")[-1].split("*")[0]}"'
            if d not in shapes:
                shapes.append(d)
    # The algorithms of a layer and pass in turns (one repetition of each per round), so that
    # a slow spell of the machine falls on each alike and the ratios compare the same spells.
    cmd = [args.convbench, "run", "--mb", str(args.mb), "--algos", ",".join(ALGOS),
           "--reps", str(args.reps), "--max-time", "0", "--interleave", "--out", run_csv,
           "--format", "csv"]
    for s in shapes:
        cmd += ["--shape", s]
    load_before = os.getloadavg()[0]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)

    meta, _ = plot_sweep.read_rows(run_csv)
    print(f"Machine: {cpu_model()}, {os.cpu_count()} logical CPUs ({isa()}); "
          f"CONVLAB_NUM_THREADS={args.threads}; commit {meta.get('git_commit', '?')}; "
          f"{meta.get('libraries', '?')}; load average (1 min) {load_before:.1f} before the "
          f"run, {os.getloadavg()[0]:.1f} at the end.\n")

    mem = {}
    for r in read_rows(mem_csv):
        if r["kind"] == "layer" and wanted(r["layer"]) and r["workspace_bytes"]:
            mem[(r["layer"].split(":")[-1].split("*")[0], r["pass"], r["algorithm"])] = (
                int(r["batch"]), int(r["workspace_bytes"]))
    print("Workspace at the suites' own batch (`convbench memory`), MiB:\n")
    print("| layer | mb | pass | cpu.im2col | cpu.fft | cpu.fft_tiled | tiled / im2col |"
          " tiled / fft |")
    print("|---|---|---|---|---|---|---|---|")
    for (layer, pas, algo), (mb, ws) in mem.items():
        if algo != "cpu.fft_tiled":
            continue
        im = mem.get((layer, pas, "cpu.im2col"), (0, 0))[1]
        ff = mem.get((layer, pas, "cpu.fft"), (0, 0))[1]
        print(f"| {layer} | {mb} | {pas} | {mib(im)} | {mib(ff)} | {mib(ws)} | "
              f"{ws / im:.2f} | {ws / ff:.2f} |" if im and ff else
              f"| {layer} | {mb} | {pas} | {mib(im)} | {mib(ff)} | {mib(ws)} | - | - |")

    run = {}
    for r in read_rows(run_csv):
        if r["status"] == "ok":
            run[(r["layer"], r["pass"], r["algorithm"])] = r
    print(f"\nTime at mb {args.mb} (`convbench run`, median of {args.reps} after 1 warm-up; "
          "min-max in brackets), ms, and workspace at that batch, MiB:\n")
    print("| layer | pass | cpu.fft ms | cpu.fft_tiled ms | tiled / fft (median) |"
          " cpu.im2col MiB | cpu.fft_tiled MiB | tiled / im2col |")
    print("|---|---|---|---|---|---|---|---|")
    for (layer, pas, algo), r in run.items():
        if algo != "cpu.fft_tiled":
            continue
        f = run.get((layer, pas, "cpu.fft"))
        im = run.get((layer, pas, "cpu.im2col"))
        t = float(r["time_ms"])
        fcell = (f'{float(f["time_ms"]):.1f} [{float(f["time_ms_min"]):.1f}-'
                 f'{float(f["time_ms_max"]):.1f}]') if f else "-"
        ratio = f'{t / float(f["time_ms"]):.2f}' if f else "-"
        imws = int(im["workspace_bytes"]) if im else 0
        tws = int(r["workspace_bytes"])
        print(f"| {layer} | {pas} | {fcell} | {t:.1f} [{float(r['time_ms_min']):.1f}-"
              f"{float(r['time_ms_max']):.1f}] | {ratio} | {mib(imws)} | {mib(tws)} | "
              f"{(tws / imws) if imws else float('nan'):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
