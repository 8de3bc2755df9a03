#!/usr/bin/python3
"""test_mbout.py - the scripts' one output discipline (scripts/mallocbench/mbout.py, issue 29) and the
scripts that write through it: a link or FIFO at an old temporary name is never opened; an
existing target is refused without --force, an input even with it, a hard link always; a
folder of someone else's files is refused and its files kept; tune deletes only its own
files; compare's --csv-out guards formula cells and refuses a NEW that shares samples with
OLD; report, plots, detect, site and frameworks refuse before any work.

Usage: test_mbout.py FIXTURE_DIR (exit 77 without scipy: compare, report and detect need it)."""
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


def main():
    for t in (test_write, test_folder, test_tune_own, test_compare, test_writers):
        with tempfile.TemporaryDirectory() as tmp:
            t(tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
