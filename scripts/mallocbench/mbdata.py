"""mbdata.py - the one data layer of the scripts: a run as load(paths) -> Run (rows read and
checked by mbcsv, the .meta.json and .rss.csv sidecars, configurations with family and
tunables from the allocator / requested_tunables columns, workloads with the presentation
traits their descriptors export through the sidecar, and the rows grouped), and the one
registry of derived metrics (METRICS: key, name, unit, better, kind, function).  Scripts
render; every figure computed from columns, every parse of workload_params and every
sidecar path is here (tests/unit/test_structure.py holds them to it).
"""
import csv
import datetime
import io
import json
import os
import re
import sys
import unicodedata
from collections import namedtuple

from . import mbcsv
from .disturb import (DISTURB_STEAL, DISTURB_WAIT, disturbed, huge_pages_on, resolution,  # noqa: F401
                      steal_share, variance_explained, wait_share)  # what disturbed a sample from outside
from .machines import machine_descriptions, mark_machines  # noqa: F401  (a machine: one boot of a host)

num = mbcsv.num
sidecar = mbcsv.sidecar  # <name>.meta.json / <name>.rss.csv beside <name>.csv
MiB = 1024 * 1024
PAGE = 4096

# ---- workload_params ------------------------------------------------------------------------

# A text parameter (WLP_TEXT in workloads/workload.h) whose value runs to the end of the text:
# the exec workload writes its command last, and a command may hold commas.
RUNS_TO_END = ("cmd",)
_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")


def parse_params(text):
    """'a=1,b=x/y' -> [('a', '1'), ('b', 'x/y')], in order, as the harness writes them: a
    part that is not NAME=... continues the value before it (a comma inside a value), and
    the value of a RUNS_TO_END parameter is the rest of the text, commas and '=' included."""
    out = []
    rest = text or ""
    while rest:
        part, comma, after = rest.partition(",")
        k, eq, v = part.partition("=")
        if eq and _NAME.match(k) and not (out and out[-1][0] in RUNS_TO_END):
            if k in RUNS_TO_END:
                out.append((k, v + comma + after))
                break
            out.append((k, v))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + "," + part)
        rest = after
    return out


def setting_name(text):
    """The tunable a setting 'NAME=VALUE' (as -t and diagnose write it) sets: 'NAME'."""
    return text.partition("=")[0]


def format_params(pairs):
    """The inverse of parse_params: [('a', '1')] -> 'a=1'."""
    return ",".join(f"{k}={v}" for k, v in pairs)


def param_of(params, name):
    """The value of one parameter of a workload_params text, None when it has none."""
    return dict(parse_params(params)).get(name)


def distinguishing(params, others):
    """The (name, value) pairs of a workload_params text that some of `others` (texts of the
    same workload) do not share: what tells its group apart (size=16M)."""
    theirs = [dict(parse_params(o)) for o in others]
    return [(k, v) for k, v in parse_params(params) if any(o.get(k) != v for o in theirs)]


def params_without(params, name):
    """workload_params text without one parameter: what the points of a curve over it share."""
    return format_params([(k, v) for k, v in parse_params(params) if k != name])


def ratio_digits(x, large=1):
    """A ratio's digits as every view writes them (compare's tables and words, the reports,
    the dashboard's pages and data.js, site/ratio.js): 3 decimals under 10, `large` from 10,
    3 significant digits under 0.01 (a ratio of 5.2e-05 is not 0.000); the branch is chosen
    on the rounded value, so 9.9996 is 10.0, never 10.000."""
    if 0 < x < 0.01:
        t = f"{x:.3g}"
        if float(t) < 0.01:
            return t
    t = f"{x:.3f}"
    return t if float(t) < 10 else f"{x:.{large}f}"


def ratio_ci_digits(lo, hi):
    """A ratio's CI as every view writes it: both ends as ratio_digits, or with 2 decimals where
    the CI reaches 10 (an end under 0.01 keeps its 3 significant digits)."""
    if float(ratio_digits(hi)) < 10:
        return f"{ratio_digits(lo)}..{ratio_digits(hi)}"
    return f"{lo:.2f}..{hi:.2f}" if lo >= 0.01 else f"{ratio_digits(lo)}..{hi:.2f}"


def params_shown(params):
    """workload_params as a table heading shows it: without `better` (the heading says which
    direction is better for its own table) and without empty parameters (exec's metric=,unit=)."""
    pairs = parse_params(params)
    keep = [(k, v) for k, v in pairs if k != "better" and v != ""]
    return format_params(keep) if len(keep) < len(pairs) else params


# what the harness writes as the figure's name when the command printed it (exec --metric)
PRINTED_FIGURE = "the figure the command printed (metric=REGEX)"


def figure_name(row):
    """The primary figure's name as every view heads it: the workload's own (the row's
    `metric`); for a figure the command printed (exec --metric), the unit the user gave
    (`--unit req/s`: 'req/s'), else 'the figure the command printed', never its regex."""
    name = (row or {}).get("metric") or ""
    if name == PRINTED_FIGURE:
        return row.get("throughput_unit") or "the figure the command printed"
    return name


