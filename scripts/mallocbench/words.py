"""words.py - the middle layer's wording: every figure, unit, ratio, CI and verdict as text (a
value with its unit, a change and its CI, a verdict, the lines under a cell measured on several
machines), one way for every view, and the one Markdown to HTML renderer."""
import html
import math
import re

from . import mbdata
from . import stats

ESTIMATOR_TEXT = ("change: the Hodges-Lehmann estimate of the per-block ratio against the baseline, paired by "
                  "block, with its 95% CI from the exact Wilcoxon signed-rank test; 'unpaired': fewer than 2 "
                  "pairs, the ratio of the medians, no CI and no verdict")
VERDICT_TEXT = ("improved / regressed: the whole CI of the change lies beyond -+{floor} in the better / worse "
                "direction; improved? / regressed?: it excludes no change but reaches into that band (real, "
                "perhaps smaller than {floor}); negligible: it lies inside the band; within noise: it includes "
                "no change and reaches beyond the band; too few: at this n no difference could reach "
                "significance, whatever the data; trade-off: the workload's figure is a trade-off "
                "(its descriptor says so), not better or worse, and is shown with what it costs.")


def json_number(v):
    return None if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))) else v


def change_words(cell):
    """A pair's change as every view words it: the estimate ('0.871x'; 'unpaired' where fewer
    than 2 pairs) and its verdict ('0.871x regressed', '1.002x negligible'); where the run
    stopped the pair on this figure, when first ('settled at block 8: 7.95x improved')."""
    if cell is None or cell.change is None:
        return "-"
    text, _ = fmt_change(cell)
    if cell.change.method == stats.UNPAIRED:
        return f"{text} unpaired"
    said = f"{text} {cell.verdict}" if cell.verdict not in ("-", "") else text
    when = sequential_text(cell) if (cell.sequential or {}).get("controlled") else None
    return f"{when}: {said}" if when else said


# a run sized for a verdict (the sidecar's "sequential"): when a pair stopped, by why it stopped
SEQUENTIAL_WHEN = {"cap": "stopped at the cap, block {b}", "budget": "stopped by the budget at block {b}",
                   "interrupted": "interrupted at block {b}", "no ratio": "stopped at block {b} (no ratio)"}


def sequential_text(cell):
    """When a sequential cell's pair stopped: 'settled at block 8' (its verdict settled at that
    look), 'stopped at the cap, block 30', 'stopped by the budget at block 14', 'interrupted at
    block 5'; None for a cell of a fixed plan."""
    s = getattr(cell, "sequential", None)
    return stop_when(s) if s else None


def stop_when(stop):
    """When a stop ({"why", "blocks"}: the sidecar's, a cell's "sequential") came: the words
    sequential_text gives a cell, for what words a stop without one (tune's race)."""
    return SEQUENTIAL_WHEN.get(stop.get("why"), "settled at block {b}").format(b=stop["blocks"])


def not_controlled_text(cell):
    """What marks a figure of a stopped pair other than the one it stopped on (its CI is over
    the same blocks at 95%, not error-controlled for the stopping); None for any other cell."""
    s = getattr(cell, "sequential", None)
    if not s or s.get("controlled"):
        return None
    return f"not error-controlled: the run stopped on {mbdata.METRIC[s['figure']].name}"


def sequential_lines(cells):
    """The lines under compare's table for the cells of stopped pairs: each pair stopped on this
    figure, where it stopped and its CI at the look's level; the others, one line saying they
    are not error-controlled and over which blocks."""
    out = []
    for c in cells:
        s = c.sequential
        if s and s.get("controlled"):
            _, ci = fmt_change(c)
            out.append(f"{c.config} vs {c.baseline}, {c.workload}: {change_words(c)} [{ci}] at {pct(c.level)}, look "
                       f"{s['look']}'s level (blocks 0-{s['blocks'] - 1}); no fixed-n p")
    other = [c for c in cells if c.sequential and not c.sequential.get("controlled")]
    if other:
        out.append(f"{not_controlled_text(other[0])}: " + ", ".join(
            f"{c.config} vs {c.baseline} ({c.workload}) over blocks 0-{c.sequential['blocks'] - 1}" for c in other)
            + f", at {pct(other[0].level)}")
    return out


