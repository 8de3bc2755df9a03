#!/usr/bin/env python3
"""test_diagnose.py - mallocbench.diagnose's prediction and words on a fixture
(tests/fixtures/diagnose-pid.json: a jemalloc service re-faulting 87% of its faults), and on
variations of it: every figure of the first paragraph, the prediction against an independent
computation of its model, lower bounds after lost records, a setting the process started with
joined into the fix, "up to" for a process that is not CPU-bound, the upper end from
calibrate's fault cost, memory still growing, a family without a keep setting, re-faults on the
program's own give-backs (never predicted away), the breakdown summing to the faults, --all's
ranking, the Verify line (the settings it started with, a library of its own, a command's env(1)
dropped, none for a linked allocator), the words of the samples by file, and a document of
another schema refused in one line.

Usage: test_diagnose.py SOURCE_ROOT"""
import copy
import json
import math
import os
import sys

from mallocbench import cli
from mallocbench import diagnose
from mbtest import check, check_eq

ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
FIX = os.path.join(ROOT, "tests", "fixtures", "diagnose-pid.json")


def poisson(n):
    """An independent 95% interval: the exact (Garwood) one by bisection on the Poisson CDF."""
    def cdf(k, mu):
        return sum(math.exp(i * math.log(mu) - mu - math.lgamma(i + 1)) for i in range(k + 1)) if mu > 0 else 1.0

    def solve(f, lo, hi):
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return lo
    lo = 0.0 if n == 0 else solve(lambda mu: cdf(n - 1, mu) - 0.975, 0.0, n + 10 * math.sqrt(n) + 10)
    hi = solve(lambda mu: cdf(n, mu) - 0.025, 0.0, n + 10 * math.sqrt(n) + 10)
    return lo, hi


def words(doc):
    return diagnose.render(doc)


