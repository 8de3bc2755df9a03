#!/usr/bin/python3
"""test_untrusted.py - other people's text and files reach no terminal, folder or reader raw
(issue 43): mbdata.printable escapes controls, ESC, DEL, C1 and Unicode format characters (a
bidi override); diagnose's words with a hostile comm and MALLOC_CONF; compare's fleet lines and
footer with hostile machine descriptions (text and Markdown); summary and the dashboard's HTML;
history.py store with a sidecar whose host, boot_id, cores_online or kernel is a path; a FIFO as a sidecar or
as the CSV refused in one line, never waited on; JSON nested too deeply one line, never a
traceback.

Usage: test_untrusted.py FIXTURE_DIR"""
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile

from mallocbench import dashboard, diagnose, history, machines, mbdata
from mbtest import FAILS, check, check_eq

FIXTURES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                               "fixtures")
ESC = "\x1b[2K\x1b[1A"  # erase the line, cursor up: a demo erased "differs by machine" with these
RLO = "\u202e"
RAW = ("\x1b", "\x9b", "\x07", RLO, "\u2066", "\u200b", "\x7f")


def raw_in(text):
    return [c for c in RAW if c in text]


def mb(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "mallocbench." + args[0], *args[1:]], capture_output=True,
                          text=True, timeout=timeout)


def test_printable():
    for text, want in (("a\x1b[2Jb", "a\\x1b[2Jb"), ("x\u202ey", "x\\u202ey"), ("\u2066i\u2069", "\\u2066i\\u2069"),
                       ("z\u200bw", "z\\u200bw"), ("l\u2028m", "l\\u2028m"), ("\x9b31m", "\\x9b31m"),
                       ("\x7f", "\\x7f"), ("\xad", "\\xad"), ("\ud800", "\\ud800"), ("\U000e0041", "\\U000e0041"),
                       ("tab\tnl\n", "tab\\x09nl\\x0a"),
                       ("é ü × – → ² µ ∞ 日本", "é ü × – → ² µ ∞ 日本"), ("1.23× [0.9..1.1]", "1.23× [0.9..1.1]")):
        check_eq(mbdata.printable(text), want, f"printable({text!r})")
    check_eq(mbdata.printable(mbdata.printable("a\x1bb")), "a\\x1bb", "printable twice is printable once")
    check(raw_in(mbdata.md_text("a" + RLO + ESC)) == [], "Markdown text escapes them too")
    check(raw_in(dashboard.esc("a" + RLO + ESC + "<b>")) == [] and "&lt;b&gt;" in dashboard.esc("<b>"),
          "the dashboard's HTML escape too")


def test_fail_line():
    """A script's one-line error quotes input (a configuration's name from a sidecar): it reaches
    the terminal printable, as every view's text does (cli.run, the one place Fail is printed)."""
    import contextlib
    import io
    from mallocbench import cli

    def main():
        raise cli.Fail("no ok sample of configuration 'a" + ESC + "]0;PWN\x07" + RLO + "'", 1)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = cli.run(main)
    check(rc == 1 and raw_in(err.getvalue().rstrip("\n")) == [] and "\\x1b[2K" in err.getvalue(),
          f"a Fail's line printed raw: {err.getvalue()!r}")


def test_sidecar_lock(tmp):
    """A sidecar's writer takes its CSV's lock too: while another process writes x.csv (the
    harness holds only x.csv.lock for x.csv, x.meta.json and x.rss.csv), x.rss.csv is refused."""
    from mallocbench import mbout
    csv = os.path.join(tmp, "x.csv")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from mallocbench import mbout; "
                               f"mbout.lock({csv!r}); print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        check(holder.stdout.readline().startswith("held"), "the holder took x.csv's lock")
        for side in ("x.rss.csv", "x.meta.json"):
            try:
                mbout.write(os.path.join(tmp, side), "a,b\n", force=True)
                check(False, f"{side} written while another process writes x.csv")
            except mbout.OutputError as e:
                check("sidecar" in str(e) and str(holder.pid) in str(e), f"{side}: refused naming the holder: {e}")
            check(not os.path.exists(os.path.join(tmp, side)), f"{side}: nothing written")
        mbout.write(os.path.join(tmp, "y.rss.csv"), "a\n")  # another CSV's sidecar: free
        check(os.path.exists(os.path.join(tmp, "y.rss.csv")) and not os.path.exists(os.path.join(tmp, "y.csv.lock")),
              "a free sidecar written, its CSV's lock let go")
    finally:
        holder.communicate("")


