"""frameworks.py - the framework suite's report (`make frameworks`, scripts/frameworks.sh).

    frameworks.py FW.csv [--replay REPLAY.csv] [--synth SYNTH.csv --match WORKLOAD PROGRAM ...]
                  [--profile-dir DIR] [-o OUT.md]
    frameworks.py --worst PROGRAM FW.csv   # the label of PROGRAM's lowest-throughput configuration

Says in sentences which allocators re-fault, what share of CPU goes to the kernel, which labelled
setting fixes it and its peak-RSS cost; then the tables: programs x configurations, the served
model, replay fidelity, synthetic prediction.  Reads CSVs only; every figure comes from the
data layer (mbdata), the estimators (stats) and the suite's statistics below.  Bad input: one
line on stderr, exit 2.
"""
import argparse
import glob
import os
import sys

from . import change
from . import cli
from . import mbcsv
from . import mbdata
from . import mbout
from . import programs
from . import stats
from . import words



REGION_FAULTS = mbdata.metric_fn("region_faults")
TOTAL_FAULTS = mbdata.metric_fn("total_faults")


col = mbdata.column


# ---- the suite's statistics: medians, modes, rankings, fidelity ------------------------------

MODE_GAP = 3.0      # sorted per-sample values this far apart (ratio) split into two modes
FIDELITY_TOL = 0.10  # replay faults within 10% of the real program's


median_of = mbdata.median_of


def worst_config(groups, baseline):
    """The label of the configuration with the lowest median throughput against the
    baseline's in {config: [rows]} (the baseline itself, 1.0, when every other is faster);
    None without a baseline."""
    base = median_of(groups.get(baseline, []), col("throughput"))
    if not base:
        return None
    ratios = [(median_of(rs, col("throughput")) / base, c) for c, rs in groups.items()
              if median_of(rs, col("throughput"))]
    return mbdata.config_label(min(ratios)[1]) if ratios else None


def modes(values, gap=MODE_GAP):
    """[(median, count)] of the modes of per-sample values: one mode, or two when the sorted
    values jump by a factor of GAP or more (glibc on elementwise.py: 98k and 1.1M faults).
    The largest jump splits; [] for no values."""
    vals = sorted(v for v in values if v is not None)
    if not vals:
        return []
    jumps = [(vals[i + 1] / vals[i] if vals[i] > 0 else (float("inf") if vals[i + 1] > 0 else 1), i)
             for i in range(len(vals) - 1)]
    big = max(jumps, default=(1, 0))
    parts = [vals[:big[1] + 1], vals[big[1] + 1:]] if big[0] >= gap else [vals]
    return [(median_of([{"v": v} for v in p], lambda r: r["v"]), len(p)) for p in parts]


def kendall_tau(a, b):
    """Kendall's tau (tau-b, scipy) between two {key: value} over their common keys; None
    with fewer than two common keys or no variation."""
    stats.require_scipy()
    from scipy.stats import kendalltau
    keys = [k for k in a if k in b and a[k] is not None and b[k] is not None]
    if len(keys) < 2:
        return None
    tau = kendalltau([a[k] for k in keys], [b[k] for k in keys])[0]
    return None if tau != tau else float(tau)


def best_worst(values):
    """(best, worst) keys of {key: throughput}, highest and lowest; (None, None) when empty."""
    vals = {k: v for k, v in values.items() if v is not None}
    if not vals:
        return None, None
    return max(vals, key=lambda k: (vals[k], k)), min(vals, key=lambda k: (vals[k], k))


def within(value, ref, tol=FIDELITY_TOL):
    """value within tol (a share) of ref; None when either is missing."""
    if value is None or ref is None:
        return None
    return abs(value - ref) <= tol * ref if ref else value == 0


def load(path, what):
    try:
        run = mbdata.load(path)
    except mbcsv.CsvError as e:
        raise cli.Fail(f"{what}: {e}", mbcsv.EXIT_BAD_INPUT) from None
    except OSError as e:
        raise cli.Fail(f"cannot read {what} '{path}': {e.strerror}", mbcsv.EXIT_BAD_INPUT) from None
    if not run.ok:
        raise cli.Fail(f"{what} '{path}' has no ok rows", mbcsv.EXIT_BAD_INPUT)
    return run


