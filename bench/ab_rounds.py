#!/usr/bin/python3
"""Compare builds or settings of convbench's algorithms in alternating rounds.

    bench/ab_rounds.py --out ab/ --rounds 5 --threads 1 --cpus 1 --against cpu.onednn.direct \\
        --variant before /tmp/convbench-before \\
        --variant after build/release/bench/convbench \\
        --variant masked build/release/bench/convbench cpu.im2col.columns=masked \\
        -- --suite alexnet --mb 16 --match conv2 --algos cpu.im2col,cpu.onednn.direct \\
           --interleave --reps 7 --max-time 0

One convbench run cannot time an algorithm under two builds or two knob settings, and a
machine of this kind drifts between runs more than within one. So each round runs every
variant once, with the same run arguments: the variants' runs of one round share a spell,
and their order turns round each round (first to last, then last to first) so that neither
always runs first. With --against, every run also times that algorithm (it must be among the
run's --algos), and each round's speed is its time over ours in the same run: the ratio a
slow spell does not move.

Writes into --out, a folder that must not exist yet: each run's CSV (LABEL-roundN.csv, with
convbench's metadata: commit, CPU, libraries, threads, knobs), its stderr (LABEL-roundN.log),
record.json (the machine, the environment, the CPUs used, every command in the order run)
and summary.md, which is also printed. A run that fails is logged and left out; the other
runs and the summary are still written, and the exit status is 1.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "results"))

import plot_sweep  # noqa: E402  (the CSV reader)
from make_results import cpu_record, pinning_record, shell_word  # noqa: E402

# Run arguments the rounds set themselves (each run's output) or that would make the variants'
# runs measure different cases.
RESERVED = ("--out", "--format", "--resume", "--shard", "--dump", "--dry-run", "--devices")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="ab_rounds.py",
        description="Run convbench variants (builds, knobs) in alternating rounds and compare "
                    "their medians and their speed against one algorithm of the same runs.")
    p.add_argument("--out", required=True, type=pathlib.Path,
                   help="a new folder for the runs' CSVs, logs, record.json and summary.md")
    p.add_argument("--rounds", type=int, default=5, help="rounds, each running every variant")
    p.add_argument("--threads", type=int,
                   help="CONVLAB_NUM_THREADS for every run (default: the environment's)")
    p.add_argument("--cpus", help="pin every run to these CPUs, e.g. 1 or 0,1 (default: not)")
    p.add_argument("--against", metavar="ALGO",
                   help="an algorithm of the runs' --algos: each round's speed is its time "
                        "over each other algorithm's, in the same run")
    p.add_argument("--variant", nargs="+", action="append", required=True,
                   metavar="WORD",
                   help="a variant: its label, the convbench binary it runs, then any knobs "
                        "it sets (ALGO.KNOB=VALUE, as convbench's --knob); two or more")
    p.add_argument("run_args", nargs=argparse.REMAINDER,
                   help="after --: the convbench run arguments every variant shares")
    args = p.parse_args(argv)
    run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
    if not run_args:
        p.error("no convbench run arguments: give them after --")
    for a in run_args:
        if a.split("=", 1)[0] in RESERVED:
            p.error(f"{a}: set by the rounds for every run; leave it out of the run arguments")
    if args.rounds < 1:
        p.error(f"--rounds {args.rounds}: at least 1")
    if args.threads is not None and args.threads < 1:
        p.error(f"--threads {args.threads}: at least 1")
    cpus = None
    if args.cpus is not None:
        try:
            cpus = sorted({int(c) for c in args.cpus.split(",")})
        except ValueError:
            p.error(f"--cpus {args.cpus}: CPU numbers separated by commas, e.g. 0,1")
        if not set(cpus) <= os.sched_getaffinity(0):
            p.error(f"--cpus {args.cpus}: not all of them are in this process's CPU set "
                    f"{sorted(os.sched_getaffinity(0))}")
    variants = []
    for v in args.variant:
        if len(v) < 2:
            p.error(f"--variant {' '.join(v)}: give a label and a convbench binary")
        label, binary, knobs = v[0], v[1], v[2:]
        if not label or not all(c.isalnum() or c in "-_." for c in label):
            p.error(f"--variant {label}: a label of letters, digits, '-', '_' and '.'")
        if any(label == w["label"] for w in variants):
            p.error(f"--variant {label}: the label is taken by another variant")
        for k in knobs:
            if "=" not in k:
                p.error(f"--variant {label}: {k} is not ALGO.KNOB=VALUE")
        variants.append({"label": label, "binary": binary, "knobs": knobs})
    if len(variants) < 2:
        p.error("give two or more --variant")
    return args, run_args, cpus, variants


def run_variant(args, run_args, cpus, variant, round_number, env):
    """One run of one variant; returns its record (the command, exit status, wall time)."""
    stem = f"{variant['label']}-round{round_number}"
    out, log = args.out / f"{stem}.csv", args.out / f"{stem}.log"
    command = [variant["binary"], "run", *run_args, "--format", "csv", "--out", str(out)]
    for k in variant["knobs"]:
        command += ["--knob", k]
    record = {"variant": variant["label"], "round": round_number,
              "command": " ".join(shell_word(w) for w in command), "csv": out.name}
    start = time.monotonic()
    try:
        with open(log, "x") as err:
            result = subprocess.run(
                command, env=env, stdout=subprocess.DEVNULL, stderr=err,
                preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
        record["exit_status"] = result.returncode
    except OSError as e:
        record["exit_status"] = None
        record["error"] = f"{variant['binary']}: {e.strerror}"
        with open(log, "a") as err:
            err.write(record["error"] + "\n")
    record["wall_s"] = round(time.monotonic() - start, 3)
    if "error" not in record and record["exit_status"] not in (0, 1):
        # convbench's own message (a bad knob, an unknown algorithm) ends its stderr.
        said = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
        record["error"] = f"exit status {record['exit_status']}" + (f": {said[-1]}" if said else "")
    # convbench exits 1 when some cases failed; their rows say so, the others count.
    record["ok"] = record["exit_status"] in (0, 1) and out.exists()
    return record


def times_of(path):
    """(layer, pass, algorithm) -> median ms of one run's CSV, the cases that ran."""
    _, rows = plot_sweep.read_rows(path)
    return {(r["layer"] or r["descriptor"], r["pass"], r["algorithm"]): float(r["time_ms"])
            for r in rows if r["status"] == "ok" and r["time_ms"]}


