#!/usr/bin/env python3
"""scripts/k8s.py - `python3 scripts/k8s.py ARGS` runs `python3 -m mallocbench.k8s ARGS`
(scripts/mallocbench/k8s.py: a plan's shards as a Kubernetes Indexed Job; docs/fleet.md)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("mallocbench.k8s", run_name="__main__", alter_sys=True)
