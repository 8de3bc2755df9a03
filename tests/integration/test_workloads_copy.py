#!/usr/bin/env python3
"""test_workloads_copy.py - tensor_copy end to end: its checksum and the
bounds on its region counters.

Usage: test_workloads_copy.py MALLOCBENCH CASE (checksum | region_bounds | trace | align).
checksum: small specs give the checksums they have always given (every
buffer of every step counts, under every installed allocator), and another
seed another checksum.  region_bounds: the measured region cannot fault
more pages than it touches, nor make more madvise/mmap/munmap/brk calls than
its allocations and frees allow.  trace: size=trace:FILE on a trace written
here copies what the list of its allocation sizes (64K and up, or :min=)
copies, byte for byte and checksum for checksum, twice alike; a missing or
broken trace, or one with nothing at or above the bound, is refused in one
line naming file and cause before any sample runs.  align: align=N and
align=trace reach the allocator's aligned path: Debian 12's mimalloc (2.0.9)
keeps a freed 16 MiB malloc block and unmaps a freed 16 MiB
posix_memalign(64) one, so the aligned copies fault every page and the plain
ones almost none (skipped where mimalloc is not installed); the checksum
does not change; bad values are refused in one line before any sample.
Exit 77 = skip.
"""
import os
import struct
import sys

import mbtest
from mbtest import SKIP, check, installed, main, run

# no warm-up sample and no limit measurement: what is checked is each sample's own figures,
# which neither touches (they were half these runs)
ONLY_SAMPLES = ("--warmup-runs", "0", "--no-limit")

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
    run(mb, "run", "-q", *ONLY_SAMPLES, *args, "-a", ",".join(allocs), "-r", "1", "-o", out)
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


def write_trace(path, events):
    """One process, one thread; events (op, size, failed[, arg]), ptr 0 meaning a failed call
    (docs/trace.md); arg is the alignment of posix_memalign and aligned_alloc."""
    ops = {"malloc": 1, "calloc": 2, "realloc": 3, "free": 4, "posix_memalign": 5, "aligned_alloc": 6}
    out = [struct.pack("<8sIIIIQ", b"MBTRACE\0", 1, 32, PAGE, 0, 1)]
    out.append(struct.pack("<6I", 0x4b43424d, 2, 10, 10, 0, 24 + 1) + struct.pack("<IIQII", 10, 1, 1, 0, 1) + b"x")
    payload = b"".join(struct.pack("<4Q", (t << 8) | ops[ev[0]], 0 if ev[2] else 0x1000 * (t + 1), ev[1],
                                   ev[3] if len(ev) > 3 else 0)
                       for t, ev in enumerate(events))
    out.append(struct.pack("<6I", 0x4b43424d, 1, 10, 10, 0, len(payload)) + payload)
    with open(path, "wb") as f:
        f.write(b"".join(out))


def case_trace(mb, tmp):
    allocs = allocators(mb)[:1]
    K, M = 1024, 1024 * 1024
    path = os.path.join(tmp, "t.mbt")
    write_trace(path, [("malloc", 100, False), ("malloc", 1 * M, False), ("free", 0, False),
                       ("calloc", 256 * K, False), ("malloc", 8 * M, True), ("realloc", 3 * M, False),
                       ("posix_memalign", 64 * K, False), ("malloc", 4 * K, False),
                       ("aligned_alloc", 2 * M, False)])
    common = "count=3,steps=4,warmup=1"
    specs = {f"tensor_copy:size=trace:{path},{common}": [1 * M, 256 * K, 3 * M, 64 * K, 2 * M],
             f"tensor_copy:size=trace:{path}:min=1M,{common}": [1 * M, 3 * M, 2 * M],
             f"tensor_copy:size=trace:{path}:min=1,{common}": [100, 1 * M, 256 * K, 3 * M, 64 * K, 4 * K, 2 * M]}
    lists = {s: f"tensor_copy:size={'/'.join(str(v) for v in sizes)},{common}" for s, sizes in specs.items()}
    out = os.path.join(tmp, "trace.csv")
    run(mb, "run", "-q", *ONLY_SAMPLES, *sum((["-w", s] for s in list(specs) + list(lists.values())), []),
        "-a", allocs[0], "-r", "2", "-o", out)
    rs = mbtest.rows(out)
    by = {}
    for r in rs:
        check(r["status"] == "ok", f"{r['workload_params']}: {r['status']} {r['message']}")
        by.setdefault(r["workload_params"], []).append(r)
    def key(s):
        return "size=" + s.split("size=", 1)[1].split(",")[0]
    sums = set()
    for spec, sizes in specs.items():
        mine = [r for p, v in by.items() if key(spec) in p.split(",") for r in v]
        ref = [r for p, v in by.items() if key(lists[spec]) in p.split(",") for r in v]
        check(len(mine) == 2 and len(ref) == 2, f"{spec}: {len(mine)} rows, its list {len(ref)}")
        if len(mine) < 2 or not ref:
            continue
        check(mine[0]["checksum"] == mine[1]["checksum"], f"{spec}: two runs, checksums {mine[0]['checksum']} "
              f"and {mine[1]['checksum']}")
        check(mine[0]["checksum"] == ref[0]["checksum"], f"{spec}: checksum {mine[0]['checksum']}, the list "
              f"{sizes} gives {ref[0]['checksum']}")
        # every step copies count=3 buffers, the sizes taken in order, cycling;
        # the warmup step takes the first 3
        want = sum(sizes[i % len(sizes)] for i in range(3, 3 + 3 * 4))
        check(int(mine[0]["region_bytes"]) == want, f"{spec}: {mine[0]['region_bytes']} bytes copied, "
              f"the sizes give {want}")
        sums.add(mine[0]["checksum"])
    check(len(sums) == len(specs), f"the bounds give other checksums: {sums}")

    empty = os.path.join(tmp, "small.mbt")
    write_trace(empty, [("malloc", 100, False), ("malloc", 1 * M, True)])
    broken = os.path.join(tmp, "broken.mbt")
    with open(path, "rb") as f:
        data = f.read()
    with open(broken, "wb") as f:
        f.write(data[:32] + b"XXXX" + data[36:])
    for arg, want in ((os.path.join(tmp, "none.mbt"), "No such file or directory"),
                      (broken, "byte 32:"),
                      (empty, "no allocation of at least 64K"),
                      (f"{path}:min=9M", "no allocation of at least 9M")):
        bad = os.path.join(tmp, "bad.csv")
        p = run(mb, "run", "-q", *ONLY_SAMPLES, "-w", f"tensor_copy:size=trace:{arg},{common}", "-a", allocs[0], "-r", "1",
                "-o", bad, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and want in lines[0] and arg.split(":min=")[0] in lines[0],
              f"trace:{arg}: one line naming the file and '{want}', got {p.stderr!r}")
        check(not os.path.exists(bad), f"trace:{arg}: refused, yet {bad} was written")


