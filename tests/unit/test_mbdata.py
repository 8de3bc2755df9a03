#!/usr/bin/env python3
"""test_mbdata.py - the scripts' data layer (scripts/mallocbench/mbdata.py) on its own: workload_params
parsed as the harness writes them (a WLP_TEXT `cmd=` value holds commas and runs to the end),
the metric registry's formulas, configurations from their columns, the presentation traits
read from the sidecar (none, and names sorted, for a sidecar without `workloads`), and the
schema from `mallocbench schema --json` (a missing one is one line, exit 2); the pure helpers of
issue 18 (NIGHT, text shown as text in Markdown, a sample counted once).
Usage: test_mbdata.py FIXTURE.csv [HARNESS] (with HARNESS, also the schema from
`HARNESS schema --json` for scripts far from any schema.json)."""
import json
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(HERE, "..", "scripts")
from mbtest import FAILS, check, check_eq  # noqa: E402
from mallocbench import mbdata


def test_params():
    P = mbdata.parse_params
    check_eq(P("size=16M,count=2"), [("size", "16M"), ("count", "2")], "plain params")
    check_eq(P(""), [], "no params")
    # the exec workload: metric, unit, better, then cmd last; its value runs to the end
    text = "metric=,unit=,better=higher,cmd=sh -c 'a, b'"
    check_eq(P(text), [("metric", ""), ("unit", ""), ("better", "higher"), ("cmd", "sh -c 'a, b'")],
             "cmd= holding a comma")
    check_eq(mbdata.param_of(text, "cmd"), "sh -c 'a, b'", "param_of cmd")
    check_eq(mbdata.param_of(text, "better"), "higher", "param_of before cmd")
    check_eq(P("metric=,unit=,better=lower,cmd=env A=1,B=2 prog x,y=z"),
             [("metric", ""), ("unit", ""), ("better", "lower"), ("cmd", "env A=1,B=2 prog x,y=z")],
             "cmd= holding ',NAME=' runs to the end")
    check_eq(P("size=1M/4M,seed=1"), [("size", "1M/4M"), ("seed", "1")], "a list value")
    check_eq(P("a=1,x y,b=2"), [("a", "1,x y"), ("b", "2")], "a part that is not NAME= continues the value")
    check_eq(mbdata.params_without("size=16M,count=2,seed=1", "size"), "count=2,seed=1", "params_without")
    check_eq(mbdata.format_params(P(text)), text, "format_params inverts parse_params")
    check_eq(mbdata.parse_size("16M"), 16 << 20, "parse_size")
    check(mbdata.size_key("256K") < mbdata.size_key("4M"), "size_key orders sizes")