def test_bad_doc(tmp):
    """A saved diagnose document with a call name the analysis does not know: one line, exit 2."""
    doc = json.load(open(os.path.join(FIXTURES, "diagnose-pid.json")))
    for p in doc["processes"]:
        if p["allocator"].get("keep"):
            p["allocator"]["keep"]["stops"] = ["evil"]
    path = os.path.join(tmp, "bad.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    for extra in ([], ["--json"]):
        p = mb("diagnose", path, *extra)
        check(p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr,
              f"diagnose {extra} on a changed document: one line: {p.returncode} {p.stderr[-300:]!r}")


def test_diagnose():
    doc = json.load(open(os.path.join(FIXTURES, "diagnose-pid.json")))
    p = doc["processes"][0]
    p["comm"] = "evil" + ESC + RLO
    p["allocator"]["vars"] = ["MALLOC_CONF=narenas:1" + ESC + "\x07" + RLO]
    p["allocator"]["malloc_conf_compiled"] = "x\x9b2J"
    p["cmdline"] = ["prog", "arg" + ESC]
    text = "\n".join(diagnose.render(doc))
    check_eq(raw_in(text), [], "diagnose's words hold no raw control or bidi character")
    check("evil\\x1b[2K\\x1b[1A\\u202e" in text and "narenas:1\\x1b[2K" in text,
          f"the comm and MALLOC_CONF shown escaped: {text.splitlines()[0]!r}")
    check_eq(raw_in(json.dumps(diagnose.full(doc)["words"], ensure_ascii=False)), [], "and --json's words")
    all_doc = copy.deepcopy(doc)
    all_doc["mode"] = "all"
    check_eq(raw_in("\n".join(diagnose.render(all_doc))), [], "--all's ranking (its comm column)")


def fleet_files(tmp, hostile):
    out = []
    for name in ("exec-fixed", "exec-fixed-686f62"):
        shutil.copy(os.path.join(FIXTURES, name + ".csv"), tmp)
        meta = json.load(open(os.path.join(FIXTURES, name + ".meta.json")))
        if name == "exec-fixed":
            meta["machine"].update(hostile)
        with open(os.path.join(tmp, name + ".meta.json"), "w") as f:
            json.dump(meta, f)
        out.append(os.path.join(tmp, name + ".csv"))
    return out


def test_compare(tmp):
    files = fleet_files(tmp, {"cpu_model": "Xeon" + ESC + "consistent" + RLO, "kernel": "6.1" + ESC,
                              "thp_enabled": "always\x07\u2066"})
    for extra in ([], ["--markdown"]):
        p = mb("compare", "--fleet", *files, *extra)
        check(p.returncode == 0, f"compare --fleet {extra}: {p.stderr}")
        check_eq(raw_in(p.stdout + p.stderr), [], f"compare --fleet {extra}: no raw control or bidi character")
        check("Xeon\\x1b[2K\\x1b[1Aconsistent\\u202e" in p.stdout.replace("\\\\", "\\"),
              f"compare --fleet {extra}: the description shown escaped")
    # summary and report of a run whose sidecar describes its machine with them
    one = os.path.join(tmp, "exec-fixed.csv")
    p = mb("summary", one)
    check(p.returncode == 0 and raw_in(p.stdout + p.stderr) == [], f"summary: {p.returncode} {p.stderr!r}")
    rep = os.path.join(tmp, "rep")
    p = mb("report", one, "-o", rep, "--no-plots", timeout=300)
    md = open(os.path.join(rep, "report.md"), encoding="utf-8").read() if p.returncode == 0 else ""
    check(p.returncode == 0 and raw_in(md) == [] and "Xeon" in md, f"report's Markdown: {p.stderr!r}")


def test_history(tmp):
    hist = os.path.join(tmp, "history")
    os.makedirs(hist)
    for i, (field, value) in enumerate((("cores_online", "/../../../outside"), ("cores_online", "../.."),
                                        ("kernel", "../../x.y"), ("thp_enabled", "/../../t"),
                                        ("cpu_model", "../../../" + "a" * 300), ("host", "../../h"), ("host", "-" * 50),
                                        ("boot_id", "/../../b"))):
        d = os.path.join(tmp, field)
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(FIXTURES, "small-run.csv"), d)
        meta = json.load(open(os.path.join(FIXTURES, "small-run.meta.json")))
        meta["machine"][field] = value
        with open(os.path.join(d, "small-run.meta.json"), "w") as f:
            json.dump(meta, f)
        for mid in (history.machine_id(meta), machines.machine_kind(meta)):
            check("/" not in mid and ".." not in mid and not mid.startswith((".", "-")) and len(mid) < 120,
                  f"{field}={value[:20]!r}: machine id or kind {mid!r} is a name")
        p = mb("history", "store", os.path.join(d, "small-run.csv"), hist, f"2026-01-{i + 1:02d}")
        check(p.returncode == 0, f"{field}: stored: {p.stderr}")
        got = p.stdout.strip()
        check(os.path.realpath(got).startswith(os.path.realpath(hist) + os.sep) and os.path.exists(got),
              f"{field}={value[:20]!r}: the run is inside the history: {got!r}")
    check_eq(sorted(os.listdir(tmp)), sorted(["cores_online", "kernel", "thp_enabled", "cpu_model", "host", "boot_id",
                                              "history"]),
             "nothing written beside the history")
    # a machine folder that is a link out of the history: refused, nothing moved
    d = os.path.join(tmp, "linked")
    os.makedirs(d)
    shutil.copy(os.path.join(FIXTURES, "small-run.csv"), d)
    shutil.copy(os.path.join(FIXTURES, "small-run.meta.json"), d)
    mid = history.machine_id(json.load(open(os.path.join(d, "small-run.meta.json"))))
    shutil.rmtree(os.path.join(hist, mid), ignore_errors=True)
    os.symlink(os.path.join(tmp, "elsewhere"), os.path.join(hist, mid))
    os.makedirs(os.path.join(tmp, "elsewhere"))
    p = mb("history", "store", os.path.join(d, "small-run.csv"), hist, "2026-01-02")
    check(p.returncode == 2 and hist in p.stderr and os.listdir(os.path.join(tmp, "elsewhere")) == []
          and os.path.exists(os.path.join(d, "small-run.csv")), f"a linked machine folder refused: {p.stderr!r}")


