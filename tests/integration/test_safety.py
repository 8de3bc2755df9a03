#!/usr/bin/env python3
"""test_safety.py - nothing already measured is lost, and no input crashes
the harness: existing outputs, resume and shards without a seed, the matrix
reader, short writes, orphans, devices as output, merge of a glob, and a
run killed at random moments.

Usage: test_safety.py MALLOCBENCH CASE.  Exit 77 = skip.
"""
import csv
import io
import json
import os
import random
import resource
import signal
import stat
import subprocess
import sys
import time

from mbtest import SKIP, check, installed, main, rows, run

SPEC = "tensor_copy:size=1M,count=1,steps=2,warmup=1"


def keys(path):
    return sorted((int(r["block"]), int(r["position"]), r["workload_params"], r["config"]) for r in rows(path))


def lib_path(mb, name):
    """Library the harness would load for an allocator (from `list allocators`)."""
    for line in run(mb, "list", "allocators").stdout.splitlines()[1:]:
        f = line.split()
        if len(f) > 2 and f[0] == name and f[1] == "yes":
            return f[2]
    return None


def case_existing_output(mb, tmp):
    """An existing CSV is never truncated or deleted; --force replaces it only after the proof."""
    out = os.path.join(tmp, "k.csv")
    run(mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "1", "-o", out, "--no-limit")
    before = {p: open(p, "rb").read() for p in (out, out[:-4] + ".meta.json", out[:-4] + ".rss.csv")}
    check(len(rows(out)) == 1, "first run wrote its row")
    # the same command again: refused in one line naming both ways on
    p = run(mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "1", "-o", out, "--no-limit", expect_rc=2)
    check("--resume" in p.stderr and "--force" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"rerun refused naming --resume and --force: {p.stderr!r}")
    # a proof that fails, with and without --force, leaves every file as it was
    mi = lib_path(mb, "mimalloc")
    if mi:
        for extra in ([], ["--force"]):
            p = run(mb, "run", "-q", "-w", SPEC, "-a", f"jemalloc={mi}", "-r", "1", "-o", out, "--no-limit",
                    *extra, expect_rc=None)
            check(p.returncode != 0, f"wrong library refused {extra}")
            for path, data in before.items():
                check(os.path.exists(path) and open(path, "rb").read() == data,
                      f"{os.path.basename(path)} untouched by a refused run {extra}")
    # --force with a passing proof replaces the results
    run(mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "2", "-o", out, "--no-limit", "--force")
    check(len(rows(out)) == 2, f"--force replaced the file: {len(rows(out))} rows")
    check(not [f for f in os.listdir(tmp) if f.endswith(".tmp")], f"no temporary files left: {os.listdir(tmp)}")
    # a fresh output that fails its proof leaves nothing behind
    if mi:
        fresh = os.path.join(tmp, "fresh.csv")
        run(mb, "run", "-q", "-w", SPEC, "-a", f"jemalloc={mi}", "-r", "1", "-o", fresh, expect_rc=None)
        check(not [f for f in os.listdir(tmp) if f.startswith("fresh")], f"nothing created: {os.listdir(tmp)}")
    p = run(mb, "run", "-q", "-w", SPEC, "-o", out, "--resume", "--force", expect_rc=2)
    check("do not mix" in p.stderr, f"--resume with --force refused: {p.stderr!r}")


def case_default_name(mb, tmp):
    """Two runs started in the same second without -o get two files."""
    cmd = [mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "1", "--no-limit"]
    procs = [subprocess.Popen(cmd, cwd=tmp, stderr=subprocess.PIPE, text=True) for _ in range(3)]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    check(all(p.returncode == 0 for p in procs), f"all three ran: {[p.returncode for p in procs]} {errs}")
    made = sorted(f for f in os.listdir(os.path.join(tmp, "results")) if f.endswith(".csv") and ".rss" not in f)
    check(len(made) == 3, f"three result files: {made}")
    for f in made:
        check(len(rows(os.path.join(tmp, "results", f))) == 1, f"{f}: one row")


