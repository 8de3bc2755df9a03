#!/usr/bin/env python3
"""test_api.py - the Python API (docs/python.md): the notebook-style example
docs/examples/api.py runs start to end on a fixture with the harness (its last cell measures a
region of a Python program under `mallocbench exec`); load().to_pandas() agrees with the rows
and says which package is missing where pandas is (a stub shadows it); compare() refuses an
unknown baseline or metric by name; region() is a no-op outside the harness, refuses nesting,
and names a bad MB_SYNC_FD.  Usage: test_api.py MALLOCBENCH FIXTURE.csv"""
import os
import subprocess
import sys
import tempfile

from mbtest import FAILS, check

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts")


def py(code, env=None):
    e = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [env and env.pop("PATH_FIRST", None), SCRIPTS] if p))
    e.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=300)


def main():
    mb, fixture = sys.argv[1], os.path.abspath(sys.argv[2])
    p = subprocess.run([sys.executable, os.path.join(ROOT, "docs", "examples", "api.py"), fixture, mb],
                       capture_output=True, text=True, timeout=600, cwd=ROOT,
                       env=dict(os.environ, PYTHONPATH=SCRIPTS))
    check(p.returncode == 0, f"docs/examples/api.py: exit {p.returncode}: {p.stderr[-800:]!r}")
    check("measured region" in p.stdout and "nested:" in p.stdout,
          f"the example ran every cell, the region's too: {p.stdout[-500:]!r}")

    # to_pandas: the rows, numbers as numbers; without pandas, the package named
    q = py("import mallocbench, math\n"
           f"run = mallocbench.load({fixture!r})\n"
           "try:\n"
           "    df = run.to_pandas()\n"
           "except ImportError as e:\n"
           "    print('missing', e); raise SystemExit(0)\n"
           "assert len(df) == len(run.rows), (len(df), len(run.rows))\n"
           "assert df.throughput.dtype.kind == 'f' and df.workload.dtype == object\n"
           "r = run.rows[0]\n"
           "assert math.isclose(df.throughput.iloc[0], float(r['throughput']))\n"
           "print('frame', len(df), sorted(set(df.work_unit)))\n")
    check(q.returncode == 0 and ("frame" in q.stdout or "python3-pandas" in q.stdout),
          f"to_pandas: {q.stdout!r} {q.stderr[-400:]!r}")
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "pandas.py"), "w") as f:
            f.write("raise ModuleNotFoundError(\"No module named 'pandas'\", name='pandas')\n")
        q = py("import mallocbench\n"
               f"run = mallocbench.load({fixture!r})\n"
               "try:\n"
               "    run.to_pandas()\n"
               "except ImportError as e:\n"
               "    print(e)\n", env={"PATH_FIRST": tmp})
        check("pandas is missing: apt-get install python3-pandas" in q.stdout, f"no pandas: {q.stdout!r} {q.stderr!r}")

    # compare: unknown baseline or metric, by name
    q = py("import mallocbench\n"
           "for kw in ({'baseline': 'nope'}, {'metrics': ['faults_per_gb']}):\n"
           "    try:\n"
           f"        mallocbench.compare({fixture!r}, **kw)\n"
           "    except ValueError as e:\n"
           "        print('refused:', e)\n")
    check("refused: no configuration 'nope'" in q.stdout and "refused: unknown metric 'faults_per_gb'" in q.stdout,
          f"compare refuses by name: {q.stdout!r} {q.stderr[-300:]!r}")

    # region: a no-op by hand, no nesting (from another thread too), a bad descriptor named
    q = py("import threading, mallocbench\n"
           "with mallocbench.region():\n"
           "    err = []\n"
           "    def enter():\n"
           "        try:\n"
           "            with mallocbench.region():\n"
           "                pass\n"
           "        except mallocbench.RegionError as e:\n"
           "            err.append(str(e))\n"
           "    t = threading.Thread(target=enter); t.start(); t.join()\n"
           "    print('other thread:', err)\n"
           "with mallocbench.region():\n"
           "    print('again: ok')\n", env={"MB_SYNC_FD": ""})
    check("other thread: ['mallocbench.region() entered while a region is open" in q.stdout and "again: ok" in q.stdout,
          f"region: no nesting from any thread, then free again: {q.stdout!r} {q.stderr[-300:]!r}")
    q = py("import mallocbench\n"
           "try:\n"
           "    with mallocbench.region():\n"
           "        pass\n"
           "except mallocbench.RegionError as e:\n"
           "    print(e)\n", env={"MB_SYNC_FD": "x"})
    check("MB_SYNC_FD='x' is not a descriptor number" in q.stdout, f"a bad MB_SYNC_FD: {q.stdout!r}")
    q = py("import sys, mallocbench\nprint(sorted(m for m in sys.modules if m.startswith('mallocbench')))")
    check(q.stdout.strip() == "['mallocbench', 'mallocbench.region']",
          f"import mallocbench loads only the region: {q.stdout!r}")
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
