#!/usr/bin/env python3
"""test_report.py - report.py renders from a fixture CSV: the report exists,
has its sections, and its "what this shows" says what the fixture holds
(glibc re-faults from 256K, jemalloc from 16M, dirty_decay_ms=-1 removes the
faults).  Usage: test_report.py FIXTURE.csv"""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
fixture = sys.argv[1]
fails = []
with tempfile.TemporaryDirectory() as out:
    p = subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "report.py"), fixture, "-o", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stderr, file=sys.stderr)
        sys.exit(1)
    text = open(os.path.join(out, "report.md")).read()
    for needle in ("# mallocbench report", "## What this shows", "## Summary", "## Plots",
                   "## Statistics against the baseline", "glibc re-faults from 256K",
                   "jemalloc re-faults from 16M", "removes 100% of the faults"):
        if needle not in text:
            fails.append(needle)
    if not os.path.getsize(os.path.join(out, "compare.csv")):
        fails.append("compare.csv")
for f in fails:
    print("FAIL: report lacks", repr(f), file=sys.stderr)
sys.exit(1 if fails else 0)
