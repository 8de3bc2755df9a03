#!/usr/bin/env python3
"""test_workloads_churn.py - arena_churn end to end through the harness.

Usage: test_workloads_churn.py MALLOCBENCH.  A short run under every
installed allocator, and with the stub allocator, must end ok with one
checksum (it depends on the seed and parameters, never on the allocator or
on which thread freed what), count its ops, report latency percentiles and
its own figures; a different seed gives a different checksum; one thread
and three threads (a ring of queues) work too; remote=0/50/100 hand over
none, half and all of the frees.  Exit 77 = skip.
"""
import os
import sys

import mbtest
from mbtest import SKIP, check, installed, rows, run


def run_rows(mb, tmp, name, *args):
    """The rows of one run.  No warm-up sample and no limit measurement: what is checked is each
    sample's own figures, which neither touches (they took half this test's time)."""
    out = os.path.join(tmp, name + ".csv")
    p = run(mb, "run", "-q", "--warmup-runs", "0", "--no-limit", "-o", out, *args, expect_rc=None)
    check(p.returncode == 0, f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    return rows(out)


def of(rows, spec):
    """The rows of one -w spec among a run's: those whose parameters (all of them, defaults
    included) hold every one the spec names."""
    want = set(spec.partition(":")[2].split(","))
    return [r for r in rows if want <= set(r["workload_params"].split(","))]


def metrics(row):
    return {k: int(v) for k, v in mbtest.metrics(row).items()}


def check_row(r, threads, ops):
    what = f"{r['allocator']} {r['workload_params']}"
    check(r["status"] == "ok", f"{what}: status {r['status']} {r['message']}")
    if r["status"] != "ok":
        return
    check(r["throughput_unit"] == "ops/s" and float(r["throughput"]) > 0, f"{what}: throughput")
    check(int(r["region_ops"]) == threads * ops, f"{what}: region_ops {r['region_ops']}")
    check(int(r["region_bytes"]) >= 16 * threads * ops, f"{what}: region_bytes {r['region_bytes']}")
    check(r["latency_what"] == "op", f"{what}: latency_what {r['latency_what']!r}")
    p = [float(r[k]) for k in ("latency_p50_us", "latency_p99_us", "latency_p999_us", "latency_max_us")]
    check(0 < p[0] <= p[1] <= p[2] <= p[3], f"{what}: latency percentiles {p}")
    check(int(r["latency_count"]) == threads * ((ops + 63) // 64), f"{what}: latency_count {r['latency_count']}")
    m = metrics(r)
    check(m.get("small", 0) + m.get("medium", 0) + m.get("large", 0) == threads * ops,
          f"{what}: small+medium+large {m}")
    check(all(k in m for k in ("remote_frees", "queue_full", "local_frees")), f"{what}: metrics {m}")
    check(m.get("remote_frees", 0) > 0, f"{what}: no remote frees: {m}")


def case_churn(mb, tmp):
    allocs = installed(mb)
    if not allocs:
        print("SKIP: no allocator installed", file=sys.stderr)
        sys.exit(SKIP)
    # 5000 ops: every count below is exact or a share of thousands of frees at any size, and
    # scudo's and tbbmalloc's rings of three threads on two cores took seconds at 20000
    ops = 5000
    base = f"arena_churn:ops={ops},warmup=2000,live=200,seed=7"
    rows = run_rows(mb, tmp, "all", "-w", base, "-w", base + ",alloc=stub", "-a", ",".join(allocs),
                    "-r", "1")
    check(len(rows) == 2 * len(allocs), f"{len(rows)} rows for {len(allocs)} allocators x 2")
    for r in rows:
        check_row(r, 2, ops)
    sums = {r["checksum"] for r in rows if r["status"] == "ok"}
    check(len(sums) == 1, f"one checksum across allocators and the stub: {sums}")

    # thread counts 1 and 3 (queues in a ring) work: one run, its rows told apart by their
    # parameters
    specs = {threads: f"{base},threads={threads}" for threads in (1, 3)}
    both = run_rows(mb, tmp, "threads", *[a for sp in specs.values() for a in ("-w", sp)],
                    "-a", ",".join(allocs), "-r", "1")
    check(len(both) == 2 * len(allocs), f"threads=1,3: {len(both)} rows for {len(allocs)} allocators x 2")
    for threads, sp in specs.items():
        rs = of(both, sp)
        check(len(rs) == len(allocs), f"threads={threads}: {len(rs)} rows for {len(allocs)} allocators")
        for r in rs:
            check_row(r, threads, ops)
        check(len({r["checksum"] for r in rs}) == 1, f"threads={threads}: one checksum")

    # glibc alone: another seed, large objects and remote=0/50/100, in one run
    seed = base.replace("seed=7", "seed=8")
    # 200 large objects fault in the region as surely as 2000 did (those took 3 s)
    large = "arena_churn:ops=200,warmup=0,small=0,medium=0,large=1,live=4,remote=0,touch=4K"
    remotes = {remote: f"{base},remote={remote}" for remote in (0, 50, 100)}
    solo = run_rows(mb, tmp, "glibc", *[a for sp in [seed, large, *remotes.values()] for a in ("-w", sp)],
                    "-a", "glibc", "-r", "1")
    check(len(solo) == 5, f"glibc: {len(solo)} rows for 5 workloads")

    # the seed matters
    other = of(solo, seed)
    check(len(other) == 1 and other[0]["checksum"] not in sums, "another seed, another checksum")

    # large objects, every page written: the faults are counted in the region
    rs = of(solo, large)
    check(len(rs) == 1 and rs[0]["status"] == "ok", "large-only run")
    if rs and rs[0]["status"] == "ok" and rs[0]["region_minor_faults"] != "":
        check(int(rs[0]["region_minor_faults"]) > 0, f"faults in the region: {rs[0]['region_minor_faults']}")

    # remote=R: R% of the frees are handed to the next thread (those that find
    # its queue full are freed locally and counted in queue_full as well)
    shares = {}
    for remote in (0, 50, 100):
        rs = of(solo, remotes[remote])
        check(len(rs) == 1 and rs[0]["status"] == "ok", f"remote={remote}: one ok row")
        if len(rs) != 1 or rs[0]["status"] != "ok":
            continue
        m = metrics(rs[0])
        frees = m.get("remote_frees", 0) + m.get("local_frees", 0)
        handed = m.get("remote_frees", 0) + m.get("queue_full", 0)
        shares[remote] = handed / frees if frees else float("nan")
        check(frees >= 2 * ops * 9 // 10, f"remote={remote}: {frees} frees for {2 * ops} ops")
        if remote == 0:
            check(m.get("remote_frees") == 0 and m.get("queue_full") == 0,
                  f"remote=0: nothing handed over: {m}")
        elif remote == 100:
            check(m.get("local_frees") == m.get("queue_full"), f"remote=100: every local free is a full queue: {m}")
        else:
            check(0.45 <= shares[remote] <= 0.55, f"remote=50: {shares[remote]:.3f} of the frees handed over: {m}")
    print(f"share handed over by remote=: {shares}", file=sys.stderr)

    # bad input is refused before any run
    p = run(mb, "run", "-q", "-w", "arena_churn:remote=101", "-a", "glibc", "-o", os.path.join(tmp, "bad.csv"),
            expect_rc=None)
    check(p.returncode == 2 and "remote" in p.stderr, f"remote=101 refused: {p.returncode} {p.stderr}")


if __name__ == "__main__":
    sys.exit(mbtest.main({"churn": case_churn}))
