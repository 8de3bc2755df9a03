#!/usr/bin/env python3
"""test_diagnose_huge.py - mallocbench.diagnose's huge pages on variations of the fixture
(tests/fixtures/diagnose-pid.json, changed in memory only): the window's huge-page share and the
machine's huge-page faults in words; the family's huge-page setting predicted from re-faults on
whole 2 MiB blocks against an independent computation (lower end: the fault samples' share less
the blocks' huge faults; upper end: calibrate's whole re-fault cost), and no prediction where no
re-fault was on a whole block, where calibrate gave no huge fault's cost, or where the family has
no setting (its reason said).

Usage: test_diagnose_huge.py SOURCE_ROOT"""
import copy
import json
import os
import sys

from mallocbench import diagnose
from mbtest import check, check_eq

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
FIX = os.path.join(ROOT, "tests", "fixtures", "diagnose-pid.json")


def variant(base, whole, blocks, huge_ns=200000.0, refault_ns=None, setting="thp=always", none=""):
    d = copy.deepcopy(base)
    p = d["processes"][0]
    p["faults"].update(alloc_refault_whole=whole, alloc_whole_blocks=blocks)
    p["allocator"].update(huge_advise=setting, huge_none=none)
    p["proc_start"].update(anon_kib=400000, anon_huge_kib=100000)
    p["proc_end"].update(anon_kib=800000, anon_huge_kib=600000)
    p["proc_peak"] = {"anon_kib": 1000000, "anon_huge_kib": 500000}
    d["window"].update(thp_faults=1234, thp_fallbacks=5, thp_pmd_splits=7)
    d["calibrate_huge_fault_ns"] = huge_ns
    d["calibrate_refault_ns"] = refault_ns
    return d


def words(d):
    return "\n".join(diagnose.render(d))


def main():
    base = json.load(open(FIX))
    f = base["processes"][0]["faults"]
    cs = base["processes"][0]["cpu_samples"]
    nrec = f["minor"] + f["major"]

    # the share and the machine's counts, in words and in the analysis
    d = variant(base, 256000, 500)
    h = diagnose.targets(d)[0]["huge"]
    check_eq((h["share_start"], h["share_end"], h["share_peak"]), (0.25, 0.75, 0.5), "AnonHugePages / Anonymous")
    w = words(d)
    check("Huge pages: 25% at the start, 75% at the end, 50% at its largest reading (977 MiB) of its anonymous "
          "memory in huge pages; machine-wide over the window (any process's): 1,234 huge-page faults, "
          "5 fell back to small pages, 7 huge pages split" in w, "the huge-page line: " + w)

    # the prediction: lower end = fault samples x share (Poisson, exact counts) - blocks' upper x huge cost
    p = h["prediction"]
    f_lo, f_hi = diagnose.poisson_ci(cs["fault"])
    b_lo, b_hi = diagnose.poisson_ci(500)
    share = 256000 / nrec
    lo = f_lo * share - b_hi * 200000.0 / 1e6
    hi = f_hi * share - b_lo * 200000.0 / 1e6
    check_eq([round(x, 6) for x in p["saved_cpu_s"]], [round(lo / 1e3, 6), round(hi / 1e3, 6)], "saved CPU, s")
    check_eq(p["removed_faults"], 256000, "the removed faults")
    check_eq(p["huge_faults"], 500, "the huge faults: the blocks touched again")
    check(p["saved_share"][0] > 0.1, f"a saving: {p['saved_share']}")
    check("`-t jemalloc:thp=always` (its huge-page setting, huge=advise) is predicted to save " in w,
          "the prediction's words: " + w)
    check("256,000 re-faults landed on 2 MiB blocks jemalloc gave back whole; huge pages would take them as 500 "
          "huge faults of 200,000 ns" in w, "its figures in words")
    check("Verify: mallocbench exec -a jemalloc -t jemalloc:huge=system,advise -- " in w, "its Verify line")

    # --light (one fault in 16 recorded): a block is seen at its first recorded re-fault, so the
    # recorded blocks are a lower bound of the huge faults, not a sample to scale by 16; the
    # upper bound is 16x the blocks' own Poisson upper end
    d = variant(base, 16000, 500)
    d["watch"]["fault_period"] = 16
    p = diagnose.targets(d)[0]["huge"]["prediction"]
    check_eq((p["removed_faults"], p["huge_faults"], p["huge_faults_hi"]), (256000, 500, 8000),
             "--light: faults scaled, blocks as seen and 16x")
    check("would take them as between 500 and 8,000 huge faults" in words(d), "--light: the range in words")
    s_lo, s_hi = diagnose.wilson(16000, nrec)
    lo16 = f_lo * s_lo - 16 * b_hi * 200000.0 / 1e6
    hi16 = f_hi * s_hi - b_lo * 200000.0 / 1e6
    check_eq([round(x, 6) for x in p["saved_cpu_s"]], [round(lo16 / 1e3, 6), round(hi16 / 1e3, 6)],
             "--light: the blocks' huge faults between those seen and 16x, never all at 16x")

    # the upper end from calibrate's whole re-fault: the removed faults at that cost, bounded by user time
    d = variant(base, 256000, 500, refault_ns=20000.0)
    p = diagnose.targets(d)[0]["huge"]["prediction"]
    n_hi = f_hi * share / cs["fault"] * 256000
    up = max(hi, min(n_hi * 20000.0 / 1e6, f_hi * share + cs["user"]) - b_lo * 200000.0 / 1e6)
    check_eq(round(p["saved_cpu_s"][1], 6), round(up / 1e3, 6), "the upper end from calibrate's re-fault")
    check(p["saved_cpu_s"][1] > hi / 1e3, "calibrate's cost raises the upper end")

    # a huge fault dearer than the small faults it replaces: a cost, said so
    d = variant(base, 256000, 200000)
    p = diagnose.targets(d)[0]["huge"]["prediction"]
    check(p["saved_share"][1] < 0, f"a cost: {p['saved_share']}")
    check("is predicted to cost " in words(d), "a cost in words")

    # none on a whole block: no prediction
    d = variant(base, 0, 0)
    p = diagnose.targets(d)[0]["huge"]["prediction"]
    check_eq(p["saved_share"], None, "no whole-block re-fault: nothing predicted")
    check("Huge pages (thp=always): none of its re-faults were on a whole 2 MiB block jemalloc had given back: "
          "nothing is predicted." in words(d), "its words")

    # no huge fault's cost: the prediction asks for --calibrate, never guesses
    d = variant(base, 256000, 500, huge_ns=None)
    check_eq(diagnose.targets(d)[0]["huge"]["prediction"]["saved_share"], None, "no calibration: nothing predicted")
    check("the prediction needs a huge fault's cost: run diagnose with --calibrate" in words(d), "--calibrate asked")

    # a family without a setting: its reason
    d = variant(base, 256000, 500, setting="", none="gperftools 2.10 has no transparent-huge-page setting")
    check("Huge pages (no setting): gperftools 2.10 has no transparent-huge-page setting: nothing is predicted."
          in words(d), "huge_none's reason")

    # an older document (no huge keys): no share, no prediction, no failure
    w = words(base)
    check("its huge-page share was not read" in w and "/proc/vmstat unreadable" in w, "an older document's words")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
