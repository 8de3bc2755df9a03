"""mbtest.py - what the Python tests share: checks that count failures and
print both sides, running the harness, reading its CSV by column name, the
installed allocators, and a main that runs one case (exit 1 on a failed
check, 77 when the case skips)."""
import csv
import os
import subprocess
import sys
import tempfile

SKIP = 77
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, file=sys.stderr)


def check_eq(got, want, what):
    check(got == want, f"{what}: got {got!r}, expected {want!r}")


def run(mb, *args, expect_rc=0):
    """Run the harness; check its exit code unless expect_rc is None."""
    p = subprocess.run([mb, *args], capture_output=True, text=True, timeout=600)
    if expect_rc is not None and p.returncode != expect_rc:
        print(p.stdout, p.stderr, file=sys.stderr)
    if expect_rc is not None:
        check(p.returncode == expect_rc, f"{' '.join(args)}: exit {p.returncode}, expected {expect_rc}")
    return p


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def installed(mb):
    out = run(mb, "list", "allocators").stdout.splitlines()[1:]
    return [l.split()[0] for l in out if len(l.split()) > 1 and l.split()[1] == "yes"]


def metrics(r):
    """workload_metrics "name=value;name=value" as a dict of strings."""
    return dict(kv.split("=", 1) for kv in r.get("workload_metrics", "").split(";") if "=" in kv)


def main(cases):
    """argv: MALLOCBENCH [CASE]; runs case_CASE (or the only one) in a temp dir."""
    mb = sys.argv[1]
    if not os.access(mb, os.X_OK):
        print(f"SKIP: no harness at {mb}", file=sys.stderr)
        return SKIP
    name = sys.argv[2] if len(sys.argv) > 2 else next(iter(cases))
    if name not in cases:  # tests/meson.build registers a smoke per command of cli.h's table
        print(f"FAIL: no case_{name} in {sys.argv[0]} (cases: {', '.join(cases)})", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        cases[name](mb, tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    return 0
