#!/usr/bin/env python3
"""scripts/diagnose.py - `python3 scripts/diagnose.py ARGS` runs `python3 -m mallocbench.diagnose ARGS`
(scripts/mallocbench/diagnose.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.diagnose", run_name="__main__", alter_sys=True)