def case_resume_seedless(mb, tmp):
    """--resume reads the plan seed back; shards without --seed plan alike."""
    out = os.path.join(tmp, "r.csv")
    w = ["-w", SPEC, "-w", "tensor_copy:size=2M,count=1,steps=2,warmup=1", "-a", "glibc", "--no-limit"]
    run(mb, "run", "-q", *w, "-r", "1", "-o", out)
    run(mb, "run", "-q", *w, "-r", "3", "-o", out, "--resume")
    rs = rows(out)
    check(len(rs) == 6, f"resumed to 3 blocks x 2 cells: {len(rs)}")
    check(len({r["plan_seed"] for r in rs}) == 1 and len({r["matrix_id"] for r in rs}) == 1, "one plan, one seed")
    # a file whose columns are a prefix of this run's (its last column cut) is not resumed
    short = os.path.join(tmp, "short.csv")
    with open(out, newline="") as f, open(short, "w", newline="") as g:
        cw = csv.writer(g, lineterminator="\n")
        for rec in csv.reader(f):
            cw.writerow(rec[:-1])
    before = open(short, "rb").read()
    p = run(mb, "run", "-q", *w, "-r", "4", "-o", short, "--resume", expect_rc=None)
    check(p.returncode != 0 and "its columns differ" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"--resume of a file with fewer columns refused in one line: exit {p.returncode} {p.stderr!r}")
    check(open(short, "rb").read() == before, "the refused file is left as it was")
    parts = []
    for k in (1, 2):
        parts.append(os.path.join(tmp, f"s{k}.csv"))
        run(mb, "run", "-q", *w, "-r", "2", "--shard", f"{k}/2", "-o", parts[-1])
    seeds = {r["plan_seed"] for p in parts for r in rows(p)}
    check(len(seeds) == 1, f"shards without --seed share one seed: {seeds}")
    merged = os.path.join(tmp, "m.csv")
    run(mb, "merge", "-o", merged, *parts)
    check(len(rows(merged)) == 4, "the shards merge to the whole plan")
    # the derived seed is the one --print-commands with --shard shows
    p = run(mb, "run", *w, "-r", "2", "--shard", "1/2", "--print-commands")
    check(p.stdout.count("# block") == len(rows(parts[0])), "print-commands plans the same shard")


MATRIX_OK = "[run]\nrepetitions = 1\nwarmup_runs = 0\nallocators = glibc\nlimit = no\n"


def matrix_error(mb, tmp, text, line, needle):
    m = os.path.join(tmp, "e.ini")
    with open(m, "w") as f:
        f.write(text)
    p = run(mb, "run", "-q", "-m", m, "--print-commands", expect_rc=2)
    want = f"{m}:{line}: "
    check(p.stderr.startswith(f"mallocbench: {want}") and needle in p.stderr
          and len(p.stderr.strip().splitlines()) == 1, f"{text!r}: expected '{want}...{needle}': {p.stderr!r}")


