#!/usr/bin/env python3
"""bench_observer.py - does the harness change what it measures?  For each
workload, ROUNDS rounds; in each round, in an order that alternates, the
sample's command as `--print-commands` prints it run by hand (its result
line read from stdout) and one sample through `mallocbench run` (a fresh
invocation, -r 1, --no-limit).  Paired by round, it prints:
  bias     the ratio of medians harness/by hand, with the 95% CI of the
           median of the per-round log ratios (bootstrap, fixed seed);
  CV       each side's coefficient of variation, and their ratio harness/by
           hand, with a bootstrap 95% CI.
Goal: |bias| <= 1% and a CV ratio <= 1.1 on every workload.

    bench_observer.py MALLOCBENCH [ROUNDS] [ALLOCATOR] [EXTRA RUN OPTIONS...]
"""
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

from benchlib import harness_rows, printed_command

WORKLOADS = [
    "tensor_copy:size=16M,count=4,steps=60",
    "arena_churn:threads=2,ops=200000",
    "train_step:steps=20",
]


def by_hand(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    m = re.search(r"^result .* throughput=([0-9.e+-]+)", p.stdout, re.M)
    if p.returncode or not m:
        raise SystemExit(f"by hand: exit {p.returncode}, no result line: {p.stdout[-300:]} {p.stderr[-300:]}")
    return float(m.group(1))


def cv(xs):
    return statistics.pstdev(xs) / statistics.mean(xs)


def boot(f, pairs, n=2000, seed=1):
    rng = random.Random(seed)
    vals = sorted(f([rng.choice(pairs) for _ in pairs]) for _ in range(n))
    return vals[int(0.025 * n)], vals[int(0.975 * n) - 1]


def main():
    mb = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    alloc = sys.argv[3] if len(sys.argv) > 3 else "glibc"
    extra = sys.argv[4:]
    print(f"{rounds} rounds per workload under {alloc}, alternating order; extra run options: {extra or 'none'}")
    print(f"{'workload':40} {'by hand':>10} {'harness':>10} {'bias':>7} {'95% CI':>16} "
          f"{'CV hand':>8} {'CV run':>7} {'CV ratio':>9} {'95% CI':>13}")
    for spec in WORKLOADS:
        cmd = printed_command(mb, "-w", spec, "-a", alloc)
        pairs = []
        for i in range(rounds):
            sides = ["hand", "run"] if i % 2 == 0 else ["run", "hand"]
            got = {}
            for side in sides:
                if side == "hand":
                    got[side] = by_hand(cmd)
                else:
                    r = harness_rows(mb, "-w", spec, "-a", alloc, "-r", "1", "--no-limit", *extra)[0]
                    got[side] = float(r["throughput"]) if r["status"] == "ok" else float("nan")
            if not any(math.isnan(v) for v in got.values()):
                pairs.append((got["hand"], got["run"]))
        hand, run = [p[0] for p in pairs], [p[1] for p in pairs]
        logr = lambda ps: statistics.median(math.log(b / a) for a, b in ps)  # noqa: E731
        lo, hi = boot(logr, pairs)
        cvr = lambda ps: cv([b for _, b in ps]) / max(cv([a for a, _ in ps]), 1e-12)  # noqa: E731
        clo, chi = boot(cvr, pairs)
        bias = math.exp(logr(pairs)) - 1
        print(f"{spec:40} {statistics.median(hand):10.4g} {statistics.median(run):10.4g} {bias * 100:+6.1f}% "
              f"[{(math.exp(lo) - 1) * 100:+5.1f}%,{(math.exp(hi) - 1) * 100:+5.1f}%] "
              f"{cv(hand) * 100:7.1f}% {cv(run) * 100:6.1f}% {cvr(pairs):9.2f} [{clo:5.2f},{chi:5.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
