#!/usr/bin/env python3
"""bench_adaptive.py - what it costs, on this machine, to tell apart two
configurations a few percent apart at 95% confidence: a fixed 10-block run
against --adaptive (stop when every median's 95% CI is within +-TARGET).

The pair differs by ~2-3% here: tensor_copy 16 MiB under jemalloc with
dirty_decay_ms=-1 and under glibc with mmap_threshold=32M and
trim_threshold=256M (neither faults; they differ in user time).  For each
policy: samples, minutes, the block-paired ratio of throughputs with its
95% CI (order statistics), and whether the CI excludes 1.

    bench_adaptive.py MALLOCBENCH [TARGET%]
"""
import math
import subprocess
import os
import sys
import time

from benchlib import harness_rows, installed, median, skip_unless

SPEC = "tensor_copy:size=16M,count=4,steps=50"
A = "jemalloc[dirty_decay_ms=-1]"
B = "glibc[mmap_threshold=32M,trim_threshold=256M]"


def paired(rows):
    by = {}
    for r in rows:
        if r["status"] == "ok":
            by.setdefault(int(r["block"]), {})[r["config"]] = float(r["throughput"])
    ratios = sorted(v[A] / v[B] for v in by.values() if A in v and B in v)
    n = len(ratios)
    if n < 6:
        return median(ratios) if ratios else float("nan"), float("nan"), float("nan"), n
    half = 1.959964 * math.sqrt(n) / 2
    lo = max(1, math.floor(n / 2 - half))
    hi = min(n, math.ceil(n / 2 + 1 + half))
    return median(ratios), ratios[lo - 1], ratios[hi - 1], n


def main():
    mb = sys.argv[1]
    target = sys.argv[2] if len(sys.argv) > 2 else "1%"
    skip_unless("jemalloc" in installed(mb), "jemalloc not installed")
    common = ["-w", SPEC, "-a", "jemalloc,glibc", "-t", "jemalloc:dirty_decay_ms=-1",
              "-t", "glibc:mmap_threshold=32M", "-t", "glibc:trim_threshold=256M", "--no-limit", "--seed", "5"]
    print(f"{SPEC}: {A} vs {B}")
    print(f"{'policy':28} {'samples':>8} {'minutes':>8} {'ratio':>7} {'95% CI':>17} {'blocks':>7}  detected")
    for name, extra in (("fixed, 10 blocks", ["-r", "10"]),
                        (f"adaptive +-{target}", ["--adaptive", target, "--budget", "15m", "-r", "1"])):
        t0 = time.time()
        rows = harness_rows(mb, *common, *extra)
        minutes = (time.time() - t0) / 60
        m, lo, hi, n = paired(rows)
        detected = not math.isnan(lo) and (lo > 1 or hi < 1)
        print(f"{name:28} {len(rows):8d} {minutes:8.2f} {m:7.4f} {lo:8.4f}..{hi:7.4f} {n:7d}  "
              f"{'yes' if detected else 'no'}")
    print("\nratio: median over blocks of throughput(A)/throughput(B), samples of one block side by side;\n"
          "detected: its 95% CI excludes 1. Warm-up samples and the limit are not counted.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