def workload_title(workload, params):
    """A workload's heading in every view: 'NAME (PARAMS)' (params_shown); a command's (exec)
    is the program and its arguments once, 'exec: python3 prog.py', without its regex,
    unit or direction (the column and the quantity say those)."""
    if workload == "exec":
        cmd = param_of(params, "cmd")
        if cmd:
            return f"exec: {cmd}"
    shown = params_shown(params)
    return f"{workload} ({shown})" if shown else workload


def parse_metrics(text):
    """workload_metrics / alloc_stats 'a=1;b=2' -> {'a': '1', 'b': '2'}."""
    out = {}
    for part in text.split(";") if text else []:
        k, eq, v = part.partition("=")
        if eq:
            out[k] = v
    return out


SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text):
    """A single fixed size ('256K', '16M', '1048576') in bytes; None for lists, ranges, files."""
    t = text.strip()
    suffix = t[-1:] if t[-1:].isalpha() else ""
    digits = t[:-1] if suffix else t
    if suffix.upper() not in SIZE_UNITS or not digits.isdigit():
        return None
    return int(digits) * SIZE_UNITS[suffix.upper()]


def size_key(v):
    """A size text as a number to sort by ('4M' after '256K'); inf for what is not one size."""
    unit = v[-1] if v and v[-1] in SIZE_UNITS else ""
    try:
        return float(v[:-1] if unit else v) * SIZE_UNITS[unit]
    except ValueError:
        return float("inf")


def format_size(nbytes):
    """Bytes as the harness prints sizes: 256K, 16M, 1G."""
    for suffix in ("T", "G", "M", "K"):
        scale = SIZE_UNITS[suffix]
        if nbytes and nbytes % scale == 0:
            return f"{nbytes // scale}{suffix}"
    return f"{int(nbytes)}"


def counter_notes(text):
    """{counter: why} from a row's counter_notes ('madvise: not counted: ...; brk: ...')."""
    out = {}
    for part in (text or "").split("; "):
        name, sep, why = part.partition(": ")
        if sep and name and not why.startswith("scaled"):
            out[name.strip()] = why.strip()
    return out


# ---- text from the input, shown as text ------------------------------------------------------
# Labels, units, commands and parameters may hold anything the user typed: mbcsv refuses a
# control character in a CSV's text columns; what else reaches the output goes through these.

# what may change how a terminal or a page shows the rest: C0, DEL, C1, a lone surrogate, and
# beyond Latin-1 the Unicode categories that are not text (format: bidi overrides and isolates,
# zero-width characters; line and paragraph separators; unassigned and private-use code points)
_CONTROL = re.compile(r"[^\x20-\x7e\xa0-\xac\xae-\xff]")
_NOT_TEXT = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
_MD_SPECIAL = re.compile(r"[\\`*|>&]|<(?=[A-Za-z/!?])|\](?=\()|!(?=\[)")
_MD_ALT = re.compile(r"[\\`*|>&\[\]]|<(?=[A-Za-z/!?])|!(?=\[)")


def _escape(m):
    c = m.group(0)
    o = ord(c)
    if o >= 0x100 and unicodedata.category(c) not in _NOT_TEXT:
        return c
    return ("\\x%02x" if o < 0x100 else "\\u%04x" if o < 0x10000 else "\\U%08x") % o


def printable(text):
    """text from someone else (a CSV's or sidecar's text, a watched process's name or
    environment) as it may reach a terminal or a page: every control character (C0, DEL, C1:
    newlines, ESC sequences) as \\xNN, and a character that is not text (a bidi override such
    as U+202E, a zero-width or other format character, a line separator, a lone surrogate from
    an undecodable byte) as \\uNNNN.  Every view passes such text through here (or md_text)."""
    return _CONTROL.sub(_escape, str(text))


def md_text(text):
    """text for a Markdown line or table cell that renders as exactly that text: control
    characters as \\xNN, and a backslash escape before what could start markup (\\ ` * | > &,
    a < that could open a tag, the ]( of a link, the ![ of an image)."""
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), printable(text))


def md_alt(text):
    """text as an image's alt text in Markdown: md_text with every [ and ] escaped too."""
    return _MD_ALT.sub(lambda m: "\\" + m.group(0), printable(text))


def md_code(text):
    """text as a Markdown code span: fenced by one backtick more than its longest run."""
    t = printable(text)
    run = max((len(r) for r in re.findall(r"`+", t)), default=0)
    fence = "`" * (run + 1)
    pad = " " if t.startswith("`") or t.endswith("`") else ""
    return f"{fence}{pad}{t}{pad}{fence}"


# ---- nights ---------------------------------------------------------------------------------

_NIGHT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z", re.ASCII)
NIGHT_AHEAD = 1  # days after today (UTC) a night may name: tomorrow, for a clock a little ahead


def parse_night(text):
    """A NIGHT (HISTORY/<machine>/<NIGHT>.csv) as a datetime.date: YYYY-MM-DD in ASCII digits,
    nothing before or after, a real calendar date.  ValueError naming the text otherwise:
    2026-13-45 and 9999-99-99 would sort after every real night and stay the latest forever."""
    if not isinstance(text, str) or not _NIGHT.match(text):
        raise ValueError(f"night {text!r}: not YYYY-MM-DD")
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"night {text!r}: not a calendar date") from None