def test_metrics():
    r = {"region_minor_faults": "4096", "region_bytes": str(16 << 20), "region_user_s": "1", "region_sys_s": "3",
         "rss_peak_kib": "2048", "throughput": "5", "region_wall_s": "2", "region_madvise_calls": "10"}
    check_eq(mbdata.faults_per_mib(r), 256.0, "faults per MiB: every page of 16 MiB")
    check_eq(mbdata.METRIC["faults"].fn(r), 256.0, "faults per unit of work: per MiB where bytes are known")
    check_eq(mbdata.work(r), (16.0, "MiB"), "work: the MiB the workload touches")
    check_eq(mbdata.sys_share(r), 0.75, "sys share")
    check_eq(mbdata.sys_share(dict(r, region_task_clock_s="0.05")), None,
             "sys share of a region under 0.2 s of task clock: none (clock ticks)")
    check_eq(mbdata.METRIC["peak_rss"].fn(r), 2.0, "peak RSS in MiB")
    check_eq(mbdata.METRIC["madvise"].fn(r), 10 / 16, "madvise calls per MiB")
    cmd = {"region_madvise_calls": "79", "throughput": "2.5", "throughput_unit": "runs/s", "region_wall_s": "0.4"}
    check_eq((mbdata.work(cmd), mbdata.METRIC["madvise"].fn(cmd)), ((1.0, "run"), 79.0), "a command: per run")
    # a program that runs for a set time: per unit of its own figure, so more work is not more cost
    loop = {"region_user_s": "3", "throughput": "200", "throughput_unit": "loops/s", "region_wall_s": "3"}
    check_eq(mbdata.work(loop), (600.0, "loop"), "a rate figure: per unit of it (200 loops/s x 3 s)")
    check_eq(mbdata.METRIC["user_cpu"].fn(loop), 3 / 600, "user CPU per loop")
    share = {"throughput": "0.9", "throughput_unit": "fraction", "region_wall_s": "0.4", "region_brk_calls": "2"}
    check_eq((mbdata.work(share), mbdata.METRIC["brk"].fn(share)), ((1.0, "sample"), 2.0), "a share: per sample")
    check_eq(mbdata.faults_per_mib({"region_minor_faults": "3", "region_bytes": ""}), None,
             "no bytes: not measured, not 0")
    check_eq(mbdata.cpu_seconds({"total_user_s": "1", "total_sys_s": "1", "region_user_s": "0.5",
                                 "region_sys_s": "0"}, {"idle_region"}), 2.0, "idle_region: whole-process CPU")
    keys = [m.key for m in mbdata.METRICS]
    check_eq(len(keys), len(set(keys)), "metric keys are unique")
    for m in mbdata.METRICS:
        check(m.better in (None, "higher", "lower") and m.kind in ("timing", "count", "size"), f"metric {m.key}")


def copy_run(fixture, dst, edit=None):
    shutil.copy(fixture, dst)
    meta = mbdata.read_meta(fixture)
    if edit:
        edit(meta)
    with open(mbdata.sidecar(dst, ".meta.json"), "w") as f:
        json.dump(meta, f)
    return dst


def test_run(fixture, tmp):
    run = mbdata.load(fixture)
    check(run.ok and len(run.ok) == len(run.rows), "every fixture row ok")
    check_eq(run.traits("idle_release"), frozenset({"idle_region", "trade_off"}), "traits from the sidecar")
    check_eq(run.with_trait("size_curve"), ["tensor_copy"], "size_curve workloads")
    check(run.workload_rank("tensor_copy") < run.workload_rank("arena_churn"), "registry order from the sidecar")
    cfg = run.configs["jemalloc[dirty_decay_ms=-1]"]
    check_eq((cfg.family, cfg.tunables), ("jemalloc", "dirty_decay_ms=-1"), "a configuration from its columns")
    check_eq(run.family_default(cfg.name), "jemalloc", "its family's defaults")
    check_eq(run.family_default("glibc"), None, "a default has no default")
    curves = run.curves()
    check_eq(len(curves), 1, "one size curve")
    check(run.rss, "the RSS series read")
    # an older sidecar without `workloads`: no traits, workloads by name
    old = copy_run(fixture, os.path.join(tmp, "old.csv"), lambda m: m.pop("workloads", None))
    run = mbdata.load(old)
    check_eq(run.traits("idle_release"), frozenset(), "no workloads in the sidecar: no traits")
    check_eq(run.curves(), {}, "no size_curve trait: no curve")
    check(run.workload_rank("arena_churn") < run.workload_rank("tensor_copy"), "no order given: by name")


def test_schema(fixture, tmp):
    """No schema to be found: one line naming what to do, exit 2, no traceback."""
    env = dict(os.environ, MB_SCHEMA=os.path.join(tmp, "missing.json"))
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "summary.py"), fixture], capture_output=True,
                       text=True, env=env)
    check_eq(p.returncode, 2, "no schema: exit 2")
    check(p.stderr.count("\n") == 1 and "schema" in p.stderr and "Traceback" not in p.stderr,
          f"no schema: one line: {p.stderr!r}")


