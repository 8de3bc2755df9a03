"""dashboard.py - the nightly dashboard as a static site from the detector's
series.json (docs/dashboard.md): index.html (a grid per machine kind and metric,
the regressions list), one page per series under series/, the data in data.js
(`window.MB_DATA = ...`, since fetch() of JSON fails from file://), uPlot
copied from node_modules.  Opens from disk and from GitHub Pages; the page
fetches nothing.  Standard library only.

    dashboard.py SERIES_JSON SITE [--report REPORT_DIR] [--full-nights 120] [--max-weeks 104]

History is kept whole for the last --full-nights nights of each series;
older nights become one point per week (median of the nightly medians, the
envelope of their CIs), at most --max-weeks of them: about 220 points a
series after a year or more.  Changes, segments and alerts are always kept.
Missing nodes_modules/uplot: one line saying to run `npm ci`, exit 1.  Bad
input: one line, exit 2.  Files dashboard.py does not write (the detector's
alerts.csv) are left in SITE.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import re
import shutil
import stat
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the source tree: scripts/mallocbench/ is two below
STATIC = os.path.join(ROOT, "site")
from . import cli
from . import mbcsv  # standard library only: the family colours' fallback
from . import mbdata  # standard library only: what a NIGHT is
from . import mbout  # standard library only: how a file is written
from . import words  # standard library only: a value and Markdown as HTML

# latest.status -> (label, glyph): the glyph repeats the colour for those who cannot see it
STATUS = {
    "regression": ("regression", "\u25bc"), "improvement": ("improvement", "\u25b2"),
    "pending": ("pending", "?"), "environment": ("environment", "\u2699"),
    "machine": ("machine", "\u2301"), "missing": ("not counted", "\u2205"),
    "returning": ("returning to the level before", "\u21ba"), "recovered": ("recovered", "\u2713"),
    "weakened": ("weakened", "~"), "ok": ("ok", ""),
}
# metric display order: the registry's history metrics by key (a series' `metric`), the primary figure first
METRIC_ORDER = [m.key for m in mbdata.metrics("history")]
TABLE_NIGHTS = 30  # nights in a series page's table (the plots hold them all): keeps pages small
UPLOT = ("uPlot.iife.min.js", "uPlot.min.css")
# every page: scripts, styles and images from the site's own files only; inline style
# attributes for the family swatches (their colours are checked #RRGGBB); no inline script
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'none'")


class BadInput(Exception):
    pass


esc = words.html_text  # text from the input as HTML text or an attribute


def metric_key(m):
    """Sort key of a series' metric (a registry key): the registry's order, then any other by name."""
    return (METRIC_ORDER.index(m), "") if m in METRIC_ORDER else (len(METRIC_ORDER), m)


def family_colours(series):
    """{family: '#RRGGBB'}, one colour per allocator family on every page, as in the plots:
    the `colour` history.py carried from the runs' sidecars (the first series of the family
    that has one), else mbcsv's fixed fallback in order of first appearance (a series.json
    written before the sidecars carried colours)."""
    families, known = [], {}
    for s in series:
        fam = str(s.get("allocator") or "")
        if fam not in families:
            families.append(fam)
        if mbcsv.valid_colour(s.get("colour")):
            known.setdefault(fam, s["colour"])
    return mbcsv.assign_colours(families, known)


def slug(s):
    """A file name per series: readable (workload, config, metric, machine kind), unique through
    a hash of the id (which holds the params), safe on every file system."""
    base = "-".join(re.sub(r"[^A-Za-z0-9._]+", "_", s[k]).strip("_")[:32]
                    for k in ("workload", "config", "metric", "machine_kind"))
    return "%s-%s" % (base, hashlib.sha1(s["id"].encode()).hexdigest()[:8])


# ---------------------------------------------------------------- numbers

def value(v, unit=""):
    """v in unit as every view writes it (words.fmt_value: '1.50 GB/s', '12.3 k ops/s'); a
    missing value is the site's dash."""
    return "\u2013" if v is None else words.fmt_value(v, unit or "")


def pct(v):
    return "\u2013" if v is None else "%+.1f%%" % v


def num(v):
    """A finite float or None (NaN, inf, strings and bools are bad input elsewhere)."""
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def dump(o, ratio=False):
    """JSON with 4 significant digits for floats (the site's precision), NaN/inf as null.  A
    ratio to the baseline (a series' `ratio`, a fleet entry's ratios, pooled ratio and its CI)
    is written with the digits every view shows (mbdata.ratio_digits), so that the page
    (site/ratio.js) writes it as compare does: rounded twice, it could differ in the last."""
    if o is None or isinstance(o, bool):
        return json.dumps(o)
    if isinstance(o, int):
        return str(o)
    if isinstance(o, float):
        if not math.isfinite(o):
            return "null"
        if ratio:  # compare's digits, less trailing zeros (the page writes them back)
            t = mbdata.ratio_digits(o)
            return t.rstrip("0").rstrip(".") if "." in t and "e" not in t else t
        return "%.4g" % o
    if isinstance(o, str):
        return json.dumps(o, ensure_ascii=False).replace("</", "<\\/")
    if isinstance(o, dict):
        fleet = "pooled" in o
        return "{" + ",".join(json.dumps(str(k)) + ":" + dump(v, ratio or k == "ratio" or
                                                                (fleet and k in ("pooled", "lo", "hi")))
                              for k, v in o.items()) + "}"
    if isinstance(o, (list, tuple)):
        return "[" + ",".join(dump(v, ratio) for v in o) + "]"
    raise BadInput("unexpected value %r" % (o,))


