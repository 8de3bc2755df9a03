#!/usr/bin/env python3
"""test_window.py - a count is per unit of work only where the work was
measured over the count's own window (mbdata.work, same_window): a program
that prints a rate of its own but marks no region has its whole process
counted (start-up, imports), so its faults and calls are per run, and every
view's header says /run; once it marks the region its rate was timed over,
they are per unit of that rate.

Usage: test_window.py MALLOCBENCH CASE"""
import os
import subprocess
import sys

from mbtest import check, check_eq, main, metrics, rows, run
from mallocbench import mbdata

HERE = os.path.dirname(os.path.abspath(__file__))
FW = os.path.join(os.path.dirname(os.path.dirname(HERE)), "workloads", "frameworks")
PY = "/usr/bin/python3"
# a start-up that faults (a 32 MiB buffer touched) outside the loop, then a loop of 200 steps
# that the program times itself and reports as a rate
PROG = """
import sys, time
sys.path.insert(0, {fw!r})
import fwcommon
junk = bytearray(32 << 20)
{begin}
t = time.perf_counter()
for i in range(200):
    b = bytearray(1 << 20)
dt = time.perf_counter() - t
{end}
print("steps/s:", 200 / dt)
"""


def exec_rows(mb, tmp, name, marked):
    prog = os.path.join(tmp, name + ".py")
    with open(prog, "w") as f:
        f.write(PROG.format(fw=FW, begin="fwcommon.region_begin()" if marked else "",
                            end="fwcommon.region_end()" if marked else ""))
    out = os.path.join(tmp, name + ".csv")
    run(mb, "exec", "-q", "-a", "glibc", "-r", "2", "--warmup-runs", "0", "--metric", r"steps/s: (\S+)",
        "--unit", "steps/s", "-o", out, "--", PY, prog)
    rs = rows(out)
    check(len(rs) == 2 and all(r["status"] == "ok" for r in rs), f"{name}: two ok rows")
    return out, rs


def summary(path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-m", "mallocbench.summary", path], capture_output=True,
                          text=True, env=env).stdout


def case_unmarked_per_run(mb, tmp):
    """No marked region: the rate's window is the program's, the counts the whole process's: per run."""
    out, rs = exec_rows(mb, tmp, "unmarked", marked=False)
    for r in rs:
        check_eq(metrics(r).get("region"), "whole", "the row says its counts cover the whole process")
        check_eq(mbdata.work(r), (1.0, "run"), "counts per run, not per step")
        # what per-step would have claimed: the 32 MiB start-up charged to 200 steps
        check(mbdata.same_window(r) is False, "not the same window")
    text = summary(out)
    check("faults/run" in text and "faults/step" not in text, f"the header says per run: {text[-600:]!r}")
    # a row from before region= was written: its region is the whole process (same wall time)
    old = dict(rs[0], workload_metrics="processes=1")
    old["region_wall_s"] = old["total_wall_s"]
    check_eq(mbdata.work(old)[1], "run", "an older row with its region the whole process")


def case_marked_per_unit(mb, tmp):
    """A marked region: the rate and the counts share it, so the counts are per step."""
    out, rs = exec_rows(mb, tmp, "marked", marked=True)
    for r in rs:
        check_eq(metrics(r).get("region"), "marked", "the row says its region was marked")
        amount, unit = mbdata.work(r)
        check_eq(unit, "step", "counts per step of the figure")
        # the region's wall time times the rate: the 200 steps the loop did and what the
        # region's edges add (the sync round trips: 5-10% here, more on a loaded machine),
        # where the whole process's wall time would give 8-10 times as many
        check(amount is not None and 190 < amount < 400, f"about 200 steps, got {amount}")
    text = summary(out)
    check("faults/step" in text, f"the header says per step: {text[-600:]!r}")


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
