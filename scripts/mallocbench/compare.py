"""compare.py - benchstat-style tables from mallocbench CSVs, with verdicts that
never contradict the confidence interval printed beside them (scripts/mallocbench/stats.py).

One run:        compare.py run.csv [--baseline CONFIG]
                every configuration against the baseline (the run's first
                configuration unless --baseline names another) within each workload,
                paired by block (exact Wilcoxon signed-rank, Hodges-Lehmann CI)
Two runs:       compare.py old.csv new.csv
                each configuration of new against its counterpart in old (matched
                by label, else by allocator family and requested tunables),
                unpaired (exact Mann-Whitney, Hodges-Lehmann CI)
Several runs:   compare.py --old A.csv B.csv --new C.csv D.csv   (the run is the unit)

Verdicts: improved / regressed (the whole CI beyond -+floor), within noise (the CI
excludes no change but reaches into the floor band), ~ (the CI includes no
change), too few (this n cannot reach significance).  alpha = 0.05 per cell
unless --family primary (Bonferroni over each workload's primary metric) or
--family bh (Benjamini-Hochberg over the table, false-coverage-rate CIs).
Output: a terminal table, --markdown, --csv-out FILE.  change.analyse() is the whole
computation on rows in memory (tests and tests/bench/bench_verdicts.py call it).
Input that is not a mallocbench CSV (scripts/mallocbench/mbcsv.py) is refused in one line
naming the file and row, exit 2.
"""
import argparse
import csv
import json
import math
import sys

from . import change
from . import cli
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats
from . import words


