#!/usr/bin/python3
"""Write docs/answers.md: the seed's questions, each answered from convbench's output.

    bench/results/make_answers.py --convbench build/release/bench/convbench

Memory answers come from `convbench memory`, which plans every layer (exact workspace, no
run) and models a training step per network; the predictor answer correlates the times
measured by bench/results/make_results.py (bench/results/data/threads-*/) with each
algorithm's own flop and byte counts from `convbench predict`. Each section says how to
reproduce it and what it cannot yet answer. Standard library only.
"""

import argparse
import csv
import io
import json
import math
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict

import make_prediction

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SUITES = ["alexnet", "vgg16", "resnet50"]
BATCHES = [32, 64, 128]
STRATEGIES = ["cpu.fft", "cpu.im2col", "cpu.onednn"]
# The strategies that bound FFT's memory, planned beside those for the memory answers.
BOUNDED = ["cpu.fft_tiled", "cpu.winograd"]
CARDS = ["gtx580", "gtx970", "gtx980", "titan-x", "v100", "a100-40gb"]
# The GTX 970 as if its last 512 MiB were as fast as the rest: the same card without the
# slow segment, so the difference in largest batch is the segment's effect alone.
FULL_970 = {"id": "gtx970-all-fast", "name": "GTX 970 if all 4 GiB were fast",
            "memory": "4GiB", "usable_memory": "4GiB", "bandwidth_gbs": 224,
            "fp32_tflops": 3.92, "architecture": "Maxwell", "year": 2014}


def gib(n):
    return n / 2**30


def run_json(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"make_answers: {' '.join(command)}: {result.stderr.strip()}")
    return json.loads(result.stdout)


def memory_reports(convbench, cards_file):
    """(suite, mb) -> convbench memory JSON, and the commands that made them."""
    reports, commands = {}, {}
    for suite in SUITES:
        for mb in BATCHES:
            command = [convbench, "memory", "--suite", suite, "--mb", str(mb), "--algos",
                       ",".join(STRATEGIES + BOUNDED), "--format", "json"]
            if mb == BATCHES[0]:
                command += ["--cards", ",".join(CARDS), "--cards", str(cards_file)]
            reports[(suite, mb)] = run_json(command)
            commands[(suite, mb)] = " ".join(["convbench", *command[1:]]).replace(
                str(cards_file), "gtx970-all-fast.json")
    return reports, commands


def layer_rows(report):
    """(layer, pass) -> algorithm -> row of the memory report."""
    out = OrderedDict()
    for row in report["layers"]:
        out.setdefault((row["layer"], row["pass"]), {})[row["algorithm"]] = row
    return out


def over_im2col(report, algorithm):
    """Per layer and pass that both `algorithm` and cpu.im2col plan: (total ratio, workspace
    ratio or None where im2col needs none, the algorithm's workspace bytes, layer, pass)."""
    out = []
    for (layer, pass_name), by in layer_rows(report).items():
        a, i = by.get(algorithm), by.get("cpu.im2col")
        if not (a and i and a["total_bytes"] and i["total_bytes"]):
            continue
        out.append((a["total_bytes"] / i["total_bytes"],
                    a["workspace_bytes"] / i["workspace_bytes"] if i["workspace_bytes"] else None,
                    a["workspace_bytes"], layer, pass_name))
    return out


def ratio_cells(ratios):
    """The table cells of over_im2col's ratios: cases, median and max total ratio (with its
    layer and pass), median workspace ratio, largest workspace."""
    if not ratios:
        return "0 | — | — | — | —"
    top = max(ratios, key=lambda r: (r[0], r[3], r[4]))  # ties by name, never by None
    workspaces = [r[1] for r in ratios if r[1] is not None]
    return (f"{len(ratios)} | {statistics.median(r[0] for r in ratios):.1f}× | {top[0]:.1f}× "
            f"({top[3].split(':')[-1]}, {top[4]}) | "
            f"{f'{statistics.median(workspaces):.1f}×' if workspaces else '—'} | "
            f"{gib(max(r[2] for r in ratios)):.2f} GiB")