def main():
    base = json.load(open(FIX))
    lines = words(base)
    first = lines[0]
    check_eq(first, "PID 4242 (python3, jemalloc 5.3.0 preloaded, MALLOC_CONF unset): 31% of its CPU in the last "
             "10 s was the kernel's fault path and 2% the calls that give memory back; 87% of its 41,000 faults/s "
             "hit pages jemalloc had given back (2,000.0 MiB/s, most with madvise(MADV_DONTNEED)), most of them less "
             "than 100 ms earlier.", "the first line")
    # the model, computed here on its own: the removed share of the fault samples plus the give-back samples
    flo, fhi = poisson(3100)
    glo, ghi = poisson(200)
    lo, hi = (flo * 356700 / 410000 + glo) / 10000, (fhi * 356700 / 410000 + ghi) / 10000
    want = (f"`MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1` is predicted to save {100 * lo:.0f}%–{100 * hi:.0f}% "
            f"of its CPU ({1 / (1 - lo):.2f}–{1 / (1 - hi):.2f}×) for up to +310 MiB RSS.")
    check_eq(lines[1], want, "the prediction")
    t = diagnose.targets(base)[0]
    p = t["prediction"]
    check(abs(p["saved_share"][0] - lo) < 0.002 and abs(p["saved_share"][1] - hi) < 0.002,
          f"saved share {p['saved_share']} against ({lo:.4f}, {hi:.4f})")
    check_eq(lines[2], "Verify: mallocbench exec -a default=jemalloc,keep=jemalloc -t keep:dirty_decay_ms=-1 "
             "-t keep:muzzy_decay_ms=-1 -- python3 serve.py", "the verifying command")
    check_eq(sum(t["breakdown"].values()), t["faults"], "the breakdown sums to the faults")
    check("RSS 1,953 MiB → 2,051 MiB" in lines, "RSS")
    # the huge-page share is AnonHugePages / Anonymous (test_diagnose_huge.py); this document has no Anonymous
    check(any(l.startswith("Huge pages: its huge-page share was not read;") for l in lines), "no share without Anonymous")

    d = copy.deepcopy(base)
    d["watch"]["lost"] = 1200
    out = "\n".join(words(d))
    check("of its at least 41,000 faults/s" in out and "1,200 records were lost: the counts are lower bounds." in out,
          "lost records make lower bounds")

    d = copy.deepcopy(base)
    d["processes"][0]["allocator"]["vars"] = ["MALLOC_CONF=narenas:2"]
    out = words(d)
    check(out[0].startswith("PID 4242 (python3, jemalloc 5.3.0 preloaded, MALLOC_CONF=narenas:2)"), out[0])
    check(out[1].startswith("`MALLOC_CONF=narenas:2,dirty_decay_ms:-1,muzzy_decay_ms:-1` is predicted"),
          f"the fix joins what it started with: {out[1]}")

    d = copy.deepcopy(base)
    cs = d["processes"][0]["cpu_samples"]
    cs["all"], cs["user"] = 3000, 0  # 30% of one CPU over 10 s
    out = words(d)
    check("(up to " in out[1] and "It used 30% of one CPU" in out[2], f"not CPU-bound: {out[1:3]}")

    d = copy.deepcopy(base)
    d["calibrate_fault_ns"] = 15000.0  # in place: 3100 ms / 410000 faults = 7,561 ns a fault
    tc = diagnose.targets(d)[0]
    extra = 356700 * (15000.0 - 3100e6 / 410000) / 1e9  # s: under its 6 s of user time
    # with calibrate's split of a re-fault (whole, and the system time of it), the hidden part is
    # the fault samples' share x (whole / system - 1), bounded by its user time
    d2 = copy.deepcopy(d)
    d2["calibrate_refault_ns"], d2["calibrate_refault_sys_ns"] = 12000.0, 6000.0
    t2 = diagnose.targets(d2)[0]
    check(abs(t2["prediction"]["vm_part_s"] - fhi * 356700 / 410000 * 1.0 / 1000) < 1e-6,
          f"split: vm part {t2['prediction']['vm_part_s']}")
    d2["calibrate_refault_ns"] = 600000.0
    check(abs(diagnose.targets(d2)[0]["prediction"]["vm_part_s"] - 6.0) < 1e-9, "the hidden part bounded by user time")
    check(abs(tc["prediction"]["vm_part_s"] - extra) < 1e-6, f"vm part {tc['prediction']['vm_part_s']} != {extra}")
    check(abs(tc["prediction"]["saved_cpu_s"][1] - (hi * 10 + extra)) < 0.01, "the upper end adds the part a guest does not see")
    check("calibrate: 15,000 ns" in "\n".join(words(d)), "calibrate's figure shown as a cross-check")

    d = copy.deepcopy(base)
    d["processes"][0]["kept_memory"]["series"] = [[0.0, 0, 0], [2.5, 50 * 2**20, 0], [5.0, 100 * 2**20, 0],
                                                  [7.5, 200 * 2**20, 0], [10.0, 310 * 2**20, 0]]
    check("still growing by 42.0 MiB/s" in words(d)[1], f"growth: {words(d)[1]}")

    d = copy.deepcopy(base)
    d["processes"][0]["allocator"].update(family="tbbmalloc", keep=None)
    check_eq(words(d)[1], "No keep setting is known for tbbmalloc: nothing is predicted.", "no keep setting")

    d = copy.deepcopy(base)
    f = d["processes"][0]["faults"]
    f["alloc_refault_by"]["madvise"] = 0
    f["alloc_refault_pages"] = 0
    c = d["processes"][0]["calls"]["madvise"]
    c["alloc_calls"], c["alloc_bytes"] = 0, 0
    out = words(d)
    check("0% of its 41,000 faults/s hit pages jemalloc had given back and 87% pages its own code had given back"
          in out[0], f"the program's own give-backs: {out[0]}")
    check("would remove none of them" in out[1], f"nothing predicted from them: {out[1]}")

    check_verify_and_ranking(base)

    bad = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"diag-bad-{os.getpid()}.json")
    with open(bad, "w") as fh:
        json.dump({"schema": "mallocbench-report/1"}, fh)
    try:
        diagnose.load(bad)
        check(False, "another schema accepted")
    except cli.Fail as e:
        check(e.status == 2 and "not a diagnose document" in e.line, e.line)
    finally:
        os.unlink(bad)
    return 1 if diagnose_fails() else 0


