"""detect.py - change points in the nightly history (docs/dashboard.md): E-Divisive means with
a Welch t-test as its significance check (the deterministic variant of Hunter / Apache Otava: no
random permutations), on every series' night medians and on its ratio to the night's baseline.

    detect.py HISTORY [--out DIR] [--json FILE] [--window 40] [--alpha 0.001]

writes DIR/alerts.csv and DIR/series.json (the contract with scripts/dashboard.py); exit 3 while a
confirmed regression is unresolved (its series has not recovered and HISTORY/acknowledged.txt
does not name it), 0 otherwise, 2 on bad input.  An alert's p and CI are those of the test that
decided it; later nights set its state (confirmed, weakened, returning, recovered).

How (replayed night by night, so that what was reported for a night never changes):
  - as of each night, the last WINDOW present nights of a series are split by E-divisive
    (Matteson & James, alpha 1) into segments of at least MIN_SEG nights, starting from the
    change points already recorded; a split is kept when the Welch t-test between its two
    neighbouring segments gives p < ALPHA and the step clears the metric's floor;
  - the last two nights both beyond the floor on one side of the segment before them, and a
    pooled t-test p < ALPHA: a change at the first of them, `confirmed`; the latest night
    alone: `pending` (dropped when the next night disagrees: a spike is not a change);
  - floors: throughput and CPU time max(3%, the A/A noise: 1.96 x the robust sd of the A/A
    pair's log ratio over the window, 2 x the resolution the figure is written with); counts (faults, syscalls)
    1.96 x the robust sd of the series' own night-to-night differences (0 for a deterministic
    count: any move counts); peak RSS max(3%, A/A noise, 1.96 x its own sd);
  - the first report of a change (night, direction) is kept for good; later nights only refine
    its estimate.  A segment mean that differs from the one before by more than the floor over
    a whole window is a change however slowly it came (gradual drift).
A series follows a machine kind across nights (nightly.load), whichever boots measured them.
Labels: `environment` when the change is within a night of a change that concerns the series
(kernel, glibc, the allocator's or the baseline's version, as the night's machine descriptions
and sidecars give them: a reboot into another kernel is one), `machine` when the
baseline's absolute series moved the same way the same night and this series' ratio did not.
A ratio change that only mirrors the baseline's own move is dropped (it is the baseline's); a
change seen on one basis only (not the baseline's own, not `machine`) needs p < ALPHA/10 and a
step of 1.5 floors when first reported."""
import argparse
import csv
import datetime
import io
import json
import math
import os
import sys

from . import cli
from . import mbcsv
from . import mbout
from . import stats

WINDOW = 40
MIN_SEG = 3
ALPHA = 0.001
TIMING_FLOOR = 0.03
SIZE_FLOOR = 0.03
SINGLE = 10         # a change seen on one basis only (median or ratio) needs p < ALPHA / SINGLE
SINGLE_MARGIN = 1.5  # ... and a step of at least 1.5 floors
SAME = 2            # a change within this many present nights of a recorded one is that one
EXIT_REGRESSION = 3
Z95 = 1.959963984540054
ALERT_COLUMNS = ["machine_kind", "workload", "params", "config", "metric", "night", "direction", "change_pct",
                 "ci_lo", "ci_hi", "p", "status", "basis", "before", "after", "detected", "series",
                 "change_pct_now", "ci_lo_now", "ci_hi_now", "p_now", "acknowledged"]
# states of a recorded change whose regression still fails the gate (recovered and acknowledged do not)
OPEN = ("confirmed", "returning", "weakened")
ACK_FILE = "acknowledged.txt"



# ---- statistics on arrays --------------------------------------------------------------------

def _np():
    import numpy
    return numpy


def _median(s):
    """The median of a sorted list, as numpy.median computes it (the mean of the middle two)."""
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def robust_sd(x):
    """1.4826 x the median absolute deviation: the sd of normal data, blind to a few outliers.
    Plain Python: the windows are short (<= 50 nights) and replay asks ~200,000 times, where
    numpy's per-call cost was a third of the detector's time; the same floats as numpy.median."""
    x = [float(v) for v in x]
    if not x:
        return 0.0
    m = _median(sorted(x))
    return float(1.4826 * _median(sorted(abs(v - m) for v in x)))


