#!/usr/bin/env python3
"""compare.py - benchstat-style tables from mallocbench CSVs, with verdicts that
never contradict the confidence interval printed beside them (scripts/stats.py).

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
Output: a terminal table, --markdown, --csv-out FILE.  analyse() is the whole
computation on rows in memory (tests and tests/bench/bench_verdicts.py call it).
Input that is not a mallocbench CSV (scripts/mbcsv.py) is refused in one line
naming the file and row, exit 2.
"""
import argparse
import dataclasses
import csv
import json
import math
import sys

from . import cli
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats

num = mbcsv.num  # a finite float, None when not measured
PRIMARY = "throughput"  # the name under which each workload's primary figure is tabled


# name, unit (None: the workload's throughput_unit), better (None: the workload's metric_better), value
# of a row: the metric registry's compare table (scripts/mbdata.py)
# (name, unit, better, fn, key): unit a tuple (UNIT, mbdata.PER_WORK) is per unit of work
METRICS = [(PRIMARY if m.key == "throughput" else m.name, m.unit, m.better, m.fn, m.key)
           for m in mbdata.metrics("compare")]

ESTIMATOR_TEXT = ("change: the Hodges-Lehmann estimate of the per-block ratio against the baseline, paired by "
                  "block, with its 95% CI from the exact Wilcoxon signed-rank test; 'unpaired': fewer than 2 "
                  "pairs, the ratio of the medians, no CI and no verdict")
VERDICT_TEXT = ("improved / regressed: the whole CI of the change lies beyond -+{floor} in the better / worse "
                "direction; improved? / regressed?: it excludes no change but reaches into that band (real, "
                "perhaps smaller than {floor}); negligible: it lies inside the band; within noise: it includes "
                "no change and reaches beyond the band; too few: at this n no difference could reach "
                "significance, whatever the data; trade-off: the workload's figure is a trade-off "
                "(its descriptor says so), not better or worse, and is shown with what it costs.")


def die(msg, status=1):
    raise cli.Fail(f"mallocbench compare: {msg}", status)


# ---- input ------------------------------------------------------------------------------

def config_order(rows, paths=()):
    """config -> rank: the sidecars' configs order, then first appearance (mbcsv.config_order)."""
    return {c: i for i, c in enumerate(mbcsv.config_order(list(paths), rows))}


def load(path):
    """The rows with status ok; mbcsv.CsvError for input that is not a CSV of the schema."""
    return mbdata.load(path).ok


def samples(rows):
    """{(workload, params): {config: [rows]}}"""
    out = {}
    for r in rows:
        out.setdefault((r["workload"], r["workload_params"]), {}).setdefault(r["config"], []).append(r)
    return out


def metric_of(metric, rows):
    """(name, unit, better) of a metric on one workload's rows: the primary figure takes the
    workload's own name, unit and direction from the CSV (schema 4 columns metric,
    metric_better; throughput, higher before)."""
    name, unit, better = metric[:3]
    r = rows[0] if rows else {}
    if unit is None:
        unit = r.get("throughput_unit") or ""
    elif isinstance(unit, tuple):
        unit = f"{unit[0]}/{mbdata.work_unit(rows)}"
    if better is None:
        better = r.get("metric_better") or "higher"
    if name == PRIMARY:
        name = mbdata.figure_name(r) or PRIMARY
    return name, unit, better


def match_configs(old_rows, new_rows):
    """(new config -> old config, only in old, only in new): by label, else by allocator family
    and requested tunables where that names exactly one configuration on each side."""
    def keys(rows):
        out = {}
        for r in rows:
            out.setdefault(r["config"], (r.get("allocator", ""), r.get("requested_tunables", "")))
        return out
    old, new = keys(old_rows), keys(new_rows)
    match = {c: c for c in new if c in old}
    rest_old = {c: k for c, k in old.items() if c not in match.values()}
    rest_new = {c: k for c, k in new.items() if c not in match}
    for c, k in rest_new.items():
        cand = [o for o, ko in rest_old.items() if ko == k]
        if len(cand) == 1 and sum(1 for kn in rest_new.values() if kn == k) == 1:
            match[c] = cand[0]
    only_old = [c for c in old if c not in match.values()]
    only_new = [c for c in new if c not in match]
    return match, only_old, only_new


# ---- analysis ---------------------------------------------------------------------------

def _unit_values(rows, fn, by_run):
    """{unit: value}: unit = block (median of a block's values), or the run index when by_run
    (a list of runs; the median of each run's values); a row without a block is its own unit."""
    groups = {}
    if by_run:
        for i, run in enumerate(rows):
            for r in run:
                v = fn(r)
                if v is not None:
                    groups.setdefault(("run", i), []).append(v)
    else:
        for i, r in enumerate(rows):
            v = fn(r)
            if v is not None:
                # a block of one plan (its shards share the plan's matrix_id): two unrelated runs
                # given together are not paired block by block
                b = r.get("block", "")
                groups.setdefault(("block", (r.get("matrix_id", ""), b, _machine_of(r))) if b != "" else ("row", i),
                                  []).append(v)
    return {u: stats.median(vs) for u, vs in groups.items()}


def _common_blocks(base, other):
    """The blocks both sides ran ({unit: v} each), when the units they share are blocks of one
    plan; None otherwise (rows without a block, or runs compared as runs)."""
    common = sorted(set(base) & set(other), key=str)
    return common if common and all(u[0] == "block" for u in common) else None


def unit_machines(rows):
    """{unit: machine label} of rows' blocks (mbdata.mark_machines; the host where a row has
    no mark)."""
    out = {}
    for r in rows:
        b = r.get("block", "")
        if b == "":
            continue
        m = _machine_of(r)
        out[("block", (r.get("matrix_id", ""), b, m))] = m
    return out


def _machine_of(r):
    """A row's machine (mbdata.mark_machines), its host where it has no mark: part of its
    block's key, so runs of one plan on several machines never share a block."""
    return r.get("_machine") or r.get("host", "")


