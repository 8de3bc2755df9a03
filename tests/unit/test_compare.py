#!/usr/bin/python3
"""test_compare.py - scripts/compare.py on rows built in memory (analyse, render,
write_csv) and end to end on the fixture: a 10x change flagged, A/A not, units
per row, readable times, 0->x for counts, geomeans over a named set of
throughputs only, two-run matching by label or family and tunables with the
"only in" line, several runs per side, family options; the default baseline is the
run's first configuration (compare and summary on tests/fixtures/new-families.csv); on exec
CSVs (tests/fixtures/exec-*.csv) faults and calls per run, headings without better=, the
--metric hint for a duration-bound command; summary on idle_release names the fraction
released, prints no ratio of fractions and says which window its calls cover.
Exit 77 without scipy.
Usage: test_compare.py [FIXTURE.csv]"""
import csv
import io
import math
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from mallocbench import change
from mallocbench import compare
from mallocbench import mbcsv
from mallocbench import mbdata
from mallocbench import stats
from mallocbench import words

try:
    import scipy  # noqa: F401
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)

from mbtest import FAILS, check, entry  # noqa: E402


def row(wl, config, block, tput, unit="B/s", allocator=None, tunables="", metric="copy bandwidth", better="higher",
        params="p", **cols):
    r = {"schema_version": mbcsv.SCHEMA, "status": "ok", "workload": wl, "workload_params": params,
         "config": config, "allocator": allocator or config.split("[")[0].split("@")[0],
         "requested_tunables": tunables, "block": str(block), "throughput": f"{tput:.6g}",
         "throughput_unit": unit, "metric": metric, "metric_better": better, "region_wall_s": "1"}
    r.update({k: str(v) for k, v in cols.items()})
    return r


def run_rows(rng, configs, n=10, workloads=(("tensor_copy", "B/s", "copy bandwidth", "higher", 1e9),),
             noise=0.02, extra=None):
    """configs: {config: multiplier}; a 5% block effect shared by all."""
    out = []
    for b in range(n):
        beta = math.exp(rng.gauss(0, 0.05))
        for wl, unit, metric, better, scale in workloads:
            for config, mult in configs.items():
                cols = extra(wl, config, b) if extra else {}
                out.append(row(wl, config, b, scale * mult * beta * (1 + rng.gauss(0, noise)), unit=unit,
                               metric=metric, better=better, **cols))
    return out


def cell(res, config, wl=None, table=change.PRIMARY):
    got = [c for c in res if c.config == config and not c.is_base and c.table == table
           and (wl is None or c.workload == wl)]
    return got[0] if got else None


PRIMARY = [change.METRICS[0]]
rng = random.Random(3)

# ---- one run: 10x found, A/A not, both directions, paired -------------------------------------
rs = run_rows(rng, {"glibc": 1, "jemalloc": 1, "tcmalloc": 10.9, "slow": 0.95})
res = change.analyse(rs, baseline="glibc", metrics=PRIMARY)
t = cell(res, "tcmalloc")
check(t.verdict == "improved" and t.change.paired and 10 < t.change.estimate < 12,
      f"tcmalloc 10.9x at 10 blocks: {t.verdict} {t.change}")
check(cell(res, "jemalloc").verdict in ("within noise", "negligible"), f"A/A: {cell(res, 'jemalloc').verdict}")
check(cell(res, "slow").verdict == "regressed", f"5% slower: {cell(res, 'slow').verdict}")
# order: first appearance, baseline row first in its workload
check([c.config for c in res][:4] == ["glibc", "jemalloc", "tcmalloc", "slow"], "order of first appearance")
# 6 blocks: 10x is still found (the old design printed ~ with Holm p = 0.108)
res6 = change.analyse(run_rows(rng, {"glibc": 1, "tcmalloc": 10.9}, n=6), baseline="glibc", metrics=PRIMARY)
check(cell(res6, "tcmalloc").verdict == "improved", "10.9x at 6 blocks is improved")
# lower is better (schema 4 metric_better): a larger value is a regression
lw = run_rows(rng, {"glibc": 1, "je": 1.2}, workloads=(("lat", "us", "step time", "lower", 63200),))
check(cell(change.analyse(lw, metrics=PRIMARY), "je").verdict == "regressed", "lower is better: +20% regressed")
# a missing block drops that pair, and n says so
rs5 = [r for r in run_rows(rng, {"glibc": 1, "x": 1.5}, n=8) if not (r["config"] == "x" and r["block"] == "3")]
c = cell(change.analyse(rs5, metrics=PRIMARY), "x")
check(c.change.n == 7 and c.n == 7 and c.n_base == 8 and words.n_text(c) == "7 of 7/8",
      f"n of a dropped block: {words.n_text(c)}")
