#!/usr/bin/env python3
"""test_hostile.py - issue 18: what users type reaches the output as text, never as markup.
Cases: the site's markdown converter (the stored XSS through report.md, javascript: links,
outside images) and the CSP on every page; NIGHT as a real calendar date (history.py store,
load and latest, dashboard.py); a sample present twice refused by summary, compare, report and
merge; numbers past the range of a double refused in one line, never printed as inf/nan or a
traceback; and a seeded property test: hostile labels, units, parameters and commands
written into the fixture's CSV and sidecar either are refused in one line (exit 2) or go
through summary, compare, report and a history (detect.py, dashboard.py) and show as text.
Usage: test_hostile.py FIXTURE.csv [HARNESS] [CASES] (HARNESS: also `mallocbench merge`)."""
import csv
import html.parser
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)
SCRIPTS = os.path.join(ROOT, "scripts")
from mbtest import FAILS, check, check_eq, entry  # noqa: E402
from mallocbench import mbcsv, mbdata

PY = sys.executable
try:
    import matplotlib  # noqa: F401  (report.py draws the plots whose titles hold the params)
    HAVE_PLOTS = True
except ImportError:
    HAVE_PLOTS = False
from mallocbench import words  # noqa: E402


def script(name, *args):
    return subprocess.run([PY, os.path.join(SCRIPTS, name), *args], capture_output=True, timeout=600)


STARTED = set()


def script_here(name, *args):
    """script(), but only each script's first call is a process of its own (its shim, its
    interpreter, its exit); the later ones run its entry in this process (mbtest.entry, as
    test_scripts_input does: the same code and lines without a Python start and a scipy import
    each, which were 13 of this test's 21 s), stdout and stderr as bytes as script() gives them.
    For numbers and duplicates only: the property test's hostile bytes keep a process per call,
    through a real stdout's encoding."""
    if name not in STARTED:
        STARTED.add(name)
        return script(name, *args)
    rc, out, err = entry(os.path.join(SCRIPTS, name), *args)
    return subprocess.CompletedProcess([name, *args], rc, out.encode(), err.encode())


def refused(p, what, needle=None):
    """exit 2, one line on stderr (containing needle), no traceback."""
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 2, f"{what}: exit {p.returncode}, expected 2 ({err.strip()[-300:]!r})")
    check(len(err.strip().splitlines()) == 1 and "Traceback" not in err, f"{what}: not one line: {err[-600:]!r}")
    if needle:
        check(needle in err, f"{what}: {needle!r} not in {err.strip()!r}")


# ---- HTML as a browser would see it -------------------------------------------------------

SAFE_TAGS = {"html", "head", "meta", "title", "link", "body", "script", "header", "section", "div", "h1", "h2",
             "h3", "h4", "h5", "h6", "p", "ul", "li", "table", "tr", "th", "td", "code", "strong", "a", "img",
             "pre", "span", "small", "br", "button", "noscript",
             # the overview's sparklines (dashboard.py's sparkline(): numbers and fixed classes only)
             "svg", "polyline", "circle", "line"}


