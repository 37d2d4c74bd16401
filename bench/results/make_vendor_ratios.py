#!/usr/bin/python3
"""Measure convlab's CPU strategies against oneDNN's kernel of the same strategy, side by side,
on the 3x3 and 5x5 layers of ResNet-50, VGG-16 and AlexNet at mb 16, and write
docs/vendor-ratios.md.

    bench/results/make_vendor_ratios.py --convbench build/release/bench/convbench   # measure
    bench/results/make_vendor_ratios.py --from bench/results/data/vendor-ratios      # rewrite

Each machine keeps its own measurements (data/vendor-ratios/<machine>/threads-N, the machine
named by its CPU's model and family), and the page has a section per machine: measuring on one
replaces that machine's numbers only.

One convbench run measures all four algorithms of a layer and pass with their repetitions in
turns (convbench's --interleave: one of each per round), so a slow spell of the machine falls
on every algorithm alike and each ratio compares the same spells; the run is repeated (--runs)
because this kind of machine drifts between runs more than within one. At one thread the process is pinned
to one CPU (the last of its affinity set); at more threads it keeps the whole set. The table
gives every run's median (of --reps repetitions) and the speed, oneDNN's median time over
ours; the summary counts the medians at or above each target, per set of layers: ResNet-50's
stride-1 3x3 layers (the set the targets are judged on) and the others. Each layer's share of
taps that fall in the padding stands beside it, since a direct kernel skips those and im2col
multiplies them, unless cpu.im2col ran its tap classes there (its plan's `taps=in_image`,
marked in the table). The machine record (CPU, ISA, affinity, load) is taken when measuring
and stored beside the CSVs.
"""

import argparse
import json
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import plot_sweep  # noqa: E402  (the CSV reader)
from make_results import cpu_record, pinning_record, shell_word  # noqa: E402

# The built-in suites' 3x3 and 5x5 layers (AlexNet's conv1 is 11x11), all at mb 16.
SUITES = ["resnet50", "vgg16", "alexnet"]
MATCH = "res.a_branch2b|vgg16:|alexnet:conv[2-5]"
MB = 16
# The sets the summary counts apart, by the network a layer's name starts with; a layer
# without a network's name (an earlier measurement's --shape) counts as ResNet-50's.
LAYER_SETS = [("ResNet-50's stride-1 3x3 layers (the layers the targets are judged on)",
               ["resnet50"]),
              ("VGG-16's 3x3 layers and AlexNet's 3x3 and 5x5 layers", ["vgg16", "alexnet"])]
# Our algorithm -> (oneDNN's kernel of the same strategy, the speed the issue asks for, whether
# the vendor's kernel skips the taps in the padding that ours multiplies unless its tap classes
# run: then the summary counts the layers with much padding apart).
PAIRS = {"cpu.im2col": ("cpu.onednn.direct", 0.9, True),
         "cpu.winograd": ("cpu.onednn.winograd", 0.8, False)}
PASSES = ["fwd", "bwd_data", "bwd_filter"]


def measure(args, final, threads):
    """Runs into a new folder beside `final`, which replaces it only once every run is done:
    a failed or interrupted measurement leaves the earlier one whole."""
    folder = final.with_name(f"{final.name}.partial-{os.getpid()}")
    folder.mkdir(parents=True)
    env = dict(os.environ)
    env["CONVLAB_NUM_THREADS"] = str(threads)
    affinity = sorted(os.sched_getaffinity(0))
    pinned = [affinity[-1]] if threads == 1 else affinity
    algos = ",".join(a for pair in PAIRS.items() for a in (pair[0], pair[1][0]))
    record = {"machine": cpu_record(), "environment": pinning_record(env),
              "cpus_used": pinned, "runs": {}}
    for run in range(1, args.runs + 1):
        out = folder / f"run-{run}.csv"
        command = [args.convbench, "run", "--suite", ",".join(SUITES), "--mb", str(MB),
                   "--match", MATCH, "--algos", algos, "--reps", str(args.reps), "--warmup", "1",
                   "--max-time", "0", "--interleave", "--format", "csv", "--out", str(out)]
        load_before = os.getloadavg()
        start = time.monotonic()
        result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: os.sched_setaffinity(0, pinned))
        wall = time.monotonic() - start
        if result.returncode not in (0, 1):
            sys.exit(f"make_vendor_ratios: {' '.join(command)} failed: {result.stderr.strip()}")
        kept = final / out.name
        shown = [*command[:-1], str(kept.relative_to(ROOT) if kept.is_relative_to(ROOT) else kept)]
        record["runs"][str(run)] = {
            "command": "CONVLAB_NUM_THREADS={} taskset -c {} convbench {}".format(
                threads, ",".join(map(str, pinned)), " ".join(shell_word(a) for a in shown[1:])),
            "wall_s": round(wall, 1),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
        }
        print(f"make_vendor_ratios: {threads} thread(s), run {run}: {wall:.0f} s", file=sys.stderr)
    (folder / "machine.json").write_text(json.dumps(record, indent=1) + "\n")
    old = final.with_name(f"{final.name}.old-{os.getpid()}")
    if final.exists():
        final.rename(old)
    folder.rename(final)
    if old.exists():
        shutil.rmtree(old)