# ... and the other pairs stay paired by block, not shifted by position past the gap
b5 = {r["block"]: float(r["throughput"]) for r in rs5 if r["config"] == "glibc"}
x5 = {r["block"]: float(r["throughput"]) for r in rs5 if r["config"] == "x"}
both = sorted(set(b5) & set(x5))
want = stats.paired_change([b5[b] for b in both], [x5[b] for b in both], 0.95)
check(abs(c.change.estimate - want.estimate) < 1e-9 and abs(c.change.lo - want.lo) < 1e-9,
      f"a dropped block leaves the pairs by block: {c.change} against {want}")

# change.estimate (the dashboard's nightly ratio) is change()'s estimate, without its CI
fn = change.METRICS[0][3]
for n in (1, 2, 6, 9):
    rr = run_rows(rng, {"glibc": 1, "x": 1.3}, n=n)
    b, o = [r for r in rr if r["config"] == "glibc"], [r for r in rr if r["config"] == "x"]
    full, quick = change.change(b, o, fn), change.estimate(b, o, fn)
    check(quick == (full.kind, full.estimate), f"estimate() is change()'s at {n} blocks: {quick} vs {full}")
    check((full.method == stats.UNPAIRED) == (n < 2), f"{n} blocks: unpaired exactly under 2 pairs: {full.method}")

# the default baseline is the run's first configuration (as hyperfine's reference), whatever its family
rf = run_rows(rng, {"scudo": 1, "glibc": 1.5, "tbbmalloc": 0.5})
resf = change.analyse(rf, metrics=PRIMARY)
check(resf.baseline == "scudo" and [c.config for c in resf if c.is_base] == ["scudo"],
      f"no --baseline: the first configuration to appear: {resf.baseline}")
check(cell(resf, "glibc").verdict == "improved" and cell(resf, "tbbmalloc").verdict == "regressed",
      "no --baseline: the others against scudo")
resf = change.analyse(rf, metrics=PRIMARY, order={"tbbmalloc": 0, "scudo": 1, "glibc": 2})
check(resf.baseline == "tbbmalloc", f"no --baseline: the first of the run's order: {resf.baseline}")
check(change.analyse(rf, metrics=PRIMARY, baseline="glibc").baseline == "glibc", "an explicit baseline wins")

# ---- units per row, readable times, 0->x ------------------------------------------------------
wls = (("tensor_copy", "B/s", "copy bandwidth", "higher", 1.22e9), ("arena_churn", "ops/s", "allocations per second",
                                                                    "higher", 6.0e5),
       ("idle_release", "fraction", "fraction returned", "higher", 0.9))


def extra(wl, config, b):
    return {"region_madvise_calls": 823 if config == "jemalloc" else 0, "latency_p99_us": 63200,
            "region_minor_faults": 4096 * (1 + b % 3),
            "region_sys_s": 0.01 * (3 + b % 2)}


rs = run_rows(rng, {"glibc": 1, "jemalloc": 1.3, "tcmalloc": 5}, workloads=wls, extra=extra)
res = change.analyse(rs, metrics=change.METRICS)
out = io.StringIO()
compare.render(res, False, out)
text = out.getvalue()
lines = text.splitlines()
tc = [ln for ln in lines if ln.strip().startswith("tcmalloc")]
check(any("GB/s" in ln for ln in tc) and any("M ops/s" in ln for ln in tc), f"each row in its unit: {tc[:3]}")
check("e+" not in text and "e-0" not in text, "no exponent anywhere in the table")
check("63.2 ms" in text, "a 63200 us latency printed as 63.2 ms")
check("0→823" in text, "madvise 0 -> 823 printed as 0→823")
check("inf" not in text, "no infinite ratio")
check("tensor_copy (p): copy bandwidth, B/s, higher is better" in text, "workload title names its metric")
check("tensor_copy (p): faults per MiB, lower is better" in text, "faults per MiB where the bytes are known")
m = cell(res, "jemalloc", "tensor_copy", "madvise calls")
check(m.change.kind == "diff" and m.verdict == "regressed", f"0 -> 823 madvise: {m.verdict}")
# geomean: the throughputs only (not idle_release's fraction), the set named, with a CI
geo = [c for c in res if c.geomean and c.table == change.PRIMARY]
check(len(geo) == 2 and geo[0].params == "tensor_copy, arena_churn", f"geomean set: {[g.params for g in geo]}")
g = [c for c in geo if c.config == "tcmalloc"][0]
check(g.change.lo is not None and 4.5 < g.change.estimate < 5.5 and g.verdict == "improved",
      f"geomean of tcmalloc with a CI: {g.change}")