def test_harness_schema(fixture, tmp, harness):
    """Scripts copied where no schema.json lies beside them or in build/: the harness named by
    MB_HARNESS (as `mallocbench compare` sets it) gives the schema."""
    copy = os.path.join(tmp, "lone", "scripts")
    os.makedirs(os.path.join(copy, "mallocbench"))
    for f in sorted(os.listdir(os.path.join(SCRIPTS, "mallocbench"))):  # the package's modules, whatever they are
        if f.endswith(".py"):
            shutil.copy(os.path.join(SCRIPTS, "mallocbench", f), os.path.join(copy, "mallocbench"))
    shutil.copy(os.path.join(SCRIPTS, "summary.py"), copy)
    env = {k: v for k, v in os.environ.items() if k not in ("MB_SCHEMA", "PYTHONPATH")}
    p = subprocess.run([sys.executable, os.path.join(copy, "summary.py"), fixture], capture_output=True, text=True,
                       env=env)
    check(p.returncode == 2 and "no CSV schema" in p.stderr, f"no schema anywhere: {p.returncode} {p.stderr!r}")
    env["MB_HARNESS"] = harness
    p = subprocess.run([sys.executable, os.path.join(copy, "summary.py"), fixture], capture_output=True, text=True,
                       env=env)
    check(p.returncode == 0 and "tensor_copy" in p.stdout, f"schema from MB_HARNESS: {p.returncode} {p.stderr!r}")


def test_text():
    """The pure helpers of issue 18: NIGHT, text shown as text, one sample once."""
    check_eq(str(mbdata.parse_night("2024-02-29")), "2024-02-29", "parse_night: a leap day")
    for bad in ("2026-13-45", "9999-99-99", "2025-02-29", "2026-11-01\n", "2026-11-01 ", "26-11-01",
                "\u0662\u0660\u0662\u0666-11-01", "2026/11/01", None):
        try:
            mbdata.parse_night(bad)
            check(False, f"parse_night({bad!r}) accepted")
        except ValueError:
            pass
    import datetime
    today = datetime.date(2026, 12, 3)
    check(not mbdata.night_in_future("2026-12-04", today), "tomorrow is not the future")
    check(mbdata.night_in_future("2026-12-05", today), "the day after tomorrow is")
    check_eq(mbdata.night_of_file("2026-11-01.rss.csv"), None, "night_of_file: a sidecar")
    check_eq(mbdata.night_of_file("notes.csv"), None, "night_of_file: another CSV")
    check_eq(mbdata.night_of_file("2026-11-01.csv"), "2026-11-01", "night_of_file")
    check_eq(mbdata.printable("a\x1b[1m\nb\x85"), "a\\x1b[1m\\x0ab\\x85", "printable")
    check_eq(mbdata.md_text("jemalloc[dirty_decay_ms=-1] < 0.8%"), "jemalloc[dirty_decay_ms=-1] < 0.8%",
             "md_text leaves ordinary labels alone")
    check_eq(mbdata.md_text("[a](z)|`x`*<b>&"), "[a\\](z)\\|\\`x\\`\\*\\<b\\>\\&", "md_text escapes markup")
    check_eq(mbdata.md_alt("t [a](z)"), "t \\[a\\](z)", "md_alt escapes brackets")
    check_eq(mbdata.md_code("a``b"), "```a``b```", "md_code: a longer fence")
    check_eq(mbdata.md_code("`a"), "`` `a ``", "md_code: padded where the text starts with a backtick")
    rows = [mbdata.mbcsv.Row({"run_id": "r", "sample": s}, "f.csv", i + 1) for i, s in enumerate("010")]
    try:
        mbdata.check_unique(rows)
        check(False, "check_unique: a sample twice accepted")
    except mbdata.mbcsv.CsvError as e:
        check_eq(str(e), "f.csv: row 3: run 'r' sample '0' again (first at f.csv: row 1); each sample counts once",
                 "check_unique's message")


