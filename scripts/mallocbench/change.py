"""change.py - the middle layer's computation: the one estimator of a change against a baseline
(block-paired Hodges-Lehmann, unpaired Mann-Whitney between runs, the machines pooled where the
blocks are on several) and its cells, which every view prints (words.py words them).
analyse() is the whole computation of a comparison on rows in memory; change() and pair() are
one pair's."""
import dataclasses
import math

from . import mbcsv
from . import mbdata
from . import sequential
from . import stats
from . import words

num = mbcsv.num  # a finite float, None when not measured
PRIMARY = "throughput"  # the name under which each workload's primary figure is tabled


# name, unit (None: the workload's throughput_unit), better (None: the workload's metric_better), value
# of a row: the metric registry's compare table (scripts/mallocbench/mbdata.py)
# (name, unit, better, fn, key): unit a tuple (UNIT, mbdata.PER_WORK) is per unit of work
METRICS = [(PRIMARY if m.key == "throughput" else m.name, m.unit, m.better, m.fn, m.key)
           for m in mbdata.metrics("compare")]

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
    workload's own name, unit and direction from the CSV (its columns metric and
    metric_better, which schema 4 added; throughput, higher, before them)."""
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


def fleet(per, floor=0.01, level=0.95, weigh=None):
    """The one fleet-pooling driver, compare's and the dashboard's (nightly.py): stats.Pooled of
    [(machine, its paired Change)], or None for fewer than 2 machines, or where a machine's change
    is no ratio (a count from zero: not pooled).  One rule (docs/fleet.md): each machine's
    answer, Cochran's Q and the words from 2 machines; the pooled ratio, its Hartung-Knapp CI, tau
    and I^2 from stats.POOL_MIN (3) machines with a CI, since a between-machine variance needs
    them; below that, "not pooled".  weigh: the same changes at 95%, whose CIs weigh them."""
    if len(per) < 2 or any(ch is None or ch.kind != "ratio" for _, ch in per):
        return None
    return stats.pool(per, floor, level, weigh)


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
        per.append((m, ch))
        weigh.append((m, ch if level == 0.95 or ch is None else
                      stats.paired_change([base[u] for u in us], [other[u] for u in us], 0.95)))
    pl = fleet(per, floor, level, weigh)
    if pl is None:
        return None
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
    sequential = ""  # what is printed instead of a p where the run stopped pairs (words.sequential_note)
    unit_machine = {}  # {block unit: machine label}, one run
    machine_desc = {}  # {machine label: its sidecar description}

    def tables(self, names):
        """The cells of these tables only, with everything else the comparison says."""
        out = Analysis(c for c in self if c.table in names)
        out.__dict__.update(self.__dict__)
        return out


@dataclasses.dataclass
class Cell:
    """One cell of a comparison: a configuration's figure on one workload against its baseline
    (or, is_base, the baseline's own row of the table; geomean, a configuration's geometric mean
    over the workloads geo_set).  Every view reads it by attribute and words it with words.py."""
    workload: str = ""
    params: str = ""
    metric: str = ""        # the figure's name as tabled (mbdata.figure_name for the primary one)
    unit: str = ""
    better: str = "higher"
    config: str = ""
    baseline: str = ""
    change: object = None   # stats' change of values against base_values (None: not compared)
    verdict: str = "-"
    median: float = None
    median_ci: tuple = None
    base_median: float = None
    n: int = 0
    n_base: int = 0
    level: float = 0.95     # the CI level of change (the family option's)
    primary: bool = False   # the workload's primary figure
    geomean: bool = False
    is_base: bool = False
    values: dict = None     # {unit: value}: a block's (or a run's) median
    base_values: dict = None
    table: str = ""         # the table the cell is in: the metric's name in METRICS
    key: str = None         # the metric's key in the registry
    paired: bool = False    # block-paired (one run), not two runs' samples
    geo_set: list = None    # a geomean's [(workload, params)]
    # a pair of a run sized for a verdict that stopped (the sidecar's "sequential"): look, blocks, alpha,
    # why, figure (the key it stopped on) and controlled (this cell is that figure: its CI at the look's level)
    sequential: dict = None


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
    several = bool(rows_old) and isinstance(rows_old[0], list)
    if two_runs is None:
        two_runs = rows_new is not None and rows_new is not rows_old
    res = Analysis()
    flat_old = [r for run in rows_old for r in run] if several else list(rows_old)
    # the primary figure (mbdata.primary_key: the sidecar's "figure") is the first table; a run sized for
    # a verdict: each pair's cells over the blocks before its stop (one run)
    prim = mbdata.primary_key(flat_old + ([r for run in rows_new for r in run] if several else list(rows_new or [])))
    metrics = sorted(metrics or METRICS, key=lambda m: (len(m) > 4 and m[4]) != prim)
    stops = mbdata.sequential_stops(flat_old) if not two_runs else {}
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
        match, g_old, g_new, res.only = _two_sides(flat_old, flat_new, names, order)
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
                          primary=len(metric) > 4 and metric[4] == prim, table=metric[0],
                          key=metric[4] if len(metric) > 4 else None)
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
                    res.append(Cell(**common, config=baseline, is_base=True, values=bv, median=stats.median(vals),
                                     median_ci=stats.median_ci(vals), n=len(vals)))
            for config, base_config in pairs:
                if two_runs:
                    bv = _unit_values(rows_of(rows_old, key, base_config), fn, several)
                    ov = _unit_values(rows_of(rows_new, key, config), fn, several)
                    if bv:
                        vals = list(bv.values())
                        res.append(Cell(**common, config=f"{base_config} ({names[0]})", is_base=True, values=bv,
                                         median=stats.median(vals), median_ci=stats.median_ci(vals), n=len(vals)))
                else:
                    ov = _unit_values(configs[config], fn, False)
                if not bv or not ov:
                    continue
                vals = list(ov.values())
                res.append(Cell(**common, config=config,
                                 baseline=f"{base_config} ({names[0]})" if two_runs else base_config,
                                 values=ov, base_values=bv, paired=not two_runs,
                                 median=stats.median(vals), median_ci=stats.median_ci(vals), n=len(vals),
                                 n_base=len(bv), base_median=stats.median(list(bv.values()))))
        _sequential_cells(res, metric, stops)
        _geomean_cells(res, metric, rank, two_runs, prim)
    res.hints = _hints(g_new)
    _levels(res, family)
    _verdicts(res, floor, trade_offs)
    return res


def _two_sides(flat_old, flat_new, names, order):
    """Two runs' (new config -> old config, old's samples, new's samples, the lines naming what
    is on one side only)."""
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
    return match, g_old, g_new, only


def _hints(groups):
    """What the figures cannot say: a duration-bound command's runs/s (mbdata.duration_bound)."""
    hints = []
    for (wl, params), configs in groups.items():
        why = mbdata.duration_bound(configs)
        if why:
            hints.append(f"{mbdata.workload_title(wl, params)}: its runs/s cannot tell the configurations "
                         f"apart: {why}. Give `mallocbench exec --metric REGEX` a figure the command prints "
                         f"(work done in its time).")
    return hints