def _fleet_change(base, other, common, level, machines, floor):
    """Several machines among the common blocks: each machine's paired change over its own
    blocks and the pooled one (stats.pool) as the cell's; with fewer than stats.POOL_MIN
    machines that have a CI, the paired change over all their blocks (every pair is still on
    one machine) with the machines' own beside it.  None for one machine, or where a
    machine's change is not a ratio (a count from zero: paired over all blocks)."""
    by = {}
    for u in common:
        by.setdefault(machines.get(u, ""), []).append(u)
    if len(by) < 2:
        return None
    per, weigh = [], []
    for m in sorted(by):
        us = by[m]
        ch = stats.paired_change([base[u] for u in us], [other[u] for u in us], level)
        if ch is None or ch.kind != "ratio":
            return None
        per.append((m, ch))
        weigh.append((m, ch if level == 0.95 else
                      stats.paired_change([base[u] for u in us], [other[u] for u in us], 0.95)))
    pl = stats.pool(per, floor, level, weigh)
    if pl.estimate is not None:
        return stats.pooled_change(pl, stats.median([base[u] for u in common]),
                                   stats.median([other[u] for u in common]))
    plain = stats.paired_change([base[u] for u in common], [other[u] for u in common], level)
    why = pl.missing or f"{pl.k} machine(s) with a CI, {stats.POOL_MIN} needed to pool"
    return dataclasses.replace(plain, fleet=pl, method=f"{plain.method}; over the blocks of {len(per)} machines, "
                                                       f"not pooled ({why}): its CI leaves out their spread")


def _change(base, other, paired, level, machines=None, floor=0.01):
    """stats change of other {unit: v} against base {unit: v}: paired over common blocks (the
    one estimator of a pair in one run); blocks measured on several machines (machines:
    {unit: label}): each machine's paired change, and the pooled one (stats.pool) as the
    cell's; with fewer than 2 common blocks (a sweep's points, -r 1) the ratio of the medians,
    marked unpaired, no CI; two runs: unpaired (Mann-Whitney)."""
    if paired:
        common = _common_blocks(base, other)
        if common and len(common) >= 2:
            if machines and len({machines.get(u, "") for u in common}) > 1:
                ch = _fleet_change(base, other, common, level, machines, floor)
                if ch is not None:
                    return ch
            return stats.paired_change([base[u] for u in common], [other[u] for u in common], level)
        if all(u[0] == "block" for u in list(base) + list(other)):
            return stats.unpaired_ratio(list(base.values()), list(other.values()))
    return stats.unpaired_change(list(base.values()), list(other.values()), level)


def estimate(base_rows, rows, fn):
    """(kind, value) of change(base_rows, rows, fn) without its CI and p: the same rule (_change)
    and the same estimate, at a fraction of the cost (the dashboard's nightly ratio).  None when
    a side has no value."""
    bv, ov = _unit_values(base_rows, fn, False), _unit_values(rows, fn, False)
    if not bv or not ov:
        return None
    common = _common_blocks(bv, ov)
    machines = unit_machines(list(base_rows) + list(rows))
    several = common and len({machines.get(u, "") for u in common}) > 1
    if common and len(common) >= 2 and not several:
        return stats.paired_estimate([bv[u] for u in common], [ov[u] for u in common])
    ch = _change(bv, ov, True, 0.95, machines)
    return (ch.kind, ch.estimate) if ch is not None else None


def change(base_rows, rows, fn, level=0.95):
    """The one estimate of rows' fn against base_rows' in one run (what every view prints for
    a pair: summary, report, plots, tune, frameworks, the dashboard): block medians, paired
    (_change).  None when a side has no value."""
    bv, ov = _unit_values(base_rows, fn, False), _unit_values(rows, fn, False)
    return _change(bv, ov, True, level, unit_machines(list(base_rows) + list(rows))) if bv and ov else None


class Analysis(list):
    """The cells of a comparison, in table order, with what else the table must say."""
    mode = "one run"
    only = ()       # lines naming what is on one side only
    family = "cell"
    floor = 0.01
    baseline = ""
    notes = ()
    hints = ()      # what the figures cannot say (a duration-bound command's runs/s)
    precision = ()  # each workload's resolution and disturbance lines
    unit_machine = {}  # {block unit: machine label}, one run
    machine_desc = {}  # {machine label: its sidecar description}

    def tables(self, names):
        """The cells of these tables only, with everything else the comparison says."""
        out = Analysis(c for c in self if c["table"] in names)
        out.__dict__.update(self.__dict__)
        return out


def _cell(**kw):
    c = dict(workload="", params="", metric="", unit="", better="higher", config="", baseline="",
             change=None, verdict="-", median=None, median_ci=None, base_median=None, n=0, n_base=0,
             level=0.95, primary=False, geomean=False, is_base=False, values=None, base_values=None)
    c.update(kw)
    return c


def check_floor(floor):
    """The practical-significance floor, a fraction of the baseline: finite, in [0, 1).  A
    negative floor flipped verdicts, nan made every one 'within noise': ValueError naming it."""
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not math.isfinite(floor) \
            or not 0 <= floor < 1:
        raise ValueError(f"floor {floor!r}: a fraction of the baseline, finite and in [0, 1) (0.01 is 1%)")
    return float(floor)