def diff_spread(x):
    """The sd of one night's noise from first differences (robust, blind to steps)."""
    x = [float(v) for v in x]
    return robust_sd([b - a for a, b in zip(x, x[1:])]) / math.sqrt(2) if len(x) > 2 else 0.0


def welch(a, b, pooled=False):
    """(p, diff, lo, hi) of mean(b) - mean(a): two-sided t-test (Welch, or pooled variance) and
    the 95% CI of that same test, so p < 0.05 exactly when the CI excludes 0.  Two constant
    samples: p 0 when their means differ, 1 when not."""
    from scipy import special  # t.sf(x, df) is stdtr(df, -x) and t.isf(q, df) -stdtrit(df, q), without
    np = _np()                 # the distribution object's per-call argument checks (~60 us a call)
    a, b = np.asarray(a, float), np.asarray(b, float)
    na, nb = len(a), len(b)
    ma, mb = float(a.mean()), float(b.mean())
    va = float(a.var(ddof=1)) if na > 1 else 0.0
    vb = float(b.var(ddof=1)) if nb > 1 else 0.0
    d = mb - ma
    if pooled or nb < 2 or na < 2:
        df = na + nb - 2
        sp = ((na - 1) * va + (nb - 1) * vb) / df if df > 0 else 0.0
        se2 = sp * (1 / na + 1 / nb)
    else:
        se2 = va / na + vb / nb
        df = se2 ** 2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1)) if se2 > 0 else na + nb - 2
    tol = 1e-12 * max(abs(ma), abs(mb), 1e-300)
    if se2 <= (tol * tol) or df <= 0:
        return (0.0 if abs(d) > tol else 1.0), d, d, d
    se = math.sqrt(se2)
    p = float(2 * special.stdtr(df, -(abs(d) / se)))
    h = float(-special.stdtrit(df, 0.025)) * se
    return p, d, d - h, d + h


def edivisive_best(y, min_seg):
    """(tau, q): the split of y maximising the E-divisive statistic (Matteson & James 2014,
    alpha = 1) with at least min_seg values each side; None when y is too short."""
    np = _np()
    n = len(y)
    if n < 2 * min_seg:
        return None
    y = np.asarray(y, float)
    D = np.abs(y[:, None] - y[None, :])
    P = D.cumsum(0).cumsum(1)
    total = P[-1, -1]
    best = None
    for tau in range(min_seg, n - min_seg + 1):
        aa = P[tau - 1, tau - 1]
        ab = P[tau - 1, n - 1] - aa
        bb = total - 2 * ab - aa
        m = n - tau
        q = (tau * m / n) * (2 * ab / (tau * m) - aa / (tau * (tau - 1)) - bb / (m * (m - 1)))
        if best is None or q > best[1] + 1e-15:
            best = (tau, float(q))
    return best


class Series:
    """One series' values (None = missing) and how to judge it: kind (timing, count, size),
    better (higher, lower), aa (A/A noise per night, log units, or None)."""

    def __init__(self, values, kind="timing", better="higher", aa=None, quantum=None):
        self.values, self.kind, self.better, self.aa = values, kind, better, aa
        # the figure's resolution relative to its level (of the absolute series, also for its ratio)
        self.quantum = quantum or 0.0


def floor_abs(kind, window_vals, level, aa_noise, q=0.0):
    """The smallest step (in the series' units) that may be reported at this level: timing
    max(3%, A/A noise, 2 quanta); size max(1%, A/A noise, 1.96 own sd, 2 quanta), q being the
    resolution the figure is written with, relative to its level;
    count 1.96 x its own night-to-night sd (any move when it is deterministic)."""
    spread = Z95 * diff_spread(window_vals)
    if kind == "timing":
        return max(TIMING_FLOOR, aa_noise or 0.0, 2 * q) * abs(level)
    if kind == "size":
        return max(max(SIZE_FLOOR, aa_noise or 0.0, 2 * q) * abs(level), spread)
    return max(spread, 1e-9 * max(abs(level), 1.0))


def _change(L, R, pooled=False):
    p, d, lo, hi = welch(L, R, pooled)
    ml = float(sum(L) / len(L))
    mr = ml + d
    scale = abs(ml)
    pct = (lambda v: v / scale * 100) if scale > 0 else (lambda v: None)
    return {"p": p, "diff": d, "before": ml, "after": mr, "change_pct": pct(d), "ci_lo": pct(lo), "ci_hi": pct(hi)}