def sequential_note(cells, family="cell", scale=1.0):
    """The one line saying what a comparison prints instead of a p for the pairs a run stopped
    (cells: the controlled sequential cells; scale: the family's adjustment of alpha)."""
    spent = sorted({(c.sequential["blocks"], c.sequential["alpha"]) for c in cells})
    adj = {"primary": f", divided by the {round(1 / scale)} primary-metric cells (Bonferroni)",
           "bh": f", times Benjamini-Hochberg's R/m = {scale:.3g}"}.get(family, "") if scale != 1 else ""
    return ("sequential: each CI at its look's level (alpha spent " + ", ".join(f"{a:g} at block {b}" for b, a in spent)
            + f"{adj}; the looks together >= 95%), no fixed-n p: 'settled at block N' (or the cap, the budget, an "
            "interrupt) says where it stopped; the pair's other figures are over the same blocks at 95%, not "
            "error-controlled")



# ---- formatting -------------------------------------------------------------------------

def pct(level):
    return f"{level * 100:.4g}%"


_PREFIX = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def _unit_scale(v, unit):
    """(factor, unit text) to print values near v in unit readably: B/s as GB/s..., us as
    us/ms/s, s as us/ms/s, other rates with k/M/G."""
    a = abs(v) if v is not None and v == v else 0.0
    if unit == "fraction":  # a share (idle_release's): in percent, as the summary shows it
        return 100.0, "%"
    if unit.startswith("s/"):  # CPU time per unit of work: as s/ms/µs per it
        f, u = _unit_scale(v, "s")
        return f, u + unit[1:]
    if unit == "us":
        return (1e-6, "s") if a >= 1e6 else (1e-3, "ms") if a >= 1e3 else (1.0, "µs")
    if unit == "s":
        return (1.0, "s") if a >= 1 or a == 0 else (1e3, "ms") if a >= 1e-3 else (1e6, "µs")
    if unit in ("B/s", "B"):
        f, p = _prefixed(a)
        return f, p + unit
    if unit not in ("MiB", "") and a >= 1e4:
        f, p = _prefixed(a)
        return f, p + (" " + unit if not unit.startswith("/") else unit)
    return 1.0, unit


def _prefixed(a, floor=0.0):
    """(factor, SI prefix) of a magnitude a, the one prefix table's: (1e-9, 'G') for 1.5e9,
    (1e-3, 'k') for 12345; (1.0, '') below 10^3 or below floor."""
    if a >= floor:
        for f, p in _PREFIX:
            if a >= f:
                return 1 / f, p
    return 1.0, ""


def fmt(v, nd=3):
    """A number in nd significant digits, never in exponent form."""
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "-"
    if v == 0:
        return "0"
    digits = max(0, nd - 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{min(digits, 9)}f}"


def fmt_value(v, unit, like=None):
    """v in unit, scaled as `like` (default v itself) would be: '1.22 GB/s', '63.2 ms'."""
    f, u = _unit_scale(v if like is None else like, unit)
    if v is None:
        return "-"
    return f"{fmt(v * f)}{_sep(u)}{u}"


def axis_scale(unit, values):
    """(factor, unit text) of one axis of values in unit: the scale fmt_value gives its largest
    value, one prefix for every tick and label on it ('GB/s', 'k ops/s', 'ms'); values times
    factor are in the unit text."""
    top = max((abs(v) for v in values if v is not None and v == v), default=0.0)
    return _unit_scale(top, unit)


def fmt_count(v, trim=False):
    """A count, or a figure whose unit stands apart (a bar's label beside its axis's unit), as
    fmt_value writes a value: 3 significant digits, past 10^4 with k/M/G/T ('557 k faults' is
    '557 k', 1.1e6 is '1.10 M', 812, 8.50); trim: a tick's round number without trailing zeros
    ('20 k', '0.5')."""
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "-"
    f, p = _prefixed(abs(v), 1e4)
    text = fmt(v * f)
    if trim and "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {p}" if p else text


def _sep(u):
    """What stands between a number and its unit: nothing before '/run', '%' or no unit."""
    return "" if u.startswith("/") or u in ("", "%") else " "


def fmt_ci(ci, unit, like):
    if not ci:
        return "-"
    f, u = _unit_scale(like, unit)
    return f"{fmt(ci[0] * f)}..{fmt(ci[1] * f)}"