check("geometric mean over tensor_copy, arena_churn" in text, "geomean set printed")
# a workload where a configuration has a zero ratio leaves the geomean set
rz = run_rows(rng, {"glibc": 1, "a": 1.1}, workloads=wls[:2]) + [
    row("third", cfg, b, 0.0 if cfg == "a" else 5.0, unit="ops/s") for b in range(10) for cfg in ("glibc", "a")]
geo = [c for c in change.analyse(rz, metrics=PRIMARY) if c.geomean]
check(len(geo) == 1 and "third" not in geo[0].params, f"a zero throughput leaves the set: {geo}")
# footer: m cells, expected false flags, the verdict words
check("cells tested at alpha = 0.05 each; about" in text and "false flags expected when nothing changed" in text,
      "footer with m and expected false flags")
check(all(f"{w}:" in text for w in ("negligible", "within noise", "too few", "trade-off")), "verdict words explained")
# too few
r4 = run_rows(rng, {"glibc": 1, "x": 2}, n=4)
res4 = change.analyse(r4, metrics=PRIMARY)
o4 = io.StringIO()
compare.render(res4, False, o4)
check(cell(res4, "x").verdict == "too few" and "too few: n=4 pairs: no difference can be detected" in
      o4.getvalue(), "n=4: too few, said in the footer")

# ---- multiplicity options ---------------------------------------------------------------------
resp = change.analyse(rs, metrics=change.METRICS, family="primary")
prim = [c for c in resp if c.primary and not c.is_base]
other = [c for c in resp if not c.primary and not c.is_base]
check(all(abs(c.level - (1 - 0.05 / len(prim))) < 1e-12 for c in prim) and all(c.level == 0.95 for c in other),
      "--family primary: Bonferroni on primary cells only")
resb = change.analyse(rs, metrics=change.METRICS, family="bh")
tested = [c for c in resb if not c.is_base and c.change is not None]
r, level = stats.bh_level([c.change.p for c in tested])
check(all(abs(c.level - level) < 1e-12 for c in tested), "--family bh: one FCR level")
bad = [c for c in tested if "ties" not in c.change.method and c.change.lo is not None and
       (not (c.change.lo <= c.change.no_change <= c.change.hi)) != (c.change.p <= r * 0.05 / len(tested))]
check(not bad, f"--family bh: CI excludes no change exactly for the selected cells: {len(bad)} differ")

# ---- two runs: matching, only-in, unpaired caveat, several runs --------------------------------
old = run_rows(rng, {"glibc": 1, "jemalloc": 1, "jemalloc[dirty_decay_ms=-1]": 1.2})
for r in old:
    if "[" in r["config"]:
        r["requested_tunables"] = "dirty_decay_ms=-1"
new = run_rows(rng, {"glibc": 1, "jemalloc@/opt/je/libjemalloc.so.2": 0.9, "mimalloc": 2})
res2 = change.analyse(old, new, names=("old.csv", "new.csv"), metrics=PRIMARY)
c = cell(res2, "jemalloc@/opt/je/libjemalloc.so.2")
check(c is not None and c.baseline == "jemalloc (old.csv)" and not c.change.paired,
      "jemalloc@/path matched to jemalloc by family and tunables, unpaired")
check(c is not None and c.verdict == "regressed", f"the new jemalloc 10% slower: {c and c.verdict}")
check("only in new.csv: mimalloc" in res2.only, f"only-in line for new: {res2.only}")
check("only in old.csv: jemalloc[dirty_decay_ms=-1]" in res2.only, f"only-in line for old: {res2.only}")
o2 = io.StringIO()
compare.render(res2, False, o2, ("old.csv", "new.csv"))
check("only in new.csv: mimalloc" in o2.getvalue() and "is not estimated" in o2.getvalue(),
      "two runs: only-in line and the run-to-run caveat printed")
# label match wins over family match; an ambiguous family match is not made
m, oo, on = change.match_configs([row("w", "je-new", 0, 1, allocator="jemalloc"), row("w", "jemalloc", 0, 1)],
                                  [row("w", "je-new", 0, 1, allocator="jemalloc"), row("w", "jemalloc@/a", 0, 1),
                                   row("w", "jemalloc@/b", 0, 1)])
check(m == {"je-new": "je-new"} and oo == ["jemalloc"] and on == ["jemalloc@/a", "jemalloc@/b"],
      f"ambiguous family match refused: {m} {oo} {on}")