def machine_folder(machine):
    """A machine's folder name: its CPU's name and family/model, e.g. amd-epyc-f25m17."""
    name = re.sub(r"\((r|tm)\)", "", machine["cpu"].lower())
    name = re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "cpu"
    return f"{name}-f{machine.get('cpu_family', 'x')}m{machine.get('cpu_model', 'x')}"


def median_ms(row):
    try:
        return float(row["time_ms"]) if row["status"] == "ok" else None
    except (KeyError, ValueError):
        return None


def layer_name(descriptor):
    """ic64ih56 from a descriptor: the two numbers that tell the layers apart."""
    core = descriptor.split("mb", 1)[-1]
    ic = core.split("ic", 1)[1].split("ih", 1)[0]
    ih = core.split("ih", 1)[1].split("iw", 1)[0].split("oc", 1)[0]
    return f"ic{ic}ih{ih}"


def shown_layer(row):
    """The suite's name of the layer (resnet50:res2a_branch2b), else ic64ih56."""
    name = row.get("layer", "")
    return name if name and name != row["descriptor"] else layer_name(row["descriptor"])


def layer_set(name):
    network = name.split(":", 1)[0] if ":" in name else "resnet50"
    return next((i for i, (_, networks) in enumerate(LAYER_SETS) if network in networks),
                len(LAYER_SETS) - 1)


def descriptor_numbers(descriptor):
    """{'ih': 56, 'kh': 3, ...} from a canonical descriptor (g1mb16ic64ih56iw56...dw0)."""
    return {key: int(value)
            for key, value in re.findall(r"([a-z]+)(\d+)", descriptor.split('n"', 1)[0])}


def padding_share(descriptor):
    """The share of the taps (output pixel x filter tap) that read the padding, not the image:
    the products a direct kernel can skip and im2col + GEMM multiplies by zero."""
    d = descriptor_numbers(descriptor)

    def inside(size, out, kernel, stride, pad, dilation):
        return sum(0 <= o * stride - pad + k * (dilation + 1) < size
                   for o in range(out) for k in range(kernel))
    try:
        rows = inside(d["ih"], d["oh"], d["kh"], d["sh"], d["ph"], d.get("dh", 0))
        cols = inside(d["iw"], d["ow"], d["kw"], d["sw"], d["pw"], d.get("dw", 0))
        return 1 - rows * cols / (d["oh"] * d["kh"] * d["ow"] * d["kw"])
    except (KeyError, ZeroDivisionError):
        return None


# The summary counts cpu.im2col's medians apart on either side of this share of taps in the
# padding: the small layers, where a direct kernel skips that much arithmetic, lie above it.
PADDING_SPLIT = 0.05


def counted(speeds, target):
    return sum(s >= target for s in speeds), len(speeds)


def shown_speed(speed, target):
    """0.90 for 0.904; 0.897 rather than a bold 0.90 for a miss that rounds up to the target."""
    digits = 2
    text = f"{speed:.{digits}f}"
    while speed < target <= float(text) and digits < 6:
        digits += 1
        text = f"{speed:.{digits}f}"
    return f"**{text}**" if speed < target else text


