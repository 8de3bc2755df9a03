#!/usr/bin/env python3
"""scripts/history.py - `python3 scripts/history.py ARGS` runs `python3 -m mallocbench.history ARGS`
(scripts/mallocbench/history.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.history", run_name="__main__", alter_sys=True)
