#!/usr/bin/env python3
"""scripts/tune.py - `python3 scripts/tune.py ARGS` runs `python3 -m mallocbench.tune ARGS`
(scripts/mallocbench/tune.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.tune", run_name="__main__", alter_sys=True)