# several runs per side: the run is the unit
runs_old = [run_rows(rng, {"glibc": 1}, n=3) for _ in range(6)]
runs_new = [run_rows(rng, {"glibc": 1.5}, n=3) for _ in range(6)]
res3 = change.analyse(runs_old, runs_new, metrics=PRIMARY)
c = cell(res3, "glibc")
check(res3.mode == "several runs" and c.change.n == 6 and c.change.n_base == 6 and c.verdict == "improved",
      f"several runs: n counts runs: {c and c.change}")

# ---- CSV out ---------------------------------------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "cells.csv")
    compare.write_csv(res, path)
    with open(path, newline="") as f:
        got = list(csv.DictReader(f))
    need = ["workload", "workload_params", "metric", "unit", "better", "config", "baseline", "n", "n_base", "median",
            "base_median", "kind", "estimate", "lo", "hi", "level", "p", "method", "verdict"]
    check(all(k in got[0] for k in need), f"CSV columns: {list(got[0])}")
    t = [g for g in got if g["config"] == "tcmalloc" and g["metric"] == "throughput" and g["workload"] == "arena_churn"]
    check(t and t[0]["unit"] == "ops/s" and t[0]["figure"] == "allocations per second" and t[0]["verdict"] == "improved",
          f"CSV row of a cell: {t}")
    # end to end on the fixture, as a user runs it (one line of stderr at most, exit 0)
    fixture = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures", "small-run.csv")
    p = subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "compare.py"), fixture,
                        "--csv-out", path, "--markdown", "--force"], capture_output=True, text=True, timeout=300)
    check(p.returncode == 0 and "#### primary figure of each workload" in p.stdout, f"fixture: {p.stderr[-300:]}")
    first = [ln.split("|")[1].strip() for ln in p.stdout.splitlines() if ln.startswith("| ") and "**" not in ln
             and "config" not in ln][:2]
    check(first == ["glibc", "jemalloc"], f"the sidecar's order: {first}")
    p = subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "compare.py"), fixture, fixture],
                       capture_output=True, text=True, timeout=300)
    # a run against itself compares each sample with itself: refused in one line (issue 29)
    check(p.returncode == 2 and "share" in p.stderr and p.stdout == "", f"a run against itself: {p.stderr[-300:]}")
    # the default baseline on the command line: the sidecar's first configuration
    # (tests/fixtures/new-families.csv lists scudo, glibc, tbbmalloc); --baseline wins; unknown: one line
    nf = os.path.join(os.path.dirname(os.path.abspath(fixture)), "new-families.csv")
    for script in ("compare.py", "summary.py"):
        cmd = [sys.executable, os.path.join(HERE, "..", "scripts", script), nf]
        for extra, want in (([], "vs scudo"), (["--baseline", "glibc"], "vs glibc")):
            p = subprocess.run(cmd + extra, capture_output=True, text=True, timeout=300)
            check(p.returncode == 0 and want in p.stdout and ("vs scudo" in p.stdout) == (want == "vs scudo"),
                  f"{script} {' '.join(extra) or '(no --baseline)'}: {want!r} ({p.returncode}, {p.stderr[-300:]!r})")
        p = subprocess.run(cmd + ["--baseline", "nope"], capture_output=True, text=True, timeout=300)
        check(p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1 and "'nope'" in p.stderr
              and "scudo, glibc, tbbmalloc" in p.stderr and not p.stdout,
              f"{script} --baseline nope: one line naming it and the run's configurations: {p.stderr!r}")
        p = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=300)
        check("first configuration" in " ".join(p.stdout.split()), f"{script} --help names the default baseline")

# exec tables (issue 20, section 5): a command has no region bytes and a figure per run
FIX = os.path.join(HERE, "fixtures")
SCRIPTS = os.path.join(HERE, "..", "scripts")


def script(name, *args):
    """What `scripts/NAME ARGS` prints, its entry run in this process (mbtest.entry)."""
    rc, out, err = entry(os.path.join(SCRIPTS, name), *args)
    check(rc == 0, f"{name} {' '.join(args)}: exit {rc}: {err[-300:]!r}")
    return out


def table(text, title):
    """The lines of one compare table (from its title to the next blank line)."""
    lines = text.split("\n")
    k = lines.index(title) if title in lines else len(lines)
    out = []
    for line in lines[k + 1:]:
        if not line.strip():
            break
        out.append(line)
    return out


