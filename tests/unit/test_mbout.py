#!/usr/bin/python3
"""test_mbout.py - the scripts' one output discipline (scripts/mallocbench/mbout.py, issue 29) and the
scripts that write through it: a link or FIFO at an old temporary name is never opened; an
existing target is refused without --force, an input even with it, a hard link always; a
folder of someone else's files is refused and its files kept; tune deletes only its own
files; compare's --csv-out guards formula cells and refuses a NEW that shares samples with
OLD; report, plots, detect, site and frameworks refuse before any work.  The output lock
(issue 43): a script is refused, naming the pid, while another process holds FILE.lock as
the harness's outfile_lock takes it (write, open_text, copy, a folder, compare --csv-out),
and the harness (`mallocbench exec -o`) is refused while a script holds it.

Usage: test_mbout.py FIXTURE_DIR [HARNESS] (exit 77 without scipy: compare, report and detect
need it)."""
import csv
import os
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(HERE, "..", "scripts")
from mallocbench import mbout
from mbtest import FAILS, check, check_eq  # noqa: E402

try:
    import scipy  # noqa: F401
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)

FIXTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures")
SMALL = os.path.join(FIXTURES, "small-run.csv")
PRECIOUS = b"precious: not to be touched\n"


def refused(fn, *words):
    try:
        fn()
    except mbout.OutputError as e:
        check(all(w in str(e) for w in words) and "\n" not in str(e), f"one line naming {words}: {e}")
        return True
    check(False, f"not refused (wanted {words})")
    return False


def script(name, *args, cwd=None):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_write(tmp):
    p = os.path.join(tmp, "precious.txt")
    with open(p, "wb") as f:
        f.write(PRECIOUS)
    out = os.path.join(tmp, "out.md")
    os.symlink(p, out + ".tmp")  # the old fixed temporary name
    mbout.write(out, "report\n")
    check_eq(open(p, "rb").read(), PRECIOUS, "a link at out.md.tmp is not followed")
    check_eq(open(out).read(), "report\n", "the new file is written")
    check(not os.path.islink(out) and oct(os.stat(out).st_mode & 0o777) in ("0o644", "0o664", "0o666"),
          f"a regular file of the usual mode: {oct(os.stat(out).st_mode)}")
    refused(lambda: mbout.write(out, "again\n"), "exists", "--force")
    mbout.write(out, "again\n", force=True)
    check_eq(open(out).read(), "again\n", "--force replaces")
    refused(lambda: mbout.write(out, "x", force=True, inputs=[out]), "input")
    link = os.path.join(tmp, "link.md")
    os.symlink("out.md", link)
    refused(lambda: mbout.write(link, "x", force=True, inputs=[out]), "input")  # one file, two names
    mbout.write(link, "through the link\n", force=True)
    check(os.path.islink(link) and open(out).read() == "through the link\n", "a link's file is written, the link kept")
    hard = os.path.join(tmp, "hard.md")
    os.link(p, hard)
    refused(lambda: mbout.write(hard, "x", force=True), "hard link")
    check_eq(open(p, "rb").read(), PRECIOUS, "nor through a hard link")
    os.symlink("nowhere", os.path.join(tmp, "dangling"))
    refused(lambda: mbout.write(os.path.join(tmp, "dangling"), "x", force=True), "does not resolve")
    check(not os.path.exists(os.path.join(tmp, "nowhere")), "a dangling link's target is not created")
    check_eq([f for f in os.listdir(tmp) if f.endswith(".tmp") and f != "out.md.tmp"], [], "no temporary left")
    fifo = os.path.join(tmp, "pipe")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    mbout.write(fifo, "to a pipe\n")
    reader.join(10)
    check_eq(got, [b"to a pipe\n"], "a FIFO is written in place")