def analyse(rows_old, rows_new=None, baseline=None, floor=0.01, family="cell", two_runs=None,
            metrics=None, order=None, names=("old", "new"), trade_offs=()):
    """Every cell of the comparison.  One run: analyse(rows) (or rows_new None / the same list):
    each configuration against `baseline` (None: the first of `order`, else the first to appear),
    block-paired.  Two runs: analyse(old, new), unpaired.
    Several runs: analyse([run, ...], [run, ...]), the run as the unit (per-run medians).
    family: 'cell' (alpha 0.05 per cell), 'primary' (Bonferroni over the primary-metric cells),
    'bh' (Benjamini-Hochberg over all cells, FCR-adjusted CIs).  trade_offs: the workloads whose
    figure is a trade-off (trait trade_off): their primary cells get the verdict 'trade-off'.
    Returns an Analysis."""
    floor = check_floor(floor)
    metrics = metrics or METRICS
    several = bool(rows_old) and isinstance(rows_old[0], list)
    if two_runs is None:
        two_runs = rows_new is not None and rows_new is not rows_old
    res = Analysis()
    flat_old = [r for run in rows_old for r in run] if several else list(rows_old)
    if baseline is None and not two_runs:
        first = order or config_order(flat_old)
        baseline = min(first, key=first.get) if first else ""
    res.family, res.floor, res.baseline = family, floor, baseline
    # one run: the machine of each block (several: each machine's answer and the pooled one)
    res.unit_machine = unit_machines(flat_old) if not two_runs else {}
    res.machine_desc = {r["_machine"]: r.get("_machine_desc") or {} for r in flat_old if r.get("_machine")}
    if two_runs:
        flat_new = [r for run in rows_new for r in run] if several else list(rows_new)
        res.mode = "several runs" if several else "two runs"
        match, only_old, only_new = match_configs(flat_old, flat_new)
        only = []
        if only_old:
            only.append(f"only in {names[0]}: " + " ".join(sorted(only_old, key=lambda c: (order or {}).get(c, 0))))
        if only_new:
            only.append(f"only in {names[1]}: " + " ".join(sorted(only_new, key=lambda c: (order or {}).get(c, 0))))
        g_old, g_new = samples(flat_old), samples(flat_new)
        wl_only = [k for k in g_old if k not in g_new], [k for k in g_new if k not in g_old]
        for side, ks in zip(names, wl_only):
            if ks:
                only.append(f"only in {side}: workload " + "; ".join(f"{w} ({p})" for w, p in ks))
        res.only = only
    else:
        flat_new = flat_old
        match = None
        g_new = samples(flat_new)
        if not any(baseline in g for g in g_new.values()):
            res.only = [f"no configuration '{baseline}' to compare against"]
    order = order or config_order(flat_old + (flat_new if two_runs else []))
    rank = lambda c: (order.get(c, len(order)), c)  # noqa: E731

    def rows_of(side_runs, key, config):
        """This side's rows of one workload and config: a flat list, or a list per run."""
        if several:
            return [[r for r in run if (r["workload"], r["workload_params"]) == key and r["config"] == config]
                    for run in side_runs]
        return [r for r in side_runs if (r["workload"], r["workload_params"]) == key and r["config"] == config]

    for metric in metrics:
        for key, configs in g_new.items():
            wl, params = key
            any_rows = next(iter(configs.values()))
            name, unit, better = metric_of(metric, any_rows)
            fn = metric[3]
            common = dict(workload=wl, params=params, metric=name, unit=unit, better=better,
                          primary=metric[0] == PRIMARY, table=metric[0], key=metric[4] if len(metric) > 4 else None)
            if two_runs:
                pairs = [(c, match[c]) for c in sorted(configs, key=rank) if c in match]
                pairs = [(c, o) for c, o in pairs if key in g_old and o in g_old[key]]
            else:
                if baseline not in configs:
                    continue
                pairs = [(c, baseline) for c in sorted(configs, key=rank) if c != baseline]
                bv = _unit_values(configs[baseline], fn, False)
                if bv:
                    vals = list(bv.values())
                    res.append(_cell(**common, config=baseline, is_base=True, values=bv, median=stats.median(vals),
                                     median_ci=stats.median_ci(vals), n=len(vals)))
            for config, base_config in pairs:
                if two_runs:
                    bv = _unit_values(rows_of(rows_old, key, base_config), fn, several)
                    ov = _unit_values(rows_of(rows_new, key, config), fn, several)
                    if bv:
                        vals = list(bv.values())
                        res.append(_cell(**common, config=f"{base_config} ({names[0]})", is_base=True, values=bv,
                                         median=stats.median(vals), median_ci=stats.median_ci(vals), n=len(vals)))
                else:
                    ov = _unit_values(configs[config], fn, False)
                if not bv or not ov:
                    continue
                vals = list(ov.values())
                res.append(_cell(**common, config=config,
                                 baseline=f"{base_config} ({names[0]})" if two_runs else base_config,
                                 values=ov, base_values=bv, paired=not two_runs,
                                 median=stats.median(vals), median_ci=stats.median_ci(vals), n=len(vals),
                                 n_base=len(bv), base_median=stats.median(list(bv.values()))))
        _geomean_cells(res, metric, rank, two_runs)
    res.hints = []
    for (wl, params), configs in g_new.items():
        why = mbdata.duration_bound(configs)
        if why:
            res.hints.append(f"{mbdata.workload_title(wl, params)}: its runs/s cannot tell the configurations "
                             f"apart: {why}. Give `mallocbench exec --metric REGEX` a figure the command prints "
                             f"(work done in its time).")
    _levels(res, family)
    for c in res:
        if not c["is_base"]:
            c["verdict"] = stats.verdict(c["change"], c["better"], floor)
            if c["primary"] and c["workload"] in trade_offs and c["change"] is not None \
                    and c["change"].method != stats.UNPAIRED:  # unpaired: no word at all
                c["verdict"] = "trade-off"
    return res


def pair(base_rows, rows, metric=None, floor=0.01, trade_off=False):
    """The cell of one pair (rows against base_rows, one workload, one configuration each) as
    analyse() makes it: the views that show one pair at a time (plots' captions, tune, the
    frameworks report) take it from here.  None when either side has no value."""
    if not base_rows or not rows:
        return None
    wl, params = rows[0]["workload"], rows[0]["workload_params"]
    # one workload for the pair (a program's rows may name it by different parameters)
    both = [dict(r, workload=wl, workload_params=params) for r in list(base_rows) + list(rows)]
    res = analyse(both, baseline=base_rows[0]["config"], floor=floor,
                  metrics=[metric or METRICS[0]], trade_offs={wl} if trade_off else ())
    return next((c for c in res if not c["is_base"] and not c["geomean"] and c["config"] == rows[0]["config"]), None)


def pair_values(base, other, better="higher", floor=0.01, unit="", trade_off=False, machines=None):
    """The cell of a pair given as {block: value} on each side (tune's confirmation): the same
    estimator (_change over the common blocks) and verdict as analyse(), 'trade-off' for the
    figure of a workload with that trait; machines {block: machine} where they are several."""
    bv = {("block", k): v for k, v in base.items() if v is not None}
    ov = {("block", k): v for k, v in other.items() if v is not None}
    um = {("block", k): m for k, m in (machines or {}).items()}
    ch = _change(bv, ov, True, 0.95, um, floor) if bv and ov else None
    word = ("trade-off" if trade_off and ch is not None and ch.method != stats.UNPAIRED
            else stats.verdict(ch, better, floor))
    return _cell(change=ch, verdict=word, unit=unit, better=better, n=len(ov), n_base=len(bv))


def change_words(cell):
    """A pair's change as every view words it: the estimate ('0.871x'; 'unpaired' where fewer
    than 2 pairs) and its verdict ('0.871x regressed', '1.002x negligible')."""
    if cell is None or cell["change"] is None:
        return "-"
    text, _ = fmt_change(cell)
    if cell["change"].method == stats.UNPAIRED:
        return f"{text} unpaired"
    return f"{text} {cell['verdict']}" if cell["verdict"] not in ("-", "") else text