def read_times(args, runs):
    """label -> the per-round times of its runs that wrote a readable CSV; a run whose CSV
    cannot be read is marked failed, with the reason."""
    times = {}
    for r in runs:
        if not r["ok"]:
            continue
        try:
            times.setdefault(r["variant"], []).append(times_of(args.out / r["csv"]))
        except SystemExit as e:  # plot_sweep's reader exits with its message
            r["ok"], r["error"] = False, str(e)
    return times


def summarize(args, variants, times):
    cases = sorted({key for per_run in times.values() for run in per_run for key in run
                    if key[2] != args.against})
    first = variants[0]["label"]
    lines = ["| layer | pass | algorithm | variant | rounds | median ms (min–max) | "
             f"/ {first} |" + (f" speed vs {args.against}, per round |" if args.against else ""),
             "|---|---|---|---|---|---|---|" + ("---|" if args.against else "")]
    for layer, pas, algo in cases:
        base = None
        for v in variants:
            label = v["label"]
            mine = [run[(layer, pas, algo)] for run in times.get(label, [])
                    if (layer, pas, algo) in run]
            if not mine:
                lines.append(f"| {layer} | {pas} | {algo} | {label} | 0 | — | — |"
                             + (" — |" if args.against else ""))
                continue
            median = statistics.median(mine)
            base = median if label == first else base
            ratio = f"{median / base:.3f}" if base else "—"
            line = (f"| {layer} | {pas} | {algo} | {label} | {len(mine)} | {median:.4g} "
                    f"({min(mine):.4g}–{max(mine):.4g}) | {ratio} |")
            if args.against:
                speeds = [run[(layer, pas, args.against)] / run[(layer, pas, algo)]
                          for run in times.get(label, [])
                          if (layer, pas, algo) in run and (layer, pas, args.against) in run]
                line += (" " + "/".join(f"{s:.2f}" for s in speeds) + " |") if speeds else " — |"
            lines.append(line)
    return lines


