#!/usr/bin/env python3
"""scripts/detect.py - `python3 scripts/detect.py ARGS` runs `python3 -m mallocbench.detect ARGS`
(scripts/mallocbench/detect.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.detect", run_name="__main__", alter_sys=True)