def ratio_text(x):
    """A ratio as every view writes it (tables, words, JSON's text, the fleet view)."""
    if x is not None and math.isinf(x):
        return ">1.8e308x"  # past the largest double (stats._exp): a size, never 'infx'
    return "-" if x is None else f"{mbdata.ratio_digits(x)}x"


def ci_text(lo, hi):
    """A ratio's CI as every table prints it."""
    return "-" if lo is None else mbdata.ratio_ci_digits(lo, hi)


def _diff_unit(like, unit):
    """(factor, unit text) of a difference in unit: the unit's own scale (ms/sample, /run), a
    share's in percentage points ('pp': 98% to 0% is -98.2 pp, never '-0.982'); a value with
    no unit in the registry says so ('(no unit)'), never a bare number beside a ratio."""
    f, u = _unit_scale(like, unit)
    return (f, "pp") if u == "%" else (f, u or "(no unit)")


def fmt_change(c):
    """(change, change CI) as every view writes them (the one place): a ratio '0.291x'; a
    difference (a change that is not a ratio: a side with a value <= 0) signed, '+' up and '-'
    down, in its metric's unit (mbdata.unit_of: '+5.00 ms/sample', '-98.2 pp' for a share); from
    a baseline of zero, '0→823/run'.  The CI is written in the same scale, without the unit."""
    ch = c.change
    if ch is None:
        return "-", "-"
    if ch.kind == "ratio":
        return ratio_text(ch.estimate), ci_text(ch.lo, ch.hi)
    like = max(abs(ch.estimate), abs(ch.median or 0), abs(ch.base_median or 0))
    f, u = _diff_unit(like, c.unit)

    def signed(v):
        return "-" if v is None else ("+" if v > 0 else "") + fmt(v * f)
    if ch.base_median == 0:
        text = f"0→{fmt(ch.median * f)}{_sep(u)}{u}"
    else:
        text = f"{signed(ch.estimate)}{_sep(u)}{u}"
    return text, "-" if ch.lo is None else f"{signed(ch.lo)}..{signed(ch.hi)}"


def change_unit(c):
    """The unit of a change's numbers in JSON (estimate, lo, hi): 'ratio', or for a
    difference its metric's unit (c.unit: 'fraction', 's/sample', '/run'); None without one."""
    ch = c.change
    if ch is None:
        return None
    return "ratio" if ch.kind == "ratio" else c.unit


def resolution_text(c):
    """The resolution a comparison reached (the smallest change its blocks could flag: its
    paired CI's half-width) as every line writes it: a ratio's as a share ('±9.6%'), a
    difference's in its unit as fmt_change writes it ('±0.05 pp', '±5.00 ms/sample'); None
    without a CI."""
    ch = c.change
    r = mbdata.resolution(ch)
    if r is not None:
        return f"±{r * 100:.1f}%"
    if ch is None or ch.kind != "diff" or ch.lo is None or ch.hi is None:
        return None
    half = (ch.hi - ch.lo) / 2
    like = max(abs(ch.estimate), abs(ch.median or 0), abs(ch.base_median or 0))
    f, u = _diff_unit(like, c.unit)
    return f"±{fmt(half * f)}{_sep(u)}{u}"


def quantity(name, unit):
    """A quantity with its unit as every view words it: 'faults per MiB', 'user CPU, s per run',
    'copy bandwidth, B/s'."""
    if unit == "fraction":
        return f"{name}, a share in %"
    if unit.startswith("/"):
        return f"{name} per {unit[1:]}"
    if "/" in unit and not unit.endswith("/s"):
        a, b = unit.split("/", 1)
        return f"{name}, {a} per {b}"
    return f"{name}, {unit or 'no unit'}"


def fmt_p(p):
    return "-" if p is None or math.isnan(p) else f"{p:.2g}" if p >= 0.001 else f"{p:.1e}"


def n_text(c):
    ch = c.change
    if ch is None:
        return f"{c.n}/{c.n_base}"
    if ch.paired:
        return f"{ch.n}" if ch.n == c.n == c.n_base else f"{ch.n} of {c.n}/{c.n_base}"
    return f"{ch.n}/{ch.n_base}"


# what tells machines apart (their sidecars' `machine`): (key, words, unit scale, unit)
MACHINE_FIGURES = (("fault_ns", "page-fault cost", 1e-3, "µs"), ("refault_ns", "re-fault cost", 1e-3, "µs"),
                   ("memcpy_bytes_per_s", "memcpy bandwidth", 1e-9, "GB/s"))