def render(res, markdown=False, out=sys.stdout, names=("old", "new")):
    """The tables, one per metric, and the footer; in Markdown every text from the input
    (labels, units, parameters, file names) is escaped to show as the text it is; in text every
    line passes mbdata.printable (a sidecar's machine description, a label: no terminal control
    sequence reaches the terminal)."""
    md = mbdata.md_text if markdown else mbdata.printable
    if res.mode != "one run":
        out.write(f"\nnote: {md(names[0])} and {md(names[1])} are "
                  + ("one run each: their samples are compared as independent, so a shift from one run to "
                     "the other (another boot, machine state) is not estimated and shows as a change; give "
                     "several runs per side (--old A.csv B.csv --new C.csv D.csv) to estimate it.\n"
                     if res.mode == "two runs" else
                     "several runs per side: the run is the unit (per-run medians), n counts runs.\n"))
    for line in res.only:
        out.write(f"{md(line)}\n")
    vs = "vs old" if res.mode != "one run" else f"vs {res.baseline}"
    tables = list(dict.fromkeys(c.table for c in res))
    for t in tables:
        mc = [c for c in res if c.table == t]
        lv = next((c.level for c in mc if not c.is_base), 0.95)
        mixed = len({round(c.level, 9) for c in mc if not c.is_base}) > 1  # sequential cells: each at its look's
        head = ["config", "median", "95% CI", vs, "CI (level)" if mixed else f"{words.pct(lv)} CI", "verdict", "p", "n"]
        table = []
        last = None
        for c in mc:
            if c.geomean:
                if last != "geomean":
                    last = "geomean"
                    table.append(f"geometric mean over {c.params}")
                ch, ci = words.fmt_change(c)
                table.append([c.config, "", "", ch, f"{ci} ({words.pct(c.level)})" if mixed else ci, c.verdict,
                              words.fmt_p(cell_p(c)), words.n_text(c)])
                continue
            if (c.workload, c.params) != last:
                last = (c.workload, c.params)
                table.append(f"{mbdata.workload_title(c.workload, c.params)}: {words.quantity(c.metric, c.unit)}, "
                             f"{c.better} is better")
            med = words.fmt_value(c.median, c.unit)
            ci = words.fmt_ci(c.median_ci, c.unit, c.median) if c.median_ci else f"(n={c.n})"
            if c.is_base:
                table.append([c.config, med, ci, "", "", "", "", str(c.n)])
            else:
                ch, cci = words.fmt_change(c)
                table.append([c.config, med, ci, ch, f"{cci} ({words.pct(c.level)})" if mixed else cci, c.verdict,
                              words.fmt_p(cell_p(c)), words.n_text(c)])
        title = "primary figure of each workload" if all(c.primary for c in mc if not c.geomean) else t
        rows = [r for r in table if not isinstance(r, str)]
        if markdown:
            out.write(f"\n#### {md(title)}\n\n| " + " | ".join(map(md, head)) + " |\n|" + "---|" * len(head) + "\n")
            for row in table:
                out.write(f"| **{md(row)}** |" + " |" * (len(head) - 1) + "\n" if isinstance(row, str)
                          else "| " + " | ".join(map(md, row)) + " |\n")
        else:
            table = [md(r) if isinstance(r, str) else list(map(md, r)) for r in table]  # widths of what is shown
            rows = [r for r in table if not isinstance(r, str)]
            widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
            out.write(f"\n{md(title)}\n")
            out.write("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip() + "\n")
            for row in table:
                out.write(row + "\n" if isinstance(row, str) else
                          "  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
        fleet = [line for c in mc if not c.is_base for line in words.fleet_lines(c, res.machine_desc)]
        fleet += words.sequential_lines([c for c in mc if not c.is_base])
        if fleet:
            out.write(("\n" if markdown else "\n") + "\n".join(
                (f"- {md(line.strip())}" if markdown else f"  {md(line)}") for line in fleet) + "\n")
    out.write("\n" + "\n".join(map(md, footer(res).split("\n"))) + "\n")


def footer(res):
    tested = [c for c in res if not c.is_base and c.change is not None]
    m = len(tested)
    lines = []
    if res.family == "cell":
        lines.append(f"{m} cells tested at alpha = 0.05 each; about {0.05 * m:.1f} false flags expected when "
                     f"nothing changed.")
    else:
        lines.append(f"{m} cells tested.")
    pooled = [c for c in tested if getattr(c.change, "fleet", None) is not None]
    if pooled:
        ms = sorted({m for c in pooled for m, _ in c.change.fleet.machines})
        lines.append(f"measured on {len(ms)} machines ({', '.join(ms)}), each block on one: a cell's change pools "
                     f"the machines' own paired changes (listed under its table) by random effects (Paule-Mandel "
                     f"tau², Hartung-Knapp CI); with fewer than {stats.POOL_MIN} machines with a CI it is the "
                     f"paired change over all their blocks, whose CI leaves out the machines' spread.")
        diff = words.fleet_differences(res)
        blind = [m for m in ms if not res.machine_desc.get(m)]
        lines.append(f"the machines differ in {diff}." if diff else
                     "nothing their descriptions record differs between the machines." if not blind else
                     f"no description of {', '.join(blind)} (no sidecar): what differs is not known.")
    lines += list(res.notes) + list(res.hints) + list(res.precision)
    lines.append(words.VERDICT_TEXT.format(floor=f"{res.floor * 100:g}%"))
    few = {}
    for c in tested:
        if c.verdict == "too few":
            ch = c.change
            key = (ch.paired, ch.n, ch.n_base, round(ch.level, 6))
            few.setdefault(key, (ch, []))[1].append(c.config)
    for (paired, n, nb, _), (ch, cfgs) in few.items():
        who = ", ".join(dict.fromkeys(cfgs))
        what = f"n={n} pairs" if paired else f"n={n}/{nb}" if n != nb else f"n={n} per side"
        lines.append(f"too few: {what}: no difference can be detected at {words.pct(ch.level)} (smallest possible "
                     f"p {ch.min_p:.2g}); add blocks ({who}).")
    return "\n".join(lines)


JSON_SCHEMA = "mallocbench-compare/1"


def cell_p(c):
    """The p a view prints for a cell: None for a sequential cell on the figure its run stopped on
    (a fixed-n p is not valid under optional stopping: its CI at the look's level says it) and
    for a geomean over pairs the run stopped."""
    return None if change.no_p(c) or c.change is None else c.change.p


def sequential_record(c):
    """A sequential cell's JSON member: where its pair stopped and whether this figure is the one
    it stopped on (its CI at the look's level, error-controlled) or another (95%, not)."""
    s = c.sequential
    return {"look": s["look"], "blocks": s["blocks"], "alpha": s["alpha"], "why": s["why"], "figure": s["figure"],
            "controlled": bool(s["controlled"]), "words": words.sequential_text(c),
            "note": words.not_controlled_text(c)}

def records(res):
    """The comparison as JSON-ready data, one schema (JSON_SCHEMA; docs/output.md) for
    `compare --json`, `report --json` and mallocbench.compare(): one record per tested cell,
    with the figures every other view prints for it."""
    cells = []
    for c in res:
        if c.is_base:
            continue
        ch = c.change
        ci = c.median_ci or (None, None)
        text, ci_text = words.fmt_change(c)
        cells.append({
            "workload": c.workload,
            "params": ("; ".join(f"{a} ({b})" for a, b in c.geo_set) if c.geomean else c.params),
            "geomean": bool(c.geomean), "metric": c.key or c.table, "figure": c.metric,
            "unit": c.unit, "quantity": words.quantity(c.metric, c.unit), "better": c.better,
            "primary": bool(c.primary), "config": c.config, "baseline": c.baseline,
            "n": ch.n if ch else c.n, "n_base": ch.n_base if ch else c.n_base,
            "median": words.json_number(c.median), "median_ci": [words.json_number(ci[0]), words.json_number(ci[1])], "base_median": words.json_number(c.base_median),
            "kind": ch.kind if ch else None, "change_unit": words.change_unit(c),
            "paired": bool(ch.paired) if ch else None,
            "estimate": words.json_number(ch.estimate) if ch else None, "lo": words.json_number(ch.lo) if ch else None,
            "hi": words.json_number(ch.hi) if ch else None, "level": c.level, "p": words.json_number(cell_p(c)),
            "method": ch.method if ch else None, "verdict": c.verdict, "text": text, "ci_text": ci_text,
        })
        if c.sequential:
            cells[-1]["sequential"] = sequential_record(c)
        pl = getattr(ch, "fleet", None)
        if pl is not None:
            cells[-1]["machines"] = [{"machine": m, "estimate": words.json_number(x.estimate), "lo": words.json_number(x.lo),
                                      "hi": words.json_number(x.hi), "n": x.n, "p": words.json_number(x.p)}
                                     for m, x in pl.machines]
            cells[-1]["pooled"] = {
                "k": pl.k, "estimate": words.json_number(pl.estimate), "lo": words.json_number(pl.lo), "hi": words.json_number(pl.hi),
                "p": words.json_number(pl.p), "tau": words.json_number(pl.tau),
                "tau_ci": [words.json_number(x) for x in pl.tau_ci] if pl.tau_ci else None,
                "i2": words.json_number(pl.i2), "i2_ci": [words.json_number(x) for x in pl.i2_ci] if pl.i2_ci else None,
                "q": words.json_number(pl.q), "q_p": words.json_number(pl.q_p), "differs": pl.differs,
                "not_pooled": list(pl.left_out), "not_pooled_why": [pl.left_why.get(m, "") for m in pl.left_out],
                "words": words.fleet_words(pl),
                "differences": words.machine_differences(pl, res.machine_desc) if pl.differs else ""}
    return {"schema": JSON_SCHEMA, "mode": res.mode, "baseline": res.baseline, "floor": res.floor,
            "family": res.family, "estimator": words.ESTIMATOR_TEXT, "verdicts": words.VERDICT_TEXT.format(
                floor=f"{res.floor * 100:g}%"),
            "notes": list(res.only) + list(res.notes) + list(res.hints) + list(res.precision),
            "machines": [{"machine": m, "description": res.machine_desc.get(m) or {}} for m in
                         sorted({x["machine"] for c in cells for x in c.get("machines", [])})],
            "machine_differences": words.fleet_differences(res), "cells": cells}


CSV_COLUMNS = ["workload", "workload_params", "metric", "figure", "unit", "better", "config", "baseline", "n", "n_base",
               "median", "median_ci_lo", "median_ci_hi", "base_median", "kind", "estimate", "lo", "hi", "level",
               "p", "min_p", "method", "verdict"]


def write_csv(res, path, force=False, inputs=()):
    """One row per tested cell (geomean rows: workload 'geomean', params the workload set)."""
    def g(v):
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.6g}"
    G = mbcsv.guard  # text a spreadsheet would read as a formula gets a leading '
    with mbout.open_text(path, force=force, inputs=inputs, newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_COLUMNS)
        for c in res:
            if c.is_base:
                continue
            ch = c.change
            ci = c.median_ci or (None, None)
            params = "; ".join(f"{a} ({b})" for a, b in c.geo_set) if c.geomean else c.params
            w.writerow([G(c.workload), G(params), c.table, c.metric, c.unit, c.better, G(c.config),
                        G(c.baseline),
                        ch.n if ch else c.n, ch.n_base if ch else c.n_base, g(c.median), g(ci[0]),
                        g(ci[1]), g(c.base_median), ch.kind if ch else "", g(ch.estimate if ch else None),
                        g(ch.lo if ch else None), g(ch.hi if ch else None), g(c.level),
                        g(cell_p(c)), g(ch.min_p if ch else None), ch.method if ch else "",
                        c.verdict])


def precision_lines(res, rows, dropped):
    """Per workload: the resolution each paired primary comparison reached (the smallest
    change it could have flagged), and how disturbed its samples were (mbdata.disturbed,
    mbdata.variance_explained); dropped: {config: n} samples --drop-disturbed left out."""
    lines = []
    prim = [c for c in res if c.primary and not c.geomean]
    keys = {c.key for c in prim}
    fn = next((m[3] for m in change.METRICS if m[4] in keys), None)
    for key in dict.fromkeys((c.workload, c.params) for c in prim):
        cells = [c for c in prim if (c.workload, c.params) == key]
        head = mbdata.workload_title(*key)
        reach = [(c.config, words.resolution_text(c)) for c in cells if not c.is_base and c.paired]
        if reach:
            lines.append(f"resolution, {head}: " + ", ".join(
                f"{cfg} {r or 'none (too few blocks)'}" for cfg, r in reach)
                + " (the smallest change these blocks could flag: the paired CI's half-width)")
        parts, expl = [], []
        for c in cells:
            cfg = c.config
            mine = [r for r in rows if (r["workload"], r["workload_params"]) == key and r["config"] == cfg]
            marked = [r for r in mine if mbdata.disturbed(r)]
            if marked or dropped.get(cfg):
                parts.append(f"{cfg} {len(marked)}/{len(mine)}" + (f" (+{dropped[cfg]} dropped)" if dropped.get(cfg) else ""))
            r2 = mbdata.variance_explained(mine, fn) if fn else None
            if r2 is not None:
                expl.append(f"{cfg} {r2 * 100:.0f}%")
        if parts:
            lines.append(f"disturbed samples, {head}: " + ", ".join(parts) + " (waited > "
                         f"{mbdata.DISTURB_WAIT * 100:.0f}% for a CPU, host steal > {mbdata.DISTURB_STEAL * 100:.0f}%, "
                         "khugepaged or compaction during the sample; --drop-disturbed leaves them out)")
        if expl:
            lines.append(f"variance explained by CPU waits and steal, {head}: " + ", ".join(expl))
    return lines


# ---- the Python API: mallocbench.compare(run, ...) ---------------------------------------

def api(run, baseline=None, floor=0.01, metrics=None):
    """Each configuration of run (mbdata.Run, or a path) against baseline (default: the run's
    first configuration), paired by block: the records `compare --json` prints (JSON_SCHEMA),
    the same estimate and verdict as every other view.  metrics: registry keys (default all).
    ValueError for an unknown baseline or metric; needs numpy and scipy."""
    try:  # a library does not re-run its caller under another interpreter (stats.require_scipy)
        import numpy  # noqa: F401
        import scipy.stats  # noqa: F401
    except ImportError as e:
        raise ImportError(f"{mbcsv.missing_dependency(e)} (mallocbench.compare needs it)") from None
    floor = change.check_floor(floor)  # before any work
    if not isinstance(run, mbdata.Run):
        run = mbdata.load(run)
    order = run.config_order
    if baseline is not None and baseline not in order:
        raise ValueError(f"no configuration {baseline!r} in the run (it has: {', '.join(order)})")
    chosen = change.METRICS
    if metrics is not None:
        known = [m[4] for m in change.METRICS]
        bad = [k for k in metrics if k not in known]
        if bad:
            raise ValueError(f"unknown metric {bad[0]!r} (valid: {', '.join(known)})")
        chosen = [m for m in change.METRICS if m[4] in metrics]
    # as the command line does it: its order of configurations, its notes
    res = change.analyse(run.ok, baseline=baseline, floor=floor, metrics=chosen, order=change.config_order(run.ok, run.paths),
                  trade_offs=set(run.with_trait("trade_off")))
    res.precision = precision_lines(res, run.ok, {})
    return records(res)


class _CallableModule(type(sys)):
    """This module, callable: mallocbench.compare(run) is compare.api(run)."""

    def __call__(self, run, baseline=None, floor=0.01, metrics=None):
        return api(run, baseline=baseline, floor=floor, metrics=metrics)


sys.modules[__name__].__class__ = _CallableModule


# ---- command line -----------------------------------------------------------------------

def main(argv=None):
    try:
        return run(argv)
    except mbcsv.CsvError as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT)