def test_fifo(tmp):
    csv = os.path.join(tmp, "run.csv")
    shutil.copy(os.path.join(FIXTURES, "small-run.csv"), csv)
    os.mkfifo(os.path.join(tmp, "run.meta.json"))
    for args in (("compare", csv), ("summary", csv), ("compare", os.path.join(tmp, "run.meta.json"))):
        try:
            p = mb(*args, timeout=60)
        except subprocess.TimeoutExpired:
            check(False, f"{args}: waited on a FIFO")
            continue
        err = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(err) == 1 and "FIFO" in err[0] and "Traceback" not in p.stderr,
              f"{args[0]} with a FIFO: one line: {p.returncode} {p.stderr!r}")
    os.unlink(os.path.join(tmp, "run.meta.json"))
    with open(os.path.join(tmp, "run.meta.json"), "w") as f:
        f.write("[" * 100000)
    p = mb("compare", csv)
    err = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(err) == 1 and "run.meta.json" in err[0] and "nested too deeply" in err[0],
          f"a sidecar nested too deeply: refused in one line naming it (the one reader's policy): {p.stderr!r}")
    deep = os.path.join(tmp, "deep.json")
    with open(deep, "w") as f:
        f.write('{"a":' * 50000)
    for args, word in ((("diagnose", deep), "nested too deeply"), (("history", "machine-id", deep), "nested too deeply")):
        p = mb(*args)
        check(p.returncode == 2 and word in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"{args[0]} of JSON nested too deeply: one line: {p.returncode} {p.stderr[-200:]!r}")


