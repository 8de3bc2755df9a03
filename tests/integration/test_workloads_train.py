#!/usr/bin/env python3
"""test_workloads_train.py - train_step and idle_release end to end.

Usage: test_workloads_train.py MALLOCBENCH CASE (train_step | idle_release).
Each case runs the workload briefly under every installed allocator through
the harness and checks the rows: status ok, one checksum across allocators,
the workload's own figures consistent with its parameters, and the kernel
work each workload exists to show.  Exit 77 = skip.
"""
import math
import os
import sys

import mbtest
from mbtest import check, installed, main, metrics, run

# no warm-up sample and no limit measurement: what is checked is each sample's own figures,
# which neither touches (they were half these runs)
ONLY_SAMPLES = ("--warmup-runs", "0", "--no-limit")
MIB = 1 << 20
COLUMNS = ("latency_what", "latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us",
           "latency_count", "workload_metrics")


def schema_version():
    """The version results/SCHEMA.md documents: the one this tree writes."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(here, "..", "results", "SCHEMA.md")) as f:
        return f.readline().rsplit(" ", 1)[-1].strip()


def rows(path):
    rs = mbtest.rows(path)
    want = schema_version()
    for r in rs:
        check(r["schema_version"] == want, f"schema_version {r['schema_version']}, expected {want}")
        missing = [c for c in COLUMNS if c not in r]
        check(not missing, f"columns missing: {missing}")
    return rs


def one_checksum(rs, what):
    sums = {r["checksum"] for r in rs}
    check(len(sums) == 1 and "" not in sums, f"{what}: one checksum across allocators: {sums}")


def case_train_step(mb, tmp):
    """Steps/s and step latency per allocator; the checksum does not depend on
    the allocator nor on how the pool splits the work; jemalloc purges every
    freed buffer at or above its 8 MiB oversize threshold."""
    allocs = installed(mb)
    layers, steps = [1 * MIB, 2 * MIB, 4 * MIB, 2 * MIB, 1 * MIB], 4
    spec = "train_step:layers=1M/2M/4M/2M/1M,steps=4,warmup=1,threads=2"
    out = os.path.join(tmp, "ts.csv")
    run(mb, "run", "-q", *ONLY_SAMPLES, "-w", spec, "-w", spec.replace("threads=2", "threads=3"),
        "-a", ",".join(allocs), "-r", "1", "-o", out)
    rs = rows(out)
    check(len(rs) == 2 * len(allocs), f"{len(rs)} rows for 2 specs x {len(allocs)} allocators")
    for r in rs:
        what = f"train_step under {r['config']} ({r['workload_params']})"
        check(r["status"] == "ok", f"{what}: {r['status']} {r['message']}")
        if r["status"] != "ok":
            continue
        check(r["throughput_unit"] == "steps/s" and float(r["throughput"]) > 0, f"{what}: steps/s {r['throughput']}")
        check(r["latency_what"] == "step", f"{what}: latency_what {r['latency_what']!r}")
        check(r["latency_count"] == str(steps), f"{what}: latency_count {r['latency_count']}")
        lat = [float(r[c]) for c in ("latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us")]
        check(all(math.isfinite(v) and v > 0 for v in lat) and lat == sorted(lat), f"{what}: latencies {lat}")
        # step time excludes nothing here (idle_ms=0): steps/s ~ 1/mean step
        check(float(r["throughput"]) * lat[-1] * 1e-6 >= 0.99, f"{what}: steps/s vs max step")
        check(int(r["region_ops"]) == 2 * len(layers) * steps, f"{what}: ops {r['region_ops']}")
        check(int(r["region_bytes"]) == 2 * sum(layers) * steps, f"{what}: bytes {r['region_bytes']}")
        m = metrics(r)
        check(m.get("layers") == str(len(layers)) and m.get("live_peak_bytes") == str(sum(layers)),
              f"{what}: metrics {m}")
        check(r["region_task_clock_s"] != "" and float(r["region_task_clock_s"]) > 0, f"{what}: task clock")
    one_checksum(rs, "train_step, threads=2 and 3")

    if "jemalloc" in allocs:
        out = os.path.join(tmp, "je.csv")
        run(mb, "run", "-q", *ONLY_SAMPLES, "-w", "train_step:layers=8M/8M,steps=2,warmup=1,threads=2", "-a", "jemalloc",
            "-r", "1", "-o", out)
        for r in rows(out):
            # 2 activations + 2 gradients freed per step, each purged at once
            check(r["status"] == "ok" and int(r["region_madvise_calls"]) >= 4 * 2,
                  f"jemalloc purges 8 MiB buffers on free: {r['status']} madvise {r['region_madvise_calls']}")
            check(int(r["region_minor_faults"]) >= 4 * 2 * 2048 * 9 // 10,
                  f"jemalloc re-faults them: {r['region_minor_faults']}")


def case_idle_release(mb, tmp):
    """The idle is the region: no allocator call there, so no purging call
    from an allocator without background threads; glibc has handed its
    mmapped chunks back at free; the fraction is consistent with the RSS."""
    allocs = installed(mb)
    spec = "idle_release:peak=32M,size=256K..1M,keep=10,idle_ms=300,sample_ms=5,seed=3"
    out = os.path.join(tmp, "ir.csv")
    run(mb, "run", "-q", *ONLY_SAMPLES, "-w", spec, "-a", ",".join(allocs), "-r", "1", "-o", out)
    rs = rows(out)
    check(len(rs) == len(allocs), f"{len(rs)} rows for {len(allocs)} allocators")
    for r in rs:
        what = f"idle_release under {r['config']}"
        check(r["status"] == "ok", f"{what}: {r['status']} {r['message']}")
        if r["status"] != "ok":
            continue
        m = metrics(r)
        keys = ("freed_bytes", "rss_peak_kib", "rss_after_free_kib", "rss_end_kib", "t_half_ms", "t_half_idle_ms",
                "returned_at_free", "returned_in_idle")
        check(all(k in m for k in keys), f"{what}: metrics {m}")
        if not all(k in m for k in keys):
            continue
        frac = float(r["throughput"])
        check(r["throughput_unit"] == "fraction" and -1e-9 <= frac <= 1.1, f"{what}: fraction {frac}")
        freed = int(m["freed_bytes"])
        check(0.85 * 32 * MIB <= freed <= 0.9 * 32 * MIB + MIB, f"{what}: freed {freed}")
        peak, end = int(m["rss_peak_kib"]), int(m["rss_end_kib"])
        check(peak >= 32 * 1024, f"{what}: RSS peak {peak} KiB holds the 32 MiB")
        check(abs(frac - max(0, peak - end) * 1024 / freed) < 0.01, f"{what}: fraction {frac} from RSS {peak}->{end}")
        check(0.29 <= float(r["region_wall_s"]) < 2.0, f"{what}: region is the idle: {r['region_wall_s']}")
        check(r["region_ops"] == "0", f"{what}: no allocation in the idle: {r['region_ops']}")
        # nothing calls the allocator in the idle and none of these runs a
        # background thread by default: no purge call can land in the region
        calls = sum(int(r[c] or 0) for c in ("region_madvise_calls", "region_munmap_calls", "region_brk_calls"))
        check(calls == 0, f"{what}: {calls} madvise/munmap/brk calls in an idle without allocation")
        if r["allocator"] == "glibc":
            # chunks above the mmap threshold are munmapped at free
            check(float(m["returned_at_free"]) > 0.8 and m["t_half_ms"] == "0.0",
                  f"glibc returns at free: {m['returned_at_free']} t_half {m['t_half_ms']}")
    one_checksum(rs, "idle_release")

    # A trickle of allocations in the idle is counted as the region's ops.
    out = os.path.join(tmp, "tick.csv")
    run(mb, "run", "-q", *ONLY_SAMPLES, "-w", spec + ",tick_ms=20", "-a", "glibc", "-r", "1", "-o", out)
    for r in rows(out):
        check(r["status"] == "ok" and 10 <= int(r["region_ops"]) <= 16, f"tick_ms=20 over 300 ms: ops {r['region_ops']}")


if __name__ == "__main__":
    sys.exit(main({"train_step": case_train_step, "idle_release": case_idle_release}))