def night_in_future(text, today=None):
    """True when a valid NIGHT is later than tomorrow (UTC): a night that has not happened."""
    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    return parse_night(text) > today + datetime.timedelta(days=NIGHT_AHEAD)


def night_of_file(name):
    """The NIGHT of a history file name 'NIGHT.csv', None for a file that is not a night's CSV
    (a sidecar, another file).  ValueError for a name shaped like a night that is not one."""
    if not name.endswith(".csv") or name.endswith(".rss.csv"):
        return None
    stem = name[:-4]
    if not re.match(r"\d{4}-\d{2}-\d{2}", stem) and not _NIGHT.match(stem):
        return None
    parse_night(stem)
    return stem


# ---- the metric registry -------------------------------------------------------------------

def _col(c):
    return lambda r: num(r, c)


def fixed_work(r):
    """A row whose figure counts whole runs of a command (throughput_unit runs/s): each run does
    the same work, so its counts are per run; per second they would only mirror its speed."""
    return r.get("throughput_unit") == "runs/s"


def _singular(word):
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def work(r):
    """(amount, unit): the work one sample's measured region did, in the unit its CPU time,
    faults and calls are counted per (one unit for every view):
      MiB      where the workload declares the bytes it touches (region_bytes);
      run      a command's runs (runs/s: each run does the same work);
      UNIT     where the figure is a rate, UNIT/s (a program's own --metric, ops/s, requests/s),
               the figure times the region's wall time: per unit of the figure, so a program that
               runs for a set time is not charged for doing more work in it; only where the
               figure and the counts share one window (same_window), else per run;
      sample   otherwise (a share such as idle_release's): the sample's one measured region.
    amount None when the row lacks what it needs."""
    b = num(r, "region_bytes")
    if b:
        return b / MiB, "MiB"
    unit = r.get("throughput_unit") or ""
    if unit == "runs/s" or (unit.endswith("/s") and not same_window(r)):
        return 1.0, "run"
    if unit.endswith("/s") and len(unit) > 2:
        t, wall = num(r, "throughput"), num(r, "region_wall_s")
        amount = t * wall if t and wall else None
        if unit == "B/s":  # bytes by their rate: MiB as where they are declared
            return (amount / MiB if amount else None), "MiB"
        return amount, _singular(unit[:-2])
    return 1.0, "sample"


def same_window(r):
    """Do the figure and the counts cover one window?  A built-in workload times and counts its
    own region, a server's figure is its client's run, which the counts cover; a command's
    printed rate is timed by the program over a window of its own, which the counts cover only
    where it marked that region (workload_metrics region=marked).  Otherwise the counts are the
    whole process's (start-up, imports) and the rate times the whole wall time is no count of
    its units: they are per run.  A command's row from before region= was written: marked
    where its region is shorter than the whole process."""
    if r.get("workload") != "exec":
        return True
    region = parse_metrics(r.get("workload_metrics") or "").get("region")
    if region:
        return region == "marked"
    reg, whole = num(r, "region_wall_s"), num(r, "total_wall_s")
    return reg is not None and whole is not None and reg < whole


def work_unit(rows):
    """The unit of work of a workload's rows (work()): the first row that has one."""
    for r in rows:
        return work(r)[1]
    return "sample"


def per_work(c):
    """Column c per unit of work (work()); None where either is not measured."""
    def f(r):
        v, (w, _) = num(r, c), work(r)
        return v / w if v is not None and w else None
    return f


def duration_bound(by_config):
    """Why a fixed-work figure (runs/s) cannot tell these configurations apart, or None:
    {config: [rows]} of one workload.  Duration-bound (a command that runs for a set time,
    `sleep 1`): every configuration's median wall time within 1% of the others while its CPU
    time or faults differ by more than 5%, or CPU under a tenth of the wall time everywhere."""
    import statistics

    def med(rows, fn):
        v = [x for x in map(fn, rows) if x is not None]
        return statistics.median(v) if v else None
    if len(by_config) < 2 or not all(rows and fixed_work(rows[0]) for rows in by_config.values()):
        return None
    wall = [med(rows, lambda r: num(r, "region_wall_s")) for rows in by_config.values()]
    cpu = [med(rows, region_cpu_s) for rows in by_config.values()]
    faults = [med(rows, lambda r: num(r, "region_minor_faults")) for rows in by_config.values()]
    if any(w is None or w <= 0 for w in wall):
        return None

    def spread(v):
        v = [x for x in v if x is not None]
        return max(v) / min(v) - 1 if v and min(v) > 0 else (0.0 if v and max(v) == 0 else float("inf"))
    if all(c is not None and c < 0.1 * w for c, w in zip(cpu, wall)):
        return (f"CPU time is under a tenth of the wall time under every configuration (at most "
                f"{max(c / w for c, w in zip(cpu, wall)) * 100:.0f}%): the command mostly waits")
    if spread(wall) <= 0.01 and (spread(cpu) > 0.05 or spread(faults) > 0.05):
        return (f"every configuration's wall time is within {spread(wall) * 100:.1f}% of the others while "
                f"CPU time or faults differ: the command runs for a set time")
    return None


