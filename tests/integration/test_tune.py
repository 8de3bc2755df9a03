#!/usr/bin/env python3
"""test_tune.py - `mallocbench tune` (tests/meson.build).

    test_tune.py MALLOCBENCH CASE

bad_input      bad domains, an unknown objective, an empty or unknown family list, a bad
               budget, no workload: each refused with exit 2 and one line, before any work
               (no report, no CSV).
budget         a 40 s budget: tune's wall time stays within the budget plus one sample
               (the longest sample it ran) plus the harness's start-up (1 s).
known_optimum  a known optimum: jemalloc's dirty_decay_ms on tensor_copy with 16 MiB
               buffers.  jemalloc purges (MADV_DONTNEED) every freed extent at or above
               oversize_threshold (8 MiB) at once unless a decay is -1, so every value of
               the domain 0|1000|10000|100000 re-faults all 64 MiB every step and -1 alone
               keeps them: a real, large and documented effect, not a test shim.  Over
               TUNE_SEEDS seeds (default 10) tune must name dirty_decay_ms=-1 in at least
               90% of them and never report a winner whose confirmed throughput is below the
               family default's.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/: mbtest
from mbtest import SKIP, check, check_eq, main, rows, installed

WL = "tensor_copy:size=16M,count=4,steps=10"


def tune(mb, *args):
    t = time.monotonic()
    p = subprocess.run([mb, "tune", *args], capture_output=True, text=True, timeout=900)
    return p, time.monotonic() - t


def case_bad_input(mb, tmp):
    out = os.path.join(tmp, "t.md")
    bad = [
        ["-w", WL, "-a", ""],
        ["-w", WL, "-a", ","],
        ["-w", WL, "-a", "glibc,nope"],
        ["-w", WL, "--objective", "fastest"],
        ["-w", WL, "-d", "jemalloc:dirty_decay_ms=1|x"],
        ["-w", WL, "-d", "jemalloc:dirty_decay_ms=100..10"],
        ["-w", WL, "-d", "jemalloc:background_thread=0..1"],
        ["-w", WL, "-d", "jemalloc:no_such=1|2"],
        ["-w", WL, "-d", "nofamily:x=1"],
        ["-w", WL, "-d", "jemalloc"],
        ["-w", WL, "--budget", "0"],
        ["-w", WL, "--budget", "soon"],
        ["-w", WL, "--max-rss", "lots"],
        ["-w", WL, "--seed", "-1"],
        ["-w", "no_such_workload"],
        [],
        ["-w", WL, "--", "true"],
        ["--"],
    ]
    for args in bad:
        p, _ = tune(mb, "-o", out, *args)
        check_eq(p.returncode, 2, f"tune {args}: exit")
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith("mallocbench: tune:"),
              f"tune {args}: one line 'mallocbench: tune: ...', got {p.stderr!r}")
        check(not os.listdir(tmp), f"tune {args}: wrote {os.listdir(tmp)} before refusing")


def case_budget(mb, tmp):
    if "jemalloc" not in installed(mb):
        print("SKIP: jemalloc not installed", file=sys.stderr)
        raise SystemExit(SKIP)
    out = os.path.join(tmp, "t.md")
    budget = 40.0
    p, wall = tune(mb, "-w", WL, "-a", "glibc,jemalloc", "--points", "2", "--budget", f"{budget:.0f}s",
                   "--seed", "5", "-o", out)
    check_eq(p.returncode, 0, "tune exit " + p.stderr[-500:])
    info = json.load(open(os.path.join(tmp, "t.tune.json")))
    walls = []
    for rd in info["rounds"]:
        walls += [float(r["total_wall_s"]) for r in rows(rd["csv"]) if r["total_wall_s"]]
    walls += [float(r["total_wall_s"]) for r in rows(info["confirm"]["csv"]) if r["total_wall_s"]]
    one = max(walls) if walls else 0.0
    print(f"budget {budget:.0f}s: tune ran {wall:.1f}s (search {info['elapsed_s']:.1f}s), "
          f"longest sample {one:.2f}s, {len(walls)} samples")
    check(info["elapsed_s"] <= budget + one, f"search and confirmation {info['elapsed_s']:.1f}s > budget "
          f"{budget}s + one sample {one:.2f}s")
    check(wall <= budget + one + 5.0, f"whole command {wall:.1f}s > budget + one sample + 5 s of report")
    check(os.path.exists(out) and os.path.exists(info["confirm"]["csv"]), "report and confirmation CSV written")


def case_known_optimum(mb, tmp):
    if "jemalloc" not in installed(mb):
        print("SKIP: jemalloc not installed", file=sys.stderr)
        raise SystemExit(SKIP)
    seeds = int(os.environ.get("TUNE_SEEDS", "10"))
    found, losers = 0, 0
    for seed in range(1, seeds + 1):
        out = os.path.join(tmp, f"s{seed}.md")
        p, wall = tune(mb, "-w", WL, "-a", "jemalloc", "-d", "jemalloc:dirty_decay_ms=0|1000|10000|100000|-1",
                       "--points", "5", "--budget", "45s", "--seed", str(seed), "-o", out)
        check_eq(p.returncode, 0, f"seed {seed}: exit " + p.stderr[-300:])
        info = json.load(open(os.path.join(tmp, f"s{seed}.tune.json")))
        win = info["winner_setting"] or ""
        ok = "dirty_decay_ms=-1" in win.split()
        found += ok
        conf = [r for r in rows(info["confirm"]["csv"]) if r["status"] == "ok"]
        med = {}
        for c in (info["winner"], "jemalloc"):
            v = sorted(float(r["throughput"]) for r in conf if r["config"] == c or r["config"].startswith(c + "["))
            med[c] = v[len(v) // 2] if v else None
        loser = med["jemalloc"] is not None and med[info["winner"]] is not None and \
            info["winner"] != "jemalloc" and med[info["winner"]] < med["jemalloc"]
        losers += loser
        print(f"seed {seed}: winner {info['winner']} ({win}) in {wall:.0f}s; confirmed median "
              f"{med[info['winner']]} vs default {med['jemalloc']}{'  LOSER' if loser else ''}")
    print(f"known optimum found in {found} of {seeds} seeds; {losers} losers reported")
    check(found >= 0.9 * seeds, f"dirty_decay_ms=-1 found in {found} of {seeds} seeds (want >= 90%)")
    check_eq(losers, 0, "winners slower than the default in the confirmation")


if __name__ == "__main__":
    sys.exit(main({"bad_input": case_bad_input, "budget": case_budget, "known_optimum": case_known_optimum}))