def memory_section(reports, commands):
    lines = ["## 1. How much more memory does FFT need than im2col, per layer?", "",
             "Per layer and pass, the workspace and the total (input + filter + output + "
             "workspace) of `cpu.fft` over `cpu.im2col`'s, from their plans' exact "
             "`workspace_bytes()` (planned, not run):", "",
             "| network | batch | layers × passes | FFT/im2col total: median | max (layer, pass) "
             "| FFT/im2col workspace: median | FFT workspace max |", "|---|---|---|---|---|---|---|"]
    for suite in SUITES:
        for mb in BATCHES:
            lines.append(f"| {suite} | {mb} | "
                         f"{ratio_cells(over_im2col(reports[(suite, mb)], 'cpu.fft'))} |")
    lines += ["", "The strategies that bound FFT's memory, over `cpu.im2col` the same way: "
              "`cpu.fft_tiled` (FFT over output tiles) on every layer, `cpu.winograd` on the "
              "stride-1 3×3 layers it plans (it refuses the others, with the reason):", "",
              "| network | batch | strategy | layers × passes | total over im2col: median | "
              "max (layer, pass) | workspace over im2col: median | workspace max |",
              "|---|---|---|---|---|---|---|---|"]
    for suite in SUITES:
        for mb in BATCHES:
            for algorithm in BOUNDED:
                lines.append(f"| {suite} | {mb} | {algorithm} | "
                             f"{ratio_cells(over_im2col(reports[(suite, mb)], algorithm))} |")
    lines += ["", f"Forward pass at batch {BATCHES[-1]}, per layer (GiB; — where the strategy "
              "does not plan the layer):", "",
              "| layer | FFT workspace | tiled FFT workspace | Winograd workspace | "
              "im2col workspace | FFT total | im2col total | FFT/im2col total |",
              "|---|---|---|---|---|---|---|---|"]

    def workspace(row):
        return f"{gib(row['workspace_bytes']):.2f}" if row and row["total_bytes"] else "—"

    for suite in SUITES:
        for (layer, pass_name), by in layer_rows(reports[(suite, BATCHES[-1])]).items():
            f, i = by.get("cpu.fft"), by.get("cpu.im2col")
            if pass_name != "fwd" or not (f and i and f["total_bytes"] and i["total_bytes"]):
                continue
            lines.append(f"| {layer} | {workspace(f)} | {workspace(by.get('cpu.fft_tiled'))} | "
                         f"{workspace(by.get('cpu.winograd'))} | {workspace(i)} | "
                         f"{gib(f['total_bytes']):.2f} | {gib(i['total_bytes']):.2f} | "
                         f"{f['total_bytes'] / i['total_bytes']:.1f}× |")
    lines += ["", "Reproduce (one per network and batch):", "", "```",
              *[commands[(s, mb)] for s in SUITES for mb in BATCHES], "```", "",
              "Cannot yet answer: the GPU strategies' memory. `cuda.fft`'s workspace adds "
              "cuFFT's work area, which only a device can report (`cufftGetSize` needs the "
              "driver), and none was available; the CPU plans share the FFT geometry "
              "(`lib/strategy/fft_geometry.hpp`) with `cuda.fft`, so the spectra buffers are "
              "the same, but not the FFT library's scratch. `cuda.fft_tiled` and `cuda.winograd` "
              "share their CPU twins' geometry (`lib/strategy/`), and their plans likewise "
              "need a device for the libraries' work areas.", ""]
    return "\n".join(lines)


def trained_networks(report):
    """The report's networks a strategy trains alone, and the algorithms that plan only some
    layers (cpu.winograd: stride-1 3x3), which a network would run beside another strategy."""
    nets = report["networks"]
    return ([n for n in nets if n["source"] != "incomplete"],
            sorted({n["algorithm"] for n in nets if n["source"] == "incomplete"}))


