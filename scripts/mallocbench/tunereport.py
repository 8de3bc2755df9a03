"""tunereport.py - what `mallocbench tune` says once the confirmation has run: the winner (or
none) by the confirmation alone, each change worded as every view words a pair, and tune.md
with its tables and Pareto plots.

A helper of the tune view (tune.py), imported only by it; the search's records come from
tunesearch.py, the objectives from tunerun.py.
"""
import io
import math
import os

from . import change
from . import mbcsv
from . import mbdata
from . import mbout
from . import sequential
from . import tunerun
from . import words
from .tunerun import OBJECTIVES
from .tunesearch import CONFIRM_CAP, RACE_CAP, collect, direction, front, full_blocks, med, owner, ranked, stop_text


def trade_off(confirm_csv, rows):
    """Whether the tuned workload's figure is a trade-off (its descriptor's trait, as the
    confirmation's sidecar lists it)."""
    return bool({r["workload"] for r in rows} & mbdata.workloads_with_trait([confirm_csv], "trade_off"))


def change_text(vals, base, other, better="higher", trade_off=False, machines=None, unit="", seq=None):
    """other against base as every view words a pair (change.pair_values: the paired
    Hodges-Lehmann ratio, its verdict word at a 1% floor; trade_off: the figure of a workload
    with that trait; several machines {block: machine}: pooled), with its 95% CI and n; unit:
    the figure's, which a difference (a change that is no ratio) is written in.  seq (the
    confirmation sized for a verdict: confirm_marks): a pair it stopped on this figure says its
    stop (confirm_stop's look, CI and words); any other pair is over blocks the stops chose: its
    95% CI without a verdict word, marked not error-controlled."""
    if base not in vals or other not in vals or base == other:
        return "-"
    st = (seq or {}).get("stops", {}).get((base, other))
    if st is not None:
        return stop_text(st) + f" n={st['n']}"
    cell = change.pair_values(vals[base], vals[other], better, unit=unit, trade_off=trade_off,
                               machines=machines)
    ch = cell.change
    if ch is None:
        return "-"
    text, ci = words.fmt_change(cell)
    if seq is not None:
        return f"{text}" + (f" [{ci}]" if ci != "-" else "") + f" n={ch.n} (95%, {controlled_note(seq)})"
    return words.change_words(cell) + (f" [{ci}]" if ci != "-" else "") + f" n={ch.n}"


def controlled_note(seq):
    return f"not error-controlled: the run stopped on {seq['figure']}"


def confirm_marks(args, csv, crow, want, better):
    """{objective key: seq for change_text} where the confirmation was a run sized for a verdict
    (its sidecar's "sequential"): on the figure its stops decided (the objective's), the
    leader's pair with each other configuration is confirm_stop's; {} (every pair as a fixed
    plan's) for a fixed plan or an unreadable sidecar."""
    try:
        meta = mbdata.read_meta(csv)
    except mbcsv.CsvError:
        meta = None
    if not want or not isinstance((meta or {}).get("sequential"), dict):
        return {}
    top, name = want[0].label, OBJECTIVES[args.race_key][0]
    stops = {(c.label, top): confirm_stop(meta, crow, want, top, c.label, args.race_key, better) for c in want[1:]}
    return {key: {"stops": stops if key == args.race_key else {}, "figure": name} for key in OBJECTIVES}


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


def confirm_stop(meta, crow, want, top, base, key, better):
    """top against base in the confirmation, where the run stopped it (the one rule,
    sequential.py): the sidecar's stop of base against top (the run's first configuration),
    turned round to top/base, when the run stopped on this objective's figure; else
    sequential.stop replayed over the rows' per-block log ratios top/base (in block order, None
    where either has no sample; a run that ended before the cap takes its last look there).
    {"look", "blocks", "n", "alpha", "why", "estimate", "lo", "hi"}, as top/base."""
    seq = (meta or {}).get("sequential") or {}
    if seq.get("figure", (meta or {}).get("figure", "throughput")) == key:
        for st in seq.get("stops") or []:
            if not isinstance(st, dict):
                continue
            c, b = owner(want, str(st.get("config", ""))), owner(want, str(st.get("baseline", "")))
            if c is not None and b is not None and c.label == base and b.label == top:
                out = dict(st)
                inv = {"improved": "regressed", "regressed": "improved"}
                out["why"] = inv.get(st.get("why"), st.get("why"))
                e, lo, hi = st.get("estimate"), st.get("lo"), st.get("hi")
                out["estimate"] = 1 / e if e else None
                out["lo"], out["hi"] = (1 / hi, 1 / lo) if lo and hi else (None, None)
                return out
    vals, order = {}, sorted({(r["matrix_id"], r["block"]) for r in crow}, key=lambda k: (str(k[0]), int(k[1])))
    collect(crow, want, vals, key)
    tv, bv = vals.get(top, {}), vals.get(base, {})
    d = [math.log(tv[k] / bv[k]) if k in tv and k in bv and tv[k] > 0 and bv[k] > 0 else None for k in order]
    if not any(x is not None for x in d):
        return {"look": 0, "blocks": len(order), "n": 0, "alpha": None, "why": "no ratio", "estimate": None,
                "lo": None, "hi": None}
    cap = seq.get("cap") if isinstance(seq.get("cap"), int) and seq.get("cap") > 0 else CONFIRM_CAP
    return sequential.stop(d, cap, better=better, budget_at=len(d) if len(d) < cap else None)