def replay(series, window=WINDOW, min_seg=MIN_SEG, alpha=ALPHA):
    """Detection as of every night in order: (records, pending).  records: [{'i': night index
    of the change, 'detected': night index first reported, 'state': 'confirmed', 'p', 'change_pct',
    'ci_lo', 'ci_hi', 'before', 'after', 'diff'}] - each kept from its first report (estimates
    refined while it stays in the window); pending: such a dict for the latest night, or None."""
    vals = series.values
    present = [i for i, v in enumerate(vals) if v is not None]
    x = [vals[i] for i in present]
    records = []       # positions in present-space in 'pos'
    pending = None
    for j in range(len(x)):
        lo_w = max(0, j + 1 - window)
        y = x[lo_w:j + 1]
        m = len(y)
        aa = series.aa[present[j]] if series.aa else None
        known = sorted(r["pos"] - lo_w for r in records if r["pos"] - lo_w > 0)
        level_of = lambda seg: sum(seg) / len(seg)  # noqa: E731

        def floor_for(seg):
            return floor_abs(series.kind, y, level_of(seg), aa, series.quantum)

        # E-divisive from the recorded splits
        splits = [0] + known + [m]
        done = set()
        while True:
            best = None
            for a, b in zip(splits, splits[1:]):
                if (a, b) in done:
                    continue
                r = edivisive_best(y[a:b], min_seg)
                if r is None:
                    done.add((a, b))
                    continue
                if best is None or r[1] > best[2]:
                    best = (a, b, r[1], a + r[0])
            if best is None:
                break
            a, b, _, tau = best
            L, R = y[a:tau], y[tau:b]
            c = _change(L, R)
            fl = floor_for(L)
            if c["p"] < alpha and abs(c["diff"]) > fl:
                splits = sorted(splits + [tau])
                _record(records, lo_w + tau, j, dict(c, margin=abs(c["diff"]) / fl if fl else math.inf))
            else:
                done.add((a, b))
        # refine the estimates of the recorded changes in the window
        splits = sorted(set([0] + [r["pos"] - lo_w for r in records if 0 < r["pos"] - lo_w < m] + [m]))
        for r in records:
            t = r["pos"] - lo_w
            if 0 < t < m and t in splits:
                k = splits.index(t)
                L, R = y[splits[k - 1]:t], y[t:splits[k + 1]]
                if len(L) >= 2 and len(R) >= 2:
                    r["now"] = _change(L, R, pooled=len(R) < min_seg or len(L) < min_seg)
        # the tail: the last two nights (confirmed) or the latest (pending)
        pending = None
        s = splits[-2]
        if m - 2 - s >= min_seg and (m - 2) - s >= 0:
            L, R = y[s:m - 2], y[m - 2:]
            fl = floor_for(L)
            ml = level_of(L)
            if all(v - ml > fl for v in R) or all(ml - v > fl for v in R):
                c = _change(L, R, pooled=True)
                if c["p"] < alpha:
                    _record(records, lo_w + m - 2, j, dict(c, margin=abs(c["diff"]) / fl if fl else math.inf))
                    continue
        if m - 1 - s >= min_seg:
            L = y[s:m - 1]
            fl = floor_for(L)
            ml = level_of(L)
            if abs(y[-1] - ml) > fl:
                c = _change(L, [y[-1]], pooled=True)
                if c["p"] < alpha and not any(abs(r["pos"] - (lo_w + m - 1)) <= SAME for r in records):
                    pending = dict(c, pos=lo_w + m - 1, detected=j, state="pending", p_first=c["p"],
                                   margin_first=abs(c["diff"]) / fl if fl else math.inf)
    out = []
    for r in sorted(records, key=lambda r: r["pos"]):
        out.append(dict(r, i=present[r["pos"]], detected=present[r["detected"]], state=_state(r, x, alpha)))
    if pending:
        pending = dict(pending, i=present[pending["pos"]], detected=present[pending["detected"]])
    return out, pending


