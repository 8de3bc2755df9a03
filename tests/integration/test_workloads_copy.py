#!/usr/bin/env python3
"""test_workloads_copy.py - tensor_copy end to end: its checksum and the
bounds on its region counters.

Usage: test_workloads_copy.py MALLOCBENCH CASE (checksum | region_bounds).
checksum: small specs give the checksums they have always given (every
buffer of every step counts, under every installed allocator), and another
seed another checksum.  region_bounds: the measured region cannot fault
more pages than it touches, nor make more madvise/mmap/munmap/brk calls than
its allocations and frees allow.  Exit 77 = skip.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: mbtest, benchlib, make_history
import mbtest
from mbtest import SKIP, check, installed, main, run

PAGE = 4096

# spec -> checksum, worked out once (steps, warmup and every buffer count);
# the checksum depends on the data only, never on the allocator
CHECKSUMS = {
    "tensor_copy:size=64K,count=3,steps=2,warmup=1,seed=1": "1d366d6e8816cfc8",
    "tensor_copy:size=64K,count=3,steps=2,warmup=1,seed=2": "e99a2f1ece5b662a",
    "tensor_copy:size=64K..256K,count=3,steps=2,warmup=1,seed=5": "dc34302b37ccf932",
}


def allocators(mb):
    allocs = installed(mb)
    if not allocs:
        print("SKIP: no allocator installed", file=sys.stderr)
        sys.exit(SKIP)
    return allocs


def run_rows(mb, out, specs, allocs):
    args = []
    for s in specs:
        args += ["-w", s]
    run(mb, "run", "-q", *args, "-a", ",".join(allocs), "-r", "1", "-o", out)
    return mbtest.rows(out)


def case_checksum(mb, tmp):
    allocs = allocators(mb)
    rs = run_rows(mb, os.path.join(tmp, "sum.csv"), list(CHECKSUMS), allocs)
    check(len(rs) == len(CHECKSUMS) * len(allocs), f"{len(rs)} rows for {len(CHECKSUMS)} specs x {len(allocs)}")
    got = {}
    for r in rs:
        what = f"tensor_copy {r['workload_params']} under {r['config']}"
        check(r["status"] == "ok", f"{what}: {r['status']} {r['message']}")
        if r["status"] != "ok":
            continue
        spec = next(s for s in CHECKSUMS if all(kv in r["workload_params"].split(",")
                                                 for kv in s.split(":", 1)[1].split(",")))
        got.setdefault(spec, set()).add(r["checksum"])
        check(r["checksum"] == CHECKSUMS[spec], f"{what}: checksum {r['checksum']}, expected {CHECKSUMS[spec]}")
    seeds = [got.get(s) for s in list(CHECKSUMS)[:2]]
    check(None not in seeds and not (seeds[0] & seeds[1]), f"seed 1 and seed 2 give other checksums: {seeds}")


# Each buffer's allocation and free may cost an allocator a mapping call or
# two (mmap and munmap, brk up and down, a purge); a few more for its own
# bookkeeping.  Minor faults: one per page written at most, plus a margin for
# the allocator's metadata and the stack.
CALLS = ("madvise", "mmap", "munmap", "brk")


def case_region_bounds(mb, tmp):
    allocs = allocators(mb)
    specs = {"tensor_copy:size=4M,count=2,steps=2,warmup=1": (2, 2),
             "tensor_copy:size=64K..2M,count=4,steps=3,warmup=1,seed=3": (4, 3)}
    rs = run_rows(mb, os.path.join(tmp, "bounds.csv"), list(specs), allocs)
    check(len(rs) == len(specs) * len(allocs), f"{len(rs)} rows for {len(specs)} specs x {len(allocs)}")
    for r in rs:
        what = f"tensor_copy {r['workload_params']} under {r['config']}"
        check(r["status"] == "ok", f"{what}: {r['status']} {r['message']}")
        if r["status"] != "ok":
            continue
        count, steps = next(v for s, v in specs.items() if s.split(":", 1)[1].split(",")[0] in r["workload_params"])
        check(r["region_ops"] == str(count * steps), f"{what}: region_ops {r['region_ops']}")
        pages = int(r["region_bytes"]) // PAGE
        if r["region_minor_faults"] != "":
            faults = int(r["region_minor_faults"])
            bound = pages + 64 + pages // 16
            check(faults <= bound, f"{what}: {faults} region minor faults for {pages} pages written "
                  f"(at most {bound}; whole process {r['total_minor_faults']})")
            check(faults <= int(r["total_minor_faults"]), f"{what}: region faults above total")
        for c in CALLS:
            v = r[f"region_{c}_calls"]
            if v == "":
                continue                        # tracepoints unavailable: counter_notes says why
            bound = 2 * count * steps + 8
            check(int(v) <= bound, f"{what}: {v} {c} calls in the region for {count * steps} buffers "
                  f"(at most {bound}; whole process {r[f'total_{c}_calls']})")
            check(int(v) <= int(r[f"total_{c}_calls"]), f"{what}: region {c} above total")


if __name__ == "__main__":
    sys.exit(main({"checksum": case_checksum, "region_bounds": case_region_bounds}))