def faults_per_mib(r):
    """Minor faults in the measured region per MiB touched (256: every 4 KiB page again)."""
    f, b = num(r, "region_minor_faults"), num(r, "region_bytes")
    return f / (b / MiB) if f is not None and b else None


def column(c):
    """A row's column c as a number (None where empty): the per-row function the views take
    medians of."""
    return lambda r: num(r, c)


def median_of(rows, fn):
    """The median of fn over rows, None where no row has a value: every view's median of a cell."""
    vals = sorted(v for v in map(fn, rows) if v is not None)
    if not vals:
        return None
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def peak_rss_mib(r):
    """The peak RSS of the process started (sampled from its statm)."""
    v = num(r, "rss_peak_kib")
    return v / 1024 if v is not None else None


def tree_pss_mib(r):
    """Commands and servers: the peak of the whole process tree's summed PSS (the memory of a
    shell and the python it runs, a server and its forks); None for workloads."""
    v = num(r, "tree_pss_peak_kib")
    return v / 1024 if v is not None else None


def peak_memory_mib(r):
    """The memory of what a sample ran, at its peak: the process tree's PSS where it was read
    (commands and servers), else the process's RSS (a workload: one process)."""
    v = tree_pss_mib(r)
    return v if v is not None else peak_rss_mib(r)


def peak_memory_name(rows):
    """The wording of peak_memory_mib over rows: one name per view."""
    return "peak PSS of the process tree" if any(num(r, "tree_pss_peak_kib") is not None for r in rows) \
        else "peak RSS"


SYS_SHARE_MIN_CPU = 0.2  # s of CPU in the region: user and sys are clock-tick times (10 ms steps)


def sys_share(r):
    """System time as a share of the measured region's CPU time (0..1); None where the region
    used under SYS_SHARE_MIN_CPU of CPU by its precise task clock: user and sys are counted in
    clock ticks, so a 10 ms region reads 0% or 100%."""
    u, s = num(r, "region_user_s"), num(r, "region_sys_s")
    if u is None or s is None or u + s <= 0:
        return None
    cpu = num(r, "region_task_clock_s")
    if (cpu if cpu is not None else u + s) < SYS_SHARE_MIN_CPU:
        return None
    return s / (u + s)


def region_cpu_s(r):
    """user + sys of the measured region, a missing part counted as 0."""
    return (num(r, "region_user_s") or 0) + (num(r, "region_sys_s") or 0)


def kept_kib(r):
    """RSS at the end of the measured region: rss_final_kib, else the workload's own rss_end_kib."""
    v = num(r, "rss_final_kib")
    if v is not None:
        return v
    try:
        return mbcsv.parse_number(parse_metrics(r["workload_metrics"]).get("rss_end_kib") or "")
    except ValueError:
        return None


def sum_measured(a, b):
    """a + b, None when either is not measured."""
    return a + b if a is not None and b is not None else None


def cpu_seconds(r, traits=()):
    """CPU user+sys of the measured region; for a workload whose region is an idle period
    (trait idle_region), the whole process's, so that purging on free counts."""
    if "idle_region" in traits:
        return sum_measured(num(r, "total_user_s"), num(r, "total_sys_s"))
    return sum_measured(num(r, "region_user_s"), num(r, "region_sys_s"))


def cpu_per_work(r):
    """The CPU a job costs per unit of work (metric "cpu"): cpu_seconds (user + sys of the
    measured region; the whole process's for a workload whose region is an idle period: the
    row's _traits, from its sidecar) over work(); None where either is not measured."""
    v, (w, _) = cpu_seconds(r, r.get("_traits") or ()), work(r)
    return v / w if v is not None and w else None


# the primary figure a run's sidecar names (top-level "figure"; --figure of run, exec, serve; tune's
# --objective word): {sidecar word: registry key}; no "figure" (an older sidecar) is throughput
FIGURES = {"throughput": "throughput", "cpu": "cpu"}


def primary_key(rows):
    """The registry key of the primary figure of rows (one workload's, or one run's): the one
    place that decides it, from each row's sidecar (load: _figure); throughput unless every
    row's sidecar names another."""
    keys = {r.get("_figure") or "throughput" for r in rows}
    return keys.pop() if len(keys) == 1 else "throughput"


def sequential_stops(rows):
    """{(workload, params, config, baseline): stop} of the rows' sidecars' "sequential" records
    (docs/output.md): where each comparison of a run sized for a verdict stopped, each stop a
    dict with look, blocks, n, alpha, why, estimate, lo, hi; {} for a fixed plan."""
    out, seen = {}, set()
    for r in rows:
        seq = r.get("_sequential")
        if not isinstance(seq, dict) or id(seq) in seen:
            continue
        seen.add(id(seq))
        fig = FIGURES.get(seq.get("figure") or "throughput", "throughput")
        for s in seq.get("stops") or []:
            if isinstance(s, dict) and isinstance(s.get("blocks"), int) and isinstance(s.get("alpha"), (int, float)):
                key = tuple(str(s.get(k, "")) for k in ("workload", "params", "config", "baseline"))
                out[key] = dict(s, figure=fig)
    return out