def confirmed_winner(args, want, finalists, crow, better, why="", csv=None):
    """(winner, verdict) from the confirmation alone, a run of the race's leader (want[0], its
    first configuration) against the rest, sized for a verdict.  The leader (unless over
    --max-rss) is the winner only when the run settled it improved (its CI wholly beyond the
    floor on the better side, at the look where it stopped: confirm_stop) against the
    runner-up, against glibc's default (the baseline) and, for a tuned setting, against its
    family's default (a setting that only won the racing by chance, the winner's curse, is
    never named).  The verdict names each stop, 'settled at block 8: 7.95x improved [...]',
    with the CI of that look; without a winner, where each comparison stopped short.  csv: the
    confirmation's CSV, whose sidecar holds the run's stops."""
    vals, rss = {}, {}
    collect(crow, want, vals, args.race_key)
    collect(crow, want, rss, "rss")
    if not vals:
        return None, (f"no confirmation sample was ok: {why}: no winner" if why else
                      "no confirmation sample finished within the budget: no winner")
    try:
        meta = mbdata.read_meta(csv) if csv else None
    except mbcsv.CsvError:
        meta = None  # the stops are replayed from the rows (env_line says why the sidecar is unread)
    top = want[0]
    m = med(rss.get(top.label, {}).values())
    if args.max_rss_bytes and m is not None and m * 1048576 > args.max_rss_bytes:
        return None, f"{top.label}: median {tunerun.MEM} {m:.0f} MiB over --max-rss"
    against = [(finalists[1].label, "the runner-up")] if len(finalists) > 1 and finalists[1].label in vals else []
    if top.label != "glibc" and "glibc" in vals and "glibc" not in [a for a, _ in against]:
        against.append(("glibc", "the baseline"))
    if top.pairs and top.fam in vals and top.fam not in [a for a, _ in against]:
        against.append((top.fam, "its family's default"))
    if top.label not in vals or not against:
        return None, f"{top.label} was the only configuration confirmed: nothing to win against"
    parts, won = [], True
    for base, role in against:
        st = confirm_stop(meta, crow, want, top.label, base, args.race_key, better)
        won &= st is not None and st["why"] == "improved"
        parts.append(f"against {base} ({role}) {stop_text(st)}")
    what = f"{top.label} ({top.text()})"
    if won:
        return top, (f"{what}, the race's leader, settled improved in the confirmation, beyond the "
                     f"{FLOOR:.0%} floor on the better side: " + "; ".join(parts))
    return None, (f"{what}, the race's leader, did not settle improved beyond the {FLOOR:.0%} floor against "
                  "each in the confirmation: " + "; ".join(parts) + " (the racing's finalists: "
                  + ", ".join(f.label for f in finalists) + ")")


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
    lines += confirmed_head(args, tuner, crow, want, better) + [
              "| objective | highest-ranked in the confirmation (a winner only if its change says so) | its setting "
              "| vs its family's default | vs glibc default |",
              "|---|---|---|---|---|"]
    tpb = direction(crow, "throughput")  # the workload's own figure: better as its rows say
    unit = next((r.get("throughput_unit") for r in crow if r.get("throughput_unit")), "")
    per = mbdata.work_unit(crow)
    # a trade-off figure (the workload's trait, from the confirmation's sidecar) is worded as such
    trade = trade_off(base + ".confirm.csv", crow)
    seq = confirm_marks(args, base + ".confirm.csv", crow, want, better)
    lines += objective_rows(conf, want, tpb, trade, unit, seq)
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
        vs = (change_text(conf["throughput"], "glibc", c.label, tpb, trade, unit=unit, seq=seq.get("throughput"))
              if c.label != "glibc" else "-")
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
            st = seq.get("throughput", {}).get("stops", {}).get(("glibc", c.label))  # stopped: its own word
            if ((st or {"why": cell.verdict})["why"] == "regressed" and c.label != "glibc") or many:
                said = (change_text(conf["throughput"], "glibc", c.label, tpb, trade, seq=seq["throughput"])
                        if seq else words.change_words(cell))
                findings.append(f"**{c.label}** ({c.origin}: {c.text()}): "
                                + (f"{said} against glibc's default" if c.label != "glibc"
                                   else "the baseline")
                                + (f"; {words.fmt(f[1])} faults per {per} where {low_c} has {words.fmt(low)}"
                                   + (" (256 per MiB: every page faulted in again)" if per == "MiB" else "")
                                   if many else "") + ".")
    if findings:  # what the user must not miss, above the tables that hold it
        k0 = lines.index(CONFIRMED)
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
                said = change_text(conf["throughput"], lab, winner.label, tpb, trade, unit=unit,
                                   seq=seq.get("throughput"))
                lines.append(f"\nAgainst the hand-picked {lab}: {said} (throughput, winner/{lab}).")
    lines += pareto_section(want, conf, tpb, base)
    lines += ["", f"## Racing (a candidate leaves when its verdict against the leader settles, at blocks "
              f"{' and '.join(str(b) for b, _ in sequential.looks(RACE_CAP))}; these figures chose the finalists, "
              "none is reported above)",
              "", "| candidate | origin | setting | median | samples | dropped |", "|---|---|---|---|---|---|"]
    for c in cands:
        v = racing.get(c.label, {})
        m = med(v.values())
        lines.append(f"| {c.label} | {c.origin} | {c.text()} | {'-' if m is None else f'{m:.4g}'} | {len(v)} | "
                     f"{c.dropped or ('finalist' if c in finalists else '')} |")
    return lines


