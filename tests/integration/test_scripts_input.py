#!/usr/bin/env python3
"""test_scripts_input.py - every script that reads a run CSV (compare, summary,
report, plots) refuses bad input the same way, through scripts/mallocbench/mbcsv.py: one
line on stderr (`mallocbench: NAME: `, cli.Fail) naming the file and the row, exit 2, no traceback.  Bad inputs
are made from FIXTURE.csv: a byte that is not UTF-8, a 200 KiB field, a
truncated row, an extra field, nan/inf/junk in a number column, another
schema_version.  Also mbcsv's parser on its own, and its column table against
harness/output/csv.h.  Usage: test_scripts_input.py FIXTURE.csv (exit 77 = plots.py
could not be tested: no python3 with matplotlib and numpy)."""
import csv
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(HERE, "..", "scripts")
from mbtest import FAILS, check, check_eq, entry  # noqa: E402
# the scripts' entries may run in this process (outcome) where it has what they import
IN_PROCESS = all(importlib.util.find_spec(m) for m in ("scipy", "numpy", "matplotlib"))


def has_matplotlib(python):
    return subprocess.run([python, "-c", "import matplotlib, numpy"], capture_output=True).returncode == 0


def test_parser():
    """mbcsv on its own: numbers, empty cells, the column table, row numbers."""
    try:
        from mallocbench import mbcsv
    except ImportError as e:
        check(False, f"scripts/mallocbench/mbcsv.py: {e}")
        return
    for text, want in (("", None), ("0", 0.0), ("1.29904e+10", 1.29904e10), ("-3.5", -3.5), ("7", 7.0)):
        check_eq(mbcsv.parse_number(text), want, f"parse_number({text!r})")
    for text in ("nan", "NaN", "inf", "-inf", "Infinity", "1e999", "12abc", "1,5", "0x10", " ", "-"):
        try:
            mbcsv.parse_number(text)
            check(False, f"parse_number({text!r}) refused")
        except ValueError:
            pass
    check_eq(mbcsv.num({"x": ""}, "x"), None, "num: an empty cell is not measured, not 0")
    check_eq(mbcsv.num({}, "x"), None, "num: an absent column is not measured")
    try:
        mbcsv.num(mbcsv.Row({"x": "nan"}, "f.csv", 4), "x")
        check(False, "num of a 'nan' cell raises")
    except mbcsv.CsvError as e:
        check_eq(str(e), "f.csv: row 4: x 'nan' is not a finite number of magnitude 0 or 1e-100..1e+100", "num's message")
    # the schema the scripts read is the harness's (`mallocbench schema --json`, build/schema.json):
    # the names and types of harness/output/csv.h CSV_COLUMNS, in order
    with open(os.path.join(HERE, "..", "harness", "output", "csv.h")) as f:
        table = re.findall(r"^\s+X\((\w+), CSV_(NUM|TEXT),", f.read(), re.M)
    names = [n for n, _ in table]
    check(len(names) > 50, f"csv.h's table read: {len(names)} columns")
    check_eq([c for c, _ in mbcsv.COLUMNS], names, "mbcsv.COLUMNS against harness/output/csv.h")
    check_eq([k for _, k in mbcsv.COLUMNS], [mbcsv.NUM if t == "NUM" else mbcsv.TEXT for _, t in table],
             "the column types against harness/output/csv.h")

    S = mbcsv.SCHEMA
    def line(**cells):
        return ",".join(cells.get(c, "") for c in names) + "\n"
    full = ",".join(names) + "\n"
    try:
        _, rows = mbcsv.parse(full + line(schema_version=S, throughput="1.5") + "\n" + line(schema_version=S),
                              "t.csv")
        check_eq([(r.row, mbcsv.num(r, "throughput")) for r in rows], [(1, 1.5), (3, None)],
                 "rows numbered from 1, a blank line counted, an empty number kept as not measured")
    except mbcsv.CsvError as e:
        check(False, f"parse of a valid table: {e}")
    try:
        mbcsv.parse(f"schema_version,throughput\n{S},1\n", "t.csv")
        check(False, "a header without the schema's columns refused")
    except mbcsv.CsvError as e:
        check_eq(str(e), f"t.csv: header: no column run_id (schema_version {S} has it)", "a header lacking columns")
    hdr = "schema_version,a,throughput\n"
    for text, want in ((hdr + f"{S},x,1\n{S},y\n", "t.csv: row 2: 2 fields, the header has 3"),
                       (hdr + f"{S},x,1,9\n", "t.csv: row 1: 4 fields, the header has 3"),
                       (hdr + f"{S},x,1\n2,y,1\n", f"t.csv: row 2: schema_version 2; these scripts read {S}"),
                       ("a,b\n1,2\n", "t.csv: not a mallocbench CSV (no schema_version column)"),
                       ("", "t.csv: not a mallocbench CSV (no schema_version column)")):
        try:
            mbcsv.parse(text, "t.csv")
            check(False, f"parse({text!r}) refused")
        except mbcsv.CsvError as e:
            check_eq(str(e), want, f"parse({text!r})")
    for data, want in ((b"schema_version\n3\n\xff\n", "t.csv: row 2:"), (b"sch\xe9ma\n", "t.csv: header:"),
                       (b'schema_version,m\n3,"a\nb\xff"\n', "t.csv: row 1:")):
        try:
            mbcsv.decode(data, "t.csv")
            check(False, f"decode({data!r}) refused")
        except mbcsv.CsvError as e:
            check(str(e).startswith(want) and "not UTF-8" in str(e), f"decode({data!r}): {e}")