def annotate(rows, meta):
    """What a row's sidecar says that the views read per row: _traits (its workload's), _figure
    (the primary figure's registry key, FIGURES) and _sequential (the stops, sequential_stops)."""
    meta = meta or {}
    traits = {w.name: w.traits for w in sidecar_workloads(meta)}
    fig = FIGURES.get(meta.get("figure") or "throughput", "throughput")
    seq = meta.get("sequential") if isinstance(meta.get("sequential"), dict) else None
    for r in rows:
        if traits.get(r.get("workload")):
            r["_traits"] = traits[r["workload"]]
        if fig != "throughput":
            r["_figure"] = fig
        if seq is not None:
            r["_sequential"] = seq


# key: stable name (history's series, --metric of detect); name: as tables print it (None: the
# row's own `metric`); unit (None: throughput_unit); better (None: metric_better); kind (timing:
# floor max(3%, A/A noise); count/size: the series' own spread); fn: value of a row; counter: the
# counter whose note in counter_notes says why a value is missing; views: the tables it is in.
Metric = namedtuple("Metric", "key name unit better kind fn counter views")
# unit PER_WORK: "<unit>/<work unit>" of each workload's rows (work()): s/MiB, /run, /request
PER_WORK = "per work"
METRICS = [
    Metric("throughput", "throughput", None, None, "timing", _col("throughput"), None, ("compare", "history")),
    # the CPU a job costs (user + sys) per unit of work: the median of each sample's sum, one estimator
    Metric("cpu", "CPU", ("s", PER_WORK), "lower", "timing", cpu_per_work, None, ("compare", "history")),
    Metric("user_cpu", "user CPU", ("s", PER_WORK), "lower", "timing", per_work("region_user_s"), None,
           ("compare", "history")),
    Metric("sys_cpu", "sys CPU", ("s", PER_WORK), "lower", "timing", per_work("region_sys_s"), None,
           ("compare", "history")),
    # per unit of work: a few faults more or less over gigabytes is noise, not a change
    Metric("faults", "faults", ("", PER_WORK), "lower", "size", per_work("region_minor_faults"), "minor_faults",
           ("compare", "history")),
    Metric("madvise", "madvise calls", ("", PER_WORK), "lower", "count", per_work("region_madvise_calls"),
           "madvise", ("compare", "history")),
    Metric("munmap", "munmap calls", ("", PER_WORK), "lower", "count", per_work("region_munmap_calls"),
           "munmap", ("compare", "history")),
    Metric("brk", "brk calls", ("", PER_WORK), "lower", "count", per_work("region_brk_calls"), "brk",
           ("compare", "history")),
    Metric("peak_rss", "peak RSS", "MiB", "lower", "size", peak_rss_mib, None, ("compare", "history")),
    Metric("tree_pss", "peak PSS of the process tree", "MiB", "lower", "size", tree_pss_mib, None,
           ("compare", "history")),
    Metric("latency_p50", "latency p50", "us", "lower", "timing", _col("latency_p50_us"), None, ("compare",)),
    Metric("latency_p99", "latency p99", "us", "lower", "timing", _col("latency_p99_us"), None, ("compare",)),
    Metric("latency_p999", "latency p99.9", "us", "lower", "timing", _col("latency_p999_us"), None, ("compare",)),
    Metric("sys_share", "sys%", "ratio", "lower", "timing", sys_share, None, ()),
    # counts per run (frameworks.py): a program's work is fixed, so its faults per run compare
    Metric("region_faults", "region faults", "faults", "lower", "count", _col("region_minor_faults"), "minor_faults",
           ()),
    Metric("total_faults", "faults, whole process", "faults", "lower", "count", _col("total_minor_faults"),
           "minor_faults", ()),
]
METRIC = {m.key: m for m in METRICS}


def metrics(view):
    """The registry's metrics of one table ('compare', 'history'), in registry order."""
    return [m for m in METRICS if view in m.views]


def metric_fn(key):
    return METRIC[key].fn


def unit_of(metric, rows):
    """The unit a metric's values have on one workload's rows: its own, the workload's
    throughput_unit (None), or per its unit of work (PER_WORK: 's/MiB', '/run')."""
    u = metric.unit
    if u is None:
        return next((r.get("throughput_unit") for r in rows if r.get("throughput_unit")), "")
    if isinstance(u, tuple):
        return f"{u[0]}/{work_unit(rows)}"
    return u


# ---- configurations and workloads ---------------------------------------------------------

Config = namedtuple("Config", "name family tunables lib_path")
Config.__doc__ = """A configuration: its label, allocator family (the `allocator` column), the
tunables asked for (`requested_tunables`, canonical name=value;...) and the library preloaded."""


def config_of(r):
    return Config(r["config"], r.get("allocator") or "", r.get("requested_tunables") or "", r.get("lib_path") or "")


