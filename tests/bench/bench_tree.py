#!/usr/bin/env python3
"""bench_tree.py - what reading the process tree costs the program.

Each /proc/PID/smaps_rollup read walks the process's mappings under its mmap
lock, so a program that maps and unmaps all the time can wait on it.  The
same exec sample (a python process that maps, touches and unmaps 1 MiB ROUNDS
times: the mmap lock taken twice per round) is run with --tree-interval 0
(not read), 50ms (the default) and 10ms (five times as often), interleaved
PAIRS times.  Prints the median wall time under each and its ratio to 0.

Since schema 9 a built-in workload is read too (alone, for its huge-page share): the
second part runs tensor_copy under glibc at 16 MiB (a munmap per free: the mmap lock taken
for writing all the time) and arena_churn (two threads) under the three intervals, one
sample per run (the interval is a run's), the runs interleaved, and prints each one's median
throughput against not reading.

    bench_tree.py MALLOCBENCH [PAIRS] [ROUNDS]
"""
import os
import sys

from benchlib import median  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import csv  # noqa: E402

INTERVALS = ("0", "50ms", "10ms")


def main():
    mb = sys.argv[1]
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    prog = (f"import mmap\nfor i in range({rounds}):\n    m = mmap.mmap(-1, 1 << 20)\n"
            "    m[0:1] = b'x'; m[4096:4097] = b'x'\n    m.close()\n")
    wall = {i: [] for i in INTERVALS}
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "maps.py")  # a file: an argument is one line of text
        with open(script, "w") as f:
            f.write(prog)
        for k in range(pairs):
            for i in (INTERVALS if k % 2 == 0 else INTERVALS[::-1]):
                out = os.path.join(tmp, "t.csv")
                subprocess.run([mb, "exec", "-q", "-a", "glibc", "-r", "1", "--tree-interval", i, "--force",
                                "-o", out, "--", "python3", script], check=True, capture_output=True)
                with open(out, newline="") as f:
                    r = next(csv.DictReader(f))
                wall[i].append(float(r["total_wall_s"]))
    base = median(wall["0"])
    print(f"python mapping and unmapping 1 MiB {rounds} times, {pairs} interleaved samples per interval")
    for i in INTERVALS:
        m = median(wall[i])
        print(f"--tree-interval {i:>4}: median wall {m:.3f} s, {m / base:.3f}x of not reading "
              f"(range {min(wall[i]):.3f}..{max(wall[i]):.3f})")

    workloads(mb, pairs)


WORKLOADS = ("tensor_copy:size=16M,count=2,steps=6", "arena_churn:threads=2,ops=100000")


def workloads(mb, pairs):
    """Each built-in workload of WORKLOADS, one sample per run, the intervals interleaved."""
    tput = {(w, i): [] for w in WORKLOADS for i in INTERVALS}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "w.csv")
        for k in range(pairs):
            for w in WORKLOADS:
                for i in (INTERVALS if k % 2 == 0 else INTERVALS[::-1]):
                    subprocess.run([mb, "run", "-q", "-w", w, "-a", "glibc", "-r", "1", "--warmup-runs", "0",
                                    "--no-limit", "--tree-interval", i, "--force", "-o", out],
                                   check=True, capture_output=True)
                    with open(out, newline="") as f:
                        tput[(w, i)].append(float(next(csv.DictReader(f))["throughput"]))
    print(f"built-in workloads under glibc, {pairs} interleaved samples per interval (median throughput)")
    for w in WORKLOADS:
        base = median(tput[(w, "0")])
        for i in INTERVALS:
            m = median(tput[(w, i)])
            print(f"{w} --tree-interval {i:>4}: {m:.4g}, {m / base:.3f}x of not reading")


if __name__ == "__main__":
    main()