def _verdicts(res, floor, trade_offs):
    """Each tested cell's verdict at the floor; 'trade-off' for the primary figure of a workload
    with that trait (unpaired: no word at all)."""
    for c in res:
        if not c.is_base:
            c.verdict = stats.verdict(c.change, c.better, floor)
            if c.table == PRIMARY and c.workload in trade_offs and c.change is not None \
                    and c.change.method != stats.UNPAIRED:
                c.verdict = "trade-off"


def pair(base_rows, rows, metric=None, floor=0.01, trade_off=False):
    """The cell of one pair (rows against base_rows, one workload, one configuration each) as
    analyse() makes it: the views that show one pair at a time (plots' captions, tune, the
    frameworks report) take it from here.  None when either side has no value."""
    if not base_rows or not rows:
        return None
    wl, params = rows[0]["workload"], rows[0]["workload_params"]
    # one workload for the pair (a program's rows may name it by different parameters)
    both = [dict(r, workload=wl, workload_params=params) for r in list(base_rows) + list(rows)]
    key = mbdata.primary_key(both)  # the run's primary figure unless a metric is named
    res = analyse(both, baseline=base_rows[0]["config"], floor=floor,
                  metrics=[metric or next(m for m in METRICS if m[4] == key)], trade_offs={wl} if trade_off else ())
    return next((c for c in res if not c.is_base and not c.geomean and c.config == rows[0]["config"]), None)


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
    return Cell(change=ch, verdict=word, unit=unit, better=better, n=len(ov), n_base=len(bv))