def k(v):
    """A count as compare writes a value (words.fmt_count): 557 k / 1.10 M / 812."""
    return "–" if v is None else words.fmt_count(v)


def pct(v):
    return "–" if v is None else f"{100 * v:.0f}%"


def mib(v):
    return "–" if v is None else f"{v:.0f} MiB"


def ratio_text(cell):
    """A pair as every view prints it (words.change_words), with its CI (words.with_ci)."""
    return words.with_ci(cell)


def modes_text(rows, fn):
    ms = modes([fn(r) for r in rows])
    if len(ms) == 2:
        return "bimodal: " + " / ".join(f"{k(m)} ×{n}" for m, n in ms)
    return k(ms[0][0]) if ms else "–"


# ---- sentences -------------------------------------------------------------------------

def findings(run, progs, base):
    """The seed's story in sentences, per program where some configuration re-faults."""
    out = []
    lab = mbdata.config_label
    for prog, groups in progs.items():
        fl = {c: median_of(rs, REGION_FAULTS) for c, rs in groups.items()}
        fl = {c: v for c, v in fl.items() if v is not None}
        if not fl:
            continue
        low_c = min(fl, key=lambda c: (fl[c], c))
        low = max(fl[low_c], 1)
        bimodal = set()
        for c, rs in groups.items():
            ms = modes([REGION_FAULTS(r) for r in rs])
            if len(ms) == 2:
                bimodal.add(c)
                out.append(f"**{prog}** under {lab(c)} is bimodal in its faults: {ms[0][1]} run(s) near "
                           f"{k(ms[0][0])} and {ms[1][1]} near {k(ms[1][0])}; its median would hide this, "
                           "so the tables give both modes.")
        for c, cfg in run.configs.items():
            if c not in fl or cfg.tunables or fl[c] < 3 * low or c in bimodal:
                continue
            sys_c = median_of(groups[c], mbdata.sys_share)
            sys_b = median_of(groups.get(base, []), mbdata.sys_share)
            s = (f"**{prog}**: {lab(c)} re-faults — {k(fl[c])} page faults per run in the measured region, "
                 f"{fl[c] / low:.1f}× the lowest ({lab(low_c)}, {k(fl[low_c])}); "
                 f"{pct(sys_c)} of its CPU time in the region is the kernel's (sys / (user+sys))"
                 + (f", against {pct(sys_b)} under {lab(base)}." if base in groups and c != base else "."))
            fixes = [(fl[f], f) for f in fl if run.family_default(f) == c and fl[f] < fl[c] / 3]
            if fixes:
                _, f = min(fixes)
                r_c = median_of(groups[c], mbdata.peak_memory_mib)
                r_f = median_of(groups[f], mbdata.peak_memory_mib)
                mem = mbdata.peak_memory_name(groups[c] + groups[f])
                cost = (f"{mem} {mib(r_c)} → {mib(r_f)} ({r_f - r_c:+.0f} MiB, {(r_f / r_c - 1) * 100:+.0f}%)"
                        if r_c and r_f else f"{mem} not measured")
                ch = change.pair(groups.get(base, []), groups[f]) if base in groups else None
                s += (f" The labelled setting **{lab(f)}** ({run.configs[f].tunables}) fixes it: "
                      f"{k(fl[c])} → {k(fl[f])} faults, throughput {ratio_text(ch)} of {lab(base)}'s; it costs "
                      f"{cost}.")
            else:
                tried = [lab(f) for f in fl if run.family_default(f) == c]
                s += (f" None of its labelled settings fixes it ({', '.join(tried)} tried)." if tried
                      else " No labelled setting of its family was run.")
            out.append(s)
    return out


# ---- tables ------------------------------------------------------------------------------

