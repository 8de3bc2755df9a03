#!/usr/bin/env python3
"""bench_limit_every.py - what measuring the limit less often saves, and that
fraction_of_limit does not move.

The same run (tensor_copy under glibc, jemalloc and tcmalloc, BLOCKS blocks)
with --limit-every 1 (the limit measured in every block) and --limit-every 5
(the default: blocks 0, 5, ...), alternated PAIRS times.  Prints each run's
wall time, and per configuration the median fraction_of_limit under each, its
ratio, and the spread of the per-block fractions.

    bench_limit_every.py MALLOCBENCH [BLOCKS] [PAIRS]
"""
import os
import statistics
import sys
import time

from benchlib import harness_rows, installed, median

SPEC = "tensor_copy:size=16M,count=4,steps=60"


def main():
    mb = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    allocs = ",".join(a for a in ("glibc", "jemalloc", "tcmalloc") if a in installed(mb))
    frac = {1: {}, 5: {}}
    wall = {1: [], 5: []}
    for _ in range(pairs):
        for every in (1, 5):
            t0 = time.monotonic()
            rows = harness_rows(mb, "-w", SPEC, "-a", allocs, "-r", str(blocks), "--limit-every", str(every))
            wall[every].append(time.monotonic() - t0)
            for r in rows:
                if r["status"] == "ok" and r["fraction_of_limit"]:
                    frac[every].setdefault(r["config"], []).append(float(r["fraction_of_limit"]))
    print(f"{SPEC}, {allocs}, {blocks} blocks, {pairs} alternating pairs of runs")
    print(f"wall time per run: every block {median(wall[1]):.1f} s, every 5th {median(wall[5]):.1f} s "
          f"({median(wall[5]) / median(wall[1]):.2f}x)")
    print(f"{'config':10} {'fraction (every 1)':>19} {'(every 5)':>10} {'ratio':>6} {'sd 1':>6} {'sd 5':>6}")
    for cfg in frac[1]:
        a, b = frac[1][cfg], frac[5].get(cfg, [])
        if not b:
            continue
        print(f"{cfg:10} {median(a):19.3f} {median(b):10.3f} {median(b) / median(a):6.3f} "
              f"{statistics.pstdev(a):6.3f} {statistics.pstdev(b):6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