fixed = os.path.join(FIX, "exec-fixed.csv")
out = script("compare.py", fixed)
faults = table(out, "faults")
check(any(line.split()[:2] == ["tcmalloc", "66.3"] for line in faults) and "faults per run" in faults[1],
      f"compare on an exec CSV: faults per run (tcmalloc 66.3 k/run): {faults}")
mad = table(out, "madvise calls")
check(any(line.split()[:2] == ["jemalloc", "79.0/run"] for line in mad), f"madvise per run (jemalloc 79): {mad}")
check("/s" not in " ".join(mad), "no per-second calls for a fixed-work command")
for title in ("primary figure of each workload", "user CPU", "peak RSS", "faults"):
    head = [line for line in table(out, title) if line.startswith("exec: ")]
    check(head and "better=" not in head[0] and "metric=" not in head[0] and "cmd=" not in head[0],
          f"{title}: the heading names the program and its arguments, no parameter: {head}")
check("runs/s cannot tell" not in out, "a fixed-work command gets no --metric hint")
sout = script("summary.py", fixed)
# summary's peak RSS in MiB of 1024 KiB: 102400 KiB is 100, not 102
from mallocbench import summary
rss_rows = [row("tensor_copy", "glibc", b, 1e9, rss_peak_kib=102400 + b % 2) for b in range(4)]
line = [l for l in summary.summarize(rss_rows, "glibc") if l["config"] == "glibc"][0]
check(line["peak RSS MiB"] == "100", f"peak RSS 102400 KiB in MiB: {line['peak RSS MiB']!r}")
check("faults/run" in sout and "66262" in sout, f"summary on an exec CSV shows faults per run: {sout}")
check("of limit" not in sout, f"summary's footer explains no 'of limit' column it does not show: {sout}")
check("madvise/run" in sout and "per run of a command" in sout, "summary's calls are per run, and it says so")
# a duration-bound command (sleep 0.3): the same runs/s under every allocator
for name in ("compare.py", "summary.py"):
    text = script(name, os.path.join(FIX, "exec-sleep.csv"))
    check("runs/s cannot tell the configurations apart" in text and "--metric" in text,
          f"{name} on a duration-bound command says it needs --metric: {text[-600:]}")
# idle_release: a fraction released, no ratio to the baseline, the window the calls cover
text = script("summary.py", os.path.join(FIX, "idle-release.csv"))
rows = {line.split()[0]: line for line in text.split("\n") if line.split()[:1] in (["glibc"], ["tcmalloc"], ["mimalloc"])}
check("fraction of freed memory returned" in text and "0 fraction" not in text,
      f"idle_release: the figure is named, not '0 fraction': {text}")
check(rows and all("0.00x" not in r and " 1.00x" not in r for r in rows.values()),
      f"idle_release: no ratio of fractions to the baseline: {rows}")
check(rows and all(w not in r for r in rows.values() for w in ("improved", "regressed")) and
      all("trade-off" in r for c, r in rows.items() if c != "glibc"),
      f"idle_release, a trade-off: no better/worse, the word trade-off: {rows}")
check(rows.get("glibc", "").split()[2:3] == ["98.2%"], f"glibc gives back 98.2%: {rows.get('glibc')}")
check("idle window after the free only" in text, "the footer says the calls cover the idle window only")

# disturbance (schema 6): marked samples, the variance they explain, --drop-disturbed; resolution
rng = random.Random(11)
drows = []
for b in range(10):
    for cfg, mult in (("glibc", 1.0), ("jemalloc", 0.8)):
        wait = 0.3 if (cfg == "glibc" and b in (2, 7)) else 0.01  # two glibc samples waited for a CPU
        tput = 1e9 * mult * (1 - wait) * (1 + rng.gauss(0, 0.005))
        drows.append(row("tensor_copy", cfg, b, tput, region_run_delay_s=f"{wait:.3f}",
                         region_task_clock_s=f"{1 - wait:.3f}", steal_s="0", khugepaged_collapses="0",
                         compactions="0", total_wall_s="1"))
glibc = [r for r in drows if r["config"] == "glibc"]
check(sum(1 for r in glibc if mbdata.disturbed(r)) == 2, "the two glibc samples that waited 30% are disturbed")
r2 = mbdata.variance_explained(glibc, lambda r: change.num(r, "throughput"))
check(r2 is not None and r2 > 0.9, f"their waits explain most of glibc's variance: {r2}")
check(mbdata.disturbed(dict(glibc[0], compactions="3")) == "memory was compacted", "a compaction marks a sample")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "d.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[c for c, _ in mbcsv.COLUMNS], restval="")
        w.writeheader()
        for i, r in enumerate(drows):
            w.writerow(dict(r, run_id="t", sample=str(i)))
    text = script("compare.py", path)
    check("disturbed samples, tensor_copy" in text and "glibc 2/10" in text, f"marked in the footer: {text[-900:]}")
    check("variance explained by CPU waits and steal, tensor_copy" in text, "the variance they explain is shown")
    check("resolution, tensor_copy (p): jemalloc ±" in text, f"the resolution reached is shown: {text[-900:]}")
    text = script("compare.py", "--drop-disturbed", path)
    check("glibc 0/8 (+2 dropped)" in text, f"--drop-disturbed leaves them out and says so: {text[-900:]}")