def main_table(run, progs, base):
    lab = mbdata.config_label
    lines = ["| program | configuration | vs " + lab(base or "?") + " (95% CI) | region faults | sys% | "
             + mbdata.peak_memory_name(run.rows) + " |",
             "|---|---|---|---|---|---|"]
    for prog, groups in progs.items():
        for c in sorted(groups, key=run.config_rank):
            rs = groups[c]
            ch = change.pair(groups[base], rs) if base in groups and c != base else None
            rt = "baseline" if c == base else ratio_text(ch)
            lines.append(f"| {prog} | {lab(c)} | {rt} | {modes_text(rs, REGION_FAULTS)} | "
                         f"{pct(median_of(rs, mbdata.sys_share))} | "
                         f"{mib(median_of(rs, mbdata.peak_memory_mib))} |")
    return lines


def serve_table(run, base):
    served = programs.by_program([r for r in run.ok if programs.is_served(r)])
    if not served:
        return ["No served-model rows in this run."]
    lab = mbdata.config_label
    lines = ["| program | configuration | requests/s | vs " + lab(base or "?") + " | p99 |", "|---|---|---|---|---|"]
    for prog, groups in served.items():
        for c in sorted(groups, key=run.config_rank):
            rs = groups[c]
            p99 = median_of(rs, col("latency_p99_us"))
            ch = change.pair(groups[base], rs) if base in groups and c != base else None
            lines.append(f"| {prog} | {lab(c)} | {median_of(rs, col('throughput')):.1f} | "
                         f"{'baseline' if c == base else ratio_text(ch)} | "
                         f"{'not measured (exec rows carry none)' if p99 is None else f'{p99 / 1000:.1f} ms'} |")
    return lines


def rank_line(what, real, other, defaults=()):
    """Kendall's tau and the best and worst of every configuration; then the same among
    the families' defaults (defaults: their labels), where two settings of one family
    (tcmalloc and tc-keep) can no longer swap first place within their noise."""
    lab = mbdata.config_label
    kind = what.split(" ")[0]

    def compare(a, b):
        tau = kendall_tau(a, b)
        ab, aw = best_worst(a)
        bb, bw = best_worst(b)
        same = "yes" if (ab, aw) == (bb, bw) else "no"
        return (f"Kendall's tau of the throughput ranking {'–' if tau is None else f'{tau:.2f}'}; "
                f"best/worst real {lab(ab or '–')}/{lab(aw or '–')}, {kind} "
                f"{lab(bb or '–')}/{lab(bw or '–')}: same best and worst: {same}")

    line = f"{what}: {compare(real, other)}"
    fam = [c for c in defaults if c in real and c in other]
    if len(fam) > 2:
        line += (f"; among the {len(fam)} families' defaults: "
                 f"{compare({c: real[c] for c in fam}, {c: other[c] for c in fam})}")
    return line + "."


def replay_timing(r):
    """The replay row's pacing: fast (each call as soon as it may) or recorded (each call not
    before its recorded time)."""
    return dict(mbdata.parse_params(r["workload_params"])).get("timing", "fast")


def family_defaults(run):
    """The labels of the configurations that run a family with its defaults (setting_text
    'defaults': no tunables, and a label that is the family's name)."""
    return [c.name for c in run.configs.values() if mbdata.setting_text(c) == "defaults"]


