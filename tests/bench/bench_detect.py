#!/usr/bin/python3
"""bench_detect.py - the change-point detector's figures (scripts/detect.py replay, the code the
dashboard runs): false alerts over 60 simulated A/A nights, and nights to detection of a 3%, 5%
and 10% step at the A/A noise level (each night's median off by a lognormal sd NOISE per
configuration, the floor's A/A noise measured from a simulated A/A pair as in a history).
Figures, not asserted.

    bench_detect.py [--trials 300] [--noise 0.01] [--seed 1]"""
import argparse
import math
import os
import random
import sys
import time

try:
    import numpy as np  # noqa: F401
    import scipy  # noqa: F401
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)
from mallocbench import detect

NIGHTS = 60
STEP_AT = 30


def aa_noise(rng, noise, nights):
    a = [rng.gauss(0, noise) for _ in range(nights)]
    b = [rng.gauss(0, noise) for _ in range(nights)]
    logs = [y - x for x, y in zip(a, b)]
    out = []
    for k in range(nights):
        w = logs[max(0, k + 1 - detect.WINDOW):k + 1]
        out.append(detect.Z95 * detect.robust_sd(w) if len(w) >= 5 else None)
    return out


def series(rng, noise, step):
    return [1e9 * (1 + (step if i >= STEP_AT else 0.0)) * math.exp(rng.gauss(0, noise)) for i in range(NIGHTS)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--noise", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    t0 = time.time()
    print(f"detector: E-divisive + Welch t, window {detect.WINDOW}, min segment {detect.MIN_SEG}, "
          f"alpha {detect.ALPHA}, floor max({detect.TIMING_FLOOR:.0%}, A/A noise); night noise sd "
          f"{args.noise:.1%} per configuration (A/A ratio sd {args.noise * math.sqrt(2):.2%}), {args.trials} trials")
    fa_trials = fa_total = pend = 0
    for _ in range(args.trials):
        recs, p = detect.replay(detect.Series(series(rng, args.noise, 0.0), "timing", "higher",
                                              aa_noise(rng, args.noise, NIGHTS)))
        fa_total += len(recs)
        fa_trials += bool(recs)
        pend += p is not None
    print()
    print("| A/A, 60 nights | trials with a false alert | false alerts per 60 nights | pending on the last night |")
    print("|---|---|---|---|")
    print(f"| one series | {fa_trials}/{args.trials} ({fa_trials / args.trials:.1%}) | "
          f"{fa_total / args.trials:.3f} | {pend}/{args.trials} |")
    print()
    print(f"| step at night {STEP_AT} | detected (of {args.trials}) | nights to detection: median | p90 | max | "
          f"reported night within +-1 | median change % |")
    print("|---|---|---|---|---|---|---|")
    for step in (-0.03, -0.05, -0.10):
        lags, exact, pct = [], 0, []
        for _ in range(args.trials):
            recs, _ = detect.replay(detect.Series(series(rng, args.noise, step), "timing", "higher",
                                                  aa_noise(rng, args.noise, NIGHTS)))
            hit = [r for r in recs if abs(r["i"] - STEP_AT) <= detect.SAME and r["diff"] < 0]
            if hit:
                r = min(hit, key=lambda r: r["detected"])
                lags.append(r["detected"] - STEP_AT + 1)  # slow nights seen when first reported
                exact += abs(r["i"] - STEP_AT) <= 1
                pct.append(r["change_pct"])
        lags.sort()
        pct.sort()
        q = lambda xs, f: xs[min(len(xs) - 1, int(f * len(xs)))] if xs else float("nan")  # noqa: E731
        print(f"| {step:+.0%} | {len(lags)} ({len(lags) / args.trials:.0%}) | {q(lags, 0.5)} | {q(lags, 0.9)} | "
              f"{lags[-1] if lags else '-'} | {exact} | {q(pct, 0.5):.2f} |")
    print(f"\n(nights to detection: slow nights seen when first reported; 2, on the step's second night, is the "
          f"earliest a `confirmed` can be; "
          f"{time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
