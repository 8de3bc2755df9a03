"""sequential.py - the one rule by which a comparison stops sampling (group-sequential,
docs/precision.md "Stopping when the verdict is settled").

A run sized for a verdict looks at each comparison (a configuration against its workload's
baseline, paired by block, on the primary figure) only at fixed block counts, the looks.  At
look k its CI is the exact Hodges-Lehmann / signed-rank CI of the per-block log ratios at level
1 - alpha_k, with sum(alpha_k) = ALPHA: by the union bound every look's CI covers together with
probability >= 95%, so stopping at any look keeps the 95% error rate.  The comparison stops at
the first look where its verdict can no longer change:

    improved / regressed   the CI lies wholly beyond the +-floor band;
    negligible             the CI lies wholly inside it;
    resolution             the CI's half-width is within the resolution asked for;

or at the cap or the budget, whose look spends the alpha left (why: cap, budget).  The harness
(harness/plan/seqstop.c) applies this rule while it runs and records each stop in the sidecar
("sequential"); this module is the same rule for what reads a CSV: the views (the CI a
comparison stopped with), tune's race and the simulation (tests/bench/bench_sequential.py).
"""
import math

from . import stats

ALPHA = 0.05
# (blocks, alpha) of the looks before the cap: the smallest two-sided exact p at n blocks is
# 2 / 2^n (0.0078 at 8), so block 8 is the earliest look that can settle anything
INTERIM = ((8, 0.008), (12, 0.004), (18, 0.008))
SETTLED = ("improved", "regressed", "negligible", "resolution")   # why a comparison stopped early
FORCED = ("cap", "budget", "interrupted")                          # or why it stopped without


def looks(cap):
    """[(blocks, alpha)]: the interim looks below cap, then cap itself spending the alpha left
    (a cap at or below 8: one look with all of ALPHA)."""
    out = [(b, a) for b, a in INTERIM if b < cap]
    return out + [(cap, ALPHA - sum(a for _, a in out))]


def alpha_left(taken):
    """The alpha a look forced now (budget, interrupt) spends: ALPHA less the looks taken."""
    return ALPHA - sum(a for _, a in taken)


def critical(n, alpha):
    """Largest t with 2 P(W+ <= t) <= alpha under the exact sign-flip null of n untied ranks
    (stats' normal approximation above its exact limit); -1 when this n can reject nothing at
    alpha.  The CI is then [W(t+1), W(M-t)] of the M sorted Walsh averages."""
    return stats.signed_rank_critical(n, alpha)


def ci(d, alpha):
    """(estimate, lo, hi) of the log ratios d at level 1 - alpha: the Hodges-Lehmann pseudo-
    median and its exact signed-rank CI (untied null, as the harness computes it); lo and hi
    None when n is too small for this alpha."""
    if not d:
        return None, None, None
    w = stats.walsh(list(d))
    t = critical(len(d), alpha)
    est = stats.median(w)
    return (est, w[t], w[len(w) - 1 - t]) if t >= 0 else (est, None, None)


def settle(d, alpha, floor=0.01, resolution=0.02, better="higher"):
    """(why, estimate, lo, hi) of one look, as ratios: why one of SETTLED, or None when the
    verdict could still change; estimate, lo, hi from ci(d, alpha), exponentiated."""
    est, lo, hi = ci(d, alpha)
    if lo is None:
        return None, (math.exp(est) if est is not None else None), None, None
    e, l, h = math.exp(est), math.exp(lo), math.exp(hi)
    if l > 1 + floor or h < 1 - floor:
        why = "improved" if (l > 1 + floor) == (better == "higher") else "regressed"
    elif l >= 1 - floor and h <= 1 + floor:
        why = "negligible"
    elif resolution > 0 and (h - l) / 2 / e <= resolution:
        why = "resolution"
    else:
        why = None
    return why, e, l, h


def stop(d, cap, floor=0.01, resolution=0.02, better="higher", budget_at=None):
    """Where a comparison whose per-block log ratios are d (in block order; None for a block
    without a pair) stops: {"look", "blocks", "n", "alpha", "why", "estimate", "lo", "hi"}.
    budget_at: the block count at which the budget ran out (a look there spends the alpha
    left), None for none."""
    taken = []
    plan = looks(cap)
    if budget_at is not None and budget_at < cap:
        plan = [(b, a) for b, a in plan if b < budget_at]
        plan.append((budget_at, ALPHA - sum(a for _, a in plan)))
    for k, (b, a) in enumerate(plan, 1):
        pairs = [x for x in d[:b] if x is not None]
        why, e, lo, hi = settle(pairs, a, floor, resolution, better)
        taken.append((b, a))
        last = k == len(plan)
        if why or last:
            if not why:
                why = "budget" if budget_at is not None and b == budget_at and budget_at < cap else "cap"
            return {"look": k, "blocks": b, "n": len(pairs), "alpha": a, "why": why, "estimate": e,
                    "lo": lo, "hi": hi}
    return None