def fidelity(run, progs, rep):
    lab = mbdata.config_label
    # counts from the replay paced as recorded where there is one (an allocator that purges
    # on a timer sees the program's time), the throughput ranking from the fast replay
    fast = programs.by_program([r for r in rep.ok if replay_timing(r) == "fast"])
    paced = programs.by_program([r for r in rep.ok if replay_timing(r) == "recorded"])
    rprogs = {p: paced.get(p) or fast.get(p) for p in list(paced) + [p for p in fast if p not in paced]}
    lines = ["Each program marks its loop as its region (include/mallocbench.h); `record` keeps the "
             "region in the trace, and the replay measures the calls between its edges (region=recorded), "
             "replaying those before and after it unmeasured. Like with like is then the replay's region "
             "against the real program's **region**; where a trace has no region the replay is the whole "
             "trace and is held against the real **whole process** (`total_*`, marked *whole*). The counts "
             "are those of the replay paced as recorded (timing=recorded), where it ran: an allocator that "
             "purges on a timer (mimalloc) purges in it as in the program; the ranking is the fast "
             "replay's (timing=fast), whose throughput is the allocator's own. The replay "
             "writes one byte in every page of each block (touch=page), which the program may not do, "
             "gives a block the huge-page advice the program gave it (numpy's madvise), and replays no "
             "page the interpreter or its libraries touch outside malloc, so it can fall short or exceed.",
             "",
             "| program | configuration | faults: replay | real (same span) | real region | within 10% | "
             "madvise/munmap/brk: replay | real (same span) | peak memory: replay (RSS) | real ("
             + mbdata.peak_memory_name(run.rows) + ") |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    notes = []
    med = median_of
    for prog, rgroups in rprogs.items():
        groups = progs.get(prog)
        if not groups:
            notes.append(f"{prog}: replayed, but fw.csv has no ok rows of the program.")
            continue
        for c in sorted(rgroups, key=run.config_rank):
            rr, real = rgroups[c], groups.get(c, [])
            same = programs.replay_region(rr)  # the region against the region, else against the whole
            against, span = (REGION_FAULTS, "region") if same else (TOTAL_FAULTS, "total")
            f_rep, f_tot = med(rr, REGION_FAULTS), med(real, against)
            ok = within(f_rep, f_tot)
            sc = lambda rows, p: "/".join(k(med(rows, col(f"{p}_{s}_calls"))) for s in ("madvise", "munmap", "brk"))
            lines.append(f"| {prog} | {lab(c)} | {modes_text(rr, REGION_FAULTS)} | "
                         f"{modes_text(real, against)}{'' if same else ' (whole)'} | "
                         f"{modes_text(real, REGION_FAULTS)} | "
                         f"{'–' if ok is None else ('yes' if ok else 'no')} | {sc(rr, 'region')} | "
                         f"{sc(real, span)} | {mib(med(rr, mbdata.peak_memory_mib))} | "
                         f"{mib(med(real, mbdata.peak_memory_mib))} |")
        ranked = fast.get(prog)
        if ranked:
            notes.append(rank_line(f"replay of {prog}",
                                   {c: med(rs, col("throughput")) for c, rs in groups.items()},
                                   {c: med(rs, col("throughput")) for c, rs in ranked.items()},
                                   family_defaults(run)))
        else:
            notes.append(f"replay of {prog}: no fast replay (timing=fast) to rank the allocators by.")
    return lines + [""] + [f"- {n}" for n in notes]


def synthetic(run, progs, syn, base, match):
    lab = mbdata.config_label
    med = median_of
    sgroups = {}
    for r in syn.ok:
        prog, traced = programs.synth_program(r, match)
        if prog:
            name = f"{r['workload']}({r['workload_params']})"
            sgroups.setdefault((name, prog, traced), {}).setdefault(r["config"], []).append(r)
    if not sgroups:
        return ["No synthetic rows matched a program."]
    lines = ["| synthetic | program | configuration | synthetic vs " + lab(base or "?") + " | program vs "
             + lab(base or "?") + " |", "|---|---|---|---|---|"]
    notes = []
    for (name, prog, traced), groups in sgroups.items():
        real = progs.get(prog, {})
        for c in sorted(groups, key=run.config_rank):
            s = change.pair(groups[base], groups[c]) if base in groups and c != base else None
            p = change.pair(real[base], real[c]) if base in real and c in real and c != base else None
            one = "baseline" if c == base else None
            lines.append(f"| {mbcsv.unguard(name)}{' (from a trace)' if traced else ''} | {prog} | {lab(c)} | "
                         f"{one or ratio_text(s)} | {one or ratio_text(p)} |")
        notes.append(rank_line(f"synthetic {name} for {prog}",
                               {c: med(rs, col("throughput")) for c, rs in real.items()},
                               {c: med(rs, col("throughput")) for c, rs in groups.items()},
                               family_defaults(run)))
    return lines + [""] + [f"- {n}" for n in notes]


def flame_links(profile_dir, out_path):
    svgs = sorted(glob.glob(os.path.join(profile_dir, "*.svg"))) if profile_dir else []
    if not svgs:
        return ["No flame graph: the profile was not run or wrote no SVG" +
                (f" (looked in `{profile_dir}`)." if profile_dir else ".")]
    base = os.path.dirname(os.path.abspath(out_path)) if out_path else os.getcwd()
    return [f"- [{os.path.basename(s)}]({os.path.relpath(os.path.abspath(s), base)})" for s in svgs]


def report(args):
    run = load(args.csv, "the framework CSV")
    progs = programs.by_program([r for r in run.ok if not programs.is_served(r)])
    base = mbdata.baseline_config(run)
    md = ["# The framework suite under every allocator", "",
          f"From `{args.csv}` ({len(run.ok)} ok rows, {len(run.bad)} not ok); ratios are against "
          f"{mbdata.config_label(base)}, paired per block (scripts/mallocbench/stats.py: Hodges-Lehmann "
          "with the exact signed-rank CI). Faults are the measured region's minor faults per run.", "", "## What the seed said, here", ""]
    failed = mbdata.no_ok_sample(run)
    md += [f"- {s}" for s in findings(run, progs, base)] or \
        [f"- No {'measured ' if failed else ''}configuration re-faults 3× the lowest"
         f"{f' ({len(failed)} had no ok sample: below)' if failed else ''}."]
    if failed:
        md += ["", "## Configurations with no ok sample", "",
               "Left out of every table and ranking here, because none of their samples finished:", ""] + \
            [f"- {mbdata.md_text(x)}" for x in failed]
    if args.left_out:
        md += ["", "## Left out of this run", "",
               "This run measured part of the suite (`make frameworks FULL=1` runs all of it); its rankings "
               "are over what it measured. Not measured:", ""] + [f"- {x}" for x in args.left_out]
    md += ["", "## Flame graph of the training step's worst configuration", ""] + flame_links(args.profile_dir, args.output)
    md += ["", "## Programs × configurations", ""] + main_table(run, progs, base)
    md += ["", "## The served model", ""] + serve_table(run, base)
    if args.replay:
        md += ["", "## Replay fidelity", ""] + fidelity(run, progs, load(args.replay, "the replay CSV"))
    if args.synth:
        md += ["", "## Do the synthetic workloads predict the programs?", ""] + \
            synthetic(run, progs, load(args.synth, "the synthetic CSV"), base, dict(args.match or []))
    text = "\n".join(md) + "\n"
    if args.output:
        try:
            mbout.write(args.output, text, force=args.force, inputs=inputs(args))
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2)
    else:
        sys.stdout.write(text)


