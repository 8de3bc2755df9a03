"""nightly.py - the nightly history read (docs/dashboard.md): HISTORY/<folder>/<NIGHT>.csv as
`history.py store` put it (read through mbcsv), its .meta.json and .rss.csv.  Its machines are
those compare names in the same runs (machines.mark_machines: a machine is a boot of a host,
whatever folder holds its nights), each with its kind (the hardware fingerprint) beside it.
load(dir) builds every series (machine kind x workload x params x configuration x metric): a
series follows a machine kind across nights, whichever boots of whichever hosts measured them (on
ephemeral runners every night is a fresh one); per night the median of the ok samples of the
kind's machines that night taken together, its exact 95% CI (stats.median_ci), n, the ratio to
that night's baseline (the sidecar's first configuration; compare's estimate over those rows), the
machines that measured it, and for a night without a value null plus the reason - never 0; and
the fleet series (each workload and configuration on several machines, pooled by change.fleet
as compare pools them: machines, not kinds).  Each series carries its family's colour as the
latest sidecar naming one gives it (null where none does).  latest(dir) is the latest night's
CSV (make dashboard).  detect.py reads a history through here; history.py only stores one.
"""
import os

from . import change
from . import cli
from . import machines
from . import mbcsv
from . import mbdata
from . import stats
from . import words


# ---- metrics --------------------------------------------------------------------------------------

# key, display name (None: the row's `metric`), unit (None: throughput_unit), better (None: metric_better),
# kind (timing: floor max(3%, A/A noise); count/size: the series' own spread), value, the counter whose
# note in counter_notes says why a value is missing: the metric registry's history table
# (scripts/mallocbench/mbdata.py)
METRICS = [(m.key, None if m.key == "throughput" else m.name, m.unit, m.better, m.kind, m.fn, m.counter)
           for m in mbdata.metrics("history")]
METRIC_KIND = {m[0]: m[4] for m in METRICS}
# the resolution a figure is written with (region_*_s: "%.2f"), in seconds; per unit of work (the
# series' unit, s/MiB...) it is this over the sample's work (_resolution); a step of a couple of these
# is not a change
RESOLUTION = {"cpu": 0.01, "user_cpu": 0.01, "sys_cpu": 0.01}  # cpu: their sum, in the same ticks


