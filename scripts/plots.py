#!/usr/bin/python3
"""scripts/plots.py - `python3 scripts/plots.py ARGS` runs `python3 -m mallocbench.plots ARGS`
(scripts/mallocbench/plots.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.plots", run_name="__main__", alter_sys=True)