def test_folder(tmp):
    d = os.path.join(tmp, "rep")
    os.makedirs(d)
    with open(os.path.join(d, "notes.txt"), "wb") as f:
        f.write(PRECIOUS)
    refused(lambda: mbout.Folder(d), "notes.txt", "--force")
    f = mbout.Folder(os.path.join(tmp, "fresh"))
    f.write("a.md", "one\n")
    f.commit()
    g = mbout.Folder(os.path.join(tmp, "fresh"))  # its own files: replaced without --force
    g.write("a.md", "two\n")
    g.commit()
    check_eq(open(os.path.join(tmp, "fresh", "a.md")).read(), "two\n", "a folder's own file replaced")
    check_eq(open(os.path.join(tmp, "fresh", mbout.MANIFEST)).read(), "a.md\n", "the manifest lists it")
    h = mbout.Folder(d, force=True)
    h.write("b.md", "x")
    h.commit()
    check_eq(open(os.path.join(d, "notes.txt"), "rb").read(), PRECIOUS, "--force keeps the files it does not own")
    refused(lambda: f.file("../x"), "not a file name")
    # a link inside the folder (planted, or a --force folder's) is never written through
    p = os.path.join(tmp, "precious.txt")
    with open(p, "wb") as fh:
        fh.write(PRECIOUS)
    os.symlink(p, os.path.join(d, "plots.json"))
    k = mbout.Folder(d, force=True)
    refused(lambda: k.write("plots.json", "[]"), "symbolic link")
    check_eq(open(p, "rb").read(), PRECIOUS, "the link's target is untouched")
    refused(lambda: k.file("plots.json"), "symbolic link")  # a path handed out to another writer too
    m = os.path.join(tmp, "m")
    os.makedirs(m)
    os.symlink(p, os.path.join(m, mbout.MANIFEST))
    refused(lambda: mbout.Folder(m, force=True), "symbolic link")
    check_eq(open(p, "rb").read(), PRECIOUS, "a linked manifest is not written through")
    # an error of the file system is one line, never a traceback
    refused(lambda: mbout.write(os.path.join(p, "x.csv"), "x"), "cannot write")


def test_tune_own(tmp):
    from mallocbench import tune
    base = os.path.join(tmp, "notes")
    mine = ["notes.round1.csv", "notes.round12.meta.json", "notes.round3.rss.csv", "notes.confirm.csv",
            "notes.confirm.meta.json", "notes.confirm.rss.csv", "notes.pareto-rss.png"]
    theirs = ["notes.md", "notes.roundup.txt", "notes.confirm.bak", "notes.round1.csv.bak", "notesx.round1.csv",
              "notes.rounds.csv", "notes.pareto-x.png"]
    for n in mine + theirs:
        open(os.path.join(tmp, n), "w").close()
    check_eq(sorted(os.path.basename(p) for p in tune.own_files(base)), sorted(mine), "tune's own files only")


