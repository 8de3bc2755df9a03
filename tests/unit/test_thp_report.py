#!/usr/bin/env python3
"""test_thp_report.py - the huge-page report (scripts/thp.py, `make thp`) on a fixture of planted
effects (tests/fixtures/thp-small.csv, made by make_thp_fixture.py): each sentence says what was
planted (jemalloc's faults 500x fewer, mimalloc's give-backs stopped too, glibc's peak memory
+30%, jemalloc's splits machine-wide beside another task's CPU, a share of 0% under huge=system
named as huge pages not given, khugepaged as the condition's own effect, the best configuration
changing), and says otherwise where one planted effect is taken back in a copy; the pairing by
columns (je-keep with jk-thp), disturb.disturbed() leaving khugepaged and compaction to huge
pages on, and the output rules (-o refuses to replace without --force, bad input exit 2).
Usage: test_thp_report.py FIXTURE_DIR"""
import csv
import os
import sys
import tempfile

from mbtest import FAILS, check, check_eq, entry
from mallocbench import disturb, mbdata, thp

JE, JE_OFF = "jemalloc[huge=advise]", "jemalloc[huge=never]"
MI, GL, TC = "mimalloc[huge=advise]", "glibc[huge=advise]", "tcmalloc[huge=system]"


def report(path):
    return thp.build(mbdata.load(path), [path])


def line_with(text, *parts):
    hits = [ln for ln in text.splitlines() if all(p in ln for p in parts)]
    return hits[0] if hits else ""


def variant(fx, tmp, name, change):
    """A copy of the fixture (its sidecar beside it) with change(row) applied to every row."""
    src = os.path.join(fx, "thp-small.csv")
    with open(src, newline="") as f:
        rd = csv.DictReader(f)
        fields, rows = rd.fieldnames, list(rd)
    for r in rows:
        change(r)
    out = os.path.join(tmp, name + ".csv")
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(mbdata.sidecar(src, ".meta.json")) as a, open(mbdata.sidecar(out, ".meta.json"), "w") as b:
        b.write(a.read())
    return out


def test_sentences(out):
    s = line_with(out, "huge pages remove the re-fault cost for " + JE)
    check("faults 256/MiB → 0.512/MiB (0.002x [" in s, f"jemalloc's faults 500x fewer with their CI: {s!r}")
    check("copy bandwidth 1.497x improved [" in s and f"against {JE_OFF}" in s,
          f"the primary figure's paired ratio with its CI: {s!r}")
    check("madvise 10.0/MiB → 10.0/MiB" in s and "fell too" not in s, f"jemalloc's give-backs unchanged: {s!r}")
    m = line_with(out, "huge pages remove the re-fault cost for " + MI)
    check("madvise 40.0/MiB → 0/MiB, munmap 10.0/MiB → 0/MiB" in m and "not huge pages' alone" in m,
          f"mimalloc's drop not credited to huge pages alone: {m!r}")
    n = line_with(out, "huge pages do not remove the re-fault cost")
    check(GL + " (faults per MiB 0.780x [" in n and TC in n, f"glibc and tcmalloc named as not removed: {n!r}")
    g = line_with(out, "huge pages add memory for")
    check(g.startswith(f"- huge pages add memory for {GL}: peak RSS 99.8 MiB → 130 MiB (1.297x ["),
          f"glibc's memory +30%, worded as peak RSS: {g!r}")
    check(len([ln for ln in out.splitlines() if "huge pages add memory" in ln]) == 1, "memory added for glibc only")
    sp = line_with(out, "huge pages add splits for")
    check(sp.startswith(f"- huge pages add splits for {JE}: ") and "0 → 210 (PMD 0 → 200, page 0 → 10.0)" in sp,
          f"jemalloc's splits: {sp!r}")
    check("machine-wide" in sp and "other tasks used up to 150 ms of CPU" in sp,
          f"splits are machine-wide, another task's CPU beside them: {sp!r}")
    sh = line_with(out, "share of the anonymous memory in huge pages at its peak: under huge=never")
    check("under huge=never 0% for every configuration" in sh and f"{JE} 90%" in sh
          and f"{TC} 0% (huge pages not given)" in sh, f"the share under each condition: {sh!r}")
    check(line_with(out, f"huge pages were not given to {TC} (0%") != "", "huge=system with 0% named as not given")
    k = line_with(out, f"during {JE}'s samples khugepaged collapsed 3 huge pages")
    check("compacted memory 1 time(s)" in k and "the condition's own effects, not a disturbance" in k,
          f"khugepaged and compaction as the condition's own: {k!r}")
    b = line_with(out, "the best configuration by copy bandwidth")
    check("is glibc[huge=never] under huge=never" in b and f"and {JE} with huge pages on (1.205x" in b
          and b.endswith("the best changes."), f"the best changes between the conditions: {b!r}")
    check("| 1 | glibc[huge=never] | baseline | " + JE + " (huge=advise) | 1.205x improved [" in out,
          "the ranking under each condition, against one baseline")
    check(line_with(out, "| jk-thp[", "| je-keep[") != "", "jk-thp paired with je-keep by its columns, not its label")
    check("0% → 0% (huge pages not given)" in line_with(out, "| " + TC), "the table never shows 0% as on")
    check(line_with(out, "| " + JE + " |").endswith("| 54 / 0 | 3 / 1 |"),
          "huge-page faults / fallbacks and khugepaged / compactions in the pairs' table")
    check("Calibration: one 2 MiB huge-page fault costs 5.40 ms here, against 5.53 ms for its 512 4 KiB faults "
          "(0.977x): near their cost" in out, "the calibration's huge-page fault beside 512 faults")


