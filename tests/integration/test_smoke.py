#!/usr/bin/env python3
"""test_smoke.py - one invocation of each `mallocbench` command with its
smallest valid arguments, checked for exit status and output shape: the fast
tier's floor, so a command that stops working fails `make test` in seconds.

    test_smoke.py MALLOCBENCH BUILD_ROOT COMMAND

`commands` checks that every command `mallocbench --help` lists has a case
here (a new command without a smoke fails).  `run` runs every installed
family once at a small size: each row ok, proven, one checksum.
"""
import json
import os
import re
import sys

from mbtest import SKIP, check, check_eq, installed, main, rows, run

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(SRC, "tests", "fixtures", "small-run.csv")
TINY = "tensor_copy:size=64K,count=2,steps=1,warmup=0"
BUILD = sys.argv[2] if len(sys.argv) > 2 else ""


def one_row_per(out, n, what):
    rs = rows(out)
    check_eq(len(rs), n, f"{what}: rows")
    for r in rs:
        check_eq(r["status"], "ok", f"{what}: {r['allocator']} status ({r['message']})")
    return rs


def case_commands(mb, tmp):
    helptext = run(mb, "--help").stdout
    listed = re.findall(r"^  (\w+) ", helptext, re.M)
    check(len(listed) >= 10, f"--help lists the commands: {listed}")
    missing = [c for c in listed if "case_" + c not in globals()]
    check_eq(missing, [], "commands without a smoke case in test_smoke.py")
    # `help COMMAND` is `COMMAND --help`; an unknown one is named with the valid ones
    for c in ("run", "list", "compare"):
        check_eq(run(mb, "help", c).stdout, run(mb, c, "--help").stdout, f"help {c} prints {c} --help")
    p = run(mb, "help", "frobnicate", expect_rc=2)
    check("unknown command 'frobnicate'" in p.stderr and "run, exec" in p.stderr and p.stderr.count("\n") == 1,
          f"help of an unknown command: one line naming the valid ones: {p.stderr!r}")
    p = run(mb, "list", "tunables", "jemaloc", expect_rc=2)
    check("unknown allocator 'jemaloc' (valid: " in p.stderr and "jemalloc" in p.stderr,
          f"list tunables of a misspelt family names the valid ones: {p.stderr!r}")


def case_run(mb, tmp):
    fams = installed(mb)
    out = os.path.join(tmp, "r.csv")
    run(mb, "run", "-q", "-w", TINY, "-a", ",".join(fams), "-r", "1", "-o", out)
    rs = one_row_per(out, len(fams), "run")
    check_eq(sorted(r["allocator"] for r in rs), sorted(fams), "one row per installed family")
    for r in rs:
        check(r["allocator"] == "glibc" or os.path.realpath(r["malloc_so"]) == os.path.realpath(r["lib_path"]),
              f"{r['allocator']}: proven: malloc from {r['malloc_so']}, asked {r['lib_path']}")
        check(int(r["region_bytes"] or 0) == 64 * 1024 * 2, f"{r['allocator']}: region bytes {r['region_bytes']}")
        # CPU seconds from wait4's rusage: no more than the wall time on every CPU
        wall, cpu = float(r["total_wall_s"]), float(r["total_user_s"]) + float(r["total_sys_s"])
        check(0 < wall and 0 <= cpu <= wall * (os.cpu_count() or 1) + 0.01,
              f"{r['allocator']}: user+sys {cpu} s within {wall} s of wall on {os.cpu_count()} CPUs")
    check_eq(len({r["checksum"] for r in rs}), 1, "one checksum across families")
    check(os.path.exists(os.path.join(tmp, "r.meta.json")), "sidecar written")
    # a sample of a fixed 0.2 s (a command that sleeps), its RSS read every 1 ms: about 200
    # readings on any machine; the series holds each one the row counts, none above the peak
    # (the sanitizer build runs this too: the series' room grows past its first 16 readings)
    out = os.path.join(tmp, "rss.csv")
    run(mb, "exec", "-q", "-a", "glibc", "-r", "1", "--sample-interval", "1ms", "-o", out, "--", "sleep", "0.2")
    r = one_row_per(out, 1, "exec --sample-interval 1ms")
    series = rows(os.path.join(tmp, "rss.rss.csv"))
    if r:
        n = int(r[0]["rss_samples"] or 0)
        check(n > 16 and len(series) == n, f"{n} RSS readings counted, {len(series)} in the series (more than 16)")
        check(series and 0 < max(int(p["rss_kib"]) for p in series) <= int(r[0]["rss_peak_kib"]),
              f"the peak {r[0]['rss_peak_kib']} KiB is at least the series' highest reading")


