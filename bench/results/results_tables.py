"""The tables, figures and findings of docs/results.md, computed from convbench CSVs.

Findings are computed from the same rows as the tables, and a difference is called a win or
a loss only where the two rows' repetition ranges do not overlap (the rule of `convbench
compare`); otherwise the text says the two are within noise.
"""

import math
import pathlib
import statistics
import subprocess
import sys
from collections import OrderedDict

import plot_sweep

ALGORITHMS = ["cpu.im2col", "cpu.winograd", "cpu.fft", "cpu.fft_tiled", "cpu.onednn.direct",
              "cpu.onednn.winograd", "cpu.onednn"]
BASELINE = "cpu.onednn"
# Each strategy of convlab's own beside the vendor's kernel of the same strategy, where oneDNN
# has one; FFT has none, so the FFT strategies stand beside oneDNN's own choice.
COUNTERPART = OrderedDict([("cpu.im2col", "cpu.onednn.direct"),
                           ("cpu.winograd", "cpu.onednn.winograd"),
                           ("cpu.fft", BASELINE), ("cpu.fft_tiled", BASELINE)])
PASSES = ["fwd", "bwd_data", "bwd_filter"]
# AMD's family 19h (Zen 3 and Zen 4); models 10h-1Fh are Zen 4 "Genoa" (EPYC 9004). Family
# 1Ah is Zen 5, whose models 00h-0Fh are "Turin" (EPYC 9005). Family 17h model 01h is Zen 1
# "Naples" (EPYC 7001).
MICROARCHITECTURE = {**{(25, m): "Zen 4, EPYC 9004 \"Genoa\"" for m in range(0x10, 0x20)},
                     **{(26, m): "Zen 5, EPYC 9005 \"Turin\"" for m in range(0x00, 0x10)},
                     (23, 0x01): "Zen 1, EPYC 7001 \"Naples\"",
                     (6, 0x8F): "Sapphire Rapids, 4th-generation Xeon Scalable",
                     (6, 0xCF): "Emerald Rapids, 5th-generation Xeon Scalable"}


def timing(row):
    return plot_sweep.timing(row) if row else None


def ms(row):
    t = timing(row)
    if not t:
        return row["status"] if row else "-"
    return f"{t[0]:.3g} [{t[1]:.3g}–{t[2]:.3g}]"


def separated(a, b):
    """+1 when every repetition of a is slower than every one of b, -1 the reverse, 0 overlap."""
    ta, tb = timing(a), timing(b)
    if not (ta and tb):
        return None
    if ta[1] > tb[2]:
        return 1
    if ta[2] < tb[1]:
        return -1
    return 0


def speed_ratio(row, baseline):
    """baseline median / row median (> 1: row faster), with '≈' when the ranges overlap."""
    t, b = timing(row), timing(baseline)
    if not (t and b):
        return "-", None
    ratio = b[0] / t[0]
    mark = "≈" if separated(row, baseline) == 0 else ""
    return f"{mark}{ratio:.2f}×", ratio


def index(rows):
    """(layer, pass) -> algorithm -> row, in sweep order."""
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((r["layer"] or r["descriptor"], r["pass"]), {})[r["algorithm"]] = r
    return groups


def kernel(row):
    f = plot_sweep.descriptor_fields(row["descriptor"])
    return f.get("kh"), f.get("kw"), f.get("sh")


def fastest(group):
    """The fastest by median, and whether its range is clear of every other's."""
    timed = [(timing(r)[0], a) for a, r in group.items() if timing(r)]
    if not timed:
        return "-"
    best = min(timed)[1]
    clear = all(separated(group[a], group[best]) == 1 for _, a in timed if a != best)
    return best if clear else f"{best} (≈ " + ", ".join(
        a for _, a in timed if a != best and separated(group[a], group[best]) == 0) + ")"


def onednn_kernel(group):
    """The implementation oneDNN ran for cpu.onednn: its row's plan_kernel."""
    row = group.get(BASELINE)
    return (row or {}).get("plan_kernel") or "not recorded"


def workspace_ratio(row, base):
    if not (row and base) or plot_sweep.number(row["workspace_bytes"]) is None:
        return "-"
    w, b = plot_sweep.number(row["workspace_bytes"]), plot_sweep.number(base["workspace_bytes"])
    return f"{w / b:.1f}×" if b else f"{w / 2**20:.0f} MiB vs 0"