def setting_text(cfg):
    """What sets a configuration apart from its family's defaults: the tunables asked for,
    the library (lib=NAME) when a label names one, or 'defaults'."""
    parts = []
    if cfg.lib_path and cfg.name.partition("[")[0] != cfg.family:
        parts.append("lib=" + os.path.basename(cfg.lib_path))
    if cfg.tunables:
        parts.append(cfg.tunables)
    return " ".join(parts) if parts else "defaults"


Workload = namedtuple("Workload", "name metric lower_is_better traits")


def sidecar_workloads(meta):
    """[Workload] of a sidecar's `workloads` list (the registry's table order; traits such as
    idle_region and size_curve); [] for a sidecar without one (an older run)."""
    out = []
    for w in (meta or {}).get("workloads") or []:
        if isinstance(w, dict) and isinstance(w.get("name"), str):
            traits = w.get("traits") if isinstance(w.get("traits"), list) else []
            out.append(Workload(w["name"], w.get("metric") or "", bool(w.get("lower_is_better")),
                                frozenset(t for t in traits if isinstance(t, str))))
    return out


def workloads_with_trait(paths, trait):
    """The workloads the sidecars of these CSVs give TRAIT (Run.with_trait without reading the
    rows again)."""
    out = set()
    for p in paths:
        for w in sidecar_workloads(read_meta(p) or {}):
            if trait in w.traits:
                out.add(w.name)
    return out


read_meta = mbcsv.read_meta  # the one sidecar reader: None where there is none, CsvError for a bad one


def read_rss(path, into):
    """The .rss.csv beside a run CSV into {(run_id, sample): [(t_s, rss_kib)]}; nothing when
    it is missing or unreadable (the figures then have no timeline)."""
    try:
        data = mbcsv.read_bytes(sidecar(path, ".rss.csv")).decode("utf-8", "replace")  # CsvError: a FIFO
        with io.StringIO(data, newline="") as f:
            for s in csv.DictReader(f):
                try:
                    t, kib = mbcsv.parse_number(s.get("t_s") or ""), mbcsv.parse_number(s.get("rss_kib") or "")
                except ValueError:
                    continue
                if t is not None and kib is not None:
                    into.setdefault((s.get("run_id", ""), s.get("sample", "")), []).append((t, kib))
    except (OSError, csv.Error, KeyError):
        pass


class Run:
    """One or more run CSVs read together.

    rows: every row; ok / bad: those with status ok / not; metas: the readable sidecars;
    rss: {(run_id, sample): [(t_s, rss_kib)]} sorted by time; configs: {label: Config} in the
    run's order (config_order: the sidecars' `configs`, then first appearance); families: in
    that order; workloads: {name: Workload} from the sidecars, in the registry's order;
    groups: {(workload, workload_params): {config: [ok rows]}} in first-seen order."""

    def __init__(self, paths, rows, metas, rss):
        self.paths, self.rows, self.metas, self.rss = list(paths), rows, metas, rss
        self.ok = [r for r in rows if r["status"] == "ok"]
        self.bad = [r for r in rows if r["status"] != "ok"]
        self.config_order = mbcsv.config_order(self.paths, rows)
        seen = {}
        for r in rows:
            seen.setdefault(r["config"], config_of(r))
        self.configs = {c: seen[c] for c in self.config_order if c in seen}
        self.families = mbcsv.family_order(self.paths, rows)
        self.workloads = {}
        for meta in metas:
            for w in sidecar_workloads(meta):
                self.workloads.setdefault(w.name, w)
        self.groups = group(self.ok)
        self.machines = mark_machines(rows, metas)  # {label: description}; every row's _machine

    def to_pandas(self):
        """Every row as a pandas DataFrame, one row per sample: the schema's number columns as
        floats (NaN where not measured), the text columns as text, and the sample's unit of
        work (work(): work, work_unit) beside them.  ImportError naming the Debian package
        where pandas is missing."""
        try:
            import pandas
        except ImportError:
            raise ImportError("pandas is missing: apt-get install python3-pandas (and run Debian's "
                              "/usr/bin/python3)") from None
        numbers = set(mbcsv.NUMBERS)
        cols = [c for c, _ in mbcsv.COLUMNS]
        data = {}
        for c in cols:
            if c in numbers:
                data[c] = [num(r, c) for r in self.rows]
            else:
                data[c] = [r.get(c, "") for r in self.rows]
        data["work"] = [work(r)[0] for r in self.rows]
        data["work_unit"] = [work(r)[1] for r in self.rows]
        return pandas.DataFrame(data, columns=cols + ["work", "work_unit"]).astype(
            {c: "float64" for c in cols if c in numbers} | {"work": "float64"})

    def traits(self, workload):
        """The presentation traits of a workload, from the sidecar; none when it gives none."""
        w = self.workloads.get(workload)
        return w.traits if w else frozenset()

    def with_trait(self, trait):
        return [w for w, d in self.workloads.items() if trait in d.traits]

    def workload_rank(self, workload):
        """Sort key: the registry's order where a sidecar gives it, then by name."""
        order = list(self.workloads)
        return (order.index(workload) if workload in order else len(order), workload)

    def config_rank(self, config):
        """Sort key: the run's configuration order, then the label."""
        return (self.config_order.index(config) if config in self.config_order else len(self.config_order), config)

    def family_default(self, config):
        """The label of the configuration that runs config's family with its defaults (no
        tunables asked for, the same library), None when the run has none or it is config."""
        cfg = self.configs.get(config)
        if not cfg or not cfg.tunables:
            return None
        for c in self.configs.values():
            if c.family == cfg.family and not c.tunables and c.lib_path == cfg.lib_path:
                return c.name
        return None

    def curves(self, trait="size_curve", param="size"):
        """{(workload, params without PARAM): {value: group}} for the workloads with TRAIT:
        groups that differ only in one fixed PARAM value form a curve over it."""
        out = {}
        for (wl, params) in self.groups:
            if trait not in self.traits(wl):
                continue
            v = param_of(params, param)
            if v and size_key(v) != float("inf"):
                out.setdefault((wl, params_without(params, param)), {})[v] = (wl, params)
        return out


