#!/usr/bin/env python3
"""bench_noise.py - how noisy are the samples `make compare` judges?  Runs a
matrix (default matrices/quick.ini) twice, side by side in time: once with
--min-time 0 (each configuration does the matrix's fixed amount of work) and
once as the matrix says (its min_time), and prints per cell the median
measured region, the per-sample coefficient of variation of the primary
metric (sd/mean of throughput) and the sd of the per-block log ratio to the
baseline; then the median and largest CV of each run and its wall time.

Usage: bench_noise.py MALLOCBENCH [MATRIX] [BLOCKS] [BASELINE]
BASELINE: a configuration; default the run's first (mbcsv.config_order).
Figures, not pass/fail: the target is a median CV <= 3% and none above 6%.
"""
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from mallocbench import mbcsv


def run(mb, matrix, blocks, out, extra):
    t0 = time.time()
    p = subprocess.run([mb, "run", "-q", "-m", matrix, "-r", str(blocks), "-o", out, *extra],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_noise: {' '.join(extra) or 'run'} failed: {p.stderr.strip()}")
    return time.time() - t0


def cells(path, baseline):
    """{(workload, config): {block: row}} of the ok rows."""
    out = {}
    for r in mbcsv.read(path)[1]:
        if r["status"] == "ok" and mbcsv.num(r, "throughput"):
            out.setdefault((r["workload"], r["config"]), {})[r["block"]] = r
    table = {}
    for (wl, cfg), byblock in out.items():
        t = [mbcsv.num(r, "throughput") for r in byblock.values()]
        reg = [mbcsv.num(r, "region_wall_s") or 0 for r in byblock.values()]
        cv = statistics.stdev(t) / statistics.mean(t) if len(t) > 1 else float("nan")
        base = out.get((wl, baseline), {})
        lr = [math.log(mbcsv.num(r, "throughput") / mbcsv.num(base[b], "throughput"))
              for b, r in byblock.items() if b in base and cfg != baseline]
        sd = statistics.stdev(lr) if len(lr) > 1 else float("nan")
        scale = byblock[next(iter(byblock))].get("work_scale", "1")
        table[(wl, cfg)] = (statistics.median(reg), cv, sd, scale)
    return table


def pct(x):
    return "-" if math.isnan(x) else f"{100 * x:.1f}%"


def main():
    mb = sys.argv[1]
    matrix = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "matrices", "quick.ini")
    blocks = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    baseline = sys.argv[4] if len(sys.argv) > 4 else None
    with tempfile.TemporaryDirectory() as tmp:
        before, after = os.path.join(tmp, "before.csv"), os.path.join(tmp, "after.csv")
        t_before = run(mb, matrix, blocks, before, ["--min-time", "0"])
        t_after = run(mb, matrix, blocks, after, [])
        baseline = baseline or (mbcsv.config_order([before], mbcsv.read(before)[1]) or [None])[0]
        b, a = cells(before, baseline), cells(after, baseline)
    print(f"{blocks} blocks of {os.path.basename(matrix)}; CV = sd/mean of the primary metric per cell, "
          f"paired sd = sd of the per-block log ratio to {baseline}")
    print(f"{'workload':13} {'config':10} {'region s':>9} {'CV':>7} {'paired':>7}   {'scale':>5} "
          f"{'region s':>9} {'CV':>7} {'paired':>7}")
    print(f"{'':24} {'--- --min-time 0 ---':>24}   {'--- as the matrix says ---':>32}")
    for key in sorted(set(b) | set(a)):
        rb, ra = b.get(key, (math.nan,) * 3 + ("-",)), a.get(key, (math.nan,) * 3 + ("-",))
        print(f"{key[0]:13} {key[1]:10} {rb[0]:9.3f} {pct(rb[1]):>7} {pct(rb[2]):>7}   {ra[3]:>5} "
              f"{ra[0]:9.3f} {pct(ra[1]):>7} {pct(ra[2]):>7}")
    for name, t, tab in (("--min-time 0", t_before, b), ("as the matrix says", t_after, a)):
        cvs = [v[1] for v in tab.values() if not math.isnan(v[1])]
        print(f"{name}: median CV {pct(statistics.median(cvs))}, largest {pct(max(cvs))}, "
              f"{sum(c > 0.06 for c in cvs)} cells above 6%; wall {t:.0f} s")


if __name__ == "__main__":
    main()
