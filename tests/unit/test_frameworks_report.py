#!/usr/bin/env python3
"""test_frameworks_report.py - scripts/frameworks.py's report on a fixture whose figures are
known (tests/fixtures/frameworks-fw.csv, 4 blocks, glibc / jemalloc / je-keep on elementwise.py
and train.py; frameworks-replay.csv their replays): the sentences name jemalloc as re-faulting
with its figure and kernel share, je-keep as the fix with its RSS cost, glibc on elementwise as
bimodal with both modes and their counts; the fidelity verdicts and Kendall's tau; the worst
configuration of train; mbdata's modes and kendall_tau on known input; bad input one line, exit 2.
Usage: test_frameworks_report.py FIXTURE_DIR"""
import os
import subprocess
import sys
import tempfile

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(TESTS, "..", "scripts")
from mbtest import FAILS, check, check_eq  # noqa: E402
from mallocbench import frameworks

FW = os.path.join(SCRIPTS, "frameworks.py")


def report(*args):
    p = subprocess.run([sys.executable, FW, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def line_with(text, *words):
    hits = [ln for ln in text.splitlines() if all(w in ln for w in words)]
    return hits[0] if hits else ""


def test_sentences(fx):
    rc, out, err = report(os.path.join(fx, "frameworks-fw.csv"), "--replay", os.path.join(fx, "frameworks-replay.csv"))
    check_eq(rc, 0, f"report on the fixture ({err.strip()})")
    s = line_with(out, "**elementwise**: jemalloc re-faults")
    check("557 k page faults per run" in s and "32.8× the lowest (je-keep, 17.0 k)" in s,
          f"jemalloc named as re-faulting with its figure: {s!r}")
    # sys 0.75 / (0.25 + 0.75); glibc 0.2 / 0.7
    check("75% of its CPU time in the region is the kernel's" in s and "against 29% under glibc" in s,
          f"the kernel's share: {s!r}")
    check("**je-keep**" in s and "557 k → 17.0 k faults" in s, f"je-keep named as the fix: {s!r}")
    check("peak RSS 350 MiB → 420 MiB (+70 MiB, +20%)" in s, f"the fix's RSS cost: {s!r}")
    b = line_with(out, "**elementwise** under glibc is bimodal")
    check("2 run(s) near 98.0 k and 2 near 1.10 M" in b, f"glibc on elementwise flagged bimodal with its modes: {b!r}")
    check(not line_with(out, "**elementwise**: glibc re-faults"), "a bimodal cell is not averaged into a re-fault figure")
    check("bimodal: 98.0 k ×2 / 1.10 M ×2" in line_with(out, "| elementwise | glibc |"), "the table gives both modes")
    t = line_with(out, "| train | jemalloc | 0.80")
    check(t != "", "train under jemalloc at 0.80× of glibc (paired per block)")
    # fidelity: elementwise/jemalloc 590k vs 597k whole: within; je-keep 50k vs 57k: not (counts
    # written as compare writes a value, words.fmt_count: 590 k, 50.0 k)
    # the fixture's replay rows carry no region=recorded: held against the whole process, marked so
    check(line_with(out, "| elementwise | jemalloc | 590 k | 597 k (whole) |").count("| yes |") == 1,
          "590k within 10% of 597k")
    check(line_with(out, "| elementwise | je-keep | 50.0 k | 57.0 k (whole) |").count("| no |") == 1,
          "50k not within 10% of 57k")
    check("Kendall's tau of the throughput ranking 1.00" in line_with(out, "replay of elementwise")
          and "same best and worst: yes" in line_with(out, "replay of elementwise"), "elementwise replay ranks alike")
    check("-1.00" in line_with(out, "replay of train") and "same best and worst: no" in line_with(out, "replay of train"),
          "train replay ranks reversed")
    check("**whole process**" in out and "the replay's region against the real program's **region**" in out,
          "the report says what is held against what")


def test_left_out(fx):
    """make frameworks' default run names what it did not measure; a whole run says nothing of it."""
    fw = os.path.join(fx, "frameworks-fw.csv")
    rc, out, err = report(fw, "--left-out", "configurations: scudo tbbmalloc", "--left-out", "programs: numpy")
    check_eq(rc, 0, f"report with --left-out ({err.strip()})")
    check("## Left out of this run" in out and "- configurations: scudo tbbmalloc" in out
          and "- programs: numpy" in out and "FULL=1" in out, "the report lists what the run left out")
    rc, out, err = report(fw)
    check(rc == 0 and "Left out" not in out, "a run that left nothing out says nothing of it")


def fail_config(src, dst, config, message):
    """src with every row of config turned into an error with message (as a run whose samples
    all failed leaves them)."""
    import csv
    with open(src, newline="") as f:
        recs = list(csv.reader(f))
    h = recs[0]
    for r in recs[1:]:
        if r[h.index("config")] == config:
            r[h.index("status")], r[h.index("message")] = "error", message
    with open(dst, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(recs)


def test_no_ok_sample(fx, tmp):
    """A configuration whose every sample failed is named with its rows' message in the framework
    report, report.py and summary.py, never dropped so that the rest reads as the whole story
    (issue 29, finding 10)."""
    fw = os.path.join(tmp, "fw-failed.csv")
    fail_config(os.path.join(fx, "frameworks-fw.csv"), fw, "jemalloc", "killed by signal 9 (SIGKILL)")
    rc, out, err = report(fw)
    check_eq(rc, 0, f"report with a failed configuration ({err.strip()})")
    s = line_with(out, "jemalloc on", "none of its")
    check("## Configurations with no ok sample" in out and "SIGKILL" in s, f"the failed configuration named: {s!r}")
    check("No configuration re-faults" not in out, "no sentence that reads as if every configuration was measured")
    small = os.path.join(tmp, "small-failed.csv")
    fail_config(os.path.join(fx, "small-run.csv"), small, "tcmalloc", "the allocator is not the one asked for")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "summary.py"), small], capture_output=True, text=True)
    check(p.returncode == 0 and "no ok sample: tcmalloc on" in p.stdout and "not the one asked for" in p.stdout,
          f"summary names it: {p.stdout[-400:]!r} {p.stderr[-300:]!r}")
    out_dir = os.path.join(tmp, "rep")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "report.py"), small, "-o", out_dir, "--no-plots"],
                       capture_output=True, text=True)
    text = open(os.path.join(out_dir, "report.md")).read() if p.returncode == 0 else ""
    first = text.split("## What this shows")[0]
    check("## Read this first" in first and "no ok sample: tcmalloc on" in first,
          f"report.py names it in its first lines: {p.stderr[-300:]!r}")


