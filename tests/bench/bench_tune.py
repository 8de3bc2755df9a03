"""bench_tune.py HARNESS [BUDGET_S] [R] [DIR] - tune against an exhaustive grid (issue 21).

For each of two workloads: `mallocbench tune --seed 1` within BUDGET_S (default 40) over
glibc and jemalloc; then one `mallocbench run` of every candidate tune considered (its
.tune.json: defaults, hand-picked, sampled points, neighbours) in R blocks (default 10): the
exhaustive grid over the same candidates.  The grid's winner is the best median throughput.
Prints, per workload: both winners, the paired ratio of tune's winner to the grid's winner in
the grid's own blocks (95% CI), and tune's samples as a share of the grid's.  Goal: the same
winner or one whose CI against the grid's includes 1, for at most 25% of the grid's samples.
Files go to DIR when given (kept), else a temporary folder.  Figures, not asserted timings."""
import csv
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
WORKLOADS = ["tensor_copy:size=16M,count=4,steps=10", "arena_churn:ops=200000,warmup=20000"]


def read_rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["status"] == "ok"]


def owner(labels, config):
    return next((c for c in labels if config == c or config.startswith(c + "[")), None)


def one(mb, wl, budget, reps, tmp):
    import stats
    base = os.path.join(tmp, wl.partition(":")[0])
    subprocess.run([mb, "tune", "-w", wl, "-a", "glibc,jemalloc", "--budget", f"{budget}s", "--seed", "1",
                    "-o", base + ".md"], check=True, capture_output=True)
    info = json.load(open(base + ".tune.json"))
    tune_samples = sum(len(read_rows(r["csv"])) for r in info["rounds"]) \
        + (len(read_rows(info["confirm"]["csv"])) if os.path.exists(info["confirm"]["csv"]) else 0)
    cands = info["candidates"]
    cmd = [mb, "run", "-w", wl, "-a", ",".join(f"{c['label']}={c['family']}" for c in cands), "-r", str(reps),
           "--seed", "2", "--warmup-runs", "0", "--no-limit", "-q", "-o", base + ".grid.csv"]
    for c in cands:
        for k, v in c["tunables"]:
            cmd += ["-t", f"{c['label']}:{k}={v}"]
    subprocess.run(cmd, check=True, capture_output=True)
    labels = [c["label"] for c in cands]
    per = {}
    for r in read_rows(base + ".grid.csv"):
        c = owner(labels, r["config"])
        if c:
            per.setdefault(c, {})[r["block"]] = float(r["throughput"])
    grid_win = max(per, key=lambda c: stats.median(list(per[c].values())))
    win = info["winner"]
    keys = [k for k in per.get(win, {}) if k in per[grid_win]]
    ch = stats.paired_change([per[grid_win][k] for k in keys], [per[win][k] for k in keys]) if win != grid_win else None
    grid_samples = sum(len(v) for v in per.values())
    same = win == grid_win or (ch is not None and ch.lo is not None and ch.lo <= 1 <= ch.hi)
    ci = f"{ch.estimate:.3f} [{ch.lo:.3f}, {ch.hi:.3f}]" if ch and ch.lo is not None else "-"
    print(f"{wl}: tune winner {win} ({info['winner_setting']}), grid winner {grid_win}; tune/grid in the grid's "
          f"blocks {ci}; {'same or within CI' if same else 'DIFFERENT'}; samples tune {tune_samples} / grid "
          f"{grid_samples} = {100 * tune_samples / max(1, grid_samples):.0f}% ({len(cands)} candidates x {reps} "
          f"blocks)")
    return same, tune_samples / max(1, grid_samples)


def main():
    mb = sys.argv[1]
    budget = float(sys.argv[2]) if len(sys.argv) > 2 else 40
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    if len(sys.argv) > 4:
        os.makedirs(sys.argv[4], exist_ok=True)
        res = [one(mb, wl, budget, reps, sys.argv[4]) for wl in WORKLOADS]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            res = [one(mb, wl, budget, reps, tmp) for wl in WORKLOADS]
    print(f"goal (same or within CI, <= 25% of the grid's samples): "
          f"{sum(s for s, _ in res)} of {len(res)} same; shares {', '.join(f'{100 * f:.0f}%' for _, f in res)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
