#!/usr/bin/python3
"""make_seq_fixture.py - tests/fixtures/seq-stopped.csv (+ .meta.json), a run sized for a verdict
made from a real fixed one, until the harness writes such sidecars itself (issue 45).

From tests/fixtures/exec-fixed-686f62.csv (12 blocks of glibc, jemalloc, tcmalloc on a python
command): glibc and jemalloc as measured, and in tcmalloc's places a made-up A/A configuration
g2 (allocator glibc) whose block b is glibc's measurement of block (b + 5) mod 12.  Each
comparison's stop is sequential.stop() on the per-block log ratios of the figure (cap 12: looks
at 8 and 12), and a configuration that stopped has no rows after its stop, as a run leaves
them; the baseline runs on while any comparison of its workload does.  With the real numbers,
jemalloc settles at block 8 (0.72x regressed) and g2 runs to the cap.

    PYTHONPATH=scripts:tests make_seq_fixture.py [OUT.csv] [--figure cpu]

make(out, figure) is what tests/unit/test_one_answer.py calls for the CPU figure's copy."""
import csv
import json
import math
import os
import sys

from mallocbench import mbcsv, mbdata, sequential

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "fixtures", "exec-fixed-686f62.csv")
CAP = 12
SHIFT = 5  # g2's block b is glibc's block (b + SHIFT) mod 12


def rows_of(path):
    """(header lines before the CSV head, field names, rows) of a committed CSV."""
    with open(path, newline="") as f:
        lines = f.read().split("\n")
    pre = [l for l in lines if l.startswith("#")]
    rd = csv.DictReader(l for l in lines if l and not l.startswith("#"))
    return pre, rd.fieldnames, list(rd)


def stops(rows, figure, floor=0.01, resolution=0.02):
    """[stop] of each configuration against the first (glibc), sequential.stop() on the figure."""
    fn = mbdata.METRIC[figure].fn
    by = {}
    for r in rows:
        by.setdefault(r["config"], {})[int(r["block"])] = r
    base = by.pop("glibc")
    better = "lower" if figure == "cpu" else rows[0]["metric_better"] or "higher"
    out = []
    for config, blocks in by.items():
        d = [math.log(fn(blocks[b]) / fn(base[b])) if b in blocks else None for b in range(CAP)]
        s = sequential.stop(d, CAP, floor, resolution, better)
        out.append(dict({"workload": rows[0]["workload"], "params": rows[0]["workload_params"], "config": config,
                         "baseline": "glibc"}, **s))
    return out


def make(out, figure="throughput"):
    """Writes the fixture at out (its sidecar beside it); returns its stops."""
    pre, fields, rows = rows_of(SOURCE)
    glibc = {int(r["block"]): r for r in rows if r["config"] == "glibc"}
    made = []
    for r in rows:
        if r["config"] == "tcmalloc":
            src = glibc[(int(r["block"]) + SHIFT) % CAP]
            keep = {k: r[k] for k in ("sample", "block", "position", "timestamp", "repetition")}
            r = dict(src, **keep, config="g2")
        made.append(r)
    got = stops(made, figure)
    ends = {s["config"]: s["blocks"] for s in got}
    made = [r for r in made if r["config"] == "glibc" or int(r["block"]) < ends[r["config"]]]
    with open(out, "w", newline="") as f:
        f.write("".join(l + "\n" for l in pre))
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(made)
    meta = mbcsv.read_meta(SOURCE)
    meta["configs"] = [c for c in meta["configs"] if c["config"] != "tcmalloc"] + [
        dict(next(c for c in meta["configs"] if c["config"] == "glibc"), config="g2", colour="#009E73")]
    meta["figure"] = figure
    meta["sequential"] = {"figure": figure, "floor": 0.01, "resolution": 0.02, "cap": CAP, "budget_s": 600,
                          "looks": [{"blocks": b, "alpha": a} for b, a in sequential.looks(CAP)], "stops": got}
    with open(mbcsv.sidecar(out, ".meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    return got


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--figure" and a != "cpu"]
    out = args[0] if args else os.path.join(HERE, "fixtures", "seq-stopped.csv")
    for s in make(out, "cpu" if "cpu" in sys.argv[1:] else "throughput"):
        print(f"{s['config']} vs {s['baseline']}: {s['why']} at block {s['blocks']} ({s['estimate']:.4g}x)")