def batches_section(reports, commands):
    report = reports[(SUITES[0], BATCHES[0])]
    lines = ["## 2. The largest batch that trains on each card, per strategy", "",
             "Training-step memory (weights, weight gradients, one momentum buffer, the "
             "activations kept for backward, gradient buffers, and the largest workspace of "
             "the strategy's plans; docs/memory-model.md), searched over the batch for each "
             "card's usable memory:", "",
             "| network | strategy | " + " | ".join(CARDS) + " |",
             "|---|---|" + "---|" * len(CARDS)]
    partial = OrderedDict()  # algorithm -> the networks it plans only some layers of
    for suite in SUITES:
        nets, some_layers = trained_networks(reports[(suite, BATCHES[0])])
        for algorithm in some_layers:
            partial.setdefault(algorithm, []).append(suite)
        for net in nets:
            found = dict(p.split("=") for p in (net.get("largest_batch") or "").split(";") if p)
            lines.append(f"| {suite} | {net['algorithm']} | " +
                         " | ".join(found.get(c, "-") for c in CARDS) + " |")
    lines += ["", "0: not even batch 1 fits (the largest workspace alone is too large)."]
    for algorithm, suites in partial.items():
        lines += ["", f"Not in the table: {algorithm} on {' and '.join(suites)}, which it "
                  "plans only some layers of (section 1): those networks do not train with it "
                  "alone."]
    lines += ["", "Reproduce: the batch-32 commands of section 1 (they carry `--cards`).", "",
              "Cannot yet answer: what a framework would need on top (cuDNN/cuBLAS handles, "
              "the CUDA context, allocator fragmentation), which the model leaves out; and "
              "the GPU strategies' workspaces (section 1). The batches are for convlab's CPU "
              "strategies' workspaces applied to each card's memory.", ""]
    return "\n".join(lines)


