#!/usr/bin/env python3
"""scripts/dashboard.py - `python3 scripts/dashboard.py ARGS` runs `python3 -m mallocbench.dashboard ARGS`
(scripts/mallocbench/dashboard.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.dashboard", run_name="__main__", alter_sys=True)