def test_api():
    """The Python API refuses what it cannot mean: a floor outside [0, 1) or not finite (floor=-1
    flipped verdicts), bytes or a number as paths (bytes were read as file descriptors); a
    pathlib.Path is a path."""
    import pathlib
    import mallocbench
    small = os.path.join(FIXTURES, "small-run.csv")
    run = mallocbench.load(pathlib.Path(small))
    check(len(run.rows) > 0 and run.paths == [small], f"load(Path): {run.paths}")
    check_eq(len(mallocbench.load([pathlib.Path(small)]).rows), len(run.rows), "load([Path])")
    for bad in (small.encode(), 3, [small.encode()], None):
        try:
            mallocbench.load(bad)
            check(False, f"load({bad!r}) accepted")
        except TypeError as e:
            check("paths" in str(e), f"load({bad!r}): TypeError naming paths: {e}")
    for floor in (-1, -0.01, float("nan"), float("inf"), 1.0, True, "0.01"):
        try:
            mallocbench.compare(run, floor=floor)
            check(False, f"compare(floor={floor!r}) accepted")
        except ValueError as e:
            check("floor" in str(e), f"compare(floor={floor!r}): ValueError naming floor: {e}")
    check(mallocbench.compare(run, floor=0.0)["cells"], "floor 0 is a floor")
    p = mb("compare", small, "--floor", "-1")
    check(p.returncode == 2 and "--floor" in p.stderr and p.stdout == "", f"--floor -1 refused: {p.stderr!r}")


def test_dashboard(tmp):
    """A report's plots planted as links (to a root-only file, through a linked folder) or
    readable by their owner only are not published; report.md as a link is not rendered."""
    secret_dir = os.path.join(tmp, "rootonly")
    os.makedirs(secret_dir, mode=0o700)
    secret = os.path.join(secret_dir, "secret.png")
    with open(secret, "wb") as f:
        f.write(b"SECRET-BYTES-0600")
    os.chmod(secret, 0o600)
    rep = os.path.join(tmp, "report")
    os.makedirs(rep)
    os.symlink(secret, os.path.join(rep, "linked.png"))
    os.symlink(secret_dir, os.path.join(rep, "sub"))
    with open(os.path.join(rep, "private.png"), "wb") as f:
        f.write(b"SECRET-BYTES-0600")
    os.chmod(os.path.join(rep, "private.png"), 0o600)
    with open(os.path.join(rep, "ok.png"), "wb") as f:
        f.write(b"PUBLIC")
    os.chmod(os.path.join(rep, "ok.png"), 0o644)
    with open(os.path.join(rep, "report.md"), "w") as f:
        f.write("# r\n\n![a](linked.png)\n![b](sub/secret.png)\n![c](private.png)\n![d](ok.png)\n")
    site = os.path.join(tmp, "site")
    p = mb("dashboard", os.path.join(FIXTURES, "series.json"), site, "--report", rep)
    check(p.returncode == 0, f"dashboard: exit {p.returncode}: {p.stderr}")
    leaked = []
    for d, _, files in os.walk(site):
        for n in files:
            with open(os.path.join(d, n), "rb") as f:
                if b"SECRET-BYTES" in f.read():
                    leaked.append(os.path.relpath(os.path.join(d, n), site))
    check_eq(leaked, [], "site files holding the root-only bytes")
    check(os.path.exists(os.path.join(site, "compare", "ok.png")), "the plain plot is published")
    for n in ("linked.png", "sub", "private.png"):
        check(n in p.stderr, f"{n}: no warning names it: {p.stderr!r}")
    # report.md itself a link to a file elsewhere: not rendered
    rep2 = os.path.join(tmp, "report2")
    os.makedirs(rep2)
    with open(os.path.join(secret_dir, "report.md"), "w") as f:
        f.write("# SECRET-BYTES-0600\n")
    os.chmod(os.path.join(secret_dir, "report.md"), 0o600)
    os.symlink(os.path.join(secret_dir, "report.md"), os.path.join(rep2, "report.md"))
    site2 = os.path.join(tmp, "site2")
    p = mb("dashboard", os.path.join(FIXTURES, "series.json"), site2, "--report", rep2)
    check(p.returncode == 0 and "no compare report linked" in p.stderr, f"a linked report.md: {p.stderr!r}")
    for d, _, files in os.walk(site2):
        for n in files:
            with open(os.path.join(d, n), "rb") as f:
                check(b"SECRET-BYTES" not in f.read(), f"{n}: a linked report.md was published")


def main():
    test_api()
    test_printable()
    test_fail_line()
    test_diagnose()
    for t in (test_compare, test_history, test_fifo, test_dashboard, test_sidecar_lock, test_bad_doc):
        with tempfile.TemporaryDirectory() as tmp:
            t(tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
