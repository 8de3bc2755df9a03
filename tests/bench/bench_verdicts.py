#!/usr/bin/python3
"""bench_verdicts.py - false alarms and power of compare's verdicts, simulated
through the real code (scripts/mallocbench/change.py, analyse()): synthetic runs of two
configurations in randomized blocks, a block effect that multiplies both
(lognormal, sd 5%), residual noise of CV 2/5/10% per sample, true changes A/A,
+3%, +5%, +10%, 2x, n = 6/10/20 blocks.  Prints the share of trials flagged
improved/regressed per cell, and beside it what the old design (unpaired
Mann-Whitney, Holm over ~50 cells, the 1% floor on the point estimate) flagged.
Targets (issue 9): A/A false flags <= 5% per cell; +3% at n=20, CV 2%: >= 80%.

    bench_verdicts.py [--trials 600] [--seed 1]      exit 1 when a target is missed
"""
import argparse
import math
import os
import random
import sys
import time

from mallocbench import change
from mallocbench import mbcsv
from mallocbench import stats

EFFECTS = [("A/A", 1.0), ("+3%", 1.03), ("+5%", 1.05), ("+10%", 1.10), ("2x", 2.0)]
BLOCKS = [6, 10, 20]
NOISE = [0.02, 0.05, 0.10]
BLOCK_SD = 0.05
OLD_M = 50  # cells in the old table that Holm corrected over


def rows(rng, n, cv, effect):
    out = []
    for b in range(n):
        beta = math.exp(rng.gauss(0, BLOCK_SD))
        for config, mult in (("A", 1.0), ("B", effect)):
            v = 1e9 * mult * beta * max(0.05, 1 + rng.gauss(0, cv))
            out.append({"schema_version": mbcsv.SCHEMA, "status": "ok", "workload": "w", "workload_params": "p",
                        "config": config, "allocator": config, "requested_tunables": "", "block": str(b),
                        "throughput": f"{v:.6g}", "throughput_unit": "B/s", "metric": "copy bandwidth",
                        "metric_better": "higher", "region_wall_s": "1"})
    return out


def old_flag(rs):
    """The old design: unpaired exact Mann-Whitney, Holm over OLD_M cells (this one taken as
    the smallest p, so adjusted p = OLD_M x p), the floor on the paired median ratio."""
    from scipy.stats import mannwhitneyu
    a = [float(r["throughput"]) for r in rs if r["config"] == "A"]
    b = [float(r["throughput"]) for r in rs if r["config"] == "B"]
    p = mannwhitneyu(b, a, alternative="two-sided", method="exact").pvalue
    ratio = stats.median([y / x for x, y in zip(a, b)])
    return min(1.0, OLD_M * p) < 0.05 and abs(ratio - 1) >= 0.01


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=600, help="trials per cell (default 600, about a minute)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-old", action="store_true", help="skip the old design's column")
    a = ap.parse_args()
    try:
        stats.require_scipy()
    except ImportError:
        print("SKIP: no python3 with scipy (apt-get install python3-scipy)")
        return 77
    rng = random.Random(a.seed)
    metric = [change.METRICS[0]]
    t0 = time.time()
    print(f"{a.trials} trials per cell; block effect sd {BLOCK_SD:.0%} (multiplies both configurations); "
          f"verdicts by change.analyse (paired, floor 1%, alpha 0.05 per cell)")
    print("flagged = improved or regressed; old = unpaired Mann-Whitney, Holm over "
          f"{OLD_M} cells, floor on the point estimate\n")
    head = f"{'change':<6} {'n':>3}" + "".join(f"  {'CV ' + format(cv, '.0%'):>16}" for cv in NOISE)
    print(head)
    print(f"{'':<6} {'':>3}" + "".join(f"  {'new':>7} {'old':>8}" for _ in NOISE))
    misses = []
    wrong_way = 0
    for label, effect in EFFECTS:
        for n in BLOCKS:
            line = f"{label:<6} {n:>3}"
            for cv in NOISE:
                flagged = old = 0
                for _ in range(a.trials):
                    rs = rows(rng, n, cv, effect)
                    cell = [c for c in change.analyse(rs, baseline="A", metrics=metric) if c.config == "B"][0]
                    v = cell.verdict
                    flagged += stats.flagged(v)
                    wrong_way += effect > 1 and v == "regressed"
                    if not a.no_old:
                        old += old_flag(rs)
                share = flagged / a.trials
                line += f"  {share:>7.1%} {'-' if a.no_old else format(old / a.trials, '.1%'):>8}"
                if effect == 1.0 and share > 0.05:
                    misses.append(f"A/A n={n} CV {cv:.0%}: {share:.1%} flagged (target <= 5%)")
                if label == "+3%" and n == 20 and cv == 0.02 and share < 0.80:
                    misses.append(f"+3% n=20 CV 2%: {share:.1%} flagged (target >= 80%)")
            print(line, flush=True)
    print(f"\nregressed verdicts on a true improvement: {wrong_way}; {time.time() - t0:.0f} s")
    for m in misses:
        print("MISSED:", m)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