def _geomean_cells(res, metric, rank, two_runs):
    """Per configuration, the geometric mean of its ratios over the workloads where every
    configuration has a positive ratio (only workloads whose figure means the same: for the
    primary figure, throughputs), with a CI from the per-block (or per-run) geomean."""
    cells = [c for c in res if c["table"] == metric[0] and not c["is_base"] and not c["geomean"]]
    if metric[0] == PRIMARY:
        cells = [c for c in cells if c["unit"].endswith("/s") and c["better"] == "higher"]
    configs = sorted({c["config"] for c in cells}, key=rank)
    wls = []
    for key in dict.fromkeys((c["workload"], c["params"]) for c in cells):
        mine = {c["config"]: c for c in cells if (c["workload"], c["params"]) == key}
        if all(cf in mine and _positive(mine[cf]) for cf in configs):
            wls.append(key)
    if len(wls) < 2 or not configs:
        return
    names = ", ".join(short_names(wls))
    for cf in configs:
        mine = [c for c in cells if c["config"] == cf and (c["workload"], c["params"]) in wls]
        units = set.intersection(*(set(c["values"]) & set(c["base_values"]) for c in mine)) if not two_runs else None

        def geo(side, us):
            return {u: math.exp(sum(math.log(c[side][u]) for c in mine) / len(mine)) for u in us}
        if two_runs:
            uo = set.intersection(*(set(c["values"]) for c in mine))
            ub = set.intersection(*(set(c["base_values"]) for c in mine))
            ov, bv = geo("values", uo), geo("base_values", ub)
        else:
            ov, bv = geo("values", units), geo("base_values", units)
        if not ov or not bv:
            continue
        res.append(_cell(workload="geomean", params=names, metric=mine[0]["metric"] if metric[0] != PRIMARY
                         else "throughput", key=metric[4] if len(metric) > 4 else None, unit="",
                         better="higher" if metric[0] == PRIMARY else metric[2],
                         config=cf, baseline=mine[0]["baseline"], values=ov, base_values=bv, geomean=True,
                         paired=not two_runs, primary=metric[0] == PRIMARY, table=metric[0], n=len(ov),
                         n_base=len(bv), geo_set=wls))


def short_names(keys):
    """Workload labels for a list of (workload, params): the name, plus the parameters that
    tell apart the entries sharing it (tensor_copy size=16M)."""
    out = []
    for w, p in keys:
        same = [q for x, q in keys if x == w]
        if len(same) == 1:
            out.append(w)
            continue
        out.append(f"{w} {mbdata.format_params(mbdata.distinguishing(p, same)) or p}")
    return out


def _positive(c):
    vals = list(c["values"].values()) + list(c["base_values"].values())
    return bool(vals) and min(vals) > 0


def _levels(res, family, alpha=stats.ALPHA):
    """The CI level of each cell from the family option, and its change at that level."""
    tested = [c for c in res if not c["is_base"]]
    m, fl = res.unit_machine, res.floor
    for c in tested:
        c["change"] = _change(c["base_values"], c["values"], c["paired"], 1 - alpha, m, fl)
        c["level"] = 1 - alpha
    if family == "primary":
        fam = [c for c in tested if c["primary"] and c["change"] is not None]
        level = stats.bonferroni_level(len(fam), alpha)
        for c in fam:
            c["level"] = level
            c["change"] = _change(c["base_values"], c["values"], c["paired"], level, m, fl)
    elif family == "bh":
        ps = [c["change"].p for c in tested if c["change"] is not None and c["change"].p == c["change"].p]
        r, level = stats.bh_level(ps, alpha)
        for c in tested:
            if c["change"] is not None:
                c["level"] = level
                c["change"] = _change(c["base_values"], c["values"], c["paired"], level, m, fl)
        res.notes = (f"Benjamini-Hochberg at q = {alpha:g} over {len(ps)} cells: {r} selected; every change CI "
                     f"at {_pct(level)} (false-coverage-rate adjusted), so a CI excludes no change exactly "
                     f"where the procedure selects the cell (without ties).",)
    if family == "primary":
        k = sum(1 for c in tested if c["primary"])
        res.notes = (f"family-wise: the {k} primary-metric cells at {_pct(stats.bonferroni_level(k, alpha))} "
                     f"(Bonferroni, 1 - {alpha:g}/{k}): a false flag among them with probability <= {alpha:g}; "
                     f"other cells at {_pct(1 - alpha)} each.",)


# ---- formatting -------------------------------------------------------------------------

def _pct(level):
    return f"{level * 100:.4g}%"


_PREFIX = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def _unit_scale(v, unit):
    """(factor, unit text) to print values near v in unit readably: B/s as GB/s..., us as
    us/ms/s, s as us/ms/s, other rates with k/M/G."""
    a = abs(v) if v is not None and v == v else 0.0
    if unit == "fraction":  # a share (idle_release's): in percent, as the summary shows it
        return 100.0, "%"
    if unit.startswith("s/"):  # CPU time per unit of work: as s/ms/µs per it
        f, u = _unit_scale(v, "s")
        return f, u + unit[1:]
    if unit == "us":
        return (1e-6, "s") if a >= 1e6 else (1e-3, "ms") if a >= 1e3 else (1.0, "µs")
    if unit == "s":
        return (1.0, "s") if a >= 1 or a == 0 else (1e3, "ms") if a >= 1e-3 else (1e6, "µs")
    if unit in ("B/s", "B"):
        for f, p in _PREFIX:
            if a >= f:
                return 1 / f, p + unit
        return 1.0, unit
    if unit not in ("MiB", "") and a >= 1e4:
        for f, p in _PREFIX:
            if a >= f:
                return 1 / f, p + (" " + unit if not unit.startswith("/") else unit)
    return 1.0, unit


def fmt(v, nd=3):
    """A number in nd significant digits, never in exponent form."""
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "-"
    if v == 0:
        return "0"
    digits = max(0, nd - 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{min(digits, 9)}f}"


def fmt_value(v, unit, like=None):
    """v in unit, scaled as `like` (default v itself) would be: '1.22 GB/s', '63.2 ms'."""
    f, u = _unit_scale(v if like is None else like, unit)
    if v is None:
        return "-"
    return f"{fmt(v * f)}{_sep(u)}{u}"


def _sep(u):
    """What stands between a number and its unit: nothing before '/run', '%' or no unit."""
    return "" if u.startswith("/") or u in ("", "%") else " "


def fmt_ci(ci, unit, like):
    if not ci:
        return "-"
    f, u = _unit_scale(like, unit)
    return f"{fmt(ci[0] * f)}..{fmt(ci[1] * f)}"


def ratio_text(x):
    """A ratio as every view writes it (tables, words, JSON's text, the fleet view)."""
    if x is not None and math.isinf(x):
        return ">1.8e308x"  # past the largest double (stats._exp): a size, never 'infx'
    return "-" if x is None else f"{mbdata.ratio_digits(x)}x"


def _ci_text(lo, hi):
    """A ratio's CI as every table prints it."""
    return "-" if lo is None else mbdata.ratio_ci_digits(lo, hi)