def variants(fixture, tmp):
    """{name: (path, row, what the message says)} of bad copies of the fixture."""
    with open(fixture, "rb") as f:
        raw = f.read()
    with open(fixture, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    out = {}

    def write(name, edit, row, says):
        rs = [list(r) for r in rows]
        edit(rs)
        path = os.path.join(tmp, name + ".csv")
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rs)
        out[name] = (path, row, says)

    def cell(r, col, v):
        return lambda rs: rs[r].__setitem__(head.index(col), v)

    lines = raw.split(b"\n")
    lines[5] = lines[5].replace(b",vm,", b",v\xe9m,", 1)  # Latin-1, not UTF-8
    path = os.path.join(tmp, "latin1.csv")
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))
    out["latin1"] = (path, 5, "not UTF-8")
    write("big_field", cell(3, "message", "x" * (200 * 1024)), 3, "message is 204800 characters long")
    write("truncated", lambda rs: rs.__setitem__(17, rs[17][:12]), 17, f"12 fields, the header has {len(head)}")
    write("extra_field", lambda rs: rs[9].append("1"), 9, f"{len(head) + 1} fields, the header has {len(head)}")
    write("nan", cell(5, "throughput", "nan"), 5, "throughput 'nan' is not a finite number")
    write("inf", cell(6, "rss_peak_kib", "inf"), 6, "rss_peak_kib 'inf' is not a finite number")
    write("minus_inf", cell(7, "region_sys_s", "-inf"), 7, "region_sys_s '-inf' is not a finite number")
    write("junk", cell(8, "region_minor_faults", "12abc"), 8, "region_minor_faults '12abc' is not a finite number")
    write("schema_2", cell(4, "schema_version", "2"), 4, "schema_version 2")
    return out


def outcome(cmd, first):
    """(exit status, stderr) of the script command cmd ([python, scripts/NAME.py, ARGS...]): the
    first input of each script as a process of its own (its shim, its interpreter, its exit, the
    re-run under Debian's python3 where that interpreter lacks scipy), the others with its entry
    run in this process where this interpreter has all the scripts need (cli.run, as the shim
    runs it: the same code and lines, without a Python start and a scipy or matplotlib import
    per input); an exception that escapes is its traceback on stderr, as in a process."""
    if first or not IN_PROCESS:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        return p.returncode, p.stderr
    rc, _, err = entry(*cmd[1:])
    return rc, err


