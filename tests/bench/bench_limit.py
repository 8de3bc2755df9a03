#!/usr/bin/env python3
"""bench_limit.py - how close tensor_copy comes to the machine's memcpy limit
where no page is faulted again.

Alternating blocks, each sample a fresh process through the harness:
  calibrate (size=64M)                 plain memcpy into a pre-faulted buffer, out of cache
  tensor_copy reuse=yes                the workload with buffers allocated once
  tensor_copy under tcmalloc           keeps most pages (defaults; and release_rate=0)
  tensor_copy under glibc, mmap_threshold=32M, trim_threshold=256M
  tensor_copy under jemalloc, dirty_decay_ms=-1 (if installed)
Prints medians and each as a share of calibrate's memcpy bandwidth.
Target: >= 90% where faults are avoided.

    bench_limit.py MALLOCBENCH [BLOCKS]
"""
import os
import sys

from benchlib import harness_rows, installed, median

SPEC = "tensor_copy:size=16M,count=4,steps=100"


def main():
    mb = sys.argv[1]
    blocks = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    have = installed(mb)
    # memcpy of 64 MiB: out of cache like the workload (4 x 16 MiB + its 16 MiB
    # source per step); 16 MiB copies (32 MiB touched) partly hit a 32 MiB L3
    cells = [("calibrate memcpy 64M", ["-w", "calibrate:size=64M,rounds=25", "-a", "glibc"]),
             ("tensor_copy reuse=yes", ["-w", SPEC + ",reuse=yes", "-a", "glibc"])]
    if "tcmalloc" in have:
        cells.append(("tensor_copy tcmalloc", ["-w", SPEC, "-a", "tcmalloc"]))
        cells.append(("tensor_copy tcmalloc release 0", ["-w", SPEC, "-a", "tcmalloc",
                                                         "-t", "tcmalloc:release_rate=0"]))
    cells.append(("tensor_copy glibc raised", ["-w", SPEC, "-a", "glibc", "-t", "glibc:mmap_threshold=32M",
                                               "-t", "glibc:trim_threshold=256M"]))
    if "jemalloc" in have:
        cells.append(("tensor_copy jemalloc decay -1", ["-w", SPEC, "-a", "jemalloc",
                                                        "-t", "jemalloc:dirty_decay_ms=-1"]))
    got = {name: [] for name, _ in cells}
    faults = {name: [] for name, _ in cells}
    for _ in range(blocks):
        for name, args in cells:
            r = harness_rows(mb, "--no-limit", "-r", "1", *args)[0]
            got[name].append(float(r["throughput"]))
            faults[name].append(float(r["region_minor_faults"]) / (float(r["region_bytes"]) / 2**20))
    limit = median(got[cells[0][0]])
    print(f"{blocks} alternating blocks, medians (GB/s = 1e9 bytes copied per second)")
    print(f"{'':32} {'GB/s':>7} {'of memcpy':>10} {'faults/MiB':>11}")
    worst = 1.0
    for name, _ in cells:
        share = median(got[name]) / limit
        if name.startswith("tensor_copy") and "reuse" not in name:
            worst = min(worst, share)
        # calibrate faults fresh mappings on purpose (its fault-cost half)
        f = "-" if name.startswith("calibrate") else f"{median(faults[name]):.2f}"
        print(f"{name:32} {median(got[name]) / 1e9:7.2f} {share * 100:9.1f}% {f:>11}")
    print(f"\ntarget >= 90% of calibrated memcpy where faults are avoided: "
          f"{'met' if worst >= 0.9 else 'not met'} (lowest {worst * 100:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
