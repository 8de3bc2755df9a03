#!/usr/bin/env python3
"""test_tune.py - `mallocbench tune` (tests/meson.build).

    test_tune.py MALLOCBENCH CASE

bad_input      bad domains, an unknown objective, an empty or unknown family list, a bad
               budget, no workload, exec's options without a command, serve without its
               client, a bad --metric: each refused with exit 2 and one line, before any
               work (no report, no CSV).
existing       a saved search is refused without --resume/--force; --resume of other
               options is refused.
budget         a 40 s budget: tune's wall time stays within the budget plus one sample
               (the longest sample it ran) plus the harness's start-up (1 s).
known_optimum  a known optimum: jemalloc's dirty_decay_ms on tensor_copy with 16 MiB
               buffers.  jemalloc purges (MADV_DONTNEED) every freed extent at or above
               oversize_threshold (8 MiB) at once unless a decay is -1, so every value of
               the domain 0|1000|10000|100000 re-faults all 64 MiB every step and -1 alone
               keeps them: a real, large and documented effect, not a test shim.  Over
               TUNE_SEEDS seeds (default 10) tune must name dirty_decay_ms=-1 in at least
               90% of them and never report a winner whose confirmed throughput is below the
               family default's.
seed           the seed's case: tensor_copy with 16 MiB buffers over glibc and jemalloc;
               the winner's confirmed throughput >= 5x glibc's default, its faults <= 5%.
               Where the machine's own limit (the same copies into buffers allocated once)
               is below 5.9x glibc's, >= 85% of that limit instead: on most VMs of
               this kind the limit is 4.9-5.9x, so 5x would be a coin toss on
               noise, not a test of tune (where re-faults cost 10x, 55x).
resume         SIGINT in round 2 exits 130 saying --resume; --resume finishes the search
               without running finished rounds again, within the budget overall.
"""
import json
import os
import signal
import subprocess
import sys
import time

from mbtest import SKIP, check, check_eq, main, rows, installed, run

# 3 steps (12 buffers of 16 MiB re-faulted per sample under a purging setting), not 10: on a VM
# where a re-fault costs about 12 us (10x other machines of the same kind; it may be the host
# taking back freed guest memory) a 10-step sample of glibc's default takes 3 s, and the 60-90 s
# budgets ended before the racing
WL = "tensor_copy:size=16M,count=4,steps=3,warmup=1"


def tune(mb, *args):
    t = time.monotonic()
    p = subprocess.run([mb, "tune", *args], capture_output=True, text=True, timeout=900)
    return p, time.monotonic() - t


def case_bad_input(mb, tmp):
    out = os.path.join(tmp, "t.md")
    bad = [
        ["-w", WL, "-a", ""],
        ["-w", WL, "-a", ","],
        ["-w", WL, "-a", "glibc,nope"],
        ["-w", WL, "--objective", "fastest"],
        ["-w", WL, "-d", "jemalloc:dirty_decay_ms=1|x"],
        ["-w", WL, "-d", "jemalloc:dirty_decay_ms=100..10"],
        ["-w", WL, "-d", "jemalloc:background_thread=0..1"],
        ["-w", WL, "-d", "jemalloc:no_such=1|2"],
        ["-w", WL, "-d", "nofamily:x=1"],
        ["-w", WL, "-d", "jemalloc"],
        ["-w", WL, "--budget", "0"],
        ["-w", WL, "--budget", "soon"],
        ["-w", WL, "--max-rss", "lots"],
        ["-w", WL, "--seed", "-1"],
        ["-w", "no_such_workload"],
        [],
        ["-w", WL, "--", "true"],
        ["--"],
        ["-w", WL, "--metric", "x: ([0-9]+)"],
        ["-w", WL, "--resume", "--force"],
        ["-a", "glibc", "--ready", "tcp:auto", "--", "true"],
        ["-a", "glibc", "--metric", "(", "--", "true"],
        ["-w", WL, "--budget", "99999999999999h"],
    ]
    for args in bad:
        p, _ = tune(mb, "-o", out, *args)
        check_eq(p.returncode, 2, f"tune {args}: exit")
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and lines[0].startswith("mallocbench: tune:"),
              f"tune {args}: one line 'mallocbench: tune: ...', got {p.stderr!r}")
        check(not os.listdir(tmp), f"tune {args}: wrote {os.listdir(tmp)} before refusing")