def layer_table(keys, times, names, refusals, skipped=frozenset()):
    """One set of layers: the table and its summary lines. `skipped`: the (descriptor, pass)
    on which cpu.im2col ran its tap classes, marked beside the share of taps in padding."""
    header = "| layer | taps in padding | pass |"
    for ours, (theirs, target, _) in PAIRS.items():
        header += f" {ours} ms | {theirs} ms | speed (target {target}) |"
    lines = [header, "|---|---|---|" + "---|---|---|" * len(PAIRS)]
    speeds_of = {ours: [] for ours in PAIRS}  # [(padding share, speed)]
    for descriptor, pas in keys:
        share = padding_share(descriptor)
        shown = "?" if share is None else f"{100 * share:.1f} %"
        if (descriptor, pas) in skipped:
            shown += ", skipped"
        cells = [names[descriptor], shown, pas]
        for ours, (theirs, target, _) in PAIRS.items():
            a, b = times.get((descriptor, pas, ours), []), times.get((descriptor, pas, theirs), [])
            speeds = [y / x for x, y in zip(a, b) if x and y]
            cells.append("/".join(f"{x:.1f}" if x else "—" for x in a) or "—")
            cells.append("/".join(f"{y:.1f}" if y else "—" for y in b) or "—")
            cells.append("/".join(shown_speed(v, target) for v in speeds) or "—")
            speeds_of[ours] += [(share, v) for v in speeds]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for ours, (theirs, target, padding_apart) in PAIRS.items():
        speeds = [v for _, v in speeds_of[ours]]
        if not speeds:
            # oneDNN has no kernel of this strategy here: ours against oneDNN's other kernel
            # in the same runs, which has no target.
            for other in (t for t, _, _ in PAIRS.values() if t != theirs):
                versus = [y / x for key in keys
                          for x, y in zip(times.get((*key, ours), []),
                                          times.get((*key, other), [])) if x and y]
                if versus:
                    lines.append(f"- {ours} against {other} (no {theirs} here; no target): "
                                 f"{min(versus):.2f}–{max(versus):.2f}×, median "
                                 f"{statistics.median(versus):.2f}×.")
                    break
            continue
        met, total = counted(speeds, target)
        line = (f"- {ours} against {theirs}: {min(speeds):.2f}–{max(speeds):.2f}×, median "
                f"{statistics.median(speeds):.2f}×; at or above {target} in {met} of {total} "
                "medians (below it in bold)")
        small = [v for share, v in speeds_of[ours] if share is not None and share < PADDING_SPLIT]
        large = [v for share, v in speeds_of[ours] if share is not None and share >= PADDING_SPLIT]
        if padding_apart and small and large:
            line += "; {} of {} where under {:.0f} % of the taps fall in the padding, {} of {} " \
                    "on the other layers".format(*counted(small, target), 100 * PADDING_SPLIT,
                                                 *counted(large, target))
        lines.append(line + ".")
    # An algorithm that refuses every layer for one reason (oneDNN's Winograd on a CPU without
    # AVX-512) gets one line, not one per layer.
    descriptors = {descriptor for descriptor, _ in keys}
    for algo in dict.fromkeys(algo for algo, _ in refusals):
        reasons = {why for (a, _), why in refusals.items() if a == algo}
        refused = {d for (a, d) in refusals if a == algo}
        if refused == descriptors and len(reasons) == 1:
            lines.append(f"- — on every layer: {algo} refuses them all: {reasons.pop()}.")
            continue
        for (a, descriptor), why in refusals.items():
            if a == algo:
                lines.append(f"- — on {names[descriptor]}: {algo} refuses it: {why}.")
    return lines


def section(folder):
    machine = json.loads((folder / "machine.json").read_text())
    runs = sorted(folder.glob("run-*.csv"), key=lambda p: int(p.stem.split("-")[1]))
    tables = [plot_sweep.read_rows(str(p)) for p in runs]
    meta = tables[0][0]
    times = {}  # (descriptor, pass, algorithm) -> [median per run]
    names, order, refusals, skipped = {}, [], {}, set()
    for _, rows in tables:
        for r in rows:
            key = (r["descriptor"], r["pass"])
            if r["algorithm"] == "cpu.im2col" and "taps=in_image" in r.get("plan_details", ""):
                skipped.add(key)
            if key not in order:
                order.append(key)
            names[r["descriptor"]] = shown_layer(r)
            times.setdefault((*key, r["algorithm"]), []).append(median_ms(r))
            if r["status"] == "unsupported" and r.get("reason"):
                # "cpu.onednn fwd g2mb16...: why" -> why; the same for every pass.
                why = r["reason"].split(": ", 1)[-1]
                refusals.setdefault((r["algorithm"], r["descriptor"]), why)
    m, env = machine["machine"], machine["environment"]
    loads = [x for r in machine["runs"].values() for x in (r["load_before"][0], r["load_after"][0])]
    threads = env["CONVLAB_NUM_THREADS"]
    from results_tables import MICROARCHITECTURE
    arch = MICROARCHITECTURE.get((m.get("cpu_family"), m.get("cpu_model")))
    lines = [f"### {threads} thread{'s' if threads != '1' else ''}", "",
             f"{m['cpu']}{' (' + arch + ')' if arch else ''}, {m['logical_cpus']} logical CPUs, "
             f"ISA {', '.join(m['isa'])}; "
             f"{'caches ' + m['caches'] + '; ' if 'caches' in m else ''}"
             + (f"transparent huge pages {m['transparent_hugepage']}; "
                if "transparent_hugepage" in m else "") +
             f"CPUs used {machine['cpus_used']}; `{meta.get('libraries', '?')}`; "
             f"{meta.get('compiler', '?')}, {meta.get('build_type', '?')}; commit "
             f"{meta.get('git_commit', '?')}, {meta.get('date', '?')}; load average (1 min) "
             f"{min(loads):.1f}–{max(loads):.1f} while measuring. Commands:", ""]
    lines += [f"    {r['command']}" for r in machine["runs"].values()]
    lines += ["", "Milliseconds, median of each run; speed = oneDNN's median over ours, per run.",
              ""]
    for index, (title, _) in enumerate(LAYER_SETS):
        keys = [k for k in order if layer_set(names[k[0]]) == index]
        if keys:
            lines += [f"#### {title}", ""]
            descriptors = {k[0] for k in keys}
            lines += layer_table(sorted(keys, key=lambda k: PASSES.index(k[1])), times, names,
                                 {k: why for k, why in refusals.items() if k[1] in descriptors},
                                 skipped)
            lines.append("")
    return "\n".join(lines)