def _state(r, x, alpha):
    """A recorded change as of the latest night.  Its p, CI and estimate stay those of the
    decision (the test that confirmed it); the state says whether the nights since still agree:
    `recovered` (the last two nights after the decision both nearer the level before the change
    than the level after it), `returning` (the latest such night alone), `weakened` (the
    estimate refined over the nights since, r['now'], no longer clears ALPHA or its CI reaches
    no change), else `confirmed`."""
    since = x[r["detected"] + 1:][-2:]
    back = [abs(v - r["before"]) < abs(v - r["after"]) for v in since]
    if len(back) == 2 and all(back):
        return "recovered"
    if back and back[-1]:
        return "returning"
    now = r.get("now")
    if now and (now["p"] >= alpha or now["ci_lo"] is None or now["ci_lo"] * now["ci_hi"] <= 0
                or (now["diff"] > 0) != (r["diff"] > 0)):
        return "weakened"
    return "confirmed"


def _record(records, pos, j, c):
    for r in records:
        if abs(r["pos"] - pos) <= SAME and (r["diff"] > 0) == (c["diff"] > 0):
            return
    records.append(dict(c, pos=pos, detected=j, state="confirmed", p_first=c["p"], margin_first=c["margin"]))


def direction(diff, better):
    return "improvement" if (diff > 0) == (better == "higher") else "regression"


# ---- the history -----------------------------------------------------------------------------

def aa_noise(machine, group_series, nights, window=WINDOW):
    """Per night index of a machine kind (nightly.load's `kinds`): 1.96 x robust sd of the A/A
    pair's log ratio over the last `window` nights up to it (None before 5 nights), for one
    workload x metric."""
    np = _np()
    by_cfg = {s["config"]: dict(zip(s["nights"], s["median"])) for s in group_series}
    logs = []
    for n in nights:
        pair = machine["aa"].get(n)
        a = by_cfg.get(pair[0], {}).get(n) if pair else None
        b = by_cfg.get(pair[1], {}).get(n) if pair else None
        logs.append(math.log(b / a) if a and b and a > 0 and b > 0 else None)
    out = []
    for k in range(len(nights)):
        w = [v for v in logs[max(0, k + 1 - window):k + 1] if v is not None]
        out.append(Z95 * robust_sd(np.array(w)) if len(w) >= 5 else None)
    return out


def analyse(hist, window=WINDOW, alpha=ALPHA):
    """Run the detector over a loaded history (nightly.load); returns (alerts, series) with each
    series given segments, changes and latest, ready for series.json."""
    groups = {}
    for s in hist["series"]:
        groups.setdefault((s["machine_kind"], s["workload"], s["params"], s["metric"]), []).append(s)
    alerts = []
    for (kind, wl, params, metric), ss in groups.items():
        mach = hist["kinds"][kind]  # a series follows a machine kind across nights and boots
        mnights = mach["nights"]
        noise = aa_noise(mach, ss, mnights, window) if ss[0]["kind"] != "count" else None
        found = {}
        for s in ss:
            off = mnights.index(s["nights"][0])
            aa = noise[off:] if noise else None
            ratio_vals = s["ratio"] if s["config"] != s["baseline"] else [None] * len(s["ratio"])
            recs = {}
            v = [x for x in s["median"] if x is not None]
            q = s["resolution"] / abs(stats.median(v)) if s.get("resolution") and v and stats.median(v) else 0.0
            for basis, vals in (("median", s["median"]), ("ratio", ratio_vals)):
                r, pend = replay(Series(vals, s["kind"], s["better"], aa, q), window, MIN_SEG, alpha)
                recs[basis] = r + ([pend] if pend else [])
            found[s["config"]] = (s, recs)
        alerts += _label(mach, found, mnights)
    alerts.sort(key=lambda a: (a["machine_kind"], a["workload"], a["params"], a["metric"], a["night"], a["config"]))
    by_id = {}
    for a in alerts:
        by_id.setdefault(a["series"], []).append(a)
    for s in hist["series"]:
        _finish_series(s, by_id.get(s["id"], []), hist["kinds"][s["machine_kind"]]["nights"])
    return alerts, hist["series"]


def _near(recs, i, sign=None):
    for r in recs:
        if abs(r["i"] - i) <= 1 and (sign is None or (r["diff"] > 0) == sign):
            return r
    return None


