#!/usr/bin/python3
"""scripts/report.py - `python3 scripts/report.py ARGS` runs `python3 -m mallocbench.report ARGS`
(scripts/mallocbench/report.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.report", run_name="__main__", alter_sys=True)