def _diff_unit(like, unit):
    """(factor, unit text) of a difference in unit: the unit's own scale (ms/sample, /run), a
    share's in percentage points ('pp': 98% to 0% is -98.2 pp, never '-0.982'); a value with
    no unit in the registry says so ('(no unit)'), never a bare number beside a ratio."""
    f, u = _unit_scale(like, unit)
    return (f, "pp") if u == "%" else (f, u or "(no unit)")


def fmt_change(c):
    """(change, change CI) as every view writes them (the one place): a ratio '0.291x'; a
    difference (a change that is not a ratio: a side with a value <= 0) signed, '+' up and '-'
    down, in its metric's unit (mbdata.unit_of: '+5.00 ms/sample', '-98.2 pp' for a share); from
    a baseline of zero, '0→823/run'.  The CI is written in the same scale, without the unit."""
    ch = c["change"]
    if ch is None:
        return "-", "-"
    if ch.kind == "ratio":
        return ratio_text(ch.estimate), _ci_text(ch.lo, ch.hi)
    like = max(abs(ch.estimate), abs(ch.median or 0), abs(ch.base_median or 0))
    f, u = _diff_unit(like, c["unit"])

    def signed(v):
        return "-" if v is None else ("+" if v > 0 else "") + fmt(v * f)
    if ch.base_median == 0:
        text = f"0→{fmt(ch.median * f)}{_sep(u)}{u}"
    else:
        text = f"{signed(ch.estimate)}{_sep(u)}{u}"
    return text, "-" if ch.lo is None else f"{signed(ch.lo)}..{signed(ch.hi)}"


def change_unit(c):
    """The unit of a change's numbers in JSON (estimate, lo, hi): 'ratio', or for a
    difference its metric's unit (c['unit']: 'fraction', 's/sample', '/run'); None without one."""
    ch = c["change"]
    if ch is None:
        return None
    return "ratio" if ch.kind == "ratio" else c["unit"]


def resolution_text(c):
    """The resolution a comparison reached (the smallest change its blocks could flag: its
    paired CI's half-width) as every line writes it: a ratio's as a share ('±9.6%'), a
    difference's in its unit as fmt_change writes it ('±0.05 pp', '±5.00 ms/sample'); None
    without a CI."""
    ch = c["change"]
    r = mbdata.resolution(ch)
    if r is not None:
        return f"±{r * 100:.1f}%"
    if ch is None or ch.kind != "diff" or ch.lo is None or ch.hi is None:
        return None
    half = (ch.hi - ch.lo) / 2
    like = max(abs(ch.estimate), abs(ch.median or 0), abs(ch.base_median or 0))
    f, u = _diff_unit(like, c["unit"])
    return f"±{fmt(half * f)}{_sep(u)}{u}"


def quantity(name, unit):
    """A quantity with its unit as every view words it: 'faults per MiB', 'user CPU, s per run',
    'copy bandwidth, B/s'."""
    if unit == "fraction":
        return f"{name}, a share in %"
    if unit.startswith("/"):
        return f"{name} per {unit[1:]}"
    if "/" in unit and not unit.endswith("/s"):
        a, b = unit.split("/", 1)
        return f"{name}, {a} per {b}"
    return f"{name}, {unit or 'no unit'}"


def _fmt_p(p):
    return "-" if p is None or math.isnan(p) else f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def _n_text(c):
    ch = c["change"]
    if ch is None:
        return f"{c['n']}/{c['n_base']}"
    if ch.paired:
        return f"{ch.n}" if ch.n == c["n"] == c["n_base"] else f"{ch.n} of {c['n']}/{c['n_base']}"
    return f"{ch.n}/{ch.n_base}"


# what tells machines apart (their sidecars' `machine`): (key, words, unit scale, unit)
MACHINE_FIGURES = (("fault_ns", "page-fault cost", 1e-3, "µs"), ("refault_ns", "re-fault cost", 1e-3, "µs"),
                   ("memcpy_bytes_per_s", "memcpy bandwidth", 1e-9, "GB/s"))
MACHINE_TRAITS = (("cpu_model", "CPU"), ("kernel", "kernel"), ("thp_enabled", "THP"), ("numa_nodes", "NUMA nodes"),
                  ("cgroup_memory_limit", "cgroup memory limit"), ("cores_online", "cores"))


def _trend(ests, vals):
    """+1 where a figure rises with the ratio on every machine, -1 where it falls on every
    one, 0 otherwise (ties included): a description of these machines, not a test."""
    by = [v for _, v in sorted(zip(ests, vals))]
    steps = [b - a for a, b in zip(by, by[1:])]
    return 1 if all(d > 0 for d in steps) else -1 if all(d < 0 for d in steps) else 0


def machine_differences(pl, descs):
    """What differs between a cell's pooled machines, from their descriptions: a calibrated
    figure (page-fault cost, memcpy bandwidth) with whether the ratio rises or falls with it
    across them (every machine in the same order: a description of these machines, not a
    test), and the traits (CPU, kernel, THP, ...) that are not the same on all.  '' when
    nothing is known."""
    ms = sorted(((m, ch) for m, ch in pl.machines if ch is not None), key=lambda x: -x[1].estimate)  # as the words
    return _differences([m for m, _ in ms], descs, [ch.estimate for _, ch in ms])


def fleet_differences(res):
    """What differs between all the machines a comparison's cells were measured on (the
    footer's and the JSON's): the same figures and traits as a cell's, without a trend.  ''
    for one machine, or when nothing known differs."""
    pls = [getattr(c["change"], "fleet", None) for c in res if not c["is_base"] and c["change"] is not None]
    ms = sorted({m for pl in pls if pl is not None for m, _ in pl.machines})
    return _differences(ms, res.machine_desc) if len(ms) >= 2 else ""


def _differences(ms, descs, ests=None):
    parts = []
    for key, words, scale, unit in MACHINE_FIGURES:
        vals = [((descs.get(m) or {}).get("calibration") or {}).get(key) for m in ms]
        if len(ms) < 2 or any(not isinstance(v, (int, float)) for v in vals) or max(vals) < 1.2 * min(vals):
            continue
        t = _trend(ests, vals) if ests and len(ms) >= 3 else 0  # two machines are always in some order
        trend = " (the ratio rises with it)" if t > 0 else " (the ratio falls as it rises)" if t < 0 else ""
        parts.append(f"{words} " + ", ".join(f"{v * scale:.3g} {unit} on {m}" for m, v in zip(ms, vals)) + trend)
    loads = [((descs.get(m) or {}).get("calibration") or {}).get("load1") for m in ms]
    if parts and all(isinstance(v, (int, float)) for v in loads) and max(loads) - min(loads) > 0.5:
        # calibrate records its load: a figure measured busy is the machine's state, not the machine
        parts.append("calibrated at load " + ", ".join(f"{v:.2g} on {m}" for m, v in zip(ms, loads))
                     + " (a busy machine's figures are its state as much as the machine)")
    for key, words in MACHINE_TRAITS:
        vals = [(descs.get(m) or {}).get(key) for m in ms]
        if any(v is None for v in vals) or len(set(map(str, vals))) < 2:
            continue
        by = {}
        for m, v in zip(ms, vals):
            by.setdefault(str(v), []).append(m)
        parts.append(f"{words} " + "; ".join(f"{v} on {', '.join(who)}" for v, who in by.items()))
    return "; ".join(parts)