# issue 42, item 7: every change carries its unit, written in one place (words.fmt_change)
diff = stats.Change("diff", -0.979, -0.99, -0.97, 0.01, 8, 8, "x", 0.01, True, 0.95, 0.003, 0.982, True)
rat = stats.Change("ratio", 0.291, 0.28, 0.30, 0.01, 8, 8, "x", 0.01, True, 0.95, 0.29, 1.0, True)
for unit, want, res in (("fraction", "-97.9 pp", "±1.00 pp"), ("s/sample", "-979 ms/sample", "±10.0 ms/sample"),
                        ("/run", "-0.979/run", "±0.0100/run"), ("", "-0.979 (no unit)", "±0.0100 (no unit)")):
    c = change.Cell(change=diff, unit=unit)
    check(words.fmt_change(c)[0] == want and words.resolution_text(c) == res and words.change_unit(c) == unit,
          f"a difference in {unit!r}: {words.fmt_change(c)} {words.resolution_text(c)!r}, want {want!r} {res!r}")
c = change.Cell(change=rat, unit="fraction")
check(words.fmt_change(c)[0] == "0.291x" and words.resolution_text(c) == "±3.4%"
      and words.change_unit(c) == "ratio", f"a ratio: {words.fmt_change(c)} {words.resolution_text(c)}")
up = stats.Change("diff", 0.005, 0.004, 0.006, 0.01, 8, 8, "x", 0.01, True, 0.95, 0.01, 0.005, True)
check(words.fmt_change(change.Cell(change=up, unit="s/run"))[0] == "+5.00 ms/run", "a rise is signed '+'")

# issue 44: one value formatter.  A count (frameworks' tables, a plot's bar label) is a value as
# fmt_value writes it, without its unit; an axis (plots) takes the one prefix fmt_value gives
# its largest value, so every label on it reads as compare's
for v in (0, 8.5, 812, 812.4, 9999, 10000, 12345, 557000, 1.1e6, 1.5e9, 3.3e15, -3.2, -0.0045, -98765):
    check(words.fmt_count(v) + " faults" == words.fmt_value(v, "faults"),
          f"a count is fmt_value's text: {words.fmt_count(v)!r}, {words.fmt_value(v, 'faults')!r}")
check([words.fmt_count(v) for v in (557000, 17012, 1.1e6, 8.5, None)] == ["557 k", "17.0 k", "1.10 M", "8.50", "-"],
      f"counts: {[words.fmt_count(v) for v in (557000, 17012, 1.1e6, 8.5, None)]}")
check([words.fmt_count(v, trim=True) for v in (20000, 0.5, 2000, 1.25, 2.5e-05)] == ["20 k", "0.5", "2000", "1.25",
                                                                                       "0.000025"],
      f"ticks: {[words.fmt_count(v, trim=True) for v in (20000, 0.5, 2000, 1.25, 2.5e-05)]}")
for unit, vals, want in (("B/s", [0.4e9, 1.5e9], (1e-9, "GB/s")), ("B/s", [2e8, 5e8], (1e-6, "MB/s")),
                         ("ops/s", [9000, 12300], (1e-3, "k ops/s")), ("ops/s", [900, 9000], (1.0, "ops/s")),
                         ("us", [800, 2500], (1e-3, "ms")), ("", [5e6], (1.0, "")), ("B/s", [], (1.0, "B/s"))):
    f, u = words.axis_scale(unit, vals + [None])
    check((f, u) == want, f"the axis of {vals} {unit!r}: {(f, u)}, want {want}")
    for v in vals:  # every value on the axis in its one prefix, as fmt_value scales it like the largest
        check(words.fmt_value(v, unit, like=max(vals)) == words.fmt(v * f) + ("" if u in ("", "%") else " ") + u,
              f"{v} on the axis {u!r}: {words.fmt_value(v, unit, like=max(vals))}")

# issue 42, item 8: exec reads like hyperfine.  A command's time, not its runs/s, with the
# range; its runs/s with --runs-per-s and in the JSON
import statistics  # noqa: E402
with open(fixed, newline="") as f:
    frs = [r for r in csv.DictReader(f) if r["status"] == "ok"]