def test_scripts(fixture, tmp, plot_python):
    """Each bad input through each script: exit 2, one line naming file and row, no traceback."""
    py = shutil.which("python3") or sys.executable  # what a user's `python3 scripts/NAME.py` runs
    out = os.path.join(tmp, "out")
    cmds = {
        "compare": lambda p: [py, os.path.join(SCRIPTS, "compare.py"), p],
        "summary": lambda p: [py, os.path.join(SCRIPTS, "summary.py"), p],
        "report --no-plots": lambda p: [py, os.path.join(SCRIPTS, "report.py"), p, "-o", out, "--no-plots"],
        "frameworks": lambda p: [py, os.path.join(SCRIPTS, "frameworks.py"), p, "-o", os.path.join(out, "report.md"),
                                 "--force"],
    }
    if plot_python:
        cmds["plots"] = lambda p: [plot_python, os.path.join(SCRIPTS, "plots.py"), p, "-o", out]
        cmds["report"] = lambda p: [plot_python, os.path.join(SCRIPTS, "report.py"), p, "-o", out]
    for i, (case, (path, row, says)) in enumerate(variants(fixture, tmp).items()):
        for name, cmd in cmds.items():
            rc, stderr = outcome(cmd(path), i == 0)
            what = f"{name} on {case}"
            lines = stderr.strip().splitlines()
            check_eq(rc, 2, f"{what}: exit status (stderr: {stderr.strip()[-300:]!r})")
            check("Traceback" not in stderr, f"{what}: a traceback")
            check_eq(len(lines), 1, f"{what}: lines on stderr")
            check(lines[:1] and lines[0].startswith(f"mallocbench: {name.split()[0]}: "),
                  f"{what}: the line starts 'mallocbench: {name.split()[0]}: ' (cli.Fail): {lines[:1]!r}")
            check(f"{path}: row {row}: " in stderr and says in stderr,
                  f"{what}: the message names {path}, row {row} and says {says!r}: {stderr.strip()[:300]!r}")
        if os.path.exists(os.path.join(out, "report.md")):
            check(False, f"{case}: a report written from bad input")
            shutil.rmtree(out)
    # an empty number is "not measured", as before: accepted.  The run is the emptied row's own
    # workload (every configuration's rows of it): an empty cell reaches only the tables and
    # figures of its workload, and drawing the fixture's other five workloads again (plots, and
    # report with plots) took 20 of this test's 26 s
    path = os.path.join(tmp, "empty.csv")
    with open(fixture, newline="") as f:
        rows = list(csv.reader(f))
    head, emptied = rows[0], rows[5]
    emptied[head.index("throughput")] = ""
    group = [head.index("workload"), head.index("workload_params")]
    rows = [head] + [r for r in rows[1:] if [r[i] for i in group] == [emptied[i] for i in group]]
    check(len({r[head.index("config")] for r in rows[1:]}) > 1 and emptied in rows,
          f"empty.csv: the emptied row among its workload's configurations: {len(rows) - 1} rows")
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    for name, cmd in cmds.items():
        rc, stderr = outcome(cmd(path), False)
        check_eq(rc, 0, f"{name} with an empty throughput cell: exit status ({stderr.strip()[-300:]!r})")


def main():
    if len(sys.argv) != 2:
        print("usage: test_scripts_input.py FIXTURE.csv", file=sys.stderr)
        return 2
    fixture = os.path.abspath(sys.argv[1])
    plot_python = next((p for p in (sys.executable, "/usr/bin/python3") if has_matplotlib(p)), None)
    tmp = tempfile.mkdtemp(prefix="test_scripts_input.")
    try:
        test_parser()
        test_scripts(fixture, tmp, plot_python)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    if not plot_python:
        print("skip: plots.py and report.py with plots untested (no python3 with matplotlib and numpy)")
        return SKIP
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
