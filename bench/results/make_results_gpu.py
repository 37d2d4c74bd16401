#!/usr/bin/python3
"""Write docs/results-gpu.md from what scripts/gpu_check returned from a GPU machine.

    bench/results/make_results_gpu.py --from DIR [--out docs/results-gpu.md]

DIR holds gpu_check's files as the device tool brought them back (sweep_mb32.csv,
sweep_mb128.csv, check_mb1.csv, ceilings.csv, summary.txt); commit them under
bench/results/data/gpu-<card>/ so the page can be regenerated. Every number on the page is
read or computed from those files, and the page names the card, driver, libraries and commit
it was measured with. Rows measured without a GPU (gpu_driver: none) are refused: the page
may claim GPU numbers only from a GPU run, and an existing page is left untouched when
nothing can be claimed.

Columns per row: the median time with the fastest and slowest repetition, GFLOP/s, GB/s (the
pass's tensors, x + w + y, over the median time: what it must move at least once; workspace
traffic is not counted), the fraction of the card's roofline it reaches (the floor
max(flops / SGEMM rate, tensor bytes / copy bandwidth) from the measured ceilings, over the
time), the workspace, the math mode, and the largest relative error against the CPU
reference in the check at mb 1.
"""

import argparse
import csv
import os
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import plot_sweep  # noqa: E402  (the convbench CSV reader)

SWEEPS = [("sweep_mb32.csv", 32), ("sweep_mb128.csv", 128)]


def refuse(message):
    sys.exit(f"make_results_gpu: {message}")


def read_sweep(path):
    meta, rows = plot_sweep.parse_rows(path.read_text(), str(path))
    if meta.get("gpu_driver", "none") in ("", "none"):
        refuse(f"{path} was measured without a GPU (gpu_driver: {meta.get('gpu_driver')}); "
               "GPU numbers come only from a GPU run")
    return meta, rows


def read_ceilings(path):
    try:
        with open(path, newline="") as f:
            row = next(csv.DictReader(f))
        return float(row["copy_gb_per_s"]), float(row["sgemm_gflop_per_s"]), row["device"]
    except (OSError, StopIteration, KeyError, ValueError) as e:
        refuse(f"{path}: no ceilings ({e}); the roofline fractions need them")


def check_errors(path):
    """(layer or descriptor, pass, algorithm) -> (status, max_rel_err) of the check at mb 1."""
    if not path.exists():
        return {}
    _, rows = plot_sweep.parse_rows(path.read_text(), str(path))
    return {(r["layer"] or r["descriptor"], r["pass"], r["algorithm"]):
            (r["status"], r.get("max_rel_err", "")) for r in rows}


def figures(row, copy_gb_s, sgemm_gflop_s):
    """(GFLOP/s, GB/s, fraction of the roofline) of an ok row; None where it has no time."""
    t = plot_sweep.timing(row)
    gflops = plot_sweep.number(row.get("gflops"))
    total = plot_sweep.number(row.get("total_bytes"))
    workspace = plot_sweep.number(row.get("workspace_bytes")) or 0.0
    if not t or gflops is None or total is None:
        return None
    seconds = t[0] * 1e-3
    flops = gflops * 1e9 * seconds
    tensor_bytes = total - workspace
    floor_s = max(flops / (sgemm_gflop_s * 1e9), tensor_bytes / (copy_gb_s * 1e9))
    return gflops, tensor_bytes / seconds / 1e9, floor_s / seconds


def error_cell(errors, row):
    found = errors.get((row["layer"] or row["descriptor"], row["pass"], row["algorithm"]))
    if not found:
        return "not checked"
    status, rel = found
    return rel if status == "ok" and rel else status