def scale(config, column, factor):
    def f(r):
        if r["config"] == config:
            r[column] = f"{float(r[column]) * factor:.6g}"
    return f


def test_negatives(fx, tmp):
    out = report(variant(fx, tmp, "je-faults", scale(JE, "region_minor_faults", 500)))
    check(line_with(out, "huge pages remove the re-fault cost for " + JE) == ""
          and JE + " (faults per MiB" in line_with(out, "do not remove"), "jemalloc's faults back: not removed")
    out = report(variant(fx, tmp, "mi-gb", lambda r: r.update(region_madvise_calls=str(40 * 1280))
                         if r["config"] == MI else None))
    m = line_with(out, "huge pages remove the re-fault cost for " + MI)
    check(m != "" and "fell too" not in m, f"mimalloc's give-backs kept: the drop is credited: {m!r}")
    out = report(variant(fx, tmp, "gl-mem", scale(GL, "rss_peak_kib", 100 / 130)))
    check("huge pages add memory" not in out, "glibc's memory back: no memory added")
    out = report(variant(fx, tmp, "tc-share", lambda r: r.update(huge_share_peak="0.3")
                         if r["config"] == TC else None))
    check("not given" not in out and f"{TC} 30%" in out, "tcmalloc given huge pages: not named as not given")
    out = report(variant(fx, tmp, "gl-best", scale(GL, "throughput", 1.3)))
    b = line_with(out, "the best configuration by copy bandwidth")
    check(f"and {GL} with huge pages on" in b and b.endswith("the best does not change."),
          f"glibc best under both: the best does not change: {b!r}")
    out = report(variant(fx, tmp, "never-held", lambda r: r.update(huge_share_peak="0.2")
                         if r["config"] == JE_OFF else None))
    check(line_with(out, f"{JE_OFF} held huge pages under huge=never (20%)") != "",
          "a huge=never configuration holding huge pages is named")
    out = report(variant(fx, tmp, "je-unread", lambda r: r.update(huge_share_peak="", anon_huge_peak_kib="")
                         if r["config"] == JE else None))
    check(line_with(out, "huge pages remove the re-fault cost for " + JE) == ""
          and "its huge-page share was not measured" in line_with(out, JE + "'s faults fell"),
          "a share never read: the drop not credited to huge pages")
    out = report(variant(fx, tmp, "no-splits", lambda r: r.update(thp_pmd_splits="0", thp_page_splits="0")))
    check("huge pages add splits" not in out, "no splits: none added")


def test_data_layer(fx):
    run = mbdata.load(os.path.join(fx, "thp-small.csv"))
    pairs, alone = mbdata.huge_pairs(run)
    check_eq(dict(pairs), {GL: "glibc[huge=never]", JE: JE_OFF, MI: "mimalloc[huge=never]", TC: "tcmalloc[huge=never]",
                           "jk-thp[dirty_decay_ms=-1,muzzy_decay_ms=-1,huge=advise]":
                           "je-keep[dirty_decay_ms=-1,muzzy_decay_ms=-1,huge=never]"}, "the pairs, by columns")
    check_eq(alone, [], "every configuration with huge pages on is paired")
    je = [r for r in run.ok if r["config"] == JE]
    check(all(disturb.disturbed(r) is None for r in je), "khugepaged under huge=advise is no disturbance")
    off = [r for r in run.ok if r["config"] == "glibc[huge=never]" and r["block"] == "2"][0]
    check_eq(disturb.disturbed(off), "memory was compacted", "a compaction with huge pages off still is")
    check(disturb.disturbed(dict(off, huge="system", anon_huge_peak_kib="2048")) is None,
          "held huge pages (anon_huge_peak_kib > 0): compaction is the condition's own")
    check_eq(mbdata.thp_splits(je[0]), 210.0, "PMD + page splits")
    check_eq(mbdata.huge_of({"huge": ""}), None, "an empty huge column is not measured")


def test_calibration():
    class Run:
        metas = [{"machine": {"calibration": {"fault_ns": 10000, "huge_fault_ns": 250000}}}]
    line = thp.calibration_line(Run())
    check("(0.049x): a huge page saves most of its small pages' cost here." in line, f"a real huge page: {line!r}")
    Run.metas = [{"machine": {"calibration": {"fault_ns": 10000}}}]
    check("gives no huge-page fault cost" in thp.calibration_line(Run()), "no huge_fault_ns: said so")


def test_cli(fx, tmp):
    src = os.path.join(fx, "thp-small.csv")
    out = os.path.join(tmp, "thp.md")
    rc, _, err = entry("thp.py", src, "-o", out)
    check_eq(rc, 0, f"-o writes the report ({err.strip()})")
    rc, _, err = entry("thp.py", src, "-o", out)
    check(rc == 2 and "exists: add --force" in err, f"-o refuses to replace without --force: {rc} {err!r}")
    rc, _, err = entry("thp.py", src, "-o", out, "--force")
    check_eq(rc, 0, f"--force replaces it ({err.strip()})")
    rc, _, err = entry("thp.py", src, "-o", src, "--force")
    check(rc == 2 and "input" in err, f"never an input: {rc} {err!r}")
    bare = variant(fx, tmp, "no-huge", lambda r: r.update(huge=""))
    rc, _, err = entry("thp.py", bare)
    check(rc == 2 and "no row names a huge-page condition" in err, f"no condition: one line, exit 2: {err!r}")


def main():
    fx = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        test_sentences(report(os.path.join(fx, "thp-small.csv")))
        test_negatives(fx, tmp)
        test_data_layer(fx)
        test_calibration()
        test_cli(fx, tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
