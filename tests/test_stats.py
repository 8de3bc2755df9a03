#!/usr/bin/env python3
"""test_stats.py - the statistics of scripts/stats.py and compare.py against
answers worked out by hand (written into the test), an A/A comparison that
must find nothing, and a 5% shift that must be found."""
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import compare  # noqa: E402
import stats  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, file=sys.stderr)


def close(a, b, rel):
    return abs(a - b) <= rel * abs(b)


# Mann-Whitney, exact: fully separated 5 vs 5 -> 2 / C(10,5) = 2/252
p, u = stats.mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
check(close(p, 2 / 252, 1e-12) and u == 0, f"exact p separated: {p} {u}")
# one inversion (6 > 5): U = 1, p = 2 * (1 + 1) / 252
p, u = stats.mann_whitney([1, 2, 3, 4, 6], [5, 7, 8, 9, 10])
check(close(p, 4 / 252, 1e-12) and u == 1, f"exact p one inversion: {p} {u}")
# identical samples: p = 1
p, _ = stats.mann_whitney([1, 2, 3], [1, 2, 3])
check(p == 1.0, f"identical: {p}")
# normal approximation with ties: a = 1..20, b = 11..30: U1 = 45 + 10/2 = 50,
# mu = 200, sigma = sqrt(400/12 * (41 - 60/1560)) = 36.951, z = 149.5/36.951
# = 4.0459, p = 2 * Q(4.0459) = 5.213e-5
p, u = stats.mann_whitney(list(range(1, 21)), list(range(11, 31)))
check(u == 50 and close(p, 5.213e-5, 0.01), f"normal approximation: {p} {u}")

# median CI: n = 20 -> ranks floor(10 - 4.383) = 5 and ceil(11 + 4.383) = 16
check(stats.median_ci(list(range(1, 21))) == (5, 16), "median CI n=20")
check(stats.median_ci([1, 2, 3, 4, 5]) is None, "no CI under 6")
# Holm: sorted 0.005 0.01 0.03 0.04 -> x4 x3 x2 x1, made monotone
check(stats.holm([0.01, 0.04, 0.03, 0.005]) == [0.03, 0.06, 0.06, 0.02], "Holm")
# Hodges-Lehmann of b = 2a: ratio exactly 2
hl = stats.hodges_lehmann_ratio([1, 2, 3, 4, 5, 6], [2, 4, 6, 8, 10, 12])
check(close(hl[0], 2.0, 1e-12) and hl[1] <= 2.0 <= hl[2], f"HL ratio {hl}")
check(close(stats.geomean([2, 8]), 4, 1e-12), "geomean")


def rows(config, values, block0=0):
    return [{"schema_version": compare.SCHEMA, "status": "ok", "workload": "w", "workload_params": "p",
             "config": config, "throughput": f"{v:.6f}", "throughput_unit": "ops/s", "block": str(block0 + i),
             "region_wall_s": "1"} for i, v in enumerate(values)]


def verdict(base, new, two_runs=False):
    groups = compare.samples(base + new)
    compare.METRICS = [m for m in compare.METRICS if m[0] == "throughput"]
    cells = compare.build(groups, groups, "glibc", False, 0.01)
    return [c for c in cells if c["config"] == "other"][0]


rng = random.Random(4)
# A/A: the same distribution, 40 times: at least 95% "not significant"
false = 0
for trial in range(40):
    a = [100 * (1 + rng.gauss(0, 0.02)) for _ in range(10)]
    b = [100 * (1 + rng.gauss(0, 0.02)) for _ in range(10)]
    false += verdict(rows("glibc", a), rows("other", b))["significant"]
check(false <= 2, f"A/A flagged {false} of 40")
# a 5% shift with 2% noise, 10 samples each: found, and the CI holds 1.05
found = 0
for trial in range(20):
    a = [100 * (1 + rng.gauss(0, 0.02)) for _ in range(10)]
    b = [105 * (1 + rng.gauss(0, 0.02)) for _ in range(10)]
    c = verdict(rows("glibc", a), rows("other", b))
    found += c["significant"] and c["ratio_lo"] <= 1.05 * 1.03 and c["ratio_hi"] >= 1.05 * 0.97
check(found >= 19, f"5% shift found {found} of 20")

if FAILS:
    print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
    sys.exit(1)