MACHINE_TRAITS = (("cpu_model", "CPU"), ("kernel", "kernel"), ("thp_enabled", "THP"), ("numa_nodes", "NUMA nodes"),
                  ("cgroup_memory_limit", "cgroup memory limit"), ("cores_online", "cores"))


def _trend(ests, vals):
    """+1 where a figure rises with the ratio on every machine, -1 where it falls on every
    one, 0 otherwise (ties included): a description of these machines, not a test."""
    by = [v for _, v in sorted(zip(ests, vals))]
    steps = [b - a for a, b in zip(by, by[1:])]
    return 1 if all(d > 0 for d in steps) else -1 if all(d < 0 for d in steps) else 0


def machine_differences(pl, descs):
    """What differs between a cell's pooled machines, from their descriptions: a calibrated
    figure (page-fault cost, memcpy bandwidth) with whether the ratio rises or falls with it
    across them (every machine in the same order: a description of these machines, not a
    test), and the traits (CPU, kernel, THP, ...) that are not the same on all.  '' when
    nothing is known."""
    ms = sorted(((m, ch) for m, ch in pl.machines if ch is not None), key=lambda x: -x[1].estimate)  # as the words
    return _differences([m for m, _ in ms], descs, [ch.estimate for _, ch in ms])


def fleet_differences(res):
    """What differs between all the machines a comparison's cells were measured on (the
    footer's and the JSON's): the same figures and traits as a cell's, without a trend.  ''
    for one machine, or when nothing known differs."""
    pls = [getattr(c.change, "fleet", None) for c in res if not c.is_base and c.change is not None]
    ms = sorted({m for pl in pls if pl is not None for m, _ in pl.machines})
    return _differences(ms, res.machine_desc) if len(ms) >= 2 else ""


def _differences(ms, descs, ests=None):
    parts = []
    for key, words, scale, unit in MACHINE_FIGURES:
        vals = [((descs.get(m) or {}).get("calibration") or {}).get(key) for m in ms]
        if len(ms) < 2 or any(not isinstance(v, (int, float)) for v in vals) or max(vals) < 1.2 * min(vals):
            continue
        t = _trend(ests, vals) if ests and len(ms) >= 3 else 0  # two machines are always in some order
        trend = " (the ratio rises with it)" if t > 0 else " (the ratio falls as it rises)" if t < 0 else ""
        parts.append(f"{words} " + ", ".join(f"{v * scale:.3g} {unit} on {m}" for m, v in zip(ms, vals)) + trend)
    loads = [((descs.get(m) or {}).get("calibration") or {}).get("load1") for m in ms]
    if parts and all(isinstance(v, (int, float)) for v in loads) and max(loads) - min(loads) > 0.5:
        # calibrate records its load: a figure measured busy is the machine's state, not the machine
        parts.append("calibrated at load " + ", ".join(f"{v:.2g} on {m}" for m, v in zip(ms, loads))
                     + " (a busy machine's figures are its state as much as the machine)")
    for key, words in MACHINE_TRAITS:
        vals = [(descs.get(m) or {}).get(key) for m in ms]
        if any(v is None for v in vals) or len(set(map(str, vals))) < 2:
            continue
        by = {}
        for m, v in zip(ms, vals):
            by.setdefault(str(v), []).append(m)
        parts.append(f"{words} " + "; ".join(f"{v} on {', '.join(who)}" for v, who in by.items()))
    return "; ".join(parts)