def no_ok_sample(run):
    """One line per (workload, params, configuration) whose every sample failed: it is named in
    every report and summary, never dropped so that the others' ranking reads as the whole
    story.  Its rows' most common status and message, with their count."""
    seen = {}
    for r in run.rows:
        seen.setdefault((r["workload"], r["workload_params"], r["config"]), []).append(r)
    out = []
    for (wl, params, cfg), rs in seen.items():
        if any(r["status"] == "ok" for r in rs):
            continue
        n, top = commonest_failure(rs)
        out.append(f"{cfg} on {workload_title(wl, params)}: none of its {len(rs)} samples was ok "
                   f"({n} {top})")
    return out


def commonest_failure(rows):
    """(count, "STATUS: MESSAGE") of the most common failure among rows (not ok), or (0, "")."""
    counts = {}
    for r in rows:
        if r["status"] != "ok":
            k = f"{r['status']}: {r.get('message') or '(no message)'}"
            counts[k] = counts.get(k, 0) + 1
    if not counts:
        return 0, ""
    top = max(counts, key=counts.get)
    return counts[top], top


def group(rows):
    """{(workload, workload_params): {config: [rows]}} in order of first appearance."""
    out = {}
    for r in rows:
        out.setdefault((r["workload"], r["workload_params"]), {}).setdefault(r["config"], []).append(r)
    return out


def check_unique(rows):
    """mbcsv.CsvError naming both rows when two rows are one sample (the same run_id and
    sample): a CSV concatenated with itself, or passed twice, would count every sample twice."""
    seen = {}
    for r in rows:
        key = (r["run_id"], r["sample"])
        if key in seen:
            a = seen[key]
            raise mbcsv.CsvError(f"{mbcsv.where(r.path, r.row)}: run {key[0]!r} sample {key[1]!r} again "
                                 f"(first at {mbcsv.where(a.path, a.row)}); each sample counts once")
        seen[key] = r


def check_plan_unique(rows):
    """mbcsv.CsvError naming both rows when one file holds a sample of a plan twice (the same
    matrix_id, block and position under any run_id): measured twice, as two writers of one file
    at once once did (issue 29); --resume and merge never write one twice."""
    seen = {}
    for r in rows:
        if not r.get("matrix_id") or r.get("block", "") == "" or r.get("position", "") == "":
            continue
        key = (r["matrix_id"], r["block"], r["position"])
        if key in seen:
            a = seen[key]
            raise mbcsv.CsvError(f"{mbcsv.where(r.path, r.row)}: plan {key[0]} block {key[1]} position {key[2]} "
                                 f"again (first at {mbcsv.where(a.path, a.row)}, run {a['run_id']}): a sample "
                                 f"measured twice; each counts once")
        seen[key] = r


def run_paths(paths):
    """[str] of one path (str or os.PathLike) or a list of them; TypeError for anything else
    (bytes were read as a list of file descriptors, a pathlib.Path failed inside)."""
    def one(p):
        if isinstance(p, (bytes, bytearray)) or not isinstance(p, (str, os.PathLike)):
            raise TypeError(f"paths: a str or os.PathLike path, or a list of them, not {type(p).__name__}")
        p = os.fspath(p)
        if not isinstance(p, str):
            raise TypeError(f"paths: a str path, not {type(p).__name__} (decode it first)")
        return p
    if isinstance(paths, (str, os.PathLike, bytes, bytearray)):
        return [one(paths)]
    try:
        items = list(paths)
    except TypeError:
        raise TypeError(f"paths: a str or os.PathLike path, or a list of them, not {type(paths).__name__}") from None
    return [one(p) for p in items]


def load(paths):
    """A Run of one CSV path or a list of them; mbcsv.CsvError for input that is not a
    mallocbench CSV of the schema, or that holds one sample twice (check_unique).  A missing
    sidecar is no sidecar; one that is there but no JSON object is refused (read_meta)."""
    paths = run_paths(paths)
    rows, metas, rss = [], [], {}
    per_file = []
    for p in paths:
        per_file.append(mbcsv.read(p)[1])
        rows += per_file[-1]
        meta = read_meta(p)
        if meta is not None:
            metas.append(meta)
            annotate(per_file[-1], meta)
        read_rss(p, rss)
    check_unique(rows)  # a row given twice (a file concatenated with itself) is named as such first
    for got in per_file:
        check_plan_unique(got)
    for series in rss.values():
        series.sort()
    return Run(paths, rows, metas, rss)