def test_peak_memory():
    """A command's or server's memory is its tree's PSS where read, a workload's its RSS; the
    wording says which (issue 29, finding 8)."""
    cmd = {"rss_peak_kib": "2048", "tree_pss_peak_kib": "204800"}
    wl = {"rss_peak_kib": "10240", "tree_pss_peak_kib": ""}
    check_eq((mbdata.peak_memory_mib(cmd), mbdata.peak_memory_mib(wl)), (200.0, 10.0), "peak_memory_mib")
    check_eq((mbdata.peak_rss_mib(cmd), mbdata.tree_pss_mib(wl)), (2.0, None), "each figure on its own")
    check_eq((mbdata.peak_memory_name([cmd, wl]), mbdata.peak_memory_name([wl])),
             ("peak PSS of the process tree", "peak RSS"), "peak_memory_name")


def test_reader(fixture, tmp):
    """mbcsv refuses a row of another schema_version wherever it is, and a number whose
    magnitude is past NUM_MAX whatever its sign."""
    with open(fixture, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\n").split(",")
    sv = header.index("schema_version")
    other = lines[2].split(",")
    other[sv] = str(int(other[sv]) - 1)
    bad = "".join(lines[:2]) + ",".join(other) + "".join(lines[3:])
    try:
        mbdata.mbcsv.parse(bad, "old.csv")
        check(False, "a second row of another schema_version is refused")
    except mbdata.mbcsv.CsvError as e:
        check("row 2" in str(e) and "schema_version" in str(e), f"refused naming row 2: {e}")
    for v in ("1e300", "-1e300", "1e-300", "-1e-300"):
        try:
            mbdata.mbcsv.parse_number(v)
            check(False, f"{v} refused as out of range")
        except ValueError:
            pass
    check_eq(mbdata.mbcsv.parse_number("-1e99"), -1e99, "a large negative number within range")
    # one sample of a plan twice under two run_ids (two writers at once): refused naming both rows
    recs = list(csv.reader(io.StringIO(text, newline="")))
    h = recs[0]
    twice = [list(r) for r in recs[1:3]]
    twice[1][h.index("run_id")] = "other-run"
    for col in ("matrix_id", "block", "position"):
        twice[1][h.index(col)] = twice[0][h.index(col)]
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows([h] + twice)
    dup = os.path.join(tmp, "twice.csv")
    with open(dup, "w", newline="") as f:
        f.write(buf.getvalue())
    try:
        mbdata.load(dup)
        check(False, "a sample of a plan measured twice is refused")
    except mbdata.mbcsv.CsvError as e:
        check("row 2" in str(e) and "row 1" in str(e) and "twice" in str(e), f"refused naming both rows: {e}")
    # a finite figure out of the range in one row: that row's error, the rest of the file read (issue 29)
    recs = list(csv.reader(io.StringIO(text, newline="")))
    recs[1][recs[0].index("throughput")] = "1e-200"
    buf = io.StringIO(newline="")
    csv.writer(buf, lineterminator="\n").writerows(recs)
    _, rs = mbdata.mbcsv.parse(buf.getvalue(), "range.csv")
    check(len(rs) == len(lines) - 1 and rs[0]["status"] == "error" and "1e-200" in rs[0]["message"]
          and rs[0]["throughput"] == "" and rs[1]["status"] == "ok",
          f"1e-200 makes its row an error, not the file's: {rs[0]['status']} {rs[0]['message']!r}")


def main():
    fixture = sys.argv[1]
    tmp = tempfile.mkdtemp()
    try:
        test_params()
        test_metrics()
        test_peak_memory()
        test_text()
        test_run(fixture, tmp)
        test_reader(fixture, tmp)
        test_schema(fixture, tmp)
        if len(sys.argv) > 2:
            test_harness_schema(fixture, tmp, sys.argv[2])
    finally:
        shutil.rmtree(tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