def fleet_lines(c, descs=None):
    """The lines under a cell measured on several machines: each machine's change, the pooled
    one with tau and I^2, the words, and what differs between the machines."""
    ch = c["change"]
    pl = getattr(ch, "fleet", None)
    if pl is None:
        return []
    each = ", ".join(f"{ratio_text(m_ch.estimate)} [{_ci_text(m_ch.lo, m_ch.hi)}] on {m} ({m_ch.n} blocks)"
                     for m, m_ch in pl.machines)
    head = f"{mbdata.workload_title(c['workload'], c['params'])} {c['config']} vs {c['baseline']}"
    lines = [f"{head}, {c['metric']}, on each machine: {each}"]
    if pl.estimate is not None:
        lines.append(f"  pooled over {pl.k} machines: {ratio_text(pl.estimate)} [{_ci_text(pl.lo, pl.hi)}] "
                     f"(Hartung-Knapp {_pct(pl.level)} CI); tau {pl.tau:.3f} [{pl.tau_ci[0]:.3f}..{pl.tau_ci[1]:.3f}], "
                     f"I² {pl.i2 * 100:.0f}% [{pl.i2_ci[0] * 100:.0f}..{pl.i2_ci[1] * 100:.0f}%]; "
                     f"Cochran's Q {pl.q:.3g}, p {_fmt_p(pl.q_p)}")
    else:
        q = f"; Cochran's Q {pl.q:.3g}, p {_fmt_p(pl.q_p)}" if pl.q is not None else ""
        why = pl.missing or f"{pl.k} machine(s) with a CI, {stats.POOL_MIN} needed"
        lines.append(f"  not pooled ({why}): the table gives the paired change over all their blocks, "
                     f"whose CI leaves out the machines' spread{q}")
    for why in dict.fromkeys(pl.left_why.values()):
        lines.append(f"  not pooled ({why}): {', '.join(m for m in pl.left_out if pl.left_why.get(m) == why)}")
    words = stats.machine_words(pl, ratio_text)
    diff = machine_differences(pl, descs or {}) if pl.differs else ""
    lines.append(f"  {words}" + (f"; they differ in {diff}" if diff else ""))
    return lines


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
    tables = list(dict.fromkeys(c["table"] for c in res))
    for t in tables:
        mc = [c for c in res if c["table"] == t]
        lv = next((c["level"] for c in mc if not c["is_base"]), 0.95)
        head = ["config", "median", "95% CI", vs, f"{_pct(lv)} CI", "verdict", "p", "n"]
        table = []
        last = None
        for c in mc:
            if c["geomean"]:
                if last != "geomean":
                    last = "geomean"
                    table.append(f"geometric mean over {c['params']}")
                ch, ci = fmt_change(c)
                table.append([c["config"], "", "", ch, ci, c["verdict"], _fmt_p(c["change"].p if c["change"] else None),
                              _n_text(c)])
                continue
            if (c["workload"], c["params"]) != last:
                last = (c["workload"], c["params"])
                table.append(f"{mbdata.workload_title(c['workload'], c['params'])}: {quantity(c['metric'], c['unit'])}, "
                             f"{c['better']} is better")
            med = fmt_value(c["median"], c["unit"])
            ci = fmt_ci(c["median_ci"], c["unit"], c["median"]) if c["median_ci"] else f"(n={c['n']})"
            if c["is_base"]:
                table.append([c["config"], med, ci, "", "", "", "", str(c["n"])])
            else:
                ch, cci = fmt_change(c)
                table.append([c["config"], med, ci, ch, cci, c["verdict"],
                              _fmt_p(c["change"].p if c["change"] else None), _n_text(c)])
        title = "primary figure of each workload" if t == PRIMARY else t
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
        fleet = [line for c in mc if not c["is_base"] for line in fleet_lines(c, res.machine_desc)]
        if fleet:
            out.write(("\n" if markdown else "\n") + "\n".join(
                (f"- {md(line.strip())}" if markdown else f"  {md(line)}") for line in fleet) + "\n")
    out.write("\n" + "\n".join(map(md, footer(res).split("\n"))) + "\n")


def footer(res):
    tested = [c for c in res if not c["is_base"] and c["change"] is not None]
    m = len(tested)
    lines = []
    if res.family == "cell":
        lines.append(f"{m} cells tested at alpha = 0.05 each; about {0.05 * m:.1f} false flags expected when "
                     f"nothing changed.")
    else:
        lines.append(f"{m} cells tested.")
    pooled = [c for c in tested if getattr(c["change"], "fleet", None) is not None]
    if pooled:
        ms = sorted({m for c in pooled for m, _ in c["change"].fleet.machines})
        lines.append(f"measured on {len(ms)} machines ({', '.join(ms)}), each block on one: a cell's change pools "
                     f"the machines' own paired changes (listed under its table) by random effects (Paule-Mandel "
                     f"tau², Hartung-Knapp CI); with fewer than {stats.POOL_MIN} machines with a CI it is the "
                     f"paired change over all their blocks, whose CI leaves out the machines' spread.")
        diff = fleet_differences(res)
        blind = [m for m in ms if not res.machine_desc.get(m)]
        lines.append(f"the machines differ in {diff}." if diff else
                     "nothing their descriptions record differs between the machines." if not blind else
                     f"no description of {', '.join(blind)} (no sidecar): what differs is not known.")
    lines += list(res.notes) + list(res.hints) + list(res.precision)
    lines.append(VERDICT_TEXT.format(floor=f"{res.floor * 100:g}%"))
    few = {}
    for c in tested:
        if c["verdict"] == "too few":
            ch = c["change"]
            key = (ch.paired, ch.n, ch.n_base, round(ch.level, 6))
            few.setdefault(key, (ch, []))[1].append(c["config"])
    for (paired, n, nb, _), (ch, cfgs) in few.items():
        who = ", ".join(dict.fromkeys(cfgs))
        what = f"n={n} pairs" if paired else f"n={n}/{nb}" if n != nb else f"n={n} per side"
        lines.append(f"too few: {what}: no difference can be detected at {_pct(ch.level)} (smallest possible "
                     f"p {ch.min_p:.2g}); add blocks ({who}).")
    return "\n".join(lines)