def gtx970_section(reports):
    lines = ["## 3. What the GTX 970's 3.5 GiB fast segment means for a sweep", "",
             "The GTX 970 has 4 GiB, of which 3.5 GiB run at full speed (the card database's "
             "usable memory). Against the same card with all 4 GiB fast (`gtx970-all-fast`, "
             "a cards file):", "",
             "| network | strategy | largest batch, 3.5 GiB | largest batch, all 4 GiB | "
             "batch lost |", "|---|---|---|---|---|"]
    for suite in SUITES:
        for net in trained_networks(reports[(suite, BATCHES[0])])[0]:
            found = dict(p.split("=") for p in (net.get("largest_batch") or "").split(";") if p)
            a, b = found.get("gtx970"), found.get(FULL_970["id"])
            lost = f"{1 - int(a) / int(b):.0%}" if a and b and int(b) else "-"
            lines.append(f"| {suite} | {net['algorithm']} | {a or '-'} | {b or '-'} | {lost} |")
    lines += ["", "Per layer, at batches " + "/".join(map(str, BATCHES)) + ", the cases whose "
              "memory (tensors + workspace) falls between 3.5 and 4 GiB: they fit the card but "
              "reach into the slow segment, or are refused under a 3.5 GiB budget:", ""]
    between = []
    for suite in SUITES:
        for mb in BATCHES:
            for (layer, pass_name), by in layer_rows(reports[(suite, mb)]).items():
                for algorithm, row in by.items():
                    t = row.get("total_bytes")
                    if t and 3.5 * 2**30 < t <= 4 * 2**30:
                        between.append(f"{layer} {pass_name} {algorithm} at batch {mb}: "
                                       f"{gib(t):.2f} GiB")
    lines += [f"- {b}" for b in between] or ["- none"]
    lines += ["", "Reproduce: the batch-32 commands of section 1, with this cards file as "
              "`gtx970-all-fast.json`:", "", "```json", json.dumps([FULL_970]), "```", "",
              "Cannot yet answer: how much slower a kernel runs when its buffers do reach the "
              "slow segment (that needs a GTX 970), and whether the driver places a given "
              "allocation there.", ""]
    return "\n".join(lines)


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def predictor_section(convbench):
    data = sorted((HERE / "data").glob("threads-*"))
    rows = []
    for d in data:
        for f in sorted(d.glob("*.csv")):
            text = f.read_text()
            body = [l for l in text.splitlines() if not l.startswith("#")]
            for r in csv.DictReader(body):
                if r["status"] == "ok" and r["time_ms"]:
                    rows.append((d.name, r))
    if not rows:
        return "## 4. Bandwidth or FLOPS?\n\nNo measurements in bench/results/data.\n"
    shapes = sorted({r["descriptor"] for _, r in rows})
    cases, _ = make_prediction.predict_cases(
        convbench, [*sum((["--shape", s] for s in shapes), []), "--algos", ",".join(STRATEGIES),
                    "--cards", "h200"], "make_answers")
    counts = {(p["descriptor"], p["pass"], p["algorithm"]): (float(p["flops"]), float(p["bytes"]))
              for p in cases}
    lines = ["## 4. Does memory bandwidth predict speed better than FLOPS?", "",
             "On the CPU runs of docs/results.md: across the measured cases (layer × pass), "
             "the correlation of log(time) with log(the algorithm's own flop count) and with "
             "log(its own byte count), the two numerators of the roofline "
             "(`convbench predict`'s `flops` and `bytes` columns). Pearson on logs, and "
             "Spearman (ranks):", "",
             "| threads | algorithm | cases | flops: Pearson | flops: Spearman | bytes: Pearson | "
             "bytes: Spearman | better predictor (by ≥ 0.1 on both) |", "|---|---|---|---|---|---|---|---|"]
    groups = OrderedDict()
    for threads, r in rows:
        key = (r["descriptor"], r["pass"], r["algorithm"])
        if key in counts:
            groups.setdefault((threads, r["algorithm"]), []).append(
                (float(r["time_ms"]), *counts[key]))
            groups.setdefault((threads, "all"), []).append((float(r["time_ms"]), *counts[key]))
    for (threads, algorithm), points in groups.items():
        if len(points) < 4:
            continue
        t = [math.log(p[0]) for p in points]
        fl = [math.log(p[1]) for p in points]
        by = [math.log(p[2]) for p in points]
        pf, pb = statistics.correlation(t, fl), statistics.correlation(t, by)
        sf = statistics.correlation(ranks(t), ranks(fl))
        sb = statistics.correlation(ranks(t), ranks(by))
        # A predictor is "better" only by a clear margin on both coefficients; with some
        # 15-40 cases, differences of a few hundredths are noise.
        margin = 0.1
        better = ("flops" if pf - pb >= margin and sf - sb >= margin else
                  "bytes" if pb - pf >= margin and sb - sf >= margin else
                  "no clear difference")
        lines.append(f"| {threads.split('-')[-1]} | {algorithm} | {len(points)} | {pf:.2f} | "
                     f"{sf:.2f} | {pb:.2f} | {sb:.2f} | {better} |")
    lines += ["", "Reproduce: `bench/results/make_results.py` (the measurements), then "
              "`convbench predict --shape DESCRIPTOR ... --algos " + ",".join(STRATEGIES) +
              " --cards h200 --format csv` for the counts (card-independent columns).", "",
              "Cannot yet answer: the seed's question across GPUs (does a card's bandwidth "
              "rank cards better than its FLOPS?), which needs times measured on several "
              "cards; no GPU was available. Across layers on one CPU, flop and byte counts "
              "are themselves correlated (bigger layers have more of both), so a high "
              "correlation for either is weak evidence of what limits the speed.", ""]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--convbench", required=True, help="the convbench binary")
    parser.add_argument("--out", default=str(ROOT / "docs" / "answers.md"))
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        cards_file = pathlib.Path(tmp, "gtx970-all-fast.json")
        cards_file.write_text(json.dumps([FULL_970]))
        reports, commands = memory_reports(args.convbench, cards_file)
    context = reports[(SUITES[0], BATCHES[0])]["context"]
    header = f"""# The seed's questions, answered by measurement

<!-- Generated by bench/results/make_answers.py; edit the script, not this file. -->

Each section is computed from convbench's output by `bench/results/make_answers.py`
(`/usr/bin/python3 bench/results/make_answers.py --convbench build/release/bench/convbench`,
{time.monotonic() - start:.0f} s here), with the command that reproduces it and what it cannot
yet answer. Memory figures are planned, not measured on a device: exact workspace of
convlab's CPU plans (commit {context.get('git_commit')}, {context.get('libraries')}), the
network model of docs/memory-model.md, and the card database's memory sizes. Times are the
CPU measurements of docs/results.md ({context.get('cpu')}, 2 CPUs). **No GPU was measured.**
"""
    parts = [header, memory_section(reports, commands), batches_section(reports, commands),
             gtx970_section(reports), predictor_section(args.convbench)]
    pathlib.Path(args.out).write_text("\n".join(parts))
    print(f"make_answers: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