def case_exec(mb, tmp):
    out = os.path.join(tmp, "e.csv")
    fams = installed(mb)[:2]  # glibc and the next installed family
    run(mb, "exec", "-q", "-a", ",".join(fams), "-r", "1", "-o", out, "--", "sh", "-c", "echo hi >/dev/null")
    rs = one_row_per(out, len(fams), "exec")
    for r in rs:
        check(r["throughput_unit"] == "runs/s" and float(r["throughput"]) > 0, f"exec: {r['throughput']} {r['throughput_unit']}")


def case_serve(mb, tmp):
    prog = os.path.join(BUILD, "tests", "serve_prog")
    if not os.access(prog, os.X_OK):
        print(f"SKIP: no {prog}", file=sys.stderr)
        sys.exit(SKIP)
    out = os.path.join(tmp, "s.csv")
    run(mb, "serve", "-q", "-a", "glibc", "-r", "1", "-o", out, "--ready", "tcp:auto",
        "--metric", "requests/s: ([0-9.]+)", "--unit", "req/s",
        "--client", f"{prog} client {{port}} --requests 20", "--", prog, "server", "{port}")
    rs = one_row_per(out, 1, "serve")
    for r in rs:
        check(r["throughput_unit"] == "req/s" and float(r["throughput"]) > 0, f"serve: {r['throughput']}")


def case_list(mb, tmp):
    for what, want in (("allocators", "glibc"), ("workloads", "tensor_copy"), ("events", "faults"),
                       ("tunables", "jemalloc")):
        p = run(mb, "list", what)
        check(want in p.stdout, f"list {what} names {want}: {p.stdout[:200]!r}")
    wl = json.loads(run(mb, "list", "workloads", "--json").stdout)["workloads"]
    check(any(w["name"] == "tensor_copy" for w in wl), "list workloads --json")


def case_tune(mb, tmp):
    out = os.path.join(tmp, "t.md")
    fams = installed(mb)[:2]
    # a search that ends names a winner (exit 0) or says it has none (exit 1: fewer than 6
    # confirmation blocks, or no change beyond the floor), never both and never neither
    p = run(mb, "tune", "-w", TINY, "-a", ",".join(fams), "--budget", "20s", "--points", "0",
            "--seed", "1", "-o", out, expect_rc=None)
    check(p.returncode in (0, 1), f"tune ended with a verdict: exit {p.returncode} ({p.stderr[-300:]!r})")
    check(os.path.exists(out), f"tune wrote its report: {p.stderr[-300:]!r}")
    if os.path.exists(out):
        text = open(out, encoding="utf-8").read()
        check(all(f in text for f in fams), f"the report names the families it raced: {fams}")
        heads = ("\n## Winner: " in text, "\n## No winner" in text)
        check(heads == ((True, False) if p.returncode == 0 else (False, True)),
              f"the heading matches the exit status {p.returncode}: {heads}")


def case_compare(mb, tmp):
    p = run(mb, "compare", FIXTURE)
    check("glibc" in p.stdout and "tensor_copy" in p.stdout, f"compare's table: {p.stdout[:300]!r}")


