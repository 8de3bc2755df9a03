"""disturb.py - the data layer's reading of what disturbed a sample from outside (the columns
schema 6 added: region_run_delay_s, steal_s, khugepaged_collapses, compactions): the share of
time it waited for a CPU, the host's steal, why a sample counts as disturbed (khugepaged and
compaction not where its huge pages were on: huge_pages_on), how much of a
cell's variance the waits explain, the smallest change a paired comparison could flag, and
the rule by which the harness measures a block again (outside).
mbdata re-exports them.
"""
import os

from . import mbcsv

num = mbcsv.num

DISTURB_WAIT = 0.05     # a sample waited for a CPU more than this share of the time it wanted one
DISTURB_STEAL = 0.01    # the host stole more than this share of the sample's wall time (all CPUs)
OUTSIDE_MIN_S = 0.05    # outside(): the steal or the outside wait lasted this long too (remeasure.h REMEASURE_MIN_S)


def wait_share(r):
    """The share of the time the sample's threads wanted a CPU that they waited for one:
    run-queue delay / (delay + their CPU time in the region); None when not measured."""
    d, cpu = num(r, "region_run_delay_s"), num(r, "region_task_clock_s")
    if cpu is None:
        u, s = num(r, "region_user_s"), num(r, "region_sys_s")
        cpu = u + s if u is not None and s is not None else None
    if d is None or cpu is None or d + cpu <= 0:
        return None
    return d / (d + cpu)


def steal_share(r):
    """Host steal over the sample as a share of its wall time on every CPU; None unknown."""
    st, wall, ncpu = num(r, "steal_s"), num(r, "total_wall_s"), os.cpu_count() or 1
    return st / (wall * ncpu) if st is not None and wall else None


def huge_pages_on(r):
    """Did the sample run with huge pages on: its condition is huge=advise (the family's own
    huge-page setting on, schema 9's `huge`), or its process tree held huge pages at its peak
    (anon_huge_peak_kib > 0)?  Then khugepaged's collapses and the compactions during it are the
    condition's own effects (docs/thp.md), not a disturbance from outside."""
    return r.get("huge") == "advise" or (num(r, "anon_huge_peak_kib") or 0) > 0


def disturbed(r):
    """Why this sample was disturbed from outside, or None: it waited for a CPU more than
    DISTURB_WAIT of the time, the host stole more than DISTURB_STEAL, or khugepaged or
    compaction ran during it while its huge pages were off (huge_pages_on: with them on, those
    are the condition's own effects)."""
    why = []
    w, st = wait_share(r), steal_share(r)
    if w is not None and w > DISTURB_WAIT:
        why.append(f"waited {w * 100:.0f}% for a CPU")
    if st is not None and st > DISTURB_STEAL:
        why.append(f"steal {st * 100:.1f}%")
    if not huge_pages_on(r):
        if (num(r, "khugepaged_collapses") or 0) > 0:
            why.append("khugepaged collapsed pages")
        if (num(r, "compactions") or 0) > 0:
            why.append("memory was compacted")
    return ", ".join(why) or None


def outside(r, ncpu=None):
    """Why the harness measures this sample's block again, or None: the sample is ok and was
    disturbed from outside, by host steal over it > DISTURB_STEAL of total wall x CPUs, or
    by run-queue wait of its process tree beyond what its own threads explain.  They explain
    self = max(0, cpu + wait - wall x CPUs) (they wanted more CPU than the machine has); the
    rest, (wait - self) / (wait + cpu) > DISTURB_WAIT, is outside (cpu: region_task_clock_s,
    else region_user_s + region_sys_s; wall: region_wall_s, else total_wall_s).  khugepaged
    and compaction are machine-wide and may be the configuration's own: never here.  Either
    counts only from OUTSIDE_MIN_S on (below it one preemption or one jiffy passes the share).  The one
    Python reading of harness/plan/remeasure.c remeasure_outside (tests/unit/test_remeasure.c
    and test_disturb_outside.py hold the same rows); ncpu: the machine's (default this one's)."""
    if r.get("status") != "ok":
        return None
    n = ncpu or os.cpu_count() or 1
    steal, total = num(r, "steal_s"), num(r, "total_wall_s")
    if steal is not None and total and total > 0 and steal / (total * n) > DISTURB_STEAL and steal >= OUTSIDE_MIN_S:
        return f"steal {steal / (total * n) * 100:.1f}%"
    wait, cpu = num(r, "region_run_delay_s"), num(r, "region_task_clock_s")
    if cpu is None:
        u, s = num(r, "region_user_s"), num(r, "region_sys_s")
        cpu = u + s if u is not None and s is not None else None
    wall = num(r, "region_wall_s")
    wall = total if wall is None else wall
    if wait is None or cpu is None or not wait + cpu > 0:
        return None
    own = 0.0 if wall is None else max(0.0, cpu + wait - wall * n)
    share = (wait - own) / (wait + cpu)
    if share <= DISTURB_WAIT or wait - own < OUTSIDE_MIN_S:
        return None
    return f"waited {share * 100:.0f}% for a CPU beyond its own threads' demand"


def variance_explained(rows, fn):
    """R^2 of log fn(r) on the samples' disturbance (wait share + steal share): the share of
    a cell's variance that its samples' CPU waits and steal explain; None below 4 samples
    with both figures, or when either does not vary."""
    import math
    pts = []
    for r in rows:
        y, w = fn(r), wait_share(r)
        if y is None or y <= 0 or w is None:
            continue
        pts.append((w + (steal_share(r) or 0.0), math.log(y)))
    if len(pts) < 4:
        return None
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    syy = sum((y - my) ** 2 for _, y in pts)
    if sxx <= 0 or syy <= 0:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in pts)
    return sxy * sxy / (sxx * syy)


def resolution(change):
    """The smallest change a paired comparison could have flagged from its own spread and
    n: the half-width of its CI as a share of its estimate (ratio changes); None when it
    has no CI (too few blocks) or is not a ratio."""
    if change is None or change.kind != "ratio" or change.lo is None or change.hi is None or not change.estimate:
        return None
    return (change.hi - change.lo) / 2 / change.estimate