def case_existing(mb, tmp):
    """A search saved at -o's base is refused without --resume or --force; --resume of another
    search's options or of a finished one is refused; all in one line, exit 2, nothing changed."""
    out = os.path.join(tmp, "t.md")
    journal = os.path.join(tmp, "t.tune.json")
    with open(journal, "w") as f:
        f.write("{}")
    p, _ = tune(mb, "-w", WL, "-a", "glibc", "-o", out)
    check(p.returncode == 2 and "--resume" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"an existing search is refused naming --resume: {p.returncode} {p.stderr!r}")
    p, _ = tune(mb, "-w", WL, "-a", "glibc", "--seed", "1", "-o", out, "--resume")
    check(p.returncode == 2 and "cannot resume" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"a journal of other options is refused: {p.returncode} {p.stderr!r}")
    check_eq(sorted(os.listdir(tmp)), ["t.tune.json"], "nothing written beside the refused journal")
    check_eq(open(journal).read(), "{}", "the refused journal is left as it was")


TINY = "tensor_copy:size=64K,count=2,steps=1,warmup=0"


def case_outputs(mb, tmp):
    """tune's report is refused when it exists (no --force) and the files that only share its
    prefix survive a --force start; a hand-edited journal is one line, exit 2; a search whose
    every sample failed says why and exits non-zero (issue 29, findings 3, 11, 12)."""
    out = os.path.join(tmp, "notes.md")
    with open(out, "w") as f:
        f.write("notes\n")
    theirs = ["notes.roundup.txt", "notes.confirm.bak", "notes.rounds.csv"]
    for n in theirs:
        with open(os.path.join(tmp, n), "w") as f:
            f.write("keep\n")
    args = ["-w", TINY, "-a", "glibc,jemalloc" if "jemalloc" in installed(mb) else "glibc", "--budget", "20s",
            "--points", "2", "--seed", "1", "-o", out]
    p, _ = tune(mb, *args)
    check(p.returncode == 2 and "--force" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"an existing report is refused: {p.returncode} {p.stderr!r}")
    check_eq(open(out).read(), "notes\n", "and kept")
    p, _ = tune(mb, *args, "--force")
    check(p.returncode in (0, 1) and open(out).read().startswith("#"), f"--force writes the report: {p.stderr[-300:]!r}")
    check(all(os.path.exists(os.path.join(tmp, n)) for n in theirs), f"files tune did not write survive: {os.listdir(tmp)}")
    journal = os.path.join(tmp, "notes.tune.json")
    st = json.load(open(journal))
    st.update(finished=False, winner=None)  # as a search cut short leaves it: no report yet
    os.unlink(out)
    for key, edit in (("elapsed_s", -1e9), ("elapsed_s", -5), ("candidates", None), ("rng", 5), ("identity", 3),
                      ("rounds", [{"done": True}]), ("confirm", {})):
        bad = dict(st)
        if edit is None:
            del bad[key]
        else:
            bad[key] = edit
        with open(journal, "w") as f:
            json.dump(bad, f)
        p, _ = tune(mb, *args, "--resume")
        check(p.returncode == 2 and "cannot resume" in p.stderr and "Traceback" not in p.stderr
              and len(p.stderr.strip().splitlines()) == 1, f"journal {key}={edit}: one line, exit 2: {p.stderr!r}")
    m = os.path.join(tmp, "m.md")
    p, _ = tune(mb, "-a", "glibc", "--budget", "10s", "--points", "2", "--seed", "2", "--metric", "nomatch: (.*)",
                "-o", m, "--", "/bin/true")
    check(p.returncode == 1 and "matched no number" in p.stderr and "within the budget" not in p.stderr,
          f"a metric that never matches: exit 1 naming the samples' message: {p.returncode} {p.stderr[-400:]!r}")