def case_report(mb, tmp):
    """`mallocbench report`: Markdown on stdout, its JSON (the schema, compare's records), HTML."""
    p = run(mb, "report", FIXTURE)
    check(p.stdout.startswith("# mallocbench report") and "## Read this first" in p.stdout,
          f"report's Markdown on stdout: {p.stdout[:300]!r}")
    p = run(mb, "report", FIXTURE, "--json")
    try:
        data = json.loads(p.stdout)
    except ValueError:
        data = {}
    check(data.get("schema") == "mallocbench-report/1" and data.get("comparison", {}).get("schema")
          == "mallocbench-compare/1" and data.get("summary"), f"report --json: {p.stdout[:300]!r}")
    p = run(mb, "report", FIXTURE, "--html")
    check(p.stdout.startswith("<!DOCTYPE html>") and "<table>" in p.stdout, f"report --html: {p.stdout[:200]!r}")


def case_merge(mb, tmp):
    parts = []
    for k in (1, 2):
        out = os.path.join(tmp, f"shard{k}.csv")
        run(mb, "run", "-q", "-w", TINY, "-a", "glibc", "-r", "2", "--seed", "7", "--shard", f"{k}/2", "-o", out)
        parts.append(out)
    out = os.path.join(tmp, "all.csv")
    run(mb, "merge", "-o", out, *parts)
    rs = one_row_per(out, 2, "merge")
    check_eq(sorted(int(r["block"]) for r in rs), [0, 1], "one block from each shard")
    check_eq(sorted(r["shard"] for r in rs), ["1/2", "2/2"], "each row names its shard")


def record_trace(mb, tmp):
    """`record -o t.mbt` of a shell, over a longer stale t.mbt.tmp: the trace's path."""
    out = os.path.join(tmp, "t.mbt")
    # a longer temporary file left by a killed run: none of it reaches the trace
    with open(out + ".tmp", "wb") as f:
        f.write(b"STALE" * 100000)
    run(mb, "record", "-o", out, "--", "sh", "-c", "true")
    data = open(out, "rb").read() if os.path.exists(out) else b""
    check(len(data) > 0, "record wrote a trace")
    check(b"STALE" not in data, f"no byte of the stale {out}.tmp in the trace ({len(data)} bytes)")
    return out


def case_record(mb, tmp):
    record_trace(mb, tmp)


def case_trace(mb, tmp):
    p = run(mb, "trace", record_trace(mb, tmp))
    check("malloc" in p.stdout and "thread" in p.stdout, f"trace prints calls and threads: {p.stdout[:300]!r}")


def case_calibrate(mb, tmp):
    p = run(mb, "calibrate", "4M")
    check(re.search(r"memcpy.*[0-9]", p.stdout) and re.search(r"fault.*[0-9]", p.stdout),
          f"calibrate prints memcpy and one fault's cost: {p.stdout[:300]!r}")


def case_diagnose(mb, tmp):
    if os.geteuid() != 0:
        p = run(mb, "diagnose", "--all", expect_rc=2)
        check("needs root" in p.stderr, f"diagnose without root: {p.stderr!r}")
        return
    p = run(mb, "diagnose", "--", "/bin/true")
    check(re.match(r"PID [0-9]+ \(true, ", p.stdout), f"diagnose says who it watched first: {p.stdout[:300]!r}")


def case_schema(mb, tmp):
    p = run(mb, "schema")
    check("schema_version" in p.stdout and "| status |" in p.stdout.replace("`", ""),
          f"schema prints the columns: {p.stdout[:200]!r}")


def case_version(mb, tmp):
    p = run(mb, "version")
    check(re.match(r"mallocbench \S+", p.stdout), f"version: {p.stdout!r}")


if __name__ == "__main__":
    # argv: MALLOCBENCH BUILD_ROOT CASE (mbtest.main takes the case from argv[2])
    if len(sys.argv) > 3:
        sys.argv = [sys.argv[0], sys.argv[1], sys.argv[3]]
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
