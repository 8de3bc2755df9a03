"""words.py - the middle layer's wording: every figure, unit, ratio, CI and verdict as text, and
the one Markdown to HTML renderer (filled in by issue 44's split of compare.py)."""