# ---- a configuration's label and the baseline (the framework suite's programs: programs.py) ----



def config_label(config):
    """A configuration's short label: je-keep of 'je-keep[dirty_decay_ms=-1,...]'."""
    return config.partition("[")[0]


def baseline_config(run):
    """The configuration ratios are taken against: glibc with its defaults, else the first."""
    for c in run.configs.values():
        if c.family == "glibc" and not c.tunables:
            return c.name
    return next(iter(run.configs), None)


# ---- huge pages as a condition (schema 9; docs/thp.md) -------------------------------------

HUGE_CONDITIONS = ("never", "advise", "system")  # the `huge` column: -t LABEL:huge=...
HUGE_ON = ("advise", "system")
# the family's own huge-page setting that huge=advise turns on (a tunable of allocators/<family>.c):
# not a setting of its own when a configuration is paired with its huge=never twin
HUGE_SETTING = {"glibc": "hugetlb", "jemalloc": "thp", "mimalloc": "large_os_pages"}
# machine-wide /proc/vmstat counts over a sample (docs/thp.md): other tasks may add to them
THP_COUNTS = ("thp_faults", "thp_fallbacks", "thp_pmd_splits", "thp_page_splits")


def huge_of(r):
    """A row's huge-page condition, 'never', 'advise' or 'system' (a row of schema 8 or older
    reads as 'system', the kernel's own: mbcsv.OLDER); None where the column is empty."""
    h = r.get("huge") or ""
    return h if h in HUGE_CONDITIONS else None


def huge_share(r):
    """The share (0..1) of the process tree's anonymous memory in huge pages at the reading
    where its anonymous memory was largest (huge_share_peak); None where not measured."""
    return num(r, "huge_share_peak")


def thp_counts(r):
    """{count: value} of the row's machine-wide THP counts (THP_COUNTS), None where not measured."""
    return {c: num(r, c) for c in THP_COUNTS}


def thp_splits(r):
    """Huge pages split over the sample, machine-wide: PMD splits (a partial MADV_DONTNEED of a
    huge page) plus page splits; None where either is not measured."""
    return sum_measured(num(r, "thp_pmd_splits"), num(r, "thp_page_splits"))


def others_cpu_s(r):
    """CPU seconds, machine-wide, that tasks other than the sample's tree and the harness used
    during it: above a tick or two, they could have added to its machine-wide counts."""
    return num(r, "others_cpu_s")


def huge_pair_key(cfg):
    """What a configuration is apart from its huge-page condition: (family, library, the
    tunables asked for other than `huge` and the family's HUGE_SETTING).  A configuration with
    huge pages on is paired with the huge=never one of the same key, whatever their labels."""
    drop = {"huge", HUGE_SETTING.get(cfg.family)}
    rest = sorted((k, v) for k, v in parse_metrics(cfg.tunables).items() if k not in drop)
    return cfg.family, cfg.lib_path, tuple(rest)


def config_huge(run):
    """{config: its huge-page condition} (the first row that names one); None where no row does."""
    out = {}
    for r in run.rows:
        if out.get(r["config"]) is None:
            out[r["config"]] = huge_of(r)
    return out


def huge_pairs(run):
    """([(on, never)], [unpaired on]): each configuration with huge pages on (advise or system),
    in the run's order, with the huge=never configuration of its huge_pair_key; where several
    share the key, the one of its label (config_label).  Unpaired: those with none."""
    cond = config_huge(run)
    never = {}
    for c, cfg in run.configs.items():
        if cond.get(c) == "never":
            never.setdefault(huge_pair_key(cfg), []).append(c)
    pairs, alone = [], []
    for c, cfg in run.configs.items():
        if cond.get(c) not in HUGE_ON:
            continue
        cand = never.get(huge_pair_key(cfg), [])
        if len(cand) > 1:
            cand = [n for n in cand if config_label(n) == config_label(c)]
        if len(cand) == 1:
            pairs.append((c, cand[0]))
        else:
            alone.append(c)
    return pairs, alone


def huge_baseline(run, configs):
    """The configuration of `configs` (labels, one condition's) ratios are taken against: glibc
    with no setting but its huge-page condition, else the first of them in the run's order."""
    for c in configs:
        cfg = run.configs.get(c)
        if cfg and cfg.family == "glibc" and not huge_pair_key(cfg)[2] and not cfg.lib_path:
            return c
    return next(iter(configs), None)


def calibration(run):
    """The machine's calibration (the first sidecar's machine.calibration: fault_ns,
    huge_fault_ns, ...) as a dict; {} where no sidecar gives one."""
    for meta in run.metas:
        cal = (meta.get("machine") or {}).get("calibration") if isinstance(meta.get("machine"), dict) else None
        if isinstance(cal, dict):
            return cal
    return {}