def inputs(args):
    return [p for p in (args.csv, args.replay, args.synth) if p]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--replay")
    ap.add_argument("--synth")
    ap.add_argument("--profile-dir")
    ap.add_argument("-o", "--output")
    ap.add_argument("--force", action="store_true", help="replace an existing -o file (never an input)")
    ap.add_argument("--worst", metavar="PROGRAM")
    ap.add_argument("--left-out", action="append", metavar="TEXT",
                    help="what this run did not measure (configurations, programs), listed in the report")
    ap.add_argument("--match", nargs=2, action="append", metavar=("WORKLOAD", "PROGRAM"),
                    help="a synthetic workload of --synth and the program whose shape it runs at")
    args = ap.parse_args(argv)
    try:
        stats.require_scipy()  # the CIs and Kendall's tau; re-runs under Debian's python3 when missing
    except ImportError as e:
        raise cli.Fail(f"{e}: run it with {stats.DEBIAN_PYTHON} (python3-scipy)", 1)
    if args.output:
        try:  # refused before any work
            mbout.check(args.output, args.force, inputs(args))
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2)
    if args.worst:
        run = load(args.csv, "the framework CSV")
        w = worst_config(programs.by_program(run.ok).get(args.worst, {}), mbdata.baseline_config(run))
        if not w:
            raise cli.Fail(f"no configuration of '{args.worst}' to rank against {mbdata.baseline_config(run)}", 1)
        print(w)
        return
    report(args)


if __name__ == "__main__":
    sys.exit(cli.run(main))
