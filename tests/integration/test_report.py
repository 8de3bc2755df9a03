#!/usr/bin/env python3
"""test_report.py - report.py renders from a fixture CSV: the report exists,
has its sections, and its "what this shows" says what the fixture holds (glibc
re-faults from 256K, jemalloc from 16M, dirty_decay_ms=-1 removes the faults).
Without matplotlib (or numpy) it writes nothing and says in one line which
Debian package to install, exit 1, unless --no-plots (plots.py too, without
the --no-plots); the missing module is simulated by a stub earlier on
PYTHONPATH.  The scripts a user is told to run are executable.  The baseline
is the run's first configuration (tests/fixtures/new-families.csv: scudo)
unless --baseline names another; an unknown one is one line.  The report with
its plots, run by its shebang, is test_plots.py's (its figures are that test's
second drawing).  Usage: test_report.py FIXTURE.csv (exit 77 = no python3
with matplotlib here, so a missing numpy was not simulated)."""
import os
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(HERE, "..", "scripts")
REPORT = os.path.join(SCRIPTS, "report.py")
NEEDLES = ("# mallocbench report", "## What this shows", "## Summary", "## Plots",
           "## Statistics against the baseline", "glibc re-faults from 256K",
           "jemalloc re-faults from 16M", "removes 100% of the faults")
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what, file=sys.stderr)


def has_matplotlib(python):
    return subprocess.run([python, "-c", "import matplotlib, numpy"], capture_output=True).returncode == 0


def run(cmd, env=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                              env=dict(os.environ, **(env or {})))
    except OSError as e:  # not executable
        return subprocess.CompletedProcess(cmd, 126, "", f"{cmd[0]}: {e.strerror}")


def rendered(out, what):
    """The report in out, checked for its sections; '' when missing."""
    path = os.path.join(out, "report.md")
    if not os.path.exists(path):
        check(False, f"{what}: no report.md")
        return ""
    with open(path) as f:
        text = f.read()
    for needle in NEEDLES:
        check(needle in text, f"{what}: report lacks {needle!r}")
    csv_out = os.path.join(out, "compare.csv")
    check(os.path.exists(csv_out) and os.path.getsize(csv_out), f"{what}: compare.csv")
    return text


def main():
    fixture = os.path.abspath(sys.argv[1])
    # an interpreter with matplotlib, so that the stubs below are what makes the import fail
    python = next((p for p in ("/usr/bin/python3", sys.executable) if has_matplotlib(p)), None)
    for name in ("report.py", "compare.py", "summary.py", "plots.py"):
        path = os.path.join(SCRIPTS, name)
        check(os.access(path, os.X_OK), f"{name} is executable")
        with open(path) as f:
            first = f.readline().strip()
        want = "#!/usr/bin/python3" if name in ("report.py", "plots.py") else "#!/usr/bin/env python3"
        check(first == want, f"{name}: shebang {first!r}, expected {want!r}")

    with tempfile.TemporaryDirectory() as tmp:
        # import matplotlib (or numpy) fails: stubs earlier on the path than the real modules
        stubs = {}
        for mod in ("matplotlib", "numpy"):
            stubs[mod] = os.path.join(tmp, "no-" + mod)
            os.mkdir(stubs[mod])
            with open(os.path.join(stubs[mod], mod + ".py"), "w") as f:
                f.write(f"raise ModuleNotFoundError(\"No module named '{mod}'\", name={mod!r})\n")
        for mod, pkg in (("matplotlib", "python3-matplotlib"), ("numpy", "python3-numpy")):
            if mod == "numpy" and not python:
                continue  # without matplotlib, matplotlib is what is missing
            out = os.path.join(tmp, "missing-" + mod)
            p = run([python or sys.executable, REPORT, fixture, "-o", out], {"PYTHONPATH": stubs[mod]})
            what = f"without {mod}"
            check(p.returncode == 1, f"{what}: exit status {p.returncode}, expected 1 ({p.stderr.strip()[-300:]!r})")
            check("Traceback" not in p.stderr, f"{what}: a traceback")
            check(len(p.stderr.strip().splitlines()) == 1, f"{what}: one line on stderr: {p.stderr!r}")
            check(f"{mod} is missing: apt-get install {pkg}" in p.stderr and "--no-plots" in p.stderr,
                  f"{what}: the line names the package and --no-plots: {p.stderr.strip()!r}")
            check(not os.path.exists(os.path.join(out, "report.md")), f"{what}: a report written anyway")
            p = run([python or sys.executable, os.path.join(SCRIPTS, "plots.py"), fixture, "-o", out],
                    {"PYTHONPATH": stubs[mod]})
            check(p.returncode == 1 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
                  and f"{mod} is missing: apt-get install {pkg}" in p.stderr,
                  f"plots.py {what}: exit 1 and one line naming {pkg}: {p.returncode} {p.stderr.strip()[-300:]!r}")

        out = os.path.join(tmp, "no-plots")
        p = run([sys.executable, REPORT, fixture, "-o", out, "--no-plots"], {"PYTHONPATH": stubs["matplotlib"]})
        check(p.returncode == 0, f"--no-plots without matplotlib: exit status {p.returncode} ({p.stderr.strip()!r})")
        text = rendered(out, "--no-plots")
        check("Not drawn (--no-plots)." in text, "--no-plots: the report says the plots were not asked for")
        check(not os.path.exists(os.path.join(out, "plots.json")), "--no-plots: no plots drawn")

        # the baseline: the run's first configuration (new-families.csv lists scudo first), or --baseline
        nf = os.path.join(os.path.dirname(fixture), "new-families.csv")
        for extra, want in (([], "scudo"), (["--baseline", "glibc"], "glibc")):
            out = os.path.join(tmp, "baseline-" + want)
            p = run([sys.executable, REPORT, nf, "-o", out, "--no-plots"] + extra)
            path = os.path.join(out, "report.md")
            text = open(path).read() if os.path.exists(path) else ""
            check(p.returncode == 0 and f"Each configuration against {want}," in text and f"| vs {want} |" in text,
                  f"report {' '.join(extra) or '(no --baseline)'}: against {want} ({p.stderr.strip()[-300:]!r})")
        out = os.path.join(tmp, "baseline-nope")
        p = run([sys.executable, REPORT, nf, "-o", out, "--no-plots", "--baseline", "nope"])
        check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "'nope'" in p.stderr
              and not os.path.exists(out), f"report --baseline nope: one line, nothing written: {p.stderr!r}")
    if fails:
        return 1
    if not python:
        print("skip: no python3 with matplotlib and numpy: a missing numpy was not simulated")
        return SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