def sweep_table(rows):
    """Two tables: every algorithm's time, then each own strategy against its counterpart."""
    head = ("| layer | kernel | pass | " + " | ".join(f"{a} ms [min–max]" for a in ALGORITHMS) +
            " |")
    times = [head, "|" + "---|" * (head.count("|") - 1)]
    head = ("| layer | pass | cpu.onednn ran | " +
            " | ".join(f"{a} vs {b}" for a, b in COUNTERPART.items()) +
            " | fastest | workspace vs cpu.im2col: fft, fft_tiled, winograd |")
    ratios = [head, "|" + "---|" * (head.count("|") - 1)]
    for (layer, pass_name), group in index(rows).items():
        kh, kw, sh = kernel(next(iter(group.values())))
        name = layer.split(":")[-1]
        times.append("| " + " | ".join([
            name, f"{kh}×{kw}" + (f" s{sh}" if sh and sh > 1 else ""), pass_name,
            *[ms(group.get(a)) for a in ALGORITHMS]]) + " |")
        im2col = group.get("cpu.im2col")
        ratios.append("| " + " | ".join([
            name, pass_name, f"`{onednn_kernel(group)}`",
            *[speed_ratio(group.get(a), group.get(b))[0] for a, b in COUNTERPART.items()],
            fastest(group), ", ".join(workspace_ratio(group.get(a), im2col) for a in
                                      ("cpu.fft", "cpu.fft_tiled", "cpu.winograd"))]) + " |")
    return "\n".join(times) + "\n\nSpeed of each own strategy against its counterpart " \
        "(counterpart's median / own median: above 1 the own strategy is faster):\n\n" + \
        "\n".join(ratios)


def ratio_range(rows, algorithm, keep):
    """Min and max of counterpart/algorithm over the (layer, pass) groups `keep` accepts."""
    ratios = []
    for group in index(rows).values():
        row = group.get(algorithm)
        if row and keep(row):
            r = speed_ratio(row, group.get(COUNTERPART[algorithm]))[1]
            if r is not None:
                ratios.append(r)
    return (min(ratios), max(ratios), len(ratios)) if ratios else None


def wins(rows):
    """algorithm -> number of (layer, pass) groups where it is fastest clear of the others."""
    counts = {a: 0 for a in ALGORITHMS}
    ties = 0
    for group in index(rows).values():
        best = fastest(group)
        if best in counts:
            counts[best] += 1
        else:
            ties += 1
    return counts, ties, len(index(rows))


def describe_range(found, what, algorithm):
    if not found:
        return f"{what}: no case measured"
    lo, hi, n = found
    return (f"{what}: {lo:.2f}–{hi:.2f}× the speed of {COUNTERPART[algorithm]} "
            f"({n} layer × pass cases)")


def findings(name, rows, machine_line):
    counts, ties, total = wins(rows)
    out = [f"On {machine_line}, over the {total} layer × pass cases of this sweep:"]
    out.append("- fastest with a range clear of the others: " + ", ".join(
        f"{a} {n}" for a, n in counts.items()) + f"; {ties} with the fastest within noise of "
        "another")
    for algorithm in ("cpu.fft", "cpu.fft_tiled"):
        for what, keep in ((f"{algorithm} on kernels 5×5 and larger", lambda k: k >= 5),
                           (f"{algorithm} on 3×3 kernels", lambda k: k == 3),
                           (f"{algorithm} on 1×1 kernels", lambda k: k == 1)):
            found = ratio_range(rows, algorithm, lambda r, keep=keep: keep(kernel(r)[0] or 0))
            out.append("- " + describe_range(found, what, algorithm))
    out.append("- " + describe_range(ratio_range(rows, "cpu.winograd", lambda r: True),
                                     "cpu.winograd where it runs (3×3, stride 1)", "cpu.winograd"))
    out.append("- " + describe_range(ratio_range(rows, "cpu.im2col", lambda r: True),
                                     "cpu.im2col on every layer", "cpu.im2col"))
    return "\n".join(out)


