"""tunereport.py - what `mallocbench tune` says once the confirmation has run: the winner (or
none) by the confirmation alone, each change worded as every view words a pair, and tune.md
with its tables and Pareto plots.

A helper of the tune view (tune.py), imported only by it; the search's records come from
tunesearch.py, the objectives from tunerun.py.
"""
import io
import os

from . import change
from . import mbcsv
from . import mbdata
from . import mbout
from . import tunerun
from . import words
from .tunerun import OBJECTIVES
from .tunesearch import CONFIRM_MIN, collect, direction, front, full_blocks, med, owner, ranked


def trade_off(confirm_csv, rows):
    """Whether the tuned workload's figure is a trade-off (its descriptor's trait, as the
    confirmation's sidecar lists it)."""
    return bool({r["workload"] for r in rows} & mbdata.workloads_with_trait([confirm_csv], "trade_off"))


def change_text(vals, base, other, better="higher", trade_off=False, machines=None, unit=""):
    """other against base as every view words a pair (change.pair_values: the paired
    Hodges-Lehmann ratio, its verdict word at a 1% floor; trade_off: the figure of a workload
    with that trait; several machines {block: machine}: pooled), with its 95% CI and n; unit:
    the figure's, which a difference (a change that is no ratio) is written in."""
    if base not in vals or other not in vals or base == other:
        return "-"
    cell = change.pair_values(vals[base], vals[other], better, unit=unit, trade_off=trade_off,
                               machines=machines)
    ch = cell.change
    if ch is None:
        return "-"
    _, ci = words.fmt_change(cell)
    return words.change_words(cell) + (f" [{ci}]" if ci != "-" else "") + f" n={ch.n}"