def case_budget(mb, tmp):
    if "jemalloc" not in installed(mb):
        print("SKIP: jemalloc not installed", file=sys.stderr)
        raise SystemExit(SKIP)
    out = os.path.join(tmp, "t.md")
    budget = 40.0
    p, wall = tune(mb, "-w", WL, "-a", "glibc,jemalloc", "--points", "2", "--budget", f"{budget:.0f}s",
                   "--seed", "5", "-o", out)
    check_eq(p.returncode, 0, "tune exit " + p.stderr[-500:])
    info = json.load(open(os.path.join(tmp, "t.tune.json")))
    walls = []
    for rd in info["rounds"]:
        walls += [float(r["total_wall_s"]) for r in rows(rd["csv"]) if r["total_wall_s"]]
    walls += [float(r["total_wall_s"]) for r in rows(info["confirm"]["csv"]) if r["total_wall_s"]]
    one = max(walls) if walls else 0.0
    print(f"budget {budget:.0f}s: tune ran {wall:.1f}s (search {info['elapsed_s']:.1f}s), "
          f"longest sample {one:.2f}s, {len(walls)} samples")
    check(info["elapsed_s"] <= budget + one, f"search and confirmation {info['elapsed_s']:.1f}s > budget "
          f"{budget}s + one sample {one:.2f}s")
    check(wall <= budget + one + 5.0, f"whole command {wall:.1f}s > budget + one sample + 5 s of report")
    check(os.path.exists(out) and os.path.exists(info["confirm"]["csv"]), "report and confirmation CSV written")


