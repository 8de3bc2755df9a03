#!/usr/bin/env python3
"""scripts/frameworks.py - `python3 scripts/frameworks.py ARGS` runs `python3 -m mallocbench.frameworks ARGS`
(scripts/mallocbench/frameworks.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.frameworks", run_name="__main__", alter_sys=True)
