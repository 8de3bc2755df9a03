"""bench_shim.py HARNESS SHIM [R] - the slow-shim experiment of issue 9.

A real run holds three configurations of one allocator: the allocator, the
same allocator under a second label (A/A), and tests/programs/shim's slow shim around
it, calibrated to be SLOWDOWN% slower (a busy-wait per allocating call,
MB_SHIM_DELAY_NS).  R times: run BLOCKS blocks, then scripts/compare.py
RUN.csv --baseline ALLOC --csv-out cells.csv; count the repetitions where
the slow configuration's throughput is `regressed` and the A/A pair is
neither `improved` nor `regressed`.  Prints the counts (target: at least 9
of 10 each) and the measured slowdown; figures, not asserted timings."""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPARE = os.path.join(HERE, "..", "scripts", "compare.py")


def scipy_python():
    """An interpreter for scripts/compare.py: this one if it has scipy (the
    scripts need it), else Debian's /usr/bin/python3 (python3-scipy)."""
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run([py, "-c", "import scipy"],
                                                 capture_output=True).returncode == 0:
            return py
    print("SKIP: no python3 with scipy for scripts/compare.py (apt-get install python3-scipy)",
          file=sys.stderr)
    sys.exit(77)


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run_harness(mb, out, env, *args):
    """One harness run into out; returns its exit status."""
    return subprocess.run([mb, "run", "-q", "-o", out, *args], env=env,
                          stdout=subprocess.DEVNULL).returncode


def ok_rows(rows, config=None):
    return [r for r in rows if r["status"] == "ok" and (config is None or r["config"] == config)]


def calibrate(mb, alloc, workload, tmp, slowdown, min_time):
    """Delay per allocating call (ns) that adds `slowdown` to the region time
    of the real allocator: slowdown x median(region_wall_s / region_ops)."""
    out = os.path.join(tmp, "calibrate.csv")
    rc = run_harness(mb, out, None, "-w", workload, "-a", alloc, "-r", "5", "--warmup-runs", "1",
                     "--seed", "1", "--min-time", min_time)
    if rc != 0:
        sys.exit(f"bench_shim: calibration run failed (exit {rc})")
    rows = ok_rows(read_rows(out))
    per_op = statistics.median(float(r["region_wall_s"]) / float(r["region_ops"]) for r in rows)
    return int(round(slowdown * per_op * 1e9)), per_op, rows[0]["malloc_so"]


def configurations(alloc, shim):
    """The three -a entries under labels: the allocator, its A/A twin, the shim."""
    return f"{alloc},{alloc}-aa={alloc},{alloc}-slow={alloc}:{shim}", f"{alloc}-aa", f"{alloc}-slow"


def verdicts(cells_csv, configs):
    """Verdict and estimate of the throughput cell of each config."""
    got = {}
    for c in read_rows(cells_csv):
        if c["metric"] != "throughput" or c["config"] not in configs:
            continue
        got[c["config"]] = (c["verdict"], c["estimate"])
    return got


def paired_slowdown(rows, alloc, config):
    """Median over blocks of 1 - throughput(config) / throughput(alloc)."""
    base = {r["block"]: float(r["throughput"]) for r in ok_rows(rows, alloc)}
    d = [1 - float(r["throughput"]) / base[r["block"]] for r in ok_rows(rows, config)
         if r["block"] in base and base[r["block"]] > 0]
    return statistics.median(d) if d else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("harness")
    ap.add_argument("shim", help="libslowshim-ALLOC.so of tests/programs/shim")
    ap.add_argument("repetitions", type=int, nargs="?", default=10)
    ap.add_argument("--alloc", default="jemalloc")
    # 1 MiB buffers: jemalloc keeps them (no re-faults), so the samples are memcpy-bound and calm
    ap.add_argument("--workload", default="tensor_copy:size=1M,count=4,steps=100")
    ap.add_argument("--min-time", default="300ms", help="--min-time of every run (make compare's)")
    ap.add_argument("--blocks", type=int, default=10, help="blocks per run (make compare's count)")
    ap.add_argument("--slowdown", type=float, default=5.0, help="percent added to the region time")
    ap.add_argument("--keep", metavar="DIR", help="keep every run and cells CSV in DIR")
    a = ap.parse_args()
    a.shim = os.path.abspath(a.shim)
    if not os.path.exists(a.shim):
        print(f"SKIP: no shim at {a.shim}", file=sys.stderr)
        return 77
    py = scipy_python()
    with tempfile.TemporaryDirectory() as tmp:
        work = a.keep or tmp
        os.makedirs(work, exist_ok=True)
        delay, per_op, _ = calibrate(a.harness, a.alloc, a.workload, tmp, a.slowdown / 100, a.min_time)
        print(f"{a.workload}: {a.alloc} {per_op * 1e6:.1f} us of region per allocation "
              f"(median of 5) -> MB_SHIM_DELAY_NS={delay} for +{a.slowdown:g}%")
        spec, aa, slow = configurations(a.alloc, a.shim)
        env = dict(os.environ, MB_SHIM_DELAY_NS=str(delay))
        head = f"{'rep':>3}  {'slow verdict':<13} {'estimate':>9} {'paired':>7}  {'A/A verdict':<13} {'estimate':>9}"
        print(f"\n{a.repetitions} repetitions of {a.blocks} blocks: -a {spec}\n{head}")
        flagged = quiet = 0
        slowdowns = []
        for rep in range(a.repetitions):
            run = os.path.join(work, f"run{rep}.csv")
            cells = os.path.join(work, f"cells{rep}.csv")
            for p in (run, cells):
                if os.path.exists(p):
                    os.remove(p)
            rc = run_harness(a.harness, run, env, "-w", a.workload, "-a", spec, "-r", str(a.blocks),
                             "--warmup-runs", "1", "--seed", str(rep + 1), "--min-time", a.min_time, "--force")
            if rc != 0:
                sys.exit(f"bench_shim: repetition {rep} failed (exit {rc})")
            cmp = subprocess.run([py, COMPARE, run, "--baseline", a.alloc, "--csv-out", cells],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if cmp.returncode != 0:
                last = (cmp.stderr.strip().splitlines() or ["?"])[-1]
                print(f"     compare.py failed (exit {cmp.returncode}): {last}")
                v = {}
            else:
                v = verdicts(cells, {aa, slow})
            sv, se = v.get(slow, ("missing", ""))
            av, ae = v.get(aa, ("missing", ""))
            sd = paired_slowdown(read_rows(run), a.alloc, slow)
            slowdowns.append(sd)
            flagged += sv == "regressed"
            quiet += av not in ("improved", "regressed", "missing")
            print(f"{rep:>3}  {sv:<13} {se:>9} {sd * 100:>6.1f}%  {av:<13} {ae:>9}")
        print(f"\nslow ({a.slowdown:g}% by construction) flagged regressed: {flagged}/{a.repetitions} "
              f"(target >= {int(0.9 * a.repetitions)})")
        print(f"A/A not flagged:                      {quiet}/{a.repetitions} "
              f"(target >= {int(0.9 * a.repetitions)})")
        print(f"measured slowdown, median of the per-repetition paired medians: "
              f"{statistics.median(slowdowns) * 100:.1f}% "
              f"(range {min(slowdowns) * 100:.1f}..{max(slowdowns) * 100:.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
