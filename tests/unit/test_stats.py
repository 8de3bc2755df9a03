#!/usr/bin/python3
"""test_stats.py - scripts/mallocbench/stats.py against answers worked out by hand (written
into the test), against scipy (binomtest, wilcoxon, mannwhitneyu,
permutation_test), and a property test over thousands of random cells: a
verdict never contradicts its CI, and without ties p <= alpha exactly when
the CI excludes no change.  Exit 77 (skip) without scipy."""
import itertools
import math
import os
import random
import sys

from mallocbench import stats

try:
    import numpy as np
    from scipy import stats as ss
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)

from mbtest import FAILS, check  # noqa: E402


def eq(got, want, what, rel=1e-12):
    ok = (got == want if not isinstance(want, float) or not isinstance(got, (int, float))
          else abs(got - want) <= rel * max(1.0, abs(want)))
    check(ok, f"{what}: got {got!r}, expected {want!r}")


# ---- median CI: exact binomial ranks ---------------------------------------------------------
eq(stats.median_ci_ranks(20), (6, 15), "median CI ranks n=20 (the normal approximation gave 5..16)")
eq(stats.median_ci_ranks(6), (1, 6), "median CI ranks n=6")
eq(stats.median_ci_ranks(10), (2, 9), "median CI ranks n=10")
eq(stats.median_ci_ranks(5), None, "no 95% median CI at n=5")
eq(stats.median_ci(list(range(1, 21))), (6, 15), "median CI of 1..20")
for n in range(6, 31):
    # from binomtest: the largest k whose rank k-1 is rejected two-sided at 5%
    k = max(k for k in range(1, n // 2 + 1) if ss.binomtest(k - 1, n, 0.5).pvalue <= 0.05)
    eq(stats.median_ci_ranks(n), (k, n - k + 1), f"median CI ranks n={n} against binomtest")
    k99 = [k for k in range(1, n // 2 + 1) if ss.binomtest(k - 1, n, 0.5).pvalue <= 0.01]
    eq(stats.median_ci_ranks(n, 0.99), (max(k99), n - max(k99) + 1) if k99 else None, f"99% ranks n={n}")

# ---- exact CI bounds: the ranks of Walsh averages and of pairwise differences ----------------
# n = 10, alpha 0.05: critical T = 8 (P(T <= 8) = 0.0244, P(T <= 9) = 0.0322), so the CI is
# [W(9), W(47)] of the 55 Walsh averages; these d give distinct neighbours W(8), W(10), W(46), W(48).
d = [-0.5, 1, 2.2, 3.7, 5.1, 6.6, 8.3, 9.9, 12.4, 15.8]
est, lo, hi, p, method = stats.signed_rank_shift(d)
eq(lo, 2.35, "signed-rank CI low = W(9)")
eq(hi, 10.35, "signed-rank CI high = W(47)", 1e-9)
eq(est, 6.05, "Hodges-Lehmann pseudo-median", 1e-9)
eq(p, 4 / 1024, "signed-rank p: T- = 1 (only -0.5, rank 1): 2 * 2/1024")
eq(p, float(ss.wilcoxon(d, method="exact").pvalue), "signed-rank p against scipy")
# 6 vs 6: critical U = 5 (P(U <= 5) = 19/924 = 0.0206, P(U <= 6) = 28/924), CI [D(6), D(31)]
x, y = [10, 13, 17, 22, 31, 40], [11.5, 19.25, 25.1, 30.7, 38.3, 47.9]
est, lo, hi, p, method = stats.rank_sum_shift(x, y)
eq(lo, -10.5, "rank-sum CI low = D(6)")
eq(hi, 25.3, "rank-sum CI high = D(31)", 1e-9)
eq(est, 7.6, "Hodges-Lehmann shift", 1e-9)
eq(p, float(ss.mannwhitneyu(y, x, method="exact").pvalue), "rank-sum p against scipy")

# ---- exact tests with ties, by hand ----------------------------------------------------------
# d = 1, 1, -1, 2: |d| midranks 2, 2, 2, 4 (doubled 4 4 4 8); S+ (doubled) = 4+4+8 = 16.
# The 16 sign patterns give S = 4k + 8e; S >= 16 needs e=1 and k >= 2: 4 patterns.  p = 2 * 4/16.
eq(stats.signed_rank_p([1, 1, -1, 2]), 0.5, "signed-rank with ties, by hand")
# zeros dropped: six positive distinct differences left: p = 2 / 2^6
eq(stats.signed_rank_p([0, 2, 3, 5, 7, 1, 4]), 2 / 64, "signed-rank with a zero, by hand")
# x = 1 2 2, y = 2 3 3: midranks 1 | 3 3 3 | 5.5 5.5; y's rank sum 3 + 5.5 + 5.5 = 14.  Of the 20
# ways to pick 3 ranks, only one 3 with both 5.5s reaches 14 (3 ways): p = 2 * 3/20.
eq(stats.rank_sum_p([1, 2, 2], [2, 3, 3]), 0.3, "Mann-Whitney with ties, by hand")
eq(stats.rank_sum_p([1, 2, 3], [1, 2, 3]), 1.0, "identical samples")


def perm_signed(dd):
    nz = np.array([v for v in dd if v != 0], float)
    r = ss.rankdata(np.abs(nz))
    return ss.permutation_test((nz,), lambda s, axis=-1: np.sum(np.where(s > 0, r, 0), axis=-1),
                               permutation_type="samples", n_resamples=np.inf, vectorized=True).pvalue


def perm_ranksum(a, b):
    def stat(u, v, axis=-1):
        return np.sum(ss.rankdata(np.concatenate([u, v], axis=-1), axis=-1)[..., u.shape[-1]:], axis=-1)
    return ss.permutation_test((np.array(a, float), np.array(b, float)), stat, n_resamples=np.inf,
                               vectorized=True).pvalue


rng = random.Random(9)
for _ in range(150):
    n = rng.randint(1, 14)
    dd = [rng.gauss(0.4, 1) for _ in range(n)]
    eq(stats.signed_rank_p(dd), float(ss.wilcoxon(dd, method="exact").pvalue), f"signed-rank p vs scipy {dd}", 1e-9)
    a = [rng.gauss(0, 1) for _ in range(rng.randint(1, 9))]
    b = [rng.gauss(0.7, 1) for _ in range(rng.randint(1, 9))]
    eq(stats.rank_sum_p(a, b), float(ss.mannwhitneyu(b, a, method="exact").pvalue), "rank-sum p vs scipy", 1e-9)
for _ in range(40):
    dd = [rng.choice([-2, -1, 0, 1, 1, 2, 3]) for _ in range(rng.randint(2, 9))]
    if sum(1 for v in dd if v) >= 2:
        eq(stats.signed_rank_p(dd), float(perm_signed(dd)), f"sign-flip with ties vs permutation_test {dd}", 1e-9)
    a = [rng.choice([1, 2, 2, 3]) for _ in range(rng.randint(2, 6))]
    b = [rng.choice([2, 3, 3, 4]) for _ in range(rng.randint(2, 6))]
    eq(stats.rank_sum_p(a, b), float(perm_ranksum(a, b)), f"rank-sum with ties vs permutation_test {a} {b}", 1e-9)

# the null distributions themselves: the untied signed-rank null of n=10 against scipy's p
probs = stats.signed_rank_null(tuple(range(2, 21, 2)))
eq(float(probs.sum()), 1.0, "signed-rank null sums to 1", 1e-12)
eq(float(2 * probs[:2 * 8 + 1].sum()), float(ss.wilcoxon([-1, -7] + list(range(2, 7)) + [8, 9, 10],
                                                            method="exact").pvalue), "P(T <= 8) against scipy")

# ---- changes: both directions, verdicts, constants, zeros ------------------------------------
base = [100, 102, 98, 101, 99, 103, 97, 100, 101, 99]
up = [v * 1.10 * (1 + 0.002 * i) for i, v in enumerate(base)]
down = [v * 0.90 * (1 + 0.002 * i) for i, v in enumerate(base)]
cu, cd = stats.paired_change(base, up), stats.paired_change(base, down)
check(cu.kind == "ratio" and cu.lo > 1.05 and cu.hi < 1.15, f"+10% paired CI {cu}")
check(cd.kind == "ratio" and cd.lo > 0.85 and cd.hi < 0.95, f"-10% paired CI {cd}")
eq(stats.verdict(cu, "higher"), "improved", "faster, higher is better")
eq(stats.verdict(cd, "higher"), "regressed", "slower, higher is better")
eq(stats.verdict(cu, "lower"), "regressed", "larger, lower is better")
eq(stats.verdict(cd, "lower"), "improved", "smaller, lower is better")
uu, ud = stats.unpaired_change(base, up), stats.unpaired_change(base, down)
eq(stats.verdict(uu, "higher"), "improved", "unpaired +10%")
eq(stats.verdict(ud, "higher"), "regressed", "unpaired -10%")
# negligible: the whole CI inside the +-1% band (an exactly measured 0.8%); improved? /
# regressed?: it excludes 1 and reaches past the band's edge; within noise: it includes 1 and
# reaches beyond the band
small = [v * 1.008 * (1 + 0.0001 * (i - 5)) for i, v in enumerate(base)]
cs = stats.paired_change(base, small)
check(1 < cs.lo < cs.hi < 1.01, f"a 0.8% change: CI {cs.lo}..{cs.hi}")
eq(stats.verdict(cs, "higher"), "negligible", "a 0.8% change that is certain")
edge = [v * 1.012 * (1 + 0.004 * ((-1) ** i) * (i % 4)) for i, v in enumerate(base)]
ce = stats.paired_change(base, edge)
check(1 < ce.lo < 1.01 < ce.hi, f"a 1.2% change reaching into the band: CI {ce.lo}..{ce.hi}")
eq(stats.verdict(ce, "higher"), "improved?", "a real change that may be under the floor, higher is better")
eq(stats.verdict(ce, "lower"), "regressed?", "the same, lower is better")
same = [v * (1 + 0.01 * ((-1) ** i) * (i % 3)) for i, v in enumerate(base)]
cn = stats.paired_change(base, same)
check(cn.lo < 1 - 0.01 or cn.hi > 1 + 0.01, f"no change, CI past the band: {cn.lo}..{cn.hi}")
eq(stats.verdict(cn, "higher"), "within noise", "no change")
# fewer than 2 pairs: the ratio of the medians, marked, no verdict word
u = stats.unpaired_ratio([100], [150])
eq((u.kind, u.estimate, u.lo, u.method, stats.verdict(u)), ("ratio", 1.5, None, stats.UNPAIRED, "-"),
   "one pair: unpaired ratio of medians, no verdict")
# too few: 5 pairs (smallest p 1/16), 3 vs 3 (1/10); 6 pairs and 4 vs 4 can
eq(stats.verdict(stats.paired_change(base[:5], up[:5]), "higher"), "too few", "5 pairs")
eq(stats.paired_change(base[:5], up[:5]).min_p, 1 / 16, "min p of 5 pairs")
eq(stats.verdict(stats.paired_change(base[:6], up[:6]), "higher"), "improved", "6 pairs")
eq(stats.verdict(stats.unpaired_change(base[:3], up[:3]), "higher"), "too few", "3 vs 3")
eq(stats.verdict(stats.unpaired_change(base[:4], up[:4]), "higher"), "improved", "4 vs 4")
# constants: all equal and non-zero is a change with CI [c, c]; all zero is no change
c = stats.paired_change([400] * 6, [500] * 6)
eq((c.kind, c.estimate, c.lo, c.hi), ("ratio", 1.25, 1.25, 1.25), "constant 400 -> 500", 1e-12)
eq(c.p, 1 / 32, "constant: the smallest p of 6 pairs")
eq(stats.verdict(c, "lower"), "regressed", "constant 400 -> 500, lower is better")
c = stats.paired_change([400] * 6, [400] * 6)
eq((c.estimate, c.lo, c.hi, c.p), (1.0, 1.0, 1.0, 1.0), "constant, no change")
eq(stats.verdict(c, "lower"), "negligible", "constant, no change: negligible (its CI is exactly 1)")
c = stats.paired_change([0] * 6, [0] * 6)
eq((c.kind, c.lo, c.hi, stats.verdict(c, "lower")), ("diff", 0, 0, "negligible"), "all zero")
c = stats.paired_change([0] * 8, [823, 820, 823, 830, 823, 819, 823, 823])
eq((c.kind, c.base_median, c.lo > 0, stats.verdict(c, "lower")), ("diff", 0, True, "regressed"), "0 -> 823")
c = stats.unpaired_change([0] * 6, [823] * 6)
eq((c.kind, c.lo, c.hi, stats.verdict(c, "lower")), ("diff", 823, 823, "regressed"), "0 -> 823 unpaired")
# a pair with a missing side is dropped and n says so
eq(stats.paired_change([1, 2, None, 4, 5, 6, 7], [1, 2, 3, None, 5, 6, 7]).n, 5, "n counts complete pairs")

# ---- a difference's negligible band: floor x |the BASELINE's median|, never the other side's ----
# (idle_release's trade-off figure, counts from 0: a change that is not a ratio).  The two sides'
# medians differ 100x here, so a band taken from the wrong side turns each word into another.


def diff_change(lo, hi, base_median, median):
    return stats.Change("diff", (lo + hi) / 2, lo, hi, 0.01, 8, 8, "test", 2.0 ** -7, True, 0.95, median,
                        base_median, True)


for lo, hi, base_med, med, higher, lower, what in [
        (-5, 5, 1000, 10, "negligible", "negligible", "CI within +-10 (1% of the base 1000), the other side 10"),
        (-5, 5, 10, 1000, "within noise", "within noise", "CI past +-0.1 (1% of the base 10), the other side 1000"),
        (3, 5, 1000, 10, "negligible", "negligible", "a certain +3..5 inside the base's band of +-10"),
        (3, 5, 10, 1000, "improved", "regressed", "a certain +3..5 beyond the base's band of +-0.1"),
        (-5, -3, 10, -1000, "regressed", "improved", "a certain -5..-3 beyond the base's band (a negative other side)"),
        (0.05, 30, 10, 1000, "improved?", "regressed?", "real, reaching into the base's band of +-0.1"),
        (-9, 30, -1000, 5, "within noise", "within noise", "the band of a negative base median is +-10")]:
    c = diff_change(lo, hi, base_med, med)
    eq(stats.verdict(c, "higher"), higher, f"{what}, higher is better")
    eq(stats.verdict(c, "lower"), lower, f"{what}, lower is better")
eq(stats.verdict(diff_change(-5, 5, 1000, 10), "higher", floor=0.001), "within noise",
   "the band is the floor's share of the base: +-1 at --floor 0.1%")
# the sides' medians come from the right side, paired or not (a diff: a side holds a 0)
base, other = [0, 10, 10, 10, 10, 10, 10, 10], [1000, 1000, 1001, 1002, 1000, 1003, 1000, 1000]
for ch in (stats.paired_change(base, other), stats.unpaired_change(base, other)):
    eq((ch.kind, ch.base_median, ch.median), ("diff", 10, 1000), f"the medians of each side ({ch.method})")
c = stats.unpaired_ratio([0, 10, 10], [1000, 1001])
eq((c.base_median, c.median), (10, 1000.5), "the unpaired ratio's medians of each side")

# ---- multiplicity ----------------------------------------------------------------------------
eq(stats.bonferroni_level(10), 0.995, "Bonferroni level over 10")
# BH at q = 0.05 over 5: sorted 0.001 0.012 0.02 0.3 0.9 against 0.01 0.02 0.03 0.04 0.05: R = 3
eq(stats.bh_level([0.9, 0.012, 0.001, 0.3, 0.02]), (3, 1 - 3 * 0.05 / 5), "BH R and FCR level")
eq(stats.bh_level([0.5, 0.6]), (0, 1 - 0.05 / 2), "BH with nothing selected")
# step-up, not step-down: the smallest p (0.02) is above its line 0.0125, the second (0.021) under
# 0.025, so R = 2 (the largest rank under its line), not 0
eq(stats.bh_level([0.9, 0.021, 0.02, 0.5]), (2, 1 - 2 * 0.05 / 4), "BH takes the largest rank under its line")
eq(stats.geomean([2, 8]), 4.0, "geomean")
eq(stats.geomean([2, 0]), None, "geomean refuses a value <= 0")

# ---- property: thousands of random cells -----------------------------------------------------
contra = dual = tie_ci = 0
trials = 0
for i in range(4000):
    n = rng.choice([4, 5, 6, 7, 8, 10, 12, 15, 20])
    eff = rng.choice([1.0, 1.0, 1.005, 1.02, 1.05, 0.97, 0.9, 2.0])
    cv = rng.choice([0.005, 0.02, 0.05, 0.1])
    level = rng.choice([0.95, 0.95, 0.99, 1 - 0.05 / 12])
    kind = rng.random()
    a = [100 * math.exp(rng.gauss(0, 0.05)) for _ in range(n)]
    b = [v * eff * (1 + rng.gauss(0, cv)) for v in a]
    if kind < 0.2:  # ties: ticks of 1, counts
        a = [round(v / 5) for v in a]
        b = [round(v / 5) for v in b]
    elif kind < 0.3:  # zeros and counts
        a = [rng.choice([0, 0, 3]) for _ in a]
        b = [rng.choice([0, 4, 5]) for _ in b]
    ch = (stats.paired_change if i % 2 else stats.unpaired_change)(a, b, level)
    floor = rng.choice([0.0, 0.01, 0.05])
    want = rng.choice(["higher", "lower"])
    v = stats.verdict(ch, want, floor)
    trials += 1
    no = ch.no_change
    band = (1 - floor, 1 + floor) if ch.kind == "ratio" else (-floor * abs(ch.base_median),
                                                               floor * abs(ch.base_median))
    if v in ("improved", "regressed"):
        ok = ch.lo is not None and (ch.lo > band[1] or ch.hi < band[0])
    elif v in ("improved?", "regressed?"):
        ok = not (ch.lo <= no <= ch.hi) and not (ch.lo > band[1] or ch.hi < band[0]) and \
            not (band[0] <= ch.lo and ch.hi <= band[1]) and (v == "improved?") == ((ch.lo > no) == (want == "higher"))
    elif v == "negligible":
        ok = band[0] <= ch.lo and ch.hi <= band[1]
    elif v == "within noise":
        ok = ch.lo <= no <= ch.hi and not (band[0] <= ch.lo and ch.hi <= band[1])
    else:
        ok = v == "too few" and (not ch.detectable or ch.lo is None)
    contra += not ok
    if not ok:
        print("contradiction:", v, ch, file=sys.stderr)
    if kind >= 0.3 and ch.lo is not None and "exact" in ch.method and "ties" not in ch.method:
        excl = not (ch.lo <= no <= ch.hi)
        dual += excl != (ch.p <= 1 - level)
check(contra == 0, f"{contra} of {trials} verdicts contradict their CI")
check(dual == 0, f"{dual} untied cells where p <= alpha disagrees with the CI excluding no change")
# the test-inversion path (used with ties) gives the closed-form CI on untied data
for _ in range(200):
    dd = [rng.gauss(0.1, 1) for _ in range(rng.choice([6, 8, 11]))]
    n = len(dd)
    walsh = sorted((dd[i] + dd[j]) / 2 for i in range(n) for j in range(i, n))
    _, lo, hi, _, _ = stats.signed_rank_shift(dd)
    inv = stats._invert(walsh, lambda th: stats.signed_rank_p(dd, th), 0.05)
    tie_ci += inv is None or abs(inv[0] - lo) > 1e-12 or abs(inv[1] - hi) > 1e-12
check(tie_ci == 0, f"{tie_ci} untied samples where test inversion and the closed form disagree")

# every combination of 6 signs of fixed magnitudes: the exact sign-flip null is uniform
mags = [1, 2, 3, 4, 5, 6]
ps = sorted(stats.signed_rank_p([m * s for m, s in zip(mags, signs)]) for signs in itertools.product([1, -1], repeat=6))
eq(ps[0], 1 / 32, "the smallest sign-flip p of 6")

if FAILS:
    print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print(f"ok ({trials} random cells, no contradiction)")
