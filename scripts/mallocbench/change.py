"""change.py - the middle layer's computation: the estimator of a change against a baseline and
its cells (filled in by issue 44's split of compare.py)."""