def check_verify_and_ranking(base):
    """The Verify line (a command line exec takes), what the libraries' lines count, and --all's ranking."""
    # the Verify line is a command line exec takes (issue 42): the settings it started with as -t of
    # both configurations, the keep setting's own value where both name a tunable
    d = copy.deepcopy(base)
    a = d["processes"][0]["allocator"]
    a["vars"] = ["MALLOC_CONF=dirty_decay_ms:5000,narenas:2,abort:true"]
    a["as_exec"] = {"library": "", "settings": ["dirty_decay_ms=5000", "narenas=2"], "not_settable": ["MALLOC_CONF: abort:true"]}
    out = words(d)
    check_eq(out[2], "Verify: mallocbench exec -a default=jemalloc,keep=jemalloc -t default:dirty_decay_ms=5000 "
             "-t default:narenas=2 -t keep:narenas=2 -t keep:dirty_decay_ms=-1 -t keep:muzzy_decay_ms=-1 -- python3 serve.py",
             "Verify: the settings it started with, in both configurations")
    check(out[3].startswith("(The Verify line sets the allocator through exec's -a and -t only: it leaves out "
                            "MALLOC_CONF: abort:true,"), f"what the Verify line cannot carry: {out[3]}")
    a["as_exec"]["library"] = "/opt/je dev/libjemalloc.so.2"
    check_eq(words(d)[2].split(" -t ")[0], "Verify: mallocbench exec -a 'default=jemalloc:/opt/je dev/libjemalloc.so.2,"
             "keep=jemalloc:/opt/je dev/libjemalloc.so.2'", "Verify: a library of its own, as -a FAMILY:PATH")
    # a process whose arguments were left out (issue 43: they may carry secrets): the Verify line
    # ends in ARGS and says why; a command the user gave keeps its words and gains no ARGS
    d = copy.deepcopy(base)
    d["processes"][0].update(cmdline=["python3"], args_hidden=1)
    out = words(d)
    check_eq(out[2], "Verify: mallocbench exec -a default=jemalloc,keep=jemalloc -t keep:dirty_decay_ms=-1 "
             "-t keep:muzzy_decay_ms=-1 -- python3 ARGS", "Verify: a process's hidden arguments as ARGS")
    check(any("left out since they may carry secrets" in l and "--show-args" in l for l in out),
          "Verify: why its arguments are left out")
    d["mode"] = "command"
    d["target"].update(command=["python3", "x.py"], exec_command=["python3", "x.py"], exec_dropped=[])
    check(words(d)[2].endswith("-- python3 x.py"), f"a command keeps its words, no ARGS: {words(d)[2]}")
    # a command given with env(1) setting the allocator: the harness's exec_command, what it dropped said
    d = copy.deepcopy(base)
    d["mode"] = "command"
    d["target"].update(command=["env", "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "python3", "x y.py"],
                       exec_command=["python3", "x y.py"], exec_dropped=["LD_PRELOAD"])
    out = words(d)
    check_eq(out[2], "Verify: mallocbench exec -a default=jemalloc,keep=jemalloc -t keep:dirty_decay_ms=-1 "
             "-t keep:muzzy_decay_ms=-1 -- python3 'x y.py'", "Verify: the command without env's LD_PRELOAD")
    check("without env's LD_PRELOAD" in out[3] and "diagnose -a FAMILY" in out[3], f"what it dropped: {out[3]}")
    # a program that links its allocator: exec cannot swap it, so no Verify line
    d = copy.deepcopy(base)
    d["processes"][0]["allocator"]["how"] = "linked"
    out = words(d)
    check(not any(l.startswith("Verify:") for l in out), "no Verify line for a linked allocator")
    check_eq(out[2], "To verify: exec cannot swap an allocator linked into the program: start it with "
             "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1 and run diagnose again.", "a linked allocator")
    # what the libraries' lines count: CPU samples, not faults or calls
    lines = words(base)
    check(any(l.startswith("CPU samples in the fault path, by the code that touched the page: ") for l in lines),
          "the fault path's samples by file, worded for what they count")
    check(not any(l.startswith("faults by the code") or l.startswith("give-back calls by") for l in lines),
          "no line counts samples as faults or calls")

    d = copy.deepcopy(base)
    d["mode"] = "all"
    small = copy.deepcopy(d["processes"][0])
    small.update(pid=7, comm="small")
    small["cpu_samples"].update(fault=10, giveback=1)
    d["processes"] = [small, d["processes"][0]]
    check_eq([t["pid"] for t in diagnose.targets(d)], [4242, 7], "--all: ranked by what re-faults cost")


def diagnose_fails():
    from mbtest import FAILS
    return FAILS


if __name__ == "__main__":
    sys.exit(main())