def thread_folders(folder):
    """A machine's finished measurements (threads-N), not one still being taken."""
    done = [f for f in folder.glob("threads-*") if re.fullmatch(r"threads-\d+", f.name)]
    return sorted(done, key=lambda f: int(f.name.split("-")[1]))


def machine_heading(folder):
    m = json.loads((folder / "machine.json").read_text())["machine"]
    from results_tables import MICROARCHITECTURE
    arch = MICROARCHITECTURE.get((m.get("cpu_family"), m.get("cpu_model")))
    # A hypervisor may report a family and model that name no CPU the table knows; then the
    # numbers and the caches are what tell this machine from another of the same name.
    known = arch or (f"family {m.get('cpu_family', '?')}, model {m.get('cpu_model', '?')}" +
                     (f"; caches {m['caches']}" if "caches" in m else ""))
    return f"## {m['cpu']} ({known}), {m['logical_cpus']} logical CPUs\n"


def document(data):
    machines = [f for f in sorted(data.iterdir()) if f.is_dir() and thread_folders(f)]
    if not machines:
        sys.exit(f"make_vendor_ratios: no <machine>/threads-N/ measurements in {data}")
    try:
        shown = data.resolve().relative_to(ROOT)
    except ValueError:
        shown = data
    head = ("# convlab's CPU strategies against oneDNN's: the 3x3 and 5x5 layers of ResNet-50, "
            "VGG-16 and AlexNet at mb 16\n\n"
            "Generated by `bench/results/make_vendor_ratios.py` from the CSVs in "
            f"`{shown}`; do not edit by hand. Each strategy of convlab's own stands beside "
            "oneDNN's kernel of the same strategy (`cpu.onednn.direct`: its direct JIT "
            "convolution; `cpu.onednn.winograd`: its Winograd), measured in the same convbench "
            "run: with `--interleave` in its commands, their repetitions in turns (one of each "
            "per round), else each algorithm's back to back. The numbers hold for the machine "
            "named in each section and nothing beyond "
            "it; each machine's section is its latest measurement. The targets are judged on ResNet-50's stride-1 3x3 layers; the other layers "
            "complete the list cpu.im2col's target names. Taps in padding: the share of the "
            "products (output pixel × filter tap) that read the zero padding, which a direct "
            "kernel skips and im2col + GEMM multiplies; \"skipped\": cpu.im2col ran its tap "
            "classes (`taps=in_image`, by default where it does not tile the image and they "
            "skip at least 5 % of the products), which multiply none of them but a few at the "
            "image's corners. What the tap classes recover and what they do not: "
            "docs/strategy-im2col.md.\n\n")
    parts = []
    for machine in machines:
        folders = thread_folders(machine)
        parts.append(machine_heading(folders[0]))
        parts += [section(f) for f in folders]
    return head + "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--convbench", help="the convbench binary: measure now")
    parser.add_argument("--from", dest="source", help="read the CSVs of an earlier measurement")
    parser.add_argument("--data", default=str(HERE / "data" / "vendor-ratios"))
    parser.add_argument("--runs", type=int, default=3, help="convbench runs per thread count")
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions (>= 5)")
    parser.add_argument("--threads", default=f"1,{len(os.sched_getaffinity(0))}")
    parser.add_argument("--out", default=str(ROOT / "docs" / "vendor-ratios.md"))
    args = parser.parse_args()
    if bool(args.convbench) == bool(args.source):
        parser.error("give --convbench (measure) or --from DIR (rewrite from CSVs)")
    if args.reps < 5 or args.runs < 1:
        parser.error("--reps: medians of at least 5 repetitions; --runs: at least 1")
    data = pathlib.Path(args.source or args.data)
    if args.convbench:
        machine = data / machine_folder(cpu_record())
        for threads in sorted({int(t) for t in args.threads.split(",")}):
            measure(args, machine / f"threads-{threads}", threads)
    out = pathlib.Path(args.out)
    partial = out.with_name(out.name + ".partial")
    partial.write_text(document(data))
    partial.replace(out)  # the page appears whole or keeps its old text
    print(f"make_vendor_ratios: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
