#!/usr/bin/python3
"""test_sequential.py - scripts/mallocbench/sequential.py, the one stopping rule: the looks and
their alpha; the critical values against a brute-force enumeration of all 2^n sign flips
(n = 8, 10); ci() against stats.signed_rank_shift at the same level on untied data; settle's
four verdicts and None; stop() at the first look, a later look, the cap and the budget.
Exit 77 (skip) without scipy."""
import itertools
import math
import random
import sys

try:
    import numpy as np
    import scipy  # noqa: F401  (stats.signed_rank_shift's exact p)
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)
from mallocbench import sequential
from mallocbench import stats
from mbtest import FAILS, check, check_eq  # noqa: E402


def close(a, b, rel=1e-12):
    return a is not None and b is not None and abs(a - b) <= rel * max(1.0, abs(b))


# ---- the looks -------------------------------------------------------------------------------

def plan(looks):
    return [(b, round(a, 12)) for b, a in looks]


check_eq(plan(sequential.looks(30)), [(8, 0.008), (12, 0.004), (18, 0.008), (30, 0.03)], "looks(30)")
check_eq(plan(sequential.looks(10)), [(8, 0.008), (10, 0.042)], "looks(10): make compare's cap")
check_eq(plan(sequential.looks(18)), [(8, 0.008), (12, 0.004), (18, 0.038)], "looks(18): the cap is the last look")
check_eq(plan(sequential.looks(8)), [(8, 0.05)], "looks(8): one look spending all")
check_eq(plan(sequential.looks(5)), [(5, 0.05)], "looks(5)")
for cap in (6, 8, 9, 12, 13, 19, 30, 100):
    check(abs(sum(a for _, a in sequential.looks(cap)) - sequential.ALPHA) < 1e-12, f"looks({cap}) spend 0.05")
check(abs(sequential.alpha_left([(8, 0.008), (12, 0.004)]) - 0.038) < 1e-12, "alpha_left after two looks")
check(sequential.alpha_left([]) == sequential.ALPHA, "alpha_left before any look")


# ---- critical values: every sign flip enumerated ---------------------------------------------

