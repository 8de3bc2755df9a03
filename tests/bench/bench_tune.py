"""bench_tune.py HARNESS [BUDGET_S] [R] [DIR] - tune against an exhaustive grid (issue 21).

For each of two workloads, a finite search space (value lists over glibc's and jemalloc's
tunables, below) and:
  - `mallocbench tune --seed 1` over it (the same lists as -d domains) within BUDGET_S
    (default 60);
  - the exhaustive grid: each family's default and every combination of its lists, in one
    `mallocbench run` of R randomized blocks (default 10).
The grid's winner is its best median throughput.  Prints, per workload: both winners, the
paired ratio of tune's winner to the grid's in the grid's own blocks (95% CI), and tune's
samples (racing and confirmation) as a share of the grid's.  Goal: the same winner, or one
whose CI against the grid's includes 1, for at most 25% of the grid's samples.  Files go to
DIR when given (kept; a grid already there is reused, the grid being the long part), else a
temporary folder.  Figures, not asserted timings."""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SPACES = {  # workload: {family: [(tunable, [values])]}: 74 configurations each with the defaults
    "tensor_copy:size=16M,count=4,steps=10": {
        "glibc": [("mmap_threshold", ["128K", "1M", "32M"]), ("trim_threshold", ["128K", "1G"]),
                  ("top_pad", ["0", "64M"]), ("arena_max", ["1", "8"])],
        "jemalloc": [("dirty_decay_ms", ["-1", "0", "1000", "10000"]), ("muzzy_decay_ms", ["-1", "0"]),
                     ("oversize_threshold", ["1M", "8M", "64M"]), ("background_thread", ["false", "true"])],
    },
    "arena_churn:ops=200000,warmup=20000": {
        "glibc": [("arena_max", ["1", "2", "8"]), ("tcache_count", ["0", "7", "64"]), ("top_pad", ["0", "1M"]),
                  ("mmap_threshold", ["128K", "32M"])],
        "jemalloc": [("narenas", ["1", "2", "8"]), ("tcache_max", ["4K", "32K", "1M"]),
                     ("background_thread", ["false", "true"]), ("dirty_decay_ms", ["0", "10000"])],
    },
}


def read_rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["status"] == "ok"]


def point(r):
    """A row's grid point: its family and the canonical tunables it asked for."""
    return r["allocator"], frozenset(t for t in r["requested_tunables"].split(";") if t)


def one(mb, wl, budget, reps, tmp, reuse=False):
    from mallocbench import stats
    space = SPACES[wl]
    base = os.path.join(tmp, wl.partition(":")[0])
    doms = [a for fam, dims in space.items() for n, vals in dims for a in ("-d", f"{fam}:{n}={'|'.join(vals)}")]
    subprocess.run([mb, "tune", "-w", wl, "-a", ",".join(space), *doms, "--budget", f"{budget}s", "--seed", "1",
                    "--force", "-o", base + ".md"], check=True, capture_output=True)
    info = json.load(open(base + ".tune.json"))
    racing = sum(len(read_rows(r["csv"])) for r in info["rounds"])
    conf = read_rows(info["confirm"]["csv"])
    win = info["winner"]
    mine = next((point(r) for r in conf if r["config"] == win or r["config"].startswith(win + "[")), None)
    # the grid: each family's default, and the cross product of its lists (run's -t LABEL:NAME=V,V,...)
    cmd = [mb, "run", "-w", wl, "-a", ",".join(list(space) + [f"{f}-grid={f}" for f in space]), "-r", str(reps),
           "--seed", "2", "--warmup-runs", "0", "--no-limit", "-q", "--force", "-o", base + ".grid.csv"]
    for fam, dims in space.items():
        for n, vals in dims:
            cmd += ["-t", f"{fam}-grid:{n}={','.join(vals)}"]
    if not (reuse and os.path.exists(base + ".grid.csv")):
        subprocess.run(cmd, check=True, capture_output=True)
    per, name = {}, {}
    for r in read_rows(base + ".grid.csv"):
        per.setdefault(point(r), {})[r["block"]] = float(r["throughput"])
        name[point(r)] = r["config"]
    grid_win = max(per, key=lambda c: stats.median(list(per[c].values())))
    ch = None
    if mine in per and mine != grid_win:
        keys = [k for k in per[mine] if k in per[grid_win]]
        ch = stats.paired_change([per[grid_win][k] for k in keys], [per[mine][k] for k in keys])
    grid_samples = sum(len(v) for v in per.values())
    same = mine == grid_win or (ch is not None and ch.lo is not None and ch.lo <= 1 <= ch.hi)
    ci = f"{ch.estimate:.3f} [{ch.lo:.3f}, {ch.hi:.3f}]" if ch and ch.lo is not None else \
        ("1 (the same point)" if mine == grid_win else "-")
    share = (racing + len(conf)) / max(1, grid_samples)
    print(f"{wl}:\n  tune winner {win} ({info['winner_setting']}); grid winner {name[grid_win]};\n"
          f"  tune's winner / grid's winner in the grid's blocks: {ci}: "
          f"{'same or within CI' if same else 'DIFFERENT'};\n"
          f"  samples: tune {racing} racing + {len(conf)} confirmation = {racing + len(conf)}, grid {grid_samples} "
          f"({len(per)} configurations x {reps} blocks): {100 * share:.0f}%; tune took {info['elapsed_s']:.0f}s "
          f"of {budget:.0f}s")
    return same, share


def main():
    mb = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 60
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    if len(sys.argv) > 4:
        os.makedirs(sys.argv[4], exist_ok=True)
        res = [one(mb, wl, budget, reps, sys.argv[4], reuse=True) for wl in SPACES]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            res = [one(mb, wl, budget, reps, tmp) for wl in SPACES]
    print(f"goal (same or within CI, <= 25% of the grid's samples): "
          f"{sum(s for s, _ in res)} of {len(res)} same; shares {', '.join(f'{100 * f:.0f}%' for _, f in res)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
