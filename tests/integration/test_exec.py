#!/usr/bin/env python3
"""test_exec.py - `mallocbench exec` on real Debian programs (tests/meson.build).

    test_exec.py MALLOCBENCH CASE [BUILDDIR]

perfstat     python3 (a large dict, PYTHONMALLOC=malloc), xz -T1 and sort over
             generated data, and sh running two of them: under every installed
             allocator, status ok, the allocator proven in every process, and
             whole-process faults, madvise, munmap and brk within 2% of perf stat
             of the printed command (or, where the program itself varies from
             run to run, their lowest runs within 2%, the two tools' ranges of
             runs overlap, or two small counts differ by at most 2 calls).
             Prints the table.
probe_neutral  the armed probe leaves the allocator as it is: malloc_large's
             faults under perf stat with and without MB_PROBE_FD, and exec's, within
             1% under every family (tcmalloc once: +75%).
refuse       a static, a setuid, a jemalloc-linked and a malloc-defining program
             are refused before any run, each with its reason.
region       a program that marks its region (include/mallocbench.h): the region
             columns count the marked work only.
metric       --metric takes the printed figure, its unit and direction; no match
             is a row with status error; a sign is kept; 1e999 (not finite)
             and a line cut by the kept window of output are errors.
descendants  the preload follows fork and exec: processes counted, and a child
             that links its own allocator makes the row an error.
matrix       exec as a workload of a matrix file.
stragglers   a daemon the command starts with setsid outlives it: the harness
             (a child subreaper) kills it at the end of the sample and the row
             counts it in stragglers_killed.
forged       a command that writes its own proc:/key=value lines to fd 4 or a
             result line to fd 3 is not taken as proof or result: the row is
             an error "forged report on fd N"; the probe's secret is not in
             the command's environment nor in /proc/PID/environ.
hooks        --prepare before and --conclude after each sample (warm-ups too), --cleanup
             once per configuration after its last: in that order, outside the sample's
             counters (a prepare that faults 64 MiB in is not in the row, and not a
             process of it), without the probe or the allocator's environment; a failing
             or killed prepare makes the sample an error row naming the command and its
             status (the command not run, no figures), a failing conclude the same for
             its sample only, a failing cleanup a warning; a hook that leaves a process
             behind does not hold the run; bad hooks refused before any work in one
             line; the sidecar records them.
readable     exec's views read like hyperfine: the summary shows a command's time,
             'N s [LO..HI]', --runs-per-s its runs/s; --unit names the column; a
             title names the program and its arguments once, never the regex.
diagnostics  each failure says what it is: under RLIMIT_NOFILE 16 the child's
             set-up errno (not "exit code 126: (no output)") and a failed
             run; a non-executable file and a directory named as such; a
             child that stops itself "stopped (SIGSTOP)", not a time-out.
"""
import json
import os
import random
import re
import shlex
import shutil
import stat
import subprocess
import sys

from mbtest import SKIP, check, check_eq, main, metrics, rows, run, installed

BUILD = sys.argv[3] if len(sys.argv) > 3 else os.path.dirname(os.path.abspath(sys.argv[1]))
TESTS = os.path.join(BUILD, "tests")
COUNTS = ["total_minor_faults", "total_madvise_calls", "total_munmap_calls", "total_brk_calls"]


def data_files(tmp):
    rnd = random.Random(12)
    nums = os.path.join(tmp, "nums.txt")
    with open(nums, "w") as f:
        f.write("\n".join(str(rnd.randrange(10**9)) for _ in range(300000)) + "\n")
    return nums


def programs(tmp):
    nums = data_files(tmp)
    return {
        "python3": ["env", "PYTHONMALLOC=malloc", "/usr/bin/python3", "-c",
                    "d = {i: str(i) * 3 for i in range(300000)}"],
        # xz with one thread: with two, tcmalloc's faults are bimodal (+512 pages, a 2 MiB
        # span, in about half the runs, whoever counts), so 3 runs per tool can land in
        # different modes; sort --parallel=2 still has a second thread counted
        "xz": ["xz", "-T1", "-6", "-f", "-k", nums],
        "sort": ["sort", "-n", "--parallel=2", "-S", "32M", nums, "-o", os.path.join(tmp, "sorted.txt")],
        "sh": ["sh", "-c", f"sort -n {shlex.quote(nums)} -o {shlex.quote(tmp)}/s2.txt && "
               f"xz -T1 -1 -f -k {shlex.quote(nums)}"],
    }