def case_matrix_errors(mb, tmp):
    """Every matrix error is file:line: reason, for the first error; nothing is merged silently."""
    # an empty workload name then keys: was an out-of-bounds write (exit 2, corrupt memory)
    matrix_error(mb, tmp, "[workload ]\nsize = 1M\ncount = 2\n", 1, "needs a name")
    # two errors: the first one's line with the first one's reason
    matrix_error(mb, tmp, "[run]\nrepetitions = x\nbogus = 1\n", 2, "repetitions: bad value 'x'")
    matrix_error(mb, tmp, "[workload tensor_copy]\nsize = 1M\nstepz = 3\n[run]\nbogus = 1\n", 3, "stepz")
    # errors found after parsing still carry their line
    matrix_error(mb, tmp, MATRIX_OK + "[workload tensor_copy]\nsize = 1M\n[tunables jemalloc]\ndirty_decay = 5\n",
                 9, "dirty_decay")
    matrix_error(mb, tmp, "[run]\nallocators = glibc,jemallok\n[workload tensor_copy]\n", 2, "jemallok")
    matrix_error(mb, tmp, "[run]\nevents = no_such_event_here\n[workload tensor_copy]\n", 2, "no_such_event_here")
    matrix_error(mb, tmp, "[run]\npin = 4096\n[workload tensor_copy]\n", 2, "pin: bad value '4096'")
    matrix_error(mb, tmp, "[workload tensor_copy]\nsweep = size=0..1M\n", 2, "--sweep")
    matrix_error(mb, tmp, "[workload tenser_copy]\n", 1, "unknown workload")
    # a long line is refused, not cut into a second line that sets steps=3
    matrix_error(mb, tmp, "[workload tensor_copy]\n; " + "x" * 1100 + " steps=3\n", 2, "longer than")
    # duplicates are refused, not merged or overwritten
    matrix_error(mb, tmp, "[workload tensor_copy]\nsize = 1M\nsize = 2M\n", 3, "set twice")
    matrix_error(mb, tmp, "[workload tensor_copy]\nsize = 1M\n[workload tensor_copy]\nsize = 2M\n", 3, "twice")
    matrix_error(mb, tmp, "[run]\nseed = 1\n[run]\nseed = 2\n[workload tensor_copy]\n", 3, "twice")
    matrix_error(mb, tmp, "[workload tensor_copy]\nsize = 1M,count=9\n", 2, "comma")
    matrix_error(mb, tmp, "size = 1M\n[workload tensor_copy]\n", 1, "outside any section")
    matrix_error(mb, tmp, "[workload tensor_copy\n", 1, "']'")
    # a header's words are all read: a second allocator is refused, not dropped
    matrix_error(mb, tmp, "[run]\nallocators = glibc,jemalloc\n[workload tensor_copy]\n[tunables jemalloc extra]\n"
                 "dirty_decay_ms = 5\n", 4, "needs one allocator")
    # a NUL byte is refused with its line
    matrix_error(mb, tmp, "[workload tensor_copy]\nsize = 1M\x00\n", 2, "NUL")
    # an empty section is the workload with its defaults, not dropped
    m = os.path.join(tmp, "ok.ini")
    with open(m, "w") as f:
        f.write(MATRIX_OK + "[workload tensor_copy a]\nsize = 1M  ; end-of-line comment\n[workload arena_churn]\n")
    p = run(mb, "run", "-m", m, "--print-commands")
    check("tensor_copy(size=1M" in p.stdout and "arena_churn(" in p.stdout,
          f"both workloads planned, the empty one with defaults: {p.stdout[:400]!r}")
    # an empty [workload tensor_copy] is kept too: before another section, or alone
    for text, want in ((MATRIX_OK + "[workload tensor_copy]\n[workload tensor_copy b]\nsize = 2M\n", 2),
                       (MATRIX_OK + "[workload tensor_copy]\n", 1)):
        with open(m, "w") as f:
            f.write(text)
        p = run(mb, "run", "-m", m, "--print-commands")
        planned = {l.split(": ", 1)[1] for l in p.stdout.splitlines() if l.startswith("# block")}
        check(len(planned) == want and all(w.startswith("tensor_copy(") for w in planned),
              f"{text!r}: {want} tensor_copy cells, the empty section's with defaults: {sorted(planned)}")


def case_short_write(mb, tmp):
    """A full disk or a file size limit: the CSV is cut back to its last whole row, the run
    stops with one line, merge accepts the file and --resume completes it."""
    out = os.path.join(tmp, "f.csv")
    args = ["run", "-q", "-w", SPEC, "-a", "glibc", "-r", "6", "--seed", "5", "--no-limit", "-o", out]
    whole = os.path.join(tmp, "whole.csv")
    run(mb, *args[:-1], whole)
    size = os.path.getsize(whole)
    header = open(whole).readline()
    # room for the header and two and a half rows
    limit = len(header) + int((size - len(header)) / 6 * 2.5)

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    p = subprocess.run([mb, *args], capture_output=True, text=True, timeout=300, preexec_fn=cap)
    check(p.returncode == 1, f"stops with exit 1: {p.returncode} {p.stderr!r}")
    check("--resume" in p.stderr and "f.csv" in p.stderr and "Traceback" not in p.stderr,
          f"one line naming the file and --resume: {p.stderr!r}")
    data = open(out, "rb").read()
    check(data.endswith(b"\n") and len(rows(out)) == 2, f"ends in its 2nd whole row: {len(rows(out))} rows")
    merged = os.path.join(tmp, "m.csv")
    run(mb, "merge", "-o", merged, out)
    run(mb, *args, "--resume")
    check(keys(out) == keys(whole), f"resume completes the plan: {len(rows(out))} rows")
    check(all(r["status"] == "ok" for r in rows(out)), "every row ok")