def first_lines(run, res):
    """What a reader must see before any table (summary, report, the end of `run`): the
    configurations with no ok sample, a machine that was not quiet, the disturbed samples, and
    the resolution each primary comparison reached (the smallest change it could flag: its
    paired CI's half-width) or why it reached none.  run: mbdata.Run; res: analyse() of its rows."""
    lines = [f"no ok sample: {x}" for x in mbdata.no_ok_sample(run)]
    for meta in run.metas:
        q = meta.get("quiet") if isinstance(meta, dict) else None
        if isinstance(q, dict) and q.get("quiet") is False:
            lines.append(f"the machine was not quiet when the run started: {mbdata.printable(str(q.get('why') or '?'))}"
                         " (figures are noisier; --require-quiet refuses to start)")
    marked = [r for r in run.ok if mbdata.disturbed(r)]
    if marked:
        by = {}
        for r in marked:
            by[r["workload"]] = by.get(r["workload"], 0) + 1
        tot = {}
        for r in run.ok:
            tot[r["workload"]] = tot.get(r["workload"], 0) + 1
        lines.append("disturbed samples: " + ", ".join(f"{w} {n}/{tot[w]}" for w, n in by.items())
                     + " (CPU waits, host steal, khugepaged or compaction during the sample; "
                     "compare --drop-disturbed leaves them out)")
    again = mbdata.mbcsv.remeasured(run.rows)  # the rows are each block's last attempt (mbcsv)
    if again:
        lines.append(f"{again} block{'s' if again != 1 else ''} re-measured (a sample disturbed from outside)")
    prim = [c for c in res if c.primary and not c.geomean and not c.is_base and c.change is not None]
    for key in dict.fromkeys((c.workload, c.params) for c in prim):
        cells = [c for c in prim if (c.workload, c.params) == key]
        parts, none = [], {}
        for c in cells:
            ch = c.change
            r = resolution_text(c)
            if r is not None:
                parts.append(f"{c.config} {r}")
                continue
            why = ("unpaired: fewer than 2 blocks" if ch.method == stats.UNPAIRED
                   else f"{ch.n} pairs; a 95% CI needs 6: add blocks")
            none.setdefault(why, []).append(c.config)
        for why, cfgs in none.items():
            parts.append(("none" if len(cfgs) == len(cells) else "none for " + ", ".join(cfgs)) + f" ({why})")
        lines.append(f"resolution reached, {mbdata.workload_title(*key)} vs {cells[0].baseline}: "
                     + ", ".join(parts))
    return lines


def fleet_words(pl):
    """The one wording of what machines say together (change.fleet's Pooled), in compare, its
    JSON and the dashboard: 'differs by machine: 1.800x on A, 1.100x on B' where Cochran's Q has
    p below alpha together with a spread beyond the floor (or an exact machine lies beyond the
    others), else 'consistent across machines', or why they cannot be judged."""
    if pl.missing:
        return pl.missing
    if pl.differs:
        each = sorted(((ch.estimate, m) for m, ch in pl.machines if ch is not None), reverse=True)
        return "differs by machine: " + ", ".join(f"{ratio_text(e)} on {m}" for e, m in each)
    if pl.k < 2:
        return f"{pl.k} machine(s) with a CI: too few to say whether machines agree"
    unjudged = [m for m in pl.left_out if pl.left_why.get(m) != stats.NO_SPREAD]  # an exact one was held to the CIs
    if unjudged:
        return f"consistent across the machines with a CI ({', '.join(unjudged)} not judged)"
    return "consistent across machines"


def fleet_lines(c, descs=None):
    """The lines under a cell measured on several machines: each machine's change, the pooled
    one with tau and I^2, the words, and what differs between the machines."""
    ch = c.change
    pl = getattr(ch, "fleet", None)
    if pl is None:
        return []
    each = ", ".join(f"{ratio_text(m_ch.estimate)} [{ci_text(m_ch.lo, m_ch.hi)}] on {m} ({m_ch.n} blocks)"
                     for m, m_ch in pl.machines)
    head = f"{mbdata.workload_title(c.workload, c.params)} {c.config} vs {c.baseline}"
    lines = [f"{head}, {c.metric}, on each machine: {each}"]
    if pl.estimate is not None:
        lines.append(f"  pooled over {pl.k} machines: {ratio_text(pl.estimate)} [{ci_text(pl.lo, pl.hi)}] "
                     f"(Hartung-Knapp {pct(pl.level)} CI); tau {pl.tau:.3f} [{pl.tau_ci[0]:.3f}..{pl.tau_ci[1]:.3f}], "
                     f"I² {pl.i2 * 100:.0f}% [{pl.i2_ci[0] * 100:.0f}..{pl.i2_ci[1] * 100:.0f}%]; "
                     f"Cochran's Q {pl.q:.3g}, p {fmt_p(pl.q_p)}")
    else:
        q = f"; Cochran's Q {pl.q:.3g}, p {fmt_p(pl.q_p)}" if pl.q is not None else ""
        why = pl.missing or f"{pl.k} machine(s) with a CI, {stats.POOL_MIN} needed"
        lines.append(f"  not pooled ({why}): the table gives the paired change over all their blocks, "
                     f"whose CI leaves out the machines' spread{q}")
    for why in dict.fromkeys(pl.left_why.values()):
        lines.append(f"  not pooled ({why}): {', '.join(m for m in pl.left_out if pl.left_why.get(m) == why)}")
    words = fleet_words(pl)
    diff = machine_differences(pl, descs or {}) if pl.differs else ""
    lines.append(f"  {words}" + (f"; they differ in {diff}" if diff else ""))
    return lines