def exec_rows(mb, tmp, name, argv, *opts):
    out = os.path.join(tmp, f"{name}.csv")
    if os.path.exists(out):
        os.remove(out)
    p = run(mb, "exec", "-q", "--force", "-o", out, *opts, "--", *argv, expect_rc=None)
    rs = rows(out)
    # exit 4 exactly when no sample was ok (a configuration without one), else 0
    want = 0 if any(r["status"] == "ok" for r in rs) else 4
    check(p.returncode == want, f"exec {name}: exit {p.returncode}, expected {want} for statuses "
                                f"{[r['status'] for r in rs]}: {p.stderr[-300:]!r}")
    return rs


def printed(mb, alloc, argv):
    out = run(mb, "exec", "--print-commands", "-r", "1", "-a", alloc, "--", *argv).stdout
    return shlex.split([l for l in out.splitlines() if not l.startswith("#")][0])


def perf_stat(argv):
    from benchlib import perf_stat as ps  # (its stderr, e.g. tbbmalloc's banner, is dropped)
    return ps(argv)


def pct(a, b):
    return (a - b) / b * 100 if b else (0.0 if a == b else float("inf"))


def agree(h, p):
    """Medians within 2%, or the lower envelopes (minimums) within 2%; for
    counts of a few dozen calls, which vary by one or two from run to run
    under either tool (tcmalloc's brk in sh: 19..21 under perf stat alone;
    jemalloc's time-based purging), ranges that overlap or medians at most 2
    calls apart.

    The minimums are there for programs whose own counts are bimodal: sort
    with two threads under tcmalloc faults 6670 or, in about one run of 25,
    7181 times under perf stat alone (+511 pages, its timing), so 3 runs of
    each tool can put the two medians in different modes.  Extra work of the
    program's own only raises counts, so the lowest run of each tool is the
    quietest; a harness that added faults to every run would still fail."""
    hv, pv = sorted(h)[len(h) // 2], sorted(p)[len(p) // 2]
    diff = pct(hv, pv)
    overlap = max(min(h), min(p)) <= min(max(h), max(p))
    fdiff = pct(min(h), min(p))
    ok = abs(diff) <= 2.0 or abs(fdiff) <= 2.0 or overlap or abs(hv - pv) <= 2
    note = f" (lowest runs {fdiff:+.1f}%)" if abs(diff) > 2.0 else ""
    return ok, diff, note


def case_perfstat(mb, tmp):
    if not shutil.which("perf"):
        print("SKIP: perf not installed", file=sys.stderr)
        sys.exit(77)
    reps = 3
    allocs = installed(mb)
    print(f"{'program':8} {'allocator':10} {'faults':>9} {'perf':>9} {'madvise':>8} {'munmap':>7} "
          f"{'brk':>5} {'sys%':>5} {'wall s':>7} procs  perf-stat agreement")
    for name, argv in programs(tmp).items():
        rs = exec_rows(mb, tmp, name, argv, "-a", ",".join(allocs), "-r", str(reps))
        check_eq(len(rs), reps * len(allocs), f"{name}: rows")
        for alloc in allocs:
            mine = [r for r in rs if r["allocator"] == alloc]
            for r in mine:
                check(r["status"] == "ok", f"{name} {alloc}: status {r['status']}: {r['message']}")
                check(r["malloc_so"] != "", f"{name} {alloc}: no proof of the allocator")
            procs = {metrics(r).get("processes") for r in mine}
            want = {"3"} if name == "sh" else {"1"}
            check_eq(procs, want, f"{name} {alloc}: processes that loaded the probe")
            cmd = printed(mb, alloc, argv)
            perf = [perf_stat(cmd) for _ in range(reps)]
            verdicts = []
            for col in COUNTS:
                h = [float(r[col]) for r in mine if r[col]]
                p = [x[col] for x in perf if col in x]
                if not h or not p:
                    check(False, f"{name} {alloc}: {col} missing")
                    continue
                ok, diff, note = agree(h, p)
                verdicts.append(f"{col.split('_')[1]} {diff:+.1f}%{note}" + ("" if ok else " DISAGREE"))
                check(ok, f"{name} {alloc}: {col} harness {sorted(h)} vs perf stat {sorted(p)}")
            med = lambda col: sorted(float(r[col]) for r in mine)[len(mine) // 2]
            cpu = med("total_user_s") + med("total_sys_s")
            print(f"{name:8} {alloc:10} {med('total_minor_faults'):9.0f} "
                  f"{sorted(x['total_minor_faults'] for x in perf)[reps // 2]:9.0f} "
                  f"{med('total_madvise_calls'):8.0f} {med('total_munmap_calls'):7.0f} "
                  f"{med('total_brk_calls'):5.0f} {100 * med('total_sys_s') / cpu if cpu else 0:5.1f} "
                  f"{med('total_wall_s'):7.3f} {','.join(sorted(procs - {None}))}  {'; '.join(verdicts)}")


def probe_calls(probe, armed):
    """Allocator calls of `true` with count_malloc serving malloc and the probe behind it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MB_", "LD_PRELOAD", "MALLOC_"))}
    env["LD_PRELOAD"] = f"{os.path.join(BUILD, 'tests', 'libcount_malloc.so')}:{probe}"
    if armed:
        env["MB_PROBE_FD"] = "2"
    p = subprocess.run(["/bin/true"], env=env, capture_output=True, text=True)
    m = re.search(r"count_malloc: (\d+) calls", p.stderr)
    check(m is not None, f"count_malloc's line (armed={armed}): {p.stderr!r}")
    return int(m.group(1)) if m else -1


def case_probe_neutral(mb, tmp):
    """The armed probe (MB_PROBE_FD set, as in every counted sample) changes
    nothing in the allocator.  It makes no allocator call of its own: under
    count_malloc the calls of /bin/true are the same armed and unarmed (its
    failed dlsym calls once allocated their error strings: glibc's).  And
    the end effect: malloc_large's faults under perf stat with the probe
    armed and unarmed, and exec's own, agree within 1% (or their runs
    overlap) under every family; under tcmalloc such a program once faulted
    223k times armed against 127k, from a few small allocations before main."""
    probe = os.path.join(BUILD, "libmbprobe.so")
    plain, armed = probe_calls(probe, False), probe_calls(probe, True)
    print(f"allocator calls of /bin/true: {plain} with the probe unarmed, {armed} armed")
    check(plain >= 0 and armed == plain, f"the armed probe allocates: {armed} calls against {plain}")
    prog = os.path.join(BUILD, "tests", "malloc_large")
    if not shutil.which("perf") or not os.access(prog, os.X_OK):
        print("SKIP: perf or tests/malloc_large (a C++ compiler) missing", file=sys.stderr)
        sys.exit(SKIP)
    argv = [prog, "200"]
    for alloc in installed(mb):
        cmd = printed(mb, alloc, argv)
        at = next(i for i, w in enumerate(cmd) if w.startswith("LD_PRELOAD="))  # after env's -u options
        plain = [perf_stat(cmd)["total_minor_faults"] for _ in range(2)]
        armed = [perf_stat(cmd[:at] + ["MB_PROBE_FD=2"] + cmd[at:])["total_minor_faults"] for _ in range(2)]
        rs = exec_rows(mb, tmp, f"ml-{alloc}", argv, "-a", alloc, "-r", "2", "--warmup-runs", "0")
        harness = [float(r["total_minor_faults"]) for r in rs if r["status"] == "ok"]
        check_eq(len(harness), 2, f"{alloc}: ok rows")
        p = sorted(plain)[0]
        print(f"{alloc:10s} faults: perf stat {plain}, probe armed {armed} ({pct(min(armed), p):+.2f}%), "
              f"exec {harness}")
        # mimalloc purges on a timer (decommit_delay): its counts move by 1-2% with the timing of
        # the run (seen: 658k-675k between runs of perf stat alone under load), not with the probe
        tol = 2.0 if alloc == "mimalloc" else 1.0
        for what, got in (("the armed probe", armed), ("exec", harness)):
            overlap = max(min(got), min(plain)) <= min(max(got), max(plain))
            check(got and (abs(pct(min(got), p)) <= tol or overlap),
                  f"{alloc}: {what} gives {got} faults against perf stat's {plain}")


def case_refuse(mb, tmp):
    suid = os.path.join(tmp, "suid_true")
    shutil.copy("/bin/true", suid)
    os.chmod(suid, 0o4755)
    script = os.path.join(tmp, "static.sh")
    with open(script, "w") as f:
        f.write(f"#!{os.path.join(TESTS, 'exec_static')}\n")
    os.chmod(script, 0o755)
    cases = [
        ([os.path.join(TESTS, "exec_static")], "statically linked"),
        ([suid], "setuid"),
        ([os.path.join(TESTS, "own_malloc_je")], "links jemalloc itself (libjemalloc.so.2)"),
        ([os.path.join(TESTS, "own_malloc_def")], "defines its own malloc"),
        ([script], "statically linked"),
        (["no-such-program-here"], "not found on PATH"),
    ]
    for argv, why in cases:
        if "own_malloc_je" in argv[0] and not os.path.exists(argv[0]):
            continue  # jemalloc not installed: the build skipped that program
        out = os.path.join(tmp, "refused.csv")
        p = run(mb, "exec", "-o", out, "--", *argv, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and why in lines[0], f"{argv[0]}: expected one line with '{why}', got {p.stderr!r}")
        check(not os.path.exists(out), f"{argv[0]}: refused, yet {out} was written")
    # a program of several lines after -c: one line saying what to do instead
    out = os.path.join(tmp, "multi.csv")
    p = run(mb, "exec", "-o", out, "--", "python3", "-c", "import os\nprint(1)", expect_rc=2)
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and "a line break" in lines[0] and "in a file" in lines[0],
          f"a multi-line -c program: one line saying to use a file, got {p.stderr!r}")
    check(not os.path.exists(out), f"a multi-line program refused, yet {out} was written")
    # exec and serve without '--': one line, not the usage in front of it
    for cmd in (["exec", "-a", "glibc"], ["exec", "--", ], ["serve", "-a", "glibc"]):
        p = run(mb, *cmd, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and "give " in lines[0], f"{' '.join(cmd)}: expected one line, got {p.stderr!r}")
    # the same programs run as they are: the checks are about preloading, not about running
    check(subprocess.run([os.path.join(TESTS, "exec_static"), "1", "1"], capture_output=True).returncode == 0,
          "exec_static itself runs")


def case_region(mb, tmp):
    prog = os.path.join(TESTS, "exec_region")
    for alloc in ["glibc"] + [a for a in installed(mb) if a == "jemalloc"]:
        rs = exec_rows(mb, tmp, "region", [prog, "20000", "5000"], "-a", alloc, "-r", "2")
        for r in rs:
            check_eq(r["status"], "ok", f"region {alloc}: status ({r['message']})")
            region, total = float(r["region_minor_faults"]), float(r["total_minor_faults"])
            # the region faults its 5000 pages, give or take a few of the handshake's
            check(5000 <= region <= 5000 * 1.02, f"region {alloc}: region faults {region}, expected ~5000")
            check(total >= 25000, f"region {alloc}: total faults {total}, expected >= 25000")
            check(float(r["region_wall_s"]) < float(r["total_wall_s"]), f"region {alloc}: region wall < total")
            check(abs(float(r["throughput"]) * float(r["region_wall_s"]) - 1) < 1e-3,
                  f"region {alloc}: throughput is 1 / region wall time")
            check("marks" in r["metric"] and "wall time of the command" not in r["metric"],
                  f"region {alloc}: the label says the figure is of the marked region: {r['metric']!r}")
    # the progress line gives the time the figure is of: the region's, not the whole run's
    out = os.path.join(tmp, "progress.csv")
    p = run(mb, "exec", "--force", "-o", out, "-a", "glibc", "-r", "1", "--", prog, "20000", "5000")
    line = [l for l in p.stderr.splitlines() if l.startswith("[1/1]")]
    r = rows(out)[0]
    m = re.search(r"([0-9.]+)s$", line[0]) if line else None
    check(m and abs(float(m.group(1)) - float(r["region_wall_s"])) < 0.006,
          f"progress shows the region's time ({r['region_wall_s']} s of {r['total_wall_s']} s): {line!r}")
    # without markers the region is the whole process
    r = exec_rows(mb, tmp, "whole", ["/bin/true"], "-a", "glibc", "-r", "1")[0]
    check_eq(r["region_minor_faults"], r["total_minor_faults"], "no markers: region = whole process")


def case_metric(mb, tmp):
    argv = ["sh", "-c", "echo warming up 99; echo 'rate: 1234.5 ops/s'; echo done"]
    r = exec_rows(mb, tmp, "metric", argv, "-a", "glibc", "-r", "1", "--metric", r"rate: ([0-9.]+)",
                  "--unit", "ops/s")[0]
    check_eq((r["status"], r["throughput"], r["throughput_unit"], r["metric_better"]),
             ("ok", "1234.5", "ops/s", "higher"), "metric: the printed figure")
    r = exec_rows(mb, tmp, "metric2", ["sh", "-c", "echo took 2.5 s"], "-a", "glibc", "-r", "1",
                  "--metric", "took", "--lower-is-better")[0]
    check_eq((r["throughput"], r["metric_better"]), ("2.5", "lower"), "metric: first number, lower is better")
    r = exec_rows(mb, tmp, "metric3", ["sh", "-c", "echo nothing"], "-a", "glibc", "-r", "1",
                  "--metric", "rate: ([0-9.]+)")[0]
    check(r["status"] == "error" and "matched no number" in r["message"], f"metric: no match: {r['message']}")
    r = exec_rows(mb, tmp, "metric4", ["sh", "-c", "echo 'x: -2.5'"], "-a", "glibc", "-r", "1", "--metric", "x:")[0]
    check_eq((r["status"], r["throughput"]), ("ok", "-2.5"), "metric: the sign is kept")
    r = exec_rows(mb, tmp, "metric5", ["sh", "-c", "echo 'x: 1e999'"], "-a", "glibc", "-r", "1", "--metric", "x:")[0]
    check(r["status"] == "error" and "not finite" in r["message"] and r["throughput"] == "",
          f"metric: 1e999 is an error, not inf: {r['status']}: {r['message']}: {r['throughput']}")
    # 5001 bytes, 123456, then 4090 bytes: the last 4095 bytes kept start at "3456", and the
    # bytes before them are not all in the first 4095 (with them, the line would be whole)
    cut = ("head -c 5000 /dev/zero | tr '\\0' x; echo; printf '123456\\n'; "
           "head -c 4089 /dev/zero | tr '\\0' x; echo")
    r = exec_rows(mb, tmp, "metric6", ["sh", "-c", cut], "-a", "glibc", "-r", "1", "--metric", "^([0-9]+)$")[0]
    check(r["status"] == "error" and "cut" in r["message"] and r["throughput"] == "",
          f"metric: a line the window cut is an error: {r['status']}: {r['message']}: {r['throughput']}")
    p = run(mb, "exec", "--metric", "(unclosed", "--", "true", expect_rc=2)
    check("not an extended regular expression" in p.stderr, f"metric: bad regex: {p.stderr!r}")
    # a failing command is a row with its exit code, not a harness error
    out = os.path.join(tmp, "fail.csv")
    run(mb, "exec", "-q", "-o", out, "-a", "glibc", "-r", "1", "--", "sh", "-c", "echo oops; exit 3", expect_rc=4)
    r = rows(out)[0]
    check(r["status"] == "error" and "exit code 3: oops" in r["message"], f"failing command: {r['message']}")


def case_descendants(mb, tmp):
    allocs = [a for a in installed(mb) if a in ("glibc", "mimalloc", "jemalloc")]
    argv = ["sh", "-c", "true && ls / >/dev/null && sort /dev/null"]
    for alloc in allocs:
        r = exec_rows(mb, tmp, "desc", argv, "-a", alloc, "-r", "1")[0]
        check_eq((r["status"], metrics(r).get("processes")), ("ok", "3"), f"descendants {alloc}: sh, ls, sort")
    own = os.path.join(TESTS, "own_malloc_je")
    if os.path.exists(own):
        r = exec_rows(mb, tmp, "escape", ["sh", "-c", f"{own}; true"], "-a", "glibc", "-r", "1")[0]
        check(r["status"] == "error" and "libjemalloc" in r["message"] and "got malloc from" in r["message"],
              f"a child with its own allocator: {r['status']}: {r['message']}")
        check_eq(r["total_minor_faults"], "", "an untrusted row reports no figures")


def case_tree_memory(mb, tmp):
    """A shell that runs a program holding 64 MiB: the first process's RSS is the shell's few MiB,
    tree_pss_peak_kib is the whole tree's (issue 29, finding 8); --tree-interval 0 reads none."""
    prog = "import time; b = bytearray(64 << 20); time.sleep(0.3)"
    argv = ["sh", "-c", f"python3 -c '{prog}'; true"]
    r = exec_rows(mb, tmp, "tree", argv, "-a", "glibc", "-r", "1")[0]
    rss, tree, maxrss = int(r["rss_peak_kib"] or 0), int(r["tree_pss_peak_kib"] or 0), int(r["ru_maxrss_kib"] or 0)
    check(r["status"] == "ok" and rss < 32 << 10 and tree > 64 << 10 and maxrss > 64 << 10,
          f"the shell's RSS {rss} KiB, the tree's PSS {tree} KiB, the largest maxrss {maxrss} KiB")
    r = exec_rows(mb, tmp, "notree", argv, "-a", "glibc", "-r", "1", "--tree-interval", "0")[0]
    check_eq(r["tree_pss_peak_kib"], "", "--tree-interval 0: not read")
    meta = json.load(open(os.path.join(tmp, "notree.meta.json")))
    check_eq(meta.get("tree_pss_interval_s"), 0, "the sidecar says how often it was read")


def case_matrix(mb, tmp):
    m = os.path.join(tmp, "exec.ini")
    with open(m, "w") as f:
        f.write("[run]\nrepetitions = 2\nallocators = glibc\n\n[workload exec]\n"
                "cmd = sh -c 'echo a, b; echo score 7'\nmetric = score ([0-9]+)\n")
    out = os.path.join(tmp, "m.csv")
    run(mb, "run", "-q", "-m", m, "-o", out)
    rs = rows(out)
    check_eq([(r["status"], r["throughput"]) for r in rs], [("ok", "7")] * 2, "matrix exec rows")
    check(rs and "cmd=sh -c 'echo a, b; echo score 7'" in rs[0]["workload_params"],
          f"workload_params: {rs[0]['workload_params'] if rs else None}")


def alive(pid):
    """Is pid a running process (not a zombie, not gone)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def case_stragglers(mb, tmp):
    pidfile = os.path.join(tmp, "daemon.pid")
    script = (f"setsid sh -c 'echo $$ > {pidfile}; exec sleep 20' & "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done; echo started")
    r = exec_rows(mb, tmp, "daemon", ["sh", "-c", script], "-a", "glibc", "-r", "1")[0]
    with open(pidfile) as f:
        pid = int(f.read())
    check(not alive(pid), f"the setsid daemon {pid} is gone after the sample")
    check_eq((r["status"], r.get("stragglers_killed")), ("ok", "1"),
             f"stragglers: the daemon is counted ({r['message']})")
    r = exec_rows(mb, tmp, "none", ["/bin/true"], "-a", "glibc", "-r", "1")[0]
    check_eq(r.get("stragglers_killed"), "0", "stragglers: none left by /bin/true")


def case_forged(mb, tmp):
    cases = {
        "probe_key": ("echo malloc_so=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 >&4", 4),
        "probe_proc": ("echo 'proc:1=glibc|/usr/lib/x86_64-linux-gnu/libc.so.6|/bin/sh' >&4", 4),
        "result": ("echo 'result workload=exec throughput=1' >&3", 3),
        "fail": ("echo 'fail nothing' >&3", 3),
    }
    for name, (script, fd) in cases.items():
        r = exec_rows(mb, tmp, name, ["sh", "-c", script], "-a", "glibc", "-r", "1")[0]
        check(r["status"] == "error" and f"forged report on fd {fd}" in r["message"],
              f"forged {name}: {r['status']}: {r['message']}")
        check_eq(r["total_minor_faults"], "", f"forged {name}: an untrusted row reports no figures")
    seen = os.path.join(tmp, "env.txt")
    script = f"(tr '\\0' '\\n' < /proc/$$/environ; echo; env; sh -c env) > {seen}"
    r = exec_rows(mb, tmp, "env", ["sh", "-c", script], "-a", "glibc", "-r", "1")[0]
    check_eq(r["status"], "ok", f"reading the environment is no forgery: {r['message']}")
    text = open(seen).read()
    check("MB_PROBE_TOKEN=" in text, f"the scrubbed variable is in /proc/PID/environ: {text[:200]!r}")
    check(not re.search(r"MB_PROBE_TOKEN=[0-9a-f]{8}", text), "the probe's token is not readable")
    # a wrapper that execs the program: the second image of the same process signs its report too
    r = exec_rows(mb, tmp, "wrapper", ["sh", "-c", "sort -n /dev/null; exec sort -n /dev/null"],
                  "-a", "glibc", "-r", "1")[0]
    check_eq(r["status"], "ok", f"a program exec'd by its wrapper is proven: {r['message']}")
    check("processes=2" in r["workload_metrics"], f"sh and the sort it ran, not the exec: {r['workload_metrics']}")


def case_diagnostics(mb, tmp):
    import resource
    out = os.path.join(tmp, "nofile.csv")
    p = subprocess.run([mb, "exec", "-q", "-o", out, "-a", "glibc", "-r", "1", "--", "/bin/true"],
                       capture_output=True, text=True, timeout=120,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (16, 16)))
    said = p.stderr + "".join(r["message"] for r in rows(out))
    check(p.returncode != 0, f"RLIMIT_NOFILE 16: the run fails: exit {p.returncode}")
    check("Too many open files" in said and "126" not in said, f"RLIMIT_NOFILE 16: the errno: {said!r}")
    plain = os.path.join(tmp, "plain")
    open(plain, "w").write("#!/bin/sh\ntrue\n")
    os.chmod(plain, 0o644)
    p = run(mb, "exec", "-q", "-o", os.path.join(tmp, "x.csv"), "--", plain, expect_rc=2)
    check("is not executable" in p.stderr and "not found" not in p.stderr, f"non-executable: {p.stderr!r}")
    p = run(mb, "exec", "-q", "-o", os.path.join(tmp, "x.csv"), "--", tmp, expect_rc=2)
    check("is a directory" in p.stderr and "cannot be read" not in p.stderr, f"a directory: {p.stderr!r}")
    r = exec_rows(mb, tmp, "stop", ["sh", "-c", "kill -STOP $$"], "-a", "glibc", "-r", "1", "--timeout", "30")[0]
    check(r["status"] == "error" and r["message"].startswith("stopped (SIGSTOP)"),
          f"a stopped child: {r['status']}: {r['message']}")
    check(float(r["total_wall_s"] or 99) < 10, f"a stopped child is not waited out: {r['total_wall_s']} s")


def case_hooks(mb, tmp):
    log = os.path.join(tmp, "hooks.log")
    allocs = [a for a in installed(mb) if a in ("glibc", "jemalloc", "tcmalloc", "mimalloc")][:2]
    out = os.path.join(tmp, "hooks.csv")
    p = run(mb, "exec", "-q", "-o", out, "-a", ",".join(allocs), "-r", "2", "--warmup-runs", "1", "--no-limit",
            "--prepare", f"echo p >> {log}", "--conclude", f"echo c >> {log}", "--cleanup", f"echo z >> {log}",
            "--", "sh", "-c", f"echo run >> {log}")
    got = open(log).read().split()
    n = len(allocs) * 3  # a warm-up and two blocks each
    check_eq(got, ["p", "run", "c"] * n + ["z"] * len(allocs),
             "hooks: prepare before and conclude after every sample, cleanup once per configuration at the end")
    check(all(r["status"] == "ok" for r in rows(out)), f"hooks: ok rows: {[r['message'] for r in rows(out)]}")
    cmd = json.load(open(os.path.join(tmp, "hooks.meta.json")))["command"]
    check("--prepare" in cmd and f"echo p >> {log}" in cmd and "--cleanup" in cmd,
          f"hooks: the sidecar records them: {cmd}")

    # outside the sample: its faults, its processes, the probe's environment
    env = os.path.join(tmp, "prep.env")
    touch = "python3 -c \"b = b'x' * (64 << 20)\""
    r = exec_rows(mb, tmp, "outside", ["true"], "-a", allocs[-1], "-r", "1", "--warmup-runs", "0", "--no-limit",
                  "--prepare", f"env > {env}; {touch}", "--conclude", touch)[0]
    check(r["status"] == "ok" and int(r["total_minor_faults"]) < 8000,
          f"hooks: 64 MiB faulted in by the hooks (16384 faults) are not the sample's: {r['total_minor_faults']}")
    check_eq(metrics(r).get("processes"), "1", "hooks: the hooks are no process of the sample")
    seen = open(env).read()
    check("libmbprobe" not in seen and "LD_PRELOAD" not in seen and "MB_SYNC_FD" not in seen
          and "MALLOC_CONF" not in seen, f"hooks: no probe or allocator variable in a hook: {seen[-400:]!r}")

    # a failing prepare: the sample is not run, a row says why; variants: a signal, --timeout
    ran = os.path.join(tmp, "ran")
    for prep, want in (("echo oops >&2; exit 3", "exited with status 3: oops"),
                       ("kill -9 $$", "was killed by signal 9"),
                       ("sleep 30", "was killed after 1 s (--timeout)")):
        rs = exec_rows(mb, tmp, "prepfail", ["touch", ran], "-a", allocs[0], "-r", "2", "--warmup-runs", "0",
                       "--no-limit", "--timeout", "1", "--prepare", prep)
        check(rs and all(x["status"] == "error" and x["message"].startswith(f"the --prepare command '{prep}' {want}")
                         and x["total_wall_s"] == "" for x in rs),
              f"hooks: a failing prepare ({prep}): error rows naming it, no figures: "
              f"{[(x['status'], x['message'], x['total_wall_s']) for x in rs]}")
        check(not os.path.exists(ran), f"hooks: the command did not run after a failing prepare ({prep})")

    # a conclude that fails after the second sample only: that row alone
    cnt = os.path.join(tmp, "cnt")
    conc = f"echo x >> {cnt}; test $(wc -l < {cnt}) -ne 2 || {{ echo bad; exit 5; }}"
    rs = exec_rows(mb, tmp, "concfail", ["true"], "-a", allocs[0], "-r", "3", "--warmup-runs", "0", "--no-limit",
                   "--conclude", conc)
    check_eq([x["status"] for x in rs], ["ok", "error", "ok"], "hooks: a failing conclude fails its sample only")
    check(len(rs) == 3 and rs[1]["message"] == f"the --conclude command '{conc}' exited with status 5: bad"
          and rs[1]["total_wall_s"] != "", f"hooks: its row names it, with what was measured: {rs[1:2]}")

    # a failing cleanup is a warning: the rows are written
    out2 = os.path.join(tmp, "clean.csv")
    p = run(mb, "exec", "-q", "-o", out2, "-a", allocs[0], "-r", "1", "--warmup-runs", "0", "--no-limit",
            "--cleanup", "exit 7", "--", "true")
    check("warning" in p.stderr and "the --cleanup command 'exit 7' exited with status 7" in p.stderr
          and rows(out2)[0]["status"] == "ok", f"hooks: a failing cleanup warns: {p.stderr!r}")

    # a hook that leaves a process holding its output does not hold the run (it goes with the stragglers)
    q = subprocess.run([mb, "exec", "-q", "-o", os.path.join(tmp, "bg.csv"), "-a", allocs[0], "-r", "1",
                        "--warmup-runs", "0", "--no-limit", "--prepare", "sleep 300 & echo started", "--", "true"],
                       capture_output=True, text=True, timeout=200)
    check(q.returncode == 0, f"hooks: a background process of a hook: exit {q.returncode}: {q.stderr!r}")

    # bad hooks: one line, exit 2, before any work
    for opt, val, why in (("--prepare", "", "an empty command"), ("--conclude", "a\nb", "a control character"),
                          ("--cleanup", "   ", "an empty command")):
        bad = os.path.join(tmp, "bad.csv")
        p = run(mb, "exec", "-o", bad, "-a", allocs[0], opt, val, "--", "sh", "-c", f"echo run >> {log}",
                expect_rc=2)
        check(len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith(f"mallocbench: {opt}: {why}")
              and not os.path.exists(bad), f"hooks: {opt} {val!r} refused in one line: {p.stderr!r}")


def case_readable(mb, tmp):
    import sys as _s
    scripts = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts")
    alloc = [a for a in installed(mb) if a in ("glibc", "jemalloc")][:2]
    env = dict(os.environ, PYTHONPATH=scripts)

    def summary(path, *opts):
        return subprocess.run([_s.executable, os.path.join(scripts, "summary.py"), path, *opts], env=env,
                              capture_output=True, text=True, timeout=300)
    # a command's time, not its runs/s
    out = os.path.join(tmp, "t.csv")
    run(mb, "exec", "-q", "-o", out, "-a", ",".join(alloc), "-r", "2", "--no-limit", "--", "sh", "-c", "true")
    text = summary(out).stdout
    lines = [l for l in text.splitlines() if l.split()[:1] == [alloc[0]]]
    check(lines and re.search(r" [0-9.]+ (s|ms|µs) \[[0-9.]+\.\.[0-9.]+\] ", lines[0]) and "runs/s" not in lines[0],
          f"readable: a command's time, 'N ms [LO..HI]': {lines}")
    check("time of a run" in text and "exec: sh -c true" in text and "cmd=" not in text,
          f"readable: the time's head, the program and its arguments as the title: {text[:600]}")
    check("runs/s" in summary(out, "--runs-per-s").stdout, "readable: --runs-per-s keeps the throughput form")
    # --unit names the column; the regex is in no title
    out = os.path.join(tmp, "u.csv")
    run(mb, "exec", "-q", "-o", out, "-a", ",".join(alloc), "-r", "2", "--no-limit", "--metric", r"rate: ([0-9.]+)",
        "--unit", "req/s", "--", "sh", "-c", "echo rate: 5")
    text = summary(out).stdout
    head = [l for l in text.splitlines() if l.startswith("config")]
    check(head and head[0].split()[2] == "req/s" and "the figure the command printed" not in text
          and "rate: (" not in text, f"readable: --unit names the column, no regex: {text[:600]}")
    comp = subprocess.run([_s.executable, "-m", "mallocbench.compare", out], env=env, capture_output=True, text=True,
                          timeout=300).stdout
    check("rate: (" not in comp and comp.count("exec: sh -c 'echo rate: 5'") >= 1,
          f"readable: compare's headings name the command, not the regex: {comp[:600]}")


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