def sweep_section(name, mb, meta, rows, ceilings, errors):
    copy_gb_s, sgemm_gflop_s, _ = ceilings
    lines = [f"## mb {mb}\n", f"`{meta.get('command', '?')}`\n",
             "| layer | pass | algorithm | ms median [min–max] | GFLOP/s | GB/s | of roofline "
             "| workspace MiB | math | max rel err (mb 1) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    refused = {}
    for r in rows:
        f = figures(r, copy_gb_s, sgemm_gflop_s)
        if r["status"] != "ok" or not f:
            refused.setdefault(r["algorithm"], []).append(r.get("reason") or r["status"])
            continue
        t = plot_sweep.timing(r)
        workspace = plot_sweep.mib(plot_sweep.number(r.get("workspace_bytes")) or 0.0)
        lines.append(f"| {plot_sweep.layer_label(r)} | {r['pass']} | {r['algorithm']} | "
                     f"{t[0]:.3g} [{t[1]:.3g}–{t[2]:.3g}] | {f[0]:.0f} | {f[1]:.0f} | "
                     f"{f[2]:.0%} | {workspace:.1f} | {r.get('math_mode', '?')} | "
                     f"{error_cell(errors, r)} |")
    if refused:
        lines.append(f"\nNot timed in {name}: " + "; ".join(
            f"{a} {len(v)} cases (first: {v[0]})" for a, v in sorted(refused.items())) + ".")
    return "\n".join(lines) + "\n"


OWN = ("cuda.im2col", "cuda.fft", "cuda.fft_tiled", "cuda.winograd")


def summary_section(mb, rows):
    """Per layer and pass: cuDNN's fastest algorithm and, for each of our strategies, its
    median time over that one (measured side by side in the same sweep), with its workspace."""
    best, own = {}, {}
    order = []
    for r in rows:
        t = plot_sweep.timing(r)
        if r["status"] != "ok" or not t:
            continue
        key = (plot_sweep.layer_label(r), r["pass"])
        if key not in best and key not in own:
            order.append(key)
        if r["algorithm"].startswith("cudnn.") and r["algorithm"] != "cudnn.find":
            if key not in best or t[0] < best[key][1]:
                best[key] = (r["algorithm"], t[0])
        elif r["algorithm"] in OWN:
            workspace = plot_sweep.mib(plot_sweep.number(r.get("workspace_bytes")) or 0.0)
            own.setdefault(key, {})[r["algorithm"]] = (t[0], workspace)
    lines = [f"### mb {mb}: our strategies against cuDNN's fastest\n",
             "Each cell: our median time over the fastest `cudnn.*` algorithm's (below 1: ours "
             "is faster), and our workspace in MiB; `-` where the strategy refuses the layer.\n",
             "| layer | pass | fastest cuDNN | ms | " + " | ".join(OWN) + " |",
             "|---|---|---|---|" + "---|" * len(OWN)]
    for key in order:
        if key not in best:
            continue
        algorithm, ms = best[key]
        cells = []
        for a in OWN:
            found = own.get(key, {}).get(a)
            cells.append(f"{found[0] / ms:.2f}× ({found[1]:.0f})" if found else "-")
        lines.append(f"| {key[0]} | {key[1]} | {algorithm} | {ms:.3g} | " + " | ".join(cells) +
                     " |")
    return "\n".join(lines) + "\n"


def driver_of(meta, summary):
    """The driver version: the sweep's, else the one nvidia-smi gave gpu_check's env phase (the
    sweep's reader of /proc/driver/nvidia/version misread the open kernel module's line before
    it was fixed)."""
    recorded = meta.get("gpu_driver", "")
    if recorded and recorded[0].isdigit() and "." in recorded:
        return recorded
    for line in summary.splitlines():
        if line.startswith("env ") and "gpu:" in line:
            return line.split("gpu:", 1)[1].split(";")[0].split(",")[-1].strip() + \
                " (nvidia-smi, gpu_check's env phase)"
    return recorded or "?"


def document(source, sweeps, ceilings, errors, summary="", tree=None):
    meta = sweeps[0][2]
    copy_gb_s, sgemm_gflop_s, device = ceilings
    commit = meta.get("git_commit", "?")
    if tree:
        commit = f"{tree} (the tree that ran; the device's checkout recorded {commit})"
    parts = [f"""# Results on a GPU

<!-- Generated by bench/results/make_results_gpu.py from {source}/; edit the script, not
this file. -->

Measured by `scripts/gpu_check` on one lent machine, and nothing else: every number below
belongs to this card, driver and library build.

| | |
|---|---|
| GPU, driver | {meta.get('devices', '?')}; driver {driver_of(meta, summary)} |
| libraries | {meta.get('libraries', '?')} |
| compiler, build | {meta.get('compiler', '?')}, {meta.get('build_type', '?')} |
| commit, date | {commit}, {meta.get('date', '?')} |
| math mode | {meta.get('math_mode', '?')} |
| ceilings (test_gpu_ceilings, random data) | {device}: copy {copy_gb_s:.0f} GB/s, SGEMM {sgemm_gflop_s:.0f} GFLOP/s |

Method: `--reps {meta.get('reps', '?')} --warmup {meta.get('warmup', '?')} --max-time
{meta.get('max_time_s', '?')}`; a time is the median, `[min–max]` the fastest and slowest
repetition. GB/s counts the pass's three tensors once; "of roofline" is the time the ceilings
allow (the larger of the arithmetic at the SGEMM rate and the tensors at the copy rate) over
the measured time. The error is the check at mb 1 against the CPU reference (double
accumulation); "not checked" where the check did not cover the layer (L1 and L2 are checked by
the test corpus's scaled-down shapes). GFLOP/s and the roofline count the direct
convolution's multiply-adds (2·N·K·C·P·Q·R·S per pass): FFT and Winograd algorithms do fewer
operations than that, so their rate can pass the SGEMM ceiling and their "of roofline" 100%.

## Summary
"""]
    for name, mb, m, rows in sweeps:
        parts.append(summary_section(mb, rows))
    for name, mb, m, rows in sweeps:
        parts.append(sweep_section(name, mb, m, rows, ceilings, errors))
    return "\n".join(parts)


def write_atomically(path, text):
    """The page appears whole or not at all: a failed write leaves the old page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--from", dest="source", required=True, type=pathlib.Path,
                   help="folder with gpu_check's returned files")
    p.add_argument("--out", type=pathlib.Path, default=HERE.parents[1] / "docs/results-gpu.md")
    p.add_argument("--tree", help="the commit whose tree ran, when the device's checkout "
                   "recorded another (its git metadata can predate the tree it was sent)")
    args = p.parse_args(argv)
    sweeps = []
    for name, mb in SWEEPS:
        path = args.source / name
        if path.exists():
            meta, rows = read_sweep(path)
            sweeps.append((name, mb, meta, rows))
    if not sweeps:
        refuse(f"no sweep in {args.source} ({', '.join(n for n, _ in SWEEPS)}): nothing to claim")
    ceilings = read_ceilings(args.source / "ceilings.csv")
    errors = check_errors(args.source / "check_mb1.csv")
    summary_path = args.source / "summary.txt"
    summary = summary_path.read_text() if summary_path.exists() else ""
    write_atomically(args.out, document(args.source, sweeps, ceilings, errors, summary, args.tree))
    print(f"make_results_gpu: wrote {args.out}")


if __name__ == "__main__":
    main()