def main(argv=None):
    args, run_args, cpus, variants = parse_args(argv)
    try:
        args.out.mkdir(parents=True, exist_ok=False)
    except FileExistsError:
        sys.exit(f"ab_rounds: {args.out} exists; name a new folder (nothing in it is replaced)")
    except OSError as e:
        sys.exit(f"ab_rounds: cannot create {args.out}: {e.strerror}")
    env = dict(os.environ)
    if args.threads is not None:
        env["CONVLAB_NUM_THREADS"] = str(args.threads)
    record = {"machine": cpu_record(), "environment": pinning_record(env),
              "cpus_used": cpus if cpus else sorted(os.sched_getaffinity(0)),
              "against": args.against, "variants": variants, "runs": []}
    load = [os.getloadavg()[0]]
    for n in range(1, args.rounds + 1):
        order = variants if n % 2 == 1 else variants[::-1]
        for v in order:
            run = run_variant(args, run_args, cpus, v, n, env)
            record["runs"].append(run)
            load.append(os.getloadavg()[0])
            if not run["ok"]:
                print(f"ab_rounds: {v['label']} round {n} failed "
                      f"({run.get('error') or 'no CSV written'}); see "
                      f"{args.out / (v['label'] + f'-round{n}.log')}", file=sys.stderr)
        if n == 1 and not any(r["ok"] for r in record["runs"]):
            print("ab_rounds: every run of the first round failed; no more rounds",
                  file=sys.stderr)
            break
    record["load_average_1min"] = [min(load), max(load)]
    machine = record["machine"]
    head = [f"# {' vs '.join(v['label'] for v in variants)}, {args.rounds} rounds", "",
            f"{machine['cpu']} (family {machine.get('cpu_family', '?')} model "
            f"{machine.get('cpu_model', '?')}), {machine['logical_cpus']} logical CPUs, ISA "
            f"{', '.join(machine['isa'])}; CPUs used {record['cpus_used']}; "
            f"CONVLAB_NUM_THREADS={record['environment']['CONVLAB_NUM_THREADS']}; load average "
            f"(1 min) {min(load):.1f}–{max(load):.1f}. Each run's commit, libraries and knobs "
            "are in its CSV's header.", ""]
    for v in variants:
        head.append(f"- {v['label']}: `{v['binary']}`"
                    + (f", {', '.join(v['knobs'])}" if v["knobs"] else ""))
    head += ["", "Run arguments: `" + " ".join(shell_word(a) for a in run_args) + "`", ""]
    times = read_times(args, record["runs"])
    summary = head + summarize(args, variants, times)
    if args.against and not any(k[2] == args.against for per_run in times.values()
                                for run in per_run for k in run):
        summary += ["", f"No run timed {args.against}: add it to the run's --algos for the "
                        "speeds."]
    failed = [r for r in record["runs"] if not r["ok"]]
    if failed:
        summary += ["", "Failed runs, left out above (their logs are beside the CSVs):"]
    for r in failed:
        summary.append(f"- {r['variant']} round {r['round']}: {r.get('error') or 'no CSV'}")
    with open(args.out / "record.json", "x") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    with open(args.out / "summary.md", "x") as f:
        f.write("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 0 if all(r["ok"] for r in record["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