def _resolution(metric, rows):
    """The resolution of a series in its own unit: RESOLUTION (seconds) over the median work of
    its samples where the figure is per unit of work (mbdata.work), None where none is known."""
    res = RESOLUTION.get(metric[0])
    if res is None:
        return None
    if not isinstance(metric[2], tuple):
        return res
    work = sorted(w for w in (mbdata.work(r)[0] for r in rows) if w)
    return res / work[len(work) // 2] if work else None


counter_notes = mbdata.counter_notes


# ---- loading --------------------------------------------------------------------------------------

class HistoryError(Exception):
    """A history that cannot be read; the text says which file and why."""


def night_meta(path):
    """A stored night's sidecar (mbcsv.read_meta, the one reader); HistoryError where there is
    none: a night is stored with its sidecar (history.py store), which names its machine."""
    meta = mbcsv.read_meta(path)
    if meta is None:
        raise HistoryError(f"'{mbcsv.sidecar(path, '.meta.json')}': missing: a night is stored with its sidecar")
    return meta


def _versions(entries):
    """{what: version} of one night of a kind (by_kind's [(machine, path, meta, rows)]): the
    kernel and glibc of each machine's description (the machine that measured the rows, not
    only the sidecar's first), each allocator's version from their sidecars; where the night's
    machines differ, their values joined in order."""
    out = {}

    def add(what, v):
        if v and str(v) not in out.setdefault(what, []):
            out[what].append(str(v))
    for mid, path, meta, rows in entries:
        m = _description(meta, rows)
        add("kernel", m.get("kernel"))
        add("glibc", m.get("glibc_version"))
    for mid, path, meta, rows in entries:
        for c in meta.get("configs") or []:
            if isinstance(c, dict) and isinstance(c.get("allocator"), str) and c.get("version"):
                add(c["allocator"], c["version"])
    return {k: ", ".join(v) for k, v in out.items() if v}


def _night_median(vals):
    from .stats import median, median_ci
    ci = median_ci(vals) if len(vals) >= 1 else None
    return median(vals), (ci[0] if ci else None), (ci[1] if ci else None)


def aa_pair(configs, tunables):
    """The A/A pair of a night: two configurations of one allocator without tunables (the
    pair holding the baseline first); None when the run has none.  configs: [(config,
    allocator)] in run order; tunables: {config: True when it sets any}."""
    plain = [(c, a) for c, a in configs if not tunables.get(c)]
    for i, (c, a) in enumerate(plain):
        for c2, a2 in plain[i + 1:]:
            if a2 == a:
                return (c, c2)
    return None


def _nights(d):
    """The NIGHTs of one machine's folder; HistoryError for a CSV named like a night that is
    not a real date (it would sort after every real night); a warning for one in the future."""
    out = []
    for f in os.listdir(d):
        try:
            n = mbdata.night_of_file(f)
        except ValueError as e:
            raise HistoryError(f"'{os.path.join(d, f)}': {e}") from None
        if n is None:
            continue
        if mbdata.night_in_future(n):
            cli.warn(f"'{os.path.join(d, f)}': night {n} is after tomorrow")
        out.append(n)
    return out


def latest(history_dir):
    """The CSV of the latest night over every folder of a history (ties: the folder's name),
    None when there is none; HistoryError as load() for a file named like a night that is not one."""
    best = None
    if not os.path.isdir(history_dir):
        raise HistoryError(f"cannot read '{history_dir}': not a directory")
    for mid in sorted(os.listdir(history_dir)):
        d = os.path.join(history_dir, mid)
        if os.path.isdir(d):
            for n in _nights(d):
                if best is None or (n, mid) > best[:2]:
                    best = (n, mid, os.path.join(d, n + ".csv"))
    return best[2] if best else None


def _stored(history_dir):
    """[(night, path, meta, rows)] of every <folder>/<NIGHT>.csv of a history, whatever its
    folders are named (HOST-BOOT since issue 44, the machine kind before: both are read)."""
    if not os.path.isdir(history_dir):
        raise HistoryError(f"cannot read '{history_dir}': not a directory")
    out = []
    for folder in sorted(os.listdir(history_dir)):
        d = os.path.join(history_dir, folder)
        if os.path.isdir(d):
            for night in sorted(_nights(d)):
                path = os.path.join(d, night + ".csv")
                meta = night_meta(path)
                rows = mbcsv.read(path)[1]
                mbdata.check_unique(rows)
                mbdata.annotate(rows, meta)  # what the sidecar says per row (the CPU of an idle_region workload)
                out.append((night, path, meta, rows))
    return out


def by_machine(stored):
    """{machine: {night: (path, meta, rows)}}: each stored night's rows under the machine that
    measured them, labelled as compare labels them (mbdata.mark_machines over the whole history:
    a machine is a boot of a host).  HistoryError for a machine's night stored twice."""
    mbdata.mark_machines([r for s in stored for r in s[3]], [s[2] for s in stored])
    out = {}
    for night, path, meta, rows in stored:
        parts = {}
        for r in rows:
            parts.setdefault(r["_machine"], []).append(r)
        for mid, rs in parts.items():
            if night in out.get(mid, {}):
                raise HistoryError(f"'{path}': night {night} of machine {mbdata.printable(mid)} again (first in "
                                   f"'{out[mid][night][0]}'): a machine stores one run a night")
            out.setdefault(mid, {})[night] = (path, meta, rs)
    return out


def _description(meta, rows):
    """The machine description of one machine's night: its rows' (mark_machines), else the
    night's sidecar's."""
    return (rows[0].get("_machine_desc") if rows else None) or meta.get("machine") or {}


def by_kind(per_machine):
    """{kind: {night: [(machine, path, meta, rows)]}}: every machine's nights (by_machine) under
    the kind of the machine that measured them that night (machines.machine_kind of its
    description), the machines of a night in label order.  A series follows a kind across nights:
    on ephemeral runners every night is a fresh boot of a fresh host, one kind."""
    out = {}
    for mid in sorted(per_machine):
        for night, (path, meta, rows) in per_machine[mid].items():
            kind = machines.machine_kind({"machine": _description(meta, rows)})
            out.setdefault(kind, {}).setdefault(night, []).append((mid, path, meta, rows))
    return out


def load(history_dir):
    """{'machines': {machine: {...}}, 'kinds': {kind: {...}}, 'series': [...], 'fleet': [...]} of
    a history (docs/dashboard.md), built from every <folder>/<NIGHT>.csv: its machines those
    compare would name in the same runs (by_machine, a boot of a host), its series one per kind
    (by_kind), the fleet view over machines.  HistoryError / mbcsv.CsvError for input that is
    not one."""
    per_machine = by_machine(_stored(history_dir))
    if not per_machine:
        raise HistoryError(f"'{history_dir}': no <machine>/<YYYY-MM-DD>.csv in it")
    out_k, out_s, out_m, fleet_pairs = {}, [], {}, {}
    for kind, per_night in sorted(by_kind(per_machine).items()):
        out_k[kind], series = _load_kind(kind, per_night)
        out_s += series
        for night, entries in per_night.items():
            for mid, path, meta, rows in entries:
                m = out_m.setdefault(mid, {"nights": []})
                m["nights"].append(night)
                if night == max(m["nights"]):
                    m.update(kind=kind, fingerprint=machines.fingerprint({"machine": _description(meta, rows)}))
    for mid, per_night in sorted(per_machine.items()):
        out_m[mid]["nights"].sort()
        for key, per in _machine_pairs(per_night).items():
            fleet_pairs.setdefault(key, {})[mid] = per
    return {"machines": dict(sorted(out_m.items())), "kinds": out_k, "series": out_s,
            "fleet": _fleet(fleet_pairs, out_s)}


def _machine_pairs(per_night):
    """{(workload, params, config): {night: (baseline rows, rows)}} of one machine (by_machine's
    {night: (path, meta, rows)}): each night's configuration with that night's baseline (its
    sidecar's first configuration), for every configuration with an ok sample that is not the
    workload's latest baseline: what the fleet view (_fleet) pairs, machine by machine."""
    groups, bases = {}, {}
    for night in sorted(per_night):
        path, meta, rows = per_night[night]
        corder = mbcsv.config_order([path], rows)
        for r in rows:
            key = (r["workload"], r["workload_params"])
            bases.setdefault(key, {})[night] = corder[0] if corder else None
            groups.setdefault(key, {}).setdefault(r["config"], {}).setdefault(night, []).append(r)
    out = {}
    for key, byc in groups.items():
        baseline = next((b for _, b in sorted(bases[key].items(), reverse=True) if b), None)
        for config, per in byc.items():
            if config == baseline or not any(r["status"] == "ok" for rs in per.values() for r in rs):
                continue
            out[key + (config,)] = {n: (byc.get(bases[key][n], {}).get(n, []), rs) for n, rs in per.items()
                                    if bases[key][n] and bases[key][n] != config}
    return out


def _fleet(pairs, series):
    """The fleet view (docs/fleet.md): for each workload, configuration and primary figure
    measured on two machines or more (pairs: {key: {machine: {night: (base rows, rows)}}}), per
    night each machine's ratio to its baseline (compare's paired change, computed here only for
    such keys) and what they say together (change.fleet, the driver compare pools with: the pooled ratio and its CI from 3
    machines with a CI, the words)."""
    out = []
    primary = next(m for m in METRICS if m[0] == "throughput")
    meta = {(s["workload"], s["params"], s["config"]): s for s in series if s["metric"] == "throughput"}
    for key in sorted(pairs):
        by_m = pairs[key]
        if len(by_m) < 2:
            continue
        wl, params, config = key
        mids = sorted(by_m)
        nights = sorted({n for per in by_m.values() for n in per})
        ratio = {m: [] for m in mids}
        pooled, lo, hi, k, says = [], [], [], [], []
        for n in nights:
            chs = [(m, _night_change(*by_m[m][n], primary) if n in by_m[m] else None) for m in mids]
            for m, ch in chs:
                # whole, as a series' ratio: the site writes it with compare's digits, once
                ratio[m].append(words.json_number(ch.estimate) if ch is not None and ch.kind == "ratio" else None)
            have = [(m, ch) for m, ch in chs if ch is not None and ch.kind == "ratio"]
            pl = change.fleet(have)  # the one driver and rule, compare's
            k.append(pl.k if pl else len(have))
            pooled.append(words.json_number(pl.estimate) if pl and pl.estimate is not None else None)
            lo.append(words.json_number(pl.lo) if pl and pl.lo is not None else None)
            hi.append(words.json_number(pl.hi) if pl and pl.hi is not None else None)
            says.append(words.fleet_words(pl) if pl else None)
        s0 = meta.get(key, {})
        out.append({"id": f"fleet/{wl}/{params}/{config}", "workload": wl, "params": params, "config": config,
                    "baseline": s0.get("baseline"), "figure": s0.get("figure"), "better": s0.get("better"),
                    "machines": mids, "nights": nights, "ratio": ratio, "pooled": pooled, "lo": lo, "hi": hi,
                    "k": k, "words": says})
    return out



def _gather(per_night):
    """What one kind's nights hold (by_kind's {night: [(machine, path, meta, rows)]}): a night's
    rows are those of every machine of the kind that measured it, taken together (one night's
    samples: its median and CI over all of them); the first machine's sidecar gives the night's
    baseline and A/A pair."""
    g = {"metas": {}, "groups": {}, "wl_nights": {}, "cfg_info": {}, "order": [], "colour": {},
         "missing": [], "aa": {}, "measured": {}, "versions": {}}
    for night in sorted(per_night):
        entries = per_night[night]
        g["metas"][night] = entries[0][2]
        g["measured"][night] = [e[0] for e in entries]
        g["versions"][night] = _versions(entries)
        corder, cfg_alloc, tun = [], {}, {}
        for mid, path, meta, rows in entries:
            corder += [c for c in mbcsv.config_order([path], rows) if c not in corder]
            for c in meta.get("configs") or []:
                if isinstance(c, dict) and c.get("config"):
                    cfg_alloc[c["config"]] = c.get("allocator") or c["config"]
                    tun[c["config"]] = tun.get(c["config"]) or bool(c.get("environment"))
                    if mbcsv.valid_colour(c.get("colour")) and isinstance(cfg_alloc[c["config"]], str):
                        g["colour"][cfg_alloc[c["config"]]] = c["colour"]  # the latest night's wins
            for r in rows:
                cfg_alloc.setdefault(r["config"], r["allocator"])
                tun[r["config"]] = tun.get(r["config"]) or bool(r.get("requested_tunables"))
        for c in corder:
            g["cfg_info"].setdefault(c, cfg_alloc.get(c, c))
            if c not in g["order"]:
                g["order"].append(c)
        base = corder[0] if corder else None
        g["aa"][night] = aa_pair([(c, cfg_alloc.get(c, c)) for c in corder], tun)
        notes_seen = set()
        for r in (r for e in entries for r in e[3]):
            key = (r["workload"], r["workload_params"])
            g["wl_nights"].setdefault(key, {}).setdefault(night, {"base": base, "configs": set(corder)})
            g["groups"].setdefault(key, {}).setdefault(r["config"], {}).setdefault(night, []).append(r)
            for name, why in counter_notes(r.get("counter_notes")).items():
                if (name, why) not in notes_seen:
                    notes_seen.add((name, why))
                    g["missing"].append({"night": night, "what": f"{name}: {why}"})
    return g


def _load_kind(kind, per_night):
    """One kind's description and series from by_kind's {night: [(machine, path, meta, rows)]}:
    a series follows the kind across nights, each night's point over the machines of the kind
    that measured it (_gather)."""
    g = _gather(per_night)
    nights, metas = sorted(per_night), g["metas"]
    groups, wl_nights, order, cfg_info = g["groups"], g["wl_nights"], g["order"], g["cfg_info"]
    environment = []
    for a, b in zip(nights, nights[1:]):
        va, vb = g["versions"][a], g["versions"][b]
        for k in list(va) + [k for k in vb if k not in va]:
            if va.get(k) and vb.get(k) and va[k] != vb[k]:
                environment.append({"night": b, "what": f"{k} {va[k]} -> {vb[k]}", "component": k})
    last = per_night[nights[-1]][0]
    desc = {"fingerprint": machines.fingerprint({"machine": _description(last[2], last[3])}),
            "nights": nights, "machines": g["measured"], "environment": environment,
            "missing_counters": g["missing"], "aa": {n: list(p) if p else None for n, p in g["aa"].items()},
            "baseline": {n: v for n, v in ((n, (metas[n].get("configs") or [{}])[0].get("config")
                                                if metas[n].get("configs") else None) for n in nights)}}
    series = []
    for key in sorted(groups, key=lambda k: (k[0], k[1])):
        wl, params = key
        byc = groups[key]
        for metric in METRICS:
            for config in sorted(byc, key=lambda c: (order.index(c) if c in order else len(order), c)):
                s = _night_values(byc[config], nights, metric, wl_nights[key])
                if all(v is None for v in s["median"]) and not any(m["why"].startswith("not ") for m in s["missing"]):
                    continue
                series.append(_series(kind, key, config, metric, s, byc, nights, wl_nights[key], cfg_info,
                                      g["colour"]))
    return desc, series


def _series(kind, key, config, metric, s, byc, nights, wl_n, cfg_info, colour):
    """One series of a kind (series.json's `series`): its nights from the first where the
    configuration was measured or said why not, each night's value, ratio and machines."""
    wl, params = key
    rows0 = next(iter(r for rs in byc[config].values() for r in rs))
    all_rows = [r for rs in byc[config].values() for r in rs]
    name = metric[1] or rows0.get("metric") or "throughput"
    # the unit every view prints: its own, the figure's, or per its unit of work (s/MiB)
    unit = mbdata.unit_of(mbdata.METRIC[metric[0]], all_rows)
    better = metric[3] or mbcsv.better(rows0)
    first = next(i for i, n in enumerate(nights) if n in byc[config] or
                 any(mm["night"] == n and mm["why"].startswith("not ") for mm in s["missing"]))
    sl = slice(first, None)
    ratio, bases = [], []
    for i, n in enumerate(nights):
        b = wl_n.get(n, {}).get("base")
        bases.append(b)
        ratio.append(_night_ratio(byc.get(b, {}).get(n, []) if b and b != config else None,
                                  byc[config].get(n, []), metric) if b != config else
                     (1.0 if s["median"][i] is not None else None))
    return {
        "id": f"{kind}/{wl}/{params}/{config}/{metric[0]}",
        "machine_kind": kind, "workload": wl, "params": params, "config": config,
        "allocator": cfg_info.get(config, config), "baseline": next((b for b in reversed(bases) if b), None),
        "colour": colour.get(cfg_info.get(config, config)),
        "metric": metric[0], "figure": name, "unit": unit, "better": better, "kind": metric[4],
        "resolution": _resolution(metric, [r for r in all_rows if r["status"] == "ok"]),
        "nights": nights[sl], "median": s["median"][sl], "lo": s["lo"][sl], "hi": s["hi"][sl],
        "n": s["n"][sl], "ratio": ratio[sl],
        "measured_by": {n: sorted({r["_machine"] for r in byc[config][n]}) for n in nights[sl] if n in byc[config]},
        "missing": [mm for mm in s["missing"] if mm["night"] >= nights[first]],
    }


def _night_change(base_rows, rows, metric):
    """A night's paired change of a configuration against the baseline (change.change), with
    its CI: what the fleet view pools; None without both."""
    ok = [r for r in rows if r["status"] == "ok"]
    base = [r for r in base_rows if r["status"] == "ok"]
    return change.change(base, ok, metric[5]) if ok and base else None


def _night_ratio(base_rows, rows, metric):
    """A night's ratio of a configuration to the baseline: compare's paired estimate (the one
    estimator every view prints for a pair), None where it is no ratio (a count from 0)."""
    if not base_rows or not rows:
        return None
    ok = [r for r in rows if r["status"] == "ok"]
    base = [r for r in base_rows if r["status"] == "ok"]
    est = change.estimate(base, ok, metric[5]) if ok and base else None
    return est[1] if est is not None and est[0] == "ratio" else None


def _night_values(by_night, nights, metric, wl_n):
    """median/lo/hi/n per night of one configuration and metric, and why a night has none."""
    key, _, _, _, _, fn, counter = metric
    out = {"median": [], "lo": [], "hi": [], "n": [], "missing": []}
    for n in nights:
        rows = by_night.get(n, [])
        ok = [r for r in rows if r["status"] == "ok"]
        vals = [v for v in (fn(r) for r in ok) if v is not None]
        why = None
        if not rows:
            why = "workload not in this night's run" if n not in wl_n else "configuration not in this night's run"
        elif not ok:
            st = {}
            for r in rows:
                st[r["status"] or "(no status)"] = st.get(r["status"] or "(no status)", 0) + 1
            msg = next((r["message"] for r in rows if r.get("message")), "")
            why = "no ok sample: " + ", ".join(f"{k} {v}" for k, v in sorted(st.items())) + (f" ({msg})" if msg else "")
        elif not vals:
            notes = {}
            for r in ok:
                notes.update(counter_notes(r.get("counter_notes")))
            why = notes.get(counter) if counter else None
            why = why or "not measured (empty in every ok sample)"
        if why:
            for k in ("median", "lo", "hi"):
                out[k].append(None)
            out["n"].append(0)
            out["missing"].append({"night": n, "why": why})
        else:
            med, lo, hi = _night_median(vals)
            out["median"].append(med)
            out["lo"].append(lo)
            out["hi"].append(hi)
            out["n"].append(len(vals))
    return out