JSON_SCHEMA = "mallocbench-compare/1"


def json_number(v):
    return None if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))) else v


def records(res):
    """The comparison as JSON-ready data, one schema (JSON_SCHEMA; docs/output.md) for
    `compare --json`, `report --json` and mallocbench.compare(): one record per tested cell,
    with the figures every other view prints for it."""
    cells = []
    for c in res:
        if c["is_base"]:
            continue
        ch = c["change"]
        ci = c["median_ci"] or (None, None)
        text, ci_text = fmt_change(c)
        cells.append({
            "workload": c["workload"],
            "params": ("; ".join(f"{a} ({b})" for a, b in c["geo_set"]) if c["geomean"] else c["params"]),
            "geomean": bool(c["geomean"]), "metric": c.get("key") or c["table"], "figure": c["metric"],
            "unit": c["unit"], "quantity": quantity(c["metric"], c["unit"]), "better": c["better"],
            "primary": bool(c["primary"]), "config": c["config"], "baseline": c["baseline"],
            "n": ch.n if ch else c["n"], "n_base": ch.n_base if ch else c["n_base"],
            "median": json_number(c["median"]), "median_ci": [json_number(ci[0]), json_number(ci[1])], "base_median": json_number(c["base_median"]),
            "kind": ch.kind if ch else None, "change_unit": change_unit(c),
            "paired": bool(ch.paired) if ch else None,
            "estimate": json_number(ch.estimate) if ch else None, "lo": json_number(ch.lo) if ch else None,
            "hi": json_number(ch.hi) if ch else None, "level": c["level"], "p": json_number(ch.p) if ch else None,
            "method": ch.method if ch else None, "verdict": c["verdict"], "text": text, "ci_text": ci_text,
        })
        pl = getattr(ch, "fleet", None)
        if pl is not None:
            cells[-1]["machines"] = [{"machine": m, "estimate": json_number(x.estimate), "lo": json_number(x.lo),
                                      "hi": json_number(x.hi), "n": x.n, "p": json_number(x.p)}
                                     for m, x in pl.machines]
            cells[-1]["pooled"] = {
                "k": pl.k, "estimate": json_number(pl.estimate), "lo": json_number(pl.lo), "hi": json_number(pl.hi),
                "p": json_number(pl.p), "tau": json_number(pl.tau),
                "tau_ci": [json_number(x) for x in pl.tau_ci] if pl.tau_ci else None,
                "i2": json_number(pl.i2), "i2_ci": [json_number(x) for x in pl.i2_ci] if pl.i2_ci else None,
                "q": json_number(pl.q), "q_p": json_number(pl.q_p), "differs": pl.differs,
                "not_pooled": list(pl.left_out), "not_pooled_why": [pl.left_why.get(m, "") for m in pl.left_out],
                "words": stats.machine_words(pl, ratio_text),
                "differences": machine_differences(pl, res.machine_desc) if pl.differs else ""}
    return {"schema": JSON_SCHEMA, "mode": res.mode, "baseline": res.baseline, "floor": res.floor,
            "family": res.family, "estimator": ESTIMATOR_TEXT, "verdicts": VERDICT_TEXT.format(
                floor=f"{res.floor * 100:g}%"),
            "notes": list(res.only) + list(res.notes) + list(res.hints) + list(res.precision),
            "machines": [{"machine": m, "description": res.machine_desc.get(m) or {}} for m in
                         sorted({x["machine"] for c in cells for x in c.get("machines", [])})],
            "machine_differences": fleet_differences(res), "cells": cells}


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
            if c["is_base"]:
                continue
            ch = c["change"]
            ci = c["median_ci"] or (None, None)
            params = "; ".join(f"{a} ({b})" for a, b in c["geo_set"]) if c["geomean"] else c["params"]
            w.writerow([G(c["workload"]), G(params), c["table"], c["metric"], c["unit"], c["better"], G(c["config"]),
                        G(c["baseline"]),
                        ch.n if ch else c["n"], ch.n_base if ch else c["n_base"], g(c["median"]), g(ci[0]),
                        g(ci[1]), g(c["base_median"]), ch.kind if ch else "", g(ch.estimate if ch else None),
                        g(ch.lo if ch else None), g(ch.hi if ch else None), g(c["level"]),
                        g(ch.p if ch else None), g(ch.min_p if ch else None), ch.method if ch else "",
                        c["verdict"]])


def precision_lines(res, rows, dropped):
    """Per workload: the resolution each paired primary comparison reached (the smallest
    change it could have flagged), and how disturbed its samples were (mbdata.disturbed,
    mbdata.variance_explained); dropped: {config: n} samples --drop-disturbed left out."""
    lines = []
    prim = [c for c in res if c["primary"] and not c["geomean"]]
    fn = next((m[3] for m in METRICS if m[0] == PRIMARY), None)
    for key in dict.fromkeys((c["workload"], c["params"]) for c in prim):
        cells = [c for c in prim if (c["workload"], c["params"]) == key]
        head = mbdata.workload_title(*key)
        reach = [(c["config"], resolution_text(c)) for c in cells if not c["is_base"] and c.get("paired")]
        if reach:
            lines.append(f"resolution, {head}: " + ", ".join(
                f"{cfg} {r or 'none (too few blocks)'}" for cfg, r in reach)
                + " (the smallest change these blocks could flag: the paired CI's half-width)")
        parts, expl = [], []
        for c in cells:
            cfg = c["config"]
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


