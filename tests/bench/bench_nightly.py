#!/usr/bin/python3
"""bench_nightly.py - the dashboard end to end, as CI runs it: `make nightly`
for NIGHTS nights (NIGHT overridden, one after another into one history),
with tests/programs/shim's slow shim put in front of one allocator (same label, so
the same series) on the last two nights, then the dashboard; prints the
alerts and checks that the shimmed allocator's throughput is `confirmed`
and no other series is.

Usage: bench_nightly.py SHIM_LIB [NIGHTS] [--history DIR] [--site DIR] [--alloc jemalloc]
        [--slowdown 5] [--blocks N]
Runs from the repository root (make targets); about 5 minutes per night
with matrices/nightly.ini on 2 cores.  The default delay, 200 ns per
allocating call, makes jemalloc's arena_churn (about 100 ns per operation)
some 2-3x slower and leaves its large-buffer workloads nearly untouched.
"""
import argparse
import csv
import datetime
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..")


def make(*args, env=None):
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"bench_nightly: make {' '.join(args)} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def shim_matrix(src, dst, alloc, shim, blocks):
    """nightly.ini with ALLOC served by the shim under its own label."""
    text = open(src).read()
    text = re.sub(r"(?m)^(allocators\s*=.*?)(?<![\w-])" + re.escape(alloc) + r"(?=,|$)",
                  lambda m: m.group(1) + f"{alloc}={alloc}:{shim}", text, count=1)
    if blocks:
        text = re.sub(r"(?m)^repetitions\s*=.*$", f"repetitions = {blocks}", text)
    open(dst, "w").write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("shim")
    ap.add_argument("nights", type=int, nargs="?", default=5)
    ap.add_argument("--history")
    ap.add_argument("--site")
    ap.add_argument("--alloc", default="jemalloc")
    ap.add_argument("--delay-ns", type=int, default=200, help="MB_SHIM_DELAY_NS on the shim's nights")
    ap.add_argument("--blocks", type=int, help="repetitions instead of the matrix's")
    ap.add_argument("--first", default="2026-11-01")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="mb-nightly-")
    history = os.path.abspath(a.history or os.path.join(tmp, "history"))
    site = os.path.abspath(a.site or os.path.join(tmp, "site"))
    base = os.path.join(ROOT, "matrices", "nightly.ini")
    plain, slow = os.path.join(tmp, "plain.ini"), os.path.join(tmp, "slow.ini")
    open(plain, "w").write(re.sub(r"(?m)^repetitions\s*=.*$", f"repetitions = {a.blocks}", open(base).read())
                           if a.blocks else open(base).read())
    shim_matrix(base, slow, a.alloc, os.path.abspath(a.shim), a.blocks)
    day = datetime.date.fromisoformat(a.first)
    for i in range(a.nights):
        night = (day + datetime.timedelta(days=i)).isoformat()
        shimmed = i >= a.nights - 2
        env = dict(os.environ, MB_SHIM_DELAY_NS=str(a.delay_ns if shimmed else 0))
        make("nightly", f"NIGHT={night}", f"HISTORY={history}", f"SITE={site}",
             f"MATRIX={slow if shimmed else plain}", env=env)
        print(f"night {night}: {'shim in front of ' + a.alloc if shimmed else 'as shipped'}", flush=True)
    alerts = list(csv.DictReader(open(os.path.join(site, "alerts.csv"))))
    latest = (day + datetime.timedelta(days=a.nights - 1)).isoformat()
    print(f"\n{len(alerts)} alerts in {history}:")
    for r in alerts:
        print(f"  {r['night']} {r['status']:11} {r['direction']:11} {float(r['change_pct']):+6.1f}%  "
              f"{r['workload']} {r['config']} {r['metric']}")
    mine = [r for r in alerts if r["config"] == a.alloc and r["metric"] == "throughput" and r["status"] == "confirmed"
            and r["direction"] == "regression"]
    since = (day + datetime.timedelta(days=a.nights - 2)).isoformat()
    others = [r for r in alerts if r["status"] == "confirmed" and r["config"] != a.alloc and r["night"] >= since]
    mine_other = [r for r in alerts if r["status"] == "confirmed" and r["config"] == a.alloc
                  and r["metric"] != "throughput" and r["night"] >= since]
    print(f"\n{a.alloc} throughput confirmed regression: {'yes' if mine else 'NO'}; other configurations "
          f"confirmed in the shim's nights: {len(others)}; other metrics of {a.alloc}: "
          f"{', '.join(sorted({r['metric'] for r in mine_other})) or 'none'}")
    print(f"site: {site}/index.html; latest night {latest}")
    return 0 if mine and not others else 1


if __name__ == "__main__":
    sys.exit(main())
