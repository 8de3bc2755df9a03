#!/usr/bin/env python3
"""scripts/flamegraph.py - `python3 scripts/flamegraph.py ARGS` runs `python3 -m mallocbench.flamegraph ARGS`
(scripts/mallocbench/flamegraph.py; scripts/ is on the path of a script run from it)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.flamegraph", run_name="__main__", alter_sys=True)