# ---------------------------------------------------------------- input

ALIGNED = ("median", "lo", "hi", "n", "ratio")


def load(path):
    try:
        doc = mbcsv.read_json(path)  # a FIFO or a device refused, never waited on
    except mbcsv.CsvError as e:
        raise BadInput(str(e))
    except OSError as e:
        raise BadInput("cannot open '%s': %s" % (path, e.strerror))
    except (ValueError, UnicodeDecodeError) as e:
        raise BadInput("'%s' is not JSON: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("series"), list) or not isinstance(doc.get("machines"), dict):
        raise BadInput("'%s': not a series.json (needs 'machines' and 'series', docs/dashboard.md)" % path)
    old_kinds(doc)
    ids = set()
    for i, s in enumerate(doc["series"]):
        where = "'%s': series %d" % (path, i)
        if not isinstance(s, dict):
            raise BadInput(where + ": not an object")
        for k in ("id", "machine_kind", "workload", "config", "metric"):
            if not isinstance(s.get(k), str) or not s[k]:
                raise BadInput("%s: '%s' missing or not a string" % (where, k))
        if s["id"] in ids:
            raise BadInput("%s: duplicate id '%s'" % (where, s["id"]))
        ids.add(s["id"])
        nights = s.get("nights")
        if not isinstance(nights, list) or not all(isinstance(n, str) for n in nights):
            raise BadInput(where + ": 'nights' is not a list of dates")
        for n in nights:
            try:
                mbdata.parse_night(n)
            except ValueError as e:
                raise BadInput("%s: %s" % (where, e))
        for k in ALIGNED:
            v = s.get(k)
            if v is None and k in ("lo", "hi", "n", "ratio"):
                s[k] = [None] * len(nights)
                continue
            if not isinstance(v, list) or len(v) != len(nights):
                raise BadInput("%s: '%s' is not aligned with 'nights'" % (where, k))
            s[k] = [num(x) for x in v]
        for k in ("missing", "segments", "changes"):
            if not isinstance(s.get(k, []), list):
                raise BadInput("%s: '%s' is not a list" % (where, k))
            s.setdefault(k, [])
        if not isinstance(s.get("latest"), dict):
            s["latest"] = {"night": nights[-1] if nights else None, "status": "ok"}
        if s["latest"].get("status") not in STATUS:
            raise BadInput("%s: latest.status '%s' is not one of %s" % (where, s["latest"].get("status"), ", ".join(STATUS)))
    fleet = doc.get("fleet", [])
    if not isinstance(fleet, list):
        raise BadInput("'%s': 'fleet' is not a list" % path)
    for i, f in enumerate(fleet):
        where = "'%s': fleet entry %d" % (path, i)
        if not isinstance(f, dict) or not all(isinstance(f.get(k), str) and f[k] for k in ("id", "workload", "config")):
            raise BadInput(where + ": 'id', 'workload' or 'config' missing or not a string")
        nights, ms = f.get("nights"), f.get("machines")
        if not isinstance(nights, list) or not isinstance(ms, list) or not all(isinstance(m, str) for m in ms):
            raise BadInput(where + ": 'nights' or 'machines' is not a list")
        ratio = f.get("ratio")
        if not isinstance(ratio, dict) or set(ratio) != set(ms) or any(
                not isinstance(v, list) or len(v) != len(nights) for v in ratio.values()):
            raise BadInput(where + ": 'ratio' is not one list per machine aligned with 'nights'")
        f["ratio"] = {m: [num(x) for x in v] for m, v in ratio.items()}
        for k in ("pooled", "lo", "hi", "k", "words"):
            v = f.get(k)
            if not isinstance(v, list) or len(v) != len(nights):
                raise BadInput("%s: '%s' is not aligned with 'nights'" % (where, k))
            if k != "words":
                f[k] = [num(x) for x in v]
    doc["fleet"] = fleet
    return doc


def old_kinds(doc):
    """A series.json from before machine kinds (docs/dashboard.md): its series followed its
    `machine` and its `machines` described them; read them as the kinds they were."""
    if isinstance(doc.get("machine_kinds"), dict):
        return
    doc["machine_kinds"] = doc["machines"]
    alerts = doc.get("alerts") if isinstance(doc.get("alerts"), list) else []
    for x in doc["series"] + alerts:
        if isinstance(x, dict) and "machine_kind" not in x:
            x["machine_kind"] = x.get("machine")


# ---------------------------------------------------------------- down-sampling

def week_of(night):
    d = mbdata.parse_night(night)
    return d - datetime.timedelta(days=d.weekday())


def downsample(s, full, max_weeks):
    """Nights before the last `full` become weekly points (see the module comment)."""
    nights = s["nights"]
    if len(nights) <= full:
        return s
    cut = len(nights) - full
    buckets = {}
    for i in range(cut):
        buckets.setdefault(week_of(nights[i]), []).append(i)
    weeks = sorted(buckets)[-max_weeks:]
    out = {k: [] for k in ("nights",) + ALIGNED}
    for w in weeks:
        idx = buckets[w]

        def agg(k, how):
            vals = [s[k][i] for i in idx if s[k][i] is not None]
            return how(vals) if vals else None
        out["nights"].append(nights[idx[len(idx) // 2]])
        out["median"].append(agg("median", statistics.median))
        out["ratio"].append(agg("ratio", statistics.median))
        out["lo"].append(agg("lo", min))
        out["hi"].append(agg("hi", max))
        out["n"].append(agg("n", sum))
    for k in out:
        out[k] += s[k][cut:]
    t = dict(s)
    t.update(out)
    t["weekly_before"] = nights[cut]
    first = out["nights"][0]
    t["missing"] = [m for m in s["missing"] if isinstance(m, dict) and str(m.get("night", "")) >= first]
    return t


def unpublishable(path, folder):
    """Why the site may not copy a report's file (None: it may): only a regular file inside the
    report's folder, reached through no symbolic link, and readable by everyone already (the site
    publishes its copies 0644), is copied.  A link planted among a report's plots would otherwise
    publish its target: a root-only file, as 0644."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return e.strerror or str(e)
    root = os.path.realpath(folder)
    if stat.S_ISLNK(st.st_mode) or os.path.commonpath([os.path.realpath(path), root]) != root:
        return "a symbolic link, or reached through one"
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if not st.st_mode & stat.S_IROTH:
        return "not readable by everyone (the site would publish it)"
    return None


def copy_report(src, site):
    """REPORT_DIR/report.md and the local files it references -> SITE/compare/report.html
    (rendered in place when REPORT_DIR is inside SITE); None, with a warning, without one.
    Only files unpublishable() passes are read."""
    md_path = os.path.join(src, "report.md")
    try:
        why = unpublishable(md_path, src)
        if why:
            raise OSError(0, why)
        md = mbout.read_regular(md_path, follow=False).decode("utf-8")
    except (OSError, UnicodeDecodeError, mbout.NotRegular) as e:
        cli.warn("no compare report linked: cannot read '%s': %s" % (md_path, getattr(e, "strerror", e)))
        return None
    rel = os.path.relpath(os.path.realpath(src), os.path.realpath(site))
    if rel != "." and not rel.startswith(".."):
        up = "../" * (rel.count(os.sep) + 1)
        page("mallocbench compare report", '<p><a href="%sindex.html">&larr; overview</a> \u00b7 '
             '<a href="report.md">report.md</a></p>' % up + words.markdown_html(md), os.path.join(src, "report.html"), up)
        return rel.replace(os.sep, "/") + "/report.html"
    dst = os.path.join(site, "compare")
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    # the sources of the report's images (the lines words.markdown_html renders as images)
    refs = {img[1] for img in map(words.md_image, md.splitlines()) if img and words.safe_src(img[1])}
    missing = set()
    for ref in sorted(refs):
        if ref.startswith("#") or ".." in ref.split("/"):
            continue
        p = os.path.join(src, ref)
        why = unpublishable(p, src)
        if why is None:
            os.makedirs(os.path.dirname(os.path.join(dst, ref)), exist_ok=True)
            try:  # read by descriptor, no link followed: what was checked is what is copied
                mbout.write(in_site(os.path.join(dst, ref)), mbout.read_regular(p, follow=False), force=True)
            except (OSError, mbout.NotRegular) as e:
                cli.warn(f"{ref} of the report not published: {getattr(e, 'strerror', None) or e}")
                missing.add(ref)
        else:
            if os.path.lexists(p):
                cli.warn(f"{ref} of the report not published: {why}")
            missing.add(ref)

    def relink(line):
        img = words.md_image(line)
        return line.strip()[:-len(img[1]) - 1] + "#missing)" if img and img[1] in missing else line
    md = "\n".join(map(relink, md.splitlines()))
    put_copy(md_path, os.path.join(dst, "report.md"))
    page("mallocbench compare report", '<p><a href="../index.html">&larr; overview</a> \u00b7 '
         '<a href="report.md">report.md</a></p>' + words.markdown_html(md), os.path.join(dst, "report.html"), "../")
    return "compare/report.html"


# ---------------------------------------------------------------- pages

def page(title, body, path, up="", scripts=(), body_attr=""):
    head = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta http-equiv="Content-Security-Policy" content="%s">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>%s</title><link rel="icon" href="data:,">'
            '<link rel="stylesheet" href="%sassets/site.css">' % (esc(CSP), esc(title), up))
    if scripts:
        head += '<link rel="stylesheet" href="%sassets/uPlot.min.css">' % up
    tail = "".join('<script src="%s%s"></script>' % (up, s) for s in scripts)
    put(path, "%s</head>\n<body%s>\n%s\n%s\n</body></html>\n" % (head, body_attr, body, tail), force=True)


SPARK_NIGHTS = 60   # nights a sparkline spans
SPARK_W, SPARK_H = 96, 20


def sparkline(s):
    """An inline SVG of the series' last SPARK_NIGHTS night medians (gaps stay gaps), each
    recorded change night marked: drift visible on the overview without opening the series
    page.  Only scales the values to pixels; no figure is computed here."""
    vals = s["median"][-SPARK_NIGHTS:]
    nights = s["nights"][-SPARK_NIGHTS:]
    got = [v for v in vals if v is not None]
    if len(got) < 2:
        return ""
    lo, hi = min(got), max(got)
    span = (hi - lo) or abs(hi) or 1.0
    step = SPARK_W / max(len(vals) - 1, 1)

    def y(v):
        return SPARK_H - 2 - (v - lo) / span * (SPARK_H - 4)

    runs, cur = [], []
    for k, v in enumerate(vals):
        if v is None:
            if cur:
                runs.append(cur)
            cur = []
        else:
            cur.append((k * step, y(v)))
    if cur:
        runs.append(cur)
    lines = "".join('<polyline points="%s"/>' % " ".join("%.1f,%.1f" % xy for xy in r) for r in runs if len(r) > 1)
    dots = "".join('<circle cx="%.1f" cy="%.1f" r="1.2"/>' % r[0] for r in runs if len(r) == 1)
    marks = "".join('<line class="chg" x1="%.1f" x2="%.1f" y1="0" y2="%d"/>' % (nights.index(c["night"]) * step,
                                                                             nights.index(c["night"]) * step, SPARK_H)
                    for c in s["changes"] if isinstance(c, dict) and c.get("night") in nights)
    return ('<svg class="spark" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">%s%s%s</svg>' % (
        SPARK_W, SPARK_H, SPARK_W, SPARK_H, esc("last %d nights: %s to %s" % (len(vals), value(vals[0], s.get("unit") or ""),
                                                                              value(vals[-1], s.get("unit") or ""))),
        marks, lines, dots))


def status_text(a):
    """An alert's status as the overview and series pages print it: a weakened change with the
    figures that weakened it (the decision's own stay in their columns), an acknowledged one
    with its reason."""
    st = esc(a.get("status"))
    if a.get("status") == "weakened":
        p = num(a.get("p_now"))
        st += " (now %s, CI %s..%s, p %s)" % (pct(num(a.get("change_pct_now"))), pct(num(a.get("ci_lo_now"))),
                                              pct(num(a.get("ci_hi_now"))), "%.2g" % p if p is not None else "\u2013")
    if a.get("acknowledged"):
        st += "; acknowledged: " + esc(a.get("acknowledged"))
    return st


def cell_html(s, href):
    st = s["latest"].get("status", "ok")
    label, glyph = STATUS[st]
    ratio = next((r for r in reversed(s["ratio"]) if r is not None), None) if st != "missing" else None
    last = s["ratio"][-1] if s["ratio"] else None
    rtxt = (mbdata.ratio_digits(last) + "\u00d7") if last is not None else ("\u2205" if st == "missing" else "\u2013")
    why = ""
    if st == "missing":
        why = next((m.get("why", "") for m in s["missing"] if isinstance(m, dict) and m.get("night") == s["latest"].get("night")), "")
        rtxt = "not counted"
    chg = s["latest"].get("change_pct")
    alert = next((c.get("status") for c in reversed(s["changes"]) if isinstance(c, dict)), None) if st != "ok" else None
    title = "%s %s %s: %s%s; latest vs %s %s%s%s" % (
        s["workload"], s["config"], s["metric"], label, (" " + pct(chg)) if num(chg) is not None else "",
        s.get("baseline", "baseline"), (mbdata.ratio_digits(last) + "\u00d7") if last is not None else "n/a",
        (" (last value %s\u00d7)" % mbdata.ratio_digits(ratio)) if last is None and ratio is not None else "",
        ("; " + why) if why else "")
    lines = ['<span class="ratio">%s</span>' % esc(rtxt), sparkline(s)]
    if st not in ("ok", "missing"):
        lines.append('<span class="chg">%s %s</span>' % (glyph, esc(pct(chg) if num(chg) is not None else label)))
        lines.append('<span class="alert">%s</span>' % esc(alert if alert and alert != st else label))
    return '<a class="cell st-%s" href="%s" data-series="%s" title="%s">%s</a>' % (
        st, esc(href), esc(s["id"]), esc(title), "".join(lines))


def overview(doc, links, report, has_alerts):
    by_m = {}
    for s in doc["series"]:
        by_m.setdefault(s["machine_kind"], []).append(s)
    out = ['<header><h1>mallocbench nightly</h1><p class="meta">generated %s from <code>%s</code> \u00b7 %d series on %d machine kind%s' % (
        esc(doc.get("generated", "?")), esc(doc.get("history", "?")), len(doc["series"]), len(by_m), "" if len(by_m) == 1 else "s")]
    if report:
        out.append(' \u00b7 <a href="%s">latest compare report</a>' % esc(report))
    if has_alerts:
        out.append(' \u00b7 <a href="alerts.csv">alerts.csv</a>')
    out.append("</p></header>")
    out.append('<p class="legend">' + " ".join(
        '<span class="cell st-%s">%s %s</span>' % (k, g, esc(l)) for k, (l, g) in STATUS.items()) +
        ' \u2014 colour: the latest change against the series\u2019 own history; number: the latest ratio to the baseline configuration.</p>')
    out += regressions_html(doc, links)
    out += fleet_html(doc)
    for mi, (m, ss) in enumerate(sorted(by_m.items())):
        out += machine_html(mi, m, ss, doc)
    return "\n".join(out)


def regressions_html(doc, links):
    """The overview's regressions, largest first, each linked to its series' page."""
    out = []
    regs = [a for a in doc.get("alerts", []) if isinstance(a, dict) and a.get("direction") == "regression"]
    regs.sort(key=lambda a: (-abs(num(a.get("change_pct")) or 0), str(a.get("machine_kind")), str(a.get("workload")),
                             str(a.get("config")), str(a.get("metric")), str(a.get("night"))))
    out.append('<section id="regressions"><h2>Regressions (%d), largest first</h2>' % len(regs))
    if regs:
        out.append('<table class="list"><tr><th>change</th><th>95% CI</th><th>p</th><th>status</th><th>night</th>'
                   '<th>machine kind</th><th>workload</th><th>config</th><th>metric</th></tr>')
        for a in regs:
            key = tuple(str(a.get(k, "")) for k in ("machine_kind", "workload", "params", "config", "metric"))
            href = links.get(key)
            ci = "%s..%s" % (pct(num(a.get("ci_lo"))), pct(num(a.get("ci_hi"))))
            p = num(a.get("p"))
            what = esc(a.get("config"))
            if href:
                what = '<a href="%s">%s</a>' % (esc(href), what)
            out.append('<tr class="st-%s"><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td>'
                       '<td>%s</td><td>%s</td><td title="%s">%s</td><td>%s</td><td>%s</td></tr>' % (
                           esc(a.get("status")), pct(num(a.get("change_pct"))), ci, "%.2g" % p if p is not None else "\u2013",
                           status_text(a), esc(a.get("night")), esc(a.get("machine_kind")), esc(a.get("params")),
                           esc(a.get("workload")), what, esc(a.get("metric"))))
        out.append("</table>")
    else:
        out.append("<p>None detected.</p>")
    out.append("</section>")
    return out


def fleet_html(doc):
    """The overview's fleet table: each workload and configuration pooled over its machines."""
    if not doc.get("fleet"):
        return []
    out = []
    out.append('<section id="fleet"><h2>Across machines</h2><p class="meta">Each workload and configuration '
               'measured on several machines (a machine: %s): the '
               'latest night\u2019s ratio to the baseline pooled over them (random effects; a CI from '
               'three machines) and whether they agree.</p>'
               '<table class="list"><tr><th>workload</th><th>config</th><th>night</th><th>pooled</th>'
               '<th>95%% CI</th><th>machines</th><th>they say</th></tr>' % esc(words.MACHINE_UNIT))
    for f in doc["fleet"]:
        i = max((j for j, w in enumerate(f["words"]) if w), default=len(f["nights"]) - 1)
        p, lo, hi = f["pooled"][i] if f["pooled"] else None, f["lo"][i] if f["lo"] else None, f["hi"][i] if f["hi"] else None
        out.append('<tr><td title="%s">%s</td><td><a href="%s">%s</a></td><td>%s</td><td class="num">%s</td>'
                   '<td class="num">%s</td><td class="num">%d</td><td>%s</td></tr>' % (
                       esc(f.get("params", "")), esc(f["workload"]), esc(f["page"]), esc(f["config"]),
                       esc(f["nights"][i] if f["nights"] else "?"), mbdata.ratio_digits(p) + "\u00d7" if p is not None else "\u2013",
                       mbdata.ratio_ci_digits(lo, hi) if lo is not None and hi is not None else "\u2013",
                       len(f["machines"]), esc(f["words"][i] if f["words"] and f["words"][i] else "\u2013")))
    out.append("</table></section>")
    return out


def machine_html(mi, m, ss, doc):
    """The overview's section of one machine kind (what its series follow across nights): its
    fingerprint, how many machines measured its nights, its notes, a tab per metric."""
    out = []
    info = doc["machine_kinds"].get(m, {}) if isinstance(doc["machine_kinds"].get(m), dict) else {}
    fp = info.get("fingerprint", {}) if isinstance(info.get("fingerprint"), dict) else {}
    nights = info.get("nights") or sorted({n for s in ss for n in s["nights"]})
    by = info.get("machines") if isinstance(info.get("machines"), dict) else {}
    boots = {str(x) for v in by.values() if isinstance(v, list) for x in v}
    out.append('<section class="machine" id="m-%d"><h2>machine kind %s</h2><p class="meta">%s \u00b7 %d nights, %s \u2026 %s%s</p>' % (
        mi, esc(m), esc(", ".join("%s %s" % (k, v) for k, v in fp.items())), len(nights),
        esc(nights[0] if nights else "?"), esc(nights[-1] if nights else "?"),
        " \u00b7 measured by %d machine%s (a machine: %s); a series follows %s" % (
            len(boots), "" if len(boots) == 1 else "s", esc(words.MACHINE_UNIT), esc(words.KIND_UNIT)) if boots else ""))
    env = [e for e in info.get("environment", []) if isinstance(e, dict)]
    if env:
        out.append('<p class="env">\u2699 Environment changes: %s</p>' % "; ".join(
            "%s %s" % (esc(e.get("night")), esc(e.get("what"))) for e in env))
    miss = [e for e in info.get("missing_counters", []) if isinstance(e, dict)]
    if miss:
        out.append('<div class="note"><strong>Counters not counted</strong> (those nights are gaps in the plots, never 0):<ul>%s</ul></div>' % "".join(
            "<li>%s: %s</li>" % (esc(e.get("night")), esc(e.get("what"))) for e in miss))
    metrics = sorted({s["metric"] for s in ss}, key=metric_key)
    out.append('<div class="tabs" role="tablist">' + "".join(
        '<button type="button" data-tab="m-%d-%d"%s>%s</button>' % (mi, k, ' class="on"' if k == 0 else "", esc(x))
        for k, x in enumerate(metrics)) + "</div>")
    for k, metric in enumerate(metrics):
        ms = [s for s in ss if s["metric"] == metric]
        configs = []
        for s in sorted(ms, key=lambda s: s.get("baseline") != s["config"]):
            if s["config"] not in configs:
                configs.append(s["config"])
        col = {s["config"]: s["colour"] for s in ms}
        rows = sorted({(s["workload"], s.get("params", "")) for s in ms})
        one = ms[0]
        better = sorted({str(s.get("better", "?")) for s in ms})
        hint = "%s is better" % better[0] if len(better) == 1 else "better: see each row"
        figure = {(s["workload"], s.get("params", "")): "%s, %s" % (s.get("figure") or metric, s.get("unit") or "no unit")
                  for s in ms}
        out.append('<div class="tab" id="m-%d-%d"><h3>%s <small>(%s; ratio to %s)</small></h3><table class="grid"><tr><th>workload</th>%s</tr>' % (
            mi, k, esc(metric), esc(hint), esc(one.get("baseline", "baseline")), "".join(
                '<th><span class="sw" style="background:%s"></span>%s</th>' % (col[c], esc(c)) for c in configs)))
        cells = {(s["workload"], s.get("params", ""), s["config"]): s for s in ms}
        for wl, params in rows:
            out.append('<tr><th title="%s">%s<br><small>%s<br>%s</small></th>' % (
                esc(params), esc(wl), esc(figure[(wl, params)]), esc(params[:40] + ("\u2026" if len(params) > 40 else ""))))
            for c in configs:
                s = cells.get((wl, params, c))
                out.append("<td>%s</td>" % (cell_html(s, s["page"]) if s else '<span class="none">\u00b7</span>'))
            out.append("</tr>")
        out.append("</table></div>")
    out.append("</section>")
    return out


def fleet_page(f, report):
    """One workload and configuration across machines: a line per machine (its nightly ratio to
    the baseline) and the pooled ratio with its CI as a band (site/fleet.js), then the table."""
    h = ['<p><a href="../index.html">&larr; overview</a>%s</p>' % (' \u00b7 <a href="../%s">latest compare report</a>' % esc(report) if report else "")]
    h.append("<h1>%s \u00b7 %s \u00b7 across machines</h1>" % (esc(f["workload"]), esc(f["config"])))
    h.append('<p class="meta">params <code>%s</code> \u00b7 %s, %s is better \u00b7 ratio to %s on each machine '
             '(a machine: %s), and pooled over them (random effects, Paule-Mandel \u03c4\u00b2, Hartung-Knapp 95%% CI from 3 machines)</p>' % (
                 esc(f.get("params", "")), esc(f.get("figure") or "throughput"), esc(f.get("better") or "?"),
                 esc(f.get("baseline") or "the baseline"), esc(words.MACHINE_UNIT)))
    h.append('<div id="plot-fleet" class="plot"></div>')
    h.append('<noscript><p class="note">The plot needs JavaScript; the table below does not.</p></noscript>')
    h.append('<h2>The last %d nights, newest first</h2><table class="list nights"><tr><th>night</th>%s<th>pooled</th>'
             '<th>95%% CI</th><th>they say</th></tr>' % (min(TABLE_NIGHTS, len(f["nights"])), "".join(
                 "<th>%s</th>" % esc(m) for m in f["machines"])))
    for i in range(len(f["nights"]) - 1, max(len(f["nights"]) - TABLE_NIGHTS, 0) - 1, -1):
        lo, hi = f["lo"][i], f["hi"][i]
        h.append("<tr><td>%s</td>%s<td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td></tr>" % (
            esc(f["nights"][i]), "".join('<td class="num">%s</td>' % (mbdata.ratio_digits(f["ratio"][m][i]) + "\u00d7" if f["ratio"][m][i] is not None
                                                                      else "\u2013") for m in f["machines"]),
            mbdata.ratio_digits(f["pooled"][i]) + "\u00d7" if f["pooled"][i] is not None else "\u2013",
            mbdata.ratio_ci_digits(lo, hi) if lo is not None and hi is not None else "\u2013",
            esc(f["words"][i] or "\u2013")))
    h.append("</table>")
    return "\n".join(h)


def series_page(s, doc, report):
    fam = s.get("allocator", "")
    unit = s.get("unit") or ""
    h = ['<p><a href="../index.html">&larr; overview</a>%s</p>' % (' \u00b7 <a href="../%s">latest compare report</a>' % esc(report) if report else "")]
    h.append('<h1><span class="sw" style="background:%s"></span>%s \u00b7 %s \u00b7 %s</h1>' % (s["colour"], esc(s["workload"]), esc(s["config"]), esc(s["metric"])))
    st = s["latest"].get("status", "ok")
    h.append('<p class="meta">machine kind <code>%s</code> \u00b7 params <code>%s</code> \u00b7 allocator %s \u00b7 %s (%s), %s is better \u00b7 baseline %s \u00b7 latest: <span class="cell st-%s">%s %s</span></p>' % (
        esc(s["machine_kind"]), esc(s.get("params", "")), esc(fam or "?"), esc(s.get("figure") or s["metric"]), esc(unit or "no unit"),
        esc(s.get("better", "?")), esc(s.get("baseline", "?")), st, STATUS[st][1], esc(STATUS[st][0])))
    if s.get("weekly_before"):
        h.append('<p class="note">Nights before %s are shown as weekly points (median of the nightly medians; band: the envelope of their CIs).</p>' % esc(s["weekly_before"]))
    h.append('<div id="plot-abs" class="plot"></div><div id="plot-ratio" class="plot"></div>')
    h.append('<noscript><p class="note">The plots need JavaScript; the tables below do not.</p></noscript>')
    # changes
    h.append("<h2>Change points</h2>")
    if s["changes"]:
        h.append('<table class="list"><tr><th>night</th><th>direction</th><th>change</th><th>95% CI</th><th>p</th><th>status</th></tr>')
        for c in s["changes"]:
            p = num(c.get("p"))
            h.append('<tr class="st-%s"><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s..%s</td><td class="num">%s</td><td>%s</td></tr>' % (
                esc(c.get("direction")), esc(c.get("night")), esc(c.get("direction")), pct(num(c.get("change_pct"))),
                pct(num(c.get("ci_lo"))), pct(num(c.get("ci_hi"))), "%.2g" % p if p is not None else "\u2013", status_text(c)))
        h.append("</table>")
    else:
        h.append("<p>None.</p>")
    info = doc["machine_kinds"].get(s["machine_kind"], {})
    env = [e for e in (info.get("environment", []) if isinstance(info, dict) else []) if isinstance(e, dict)]
    if env:
        h.append("<h2>Environment changes of this machine kind</h2><ul>%s</ul>" % "".join(
            "<li>%s: %s</li>" % (esc(e.get("night")), esc(e.get("what"))) for e in env))
    if s["missing"]:
        h.append('<h2>Nights without a value</h2><ul class="note">%s</ul>' % "".join(
            "<li>%s: %s</li>" % (esc(m.get("night")), esc(m.get("why"))) for m in s["missing"] if isinstance(m, dict)))
    # absolute values beside ratios, newest first
    why = {m.get("night"): m.get("why", "") for m in s["missing"] if isinstance(m, dict)}
    chg = {c.get("night"): c for c in s["changes"] if isinstance(c, dict)}
    envn = {e.get("night"): e.get("what") for e in env}
    last = len(s["nights"]) - TABLE_NIGHTS
    h.append('<h2>The last %d nights, newest first</h2>%s<table class="list nights"><tr><th>night</th><th>median</th><th>95%% CI</th><th>n</th><th>vs %s</th><th>note</th></tr>' % (
        min(TABLE_NIGHTS, len(s["nights"])), '<p class="meta">Older nights: hover the plots.</p>' if last > 0 else "", esc(s.get("baseline", "baseline"))))
    for i in range(len(s["nights"]) - 1, max(last, 0) - 1, -1):
        nt = s["nights"][i]
        note = []
        if nt in chg:
            note.append("change %s (p=%s, %s)" % (pct(num(chg[nt].get("change_pct"))), chg[nt].get("p"), chg[nt].get("status")))
        if nt in envn:
            note.append("\u2699 " + str(envn[nt]))
        if s["median"][i] is None:
            note.append(why.get(nt) or "no value")
        lo, hi, n, r = s["lo"][i], s["hi"][i], s["n"][i], s["ratio"][i]
        h.append('<tr><td>%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td></tr>' % (
            esc(nt), esc(value(s["median"][i], unit)), esc("%s..%s" % (value(lo, unit), value(hi, unit)) if lo is not None and hi is not None else "\u2013"),
            "%d" % n if n is not None else "\u2013", mbdata.ratio_digits(r) + "\u00d7" if r is not None else "\u2013", esc("; ".join(note))))
    h.append("</table>")
    return "\n".join(h)


# What a dashboard folder holds: dashboard.py's pages, assets and copies, the detector's files
# and the night's report folder (`make dashboard`).  series/ and compare/ are emptied and
# written again, so a folder holding anything else is refused unless --force.
SITE_OWN = {"index.html", "data.js", ".nojekyll", "assets", "series", "fleet", "compare"}
SITE_SHARED = {"alerts.csv", "series.json", "report", mbout.MANIFEST}


def in_site(path):
    """A file of the site is written in it: never through a link planted there."""
    if os.path.islink(path):
        raise BadInput("cannot write '%s': it is a symbolic link (a site's files are written in it); remove it" % path)
    return path


def put(path, data, force=True):
    mbout.write(in_site(path), data, force=force)


def put_copy(src, dst):
    mbout.copy(src, in_site(dst), force=True)


def check_site(site, force):
    if os.path.exists(site) and not os.path.isdir(site):
        raise BadInput("cannot write into '%s': it is not a directory" % site)
    if force or not os.path.isdir(site):
        return
    others = sorted(set(os.listdir(site)) - SITE_OWN - SITE_SHARED)
    if others:
        raise BadInput("cannot write into '%s': it holds files dashboard.py did not write (%s); name another folder "
                       "or add --force" % (site, ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")))


def build(args):
    doc = load(args.series_json)
    uplot_dir = os.path.join(args.node_modules, "uplot", "dist")
    if not all(os.path.isfile(os.path.join(uplot_dir, f)) for f in UPLOT):
        raise cli.Fail("uPlot not found in '%s': run `npm ci` in %s" % (uplot_dir, ROOT), 1)
    site = args.site
    check_site(site, args.force)
    os.makedirs(os.path.join(site, "assets"), exist_ok=True)
    for f in UPLOT:
        put_copy(os.path.join(uplot_dir, f), os.path.join(site, "assets", f))
    for f in ("site.css", "ratio.js", "series.js", "overview.js", "fleet.js"):
        put_copy(os.path.join(STATIC, f), os.path.join(site, "assets", f))
    report = None
    if args.report:
        report = copy_report(args.report, site)
    elif isinstance(doc.get("report"), str) and os.path.isfile(os.path.join(site, doc["report"])):
        r = doc["report"]
        report = r[:-3] + ".html" if r.endswith(".md") and os.path.isfile(os.path.join(site, r[:-3] + ".html")) else r
    doc["report"] = report
    doc["series"] = [downsample(s, args.full_nights, args.max_weeks) for s in doc["series"]]
    for f in doc["fleet"]:  # the fleet view: the nights kept whole only
        keep = slice(-args.full_nights, None)
        f.update({k: f[k][keep] for k in ("nights", "pooled", "lo", "hi", "k", "words")},
                 ratio={m: v[keep] for m, v in f["ratio"].items()})
    colours = family_colours(doc["series"])
    for s in doc["series"]:
        s["page"] = "series/%s.html" % slug(s)
        s["colour"] = colours[str(s.get("allocator") or "")]
    for f in doc["fleet"]:
        f["page"] = "fleet/%s.html" % slug(dict(f, metric="throughput", machine_kind="fleet"))
    put(os.path.join(site, "data.js"), "window.MB_DATA = " + dump(doc) + ";\n", force=True)
    sdir = os.path.join(site, "series")
    shutil.rmtree(sdir, ignore_errors=True)
    os.makedirs(sdir)
    fdir = os.path.join(site, "fleet")
    shutil.rmtree(fdir, ignore_errors=True)
    if doc["fleet"]:
        os.makedirs(fdir)
    for f in doc["fleet"]:
        page("%s %s across machines \u2014 mallocbench" % (f["workload"], f["config"]), fleet_page(f, report),
             os.path.join(site, f["page"]), "../", ("data.js", "assets/uPlot.iife.min.js", "assets/ratio.js", "assets/fleet.js"),
             ' data-fleet="%s"' % esc(f["id"]))
    links = {}
    for s in doc["series"]:
        links[(s["machine_kind"], s["workload"], s.get("params", ""), s["config"], s["metric"])] = s["page"]
        page("%s %s %s \u2014 mallocbench" % (s["workload"], s["config"], s["metric"]), series_page(s, doc, report),
             os.path.join(site, s["page"]), "../", ("data.js", "assets/uPlot.iife.min.js", "assets/ratio.js", "assets/series.js"),
             ' data-series="%s"' % esc(s["id"]))
    page("mallocbench nightly", overview(doc, links, report, os.path.isfile(os.path.join(site, "alerts.csv"))),
         os.path.join(site, "index.html"), "", ("data.js", "assets/overview.js"))
    put(os.path.join(site, ".nojekyll"), "", force=True)  # GitHub Pages: serve the files as they are
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(site) for f in fs)
    print("dashboard.py: %d series, %d pages, %.2f MB in %s" % (len(doc["series"]), len(doc["series"]) + len(doc["fleet"]) + 1,
                                                                total / 1e6, site))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("series_json", help="the detector's series.json (docs/dashboard.md)")
    ap.add_argument("site", help="output folder (created; alerts.csv and other files there are kept)")
    ap.add_argument("--report", metavar="DIR", help="the latest night's `make compare` folder (report.md and its plots)")
    ap.add_argument("--full-nights", type=int, default=120, help="nights kept whole per series (default 120)")
    ap.add_argument("--max-weeks", type=int, default=104, help="weekly points kept before them (default 104)")
    ap.add_argument("--node-modules", default=os.path.join(ROOT, "node_modules"), help=argparse.SUPPRESS)
    ap.add_argument("--force", action="store_true", help="write into a folder holding other files (they are kept)")
    args = ap.parse_args()
    if args.full_nights < 1 or args.max_weeks < 0:
        raise cli.Fail("--full-nights must be >= 1 and --max-weeks >= 0", 2)
    try:
        build(args)
    except (BadInput, mbout.OutputError) as e:
        raise cli.Fail(str(e), 2)
    except OSError as e:
        raise cli.Fail("cannot write '%s': %s" % (e.filename or args.site, e.strerror), 1)


if __name__ == "__main__":
    sys.exit(cli.run(main))