def _geomean_cells(res, metric, rank, two_runs, prim="throughput"):
    """Per configuration, the geometric mean of its ratios over the workloads where every
    configuration has a positive ratio (only workloads whose figure means the same: for the
    primary figure, throughputs), with a CI from the per-block (or per-run) geomean."""
    cells = [c for c in res if c.table == metric[0] and not c.is_base and not c.geomean]
    if metric[0] == PRIMARY:
        cells = [c for c in cells if c.unit.endswith("/s") and c.better == "higher"]
    configs = sorted({c.config for c in cells}, key=rank)
    wls = []
    for key in dict.fromkeys((c.workload, c.params) for c in cells):
        mine = {c.config: c for c in cells if (c.workload, c.params) == key}
        if all(cf in mine and _positive(mine[cf]) for cf in configs):
            wls.append(key)
    if len(wls) < 2 or not configs:
        return
    names = ", ".join(short_names(wls))
    for cf in configs:
        mine = [c for c in cells if c.config == cf and (c.workload, c.params) in wls]
        units = set.intersection(*(set(c.values) & set(c.base_values) for c in mine)) if not two_runs else None

        def geo(base, us):
            """{unit: the geometric mean of mine's values (base: their baselines') at unit}"""
            return {u: math.exp(sum(math.log((c.base_values if base else c.values)[u]) for c in mine) / len(mine))
                    for u in us}
        if two_runs:
            uo = set.intersection(*(set(c.values) for c in mine))
            ub = set.intersection(*(set(c.base_values) for c in mine))
            ov, bv = geo(False, uo), geo(True, ub)
        else:
            ov, bv = geo(False, units), geo(True, units)
        if not ov or not bv:
            continue
        res.append(Cell(workload="geomean", params=names, metric=mine[0].metric if metric[0] != PRIMARY
                         else "throughput", key=metric[4] if len(metric) > 4 else None, unit="",
                         better="higher" if metric[0] == PRIMARY else metric[2],
                         config=cf, baseline=mine[0].baseline, values=ov, base_values=bv, geomean=True,
                         paired=not two_runs, primary=len(metric) > 4 and metric[4] == prim, table=metric[0], n=len(ov),
                         n_base=len(bv), geo_set=wls))
        stopped = sorted((c for c in mine if c.sequential), key=lambda c: c.sequential["blocks"])
        if stopped:  # over pairs a sequential run stopped: no p, not error-controlled (its
            # blocks are the fewest any of them kept)
            res[-1].sequential = dict(stopped[0].sequential, controlled=False)


def _block_no(u):
    """The block number of a unit ({("block", (matrix_id, block, machine)): v}), None for another."""
    try:
        return int(u[1][1]) if u[0] == "block" else None
    except (TypeError, ValueError, IndexError):
        return None


def _sequential_cells(res, metric, stops):
    """The cells of one metric whose pair has a stop (mbdata.sequential_stops): every figure of
    the pair over the blocks before the stop (blocks 0 .. stop.blocks - 1, the baseline's later
    blocks left out), marked with the stop; the figure it stopped on is error-controlled at its
    look's level (_levels), the others are not."""
    if not stops:
        return
    for c in res:
        stop = stops.get((c.workload, c.params, c.config, c.baseline))
        if c.table != metric[0] or c.is_base or c.geomean or not c.paired or stop is None:
            continue
        b = stop["blocks"]
        c.values, c.base_values = ({u: v for u, v in vals.items() if (_block_no(u) if _block_no(u) is not None else b) < b}
                                   for vals in (c.values, c.base_values))
        vals, base = list(c.values.values()), list(c.base_values.values())
        c.median, c.median_ci, c.n = (stats.median(vals), stats.median_ci(vals), len(vals)) if vals else (None, None, 0)
        c.base_median, c.n_base = (stats.median(base) if base else None), len(base)
        c.sequential = {"look": stop.get("look"), "blocks": b, "alpha": stop["alpha"], "why": stop.get("why") or "",
                        "figure": stop["figure"], "controlled": c.key == stop["figure"]}


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
    vals = list(c.values.values()) + list(c.base_values.values())
    return bool(vals) and min(vals) > 0