# ---- Markdown to HTML: the one renderer (report --html, the dashboard's report page) ------
#
# The subset report.md uses: headings, lists, pipe tables, code spans and fences, **bold**, an
# image alone on its line, paragraphs.  One pass over each line: a token is a backslash escape,
# a code span or bold; everything else is text.  Every piece of text and every attribute is
# HTML-escaped as it is written out, last, so no input becomes markup.  The stricter of the two
# renderers it replaces wherever they differed: no link is made (its text shows as typed, as
# report.py had it), and an image only alone on its line (report.py) with a source that is
# relative and inside the page's tree (the dashboard's: no scheme, no / or //, no backslash or
# control character), so a page fetches nothing from outside; anything else is shown as text.

MD_TOKEN = re.compile(r"""
    \\(?P<esc>[!-/:-@\[-`{-~])
  | (?P<tick>`+)(?P<code>.+?)(?<!`)(?P=tick)(?!`)
  | \*\*(?P<strong>[^*]+)\*\*
""", re.X)
MD_IMAGE = re.compile(r"!\[(?P<alt>(?:\\.|[^\]\\])*)\]\((?P<src>[^()\s]+)\)\Z")  # a whole (stripped) line
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def html_text(s):
    """Text from the input as HTML text or an attribute: printable (mbdata.printable: no control
    or bidi-override character, which html.escape lets through), then escaped."""
    return html.escape(mbdata.printable("" if s is None else s), quote=True)


def safe_src(url):
    """url when an image may load it: relative and inside the page's tree, else None
    (javascript:, data:, http(s):, /x, //host, \\\\host, a control character)."""
    if "\\" in url or url.startswith("/") or _SCHEME.match(url) or any(
            ord(c) <= 0x20 or 0x7f <= ord(c) <= 0x9f for c in url):
        return None
    return url


def md_image(line):
    """The image a line of Markdown is, alone ((alt, src) as written), else None."""
    m = MD_IMAGE.match(line.strip())
    return (m.group("alt"), m.group("src")) if m else None


def _unescape_md(text):
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def md_inline(text):
    out, pos = [], 0
    for m in MD_TOKEN.finditer(text):
        out.append(html_text(text[pos:m.start()]))
        pos = m.end()
        if m.group("esc") is not None:
            out.append(html_text(m.group("esc")))
        elif m.group("tick") is not None:
            code = m.group("code")
            if len(code) > 2 and code[0] == code[-1] == " " and code.strip(" "):
                code = code[1:-1]
            out.append("<code>%s</code>" % html_text(code))
        else:
            out.append("<strong>%s</strong>" % md_inline(m.group("strong")))
    out.append(html_text(text[pos:]))
    return "".join(out)


