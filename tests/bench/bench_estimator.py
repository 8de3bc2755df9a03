#!/usr/bin/env python3
"""bench_estimator.py - median or minimum?  (issue 20, section 4: Chen & Revels 2016, the
estimator of Julia's BenchmarkTools.)  On this machine's real per-sample distributions of
cost (1/throughput where higher is better), simulates A/A and A/B comparisons of n samples a
side with a true slowdown of d%, calibrates a test per estimator to the same false-alarm rate
and prints the power of each: median, minimum, mean, 20% trimmed mean, and the Hodges-Lehmann
shift (median of all pairwise log ratios) that compare's unpaired rank test estimates.

Usage: bench_estimator.py MALLOCBENCH [CSV | -] [BLOCKS]
CSV: a run's CSV to take the samples from; '-' or absent: run the harness here
(tensor_copy, arena_churn and train_step under glibc, jemalloc and tcmalloc, BLOCKS blocks,
default 30).  Figures, not pass/fail.  Needs numpy and scipy (Debian's /usr/bin/python3).

The test: statistic log(est(B) / est(A)) (HL: the shift itself); threshold the (1 - ALPHA) quantile of |statistic|
over A/A draws; an A/B draw is detected when the statistic exceeds it (so with no change the
power column would read ALPHA / 2: the test is two-sided, power counts the right direction).  The false-alarm rate is
checked on a second, independent set of A/A draws.  Two ways to draw, both seeded:
  resample  A and B drawn with replacement from the cell's N samples (n = 5, 10, 20).  Flatters
            the minimum: a bootstrap of an extreme has too little spread when n is near N
            (both sides often hold the same smallest sample).
  split     A and B disjoint random subsets of the N samples, no sample reused (2n <= N).
"""
import math
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from mallocbench import mbcsv
from mallocbench import stats

stats.require_scipy()
import numpy as np  # noqa: E402
import scipy.stats  # noqa: E402

SPECS = ("tensor_copy:steps=10", "arena_churn:ops=200000", "train_step:steps=4")
ALLOCATORS = "glibc,jemalloc,tcmalloc"
ALPHA = 0.05
NS = (5, 10, 20)
DS = (0.01, 0.03, 0.05)
DRAWS = 4000
SEED = 20260


def median(x):
    return np.median(x, axis=1)


def minimum(x):
    return np.min(x, axis=1)


def mean(x):
    return np.mean(x, axis=1)


def trimmed(x):
    return scipy.stats.trim_mean(x, 0.2, axis=1)


def side(est):
    """The statistic log(est(B) / est(A)) of a per-side estimator."""
    return lambda a, b: np.log(est(b) / est(a))


def hodges_lehmann(a, b):
    """Median of every log(b_i / a_j): the shift estimate of compare's rank-sum test."""
    return np.median((np.log(b)[:, :, None] - np.log(a)[:, None, :]).reshape(len(a), -1), axis=1)


ESTIMATORS = (("median", side(median)), ("min", side(minimum)), ("mean", side(mean)),
              ("trim20", side(trimmed)), ("HL", hodges_lehmann))


def collect(mb, blocks, out):
    t0 = time.time()
    args = [mb, "run", "-q", "-a", ALLOCATORS, "-r", str(blocks), "--no-limit", "--seed", "20", "-o", out]
    for s in SPECS:
        args += ["-w", s]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_estimator: run failed: {p.stderr.strip()}")
    return time.time() - t0


def costs(path):
    """{(workload, config): array of per-sample cost, lower is better} of the ok rows."""
    out = {}
    for r in mbcsv.read(path)[1]:
        t = mbcsv.num(r, "throughput") if r["status"] == "ok" else None
        if t and t > 0:
            c = 1 / t if mbcsv.better(r) == "higher" else t
            out.setdefault((r["workload"], r["config"]), []).append(c)
    return {k: np.array(v) for k, v in out.items()}


def draw(rng, xs, n, mode):
    """Two (DRAWS, n) arrays A and B from the samples xs."""
    if mode == "resample":
        return rng.choice(xs, (DRAWS, n)), rng.choice(xs, (DRAWS, n))
    idx = np.argsort(rng.random((DRAWS, len(xs))), axis=1)[:, :2 * n]
    return xs[idx[:, :n]], xs[idx[:, n:]]