def plot(path, labels, xs, ys, xlabel, ylabel, better, colours):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"(no plot: {e})"
    pts = list(zip(xs, ys))
    fr = set(front(pts, better))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (lab, x, y) in enumerate(zip(labels, xs, ys)):
        ax.scatter([x], [y], s=60 if i in fr else 20, color=colours[i], edgecolors="black" if i in fr else "none")
        ax.annotate(lab, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    fp = sorted((pts[i] for i in fr))
    ax.plot([p[0] for p in fp], [p[1] for p in fp], color="black", lw=1, ls="--", label="Pareto front")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    mbout.write(path, buf.getvalue(), force=True, own=True)  # BASE.pareto-*.png: the search's own (own_files)
    return None


def env_line(confirm_csv, label):
    """The production environment of configuration `label` as run's sidecar records it."""
    try:
        meta = mbdata.read_meta(confirm_csv) or {}
    except mbcsv.CsvError as e:  # the report still comes: this line says why it has no environment
        return f"(the confirmation's sidecar is unreadable: {e})"
    for c in meta.get("configs") or []:
        if isinstance(c, dict) and (c.get("config") == label or str(c.get("config", "")).startswith(label + "[")):
            env = [e for e in c.get("environment") or [] if not str(e).startswith("MB_")]
            lib = c.get("lib_path") or ""
            return " ".join(([f"LD_PRELOAD={lib}"] if lib else []) + env) or "(nothing to set: the defaults)"
    return "(not in the confirmation's sidecar)"


FLOOR = 0.01  # the verdicts' floor, as compare's default (--floor 1)


def confirmed_winner(args, want, finalists, crow, better, why=""):
    """(winner, verdict) from the confirmation alone.  The configurations rank by their median
    per-block ratio to glibc's default (over --max-rss: left out); the first is the winner only
    when, over at least CONFIRM_MIN common blocks, its paired change (change.pair_values: the
    Hodges-Lehmann ratio, its exact signed-rank CI) lies wholly beyond the floor on the better
    side against the runner-up, against glibc's default (the baseline) and, for a tuned
    setting, against its family's default (a setting that only won the racing by chance, the
    winner's curse, is never named).  The verdict names each of those changes with its CI and
    n; without a winner, the blocks reached and the resolution of each."""
    vals, rss = {}, {}
    collect(crow, want, vals, args.race_key)
    collect(crow, want, rss, "rss")
    # the figure's unit, which a difference is written in (cpu and rss are ratios)
    unit = (next((r.get("throughput_unit") for r in crow if r.get("throughput_unit")), "")
            if args.race_key == "throughput" else "")
    if not vals:
        return None, (f"no confirmation sample was ok: {why}: no winner" if why else
                      "no confirmation sample finished within the budget: no winner")
    notes, order = [], []
    for c in ranked(want, vals, better, "glibc"):
        m = med(rss.get(c.label, {}).values())
        if args.max_rss_bytes and m is not None and m * 1048576 > args.max_rss_bytes:
            notes.append(f"{c.label}: median {tunerun.MEM} {m:.0f} MiB over --max-rss")
        else:
            order.append(c)
    if not order:
        return None, "; ".join(notes)
    top = order[0]
    against = [(order[1].label, "the runner-up")] if len(order) > 1 else []
    if top.label != "glibc" and "glibc" in vals:
        against.append(("glibc", "the baseline"))
    if top.pairs and top.fam in vals and top.fam not in [a for a, _ in against]:
        against.append((top.fam, "its family's default"))
    if not against:
        return None, "; ".join(notes + [f"{top.label} was the only configuration confirmed: nothing to win against"])
    parts, won = [], True
    for base, role in against:
        cell = change.pair_values(vals[base], vals[top.label], better, floor=FLOOR, unit=unit)
        ch = cell.change
        n = ch.n if ch is not None and ch.paired else 0
        ok = n >= CONFIRM_MIN and cell.verdict == "improved"
        won &= ok
        text = f"against {base} ({role}) {change_text(vals, base, top.label, better, unit=unit)}"
        if not ok:
            res = words.resolution_text(cell)
            text += (f", {n} common blocks ({CONFIRM_MIN} needed)" if n < CONFIRM_MIN else "")
            text += f", resolution {res or 'none (no CI)'}"
        parts.append(text)
    what = f"{top.label} ({top.text()})"
    if won:
        return top, "; ".join(notes + [f"{what} ranked first in the confirmation, beyond the {FLOOR:.0%} floor "
                                       "on the better side: " + "; ".join(parts)])
    return None, "; ".join(notes + [f"{what} ranked first in the confirmation (median per-block ratio to glibc's "
                                    f"default), but not beyond the {FLOOR:.0%} floor on the better side of each: "
                                    + "; ".join(parts) + " (the racing's finalists: "
                                    + ", ".join(f.label for f in finalists) + ")"])


def faults_of(r):
    """Faults of the measured region per unit of work (mbdata.work); a command's whole
    process where it has none."""
    v = mbdata.metric_fn("region_faults")(r)
    v = v if v is not None else mbdata.metric_fn("total_faults")(r)
    w = mbdata.work(r)[0]
    return v / w if v is not None and w else None


def report_md(args, sp, tuner, racing, finalists, want, crow, better, winner, verdict):
    """tune.md: every figure from the confirmation; the racing only in its own table."""
    cands, rounds, base = tuner.cands, tuner.rounds, tuner.base
    nrace = sum(r.get("samples", 0) for r in rounds)
    lines = [f"# mallocbench tune: {args.workload or args.matrix or ' '.join(args.cmd)}", "",
             f"Objective **{args.objective}**, budget {args.budget_s:.0f} s ({tuner.elapsed():.0f} s used), "
             f"seed {args.seed}, {len(cands)} candidates over {len(rounds)} racing rounds ({nrace} samples), "
             f"then {len(crow)} confirmation samples."
             + (f" --max-rss {mbdata.format_size(args.max_rss_bytes)}." if args.max_rss_bytes else ""), ""]
    conf = {key: {} for key in OBJECTIVES}
    for key in OBJECTIVES:
        collect(crow, want, conf[key], key)
    faults = {}
    for r in crow:
        c = owner(want, r["config"])
        if c is not None and faults_of(r) is not None:
            faults.setdefault(c.label, {})[(r["matrix_id"], r["block"])] = faults_of(r)
    lines += ["## Confirmed (fresh interleaved blocks; nothing from the racing is reused)", "",
              blocks_text(tuner.confirm, crow, want) + f" of {', '.join(c.label for c in want)} "
              f"({os.path.basename(base)}.confirm.csv).", "",
              "| objective | highest-ranked in the confirmation (a winner only if its change says so) | its setting "
              "| vs its family's default | vs glibc default |",
              "|---|---|---|---|---|"]
    tpb = direction(crow, "throughput")  # the workload's own figure: better as its rows say
    unit = next((r.get("throughput_unit") for r in crow if r.get("throughput_unit")), "")
    per = mbdata.work_unit(crow)
    # a trade-off figure (the workload's trait, from the confirmation's sidecar) is worded as such
    trade = trade_off(base + ".confirm.csv", crow)
    for key in ("throughput", "cpu", "rss"):
        b = tpb if key == "throughput" else OBJECTIVES[key][2]
        scored = ranked(want, conf[key], b, "glibc")
        if not scored:
            continue
        best = scored[0]
        fd = best.fam if best.pairs else None
        t = trade and key == "throughput"
        u = unit if key == "throughput" else ""  # cpu and rss are ratios of positive figures
        lines.append(f"| {OBJECTIVES[key][0]} | {best.label} | {best.text()} | "
                     f"{change_text(conf[key], fd, best.label, b, t, unit=u) if fd else '(is the default)'} | "
                     f"{change_text(conf[key], 'glibc', best.label, b, t, unit=u)} |")
    lines += ["", "Changes are configuration/base as every view of mallocbench prints them: "
              + words.ESTIMATOR_TEXT + f"; the word is the verdict at a {FLOOR:.0%} floor (docs/output.md, "
              "*The statistics of `mallocbench compare`*).",
              "", "| configuration | origin | setting | median " + OBJECTIVES["throughput"][0]
              + f" | vs glibc default | median faults per {per} | median {tunerun.MEM} | median kernel CPU per {per} |",
              "|---|---|---|---|---|---|---|---|"]
    findings = []
    fault_meds = {c.label: med(faults.get(c.label, {}).values()) for c in want}
    known = [v for v in fault_meds.values() if v is not None]
    low_c = min((c for c in fault_meds if fault_meds[c] is not None), key=lambda c: fault_meds[c], default=None)
    for c in want:
        f = [med(conf["throughput"].get(c.label, {}).values()), med(faults.get(c.label, {}).values()),
             med(conf["rss"].get(c.label, {}).values()), med(conf["sys"].get(c.label, {}).values())]
        vs = change_text(conf["throughput"], "glibc", c.label, tpb, trade, unit=unit) if c.label != "glibc" else "-"
        lines.append(f"| {c.label} | {c.origin} | {c.text()} | " + words.fmt_value(f[0], unit)
                     + f" | {vs} | {words.fmt(f[1])} | " + ("-" if f[2] is None else f"{f[2]:.0f} MiB")
                     + f" | {words.fmt_value(f[3], 's')} |")
        # a default or a hand-picked setting that loses to glibc's default, or faults 3x more than
        # the configuration with the fewest: the line a user must not miss
        if c.origin in ("default", "hand-picked") and known and "glibc" in conf["throughput"]:
            cell = change.pair_values(conf["throughput"]["glibc"], conf["throughput"].get(c.label, {}), tpb,
                                       trade_off=trade)
            low = fault_meds[low_c]
            # 3x the fewest, and a quarter of the most at least: from 0, not every fault counts
            many = (f[1] is not None and f[1] > 0 and f[1] >= 3 * low and f[1] >= 0.25 * max(known)
                    and c.label != low_c)
            if (cell.verdict == "regressed" and c.label != "glibc") or many:
                findings.append(f"**{c.label}** ({c.origin}: {c.text()}): "
                                + (f"{words.change_words(cell)} against glibc's default" if c.label != "glibc"
                                   else "the baseline")
                                + (f"; {words.fmt(f[1])} faults per {per} where {low_c} has {words.fmt(low)}"
                                   + (" (256 per MiB: every page faulted in again)" if per == "MiB" else "")
                                   if many else "") + ".")
    if findings:  # what the user must not miss, above the tables that hold it
        k0 = lines.index("## Confirmed (fresh interleaved blocks; nothing from the racing is reused)")
        lines[k0:k0] = ["## Findings", ""] + [f"- {x}" for x in findings] + [""]
    if winner is None:
        lines += ["", "## No winner", "",
                  "Blocks reached: " + blocks_text(tuner.confirm, crow, want) + ". " + verdict + "."]
    else:
        lines += ["", f"## Winner: {winner.label} ({winner.text()})", "", verdict + ".", "",
                  "Production environment (as `run` set it for this configuration; the confirmation's sidecar):",
                  "", "```", env_line(base + ".confirm.csv", winner.label), "```", ""]
        for name, v in winner.pairs:
            lines.append(f"- `{name}={v}`: {sp[winner.fam]['help'].get(name, '')}")
        for s in sp.values():
            lab = s["known_label"]
            if s["known"] and lab in conf["throughput"] and lab != winner.label:
                lines.append(f"\nAgainst the hand-picked {lab}: "
                             f"{change_text(conf['throughput'], lab, winner.label, tpb, trade, unit=unit)} "
                             f"(throughput, winner/{lab}).")
    lines += pareto_section(want, conf, tpb, base)
    lines += ["", "## Racing (successive halving; these figures chose the finalists, none is reported above)",
              "", "| candidate | origin | setting | median | samples | dropped |", "|---|---|---|---|---|---|"]
    for c in cands:
        v = racing.get(c.label, {})
        m = med(v.values())
        lines.append(f"| {c.label} | {c.origin} | {c.text()} | {'-' if m is None else f'{m:.4g}'} | {len(v)} | "
                     f"{c.dropped or ('finalist' if c in finalists else '')} |")
    return lines


def blocks_text(confirm, crow, want):
    """The confirmation's blocks as reached: those in which every configuration has an ok sample,
    of the planned ones, and those cut short (by the budget, ^C or a failed sample)."""
    full = len(full_blocks(crow, want))
    some = len({(r["matrix_id"], r["block"]) for r in crow}) - full
    planned = confirm.get("blocks") if confirm else None
    return (f"{full} complete block{'s' if full != 1 else ''}" + (f" of the {planned} planned" if planned else "")
            + (f" (and {some} cut short, not every configuration in {'it' if some == 1 else 'them'})" if some else ""))


def pareto_section(want, conf, better, base):
    out = ["", "## Pareto fronts (confirmed medians; highlighted: the front)", ""]
    # each family in the colour every plot gives it (the confirmation's sidecar, as plots.py reads it)
    conf_csv = base + ".confirm.csv"
    colours = mbcsv.family_colours([conf_csv] if os.path.exists(conf_csv) else [], [],
                                   list(dict.fromkeys(c.fam for c in want)))
    for key, what in (("rss", f"{tunerun.MEM} (MiB)"), ("sys", "kernel CPU per unit of work (s)")):
        pts = [(c, med(conf[key].get(c.label, {}).values()), med(conf["throughput"].get(c.label, {}).values()))
               for c in want]
        pts = [p for p in pts if p[1] is not None and p[2] is not None]
        if not pts:
            continue
        png = f"{base}.pareto-{key}.png"
        err = plot(png, [p[0].label for p in pts], [p[1] for p in pts], [p[2] for p in pts], what,
                   "throughput (median of the confirmation)", better,
                   [colours.get(p[0].fam, "#777777") for p in pts])
        fr = front([(p[1], p[2]) for p in pts], better)
        out += [err or f"![throughput vs {what}]({os.path.basename(png)})", "",
                f"Front (throughput vs {what}): " + ", ".join(pts[i][0].label for i in fr), ""]
    return out