def case_known_optimum(mb, tmp):
    if "jemalloc" not in installed(mb):
        print("SKIP: jemalloc not installed", file=sys.stderr)
        raise SystemExit(SKIP)
    seeds = int(os.environ.get("TUNE_SEEDS", "10"))
    found, losers = 0, 0
    for seed in range(1, seeds + 1):
        out = os.path.join(tmp, f"s{seed}.md")
        p, wall = tune(mb, "-w", WL, "-a", "jemalloc", "-d", "jemalloc:dirty_decay_ms=0|1000|10000|100000|-1",
                       "--points", "5", "--budget", "60s", "--seed", str(seed), "-o", out)
        check_eq(p.returncode, 0, f"seed {seed}: exit " + p.stderr[-300:])
        info = json.load(open(os.path.join(tmp, f"s{seed}.tune.json")))
        win = info["winner_setting"] or ""
        ok = "dirty_decay_ms=-1" in win.split()
        found += ok
        conf = [r for r in rows(info["confirm"]["csv"]) if r["status"] == "ok"]
        med = {}
        for c in (info["winner"], "jemalloc"):
            v = sorted(float(r["throughput"]) for r in conf if r["config"] == c or r["config"].startswith(c + "["))
            med[c] = v[len(v) // 2] if v else None
        loser = med["jemalloc"] is not None and med[info["winner"]] is not None and \
            info["winner"] != "jemalloc" and med[info["winner"]] < med["jemalloc"]
        losers += loser
        print(f"seed {seed}: winner {info['winner']} ({win}) in {wall:.0f}s; confirmed median "
              f"{med[info['winner']]} vs default {med['jemalloc']}{'  LOSER' if loser else ''}")
    print(f"known optimum found in {found} of {seeds} seeds; {losers} losers reported")
    check(found >= 0.9 * seeds, f"dirty_decay_ms=-1 found in {found} of {seeds} seeds (want >= 90%)")
    check_eq(losers, 0, "winners slower than the default in the confirmation")


def confirmed(info):
    """{config: (median throughput, median faults of the measured region)} of the confirmation."""
    conf = [r for r in rows(info["confirm"]["csv"]) if r["status"] == "ok"]
    out = {}
    for c in info["confirm"]["configs"]:
        mine = [r for r in conf if r["config"] == c or r["config"].startswith(c + "[")]
        if mine:
            tp = sorted(float(r["throughput"]) for r in mine)
            fl = sorted(float(r["region_minor_faults"]) for r in mine)
            out[c] = (tp[len(tp) // 2], fl[len(fl) // 2])
    return out


def case_seed(mb, tmp):
    """The seed's case: on fault-heavy tensor_copy (16 MiB buffers) the winner keeps its memory:
    confirmed throughput at least 5x glibc's default with at most 5% of its faults."""
    fams = [a for a in ("glibc", "jemalloc") if a in installed(mb)]
    if fams != ["glibc", "jemalloc"]:
        print("SKIP: jemalloc not installed", file=sys.stderr)
        raise SystemExit(SKIP)
    out = os.path.join(tmp, "seed.md")
    p, wall = tune(mb, "-w", WL, "-a", ",".join(fams), "--budget", "90s", "--seed", "3", "-o", out)
    check_eq(p.returncode, 0, "tune exit " + p.stderr[-500:])
    info = json.load(open(os.path.join(tmp, "seed.tune.json")))
    med = confirmed(info)
    win = info["winner"]
    check(win in med and "glibc" in med, f"winner {win} and glibc in the confirmation: {sorted(med)}")
    (wt, wf), (gt, gf) = med[win], med["glibc"]
    # the machine's limit: the same copies into buffers allocated once (no allocator, no
    # faults); no setting can beat it: 5.2x glibc's default on most VMs of this kind,
    # 55x on one where a re-fault costs 10x as much (about 12 us)
    lim = os.path.join(tmp, "limit.csv")
    run(mb, "run", "-q", "-w", WL + ",reuse=yes", "-a", "glibc", "-r", "5", "--no-limit", "-o", lim)
    tl = sorted(float(r["throughput"]) for r in rows(lim) if r["status"] == "ok")
    limit = tl[len(tl) // 2]
    # 85%: the limit runs after the search, not beside it, and its median moved by up to 10%
    # between runs here (the winner measured 0.90-1.00 of it in six runs)
    want = min(5.0, 0.85 * limit / gt)
    print(f"winner {win} ({info['winner_setting']}) in {wall:.0f}s: {wt / gt:.2f}x glibc's throughput "
          f"(the machine's limit: {limit / gt:.2f}x; the winner at {wt / limit:.2f} of it), "
          f"{wf:.0f} faults against {gf:.0f} ({100 * wf / max(gf, 1):.1f}%)")
    check(wt >= want * gt, f"winner's confirmed throughput {wt / gt:.2f}x glibc's default (want >= {want:.2f}x: "
          f"5x, or 85% of the limit where the machine cannot give 5x)")
    check(wf <= 0.05 * gf, f"winner's faults {wf:.0f} <= 5% of glibc's {gf:.0f}")
    check(os.path.exists(os.path.join(tmp, "seed.pareto-rss.png")), "the Pareto plot against peak RSS")


def case_resume(mb, tmp):
    """^C during the racing leaves the search resumable: --resume finishes it without running the
    finished rounds again, and the budget counts the time before the interruption."""
    if "jemalloc" not in installed(mb):
        print("SKIP: jemalloc not installed", file=sys.stderr)
        raise SystemExit(SKIP)
    out = os.path.join(tmp, "r.md")
    args = ["-w", WL, "-a", "glibc,jemalloc", "--points", "2", "--budget", "60s", "--seed", "9", "-o", out]
    journal = os.path.join(tmp, "r.tune.json")
    p = subprocess.Popen([mb, "tune", *args], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        try:
            st = json.load(open(journal))
        except (OSError, ValueError):
            st = {}
        if len(st.get("rounds") or []) >= 2:
            break
        time.sleep(0.05)
    time.sleep(0.5)  # inside round 2
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1]
    check_eq(p.returncode, 130, "interrupted tune's exit: " + err[-300:])
    check("--resume" in err, f"it says how to continue: {err[-300:]!r}")
    st = json.load(open(journal))
    first = {r["round"]: r.get("run_id") for r in st["rounds"] if r["done"]}
    check(st["rounds"] and not st["rounds"][-1]["done"], "the interrupted round is saved as not done")
    spent = st["elapsed_s"]
    p2, wall = tune(mb, *args, "--resume")
    check_eq(p2.returncode, 0, "resumed tune: " + p2.stderr[-500:])
    st2 = json.load(open(journal))
    again = {r["round"]: r.get("run_id") for r in st2["rounds"] if r["round"] in first}
    check_eq(again, first, "finished rounds are not run again")
    check(st2.get("winner") and os.path.exists(out), "the resumed search names a winner and writes its report")
    check(st2["elapsed_s"] <= 60 + 5, f"time before and after the interruption within the budget: "
          f"{spent:.1f}s + {wall:.1f}s -> {st2['elapsed_s']:.1f}s")
    p3, _ = tune(mb, *args, "--resume")
    check(p3.returncode == 2 and "finished" in p3.stderr, f"a finished search is not resumed: {p3.stderr!r}")


if __name__ == "__main__":
    sys.exit(main({"bad_input": case_bad_input, "existing": case_existing, "outputs": case_outputs,
                   "budget": case_budget,
                   "known_optimum": case_known_optimum, "seed": case_seed, "resume": case_resume}))