def brute_critical(n, alpha):
    """Largest t with 2 P(W+ <= t) <= alpha over all 2^n sign patterns of ranks 1..n; -1 if none."""
    ranks = np.arange(1, n + 1)
    signs = np.array(list(itertools.product((0, 1), repeat=n)))
    wplus = signs @ ranks
    counts = np.bincount(wplus, minlength=n * (n + 1) // 2 + 1).cumsum()
    ok = [t for t in range(len(counts)) if 2 * counts[t] / 2 ** n <= alpha * (1 + 1e-9)]
    return max(ok) if ok else -1


for n in (8, 10):
    for alpha in (0.05, 0.042, 0.03, 0.01, 0.008, 2 / 2 ** 8, 0.0078, 0.004, 0.002, 0.001):
        check_eq(sequential.critical(n, alpha), brute_critical(n, alpha), f"critical({n}, {alpha})")
check_eq(sequential.critical(8, 0.008), 0, "block 8 at 0.008 can settle (smallest p 2/256 = 0.0078)")
check_eq(sequential.critical(8, 0.0078), -1, "block 8 below 2/256 settles nothing")
check_eq(sequential.critical(6, 0.008), -1, "block 6 at 0.008 settles nothing")


# ---- ci against stats.signed_rank_shift --------------------------------------------------------

rng = random.Random(45)
bad = 0
for trial in range(60):
    n = rng.choice((8, 10, 12, 18, 25, 30))
    d = [rng.gauss(0.02, 0.05) for _ in range(n)]
    for alpha in (0.05, 0.03, 0.008, 0.004):
        est, lo, hi = sequential.ci(d, alpha)
        want = stats.signed_rank_shift(d, 1 - alpha)[:3]
        if want[1] is None:
            bad += lo is not None
        else:
            bad += not (close(est, want[0]) and close(lo, want[1]) and close(hi, want[2]))
check(bad == 0, f"ci() differs from stats.signed_rank_shift at 1 - alpha in {bad} cases")
check_eq(sequential.ci([], 0.05), (None, None, None), "ci of nothing")
check(sequential.ci([0.1, 0.2, 0.3, 0.4, 0.5], 0.05)[1:] == (None, None), "no 95% CI from 5 pairs")
check(sequential.ci([0.1 * i for i in range(1, 9)], 0.008)[1:] == (0.1, 0.8), "n=8 at 0.008: [min, max]")


# ---- settle ------------------------------------------------------------------------------------

def spread(centre, half, n=8):
    return [centre + half * (2 * i / (n - 1) - 1) for i in range(n)]


why, e, lo, hi = sequential.settle(spread(math.log(1.5), 0.05), 0.008)
check(why == "improved" and lo > 1.01 and close(e, 1.5, 1e-9), f"1.5x: {why} {e} [{lo}, {hi}]")
check_eq(sequential.settle(spread(math.log(1.5), 0.05), 0.008, better="lower")[0], "regressed", "1.5x lower-better")
check_eq(sequential.settle(spread(math.log(0.5), 0.05), 0.008)[0], "regressed", "0.5x")
check_eq(sequential.settle(spread(math.log(0.5), 0.05), 0.008, better="lower")[0], "improved", "0.5x lower-better")
check_eq(sequential.settle(spread(0.0, 0.005), 0.008)[0], "negligible", "inside +-1%")
why, e, lo, hi = sequential.settle(spread(math.log(1.015), 0.012), 0.008)
check(why == "resolution" and lo < 1.01 < hi and (hi - lo) / 2 / e <= 0.02, f"+-1.2% across the floor: {why}")
check_eq(sequential.settle(spread(math.log(1.015), 0.012), 0.008, resolution=0)[0], None, "resolution 0: off")
check_eq(sequential.settle(spread(math.log(1.015), 0.012), 0.008, resolution=0.01)[0], None, "resolution 1%")
check_eq(sequential.settle(spread(0.0, 0.1), 0.008)[0], None, "+-10% around 0: not settled")
why, e, lo, hi = sequential.settle(spread(math.log(1.05), 0.04, 6), 0.008)
check((why, lo, hi) == (None, None, None) and close(e, 1.05, 1e-9), f"6 pairs at 0.008: no CI, an estimate: {e}")
check_eq(sequential.settle(spread(0.3, 0.01), 0.008, floor=0.5)[0], "negligible", "a floor of 50%")


# ---- stop ---------------------------------------------------------------------------------------

big = spread(math.log(2), 0.1, 30)
rng.shuffle(big)
s = sequential.stop(big, 30)
check((s["look"], s["blocks"], s["n"], s["why"]) == (1, 8, 8, "improved") and close(s["alpha"], 0.008),
      f"2x settles at the first look: {s}")
late = [-0.5] + [math.log(2) + 0.001 * i for i in range(29)]
s = sequential.stop(late, 30)
check((s["look"], s["blocks"], s["why"]) == (2, 12, "improved"), f"one wild block: settled at 12: {s}")
noisy = [0.2 * (-1) ** i * (1 + i / 30) for i in range(30)]
s = sequential.stop(noisy, 30)
check((s["look"], s["blocks"], s["n"], s["why"]) == (4, 30, 30, "cap") and close(s["alpha"], 0.03) and
      s["lo"] is not None, f"noise to the cap: {s}")
s = sequential.stop(noisy, 30, budget_at=10)
check((s["look"], s["blocks"], s["why"]) == (2, 10, "budget") and close(s["alpha"], 0.042), f"budget at 10: {s}")
s = sequential.stop(noisy, 30, budget_at=5)
check((s["look"], s["blocks"], s["why"], s["lo"]) == (1, 5, "budget", None) and close(s["alpha"], 0.05),
      f"budget at 5, before any look: {s}")
s = sequential.stop(noisy, 30, budget_at=40)
check((s["blocks"], s["why"]) == (30, "cap"), f"a budget beyond the cap changes nothing: {s}")
s = sequential.stop(noisy[:20], 30)
check((s["blocks"], s["n"], s["why"]) == (30, 20, "cap"), f"20 blocks of a cap of 30: {s}")
s = sequential.stop([None, None] + big[:28], 30)
check((s["look"], s["blocks"], s["n"], s["why"]) == (2, 12, 10, "improved"),
      f"two blocks without a pair: 6 pairs at block 8 settle nothing, 10 at block 12 do: {s}")
s = sequential.stop(noisy[:10], 10)
check((s["look"], s["blocks"], s["why"]) == (2, 10, "cap") and close(s["alpha"], 0.042), f"cap 10: {s}")

if FAILS:
    print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("ok")