def first_lines(run, res):
    """What a reader must see before any table (summary, report, the end of `run`): the
    configurations with no ok sample, a machine that was not quiet, the disturbed samples, and
    the resolution each primary comparison reached (the smallest change it could flag: its
    paired CI's half-width) or why it reached none.  run: mbdata.Run; res: analyse() of its rows."""
    lines = [f"no ok sample: {x}" for x in mbdata.no_ok_sample(run)]
    for meta in run.metas:
        q = meta.get("quiet") if isinstance(meta, dict) else None
        if isinstance(q, dict) and q.get("quiet") is False:
            lines.append(f"the machine was not quiet when the run started: {mbdata.printable(str(q.get('why') or '?'))}"
                         " (figures are noisier; --require-quiet refuses to start)")
    marked = [r for r in run.ok if mbdata.disturbed(r)]
    if marked:
        by = {}
        for r in marked:
            by[r["workload"]] = by.get(r["workload"], 0) + 1
        tot = {}
        for r in run.ok:
            tot[r["workload"]] = tot.get(r["workload"], 0) + 1
        lines.append("disturbed samples: " + ", ".join(f"{w} {n}/{tot[w]}" for w, n in by.items())
                     + " (CPU waits, host steal, khugepaged or compaction during the sample; "
                     "compare --drop-disturbed leaves them out)")
    prim = [c for c in res if c["primary"] and not c["geomean"] and not c["is_base"] and c["change"] is not None]
    for key in dict.fromkeys((c["workload"], c["params"]) for c in prim):
        cells = [c for c in prim if (c["workload"], c["params"]) == key]
        parts, none = [], {}
        for c in cells:
            ch = c["change"]
            r = resolution_text(c)
            if r is not None:
                parts.append(f"{c['config']} {r}")
                continue
            why = ("unpaired: fewer than 2 blocks" if ch.method == stats.UNPAIRED
                   else f"{ch.n} pairs; a 95% CI needs 6: add blocks")
            none.setdefault(why, []).append(c["config"])
        for why, cfgs in none.items():
            parts.append(("none" if len(cfgs) == len(cells) else "none for " + ", ".join(cfgs)) + f" ({why})")
        lines.append(f"resolution reached, {mbdata.workload_title(*key)} vs {cells[0]['baseline']}: "
                     + ", ".join(parts))
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
    floor = check_floor(floor)  # before any work
    if not isinstance(run, mbdata.Run):
        run = mbdata.load(run)
    order = run.config_order
    if baseline is not None and baseline not in order:
        raise ValueError(f"no configuration {baseline!r} in the run (it has: {', '.join(order)})")
    chosen = METRICS
    if metrics is not None:
        known = [m[4] for m in METRICS]
        bad = [k for k in metrics if k not in known]
        if bad:
            raise ValueError(f"unknown metric {bad[0]!r} (valid: {', '.join(known)})")
        chosen = [m for m in METRICS if m[4] in metrics]
    # as the command line does it: its order of configurations, its notes
    res = analyse(run.ok, baseline=baseline, floor=floor, metrics=chosen, order=config_order(run.ok, run.paths),
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
        die(str(e), mbcsv.EXIT_BAD_INPUT)


def run(argv):
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
    args = ap.parse_args(argv)
    if bool(args.old) != bool(args.new):
        die("--old and --new go together", 2)
    if args.fleet and (args.old or args.csv):
        die("--fleet takes every CSV: give no other", 2)
    if args.old and args.csv:
        die("give old.csv new.csv, or --old ... --new ..., not both", 2)
    if not args.old and not args.fleet and len(args.csv) not in (1, 2):
        die("give one CSV, or two (old new), or --old A.csv ... --new B.csv ..., or --fleet A.csv B.csv ...", 2)
    try:
        check_floor(args.floor / 100)
    except ValueError:
        die(f"--floor {args.floor:g}: a percentage, finite and in [0, 100)", 2)
    inputs = (args.csv or []) + (args.old or []) + (args.new or []) + (args.fleet or [])
    if args.csv_out:
        try:  # refused before any work: an existing file without --force, an input even with it
            mbout.hold(args.csv_out, args.force, inputs)  # refused, and held, before any work
        except mbout.OutputError as e:
            die(str(e), 2)
    metrics = METRICS
    if args.metric:
        known = {m[0] for m in METRICS}
        bad = [m for m in args.metric if m not in known]
        if bad:
            die(f"unknown metric {bad[0]!r} (valid: {', '.join(m[0] for m in METRICS)})", 2)
        metrics = [m for m in METRICS if m[0] in args.metric]
    if args.old:
        old, new = [load(p) for p in args.old], [load(p) for p in args.new]
        for side in (old, new):  # one run given twice on a side would count its samples twice
            mbdata.check_unique([r for run in side for r in run])
        try:  # nor may a run be on both sides: its samples would be compared with themselves
            mbdata.check_unique([r for run in old + new for r in run])
        except mbcsv.CsvError as e:
            die(f"a run on both sides: {e}", 2)
        names = (" ".join(args.old), " ".join(args.new))
        flat = [r for run in old + new for r in run]
        order = config_order(flat, args.old + args.new)
    elif args.fleet:
        run = mbdata.load(args.fleet)  # one sample twice (a file given twice) is refused here
        old, new = run.ok, None
        names = ("old", "new")
        order = config_order(old, args.fleet)
        seen = {}  # a machine's blocks in two files would share keys: one run per machine
        for r in run.rows:
            seen.setdefault(r["_machine"], {}).setdefault(r.get("run_id"), r.path)
        for m, runs in seen.items():
            files = sorted(set(runs.values()))
            if len(files) > 1:
                die(f"--fleet: {files[0]} and {files[1]} are both from machine {mbdata.printable(m)}: give one run per machine "
                    f"(merge the shards of one run first)", 2)
        if len(run.machines) < 2:
            print(f"mallocbench compare: note: --fleet: every row is from one machine "
                  f"({mbdata.printable(next(iter(run.machines), '?'))}): no answer across machines", file=sys.stderr)
        args.csv = args.fleet
    elif len(args.csv) == 2:
        old, new = load(args.csv[0]), load(args.csv[1])
        names = tuple(args.csv)
        both = {(r["run_id"], r["sample"]) for r in old} & {(r["run_id"], r["sample"]) for r in new}
        if both:  # NEW a subset of OLD (or one file twice): samples compared with themselves
            die(f"{args.csv[0]} and {args.csv[1]} share {len(both)} samples (run {sorted(both)[0][0]}): "
                f"a sample would be compared with itself; compare two different runs", 2)
        order = config_order(old + new, args.csv)
    else:
        old, new = load(args.csv[0]), None
        names = ("old", "new")
        order = config_order(old, args.csv)
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
        die(f"no configuration '{args.baseline}' in {args.csv[0]} (it has: {', '.join(order) or 'none'})")
    try:
        stats.require_scipy()
    except ImportError as e:
        die(mbcsv.missing_dependency(e))
    res = analyse(old, new, baseline=args.baseline, floor=args.floor / 100, family=args.family,
                  two_runs=new is not None, metrics=metrics, order=order, names=names,
                  trade_offs=mbdata.workloads_with_trait(inputs, "trade_off"))
    if new is None and not any(c["is_base"] for c in res):
        if not old:
            die(f"no ok sample in {args.csv[0]}")
        what = "" if args.baseline else " (the run's first configuration)"
        die(f"no ok sample of configuration '{res.baseline}'{what} in {args.csv[0]} (use --baseline CONFIG)")
    if not any(not c["is_base"] for c in res):
        for line in res.only:
            print(mbdata.printable(line), file=sys.stderr)
        die("nothing to compare: no configuration has a counterpart")
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
            die(str(e), 2)
    return res


if __name__ == "__main__":
    sys.exit(cli.run(main))