def _env_at(mach, night_idx, allocators):
    """What changed within a night of night_idx that concerns these allocators: the kind's
    environment, read from each night's machine descriptions (nightly._versions), so that a
    kernel updated by a reboot (a new machine of the kind) is named."""
    nights = mach["nights"]
    hits = []
    for e in mach["environment"]:
        k = nights.index(e["night"])
        if abs(k - night_idx) <= 1 and (e["component"] in ("kernel", "glibc") or e["component"] in allocators):
            hits.append(e["what"])
    return hits


def _label(mach, found, mnights):
    """Alerts of one machine kind x workload x metric: combine the median and ratio bases, label
    environment / machine, drop ratio changes that mirror the baseline's own move."""
    out = []
    base_cfg = next((s["baseline"] for s, _ in found.values() if s["baseline"]), None)
    base = found.get(base_cfg)
    base_abs = []
    if base:
        off = mnights.index(base[0]["nights"][0])
        base_abs = [dict(r, i=r["i"] + off) for r in base[1]["median"]]
    base_alloc = base[0]["allocator"] if base else None
    for config, (s, recs) in found.items():
        off = mnights.index(s["nights"][0])
        med = [dict(r, i=r["i"] + off) for r in recs["median"]]
        rat = [dict(r, i=r["i"] + off) for r in recs["ratio"]]
        used = set()
        rows = []
        for r in med:
            q = _near(rat, r["i"], r["diff"] > 0)
            if q is not None:
                used.add(id(q))
            b = _near(base_abs, r["i"], r["diff"] > 0) if config != base_cfg else None
            label = None
            if config != base_cfg and b is not None and q is None:
                label = "machine"
            elif config == base_cfg:
                others = [c for c in found if c != base_cfg]
                moved = [c for c in others if _near([dict(x, i=x["i"] + mnights.index(found[c][0]["nights"][0]))
                                                     for x in found[c][1]["median"]], r["i"], r["diff"] > 0)]
                if others and len(moved) * 2 >= len(others) and not any(
                        _near([dict(x, i=x["i"] + mnights.index(found[c][0]["nights"][0]))
                               for x in found[c][1]["ratio"]], r["i"]) for c in moved):
                    label = "machine"
            rows.append((r, "both" if q is not None else "median", label))
        for q in rat:
            if id(q) in used:
                continue
            b = _near(base_abs, q["i"], not (q["diff"] > 0))
            if b is not None and _near(med, q["i"]) is None:
                continue  # the baseline moved, not this configuration
            rows.append((q, "ratio", None))
        for r, basis, label in rows:
            if basis == "ratio" or (basis == "median" and label is None and config != base_cfg):
                if r["p_first"] >= ALPHA / SINGLE or r["margin_first"] < SINGLE_MARGIN:
                    continue  # one basis only: it needs stronger evidence
            allocs = {s["allocator"]}
            if basis != "median":
                allocs.add(base_alloc)
            env = _env_at(mach, r["i"], allocs)
            status = "environment" if env else label or r["state"]
            out.append({
                "machine_kind": s["machine_kind"], "workload": s["workload"], "params": s["params"], "config": config,
                "metric": s["metric"], "night": mnights[r["i"]], "direction": direction(r["diff"], s["better"]),
                "change_pct": r["change_pct"], "ci_lo": r["ci_lo"], "ci_hi": r["ci_hi"], "p": r["p"],
                "status": status, "basis": basis, "before": r["before"], "after": r["after"],
                "detected": mnights[r["detected"]], "series": s["id"], "confirmed": r["state"] in OPEN,
                "environment": env, "acknowledged": "",
                **{k + "_now": (r.get("now") or {}).get(k) for k in ("change_pct", "ci_lo", "ci_hi", "p")},
            })
    return out


