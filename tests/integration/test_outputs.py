#!/usr/bin/env python3
"""test_outputs.py - one output discipline and strict figures (issue 29, findings
1-5, 9 and 13): a temporary is never an existing name, a link or a FIFO; one lock
per file whatever name reaches it; a hard link is never written through; a failed
start leaves nothing that --resume refuses; a metric is one whole number in the
readers' range, or its row is an error quoting it.

    test_outputs.py MALLOCBENCH CASE
"""
import os
import resource
import subprocess
import sys
import time

from mbtest import check, check_eq, main, rows, run

EXEC = ["exec", "-q", "-a", "glibc", "--no-limit"]
PRECIOUS = "precious: not to be touched\n"


def precious(tmp, name="precious.txt"):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(PRECIOUS)
    return path


def untouched(path, what):
    check_eq(open(path, "rb").read(), PRECIOUS.encode(), f"{what}: {os.path.basename(path)} unchanged")


def case_tmp_links(mb, tmp):
    """A symbolic link, a FIFO or a file at the old temporary names is never opened: the trace,
    the sidecar and the merged CSV go to fresh temporaries, and nothing is followed or blocks."""
    p = precious(tmp)
    out = os.path.join(tmp, "out.mbt")
    os.symlink(p, out + ".tmp")
    run(mb, "record", "-o", out, "--", "/bin/true")
    untouched(p, "record over a link at out.mbt.tmp")
    check(os.path.isfile(out) and not os.path.islink(out), "out.mbt is a file of its own")
    check(open(out, "rb").read(4) != PRECIOUS.encode()[:4], "the trace is in out.mbt")

    p3 = precious(tmp, "p3.txt")
    os.symlink(p3, os.path.join(tmp, "r2.meta.json.tmp"))
    r2 = os.path.join(tmp, "r2.csv")
    run(mb, *EXEC, "-r", "1", "-o", r2, "--", "/bin/true")
    untouched(p3, "exec over a link at r2.meta.json.tmp")
    check(not os.path.islink(os.path.join(tmp, "r2.meta.json")), "the sidecar is a file of its own")

    parts = []
    for k in (1, 2):
        parts.append(os.path.join(tmp, f"s{k}.csv"))
        run(mb, *EXEC, "-r", "2", "--seed", "3", "--shard", f"{k}/2", "-o", parts[-1], "--", "/bin/true")
    merged = os.path.join(tmp, "all.csv")
    os.mkfifo(merged + ".tmp")
    try:
        subprocess.run([mb, "merge", "-o", merged, *parts], capture_output=True, timeout=60)
        check(len(rows(merged)) == 2, f"merge wrote around a FIFO at all.csv.tmp: {len(rows(merged))} rows")
    except subprocess.TimeoutExpired:
        check(False, "merge -o all.csv hangs on a FIFO at all.csv.tmp")
    left = [f for f in os.listdir(tmp) if f.endswith(".tmp") and f not in ("out.mbt.tmp", "r2.meta.json.tmp",
                                                                           "all.csv.tmp")]
    check_eq(left, [], "no temporary left behind")


