#!/usr/bin/env python3
"""scripts/thp.py - `python3 scripts/thp.py ARGS` runs `python3 -m mallocbench.thp ARGS`
(scripts/mallocbench/thp.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.thp", run_name="__main__", alter_sys=True)
