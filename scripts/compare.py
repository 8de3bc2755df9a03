#!/usr/bin/env python3
"""scripts/compare.py - `python3 scripts/compare.py ARGS` runs `python3 -m mallocbench.compare ARGS`
(scripts/mallocbench/compare.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.compare", run_name="__main__", alter_sys=True)