def case_torn_tail(mb, tmp):
    """--resume onto a file whose last row lost its newline, or was cut in half: rows never glue."""
    args = ["run", "-q", "-w", SPEC, "-a", "glibc", "-r", "3", "--seed", "9", "--no-limit"]
    whole = os.path.join(tmp, "whole.csv")
    run(mb, *args, "-o", whole)
    data = open(whole, "rb").read()
    for name, cut in (("nonl", data[:-1]), ("half", data[:len(data) - 200])):
        out = os.path.join(tmp, name + ".csv")
        with open(out, "wb") as f:
            f.write(cut)
        p = run(mb, *args, "-o", out, "--resume")
        check(keys(out) == keys(whole), f"{name}: resumed to the whole plan: {len(rows(out))} rows")
        check(open(out, "rb").read().count(b"\n") == data.count(b"\n"), f"{name}: one line per row")
        check(("newline" if name == "nonl" else "torn") in p.stderr, f"{name}: says what it repaired: {p.stderr!r}")


def lines(path):
    """Newlines in a file being written (rows() could read it half-way through its header)."""
    try:
        with open(path, "rb") as f:
            return f.read().count(b"\n")
    except OSError:
        return 0


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def worker_pids():
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/cmdline", "rb") as f:
                    # the hanging sample only: not the short selftest of the proof
                    if b"mallocbench-worker\x00selftest\x00mode=hang" in f.read():
                        pids.append(int(d))
            except OSError:
                pass
    return pids