def crossover_table(rows):
    by_kh = OrderedDict()
    for r in rows:
        by_kh.setdefault(kernel(r)[0], {})[r["algorithm"]] = r
    head = ("| kh | " + " | ".join(f"{a} ms [min–max]" for a in ALGORITHMS) + " | " +
            " | ".join(f"{a} MiB" for a in ALGORITHMS) + " |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for kh, group in sorted(by_kh.items()):
        mem = [plot_sweep.mib(plot_sweep.number(group[a]["total_bytes"])) if a in group else None
               for a in ALGORITHMS]
        lines.append("| " + " | ".join([str(kh), *[ms(group.get(a)) for a in ALGORITHMS],
                                        *[f"{m:.1f}" if m else "-" for m in mem]]) + " |")
    # The first kh from which FFT stays faster (clear of noise) than im2col, and the first
    # from which its memory is smaller.
    time_cross = mem_cross = None
    for kh, group in sorted(by_kh.items()):
        s = separated(group.get("cpu.im2col"), group.get("cpu.fft"))
        if s == 1 and time_cross is None:
            time_cross = kh
        elif s != 1:
            time_cross = None
        fi = plot_sweep.number(group["cpu.fft"]["total_bytes"]) if "cpu.fft" in group else None
        ii = plot_sweep.number(group["cpu.im2col"]["total_bytes"]) if "cpu.im2col" in group else None
        if fi is not None and ii is not None and fi < ii and mem_cross is None:
            mem_cross = kh
        elif fi is not None and ii is not None and fi >= ii:
            mem_cross = None
    return "\n".join(lines), time_cross, mem_cross


def noise_summary(all_rows):
    cvs = [plot_sweep.number(r.get("cv")) for r in all_rows if r["status"] == "ok"]
    cvs = [c for c in cvs if c is not None]
    spreads = [timing(r)[2] / timing(r)[1] for r in all_rows if timing(r) and timing(r)[1] > 0]
    return (statistics.median(cvs), max(cvs), statistics.median(spreads), max(spreads),
            len(cvs))


def figures(data, img, docs, suffix):
    """The figures of one measurement (PNG; plot_sweep.py makes SVG for papers too)."""
    img.mkdir(parents=True, exist_ok=True)
    made = {}
    plots = {
        "crossover": ("crossover", ["--kind", "crossover"]),
        "frontier-resnet50": ("resnet50", ["--kind", "frontier", "--pass", "fwd"]),
        "frontier-convnet": ("convnet", ["--kind", "frontier", "--pass", "fwd"]),
        "speedup-resnet50": ("resnet50", ["--kind", "speedup", "--baseline", BASELINE]),
    }
    for name, (sweep, extra) in plots.items():
        outputs = [img / f"results-{name}{suffix}.png"]
        command = [sys.executable, str(pathlib.Path(plot_sweep.__file__)),
                   str(data / f"{sweep}.csv"), *sum((["-o", str(o)] for o in outputs), []), *extra]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        made[name] = outputs[0].relative_to(docs)
    return made


def machine_line(machine):
    m = machine["machine"]
    arch = MICROARCHITECTURE.get((m.get("cpu_family"), m.get("cpu_model")), "")
    isa = "AVX-512" if "avx512f" in m["isa"] else ("AVX2" if "avx2" in m["isa"] else "SSE")
    return (f"the {m['logical_cpus']}-CPU {m['cpu']} VM ({arch + ', ' if arch else ''}{isa}), "
            f"{threads_label(machine['environment']['CONVLAB_NUM_THREADS'])}")


def threads_label(n):
    return f"{n} thread" + ("" if str(n) == "1" else "s")


def thread_scaling(datasets):
    """Per algorithm, the median over cases of (time at the most threads / time at 1 thread)."""
    if len(datasets) < 2:
        return ""
    low, high = datasets[0], datasets[-1]
    ratios = {}
    for name in ("convnet", "resnet50", "crossover"):
        one = {(r["descriptor"], r["pass"], r["algorithm"]): r for r in low[3][name][1]}
        for r in high[3][name][1]:
            a, b = timing(one.get((r["descriptor"], r["pass"], r["algorithm"]))), timing(r)
            if a and b:
                ratios.setdefault(r["algorithm"], []).append(b[0] / a[0])
    return ("Time at {} over time at {}, median over the cases of all three sweeps: ".format(
        high[0], low[0]) + ", ".join(f"{a} {statistics.median(v):.2f}× ({len(v)} cases)"
                                     for a, v in ratios.items()) + ".")


def load_note(loads, cpus, threads):
    """The load range, and whether other work ran beside convbench (whose own threads count)."""
    text = f"{min(loads):.1f}–{max(loads):.1f} on {cpus} CPUs, convbench's own threads included"
    try:
        own = int(threads)
    except ValueError:
        own = cpus
    if max(loads) > own + 1:
        return text + ": other work shared the machine, so times are stretched and noisy"
    return text + ": little else ran beside it"


def machine_table(machine, meta):
    m, env = machine["machine"], machine["environment"]
    arch = MICROARCHITECTURE.get((m.get("cpu_family"), m.get("cpu_model")), "not identified")
    pinned = [f"{k}={v}" for k, v in env.items() if v != "unset" and k != "CONVLAB_NUM_THREADS"]
    loads = [s["load_before"][0] for s in machine["sweeps"].values()] + \
            [s["load_after"][0] for s in machine["sweeps"].values()]
    rows = [
        ("CPU", f"{m['cpu']} (/proc/cpuinfo: family {m.get('cpu_family', '?')}, model "
                f"{m.get('cpu_model', '?')}, stepping {m.get('cpu_stepping', '?')}: {arch})"),
        ("logical CPUs / affinity", f"{m['logical_cpus']} / CPUs {m['affinity']}"),
        ("ISA extensions", ", ".join(m["isa"])),
        ("caches (CPU 0)", m.get("caches", "not recorded")),
        ("transparent huge pages", m.get("transparent_hugepage", "not recorded")),
        ("threads", f"CONVLAB_NUM_THREADS={env['CONVLAB_NUM_THREADS']}; convbench reports "
                    f"`{meta.get('devices', '?')}`"),
        ("thread pinning", ("; ".join(pinned) if pinned else
                            "none: no OMP_PROC_BIND/OMP_PLACES/GOMP_CPU_AFFINITY, threads float "
                            "over the affinity set")),
        ("libraries", meta.get("libraries", "?")),
        ("compiler, build", f"{meta.get('compiler', '?')}, {meta.get('build_type', '?')}"),
        ("kernel", m.get("kernel", "?")),
        ("commit, date", f"{meta.get('git_commit', '?')}, {meta.get('date', '?')}"),
        ("load average (1 min) while measuring", load_note(loads, m["logical_cpus"],
                                                           env["CONVLAB_NUM_THREADS"])),
    ]
    return "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)


def document(datasets, specs, img, docs):
    """docs/results.md from [(label, data dir, machine record, {sweep: (meta, rows)})]."""
    docs = pathlib.Path(docs).resolve()
    first_machine, first_meta = datasets[0][2], datasets[0][3]["convnet"][0]
    source = pathlib.Path(datasets[0][1]).resolve().parent
    try:
        source = source.relative_to(pathlib.Path(__file__).resolve().parents[2])
    except ValueError:
        pass
    all_rows = [r for *_, sweeps in datasets for _, rows in sweeps.values() for r in rows]
    cv_med, cv_max, spread_med, spread_max, n_ok = noise_summary(all_rows)
    reps = first_meta.get("reps", "?")
    labels = ", ".join(label for label, *_ in datasets)
    parts = [f"""# Results

<!-- Generated by bench/results/make_results.py from {source}/; edit the script, not this
file. -->

Measured CPU times of convlab's strategies against oneDNN, and nothing else: every number
and every claim below was measured on one machine, {machine_line(first_machine).rsplit(",", 1)[0]},
at {labels}, and says nothing about another CPU. Measurements on an Intel Xeon with AVX-512
reported elsewhere disagree with earlier claims made from this VM (on 1×1 layers, and on
3×3 layers where oneDNN may choose Winograd); the tables here are the evidence for this
machine only. **No GPU was measured.**

Regenerate (measuring takes about 15 minutes on this machine under load; `--from` rewrites
the page from the stored CSVs without measuring):

```
/usr/bin/python3 bench/results/make_results.py --convbench build/release/bench/convbench
/usr/bin/python3 bench/results/make_results.py --from {source}
```

## The machine

{machine_table(first_machine, first_meta)}

## Method

Each case: one untimed warm-up, then {reps} timed repetitions (`--reps {reps} --max-time 0`,
so every case has all {reps}); a time is the median, `[min–max]` the fastest and slowest
repetition. Ratios compare two algorithms of the same layer and pass **in the same run**:
each strategy of convlab's own against oneDNN's kernel of the same strategy (cpu.im2col
against `cpu.onednn.direct`, cpu.winograd against `cpu.onednn.winograd`) and the FFT
strategies, which oneDNN lacks, against oneDNN's own choice (`cpu.onednn`); the counterpart's
median / the algorithm's median, so above 1 the algorithm is faster. A ratio marked
`≈` has overlapping ranges: the difference is within the noise of the two rows, as
`convbench compare` would report it, and no claim is made from it. "Fastest" names the
fastest median, followed by `(≈ …)` for the algorithms whose range overlaps it.

Noise over the {n_ok} measured rows: coefficient of variation median {cv_med:.1%} (largest
{cv_max:.1%}); max/min of the repetitions median {spread_med:.2f}× (largest
{spread_max:.2f}×). The machine was shared while measuring (load average in the table
above): preempted threads stretch times, and a multi-threaded kernel that waits at barriers
for a preempted thread suffers more than a single-threaded one, so the ratios at 2 threads
can mix the kernels' speed with their sensitivity to preemption; the 1-thread tables are the
steadier comparison of the kernels themselves. {thread_scaling(datasets)} Above 1, the
second thread made the case slower here; these tables cannot tell how much of that is
preemption and how much the kernels' own scaling.

`cpu.onednn` is oneDNN's own choice (`convolution_auto`); the implementation it ran for
each case is the `cpu.onednn ran` column, read from the row's plan info (`plan_kernel`, what
oneDNN reports for the primitive it made).
"""]
    for name in ("convnet", "resnet50"):
        parts.append(f"## {specs[name][0]}\n")
        for label, data, machine, sweeps in datasets:
            rows = sweeps[name][1]
            record = machine["sweeps"][name]
            parts.append(f"""### At {label}

```
{record['command']}
```

{len(rows)} rows in {record['wall_s']:.0f} s, load average {record['load_before'][0]:.1f} before,
{record['load_after'][0]:.1f} after.

{sweep_table(rows)}

{findings(name, rows, machine_line(machine))}
""")
    parts.append(f"## {specs['crossover'][0]}\n")
    for label, data, machine, sweeps in datasets:
        crossover, time_cross, mem_cross = crossover_table(sweeps["crossover"][1])
        suffix = "-" + label.replace(" ", "")
        made = figures(pathlib.Path(data), pathlib.Path(img), docs, suffix)
        time_text = (f"cpu.fft is faster than cpu.im2col, clear of noise, from kh = {time_cross}"
                     " on" if time_cross is not None else
                     "cpu.fft is not faster than cpu.im2col clear of noise at the largest kh")
        mem_text = (f"cpu.fft needs less memory than cpu.im2col from kh = {mem_cross} on"
                    if mem_cross is not None else
                    "cpu.fft needs more memory than cpu.im2col at the largest kh measured")
        parts.append(f"""### At {label}

```
{machine['sweeps']['crossover']['command']}
/usr/bin/python3 bench/plot_sweep.py {pathlib.Path(machine['sweeps']['crossover']['command'].rsplit(' ', 1)[-1])} -o docs/{made['crossover']}
```

{crossover}

On {machine_line(machine)}: {time_text}; {mem_text}.

![forward time and memory against kh, {label}](<{made['crossover']}>)

Memory/speed frontier at {label}: time against workspace, one point per algorithm (median,
min–max bar), forward pass; the dashed line joins the points that no other point beats on
both time and workspace.

![memory/speed frontier, ResNet-50 layers, {label}](<{made['frontier-resnet50']}>)

![memory/speed frontier, convnet-benchmarks, {label}](<{made['frontier-convnet']}>)

Speed-up over oneDNN per ResNet-50 layer and pass at {label} (error bars: the widest ratio
the two ranges allow):

![speed-up over cpu.onednn, ResNet-50 layers, {label}](<{made['speedup-resnet50']}>)
""")
    parts.append(f"""## What these tables do not show

- Any GPU: none was available; `scripts/gpu_check` is the way to measure one.
- Any other CPU: ratios between strategies depend on the ISA, the cache sizes and which
  implementation oneDNN picks there; see the `cpu.onednn ran` column for this machine's.
- Batch sizes other than {first_meta.get('mb', '?')}, thread counts other than {labels},
  pinned threads, and an idle machine: the load average stretched every time; ratios from
  the same run are the steadier figure.
- oneDNN's Winograd where oneDNN has none for the problem (its rows say `unsupported`, with
  oneDNN's reason in the CSV), and convlab's Winograd off 3×3 stride-1 layers (refused).
""")
    return "\n".join(parts)