def controlled(c):
    """Is c a sequential cell on the figure its run stopped on (CI at its look's level, no p)?"""
    return bool(c.sequential and c.sequential.get("controlled"))


def no_p(c):
    """Does c have no valid fixed-n p: a controlled sequential cell, or a geomean over pairs a
    sequential run stopped (its blocks were chosen by the stops)?"""
    return controlled(c) or bool(c.geomean and c.sequential)


def _levels(res, family, alpha=stats.ALPHA):
    """The CI level of each cell from the family option, and its change at that level; a
    sequential cell's (controlled) at its look's level, with the family's adjustment on top
    (_sequential_levels)."""
    tested = [c for c in res if not c.is_base]
    m, fl = res.unit_machine, res.floor
    for c in tested:
        c.change = _change(c.base_values, c.values, c.paired, 1 - alpha, m, fl)
        c.level = 1 - alpha
    scale = 1.0  # the family's adjustment of alpha: 1/k (Bonferroni), R/m (Benjamini-Hochberg)
    if family == "primary":
        fam = [c for c in tested if c.primary and c.change is not None]
        level = stats.bonferroni_level(len(fam), alpha)
        for c in fam:
            c.level = level
            c.change = _change(c.base_values, c.values, c.paired, level, m, fl)
        scale = (1 - level) / alpha
    elif family == "bh":  # a sequential cell's fixed-n p is not valid: not among BH's p-values
        ps = [c.change.p for c in tested if c.change is not None and c.change.p == c.change.p and not no_p(c)]
        r, level = stats.bh_level(ps, alpha)
        scale = (1 - level) / alpha
        for c in tested:
            if c.change is not None:
                c.level = level
                c.change = _change(c.base_values, c.values, c.paired, level, m, fl)
        res.notes = (f"Benjamini-Hochberg at q = {alpha:g} over {len(ps)} cells: {r} selected; every change CI "
                     f"at {words.pct(level)} (false-coverage-rate adjusted), so a CI excludes no change exactly "
                     f"where the procedure selects the cell (without ties).",)
    if family == "primary":
        k = sum(1 for c in tested if c.primary)
        res.notes = (f"family-wise: the {k} primary-metric cells at {words.pct(stats.bonferroni_level(k, alpha))} "
                     f"(Bonferroni, 1 - {alpha:g}/{k}): a false flag among them with probability <= {alpha:g}; "
                     f"other cells at {words.pct(1 - alpha)} each.",)
    _sequential_levels(res, tested, family, scale)


def _sequential_levels(res, tested, family, scale):
    """Each controlled sequential cell's change at 1 - (its look's alpha) x scale (the family's
    adjustment), and the note saying what is printed instead of a p (words.sequential_note)."""
    seq = [c for c in tested if controlled(c) and c.change is not None]
    for c in seq:
        c.level = 1 - c.sequential["alpha"] * scale
        c.change = _change(c.base_values, c.values, c.paired, c.level, res.unit_machine, res.floor)
        ch, common = c.change, _common_blocks(c.base_values, c.values)
        if ch is not None and ch.kind == "ratio" and ch.fleet is None and common and len(common) >= 2:
            # the CI of the rule that made the decision (the harness's: untied null), not the
            # tie-aware inversion, which with tied ratios (CPU in clock ticks) can print another verdict
            est, lo, hi = sequential.ci([math.log(c.values[u] / c.base_values[u]) for u in common], 1 - c.level)
            ch.estimate, ch.lo, ch.hi = (None if x is None else math.exp(x) for x in (est, lo, hi))
            ch.method = "exact signed-rank at the look's level, untied null (the stopping rule's)"
    if seq:
        res.sequential = words.sequential_note(seq, family, scale)
        res.notes = tuple(res.notes) + (res.sequential,)