def test_paced(fx):
    """Replay rows paced as recorded (timing=recorded) give the fidelity table its counts;
    the fast rows alone rank the allocators (a paced replay's throughput is the recording's)."""
    import csv
    with open(os.path.join(fx, "frameworks-replay.csv"), newline="") as f:
        rd = csv.DictReader(f)
        fields, rows = rd.fieldnames, list(rd)
    paced = []
    for r in rows:
        q = dict(r)
        q["sample"] = str(int(r["sample"]) + 100)
        q["position"] = str(int(r["position"]) + 100)  # one plan: the paced cells are other positions
        q["workload_params"] = r["workload_params"].replace("timing=fast", "timing=recorded")
        # je-keep on elementwise: 56k paced (within 10% of the program's 57k), 50k fast
        if q["config"].startswith("je-keep") and "elementwise" in q["workload_params"]:
            q["region_minor_faults"] = "56000"
        q["throughput"] = "1.0"  # paced: the same for every allocator
        paced.append(q)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "replay.csv")
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            w.writerows(rows + paced)
        rc, out, err = report(os.path.join(fx, "frameworks-fw.csv"), "--replay", path)
    check_eq(rc, 0, f"report on the fixture with paced rows ({err.strip()})")
    check(line_with(out, "| elementwise | je-keep | 56.0 k | 57.0 k (whole) |").count("| yes |") == 1,
          "the paced replay's 56k is the count held against the program's 57k")
    check("Kendall's tau of the throughput ranking 1.00" in line_with(out, "replay of elementwise"),
          "the ranking is still the fast replay's")