def case_align(mb, tmp):
    allocs = allocators(mb)
    M = 1024 * 1024
    common = "count=4,steps=3,warmup=1"
    path = os.path.join(tmp, "aligned.mbt")
    write_trace(path, [("posix_memalign", 16 * M, False, 64)])
    for bad, want in (("align=63", "bad align '63'"), ("align=4", "bad align '4'"),
                      ("align=x", "bad align 'x'"), ("align=2G", "bad align '2G'"),
                      ("align=trace", "align=trace takes each buffer's alignment from size=trace:FILE")):
        out = os.path.join(tmp, "bad.csv")
        p = run(mb, "run", "-q", *ONLY_SAMPLES, "-w", f"tensor_copy:size=16M,{common},{bad}", "-a", allocs[0], "-r", "1",
                "-o", out, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and want in lines[0], f"{bad}: one line with '{want}', got {p.stderr!r}")
        check(not os.path.exists(out), f"{bad}: refused, yet {out} was written")
    specs = {"malloc": f"tensor_copy:size=16M,{common}",
             "align=64": f"tensor_copy:size=16M,{common},align=64",
             "trace, malloc": f"tensor_copy:size=trace:{path},{common}",
             "trace, align=trace": f"tensor_copy:size=trace:{path},{common},align=trace"}
    use = [a for a in allocs if a == "mimalloc"] or allocs[:1]
    out = os.path.join(tmp, "align.csv")
    rows = run_rows(mb, out, specs.values(), use)
    got = {}
    for r in rows:
        check(r["status"] == "ok", f"{r['workload_params']}: {r['status']} {r['message']}")
        got[r["workload_params"]] = r
    check(len(got) == 4, f"4 rows, one per spec: {sorted(got)}")
    sums = {r["checksum"] for r in got.values()}
    check(len(sums) == 1, f"the alignment changes no byte copied: checksums {sums}")
    if use != ["mimalloc"]:
        print("mimalloc not installed: the aligned path's effect is not checked", file=sys.stderr)
        return
    def faults(key):
        # align=0, the default, is left out of the params (rows from before align= name the same workload)
        r = next((r for p, r in got.items() if all(w in p.split(",") if w != "align=0"
                                                   else "align=" not in p for w in key)), None)
        return int(r["region_minor_faults"]) if r else -1
    plain, aligned = faults(["size=16M", "align=0"]), faults(["size=16M", "align=64"])
    tplain = faults([f"size=trace:{path}", "align=0"])
    taligned = faults([f"size=trace:{path}", "align=trace"])
    pages = 4 * 3 * 16 * M // PAGE
    print(f"mimalloc region faults, 12 buffers of 16 MiB ({pages} pages): malloc {plain}, align=64 {aligned}; "
          f"trace: malloc {tplain}, align=trace {taligned}")
    check(0 <= plain < pages // 10 and 0 <= tplain < pages // 10,
          f"mimalloc keeps a freed 16 MiB malloc block: {plain} and {tplain} faults for {pages} pages")
    check(aligned >= pages * 0.9 and taligned >= pages * 0.9,
          f"align=64 and align=trace take posix_memalign, whose 16 MiB block mimalloc unmaps: "
          f"{aligned} and {taligned} faults for {pages} pages")


if __name__ == "__main__":
    sys.exit(main({"checksum": case_checksum, "region_bounds": case_region_bounds, "trace": case_trace,
                   "align": case_align}))