def case_orphans(mb, tmp):
    """A hanging sample dies with the harness: after SIGKILL, SIGHUP and SIGTERM."""
    for sig in (signal.SIGKILL, signal.SIGHUP, signal.SIGTERM):
        out = os.path.join(tmp, f"o{int(sig)}.csv")
        before = set(worker_pids())
        p = subprocess.Popen([mb, "run", "-q", "-w", "selftest:mode=hang", "-a", "glibc", "-r", "1",
                              "--timeout", "5m", "--no-limit", "-o", out], stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 30
        # this harness's own workers (other suites may run workers at the same time)
        def started():
            return {w for w in set(worker_pids()) - before if parent_of(w) == p.pid}
        # looked for once per turn: the sample is `env LD_PRELOAD=... mallocbench-worker ...`,
        # which execs the worker in the same pid, and while it execs its cmdline cannot be
        # read, so a second look could miss the worker the first one found
        mine = started()
        while time.time() < deadline and not mine:
            time.sleep(0.05)
            mine = started()
        check(len(mine) >= 1, f"{sig.name}: the hanging worker started")
        p.send_signal(sig)
        p.communicate(timeout=30)
        if sig != signal.SIGKILL:
            check(p.returncode == 130, f"{sig.name}: exit 130 like an interrupt, got {p.returncode}")
        deadline = time.time() + 5
        while time.time() < deadline and mine & set(worker_pids()):
            time.sleep(0.05)
        check(not (mine & set(worker_pids())), f"{sig.name}: the worker died with the harness")
        check(rows(out) == [], f"{sig.name}: the sample cut short is not a row")


def case_devices(mb, tmp):
    """-o - streams the CSV to stdout; a device gets the CSV and no sidecars."""
    p = subprocess.run([mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "2", "--no-limit", "-o", "-"],
                       capture_output=True, text=True, timeout=120, cwd=tmp)
    check(p.returncode == 0, f"-o - runs: {p.stderr!r}")
    rs = list(csv.DictReader(io.StringIO(p.stdout)))
    check(len(rs) == 2 and rs[0]["status"] == "ok", f"two rows on stdout: {p.stdout[:200]!r}")
    check(os.listdir(tmp) == [], f"no file named '-' or sidecars: {os.listdir(tmp)}")
    for junk in ("/dev/null.meta.json", "/dev/null.rss.csv"):  # left by versions before this test
        if os.path.isfile(junk):
            os.unlink(junk)
    run(mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "1", "--no-limit", "-o", "/dev/null")
    check(not os.path.exists("/dev/null.meta.json") and not os.path.exists("/dev/null.rss.csv"),
          "no /dev/null.meta.json or /dev/null.rss.csv")
    side = os.path.join(tmp, "side")
    run(mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "1", "--no-limit", "-o", "/dev/null", "--sidecars", side)
    meta = json.load(open(side + ".meta.json"))
    check(meta.get("schema_version") == 9 and os.path.exists(side + ".rss.csv"), "--sidecars writes both")
    p = run(mb, "run", "-q", "-w", SPEC, "-o", "-", "--resume", expect_rc=2)
    check("regular file" in p.stderr, f"resume of stdout refused: {p.stderr!r}")


def case_sweep_int(mb, tmp):
    """--sweep of an integer parameter doubles in plain numbers (count=1024, not 1K)."""
    p = run(mb, "run", "-w", "tensor_copy:size=64K,steps=1", "-a", "glibc", "-r", "1", "--sweep", "count=1..1024",
            "--print-commands")
    counts = [l.split("count=")[1].split(",")[0] for l in p.stdout.splitlines() if l.startswith("# block")]
    check(sorted(counts, key=int) == [str(1 << i) for i in range(11)], f"counts 1..1024: {counts}")


def case_merge_glob(mb, tmp):
    """merge -o all.csv shard*.csv (a glob that also matches the RSS sidecars) merges the shards and
    their sidecars; an existing output needs --force."""
    parts = []
    for k in (1, 2):
        parts.append(os.path.join(tmp, f"shard{k}.csv"))
        run(mb, "run", "-q", "-w", "tensor_copy:size=4M,count=2,steps=4,warmup=1", "-a", "glibc", "-r", "2",
            "--shard", f"{k}/2", "--sample-interval", "1ms", "--no-limit", "-o", parts[-1])
    glob = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.startswith("shard") and f.endswith(".csv"))
    check(len(glob) == 4, f"the glob matches the RSS sidecars too: {glob}")
    out = os.path.join(tmp, "all.csv")
    p = run(mb, "merge", "-o", out, *glob)
    check("left out 2 RSS" in p.stderr, f"sidecars recognised: {p.stderr!r}")
    check(len(rows(out)) == 2, "two samples merged")
    meta = json.load(open(os.path.join(tmp, "all.meta.json")))
    check(len(meta.get("shards", [])) == 2 and "machine" in meta, "meta.json holds both shards' sidecars")
    series = rows(os.path.join(tmp, "all.rss.csv"))
    want = sum(len(rows(p[:-4] + ".rss.csv")) for p in parts)
    check(want > 0 and len(series) == want, f"RSS series concatenated: {len(series)} of {want}")
    p = run(mb, "merge", "-o", out, *parts, expect_rc=2)
    check("--force" in p.stderr, f"existing output refused: {p.stderr!r}")
    run(mb, "merge", "--force", "-o", out, *parts)


def case_small_inputs(mb, tmp):
    """One-line causes: a CPU that is not there, a text file as a library, yes/no booleans,
    the command list."""
    p = run(mb, "run", "-w", SPEC, "-a", "glibc", "--pin", "99", "-o", os.path.join(tmp, "p.csv"), expect_rc=2)
    check("CPU 99" in p.stderr and "exit code" not in p.stderr, f"--pin 99 names the CPU: {p.stderr!r}")
    txt = os.path.join(tmp, "lib.txt")
    with open(txt, "w") as f:
        f.write("not a library\n")
    p = run(mb, "run", "-w", SPEC, "-a", f"jemalloc={txt}", "-o", os.path.join(tmp, "t.csv"), expect_rc=2)
    check("not a shared object" in p.stderr, f"text file refused as such: {p.stderr!r}")
    p = run(mb, "run", "-w", SPEC, "-a", "jemalloc", "-t", "jemalloc:tcache=yes", "--print-commands")
    check("tcache:true" in p.stdout, f"tcache=yes accepted as true: {p.stdout[-300:]!r}")
    p = run(mb, "frobnicate", expect_rc=2)
    check(all(c in p.stderr for c in ("compare", "merge", "calibrate")), f"hint lists every command: {p.stderr!r}")