def run(argv):
    args = _parser().parse_args(argv)
    if bool(args.old) != bool(args.new):
        raise cli.Fail("--old and --new go together", 2)
    if args.fleet and (args.old or args.csv):
        raise cli.Fail("--fleet takes every CSV: give no other", 2)
    if args.old and args.csv:
        raise cli.Fail("give old.csv new.csv, or --old ... --new ..., not both", 2)
    if not args.old and not args.fleet and len(args.csv) not in (1, 2):
        raise cli.Fail("give one CSV, or two (old new), or --old A.csv ... --new B.csv ..., or --fleet A.csv B.csv ...", 2)
    try:
        change.check_floor(args.floor / 100)
    except ValueError:
        raise cli.Fail(f"--floor {args.floor:g}: a percentage, finite and in [0, 100)", 2)
    inputs = (args.csv or []) + (args.old or []) + (args.new or []) + (args.fleet or [])
    if args.csv_out:
        try:  # refused before any work: an existing file without --force, an input even with it
            mbout.hold(args.csv_out, args.force, inputs)  # refused, and held, before any work
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2)
    metrics = change.METRICS
    if args.metric:
        known = {m[0] for m in change.METRICS}
        bad = [m for m in args.metric if m not in known]
        if bad:
            raise cli.Fail(f"unknown metric {bad[0]!r} (valid: {', '.join(m[0] for m in change.METRICS)})", 2)
        metrics = [m for m in change.METRICS if m[0] in args.metric]
    old, new, names, order = _inputs(args)
    dropped = {}
    if args.drop_disturbed:
        def keep(rows):
            for r in rows:
                if mbdata.disturbed(r):
                    dropped[r["config"]] = dropped.get(r["config"], 0) + 1
            return [r for r in rows if not mbdata.disturbed(r)]
        if args.old:
            old, new = [keep(run) for run in old], [keep(run) for run in new]
        else:
            old, new = keep(old), keep(new) if new is not None else None
    if new is None and args.baseline and args.baseline not in order:
        raise cli.Fail(f"no configuration '{args.baseline}' in {args.csv[0]} (it has: {', '.join(order) or 'none'})")
    try:
        stats.require_scipy()
    except ImportError as e:
        raise cli.Fail(mbcsv.missing_dependency(e))
    res = change.analyse(old, new, baseline=args.baseline, floor=args.floor / 100, family=args.family,
                  two_runs=new is not None, metrics=metrics, order=order, names=names,
                  trade_offs=mbdata.workloads_with_trait(inputs, "trade_off"))
    if new is None and not any(c.is_base for c in res):
        if not old:
            raise cli.Fail(f"no ok sample in {args.csv[0]}")
        what = "" if args.baseline else " (the run's first configuration)"
        raise cli.Fail(f"no ok sample of configuration '{res.baseline}'{what} in {args.csv[0]} (use --baseline CONFIG)")
    if not any(not c.is_base for c in res):
        for line in res.only:
            print(mbdata.printable(line), file=sys.stderr)
        raise cli.Fail("nothing to compare: no configuration has a counterpart")
    if new is None:
        res.precision = precision_lines(res, old, dropped)
    elif dropped:
        res.precision = ["dropped as disturbed: " + ", ".join(f"{c} {n}" for c, n in dropped.items())]
    if args.json:
        json.dump(records(res), sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        render(res, args.markdown, sys.stdout, names)
    if args.csv_out:
        try:
            write_csv(res, args.csv_out, args.force, inputs)
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2)
    return res