for cfg in ("glibc", "tcmalloc"):
    t = [1 / float(r["throughput"]) for r in frs if r["config"] == cfg]
    want = f"{words.fmt_value(statistics.median(t), 's')} [{words.fmt_ci((min(t), max(t)), 's', statistics.median(t))}]"
    got = [l for l in sout.split("\n") if l.split()[:1] == [cfg]]
    check(got and f" {want} " in got[0], f"summary: {cfg}'s time of a run {want!r}: {got}")
check("time of a run" in sout and "runs/s ±" not in sout, f"summary: a command's time, not its runs/s: {sout[:500]}")
check("runs/s ±" in script("summary.py", fixed, "--runs-per-s"), "summary --runs-per-s: the runs/s")
import json  # noqa: E402
rjs = json.loads(script("report.py", fixed, "--json"))
line = next(x for x in rjs["summary"] if x["config"] == "glibc")
t = sorted(1 / float(r["throughput"]) for r in frs if r["config"] == "glibc")
check(line["unit"] == "runs/s" and line["time_s"] == {"median": statistics.median(t), "min": t[0], "max": t[-1]},
      f"report --json: the runs/s and the time of a run: {line['unit']} {line['time_s']}")
# a printed figure with --unit: the unit names the column; no title holds the regex or cmd=
with tempfile.TemporaryDirectory() as tmp:
    for unit, head in (("req/s", "req/s"), ("", "the figure the command printed")):
        path = os.path.join(tmp, f"printed{len(unit)}.csv")
        with open(fixed, newline="") as f:
            rd = csv.DictReader(f)
            fields, rs = rd.fieldnames, list(rd)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for r in rs:
                cmd = mbdata.param_of(r["workload_params"], "cmd")
                w.writerow(dict(r, metric="the figure the command printed (metric=REGEX)", throughput_unit=unit,
                                workload_params=f"metric=rate: ([0-9.]+),unit={unit},better=higher,cmd={cmd}"))
        st = script("summary.py", path)
        ct = script("compare.py", path)
        heads = [l for l in st.split("\n") if l.startswith("config")]
        check(heads and heads[0].split("  ")[2:3] != [] and head in heads[0] and "metric=REGEX" not in st + ct
              and "rate: (" not in st + ct and "cmd=" not in st + ct,
              f"--unit {unit!r}: the column is {head!r}, no regex or cmd= in any title: {heads} {ct[:400]}")
        check(ct.count("exec: python3 -c 'd = {i: str(i) for i in range(200000)}': ") >= 3,
              f"compare's headings name the program and its arguments: {ct[:400]}")