def case_interrupted_sample(mb, tmp):
    """A sample cut short by SIGINT is not written, so --resume runs it again: every row ok."""
    out = os.path.join(tmp, "i.csv")
    args = ["run", "-q", "-w", "tensor_copy:size=8M,count=2,steps=40,warmup=1", "-a", "glibc", "-r", "3",
            "--seed", "3", "--no-limit", "--warmup-runs", "0", "-o", out]
    p = subprocess.Popen([mb, *args], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and len(rows(out)) < 1:
        time.sleep(0.01)
    time.sleep(0.05)  # inside the next sample
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=60)
    check(p.returncode == 130, f"interrupted: exit {p.returncode}")
    n = len(rows(out))
    check(1 <= n < 3, f"interrupted with {n} of 3 rows")
    run(mb, *args, "--resume")
    rs = rows(out)
    check(len(rs) == 3 and all(r["status"] == "ok" for r in rs),
          f"after the resume every row is ok: {[(r['status'], r['message']) for r in rs]}")


def make_device(path):
    """A character device like /dev/null (c 1 3) at path, or skip (needs root)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as e:
        print(f"SKIP: cannot mknod {path}: {e}", file=sys.stderr)
        sys.exit(SKIP)


def is_device(path):
    return stat.S_ISCHR(os.stat(path).st_mode)


def case_force_devices(mb, tmp):
    """record --force and merge --force never replace a device or a FIFO: record refuses one in a
    line (the recorded processes append to the trace), merge writes the CSV into it (no sidecars)."""
    dev = os.path.join(tmp, "mynull")
    make_device(dev)
    p = run(mb, "record", "--force", "-o", dev, "--", "/bin/true", expect_rc=2)
    check(is_device(dev), f"record --force left the device a device: {os.stat(dev)}")
    check("regular file" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"record refuses a device in one line: {p.stderr!r}")
    shard = os.path.join(tmp, "shard.csv")
    run(mb, "run", "-q", "-w", SPEC, "-a", "glibc", "-r", "1", "--no-limit", "-o", shard)
    run(mb, "merge", "--force", "-o", dev, shard)
    check(is_device(dev), f"merge --force left the device a device: {os.stat(dev)}")
    left = sorted(f for f in os.listdir(tmp) if f.startswith("mynull") and f != "mynull")
    check(left == [], f"no sidecar, temporary or lock file beside the device: {left}")
    fifo = os.path.join(tmp, "pipe")
    os.mkfifo(fifo)
    cat = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE, text=True)
    time.sleep(0.1)
    m = run(mb, "merge", "--force", "-o", fifo, shard, expect_rc=None)
    still = stat.S_ISFIFO(os.stat(fifo).st_mode)
    if not (m.returncode == 0 and still):
        cat.kill()  # the FIFO it opened was replaced: nobody will write to it
    got = cat.communicate(timeout=60)[0]
    check(m.returncode == 0 and still, f"merge --force wrote into the FIFO, not over it: {m.stderr!r}")
    check(len(list(csv.DictReader(io.StringIO(got)))) == 1, f"the reader got the merged row: {got[:200]!r}")
    p = run(mb, "record", "--force", "-o", fifo, "--", "/bin/true", expect_rc=2)
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "record --force left the FIFO a FIFO")


# long enough that the first run still writes when the second starts after its second row
# (22 samples to go), short enough for the fast tier: 24 samples of about 0.1 s
LONG = ["run", "-q", "-w", "tensor_copy:size=2M,count=2,steps=10,warmup=1", "-a", "glibc", "-r", "24",
        "--seed", "5", "--no-limit", "--warmup-runs", "0"]


def second_writer(mb, tmp, mode):
    """Start a run, then the same output again with mode while the first writes its rows: the second
    is refused in one line naming the first's pid, and the file holds the first run's rows only."""
    out = os.path.join(tmp, "same.csv")
    first = subprocess.Popen([mb, *LONG, "-o", out, "--force"], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and first.poll() is None and len(rows(out)) < 2:
        time.sleep(0.01)
    check(first.poll() is None, "the first run still writes when the second starts")
    p = run(mb, *LONG, "-o", out, mode, expect_rc=None)
    still = first.poll() is None
    err = first.communicate(timeout=300)[1]
    check(first.returncode == 0, f"the first run finished: {err!r}")
    check(p.returncode in (1, 2), f"the second writer ({mode}) refused: exit {p.returncode} {p.stderr!r}")
    check(len(p.stderr.strip().splitlines()) == 1 and f"process {first.pid}" in p.stderr,
          f"one line naming the holder's pid {first.pid}: {p.stderr!r}")
    check(still or p.returncode != 0, "the first still ran when the second was refused")
    rs = rows(out)
    ids = {r["run_id"] for r in rs}
    check(len(ids) == 1 and len(rs) == 24, f"one run's rows only: {len(rs)} rows of {len(ids)} runs")
    check(not os.path.exists(out + ".lock"), "the lock file is removed at the end")


def case_lock_force(mb, tmp):
    """Two `run --force -o same.csv` at once: the second is refused naming the first's pid."""
    second_writer(mb, tmp, "--force")


