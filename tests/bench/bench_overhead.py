#!/usr/bin/env python3
"""bench_overhead.py - what the harness adds to a workload's wall time.

Runs the same sample both ways in alternating blocks: by hand (the exact
command --print-commands shows, started directly) and through `mallocbench
run` (counters, region handshake, RSS sampling, probe, pre-flight check,
CSV).  Prints the median wall time of each and their ratio, and the
ratio of the workload's own throughput, for a fault-heavy allocator (glibc:
every counter fires ~4000 times per buffer) and a quiet one (tcmalloc).
Target: the harness adds no more than 1%.

    bench_overhead.py MALLOCBENCH [BLOCKS]
"""
import os
import statistics
import subprocess
import sys
import time

from benchlib import harness_rows, installed, median, printed_command

SPEC = "tensor_copy:size=16M,count=4,steps=30"


def clean_env():
    """The harness drops inherited allocator variables; so do we, by hand."""
    drop = ("MALLOC_", "GLIBC_TUNABLES", "LD_PRELOAD", "TCMALLOC_", "MIMALLOC_", "JE_MALLOC_CONF", "MB_")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def main():
    mb = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    n = 5
    allocs = [a for a in ("glibc", "tcmalloc") if a in installed(mb)]
    print(f"{SPEC}: {blocks} alternating blocks per allocator; a block is {n} samples by hand,\n"
          f"then `mallocbench run -r {n}` (its pre-flight check, CSV and exit included)")
    print(f"{'allocator':10} {'by hand s':>10} {'harness s':>10} {'run ratio':>10} {'sample ratio':>13} "
          f"{'throughput ratio':>17}")
    worst = noise = 0.0
    for alloc in allocs:
        cmd = printed_command(mb, "-w", SPEC, "-a", alloc)
        env = clean_env()
        hand_s, harn_s, hand_one, harn_one, hand_tp, harn_tp = [], [], [], [], [], []
        for _ in range(blocks):
            t0 = time.perf_counter()
            for _ in range(n):
                t1 = time.perf_counter()
                out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
                hand_one.append(time.perf_counter() - t1)
                hand_tp.append(float(out.split("throughput=")[1].split()[0]))
            hand_s.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            # like for like: no discarded warm-up sample, no limit samples
            rows = harness_rows(mb, "-w", SPEC, "-a", alloc, "-r", str(n), "--warmup-runs", "0", "--no-limit")
            harn_s.append(time.perf_counter() - t0)
            harn_one += [float(r["total_wall_s"]) for r in rows]
            harn_tp += [float(r["throughput"]) for r in rows]
        ratio = median(harn_s) / median(hand_s)
        one = median(harn_one) / median(hand_one)
        tp_ratio = median(hand_tp) / median(harn_tp)
        worst = max(worst, one)
        q = statistics.quantiles(hand_one, n=4)
        noise = max(noise, (q[2] - q[0]) / median(hand_one))
        print(f"{alloc:10} {median(hand_s):10.3f} {median(harn_s):10.3f} {ratio:10.4f} {one:13.4f} "
              f"{tp_ratio:17.4f}")
    print(f"\nrun ratio: whole `mallocbench run -r {n}` / {n} runs by hand (fixed costs: pre-flight\n"
          f"check, and the kernel unregistering six syscall tracepoints at exit, ~0.25 s here);\n"
          f"sample ratio: one sample's wall time in the harness (exec to exit) / by hand;\n"
          f"throughput ratio: by hand / harness, the workload's own timing of its measured region.\n"
          f"run-to-run noise by hand (interquartile range / median): {noise * 100:.1f}%\n"
          f"target <= 1.01 per sample: {'met' if worst <= 1.01 else 'not met'} (worst {worst:.4f}); "
          f"{'below' if worst - 1 < noise else 'above'} the noise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
