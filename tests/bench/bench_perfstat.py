#!/usr/bin/env python3
"""bench_perfstat.py - the harness's whole-process figures against perf stat.

For each installed allocator: run tensor_copy (16 MiB x 4, STEPS steps)
through the harness and, by hand, the command --print-commands shows under
`perf stat`, REPS times each, alternating.  Prints both and the difference:
faults, madvise, munmap and brk must agree within 2% (or, for counts so
small that they differ from run to run, the two tools' ranges of runs must
overlap); user and sys seconds
are compared with the run-to-run spread of the perf stat runs.  Also prints
the figure the project exists for: minor faults per 16 MiB buffer freed and
allocated again, per allocator.

    bench_perfstat.py MALLOCBENCH [STEPS] [REPS]
"""
import shutil
import os
import sys

from benchlib import harness_rows, installed, median, perf_stat, printed_command, skip_unless

COUNTS = ["total_minor_faults", "total_madvise_calls", "total_munmap_calls", "total_brk_calls",
          "total_mmap_calls"]


def main():
    mb = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    skip_unless(shutil.which("perf"), "perf not installed (Debian package linux-perf)")
    spec = f"tensor_copy:size=16M,count=4,steps={steps}"
    bad = 0
    effect = []
    print(f"{spec}, {reps} runs each way, medians; harness = CSV total_* columns, perf = perf stat of the printed command")
    print(f"{'allocator':10} {'figure':22} {'harness':>12} {'perf stat':>12} {'diff':>8}  verdict")
    for alloc in installed(mb):
        cmd = printed_command(mb, "-w", spec, "-a", alloc)
        h, p = [], []
        for _ in range(reps):
            h += harness_rows(mb, "-w", spec, "-a", alloc, "-r", "1")
            p.append(perf_stat(cmd))
        for col in COUNTS + ["total_user_s", "total_sys_s"]:
            hv = median([float(r[col]) for r in h])
            pv = median([x[col] for x in p])
            diff = (hv - pv) / pv * 100 if pv else (0.0 if hv == pv else float("inf"))
            if col in COUNTS:
                if col == "total_mmap_calls":
                    verdict = "info"
                else:
                    runs = [x[col] for x in p]
                    hruns = [float(r[col]) for r in h]
                    # small counts (tcmalloc's brk: 12 or 13) vary from run to run under
                    # either tool: then agreement is that the two ranges of runs overlap
                    overlap = max(min(runs), min(hruns)) <= min(max(runs), max(hruns))
                    ok = abs(diff) <= 2.0 or overlap
                    verdict = ("ok (<=2%)" if abs(diff) <= 2.0 else
                               f"ok (runs overlap: harness {min(hruns):.0f}..{max(hruns):.0f}, "
                               f"perf {min(runs):.0f}..{max(runs):.0f})" if ok else
                               f"DISAGREE (harness {min(hruns):.0f}..{max(hruns):.0f}, "
                               f"perf {min(runs):.0f}..{max(runs):.0f})")
                    bad += not ok
                print(f"{alloc:10} {col[6:]:22} {hv:12.0f} {pv:12.0f} {diff:+7.3f}%  {verdict}")
            else:
                runs = [x[col] for x in p]
                lo, hi = min(runs), max(runs)
                hruns = [float(r[col]) for r in h]
                # within the spread of either method's runs
                tol = max(hi - lo, max(hruns) - min(hruns))
                ok = abs(hv - pv) <= tol
                print(f"{alloc:10} {col[6:]:22} {hv:12.3f} {pv:12.3f} {diff:+7.1f}%  "
                      f"{'within' if ok else 'OUTSIDE'} spread {tol:.3f}s (perf {lo:.3f}..{hi:.3f})")
        per_buf = median([float(r["region_minor_faults"]) / (4 * steps) for r in h])
        effect.append((alloc, per_buf, median([float(r["throughput"]) for r in h]) / 1e9))
    print("\nminor faults per 16 MiB buffer in the measured region (4096 = every page faulted again):")
    for alloc, per_buf, gbs in effect:
        print(f"  {alloc:10} {per_buf:8.0f} faults/buffer  {gbs:6.2f} GB/s  "
              f"{'re-faults' if per_buf > 3500 else 'keeps its pages'}")
    print(f"\n{bad} count(s) disagree by more than 2%")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