def _parser():
    """compare's command line."""
    ap = argparse.ArgumentParser(prog="mallocbench compare", description=__doc__.split("\n\n")[0],
                                 usage="%(prog)s RUN.csv | OLD.csv NEW.csv | --old CSV... --new CSV... [options]")
    ap.add_argument("csv", nargs="*", help="one run (configurations against a baseline) or old.csv new.csv")
    ap.add_argument("--fleet", nargs="+", metavar="CSV",
                    help="runs of one plan (or its shards) made on several machines, as one comparison: each "
                         "machine's answer and the pooled one (docs/fleet.md)")
    ap.add_argument("--old", nargs="+", metavar="CSV", help="several runs before (with --new): the run is the unit")
    ap.add_argument("--new", nargs="+", metavar="CSV", help="several runs after (with --old)")
    ap.add_argument("--baseline", metavar="CONFIG",
                    help="configuration compared against (one run; default: the run's first configuration, "
                         "as its .meta.json lists them - like hyperfine's reference, its first command)")
    ap.add_argument("--floor", type=float, default=1.0, help="practical-significance floor in %% (default 1)")
    ap.add_argument("--family", choices=("cell", "primary", "bh"), default="cell",
                    help="multiplicity: alpha 0.05 per cell (default), Bonferroni over the primary metric, "
                         "or Benjamini-Hochberg over the table")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    ap.add_argument("--json", action="store_true",
                    help="the comparison as JSON on stdout (schema " + JSON_SCHEMA + ", docs/output.md)")
    ap.add_argument("--csv-out", metavar="FILE", help="also write every cell as CSV (a new file, or --force)")
    ap.add_argument("--force", action="store_true", help="replace an existing --csv-out file (never an input)")
    ap.add_argument("--metric", action="append", help="only these metrics (repeatable), e.g. throughput")
    ap.add_argument("--drop-disturbed", action="store_true",
                    help="leave out the samples disturbed from outside (CPU waits, steal, khugepaged, "
                         "compaction: the footer says how many)")
    return ap


