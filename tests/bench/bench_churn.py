#!/usr/bin/env python3
"""bench_churn.py - how much of arena_churn's time is the workload's own.

Runs arena_churn through the harness with alloc=stub (a per-thread
free-list bump allocator in place of malloc/free: what is left is the
workload's bookkeeping -- random numbers, the ring of live objects, the
hand-over queues, the writes into each object, the timing) and with
alloc=malloc, under every installed allocator, alternating (the harness
runs every configuration once per block), and prints median time per op
and the bookkeeping share:

    share = stub time per op / fastest allocator's time per op

Target: < 10%: the figures are the allocator's, not the workload's.  Time
per op is region CPU time (task clock, all threads, kernel included) per
op, and region wall time x threads per op; both are printed, and "- stub",
the allocator's own CPU time per op (its time less the stub's).  Four
parameter sets, each taking a cost away: the defaults (every page of each
object written), touch=0 (only a 16-byte header), touch=0,remote=0 (no
hand-over between threads) and live=1 on top (the object freed is the one
just made, always in cache: the loop's CPU work alone against each
allocator's fast path).

    bench_churn.py MALLOCBENCH [REPETITIONS] [OPS]

Prints figures; exits 0 unless a run fails.
"""
import subprocess
import os
import sys

from benchlib import harness_rows, installed, median

VARIANTS = [
    ("defaults (touch=4K, remote=50)", ""),
    ("touch=0", "touch=0"),
    ("touch=0,remote=0", "touch=0,remote=0"),
    ("touch=0,remote=0,live=1", "touch=0,remote=0,live=1"),
]


def spec(extra, alloc, ops):
    params = [f"ops={ops}", f"alloc={alloc}"] + ([extra] if extra else [])
    return "arena_churn:" + ",".join(params)


def per_op(rows, key, threads_key=False):
    """Median over rows of seconds per op, in ns."""
    vals = []
    for r in rows:
        ops = int(r["region_ops"])
        s = float(r[key])
        if threads_key:
            s *= int(r["workload_params"].split("threads=")[1].split(",")[0])
        vals.append(s / ops * 1e9)
    return median(vals)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    mb = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    ops = int(sys.argv[3]) if len(sys.argv) > 3 else 2000000
    allocs = installed(mb)
    failed = False
    summary = []
    for title, extra in VARIANTS:
        stub_spec, malloc_spec = spec(extra, "stub", ops), spec(extra, "malloc", ops)
        try:
            rows = harness_rows(mb, "-w", stub_spec, "-w", malloc_spec, "-a", ",".join(allocs),
                                "-r", str(reps))
        except (subprocess.CalledProcessError, OSError) as e:
            print(f"FAIL: {title}: {e}", file=sys.stderr)
            failed = True
            continue
        bad = [r for r in rows if r["status"] != "ok"]
        for r in bad:
            print(f"FAIL: {r['workload_params']} {r['allocator']}: {r['status']} {r['message']}",
                  file=sys.stderr)
        failed |= bool(bad)
        ok = [r for r in rows if r["status"] == "ok"]
        sums = {r["checksum"] for r in ok}
        if len(sums) != 1:
            print(f"FAIL: {title}: checksums differ: {sorted(sums)}", file=sys.stderr)
            failed = True
        print(f"\narena_churn {title}, ops={ops}/thread, {reps} alternating samples each "
              f"(median)")
        print(f"{'config':18} {'n':>3} {'cpu ns/op':>10} {'- stub':>7} {'wall ns/op':>11} "
              f"{'Mops/s':>8} {'faults/op':>10} {'sys%':>5} {'p50 us':>7} {'p99 us':>7} "
              f"{'p99.9 us':>8} {'queue_full%':>11}")
        table = {}
        stub_cpu = None
        for kind in ("stub", "malloc"):
            if kind == "malloc" and table:
                stub_cpu = median([v[0] for v in table.values()])
            for alloc in allocs:
                rs = [r for r in ok if r["allocator"] == alloc and f"alloc={kind}" in r["workload_params"]]
                if not rs:
                    continue
                name = f"stub ({alloc})" if kind == "stub" else alloc
                cpu = per_op(rs, "region_task_clock_s")
                wall = per_op(rs, "region_wall_s", threads_key=True)
                table[(kind, alloc)] = (cpu, wall)
                faults = median([int(r["region_minor_faults"]) / int(r["region_ops"]) for r in rs])
                sysp = median([float(r["region_sys_s"]) / max(float(r["region_task_clock_s"]), 1e-9)
                               for r in rs]) * 100
                tp = median([float(r["throughput"]) for r in rs]) / 1e6
                lat = [median([float(r[k]) for r in rs if r[k] != ""] or [float("nan")])
                       for k in ("latency_p50_us", "latency_p99_us", "latency_p999_us")]
                metrics = [dict(kv.split("=", 1) for kv in r["workload_metrics"].split(";") if kv)
                           for r in rs]
                qf = median([int(m.get("queue_full", 0)) /
                             max(int(m.get("queue_full", 0)) + int(m.get("remote_frees", 0)), 1)
                             for m in metrics]) * 100
                own = f"{cpu - stub_cpu:7.1f}" if stub_cpu is not None else f"{'':7}"
                print(f"{name:18} {len(rs):3} {cpu:10.1f} {own} {wall:11.1f} {tp:8.2f} "
                      f"{faults:10.3f} {sysp:5.0f} {lat[0]:7.3f} {lat[1]:7.3f} {lat[2]:8.3f} "
                      f"{qf:11.1f}")
        stubs = [v for (k, _), v in table.items() if k == "stub"]
        mallocs = {a: v for (k, a), v in table.items() if k == "malloc"}
        if not stubs or not mallocs:
            continue
        stub_cpu = median([v[0] for v in stubs])
        stub_wall = median([v[1] for v in stubs])
        fast_cpu = min(mallocs.items(), key=lambda kv: kv[1][0])
        fast_wall = min(mallocs.items(), key=lambda kv: kv[1][1])
        share_cpu = stub_cpu / fast_cpu[1][0]
        share_wall = stub_wall / fast_wall[1][1]
        print(f"bookkeeping share: cpu {share_cpu * 100:.0f}% of {fast_cpu[0]}'s "
              f"{fast_cpu[1][0]:.1f} ns/op; wall {share_wall * 100:.0f}% of {fast_wall[0]}'s "
              f"{fast_wall[1][1]:.1f} ns/op (stub: median over its runs under every allocator)")
        summary.append((title, share_cpu, share_wall))
    print("\nbookkeeping share (stub time per op / fastest allocator's), target < 10%:")
    for title, c, w in summary:
        print(f"  {title:32} cpu {c * 100:5.1f}%  wall {w * 100:5.1f}%  "
              f"{'met' if max(c, w) < 0.10 else 'not met'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
