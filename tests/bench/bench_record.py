#!/usr/bin/env python3
"""bench_record.py - what `mallocbench record` costs an allocation-heavy program.

Runs tests/programs/alloc_heavy.c (N malloc/free pairs of mixed sizes per thread, 1
and 2 threads) plain and under `mallocbench record`, interleaved, RUNS times
each, and prints medians side by side: the program's own loop time, the
recorder's overhead in ns per event per thread (loop time difference over
the events one thread made), the process's wall time (fork to exit, as
record reports it) and its ratio, and the whole record command (trace read
back included).  Also the cost of the two time sources the recorder could
use.  Targets (issue 12): <= 50 ns per event per thread, <= 2x wall.

    bench_record.py MALLOCBENCH ALLOC_HEAVY [RUNS] [N]
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def clean_env():
    drop = ("MALLOC_", "GLIBC_TUNABLES", "LD_PRELOAD", "MB_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def loop_ns(out):
    return int(re.search(r"loop_ns=(\d+)", out).group(1))


def main():
    mb, prog = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 1000000
    env = clean_env()
    clk = subprocess.run([prog, "clock"], capture_output=True, text=True, check=True).stdout.split()
    print("time sources here: " + ", ".join(clk) + " (the recorder stamps with rdtsc where the TSC "
          "is invariant)")
    print(f"alloc_heavy {n} pairs per thread, {runs} interleaved runs each way, medians")
    print(f"{'threads':>7} {'loop plain ms':>13} {'loop rec ms':>11} {'ns/event/thread':>15} "
          f"{'loop ratio':>10} {'wall plain s':>12} {'wall rec s':>10} {'wall ratio':>10} "
          f"{'record cmd s':>12} {'trace MB':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.mbt")
        for threads in (1, 2):
            argv = [prog, str(n), str(threads)]
            lp, lr, wp, wr, cmd = [], [], [], [], []
            size = 0
            for _ in range(runs):
                t0 = time.perf_counter()
                p = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
                wp.append(time.perf_counter() - t0)
                lp.append(loop_ns(p.stdout))
                t0 = time.perf_counter()
                p = subprocess.run([mb, "record", "-o", trace, "--force", "--", *argv], env=env,
                                   capture_output=True, text=True, check=True)
                cmd.append(time.perf_counter() - t0)
                lr.append(loop_ns(p.stdout))
                wr.append(float(re.search(r"\(wall ([0-9.]+) s\)", p.stderr).group(1)))
                size = os.path.getsize(trace)
            ml, mr = statistics.median(lp), statistics.median(lr)
            per_event = (mr - ml) / (2 * n)
            print(f"{threads:>7} {ml / 1e6:>13.1f} {mr / 1e6:>11.1f} {per_event:>15.1f} "
                  f"{mr / ml:>10.2f} {statistics.median(wp):>12.3f} {statistics.median(wr):>10.3f} "
                  f"{statistics.median(wr) / statistics.median(wp):>10.2f} "
                  f"{statistics.median(cmd):>12.3f} {size / 1e6:>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