def test_rank_line():
    """The ranking over every configuration, then over the families' defaults only: two
    settings of one family swapping first place fails the first and not the second."""
    from mallocbench import frameworks as fw
    real = {"glibc": 1.0, "jemalloc": 0.5, "tcmalloc": 1.30, "tc-keep": 1.29, "scudo": 0.4}
    rep = {"glibc": 1.0, "jemalloc": 0.6, "tcmalloc": 1.28, "tc-keep": 1.31, "scudo": 0.3}
    line = fw.rank_line("replay of x", real, rep, ["glibc", "jemalloc", "tcmalloc", "scudo"])
    whole, _, fam = line.partition("; among the 4 families' defaults: ")
    check("best/worst real tcmalloc/scudo, replay tc-keep/scudo: same best and worst: no" in whole,
          f"every configuration: tc-keep first in the replay: {line!r}")
    check(fam.startswith("Kendall's tau of the throughput ranking 1.00")
          and "best/worst real tcmalloc/scudo, replay tcmalloc/scudo: same best and worst: yes" in fam,
          f"the families' defaults rank alike: {line!r}")
    check("among" not in fw.rank_line("replay of x", real, rep, ["glibc", "jemalloc"]),
          "no family comparison over two defaults")


def test_worst(fx):
    rc, out, err = report("--worst", "train", os.path.join(fx, "frameworks-fw.csv"))
    check_eq((rc, out.strip()), (0, "jemalloc"), f"the worst configuration of train ({err.strip()})")


def test_helpers():
    check_eq(frameworks.modes([98e3, 1.1e6, 99e3, 1.2e6, 97e3]), [(98e3, 3), (1.15e6, 2)], "two modes with counts")
    check_eq(frameworks.modes([100, 120, 110]), [(110, 3)], "one mode")
    check_eq(frameworks.kendall_tau({"a": 1, "b": 2, "c": 3}, {"a": 10, "b": 20, "c": 30}), 1.0, "tau of one order")
    check_eq(frameworks.kendall_tau({"a": 1, "b": 2, "c": 3}, {"a": 3, "b": 2, "c": 1}), -1.0, "tau reversed")
    check_eq(round(frameworks.kendall_tau({"a": 1, "b": 2, "c": 3, "d": 4}, {"a": 1, "b": 2, "c": 4, "d": 3}), 4),
             0.6667, "tau with one swapped pair: (5 - 1) / 6")
    check_eq(frameworks.kendall_tau({"a": 1}, {"a": 1}), None, "tau of one key")
    check_eq(frameworks.best_worst({"x": 2.0, "y": 5.0, "z": 1.0}), ("y", "z"), "best and worst")
    check_eq((frameworks.within(109, 100), frameworks.within(111, 100)), (True, False), "within 10%")


def test_bad_input(tmp):
    empty = os.path.join(tmp, "empty.csv")
    open(empty, "w").close()
    wrong = os.path.join(tmp, "wrong.csv")
    with open(wrong, "w") as f:
        f.write("a,b\n1,2\n")
    for path in (empty, wrong, os.path.join(tmp, "missing.csv")):
        rc, out, err = report(path)
        check(rc == 2 and err.count("\n") == 1 and err.startswith("mallocbench: frameworks: ") and "Traceback" not in err,
              f"{os.path.basename(path)}: one line, exit 2 (rc {rc}: {err!r})")


def main():
    fx = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        test_sentences(fx)
        test_paced(fx)
        test_left_out(fx)
        test_rank_line()
        test_worst(fx)
        test_helpers()
        test_bad_input(tmp)
        test_no_ok_sample(fx, tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
