#!/usr/bin/env python3
"""test_disturb.py - a command's disturbance is read over its whole process tree
(harness/sample/sample.c tree_sample, disturb.c): where the work runs in a
descendant (a compiler driver's cc1, a shell's program) and that descendant
waits for a CPU, the sample's run-queue wait says so and the sample is
disturbed (mbdata.disturbed), as every view marks it.

The wait is made, not hoped for: two busy descendants pinned to one CPU each
wait about half their time, whatever else the machine runs (a CPU hog only
adds to it).  Usage: test_disturb.py MALLOCBENCH CASE"""
import os
import sys

from mbtest import check, main, rows, run
from mallocbench import mbdata

# two descendants of sh, each a busy shell loop of about 0.3 s, both on CPU 0
BUSY = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"
TREE = f"taskset -c 0 sh -c '{BUSY}' & taskset -c 0 sh -c '{BUSY}'; wait"


def case_tree_wait(mb, tmp):
    """Descendants that share one CPU: their wait is the sample's, and it is marked disturbed."""
    cpu0 = os.sched_getaffinity(0)
    if 0 not in cpu0:
        print("SKIP: CPU 0 is not ours", file=sys.stderr)
        sys.exit(77)
    out = os.path.join(tmp, "t.csv")
    run(mb, "exec", "-q", "-a", "glibc", "-r", "1", "--warmup-runs", "0", "-o", out, "--", "sh", "-c", TREE)
    rs = rows(out)
    check(len(rs) == 1 and rs[0]["status"] == "ok", f"one ok row: {rs!r}"[:400])
    if not rs:
        return
    r = rs[0]
    delay = mbdata.num(r, "region_run_delay_s")
    cpu = (mbdata.num(r, "region_user_s") or 0) + (mbdata.num(r, "region_sys_s") or 0)
    # each loop waits for the other about half its time: the sum is near the CPU time;
    # a third of it leaves room for a scheduler that lets one run longer slices
    check(delay is not None and cpu > 0 and delay > cpu / 3,
          f"the descendants' run-queue wait counted: delay {delay} s for {cpu} s of CPU")
    why = mbdata.disturbed(r)
    check(why is not None and "for a CPU" in why, f"the sample is marked disturbed: {why!r}")


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