def simulate(rng, xs, n, mode):
    """{estimator: (false-alarm rate on fresh A/A draws, [power at each d])}."""
    calib = draw(rng, xs, n, mode)
    check = draw(rng, xs, n, mode)
    shifted = [draw(rng, xs, n, mode) for _ in DS]
    out = {}
    for name, est in ESTIMATORS:
        stat = lambda ab, f=1.0: est(ab[0], ab[1] * f)  # noqa: E731
        thr = np.quantile(np.abs(stat(calib)), 1 - ALPHA)
        fa = float(np.mean(np.abs(stat(check)) > thr))
        power = [float(np.mean(stat(ab, 1 + d) > thr)) for ab, d in zip(shifted, DS)]
        out[name] = (fa, power)
    return out


def shape(xs):
    """(CV, (median - min) / median): how far the samples spread, how far above the floor."""
    return float(np.std(xs, ddof=1) / np.mean(xs)), float((np.median(xs) - np.min(xs)) / np.median(xs))


def main():
    mb = sys.argv[1]
    src = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] != "-" else None
    blocks = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    with tempfile.TemporaryDirectory() as tmp:
        if src is None:
            src = os.path.join(tmp, "est.csv")
            wall = collect(mb, blocks, src)
            print(f"collected {blocks} blocks of {', '.join(SPECS)} under {ALLOCATORS} in {wall:.0f} s")
        cells = costs(src)
    rng = np.random.default_rng(SEED)
    names = [e[0] for e in ESTIMATORS]
    print(f"samples: {src}; cost = 1/throughput; test: |log ratio of the estimator| beyond its A/A "
          f"{100 * (1 - ALPHA):.0f}% quantile; {DRAWS} draws a cell; seed {SEED}")
    print("power = share of A/B draws with a true slowdown of d flagged; the false alarms on fresh A/A draws are in the footer")
    head = "  ".join(f"{'d=' + format(100 * d, 'g') + '%':^{7 * len(names) - 1}}" for d in DS)
    sub = "  ".join(" ".join(f"{n:>6}" for n in names) for _ in DS)
    summary = {}
    fas = []
    for mode in ("resample", "split"):
        print(f"\n-- {mode} --")
        print(f"{'workload':12} {'config':9} {'N':>3} {'CV':>6} {'>min':>6} {'n':>3}  {head}")
        print(f"{'':46}{sub}")
        for (wl, cfg), xs in sorted(cells.items()):
            cv, above = shape(xs)
            for n in NS:
                if mode == "split" and 2 * n > len(xs):
                    continue
                if mode == "resample" and n >= len(xs):
                    continue
                res = simulate(rng, xs, n, mode)
                fas += [res[e][0] for e in names]
                for e in names:
                    summary.setdefault((mode, wl, n, e), []).append(res[e][1])
                cols = "  ".join(" ".join(f"{res[e][1][i]:6.2f}" for e in names) for i in range(len(DS)))
                print(f"{wl:12} {cfg:9} {len(xs):3d} {100 * cv:5.1f}% {100 * above:5.1f}% {n:3d}  {cols}")
    if not fas:
        sys.exit(f"bench_estimator: no cell has more than {NS[0]} samples; give more blocks")
    print(f"\nfalse alarms on fresh A/A draws: {100 * min(fas):.1f}%..{100 * max(fas):.1f}% "
          f"(target {100 * ALPHA:.0f}%, {DRAWS} draws: +-{100 * 2 * math.sqrt(ALPHA * (1 - ALPHA) / DRAWS):.1f}%)")
    print("\nmean power over configurations, median vs min, d=3%:")
    i3 = DS.index(0.03)
    for mode in ("resample", "split"):
        for wl in sorted({k[1] for k in summary if k[0] == mode}):
            parts = []
            for n in NS:
                if (mode, wl, n, "median") not in summary:
                    continue
                med = np.mean([p[i3] for p in summary[(mode, wl, n, "median")]])
                mn = np.mean([p[i3] for p in summary[(mode, wl, n, "min")]])
                parts.append((n, med, mn))
            if not parts:
                continue
            n, med, mn = parts[1] if len(parts) > 1 else parts[0]
            if abs(mn - med) < 0.05:
                word = f"min and median alike at 3%, n={n}: {mn:.2f} vs {med:.2f}"
            elif mn > med:
                word = f"min has more power at 3%, n={n}: {mn:.2f} vs {med:.2f}"
            else:
                word = f"median has more power at 3%, n={n}: {med:.2f} vs {mn:.2f}"
            rest = "; ".join(f"n={k}: min {b:.2f} median {a:.2f}" for k, a, b in parts)
            print(f"  {mode:8} {wl:12} {word}  ({rest})")


if __name__ == "__main__":
    main()