def case_lock_links(mb, tmp):
    """a.csv and a link to it are one file and one lock: a --resume through the link while a run
    writes a.csv is refused naming its pid; a hard link planted at the lock's name is not written."""
    a = os.path.join(tmp, "a.csv")
    link = os.path.join(tmp, "link.csv")
    os.symlink("a.csv", link)
    args = [*EXEC, "-r", "6", "--seed", "4"]
    first = subprocess.Popen([mb, *args, "-o", a, "--", "sleep", "0.3"], stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and first.poll() is None and len(rows(a)) < 2:
        time.sleep(0.01)
    p = run(mb, *args, "-o", link, "--resume", "--", "sleep", "0.3", expect_rc=None)
    first.communicate(timeout=120)
    check(p.returncode != 0 and f"process {first.pid}" in p.stderr,
          f"the second writer, through the link, refused naming {first.pid}: {p.returncode} {p.stderr!r}")
    rs = rows(a)
    check(len(rs) == 6 and len({r["run_id"] for r in rs}) == 1, f"one run's 6 rows: {len(rs)}")
    check(os.path.islink(link), "the link is left a link")

    p = precious(tmp)
    out = os.path.join(tmp, "out.csv")
    os.link(p, out + ".lock")
    r = run(mb, *EXEC, "-r", "1", "-o", out, "--", "/bin/true", expect_rc=None)
    check(r.returncode != 0 and "lock" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
          f"a hard link at out.csv.lock refused in one line: {r.returncode} {r.stderr!r}")
    untouched(p, "a hard link at the lock's name")
    check(not os.path.exists(out), "nothing written")


def case_hard_link(mb, tmp):
    """An output with another name (a hard link) is not continued or replaced through one."""
    a = os.path.join(tmp, "a.csv")
    run(mb, *EXEC, "-r", "1", "--seed", "2", "-o", a, "--", "/bin/true")
    os.link(a, os.path.join(tmp, "b.csv"))
    before = open(a).read()
    for mode in ("--resume", "--force"):
        r = run(mb, *EXEC, "-r", "2", "--seed", "2", "-o", a, mode, "--", "/bin/true", expect_rc=None)
        check(r.returncode == 2 and "hard link" in r.stderr, f"{mode} through a hard link refused: {r.stderr!r}")
    check_eq(open(a).read(), before, "the file is unchanged")


def case_merge_input(mb, tmp):
    """merge's output is never one of its inputs, by another name (./s1.csv, a link) or with --force."""
    parts = []
    for k in (1, 2):
        parts.append(os.path.join(tmp, f"s{k}.csv"))
        run(mb, *EXEC, "-r", "2", "--seed", "3", "--shard", f"{k}/2", "-o", parts[-1], "--", "/bin/true")
    before = open(parts[0]).read()
    os.symlink("s1.csv", os.path.join(tmp, "l.csv"))
    for out in (os.path.join(tmp, "l.csv"), os.path.join(tmp, ".", "s1.csv")):
        r = run(mb, "merge", "--force", "-o", out, *parts, expect_rc=2)
        check("also an input" in r.stderr, f"merge -o {out}: the input refused: {r.stderr!r}")
    check_eq(open(parts[0]).read(), before, "the input is unchanged")
    # a sidecar the user did not name is never written through a link, with --force or not
    p = precious(tmp)
    os.symlink(p, os.path.join(tmp, "all.meta.json"))
    for extra in ([], ["--force"]):
        r = run(mb, "merge", *extra, "-o", os.path.join(tmp, "all.csv"), *parts, expect_rc=2)
        check("symbolic link" in r.stderr, f"merge {extra}: a link at all.meta.json refused: {r.stderr!r}")
    os.symlink(p, os.path.join(tmp, "e.meta.json"))
    for extra in ([], ["--force"], ["--resume"]):
        r = run(mb, *EXEC, "-r", "1", *extra, "-o", os.path.join(tmp, "e.csv"), "--", "/bin/true", expect_rc=2)
        check("symbolic link" in r.stderr, f"exec {extra}: a link at e.meta.json refused: {r.stderr!r}")
    untouched(p, "links at the sidecars' names")


def case_strict_metric(mb, tmp):
    """A metric's group is one whole number in the range the readers accept, or the row is an
    error quoting it (issue 29, findings 5 and 9): never a number's prefix, never a file no script reads."""
    for printed, word in (("1,234,567", "not one whole number"), ("\u22125.5", "not one whole number"),
                          ("12abc", "not one whole number"), ("1.5.3", "not one whole number"),
                          ("0x10", "not one whole number"), ("5e-400", "magnitude"), ("1e-200", "magnitude"),
                          ("1e308", "magnitude")):
        out = os.path.join(tmp, "m.csv")
        run(mb, *EXEC, "-r", "1", "--metric", "rate: (.*)", "-o", out, "--force", "--",
            "printf", f"rate: {printed}\\n", expect_rc=4)  # 4: no configuration had an ok sample
        rs = rows(out)
        check(len(rs) == 1 and rs[0]["status"] == "error" and word in rs[0]["message"]
              and printed in rs[0]["message"] and rs[0]["throughput"] == "",
              f"rate: {printed}: an error quoting it: {rs and (rs[0]['status'], rs[0]['message'], rs[0]['throughput'])}")
    run(mb, *EXEC, "-r", "1", "--metric", "rate: (.*)", "-o", out, "--force", "--", "printf", "rate:  -2.5e3 \\n")
    rs = rows(out)
    check(rs and rs[0]["status"] == "ok" and float(rs[0]["throughput"]) == -2500, f"a whole number is read: {rs}")


def case_failed_start(mb, tmp):
    """A full disk before the header is whole leaves no CSV; an empty or header-only file left by
    such a start is continued by --resume."""
    out = os.path.join(tmp, "f.csv")
    args = [*EXEC, "-r", "2", "--seed", "6", "-o", out]
    cmd = ["--", "/bin/true"]

    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (40, 40))

    p = subprocess.run([mb, *args, *cmd], capture_output=True, text=True, timeout=120, preexec_fn=cap)
    check(p.returncode != 0, f"a full disk at the start fails the run: {p.returncode}")
    check(not os.path.exists(out), f"and leaves no CSV: {os.listdir(tmp)}")
    check_eq([f for f in os.listdir(tmp) if f.endswith(".tmp")], [], "nor a temporary")
    open(out, "w").close()
    run(mb, *args, "--resume", *cmd)
    check_eq(len(rows(out)), 2, "an empty file resumed to the whole plan")
    header = open(out).readline()
    with open(out, "w") as f:
        f.write(header)
    os.unlink(os.path.join(tmp, "f.rss.csv"))
    os.unlink(os.path.join(tmp, "f.meta.json"))
    run(mb, *args, "--resume", *cmd)
    check_eq(len(rows(out)), 2, "a header-only file resumed to the whole plan")


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
