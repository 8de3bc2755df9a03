#!/usr/bin/env python3
"""scripts/summary.py - `python3 scripts/summary.py ARGS` runs `python3 -m mallocbench.summary ARGS`
(scripts/mallocbench/summary.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.summary", run_name="__main__", alter_sys=True)