def _inputs(args):
    """(old, new, names, order) of the runs the command line gives: one run (new None), two,
    several per side (lists of runs), or --fleet (one run over several machines)."""
    if args.old:
        old, new = [change.load(p) for p in args.old], [change.load(p) for p in args.new]
        for side in (old, new):  # one run given twice on a side would count its samples twice
            mbdata.check_unique([r for run in side for r in run])
        try:  # nor may a run be on both sides: its samples would be compared with themselves
            mbdata.check_unique([r for run in old + new for r in run])
        except mbcsv.CsvError as e:
            raise cli.Fail(f"a run on both sides: {e}", 2)
        names = (" ".join(args.old), " ".join(args.new))
        flat = [r for run in old + new for r in run]
        order = change.config_order(flat, args.old + args.new)
    elif args.fleet:
        run = mbdata.load(args.fleet)  # one sample twice (a file given twice) is refused here
        old, new = run.ok, None
        names = ("old", "new")
        order = change.config_order(old, args.fleet)
        seen = {}  # a machine's blocks in two files would share keys: one run per machine
        for r in run.rows:
            seen.setdefault(r["_machine"], {}).setdefault(r.get("run_id"), r.path)
        for m, runs in seen.items():
            files = sorted(set(runs.values()))
            if len(files) > 1:
                raise cli.Fail(f"--fleet: {files[0]} and {files[1]} are both from machine {mbdata.printable(m)}: give one run per machine "
                               f"(merge the shards of one run first)", 2)
        if len(run.machines) < 2:
            print(f"{cli.prefix()}note: --fleet: every row is from one machine "
                  f"({mbdata.printable(next(iter(run.machines), '?'))}): no answer across machines", file=sys.stderr)
        args.csv = args.fleet
    elif len(args.csv) == 2:
        old, new = change.load(args.csv[0]), change.load(args.csv[1])
        names = tuple(args.csv)
        both = {(r["run_id"], r["sample"]) for r in old} & {(r["run_id"], r["sample"]) for r in new}
        if both:  # NEW a subset of OLD (or one file twice): samples compared with themselves
            raise cli.Fail(f"{args.csv[0]} and {args.csv[1]} share {len(both)} samples (run {sorted(both)[0][0]}): "
                           f"a sample would be compared with itself; compare two different runs", 2)
        order = change.config_order(old + new, args.csv)
    else:
        old, new = change.load(args.csv[0]), None
        names = ("old", "new")
        order = change.config_order(old, args.csv)
    return old, new, names, order


if __name__ == "__main__":
    sys.exit(cli.run(main))