def check_sequential_ci():
    """A stopped pair (issue 45): change.analyse's CI over the blocks before the stop is
    sequential.ci() of the same log ratios at the look's level (untied data: the exact signed-rank
    CI, stats.signed_rank_shift at 1 - alpha), for every look's alpha and several n; the baseline's
    later blocks are left out, the p is not printed, the other figures are at 95%; the words."""
    from mallocbench import sequential
    rng = random.Random(45)
    for n, alpha in ((8, 0.008), (12, 0.004), (18, 0.008), (10, 0.042), (30, 0.03), (14, 0.05)):
        rows = run_rows(rng, {"glibc": 1.0, "je": 1.03}, n=n + 4,
                        extra=lambda wl, c, b: {"region_user_s": 0.5 + rng.random(), "region_sys_s": rng.random()})
        stop = {"workload": "tensor_copy", "params": "p", "config": "je", "baseline": "glibc", "look": 2,
                "blocks": n, "n": n, "alpha": alpha, "why": "negligible"}
        seq = {"figure": "throughput", "stops": [stop]}
        rows = [r for r in rows if r["config"] == "glibc" or int(r["block"]) < n]  # glibc ran on
        for r in rows:
            r["_sequential"] = seq
        res = change.analyse(rows)
        c = cell(res, "je")
        by = {}
        for r in rows:
            by.setdefault(r["config"], {})[int(r["block"])] = float(r["throughput"])
        d = [math.log(by["je"][b] / by["glibc"][b]) for b in range(n)]
        est, lo, hi = sequential.ci(d, alpha)
        _, slo, shi, _, _ = stats.signed_rank_shift(d, 1 - alpha)
        check(c.change.n == n and c.n_base == n and abs(c.level - (1 - alpha)) < 1e-12,
              f"n={n}: the blocks before the stop only, at its look's level: {c.change.n}/{c.n_base} {c.level}")
        check(abs(c.change.estimate / math.exp(est) - 1) < 1e-12 and abs(c.change.lo / math.exp(lo) - 1) < 1e-12
              and abs(c.change.hi / math.exp(hi) - 1) < 1e-12 and (slo, shi) == (lo, hi),
              f"n={n} alpha={alpha}: change's CI is sequential.ci's: [{c.change.lo}, {c.change.hi}] vs "
              f"[{math.exp(lo)}, {math.exp(hi)}]")
        rec = next(x for x in compare.records(res)["cells"] if x["config"] == "je" and x["primary"])
        check(rec["p"] is None and rec["sequential"]["words"] == f"settled at block {n}",
              f"n={n}: no p for the stopped cell, its words: {rec['p']} {rec['sequential']}")
        other = cell(res, "je", table="CPU")
        check(other.level == 0.95 and other.change.n == n and not other.sequential["controlled"]
              and words.not_controlled_text(other) == "not error-controlled: the run stopped on throughput",
              f"n={n}: the pair's CPU at 95% over the same blocks, not error-controlled")
    # tied ratios (CPU in clock ticks): the stopped cell's CI is the stopping rule's (untied null), the
    # one that made the decision, not the tie-aware inversion (which printed another verdict)
    d = [-.04, -.02, -.02, -.02, 0, 0, 0] + [.01] * 10 + [.02] * 4 + [.03] * 3 + [.04] * 2 + [.06] * 2 + [.07, .08]
    rows = [row("tensor_copy", cf, b, 1e9 * (1 + b / 100) * (math.exp(x) if cf == "je" else 1.0))
            for b, x in enumerate(d) for cf in ("glibc", "je")]
    stop = {"workload": "tensor_copy", "params": "p", "config": "je", "baseline": "glibc", "look": 4,
            "blocks": 30, "n": 30, "alpha": 0.03, "why": "resolution"}
    for r in rows:
        r["_sequential"] = {"figure": "throughput", "stops": [stop]}
    c = cell(change.analyse(rows), "je")
    dd = [math.log(float(b["throughput"]) / float(a["throughput"])) for a, b in zip(rows[::2], rows[1::2])]
    want = [math.exp(x) for x in sequential.ci(dd, 0.03)]
    check(all(abs(g / w - 1) < 1e-12 for g, w in zip((c.change.estimate, c.change.lo, c.change.hi), want))
          and "untied null" in c.change.method,
          f"tied ratios: the stopped cell's CI is sequential.ci's: {c.change.estimate} [{c.change.lo}, "
          f"{c.change.hi}] vs {want} ({c.change.method})")
    for why, said in (("improved", "settled at block 8"), ("cap", "stopped at the cap, block 8"),
                      ("budget", "stopped by the budget at block 8"), ("interrupted", "interrupted at block 8")):
        check(words.sequential_text(change.Cell(sequential={"blocks": 8, "why": why})) == said,
              f"the words for a stop by {why}: {said}")


check_sequential_ci()


def check_sequential_geomean():
    """A geomean over pairs a sequential run stopped: no p, marked not error-controlled."""
    wls = (("tensor_copy", "B/s", "copy bandwidth", "higher", 1e9), ("arena_churn", "ops/s", "ops", "higher", 1e6))
    rows = run_rows(random.Random(7), {"glibc": 1.0, "je": 1.03}, n=8, workloads=wls)
    stops = [{"workload": w, "params": "p", "config": "je", "baseline": "glibc", "look": 1, "blocks": 8, "n": 8,
              "alpha": 0.008, "why": "improved"} for w, *_ in wls]
    for r in rows:
        r["_sequential"] = {"figure": "throughput", "stops": stops}
    res = change.analyse(rows)
    g = next(c for c in res if c.geomean and c.table == change.PRIMARY)
    rec = next(x for x in compare.records(res)["cells"] if x["geomean"] and x["primary"])
    out = io.StringIO()
    compare.render(res, out=out)
    geo = out.getvalue().split("geometric mean over")[-1].splitlines()[1:2]
    check(compare.cell_p(g) is None and rec["p"] is None and not rec["sequential"]["controlled"]
          and rec["sequential"]["note"] == "not error-controlled: the run stopped on throughput"
          and "je vs glibc (geomean) over blocks 0-7" in out.getvalue() and geo and "(95%)  " in geo[0]
          and geo[0].split()[-2] == "-",
          f"a geomean over stopped pairs: no p, not error-controlled: {rec['p']} {rec.get('sequential')} {geo!r}")


check_sequential_geomean()

if FAILS:
    print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("ok")