def _finish_series(s, alerts, mnights):
    vals = s["median"]
    cuts = sorted({s["nights"].index(a["night"]) for a in alerts if a["basis"] != "ratio"})
    segs = []
    bounds = [0] + cuts + [len(vals)]
    for a, b in zip(bounds, bounds[1:]):
        v = [x for x in vals[a:b] if x is not None]
        if v and b > a:
            segs.append({"start": s["nights"][a], "end": s["nights"][b - 1], "mean": sum(v) / len(v)})
    s["segments"] = segs
    rcuts = sorted({s["nights"].index(a["night"]) for a in alerts if a["basis"] != "median"})
    rsegs = []
    bounds = [0] + rcuts + [len(vals)]
    for a, b in zip(bounds, bounds[1:]):
        v = [x for x in s["ratio"][a:b] if x is not None]
        if v:
            rsegs.append({"start": s["nights"][a], "end": s["nights"][b - 1], "mean": sum(v) / len(v)})
    s["ratio_segments"] = rsegs
    s["changes"] = [{k: a[k] for k in ("night", "direction", "change_pct", "ci_lo", "ci_hi", "p", "status",
                                       "basis", "before", "after", "detected", "change_pct_now", "ci_lo_now", "ci_hi_now", "p_now")}
                    for a in alerts]
    last = mnights[-1]
    recent = set(mnights[-2:])
    latest = {"night": last, "status": "ok", "change_pct": None}
    if s["nights"][-1] != last or vals[-1] is None:
        why = next((m["why"] for m in s["missing"] if m["night"] == last), "not in the latest night")
        latest.update(status="missing", why=why)
    else:
        cur = [a for a in alerts if a["night"] in recent or a["detected"] == last]
        # the latest change going back (or gone back) to the level before it is news too
        back = [a for a in alerts if a["status"] in ("returning", "recovered")
                and not any(b["night"] > a["night"] for b in alerts)]
        if back and not cur:
            a = back[-1]
            latest.update(status=a["status"], change_pct=a["change_pct"], change_night=a["night"])
        elif cur:
            a = max(cur, key=lambda a: (a["night"], abs(a["change_pct"] or 0)))
            st = a["status"]
            if st == "confirmed":
                st = a["direction"]
            latest.update(status=st, change_pct=a["change_pct"], change_night=a["night"])
    if s["ratio"] and s["ratio"][-1] is not None:
        latest["ratio"] = s["ratio"][-1]
    s["latest"] = latest


# ---- output ----------------------------------------------------------------------------------

def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def write_alerts(folder, alerts):
    """alerts.csv in folder (an mbout.Folder)."""
    f = io.StringIO(newline="")
    w = csv.writer(f, lineterminator="\n")
    w.writerow(ALERT_COLUMNS)
    for a in alerts:
        w.writerow([_fmt(a[c]) for c in ALERT_COLUMNS])
    return folder.write("alerts.csv", f.getvalue())


def _clean(o):
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def series_json(hist, alerts, series, history_dir, report=None):
    """The detector's document (docs/dashboard.md): machine_kinds (what a series follows across
    nights: its fingerprint, nights, the machines of each night, environment changes), machines
    (a boot of a host: what the fleet view pools over), series, fleet, alerts."""
    kinds = {}
    for kind, m in hist["kinds"].items():
        kinds[kind] = {"fingerprint": m["fingerprint"], "nights": m["nights"], "machines": m["machines"],
                       "environment": [{"night": e["night"], "what": e["what"]} for e in m["environment"]],
                       "missing_counters": m["missing_counters"],
                       "aa_pair": next((p for p in reversed(list(m["aa"].values())) if p), None),
                       "baseline": m["baseline"].get(m["nights"][-1])}
    keep = [c for c in ALERT_COLUMNS if c != "series"] + ["series", "basis", "detected"]
    out = {
        "generated": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "history": history_dir,
        "detector": {"method": "E-divisive means, Welch t-test (Hunter/Otava, deterministic)", "window": WINDOW,
                     "min_segment": MIN_SEG, "alpha": ALPHA, "timing_floor_pct": TIMING_FLOOR * 100},
        "machine_kinds": kinds,
        "machines": hist["machines"],
        "series": series,
        "fleet": hist.get("fleet", []),  # workloads measured on several machines: each one's ratio, pooled
        "alerts": [{k: a[k] for k in dict.fromkeys(keep)} for a in alerts],
    }
    if report:
        out["report"] = report
    return _clean(out)