def md_cells(line):
    """The cells of a pipe-table row; a backslash-escaped | stays in its cell."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    cells = re.findall(r"((?:\\.|[^|\\])*)(\||$)", body)
    return [c.strip() for c, _ in cells[:-1]]


def _md_block(lines, i, out):
    """Renders the table, list or fence that starts at lines[i] into out; the line after it."""
    if lines[i].startswith("```"):
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        out.append("<pre>%s</pre>" % "\n".join(html_text(x) for x in lines[i + 1:j]))
        return j + 1
    if lines[i].startswith("|"):
        rows = []
        while i < len(lines) and lines[i].startswith("|"):
            rows.append(md_cells(lines[i]))
            i += 1
        body = [r for r in rows[1:] if not all(re.fullmatch(r":?-+:?", c) for c in r)]
        out.append("<table><tr>%s</tr>%s</table>" % (
            "".join("<th>%s</th>" % md_inline(c) for c in rows[0]),
            "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % md_inline(c) for c in r) for r in body)))
        return i
    items = []
    while i < len(lines) and re.match(r"\s*[-*]\s+", lines[i]):
        items.append(re.sub(r"^\s*[-*]\s+", "", lines[i]))
        i += 1
    out.append("<ul>%s</ul>" % "".join("<li>%s</li>" % md_inline(x) for x in items))
    return i


def markdown_html(md):
    """The HTML body of Markdown in the subset above (the page around it is the caller's)."""
    out, para, lines, i = [], [], md.splitlines(), 0

    def flush():
        if para:
            out.append("<p>%s</p>" % md_inline(" ".join(para)))
            para.clear()
    while i < len(lines):
        ln = lines[i]
        m = re.match(r"(#{1,6})\s+(.*)", ln)
        img = md_image(ln)
        if ln.startswith(("```", "|")) or re.match(r"\s*[-*]\s+", ln):
            flush()
            i = _md_block(lines, i, out)
            continue
        if m:
            flush()
            out.append("<h%d>%s</h%d>" % (len(m.group(1)), md_inline(m.group(2)), len(m.group(1))))
        elif img and safe_src(img[1]):
            flush()
            out.append('<p><img src="%s" alt="%s"></p>' % (html_text(img[1]), html_text(_unescape_md(img[0]))))
        elif not ln.strip():
            flush()
        else:
            para.append(ln)
        i += 1
    flush()
    return "\n".join(out)


# ---- the unit every view pools over ----------------------------------------------------------

# what one machine is where a view pools over machines (the dashboard's fleet view, compare
# --fleet): a boot of a host (machines.mark_machines), so a reboot starts another machine and
# two identical hosts are two, never their hardware kind
MACHINE_UNIT = "one boot of a host, as compare names it"
# what a series follows night after night (the dashboard's series, the detector's): a machine
# kind, whose nights may come from a fresh boot of a fresh host each (an ephemeral runner)
KIND_UNIT = ("the machines of one hardware fingerprint (CPU, cores, memory, kernel major, THP mode), "
             "whichever boots of whichever hosts measured each night")


# ---- huge pages as a condition (docs/thp.md; the thp view) -----------------------------------

HUGE_CONDITION = {"never": "huge=never", "advise": "huge=advise", "system": "huge=system"}
# each figure of the condition as every view names it
HUGE_FIGURES = {
    "huge_share": "share of the anonymous memory in huge pages at its peak",
    "splits": "huge-page splits per sample (thp_pmd_splits + thp_page_splits)",
    "give_backs": "give-back calls",
    "khugepaged_collapses": "khugepaged collapses",
    "compactions": "compactions",
}
MACHINE_WIDE = ("machine-wide counts (/proc/vmstat): no per-process huge-fault or split counter exists, so any "
                "task on the machine adds to them")


def with_ci(cell):
    """A pair's change with its CI, as the one-pair views print it: change_words, then
    ' [lo..hi]' where it has one ('1.500x improved [1.48..1.52]')."""
    if cell is None or cell.change is None:
        return "–"
    _, ci = fmt_change(cell)
    return change_words(cell) + (f" [{ci}]" if ci != "-" else "")


def ratio_with_ci(cell):
    """A pair's change with its CI and no verdict (a cost or a count, not the figure judged):
    '0.00200x [0.00190..0.00210]', '+200/MiB [..]' for a difference."""
    if cell is None or cell.change is None:
        return "–"
    text, ci = fmt_change(cell)
    return text + (f" [{ci}]" if ci != "-" else "")


def from_to(a, b, unit=""):
    """A figure without and with the condition, each as fmt_value writes it in the scale of the
    larger: '256/MiB → 0.512/MiB', '100 MiB → 130 MiB'."""
    like = max(abs(a or 0), abs(b or 0))
    return f"{fmt_value(a, unit, like)} → {fmt_value(b, unit, like)}"


def huge_share_text(share, condition):
    """The huge-page share as every view words it: '0%' under huge=never; a configuration with
    huge pages asked for that got none, '0% (huge pages not given)', never 'on'; '<1%' for a
    share that rounds to 0 but is not; 'not measured'."""
    if share is None:
        return "not measured"
    if share == 0:
        return "0%" if condition == "never" else "0% (huge pages not given)"
    return "<1%" if share < 0.005 else f"{share * 100:.0f}%"