def test_compare(tmp):
    out = os.path.join(tmp, "cmp.csv")
    p = script("compare.py", SMALL, "--csv-out", SMALL, "--force")
    check(p.returncode == 2 and "input" in p.stderr, f"--csv-out over the input refused, --force or not: {p.stderr!r}")
    with open(out, "wb") as f:
        f.write(PRECIOUS)
    p = script("compare.py", SMALL, "--csv-out", out)
    check(p.returncode == 2 and "--force" in p.stderr and p.stdout == "",
          f"an existing --csv-out refused before any work: {p.returncode} {p.stderr!r}")
    check_eq(open(out, "rb").read(), PRECIOUS, "and kept")
    p = script("compare.py", SMALL, "--csv-out", out, "--force")
    check(p.returncode == 0 and open(out).readline().startswith("workload,"), f"--force replaces: {p.stderr!r}")
    # NEW a subset of OLD: the same samples on both sides
    half = os.path.join(tmp, "half.csv")
    with open(SMALL, newline="") as f:
        lines = f.read().splitlines(True)
    with open(half, "w", newline="") as f:
        f.writelines(lines[:1 + (len(lines) - 1) // 2])
    p = script("compare.py", SMALL, half)
    check(p.returncode == 2 and "share" in p.stderr and "itself" in p.stderr,
          f"NEW a subset of OLD refused: {p.returncode} {p.stderr!r}")
    from mallocbench import mbcsv
    for text, want in (("=1+1", "'=1+1"), ("-5", "-5"), ("+x", "'+x"), ("@SUM", "'@SUM"), ("'=x", "''=x"),
                       ("plain", "plain"), ("-1.5e3", "-1.5e3"), ("-inf", "'-inf")):
        check_eq(mbcsv.guard(text), want, f"guard({text!r})")
        check_eq(mbcsv.unguard(mbcsv.guard(text)), text, f"unguard(guard({text!r}))")


def test_writers(tmp):
    """report, plots, detect, site and frameworks: a folder or file of someone else's refused
    before any work, in one line, and left as it was."""
    d = os.path.join(tmp, "theirs")
    os.makedirs(d)
    with open(os.path.join(d, "notes.txt"), "wb") as f:
        f.write(PRECIOUS)
    for name, args in (("report.py", [SMALL, "-o", d, "--no-plots"]),
                       ("detect.py", [os.path.join(tmp, "no-history"), "--out", d]),
                       ("dashboard.py", [os.path.join(FIXTURES, "series.json"), d])):
        p = script(name, *args)
        check(p.returncode == 2 and "notes.txt" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"{name} into a folder of other files: exit 2, one line: {p.returncode} {p.stderr!r}")
    check_eq(sorted(os.listdir(d)), ["notes.txt"], "nothing written there")
    p = script("report.py", SMALL, "-o", d, "--no-plots", "--force")
    check(p.returncode == 0 and os.path.isfile(os.path.join(d, "report.md")), f"--force writes: {p.stderr!r}")
    check_eq(open(os.path.join(d, "notes.txt"), "rb").read(), PRECIOUS, "and keeps the others")
    own = os.path.join(tmp, "own")
    for k in (1, 2):
        p = script("report.py", SMALL, "-o", own, "--no-plots")
        check(p.returncode == 0, f"report {k} into its own folder needs no --force: {p.stderr!r}")
    md = os.path.join(tmp, "fw.md")
    with open(md, "wb") as f:
        f.write(PRECIOUS)
    p = script("frameworks.py", SMALL, "-o", md)
    check(p.returncode == 2 and "--force" in p.stderr, f"frameworks -o over a file refused: {p.stderr!r}")
    check_eq(open(md, "rb").read(), PRECIOUS, "and kept")


HARNESS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "build", "mallocbench")
# a second writer as the harness's outfile_lock is one: a POSIX write lock on FILE.lock, taken
# without waiting, held until stdin closes
HOLDER = """import fcntl, os, sys
fd = os.open(sys.argv[1] + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.write(fd, b"%d\\n" % os.getpid())
print("held", flush=True)
sys.stdin.read()
os.unlink(sys.argv[1] + ".lock")
"""


class Holder:
    """Another process holding path's lock for the with block."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.p = subprocess.Popen([sys.executable, "-c", HOLDER, self.path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        check_eq(self.p.stdout.readline(), "held\n", "the holder holds the lock")
        return self.p.pid

    def __exit__(self, *exc):
        self.p.stdin.close()
        self.p.wait(30)


def test_lock(tmp):
    out = os.path.join(tmp, "out.csv")
    with open(out, "wb") as f:
        f.write(PRECIOUS)
    with Holder(out) as pid:
        words = f"cannot write '{out}': process {pid} is writing it (it holds '{out}.lock')"
        refused(lambda: mbout.write(out, "x", force=True), words)
        refused(lambda: mbout.copy(SMALL, out, force=True), words)

        def text():
            with mbout.open_text(out, force=True) as f:
                f.write("x")
        refused(text, words)
        p = script("compare.py", SMALL, "--csv-out", out, "--force")
        check(p.returncode == 2 and words in p.stderr and p.stdout == "",
              f"compare --csv-out --force while another process writes it: refused before any work: "
              f"{p.returncode} {p.stderr!r}")
        check_eq(open(out, "rb").read(), PRECIOUS, "the file another process is writing is left to it")
        check(os.path.exists(out + ".lock"), "its lock kept")
    mbout.write(out, "mine\n", force=True)
    check(open(out).read() == "mine\n" and not os.path.exists(out + ".lock"),
          "once it lets go: written, and the lock file gone with the lock")
    # a folder: its manifest's lock, held from the folder's opening to its commit
    d = os.path.join(tmp, "rep")
    f = mbout.Folder(d)
    f.write("a.md", "one\n")
    man = os.path.join(os.path.realpath(d), mbout.MANIFEST)
    with Holder(os.path.join(tmp, "probe")):
        pass
    probe = subprocess.run([sys.executable, "-c", HOLDER, man], input="", capture_output=True, text=True, timeout=30)
    check(probe.returncode != 0, f"another process cannot take an open folder's lock: {probe.returncode}")
    f.commit()
    check(not os.path.exists(man + ".lock"), "the folder's lock goes at commit")
    with Holder(man) as pid:
        refused(lambda: mbout.Folder(d), f"process {pid} is writing it")
    g = mbout.Folder(d)  # a stale lock file (a crashed writer's) is neither a stranger nor a holder
    open(man + ".lock", "w").close()
    g.commit()
    check_eq(sorted(os.listdir(d)), [mbout.MANIFEST, "a.md"], "a stale lock file is taken and removed")
    # open_text holds the lock through its block
    txt = os.path.join(tmp, "t.md")
    with mbout.open_text(txt) as fh:
        fh.write("t\n")
        probe = subprocess.run([sys.executable, "-c", HOLDER, os.path.realpath(txt)], input="", capture_output=True,
                               text=True, timeout=30)
        check(probe.returncode != 0, "open_text's target is locked while its block runs")
    check(open(txt).read() == "t\n" and not os.path.exists(txt + ".lock"), "open_text wrote it and let go")
    # the lock's name: a link there is not followed, a hard link there not written through
    odd = os.path.join(tmp, "odd.csv")
    os.symlink(os.path.join(tmp, "elsewhere"), odd + ".lock")
    refused(lambda: mbout.write(odd, "x"), "cannot create its lock")
    check(not os.path.exists(os.path.join(tmp, "elsewhere")), "the link's target not created")
    os.unlink(odd + ".lock")
    p = os.path.join(tmp, "precious.txt")
    with open(p, "wb") as fh:
        fh.write(PRECIOUS)
    os.link(p, odd + ".lock")
    refused(lambda: mbout.write(odd, "x"), "not a lock file")
    check_eq(open(p, "rb").read(), PRECIOUS, "a hard link at the lock's name: its file untouched")
    # the harness is refused while a script holds the lock
    if not os.access(HARNESS, os.X_OK):
        check(False, f"no harness at {HARNESS}: the C side of the lock is untested")
        return
    csv_out = os.path.join(tmp, "run.csv")
    held = mbout.lock(mbout.resolve(csv_out))
    try:
        r = subprocess.run([HARNESS, "exec", "-q", "-o", csv_out, "-r", "1", "--", "true"], capture_output=True,
                           text=True, timeout=120)
    finally:
        mbout.unlock(held)
    want = f"cannot write '{csv_out}': process {os.getpid()} is writing it (it holds '{csv_out}.lock')"
    check(r.returncode != 0 and want in r.stderr and not os.path.exists(csv_out),
          f"mallocbench exec -o refused while a script writes it: {r.returncode} {r.stderr[-300:]!r}")
    check(not os.path.exists(csv_out + ".lock"), "the script's lock file gone with its lock")


def main():
    for t in (test_lock, test_write, test_folder, test_tune_own, test_compare, test_writers):
        with tempfile.TemporaryDirectory() as tmp:
            t(tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