def read_acks(history_dir):
    """HISTORY/acknowledged.txt: one acknowledged change a line, `WORKLOAD CONFIG METRIC NIGHT
    REASON...` (NIGHT: the change's night as alerts.csv gives it; '#' starts a comment).  Returns
    {(workload, config, metric, night): reason}; ValueError naming the file and line."""
    path = os.path.join(history_dir, ACK_FILE)
    out = {}
    if not os.path.isfile(path):
        return out
    from . import mbdata
    with open(path, encoding="utf-8", errors="replace") as f:
        for k, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            try:
                if len(words) < 5:
                    raise ValueError("a reason is missing" if len(words) == 4 else "too few fields")
                mbdata.parse_night(words[3])
            except ValueError as e:
                raise ValueError(f"'{path}' line {k}: {e} (expected WORKLOAD CONFIG METRIC NIGHT REASON...)") from None
            out[tuple(words[:4])] = " ".join(words[4:])
    return out


def acknowledge(alerts, series, acks):
    """Mark the alerts an acknowledgement names, and their series' changes (acknowledged: its
    reason)."""
    by_id = {s["id"]: s for s in series}
    for a in alerts:
        reason = acks.get((a["workload"], a["config"], a["metric"], a["night"]))
        if reason is not None:
            a["acknowledged"] = reason
            for c in by_id[a["series"]]["changes"]:
                if c["night"] == a["night"] and c["basis"] == a["basis"]:
                    c["acknowledged"] = reason


def gate(hist, alerts):
    """The unresolved regressions (exit 3): confirmed, and since neither recovered nor
    acknowledged, on a series still measured on its machine kind's latest night."""
    last = {s["id"]: s["nights"][-1] for s in hist["series"]}
    return [a for a in alerts if a["status"] in OPEN and a["direction"] == "regression" and not a["acknowledged"]
            and last.get(a["series"]) == hist["kinds"][a["machine_kind"]]["nights"][-1]]


def main(argv=None):
    global WINDOW, ALPHA
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("history")
    ap.add_argument("--out", default=".", help="where alerts.csv and series.json go (default .)")
    ap.add_argument("--json", help="series.json's path (default OUT/series.json)")
    ap.add_argument("--report", help="the latest night's compare report, relative to the site")
    ap.add_argument("--window", type=int, default=WINDOW, help=f"nights per window, 30-50 (default {WINDOW})")
    ap.add_argument("--alpha", type=float, default=ALPHA, help=f"t-test significance (default {ALPHA})")
    ap.add_argument("--force", action="store_true",
                    help="write into a folder holding files detect.py did not write (they are kept), "
                         "and over an existing --json file")
    args = ap.parse_args(argv)
    if not 30 <= args.window <= 50 or not 0 < args.alpha < 1:
        raise cli.Fail("--window must be 30..50 and --alpha in (0, 1)", mbcsv.EXIT_BAD_INPUT)
    try:  # refused before any work
        folder = mbout.Folder(args.out, args.force, inputs=[args.history])
        if args.json:
            mbout.check(args.json, args.force, inputs=[args.history])
    except mbout.OutputError as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT) from None
    WINDOW, ALPHA = args.window, args.alpha
    try:
        stats.require_scipy()
    except ImportError as e:
        raise cli.Fail(mbcsv.missing_dependency(e), 1) from None
    from . import nightly
    try:
        hist = nightly.load(args.history)
    except (nightly.HistoryError, mbcsv.CsvError) as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT) from None
    alerts, series = analyse(hist, WINDOW, ALPHA)
    try:
        acknowledge(alerts, series, read_acks(args.history))
    except ValueError as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT) from None
    doc = json.dumps(series_json(hist, alerts, series, args.history, args.report), separators=(",", ":"))
    try:
        write_alerts(folder, alerts)
        if args.json:
            mbout.write(args.json, doc, force=args.force, inputs=[args.history])
        else:
            folder.write("series.json", doc)
        folder.commit()
    except mbout.OutputError as e:
        raise cli.Fail(str(e), 1) from None
    bad = gate(hist, alerts)
    for a in alerts:
        print(f"{a['status']:11} {a['direction']:11} {a['night']} {a['machine_kind']} {a['workload']} {a['config']} "
              f"{a['metric']} ({a['basis']}): {_fmt(a['change_pct'])}% p={a['p']:.2g}")
    if bad:
        raise cli.Fail(f"{len(bad)} unresolved regression(s): neither recovered nor acknowledged in "
                       f"{os.path.join(args.history, ACK_FILE)}", EXIT_REGRESSION)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
