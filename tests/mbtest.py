"""mbtest.py - what the Python tests share: checks that count failures and
print both sides, running the harness, running a script's entry in the test's process, reading its CSV by column name, the
installed allocators, and a main that runs one case (exit 1 on a failed
check, 77 when the case skips)."""
import contextlib
import csv
import importlib
import io
import os
import re
import subprocess
import sys
import tempfile
import traceback

SKIP = 77
# a block disturbed from outside is measured again (harness/plan/remeasure.h): on a machine other
# tests load that is any block, so the harness the tests start never does, and their rows are as planned
os.environ.setdefault("MALLOCBENCH_REMEASURE", "0")
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


def entry(script, *args):
    """(exit status, stdout, stderr) of `python3 scripts/NAME.py ARGS` with its entry run in this
    process, as its shim runs it (cli.run, sys.argv as the process would have it): the same code
    and lines without a Python start and a scipy or matplotlib import per call.  An exception
    that escapes is its traceback on stderr and status 1, as in a process.  The caller's
    interpreter must have what the script imports (a script that lacks scipy runs itself
    again under Debian's python3, which would replace this process)."""
    from mallocbench import cli
    mod = importlib.import_module("mallocbench." + os.path.basename(script)[:-3])
    out, err, argv = io.StringIO(), io.StringIO(), sys.argv
    sys.argv = [script, *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.run(mod.main)
            except SystemExit as e:  # argparse's --help and usage errors: the status a process ends with
                rc = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            except BaseException:  # noqa: B902 (what a process would die of, traceback and all)
                traceback.print_exc()
                rc = 1
    finally:
        sys.argv = argv
    return rc, out.getvalue(), err.getvalue()


def thp_word(name):
    """The bracketed word of /sys/kernel/mm/transparent_hugepage/NAME ("enabled", "defrag"), as
    the harness reads it (tree_thp_word), or "" without THP."""
    try:
        with open(os.path.join("/sys/kernel/mm/transparent_hugepage", name)) as f:
            text = f.read()
    except OSError:
        return ""
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else text.strip()


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