def href_ok(v):
    """A link a page may hold (this test's own rule, not dashboard.py's): relative or http(s)."""
    return not re.search(r"[\x00-\x20\x7f-\x9f\\]", v) and not v.startswith("//") and (
        re.match(r"https?:", v, re.I) or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", v))


def src_ok(v):
    """An image source a page may hold: relative, inside the site."""
    return href_ok(v) and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|/", v)


class Page(html.parser.HTMLParser):
    """Tags, attributes and text of a page; problems: markup that did not come from dashboard.py."""

    def __init__(self, where):
        super().__init__(convert_charrefs=True)
        self.where, self.text, self.problems, self.csp = where, [], [], None

    def handle_starttag(self, tag, attrs):
        if tag not in SAFE_TAGS:
            self.problems.append(f"tag <{tag}>")
        for k, v in attrs:
            v = v or ""
            if k.startswith("on"):
                self.problems.append(f"<{tag} {k}=...>")
            if k == "href" and not href_ok(v) and not (tag == "link" and v == "data:,"):
                self.problems.append(f"<{tag} href={v!r}>")
            if k == "src" and tag != "script" and not src_ok(v):
                self.problems.append(f"<{tag} src={v!r}>")
            if tag == "script" and k == "src" and not re.fullmatch(r"(\.\./)?(data\.js|assets/[\w.]+\.js)", v):
                self.problems.append(f"<script src={v!r}>")
        if tag == "script" and not any(k == "src" for k, _ in attrs):
            self.problems.append("inline <script>")
        if tag == "meta" and dict(attrs).get("http-equiv") == "Content-Security-Policy":
            self.csp = dict(attrs).get("content")

    def handle_data(self, data):
        self.text.append(data)


def parse_page(path_or_text, where=None):
    if where is None:
        with open(path_or_text, encoding="utf-8") as f:
            text, where = f.read(), path_or_text
    else:
        text = path_or_text
    p = Page(where)
    p.feed(text)
    p.close()
    return p


def check_site(site, shown=()):
    """Every page of SITE: only dashboard.py's markup, a CSP; `shown` texts appear in index.html."""
    pages = [os.path.join(d, f) for d, _, fs in os.walk(site) for f in fs if f.endswith(".html")]
    check(pages, f"{site}: no pages")
    for f in sorted(pages):
        p = parse_page(f)
        check(not p.problems, f"{f}: {p.problems[:3]}")
        check(p.csp is not None and "default-src 'self'" in p.csp and "script-src 'self'" in p.csp,
              f"{f}: no Content-Security-Policy (default-src 'self') meta tag")
    index = parse_page(os.path.join(site, "index.html"))
    text = "".join(index.text)
    for s in shown:
        check(s in text, f"{site}/index.html: {s[:60]!r} not shown as text")


# ---- the markdown converter ---------------------------------------------------------------

XSS = [
    "`echo '[a](z)[b](y/onerror=alert(1))'`",
    "![x[a](z)[b](y/onerror=alert(1))](p.png)",
    "![[a](z)[b](y/onerror=alert(1))](p.png)",
    "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,<script>alert(1)</script>)",
    "[x](//evil.example/a) [y](\\\\evil.example/a) [z](vbscript:msgbox)",
    "![t](http://evil.example/t.png) ![u](https://evil.example/u.png) ![v](//evil.example/v.png) ![w](/etc/x.png)",
    "<script>alert(1)</script> <img src=x onerror=alert(1)> <a href=javascript:alert(1)>x</a>",
    "**<b onmouseover=alert(1)>**",
    "| a | <svg onload=alert(1)> | `<x onclick=y>` |",
    "# <h1 onclick=alert(1)>",
    "- [a](z\" onmouseover=\"alert(1)) and ![a](b\" onerror=\"alert(1))",
]


def test_markdown():
    md = "\n\n".join(XSS) + "\n\n| h | i |\n|---|---|\n| [a](x.html) | ![p](p.png) |\n\n![p](p.png)\n"
    out = words.markdown_html(md)
    p = parse_page(out, "markdown_html()")
    check(not p.problems, f"markdown_html(): markup from the input: {p.problems}")
    text = "".join(p.text)
    check("<script>alert(1)</script>" in text, "markdown_html(): <script> not shown as text")
    check("javascript:alert(1)" in text, "markdown_html(): a javascript: link not shown as text")
    # what the report writes itself still renders: an image alone on its line; a link, or an
    # image inside a line, is its text (issue 44: the stricter of the two renderers' rules)
    check('<p><img src="p.png" alt="p"></p>' in out, f"markdown_html(): an image on its line: {out[-200:]}")
    check("<a " not in out and "<td>[a](x.html)</td><td>![p](p.png)</td>" in out,
          f"markdown_html(): a link or an image in a line made markup: {out[-200:]}")
    check_eq(words.markdown_html("a \\| b `c|d` \\[x\\](y) \\*s\\*"), "<p>a | b <code>c|d</code> [x](y) *s*</p>",
             "backslash escapes")
    check_eq(words.md_cells("| a \\| b | c |"), ["a \\| b", "c"], "an escaped | stays in its cell")
    check_eq(words.safe_src("plots/a.png"), "plots/a.png", "a relative image kept")
    for bad in ("javascript:x", " javascript:x", "java\tscript:x", "//x", "\\\\x", "data:x", "file:///etc",
                "https://x.example/a.png", "/etc/a.png"):
        check(words.safe_src(bad) is None, f"safe_src({bad!r}) is not refused")


# pieces that mean something to markdown or HTML, for the fuzzer below
FUZZ_PIECES = list("[]()!*`|\\<>\"'=/:#- \nax&;") + [
    "javascript:", "onerror=", "http://e.example/", "//e.example", "<script>", "<img src=x ", "](", "![",
    "**", "\\|", "&lt;", "data:", "\t"]


def test_markdown_fuzz(n=4000, seed=18):
    """A fuzzer for the converter (the site renderer): seeded random texts made of FUZZ_PIECES;
    every output must hold only markup that markdown_html() makes itself (no tag, attribute, link or
    image source from the input), whatever the input."""
    rnd = random.Random(seed)
    for i in range(n):
        md = "".join(rnd.choice(FUZZ_PIECES) for _ in range(rnd.randint(1, 48)))
        try:
            out = words.markdown_html(md)
        except Exception as e:  # the converter must take any text
            check(False, f"markdown_html({md!r}): {type(e).__name__}: {e}")
            return
        problems = parse_page(out, "markdown_html()").problems
        if problems:
            check(False, f"markdown_html({md!r}) gave markup from the input: {problems}: {out!r}")
            return
    print(f"test_hostile: markdown fuzz: {n} random texts, only the converter's markup")


def test_site_report(fixture_dir, tmp):
    """dashboard.py --report over a report.md full of payloads: only dashboard.py's markup, a CSP everywhere."""
    rep = os.path.join(tmp, "xss-report")
    os.makedirs(rep)
    with open(os.path.join(rep, "report.md"), "w") as f:
        f.write("# report\n\n" + "\n\n".join(XSS) + "\n")
    site = os.path.join(tmp, "xss-site")
    p = script("dashboard.py", os.path.join(fixture_dir, "series.json"), site, "--report", rep)
    check(p.returncode == 0, f"dashboard.py --report: exit {p.returncode}: {p.stderr[-300:]!r}")
    if p.returncode == 0:
        check_site(site)


# ---- NIGHT --------------------------------------------------------------------------------

def copy_run(fixture, dst):
    shutil.copyfile(fixture, dst)
    for suf in (".meta.json", ".rss.csv"):
        if os.path.exists(mbdata.sidecar(fixture, suf)):
            shutil.copyfile(mbdata.sidecar(fixture, suf), mbdata.sidecar(dst, suf))


def test_nights(fixture, tmp):
    hist = os.path.join(tmp, "nights")
    run = os.path.join(tmp, "night-run.csv")
    for bad in ("2026-13-45", "9999-99-99", "2026-11-01\n", "\uff12\uff10\uff12\uff16-11-01", "2099-01-01"):
        copy_run(fixture, run)
        refused(script("history.py", "store", run, hist, bad), f"history.py store NIGHT={bad!r}")
        check(os.path.exists(run), f"history.py store NIGHT={bad!r} moved the run")
    copy_run(fixture, run)
    p = script("history.py", "store", run, hist, "2026-11-02")
    check(p.returncode == 0, f"history.py store 2026-11-02: exit {p.returncode} {p.stderr!r}")
    stored = p.stdout.decode().strip()
    mdir = os.path.dirname(stored)
    copy_run(stored, os.path.join(mdir, "2026-11-01.csv"))
    p = script("history.py", "latest", hist)
    check_eq(p.stdout.decode().strip(), stored, "history.py latest")
    # a night named like a date that is not one would sort last forever: refused where read
    copy_run(stored, os.path.join(mdir, "9999-99-99.csv"))
    refused(script("history.py", "latest", hist), "history.py latest with 9999-99-99.csv", "9999-99-99")
    refused(script("detect.py", hist, "--out", os.path.join(tmp, "nights-site")), "detect.py with 9999-99-99.csv",
            "9999-99-99")
    # dashboard.py: series.json nights are dates too
    with open(os.path.join(os.path.dirname(fixture), "series.json")) as f:
        doc = json.load(f)
    doc["series"][0]["nights"][-1] = "2026-13-45"
    bad = os.path.join(tmp, "bad-night.json")
    with open(bad, "w") as f:
        json.dump(doc, f)
    refused(script("dashboard.py", bad, os.path.join(tmp, "bad-night-site")), "dashboard.py with night 2026-13-45", "2026-13-45")
    # the one parser they share
    for good in ("2026-11-01", "2024-02-29", "2026-12-31"):
        check_eq(str(mbdata.parse_night(good)), good, f"parse_night({good!r})")
    for bad in ("2026-13-45", "9999-99-99", "2026-02-29", "2026-11-01\n", "2026-11-1", " 2026-11-01",
                "\uff12\uff10\uff12\uff16-11-01", "\u0662\u0660\u0662\u0666-11-01", "2026-11-01T00", ""):
        try:
            mbdata.parse_night(bad)
            check(False, f"parse_night({bad!r}) accepted")
        except ValueError as e:
            check(repr(bad) in str(e), f"parse_night({bad!r}): message {e} does not quote it")


# ---- duplicates and out-of-range numbers --------------------------------------------------

def test_duplicates(fixture, tmp, harness):
    dup = os.path.join(tmp, "dup.csv")
    with open(fixture) as f:
        lines = f.read().splitlines(True)
    with open(dup, "w") as f:
        f.writelines(lines + lines[1:])
    shutil.copyfile(mbdata.sidecar(fixture, ".meta.json"), mbdata.sidecar(dup, ".meta.json"))
    n = len(list(csv.reader(open(fixture, newline="")))) - 1
    for name, args in (("summary.py", [dup]), ("summary.py", [fixture, fixture]), ("compare.py", [dup]),
                       ("compare.py", ["--old", fixture, fixture, "--new", fixture]),
                       ("report.py", [dup, "-o", os.path.join(tmp, "dup-report"), "--no-plots"])):
        p = script_here(name, *args)
        refused(p, f"{name} {' '.join(os.path.basename(a) for a in args)} (a sample twice)", "sample '0' again")
        if args == [dup]:
            check(f"row {n + 1}" in p.stderr.decode() and "row 1)" in p.stderr.decode(),
                  f"{name}: both rows not named: {p.stderr!r}")
    if harness:
        # merge reads its own schema only (a run's shards come from one program): the rows as it writes them
        with open(fixture, newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            r["schema_version"], r["attempt"] = mbcsv.SCHEMA, r.get("attempt") or "0"
        dup = os.path.join(tmp, "dup-now.csv")
        with open(dup, "w", newline="") as f:
            w = csv.DictWriter(f, list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows + rows)
        p = subprocess.run([harness, "merge", "--force", "-o", os.path.join(tmp, "merged.csv"), dup],
                           capture_output=True, text=True)
        check(p.returncode == 2 and "twice" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"merge of a CSV concatenated with itself: exit {p.returncode} {p.stderr!r}")


def rewrite(fixture, dst, edit, meta_edit=None):
    """The fixture's rows through edit(row dict) -> dst (+ sidecars, meta through meta_edit)."""
    with open(fixture, newline="") as f:
        rows = list(csv.DictReader(f))
        header = list(rows[0])
    for r in rows:
        edit(r)
    with open(dst, "w", newline="", encoding="utf-8", errors="surrogateescape") as f:
        w = csv.DictWriter(f, header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(mbdata.sidecar(fixture, ".meta.json")) as f:
        meta = json.load(f)
    if meta_edit:
        meta_edit(meta)
    with open(mbdata.sidecar(dst, ".meta.json"), "w") as f:
        json.dump(meta, f)
    if os.path.exists(mbdata.sidecar(fixture, ".rss.csv")):
        shutil.copyfile(mbdata.sidecar(fixture, ".rss.csv"), mbdata.sidecar(dst, ".rss.csv"))


def test_range(fixture, tmp):
    """A finite 1e308 in a row makes that row an error, not the file's (issue 29): the scripts read
    the rest and say why the row is out; nothing prints inf, nan or a traceback."""
    for v in ("1e308", "1.7e308", "-1e308", "1e-308"):
        dst = os.path.join(tmp, "big.csv")
        rewrite(fixture, dst, lambda r: r.update(throughput=v) if r["config"] == "jemalloc" else None)
        for name, args in (("summary.py", [dst]), ("compare.py", [dst]),
                           ("report.py", [dst, "-o", os.path.join(tmp, "big-report"), "--no-plots", "--force"])):
            p = script_here(name, *args)
            out = (p.stdout + p.stderr).decode()
            if name == "report.py" and p.returncode == 0:
                out += open(os.path.join(tmp, "big-report", "report.md")).read()
            check(p.returncode == 0 and "Traceback" not in out, f"{name} with throughput {v}: exit "
                  f"{p.returncode} {p.stderr[-300:]!r}")
            if name != "compare.py":  # compare reads the ok rows; summary and report name the rest
                check("outside the magnitude" in out and "jemalloc" in out,
                      f"{name} with throughput {v}: the row's error is named")
            bad = re.search(r"\b(inf|nan)\b|Traceback", out)
            check(not bad, f"{name} with throughput {v} prints "
                  f"{out[max(0, bad.start() - 60):bad.end() + 20]!r}" if bad else "")
    # at the edge of the range: everything printed is a number
    dst = os.path.join(tmp, "edge.csv")
    rewrite(fixture, dst, lambda r: r.update(throughput={"jemalloc": "1e100", "glibc": "1e-100", "tcmalloc": "0"}
                                             .get(r["config"], r["throughput"])))
    for name, args in (("summary.py", [dst]), ("summary.py", [dst, "--markdown"]), ("compare.py", [dst]),
                       ("report.py", [dst, "-o", os.path.join(tmp, "edge-report"), "--no-plots"])):
        p = script_here(name, *args)
        out = (p.stdout + p.stderr).decode()
        if name == "report.py" and p.returncode == 0:
            out += open(os.path.join(tmp, "edge-report", "report.md")).read()
        check(p.returncode == 0, f"{name} at the edge of the range: exit {p.returncode} {p.stderr[-300:]!r}")
        bad = re.search(r"\b(inf|nan)|Traceback", out)
        check(not bad, f"{name} at the edge of the range prints {out[max(0, bad.start() - 60):bad.end() + 20]!r}"
              if bad else "")


# ---- the property test --------------------------------------------------------------------

PIECES = [b"<script>alert(1)</script>", b"<img src=x onerror=alert(1)>", b"[a](javascript:alert(1))",
          b"![t](http://evil.example/t.png)", b"[a](z)[b](y/onerror=alert(1))", b"javascript:alert(1)",
          b"=cmd|' /C calc'!A0", b"+1+1", b"-2", b"@SUM(A1)", b'"', b"'", b",", b"\n", b"\r\n", b"\t", b"\x00",
          b"\x1b[31m", b"\x1b]0;title\x07", b"\xc2\x85", b"\xe2\x80\xae", b"\xc3\xa9", b"|", b"`", b"``",
          b"**b**", b"\\", b"&amp;", b"&lt;b&gt;", b"</td>", b"${x}", b"%s", b"\xff\xfe", b"\xed\xa0\x80",
          b"x" * 3000, b"a", b"glibc", b" ", b"#", b"- ", b"> ", b"\xef\xbb\xbf", b"<!--", b"-->", b"]]>", b"$",
          b"$\\frac{$"]


def hostile(rnd):
    """1 to 4 pieces; three times in four only those a CSV may hold (so that most cases go
    all the way through), else any (control bytes, ESC sequences, bytes that are not UTF-8)."""
    pieces = PIECES if rnd.random() < 0.25 else [p for p in PIECES if clean(p)]
    return b"".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 4)))