def case_lock_resume(mb, tmp):
    """A --resume while the first run still writes is refused the same way."""
    second_writer(mb, tmp, "--resume")


def case_crash_consistency(mb, tmp):
    """SIGKILL at random moments (20 trials): the CSV left is one merge accepts, and --resume
    completes it to exactly the sample set of a run left alone.  In every other trial a second
    writer (--resume or --force) races the first: refused naming its pid, it adds no row."""
    allocs = [a for a in installed(mb) if a in ("glibc", "jemalloc")]
    args = ["run", "-q", "-w", "tensor_copy:size=2M,count=2,steps=24,warmup=1", "-a", ",".join(allocs), "-r", "4",
            "--seed", "17", "--no-limit", "--warmup-runs", "0"]
    whole = os.path.join(tmp, "whole.csv")
    t0 = time.time()
    run(mb, *args, "-o", whole)
    span = time.time() - t0
    rng = random.Random(1234)
    total = len(rows(whole))
    per_sample = span / (total + 2)
    partial = refused = 0
    for trial in range(20):
        out = os.path.join(tmp, f"c{trial}.csv")
        p = subprocess.Popen([mb, *args, "-o", out], stderr=subprocess.DEVNULL)
        # a random moment: after a random number of rows, somewhere inside a sample
        # (the first trials anywhere from the start, the proof included)
        if trial < 4:
            time.sleep(rng.uniform(0, span))
        else:
            k = rng.randrange(0, total)
            deadline = time.time() + 60
            while time.time() < deadline and p.poll() is None and lines(out) - 1 < k:
                time.sleep(0.002)
            if trial % 2 == 0 and p.poll() is None:
                # a second writer racing the first: refused naming its pid while it writes
                mode = "--resume" if trial % 4 == 0 else "--force"
                r = run(mb, *args, "-o", out, mode, expect_rc=None)
                if r.returncode != 0:
                    refused += 1
                    check(f"process {p.pid}" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
                          f"trial {trial}: the racing {mode} is refused naming pid {p.pid}: {r.stderr!r}")
                else:
                    # let through only once the first released the lock: then it has
                    # written its last row and exits, and a --resume finds nothing to do
                    done = {x["run_id"] for x in rows(out)}
                    check(p.poll() is not None or (mode == "--resume" and keys(out) == keys(whole) and len(done) == 1),
                          f"trial {trial}: the racing {mode} ran beside the first ({len(rows(out))} rows)")
            time.sleep(rng.uniform(0, per_sample))
        p.kill()
        p.wait()
        if os.path.exists(out):
            m = os.path.join(tmp, f"m{trial}.csv")
            r = run(mb, "merge", "-o", m, out, expect_rc=None)
            check(r.returncode == 0 or (r.returncode == 2 and len(rows(out)) == 0),
                  f"trial {trial}: merge accepts what the kill left: {r.stderr!r}")
            partial += 0 < len(rows(out)) < len(rows(whole))
        run(mb, *args, "-o", out, "--resume")
        check(keys(out) == keys(whole), f"trial {trial}: resumed to the whole plan ({len(rows(out))} rows)")
    print(f"20 kills, {partial} left a partial file, {refused} racing writers refused", file=sys.stderr)
    check(partial >= 5, f"the kills landed mid-run often enough to test something: {partial}")
    check(refused >= 2, f"the racing writers met the first one often enough: {refused}")


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