def objective_rows(conf, want, tpb, trade, unit, seq):
    """The objectives table's rows: per objective the highest-ranked configuration in the
    confirmation and its changes against its family's default and glibc's (change_text)."""
    out = []
    for key in ("throughput", "cpu", "rss"):
        b = tpb if key == "throughput" else OBJECTIVES[key][2]
        scored = ranked(want, conf[key], b, "glibc")
        if not scored:
            continue
        best = scored[0]
        fd = best.fam if best.pairs else None
        t = trade and key == "throughput"
        u = unit if key == "throughput" else ""  # cpu and rss are ratios of positive figures
        vs_fd = change_text(conf[key], fd, best.label, b, t, unit=u, seq=seq.get(key)) if fd else "(is the default)"
        out.append(f"| {OBJECTIVES[key][0]} | {best.label} | {best.text()} | {vs_fd} | "
                   f"{change_text(conf[key], 'glibc', best.label, b, t, unit=u, seq=seq.get(key))} |")
    return out


CONFIRMED = "## Confirmed (a run sized for a verdict, in fresh interleaved blocks; nothing from the racing is reused)"


def confirmed_head(args, tuner, crow, want, better):
    """The confirmation's heading, its run, and where it stopped each comparison with the race's
    leader (confirm_stop: the look, and the CI of that look)."""
    csv = tuner.base + ".confirm.csv"
    try:
        meta = mbdata.read_meta(csv)
    except mbcsv.CsvError:
        meta = None  # the stops are replayed from the rows; env_line says why the sidecar is unread
    out = [CONFIRMED, ""]
    if want:
        top = want[0].label
        out += [f"A run of {top}, the race's leader, against {', '.join(c.label for c in want[1:]) or 'nothing'}, "
                f"which stops each comparison with {top} when its verdict settles: "
                + blocks_text(tuner.confirm, crow, want) + f" ({os.path.basename(csv)}).", ""]
        out += [f"- {top} against {c.label}: "
                + stop_text(confirm_stop(meta, crow, want, top, c.label, args.race_key, better)) for c in want[1:]]
        out += [""] if len(want) > 1 else []
    return out


def blocks_text(confirm, crow, want):
    """The confirmation's blocks as run: how many (of the cap), and how many hold every
    configuration (a configuration leaves the run once its comparison has stopped; a block cut
    by the budget, ^C or a failed sample lacks some)."""
    full = len(full_blocks(crow, want))
    ran = len({(r["matrix_id"], r["block"]) for r in crow})
    cap = confirm.get("blocks") if confirm else None
    return (f"{ran} block{'s' if ran != 1 else ''}" + (f" of at most {cap}" if cap else "")
            + (f", {full} with every configuration" if full != ran else ""))


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