def text_of(b):
    return b.decode("utf-8", "surrogateescape")


def clean(b):
    """Bytes a CSV text column may hold: UTF-8 without control characters."""
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not re.search(r"[\x00-\x1f\x7f-\x9f]", t)


def shown(b):
    """The text as the pages and tables show it (cells are stripped)."""
    return mbdata.printable(b.decode("utf-8", "surrogateescape")).strip()


def stored_last(hist):
    return subprocess.run([PY, os.path.join(SCRIPTS, "history.py"), "latest", hist], capture_output=True,
                          text=True).stdout.strip()


def md_checks(what, md, wants):
    """A Markdown output rendered by the site's converter: no markup from the input, and each
    wanted text shown as it is."""
    page = parse_page(words.markdown_html(md), what)
    check(not page.problems, f"{what}: markup from the input: {page.problems[:3]}")
    text = "".join(page.text)
    for w in wants:
        check(w in text, f"{what}: {w[:60]!r} not shown as text")


def test_property(fixture, tmp, cases, node_site):
    rnd = random.Random(18)
    hist_made = 0
    counts = {"refused": 0, "shown": 0}
    for k in range(cases):
        label, unit, param, cmd = (hostile(rnd) for _ in range(4))
        if k == 0:  # issue 18's payload: a command in the params, so in the plots' titles (image alt text)
            # (with the converter before the fix this raised a dialog on SITE/report/report.html)
            param = cmd = b"echo '[a](z)[b](y/onerror=window.onerror=alert;throw/**/1//)'"
            label, unit = b"<img src=x onerror=alert(1)>$\\frac{$", b"[u](javascript:alert(1))"
            plots = [] if HAVE_PLOTS else ["--no-plots"]
        else:
            plots = ["--no-plots"]
        if text_of(label).strip() in ("", "glibc") or "jemalloc" in text_of(label):
            label = b"L" + label + b"L"
        d = os.path.join(tmp, f"case{k}")
        os.makedirs(d)
        dst = os.path.join(d, "run.csv")
        lt, ut, pt, ct = map(text_of, (label, unit, param, cmd))

        def edit(r):
            if r["config"] == "jemalloc":
                r["config"] = lt
            r["throughput_unit"] = ut
            if r["workload"] == "arena_churn":
                r["workload_params"] = "threads=2,note=" + pt

        def meta_edit(m):
            m["command"] = ["mallocbench", "run", "exec:cmd=" + ct]
            for c in m.get("configs", []):
                if c.get("config") == "jemalloc":
                    c["config"] = lt
            m["machine"]["cpu_model"] = ct
        rewrite(fixture, dst, edit, meta_edit)
        ok_csv = clean(label) and clean(unit) and clean(param)
        counts["shown" if ok_csv else "refused"] += 1
        what = f"case {k} (label {label[:40]!r}, unit {unit[:40]!r}, param {param[:40]!r})"
        outs = {}
        for name, args in (("summary.py", [dst]), ("summary.py", [dst, "--markdown"]), ("compare.py", [dst]),
                           ("compare.py", [dst, "--markdown"]),
                           ("report.py", [dst, "-o", os.path.join(d, "report")] + plots)):
            p = script(name, *args)
            tag = f"{what}: {name} {' '.join(args[1:2])}"
            if not ok_csv:
                refused(p, tag)
                continue
            err = p.stderr.decode("utf-8", "replace")
            check(p.returncode == 0 and "Traceback" not in err, f"{tag}: exit {p.returncode}: {err[-300:]!r}")
            try:
                out = p.stdout.decode("utf-8")
            except UnicodeDecodeError:
                check(False, f"{tag}: output is not UTF-8")
                continue
            check(not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", out), f"{tag}: a control character in the output")
            outs[(name, "--markdown" in args)] = out
        if not ok_csv:
            continue
        check(shown(label) in outs.get(("summary.py", False), ""), f"{what}: summary does not show the label")
        md_checks(f"{what}: summary --markdown", outs.get(("summary.py", True), ""), [shown(label), shown(unit)])
        md_checks(f"{what}: compare --markdown", outs.get(("compare.py", True), ""), [shown(label)])
        rmd = os.path.join(d, "report", "report.md")
        if os.path.exists(rmd):
            with open(rmd, encoding="utf-8") as f:
                md_checks(f"{what}: report.md", f.read(), [shown(label), mbdata.printable(ct).strip()])
        # a history of two nights of this run, through the detector and the site
        if hist_made >= 3:
            continue
        hist_made += 1
        hist = os.path.join(d, "history")
        for night in ("2026-11-01", "2026-11-02"):
            copy_run(dst, os.path.join(d, "n.csv"))
            p = script("history.py", "store", os.path.join(d, "n.csv"), hist, night)
            check(p.returncode == 0, f"{what}: history.py store: {p.stderr[-300:]!r}")
        site = node_site(k) if node_site else os.path.join(d, "site")
        p = script("detect.py", hist, "--out", site)
        check(p.returncode in (0, 3), f"{what}: detect.py exit {p.returncode}: {p.stderr[-300:]!r}")
        # as `make dashboard` does: the latest night's report inside the site, rendered in place
        p = script("report.py", stored_last(hist), "-o", os.path.join(site, "report"), *plots)
        check(p.returncode == 0, f"{what}: report.py into the site: exit {p.returncode}: {p.stderr[-300:]!r}")
        p = script("dashboard.py", os.path.join(site, "series.json"), site, "--report", os.path.join(site, "report"))
        check(p.returncode == 0, f"{what}: dashboard.py exit {p.returncode}: {p.stderr[-300:]!r}")
        if p.returncode == 0:
            check_site(site, [shown(label)])
    print(f"test_hostile: {cases} cases: {counts['shown']} shown as text ({hist_made} through a history and the "
          f"site), {counts['refused']} refused in one line")


def main():
    fixture = os.path.abspath(sys.argv[1])
    harness = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    # MB_HOSTILE_SITE=DIR: the property test's sites go to DIR/site-K (test_site.sh hostile opens them)
    keep = os.environ.get("MB_HOSTILE_SITE")
    tmp = tempfile.mkdtemp(prefix="mb-hostile-")
    try:
        for name, case in (("markdown", test_markdown), ("markdown_fuzz", test_markdown_fuzz),
                           ("site_report", lambda: test_site_report(os.path.dirname(fixture), tmp)),
                           ("nights", lambda: test_nights(fixture, tmp)),
                           ("duplicates", lambda: test_duplicates(fixture, tmp, harness)),
                           ("range", lambda: test_range(fixture, tmp)),
                           ("property", lambda: test_property(fixture, tmp, cases, (lambda k: os.path.join(
                               keep, f"site-{k}")) if keep else None))):
            before = len(FAILS)
            try:
                case()
            except Exception as e:  # a case that cannot run is that case failing, not the others
                check(False, f"{name}: {type(e).__name__}: {e}")
            print(f"test_hostile: {name}: {'ok' if len(FAILS) == before else 'FAIL'}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"test_hostile: {len(FAILS)} failures", file=sys.stderr)
        sys.exit(1)
    print("test_hostile: ok")


if __name__ == "__main__":
    main()
