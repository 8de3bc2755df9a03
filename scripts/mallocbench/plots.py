"""plots.py - figures from mallocbench CSVs, as PNG and SVG, with a manifest.

Reads one or more schema-4 CSVs by column name through scripts/mbcsv.py, which
refuses malformed input in one line naming file and row, exit 2 (with their <name>.meta.json and
<name>.rss.csv sidecars when present), plots only rows with status ok, and never
draws an empty (not measured) field as 0.  Each allocator family keeps one colour in every
figure: the one its sidecar entry carries, else a fixed fallback (mbcsv.family_colours).  Writes OUTDIR/<name>.png, .svg and
OUTDIR/plots.json (name, png, svg, title, better, caption; fixed order).

    scripts/plots.py results/run.csv [MORE.csv ...] -o OUTDIR [--machine-note TEXT]

Importable: make_plots(csv_paths, outdir, machine_note=None) -> manifest list.
Needs matplotlib and numpy (Debian: /usr/bin/python3, python3-matplotlib); run
without them it says which package to install, exit 1.
"""
import argparse
import csv
import io
import json
import math
import os
import sys
import textwrap

from . import change
from . import cli
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats
from . import words

# matplotlib and numpy, imported by need() once the input is read (~0.6 s): an entry that refuses
# its input never pays for them
matplotlib = plt = np = Line2D = Patch = FuncFormatter = None


def need():
    """Import matplotlib (its file backend, Agg: the entries only write files) and numpy, once;
    ImportError (mbcsv.missing_dependency says what to install) where they are missing."""
    global matplotlib, plt, np, Line2D, Patch, FuncFormatter
    if plt is not None:
        return
    import matplotlib as mpl
    mpl.use("Agg")
    import matplotlib.pyplot as pyplot
    import numpy
    from matplotlib.lines import Line2D as line2d
    from matplotlib.patches import Patch as patch
    from matplotlib.ticker import FuncFormatter as funcformatter
    matplotlib, plt, np, Line2D, Patch, FuncFormatter = mpl, pyplot, numpy, line2d, patch, funcformatter


def use_file_backend():
    """Draw without a display (Agg): what the entries that only write files (plots, report)
    ask for; importing this module imports no matplotlib."""
    need()

KiB = 1024
MiB = 1024 * 1024
PAGE = 4096
FULL_REFAULT_PER_MIB = MiB // PAGE          # 256: every 4 KiB page of every MiB faulted again
REFAULT_THRESHOLD = FULL_REFAULT_PER_MIB / 2  # "re-faults": at least half of the pages
MIN_CI_SAMPLES = 6                          # below this, whiskers are min..max
MAX_SWEEP_BARS = 4                          # bar figures drawn per size sweep
MAX_PANELS = 12                             # panels per summary figure

# One fixed colour per allocator family, the same in every figure: the colour the run's
# sidecar gives it, else a colour-blind-safe fallback (mbcsv.family_colours); the order of
# the families comes from the run (mbcsv.family_order).
FAMILIES = []
# Variants of one family: shade (mix towards white > 0, black < 0), bar hatch, marker, line style.
SHADES = [0.0, -0.40, 0.45, -0.60, 0.70, -0.20]
HATCHES = ["", "///", "...", "xxx", "\\\\\\", "+++"]
MARKERS = ["o", "s", "^", "D", "v", "P"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1)), (0, (1, 1))]

# Workloads come in the registry's order, as the sidecar lists them (mbdata.Run.workload_rank);
# without that list, by name.


# Input the plots cannot be drawn from (the CLI prints it in one line, exit 2).
PlotError = mbcsv.CsvError


# ---------------------------------------------------------------- parsing (pure)

num = mbcsv.num  # a finite float, None when empty (not measured); CsvError when not a number


parse_params = mbdata.parse_params
parse_metrics = mbdata.parse_metrics
SIZE_UNITS = mbdata.SIZE_UNITS
parse_size = mbdata.parse_size
format_size = mbdata.format_size


def family_rank(family):
    return FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)


def config_sort_key(family, config):
    """Family in registry order, then the label (the plain defaults label sorts first)."""
    return (family_rank(family), family, config)


def median_ci(values):
    """(median, low, high, method) of the samples; method 'ci95' (the exact order-statistic CI
    of scripts/stats.py, the one compare prints) or 'minmax' (too few samples for one)."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None
    med = float(np.median(v))
    ci = stats.median_ci(v) if n >= MIN_CI_SAMPLES else None
    if ci is None:
        return med, v[0], v[-1], "minmax"
    return med, ci[0], ci[1], "ci95"


def pareto_frontier(points):
    """Points (x, y, ...) not dominated when lower x and lower y are better, sorted by x."""
    front = []
    best_y = math.inf
    for p in sorted(points, key=lambda p: (p[0], p[1])):
        if p[1] < best_y:
            front.append(p)
            best_y = p[1]
    return front


def scale_throughput(unit, values):
    """(factor, shown unit): B/s as GB/s; other units get k/M when large."""
    if unit == "B/s":
        return 1e-9, "GB/s"
    top = max((abs(v) for v in values), default=0)
    if top >= 1e6:
        return 1e-6, "M" + unit
    if top >= 1e4:
        return 1e-3, "k" + unit
    return 1.0, unit


# ---------------------------------------------------------------- loading

def load(csv_paths):
    """Rows of every CSV (schema checked), plus the RSS series and meta of each (mbdata.load)."""
    run = mbdata.load(csv_paths)
    FAMILIES[:] = run.families
    need()  # the input is read and sound: now the drawing library (the styles mix colours with it)
    return Data(run)


class Data:
    """The ok rows grouped by (workload, workload_params) and config, in a fixed order."""

    baseline = None  # the configuration the captions compare against; None: the run's first

    def __init__(self, run):
        self.run = run
        self.rows, self.bad, self.rss, self.metas = run.ok, run.bad, run.rss, run.metas
        self.names = [os.path.basename(p) for p in run.paths]
        self.family = {c: cfg.family or c for c, cfg in run.configs.items()}
        self.setting = {c: mbdata.setting_text(cfg) for c, cfg in run.configs.items()}
        self.configs = sorted(self.family, key=lambda c: config_sort_key(self.family[c], c))
        self.groups = mbdata.group(self.rows)
        self.group_order = sorted(self.groups, key=self.group_sort_key)
        self.not_ok = {}
        for r in self.bad:
            self.not_ok.setdefault((r["workload"], r["workload_params"]), []).append(r)
        families = list(dict.fromkeys(self.family[c] for c in self.configs))
        self.colours = mbcsv.family_colours(list(run.paths), run.rows, families)
        self.style = config_styles(self.configs, self.family, self.colours)
        # the workloads whose measured region is an idle period (trait idle_region)
        self.idle = run.with_trait("idle_region")

    def group_sort_key(self, group):
        """Workload order, then the size of a fixed-size group (numerically), then the params text."""
        workload, params = group
        size = parse_size(mbdata.param_of(params, "size") or "")
        return (self.run.workload_rank(workload), size if size is not None else -1, params)

    def configs_of(self, group):
        got = self.groups.get(group, {})
        return [c for c in self.configs if c in got]


# ---------------------------------------------------------------- colours and styles

def mix(hex_colour, amount):
    """Mix towards white (amount > 0) or black (amount < 0)."""
    rgb = np.array(matplotlib.colors.to_rgb(hex_colour))
    target = np.ones(3) if amount > 0 else np.zeros(3)
    out = rgb + (target - rgb) * abs(amount)
    return matplotlib.colors.to_hex(out)


def config_styles(configs, family, colours):
    """Colour (a shade of its family's colour in `colours`, {family: '#RRGGBB'} from
    mbcsv.family_colours), hatch, marker and line style of every config, the same in every plot."""
    styles, seen = {}, {}
    for c in configs:
        fam = family[c]
        base = colours[fam]
        i = seen.get(fam, 0)
        seen[fam] = i + 1
        styles[c] = {
            "colour": mix(base, SHADES[i % len(SHADES)]) if SHADES[i % len(SHADES)] else base,
            "hatch": HATCHES[i % len(HATCHES)],
            "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[i % len(LINESTYLES)],
            "family": fam,
        }
    return styles


# ---------------------------------------------------------------- figures from the data (pure)

def median_of(rows, fn):
    vals = [v for v in (fn(r) for r in rows) if v is not None]
    return float(np.median(vals)) if vals else None


faults_per_mib = mbdata.faults_per_mib


def sweep_families(data):
    """{(workload, params without size): [(size_bytes, group), ...]} for workloads run at >= 2 fixed sizes."""
    fams = {}
    for g in data.group_order:
        size = parse_size(mbdata.param_of(g[1], "size") or "")
        if size is None:
            continue
        rest = mbdata.params_without(g[1], "size")
        fams.setdefault((g[0], rest), []).append((size, g))
    return {k: sorted(v) for k, v in fams.items() if len({s for s, _ in v}) >= 2}


def fault_cliff_series(data):
    """{(workload, other params): {config: [(size_bytes, median faults/MiB, n), ...]}}: the fault cliff."""
    out = {}
    for fam, points in sweep_families(data).items():
        series = {}
        for size, g in points:
            for c in data.configs_of(g):
                m = median_of(data.groups[g][c], faults_per_mib)
                if m is not None:
                    series.setdefault(c, []).append((size, m, len(data.groups[g][c])))
        out[fam] = {c: series[c] for c in data.configs if c in series}
    return out


def cliff_text(points):
    """Where a series re-faults: 'from 16M', 'at 256K, 32M', or None."""
    sizes = [s for s, _, _ in points]
    hot = [s for s, m, _ in points if m >= REFAULT_THRESHOLD]
    if not hot:
        return None
    if hot == sizes[sizes.index(hot[0]):]:
        return f"from {format_size(hot[0])}"
    return "at " + ", ".join(format_size(s) for s in hot)


kept_kib = mbdata.kept_kib


def rss_vs_cpu_points(data, group, rss="peak"):
    """[(cpu_s, rss_mib, config, n)] of a group, medians over samples.

    rss 'peak': the sampled peak (rss_peak_kib); 'kept': RSS at the end of the measured
    region (rss_final_kib, or the workload's rss_end_kib where that is empty), for
    for a workload whose region is an idle (idle_region), what is still resident after it.
    """
    out = []
    for c in data.configs_of(group):
        rs = data.groups[group][c]
        traits = data.run.traits(group[0])
        cpu = median_of(rs, lambda r: mbdata.cpu_seconds(r, traits))
        kib = median_of(rs, (lambda r: num(r, "rss_peak_kib")) if rss == "peak" else kept_kib)
        if cpu is not None and kib is not None:
            out.append((cpu, kib / KiB, c, len(rs)))
    return out


_sum = mbdata.sum_measured


def _float(text):
    try:
        f = float(text)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def median_sample(rows):
    """The sample with the median throughput (the lower one of an even count; ties by sample)."""
    ranked = sorted(rows, key=lambda r: (num(r, "throughput") if num(r, "throughput") is not None else -math.inf,
                                         int(r["sample"]) if r["sample"].isdigit() else 0, r["run_id"]))
    return ranked[(len(ranked) - 1) // 2] if ranked else None


# ---------------------------------------------------------------- drawing helpers

def group_title(group, width=110):
    workload, params = group
    return textwrap.fill(f"{workload} ({params.replace(',', ', ')})", width)


def short_group(group, data):
    """The workload and only the parameters that tell its groups apart."""
    workload, params = group
    same = [g for g in data.group_order if g[0] == workload]
    if len(same) == 1:
        return workload
    diff = mbdata.distinguishing(params, [g[1] for g in same if g != group])
    return workload + " " + mbdata.format_params(diff[:3])


def machine_footnote(data, note):
    if note:
        text = note
    else:
        parts = []
        for m in data.metas:
            mach = m.get("machine") or {}
            desc = (f"{mach.get('cpu_model') or 'unknown CPU'}, {mach.get('cores_online', '?')} cores online, "
                    f"kernel {mach.get('kernel') or '?'}, THP {mach.get('thp_enabled') or '?'}; "
                    f"run started {m.get('started') or '?'}")
            if desc not in parts:
                parts.append(desc)
        text = " | ".join(parts) if parts else "machine unknown (no .meta.json beside the CSV)"
    return f"Machine: {text}.  Data: {', '.join(data.names)}."


def finish(fig, name, outdir, footnote, written):
    """Footnote, then PNG and SVG with no timestamps, so equal data gives equal files."""
    fig.text(0.005, 0.004, textwrap.fill(footnote, 230), fontsize=8, color="#444444", ha="left", va="bottom")
    bufs = io.BytesIO(), io.BytesIO()
    fig.savefig(bufs[0], format="png", dpi=100, metadata={"Software": None})
    fig.savefig(bufs[1], format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    png = outdir.write(name + ".png", bufs[0].getvalue())  # outdir: an mbout.Folder
    svg = outdir.write(name + ".svg", bufs[1].getvalue())
    written.extend([png, svg])
    return name + ".png", name + ".svg"


def fmt_value(v):
    """A short label: 3 significant digits, thousands as k and millions as M."""
    a = abs(v)
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e4:
        return f"{v / 1e3:.3g}k"
    if a >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}"


def place_labels(ax, items, fontsize=8.5, dx=6, dy=4, spacing=1.3):
    """Annotate points (x, y, text, colour) so that no two labels overlap: a label that would
    cover one already placed moves down a line.  Call after the axes limits and layout are final."""
    to_pt = 72.0 / ax.figure.dpi
    height = fontsize * spacing
    placed = []
    for x, y, text, colour in sorted(items, key=lambda it: (-it[1], it[0], it[2])):
        px, py = ax.transData.transform((x, y)) * to_pt
        width = max(len(line) for line in text.split("\n")) * fontsize * 0.56
        lines = text.count("\n") + 1
        for step in range(41):
            # try the natural place, then one line lower, one higher, two lower, ...
            oy = dy - height * ((step + 1) // 2) * (1 if step % 2 else -1)
            box = (px + dx, px + dx + width, py + oy, py + oy + height * lines)
            if not any(b[0] < box[1] and box[0] < b[1] and b[2] < box[3] and box[2] < b[3] for b in placed):
                break
        placed.append(box)
        ax.annotate(text, (x, y), xytext=(dx, oy), textcoords="offset points", fontsize=fontsize, color=colour,
                    va="bottom", ha="left")


def signed(v, spec):
    """A difference with its sign, never '-0'."""
    text = format(v, "+" + spec)
    return "±0" if float(text) == 0 else text


def safe_name(text):
    out = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in text)
    while "--" in out:
        out = out.replace("--", "-")
    return out.strip("-")


def legend_handles(data, configs, kind="patch"):
    handles = []
    for c in configs:
        s = data.style[c]
        if kind == "patch":
            handles.append(Patch(facecolor=s["colour"], edgecolor="black", hatch=s["hatch"], label=c))
        else:
            handles.append(Line2D([], [], color=s["colour"], marker=s["marker"], linestyle=s["linestyle"],
                                  label=c))
    return handles


# ---------------------------------------------------------------- 1. bars per group

def bar_metrics(data, group):
    """The panels of a bar figure: (title, unit text, better, per-sample fn or None, extra)."""
    rows = [r for c in data.configs_of(group) for r in data.groups[group][c]]
    unit = next((r["throughput_unit"] for r in rows if r["throughput_unit"]), "")
    tvals = [num(r, "throughput") for r in rows if num(r, "throughput") is not None]
    factor, shown = scale_throughput(unit, tvals)
    # what the primary figure measures and which way is better: the workload's own
    # descriptor, carried in the CSV (metric, metric_better)
    meaning = next((r["metric"] for r in rows if r.get("metric")), "the workload's figure of merit")
    better = next((mbcsv.better(r) for r in rows if r.get("metric_better")), "higher")
    limit = median_of(rows, lambda r: num(r, "limit_throughput"))

    per = mbdata.work_unit(rows)  # CPU, faults and calls per unit of work, as every view counts them
    calls = mbdata.METRIC
    return [
        {"title": f"Throughput: {meaning}", "unit": shown or "(no unit)", "better": better,
         "fn": lambda r: num(r, "throughput") * factor if num(r, "throughput") is not None else None,
         "limit": limit * factor if limit is not None else None},
        {"title": f"CPU in the region per {per}: user (dark) + sys (light)", "unit": f"CPU ms per {per}",
         "better": "lower", "stack": True,
         "fn": lambda r: (_sum(calls["user_cpu"].fn(r), calls["sys_cpu"].fn(r)) * 1e3
                          if _sum(calls["user_cpu"].fn(r), calls["sys_cpu"].fn(r)) is not None else None)},
        {"title": f"Page faults per {per}", "unit": f"minor faults per {per}", "better": "lower",
         "fn": calls["faults"].fn, "refault": MiB / PAGE if per == "MiB" else None},
        {"title": f"madvise calls per {per}", "unit": f"calls per {per}", "better": "lower",
         "fn": calls["madvise"].fn},
        {"title": f"munmap calls per {per}", "unit": f"calls per {per}", "better": "lower",
         "fn": calls["munmap"].fn},
        {"title": f"brk calls per {per}", "unit": f"calls per {per}", "better": "lower",
         "fn": calls["brk"].fn},
        {"title": "Peak RSS (sampled)", "unit": "MiB", "better": "lower",
         "fn": lambda r: num(r, "rss_peak_kib") / KiB if num(r, "rss_peak_kib") is not None else None},
        {"title": "RSS at the end of the region: what the allocator kept", "unit": "MiB", "better": "lower",
         "fn": lambda r: num(r, "rss_final_kib") / KiB if num(r, "rss_final_kib") is not None else None},
    ]


def draw_bars(data, group, name, outdir, footnote, written):
    configs = data.configs_of(group)
    metrics = bar_metrics(data, group)
    ns = {c: len(data.groups[group][c]) for c in configs}
    methods = set()
    nconf = len(configs)
    row_h = 0.42 * nconf + 1.7
    fig, axes = plt.subplots(2, 4, figsize=(19, 2 * row_h + 2.6), sharey=True)
    axes = axes.ravel()
    ypos = np.arange(nconf)
    for ax, m in zip(axes, metrics):
        ax.set_title(textwrap.fill(m["title"], 44) + f"\n({m['better']} is better)", fontsize=10)
        ax.set_xlabel(m["unit"], fontsize=9)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        top = 0.0
        texts = []
        for i, c in enumerate(configs):
            rs = data.groups[group][c]
            vals = [v for v in (m["fn"](r) for r in rs) if v is not None]
            st = data.style[c]
            if not vals:
                texts.append((i, None, m.get("empty", "not measured")))
                continue
            med, lo, hi, method = median_ci(vals)
            methods.add(method)
            if m.get("stack"):
                user = median_of(rs, lambda r: num(r, "region_user_s"))
                sys_ = median_of(rs, lambda r: num(r, "region_sys_s"))
                if user is not None and sys_ is not None and user + sys_ > 0:
                    u = med * user / (user + sys_)
                    ax.barh(i, u, color=st["colour"], hatch=st["hatch"], edgecolor="black", linewidth=0.6)
                    ax.barh(i, med - u, left=u, color=st["colour"], alpha=0.35, hatch=st["hatch"],
                            edgecolor="black", linewidth=0.6)
                    label = f"{med:.3g} ms, sys {sys_ / (user + sys_) * 100:.0f}%"  # the panel's unit: CPU ms
                else:
                    ax.barh(i, med, color=st["colour"], hatch=st["hatch"], edgecolor="black", linewidth=0.6)
                    label = f"{med:.3g} ms"
            else:
                ax.barh(i, med, color=st["colour"], hatch=st["hatch"], edgecolor="black", linewidth=0.6)
                label = fmt_value(med)
            if hi > lo:
                ax.errorbar(med, i, xerr=[[med - lo], [hi - med]], fmt="none", ecolor="black", elinewidth=1,
                            capsize=3)
            top = max(top, hi, med)
            texts.append((i, hi, label))
        for key, text in (("limit", "machine limit:\nbuffers reused"), ("refault", "every 4 KiB page\nfaulted again")):
            # a reference line far beyond the data would squash the bars: draw it only when near them
            if m.get(key) and any(t[1] is not None for t in texts) and (key == "limit" or top >= 0.2 * m[key]):
                ax.axvline(m[key], color="#555555", linestyle="--", linewidth=1)
                ax.text(m[key], 0.995, text + " ", fontsize=7.5, color="#333333", va="top", ha="right",
                        transform=ax.get_xaxis_transform(),
                        bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
                top = max(top, m[key])
        span = top if top > 0 else 1.0
        for i, hi, label in texts:
            if hi is None:
                ax.text(span * 0.02, i, label, va="center", fontsize=8, style="italic", color="#666666")
            else:
                ax.text(hi + span * 0.02, i, label, va="center", fontsize=8)
        ax.set_xlim(0, span * 1.45)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt_value(v) if v else "0"))
        ax.tick_params(labelsize=8.5)
    axes[0].set_yticks(ypos)
    axes[0].set_yticklabels(configs, fontsize=9)
    axes[0].invert_yaxis()
    for k in (0, 4):
        axes[k].tick_params(axis="y", labelleft=True)
    axes[4].set_yticks(ypos)
    axes[4].set_yticklabels(configs, fontsize=9)
    nmin = min(ns.values()) if ns else 0
    whisk = ("95% CI of the median (order statistics)" if methods == {"ci95"} else
             "min–max of the samples (fewer than 6 samples)" if methods == {"minmax"} else
             "95% CI of the median with ≥ 6 samples, else min–max")
    counts = (f"{nmin} samples per config" if len(set(ns.values())) == 1 else
              "samples per config: " + ", ".join(f"{c} {n}" for c, n in ns.items()))
    lines = [f"Bars: median ({counts}). Whiskers: {whisk}. CPU: region user + sys at clock-tick (10 ms) "
             "resolution. Empty cells (not measured) are labelled, never drawn as 0."]
    bad = data.not_ok.get(group, [])
    if bad:
        lines.append(f"Left out, not ok: {len(bad)} sample(s): "
                     + "; ".join(sorted({r["config"] + " " + r["status"] for r in bad}))[:160])
    fig.text(0.005, 0.032, "\n".join(textwrap.fill(x, 150) for x in lines), fontsize=8.5, va="bottom")
    fig.legend(handles=legend_handles(data, configs), loc="lower right", bbox_to_anchor=(0.995, 0.025),
               fontsize=8.5, ncol=min(len(configs), 3), title="config (colour = allocator family)",
               title_fontsize=8.5, frameon=False)
    fig.suptitle(f"What each allocator costs in {group_title(group)}\n"
                 "each panel says whether higher or lower is better", fontsize=12)
    fig.tight_layout(rect=(0, 0.03 + (0.35 + 0.2 * math.ceil(len(configs) / 3)) / fig.get_figheight(), 1, 0.97))
    title = (f"{group[0]}: throughput (higher is better), CPU, faults, syscalls and RSS (lower is better) "
             f"per allocator ({group[1]})")
    caption = bars_caption(data, group, metrics, whisk)
    png, svg = finish(fig, name, outdir, footnote, written)
    return {"name": name, "png": png, "svg": svg, "title": title, "better": None, "caption": caption}


def bars_caption(data, group, metrics, whisk):
    configs = data.configs_of(group)
    t = {c: median_of(data.groups[group][c], metrics[0]["fn"]) for c in configs}
    t = {c: v for c, v in t.items() if v is not None}
    parts = [f"{group[0]} ({group[1]}): medians per config; whiskers: {whisk}."]
    base = data.baseline or (data.run.config_order[0] if data.run.config_order else None)
    if t and base in t and "trade_off" not in data.run.traits(group[0]):
        # the best against the run's baseline: the one estimate every view prints for that pair
        sign = 1 if metrics[0]["better"] == "higher" else -1
        best = max(t, key=lambda c: (sign * t[c], -configs.index(c)))
        if best != base:
            cell = change.pair(data.groups[group][base], data.groups[group][best])
            parts.append(f"Best {metrics[0]['better'] == 'higher' and 'highest' or 'lowest'} figure: {best} "
                         f"({t[best]:.3g} {metrics[0]['unit']}; {words.change_words(cell)} vs {base}).")
    elif t and "trade_off" in data.run.traits(group[0]):
        parts.append("A trade-off, not better or worse: memory given back now is faulted in again later.")
    refault = [c for c in configs
               if (m := median_of(data.groups[group][c], faults_per_mib)) is not None and m >= REFAULT_THRESHOLD]
    if refault:
        parts.append("Faults every freed page in again (≥ half the pages of what it touches): "
                     + ", ".join(refault) + ".")
    sysshare = []
    for c in configs:
        u = median_of(data.groups[group][c], lambda r: num(r, "region_user_s"))
        s = median_of(data.groups[group][c], lambda r: num(r, "region_sys_s"))
        if u is not None and s is not None and u + s > 0 and s / (u + s) >= 0.5:
            sysshare.append(f"{c} {s / (u + s) * 100:.0f}%")
    if sysshare:
        parts.append("Mostly in the kernel (sys share of CPU): " + ", ".join(sysshare) + ".")
    bad = data.not_ok.get(group, [])
    if bad:
        parts.append("Left out (status not ok): " + "; ".join(
            sorted({f"{r['config']} {r['status']}" + (f" ({r['message'][:80]})" if r["message"] else "")
                    for r in bad})) + ".")
    return " ".join(parts)


def bar_groups(data):
    """Groups that get a bar figure: all but the inner points of long size sweeps."""
    skip = set()
    for points in sweep_families(data).values():
        if len(points) > MAX_SWEEP_BARS:
            keep = {int(round(x)) for x in np.linspace(0, len(points) - 1, MAX_SWEEP_BARS)}
            skip.update(g for i, (_, g) in enumerate(points) if i not in keep)
    return [g for g in data.group_order if g not in skip]


def bar_names(data, groups):
    names, used = {}, set()
    for g in groups:
        base = "bars_" + safe_name(short_group(g, data).replace(" ", "_").replace("=", "-"))
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        names[g] = name
    return names


# ---------------------------------------------------------------- 2. the fault cliff

def draw_fault_cliff(data, outdir, footnote, written):
    series = fault_cliff_series(data)
    fams = [f for f in series if series[f]][:MAX_PANELS // 2]
    if not fams:
        return None
    fig, axes = plt.subplots(2, len(fams), figsize=(max(14, 12 * len(fams)), 10.5), squeeze=False,
                             sharex="col", gridspec_kw={"height_ratios": [3, 2]})
    summary = []
    for j, fam in enumerate(fams):
        ax, axt = axes[0][j], axes[1][j]
        sizes = sorted({s for pts in series[fam].values() for s, _, _ in pts})
        handles = []
        for i, (c, pts) in enumerate(series[fam].items()):
            st = data.style[c]
            where = cliff_text(pts)
            label = f"{c}: re-faults {where}" if where else \
                f"{c}: keeps its pages ({format_size(pts[0][0])}..{format_size(pts[-1][0])})"
            summary.append(f"{c} {where}" if where else f"{c} never ({format_size(pts[0][0])}.."
                                                        f"{format_size(pts[-1][0])})")
            have = {p[0] for p in pts}
            lost = []
            for sz, g in sweep_families(data)[fam]:
                statuses = sorted({r["status"] for r in data.not_ok.get(g, []) if r["config"] == c})
                if sz not in have and statuses:
                    lost.append(f"{format_size(sz)}: {'/'.join(statuses)}")
            if lost:
                label += f"; no ok sample at {', '.join(lost)}"
                summary[-1] += f" (no ok sample at {', '.join(lost)})"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=st["colour"], marker=st["marker"],
                    linestyle=st["linestyle"], linewidth=2, markersize=max(4.0, 11 - 1.6 * i),
                    markerfacecolor="none", markeredgewidth=2, label=label)
            handles.append(label)
            tp = []
            for s, _, _ in pts:
                g = next(gg for ss, gg in sweep_families(data)[fam] if ss == s)
                v = median_of(data.groups[g].get(c, []), lambda r: num(r, "throughput"))
                if v is not None:
                    tp.append((s, v))
            unit = next((r["throughput_unit"] for _, g in sweep_families(data)[fam]
                         for rs in data.groups[g].values() for r in rs), "")
            factor, shown = scale_throughput(unit, [v for _, v in tp])
            axt.plot([p[0] for p in tp], [p[1] * factor for p in tp], color=st["colour"], marker=st["marker"],
                     linestyle=st["linestyle"], linewidth=1.6, markersize=max(4.0, 9 - 1.2 * i),
                     markerfacecolor="none", markeredgewidth=1.5)
            axt.set_ylabel(f"throughput ({shown})\nhigher is better")
        ax.axhline(FULL_REFAULT_PER_MIB, color="black", linestyle="--", linewidth=1)
        ax.text(sizes[0], FULL_REFAULT_PER_MIB + 4, "256 = every 4 KiB page faulted again", fontsize=9,
                va="bottom")
        ax.set_ylim(-8, FULL_REFAULT_PER_MIB * 1.22)
        ax.set_ylabel("minor page faults per MiB touched\n(lower is better)")
        ax.set_title(textwrap.fill(f"{fam[0]} ({fam[1].replace(',', ', ')})", 90), fontsize=10)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9, frameon=False,
                  title="config: where it re-faults (≥ 128/MiB)", title_fontsize=9)
        for a in (ax, axt):
            a.set_xscale("log", base=2)
            a.set_xticks(sizes)
            a.set_xticklabels([format_size(s) for s in sizes], fontsize=9)
            a.grid(color="#dddddd", linewidth=0.6)
        axt.set_ylim(bottom=0)
        axt.set_xlabel("buffer size (bytes, log2 scale)")
    fig.suptitle("The fault cliff: from which buffer size each allocator hands freed buffers back to the kernel\n"
                 "and faults every page in again (lower is better; each point: median faults/MiB over its samples)",
                 fontsize=12)
    fig.tight_layout(rect=(0, 0.03, 1, 0.95))
    caption = ("Minor page faults in the measured region per MiB the workload touched, against the buffer size "
               "(log2). 256 means every 4 KiB page was faulted in again on the next allocation; near 0 means the "
               "allocator kept its pages. 'Re-faults' here means at least 128 faults/MiB (half the pages). "
               + "; ".join(summary) + ". Bottom: the throughput that costs (higher is better).")
    png, svg = finish(fig, "fault_cliff", outdir, footnote, written)
    return {"name": "fault_cliff", "png": png, "svg": svg,
            "title": "Fault cliff: page faults per MiB against buffer size (lower is better)",
            "better": "lower", "caption": caption}


# ---------------------------------------------------------------- 3. RSS against CPU

def tunable_groups(data):
    """Groups where one allocator family runs in more than one config (a tunable sweep)."""
    out = []
    for g in data.group_order:
        fams = [data.family[c] for c in data.configs_of(g)]
        if any(fams.count(f) > 1 for f in set(fams)):
            out.append(g)
    return out


def tunable_deltas(data, group, points):
    """[(config, defaults config, d_rss_mib, d_cpu_s)] for every tuned config against its family's defaults."""
    by = {p[2]: p for p in points}
    out = []
    for c in data.configs_of(group):
        if data.setting[c] == "defaults" or c not in by:
            continue
        base = next((d for d in data.configs_of(group)
                     if data.family[d] == data.family[c] and data.setting[d] == "defaults" and d in by), None)
        if base:
            out.append((c, base, by[c][1] - by[base][1], by[c][0] - by[base][0]))
    return out


RSS_KINDS = [("peak", "peak RSS, MiB (median)"), ("kept", "RSS kept at the end of the region, MiB")]


def draw_rss_vs_cpu(data, outdir, footnote, written):
    groups = tunable_groups(data)[:MAX_PANELS // 2]
    groups = [g for g in groups if len(rss_vs_cpu_points(data, g)) >= 2]
    if not groups:
        return None
    ncol = min(3, len(groups))
    nrow = 2 * math.ceil(len(groups) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.6 * ncol, 4.6 * nrow + 1.4), squeeze=False)
    caption_parts = {}
    labels = {}
    used = []
    for k, g in enumerate(groups):
        for row, (kind, ylabel) in enumerate(RSS_KINDS):
            ax = axes[2 * (k // ncol) + row][k % ncol]
            used.append(ax)
            pts = rss_vs_cpu_points(data, g, kind)
            if not pts:
                ax.text(0.5, 0.5, "not measured", transform=ax.transAxes, ha="center", style="italic")
                continue
            fam_count = {}
            for p in pts:
                fam_count[data.family[p[2]]] = fam_count.get(data.family[p[2]], 0) + 1
            front = pareto_frontier(pts)
            xmax = max(p[0] for p in pts) * 1.45 + 1e-3
            ymax = max(p[1] for p in pts)
            ax.step([p[0] for p in front] + [xmax], [p[1] for p in front] + [front[-1][1]], where="post",
                    color="#888888", linewidth=1.2, linestyle="--", zorder=1)
            for cpu, rss, c, n in pts:
                st = data.style[c]
                tuned = fam_count[data.family[c]] > 1
                ax.scatter([cpu], [rss], s=90 if tuned else 60, color=st["colour"], marker=st["marker"],
                           edgecolor="black", linewidth=0.7, zorder=3)
                label = data.setting[c] if tuned else data.family[c]
                if tuned and data.setting[c] == "defaults":
                    label = f"{data.family[c]} defaults"
                labels.setdefault(ax, []).append((cpu, rss, label, mix(st["colour"], -0.3)))
            deltas = []
            for c, base, d_rss, d_cpu in tunable_deltas(data, g, pts):
                b = next(p for p in pts if p[2] == base)
                t = next(p for p in pts if p[2] == c)
                ax.annotate("", xy=(t[0], t[1]), xytext=(b[0], b[1]),
                            arrowprops={"arrowstyle": "->", "color": data.style[c]["colour"], "linewidth": 1.2})
                pct = f" ({signed(d_rss / b[1] * 100, '.0f')}%)" if b[1] else ""
                deltas.append(f"{data.family[c]} {data.setting[c]}: RSS {signed(d_rss, '.1f')} MiB, "
                              f"CPU {signed(d_cpu, '.2g')} s")
                part = caption_parts.setdefault((g, c), {"head": f"{short_group(g, data)}, {c} against {base}:"})
                part[kind] = f"{kind} RSS {signed(d_rss, '.1f')} MiB{pct}"
                part["cpu"] = f"CPU {signed(d_cpu, '.2g')} s"
            idle = g[0] in data.idle
            ax.set_xlabel("CPU seconds, whole process user+sys (its region is the idle)" if idle
                          else "CPU seconds in the region (user+sys, median)")
            ax.set_ylabel(("RSS kept at the end of the idle, MiB" if idle else ylabel) if kind == "kept"
                          else ylabel)
            ax.set_xlim(-0.03 * xmax, xmax)
            ax.set_ylim(bottom=0, top=ymax * 1.25 if ymax > 0 else 1)
            if deltas:
                ax.annotate(f"against the allocator's defaults ({kind} RSS):\n" + "\n".join(deltas),
                            xy=(0, 0), xycoords="axes fraction", xytext=(0, -34), textcoords="offset points",
                            va="top", ha="left", fontsize=8.5)
            ax.grid(color="#eeeeee", linewidth=0.6)
            what = "peak RSS" if kind == "peak" else "RSS kept at the end"
            ax.set_title(textwrap.fill(short_group(g, data), 60) + f": {what}\nlower-left is better", fontsize=10)
    for ax in axes.ravel():
        if ax not in used:
            ax.axis("off")
    fams = sorted({data.family[c] for g in groups for c in data.configs_of(g)}, key=family_rank)
    fig.suptitle("What a tunable buys in memory and costs in CPU (lower-left is better): one point per config, "
                 "medians of its samples", fontsize=12)
    with plt.rc_context({"text.parse_math": True}):  # the arrow marker is mathtext; a family's '$' escaped
        handles = [Line2D([], [], marker="o", linestyle="", markeredgecolor="black", label=f.replace("$", r"\$"),
                          color=data.style[next(c for c in data.configs if data.family[c] == f)]["colour"])
                   for f in fams]
        handles.append(Line2D([], [], color="#888888", linestyle="--", label="Pareto frontier (nothing below-left)"))
        handles.append(Line2D([], [], color="black", marker=r"$\rightarrow$", linestyle="", markersize=12,
                              label="from the allocator's defaults to a tuned setting"))
        fig.legend(handles=handles, loc="upper center", fontsize=9, ncol=len(handles), frameon=False,
                   bbox_to_anchor=(0.5, 1 - 0.45 / fig.get_figheight()))
    fig.tight_layout(rect=(0, 0.03, 1, 1 - 0.85 / fig.get_figheight()))
    for ax, items in labels.items():
        place_labels(ax, items)
    caption = ("RSS against CPU seconds for every workload run with more than one configuration of one allocator; "
               "per workload, the peak (sampled rss_peak_kib, top) and what was still resident at the end of the "
               "measured region (rss_final_kib, or the workload's rss_end_kib where empty; bottom). x: region "
               "user+sys CPU seconds (10 ms clock-tick resolution)"
               + (f", except {', '.join(data.idle)}: whole-process CPU, since its region is the idle" if data.idle else "")
               + ". Grey steps: the Pareto frontier. "
               + "; ".join(" ".join([p["head"], ", ".join(p[k] for k in ("peak", "kept", "cpu") if k in p)])
                           for p in caption_parts.values()) + ".")
    png, svg = finish(fig, "rss_vs_cpu", outdir, footnote, written)
    return {"name": "rss_vs_cpu", "png": png, "svg": svg,
            "title": "RSS against CPU per configuration (lower-left is better)", "better": "lower",
            "caption": caption}


# ---------------------------------------------------------------- 4. RSS timelines

def rss_series(data, row):
    """The RSS series of a sample in MiB, without zero readings (a process tearing down at exit)."""
    series = data.rss.get((row["run_id"], row["sample"])) if row else None
    return [(t, kib / KiB) for t, kib in series or [] if kib > 0]


def draw_rss_timeline(data, outdir, footnote, written):
    groups = [g for g in bar_groups(data)
              if any(rss_series(data, median_sample(data.groups[g][c])) for c in data.configs_of(g))]
    if not groups:
        return None
    big = [g for g in groups if g[0] in data.idle][:2]
    small = [g for g in groups if g not in big][:MAX_PANELS - len(big)]
    nsmall_rows = math.ceil(len(small) / 2)
    heights = [4.8] * len(big) + [3.2] * nsmall_rows
    fig = plt.figure(figsize=(16, sum(heights) + 2.4))
    gs = fig.add_gridspec(len(heights), 2, height_ratios=heights)
    panels = [(fig.add_subplot(gs[i, :]), g) for i, g in enumerate(big)]
    for k, g in enumerate(small):
        panels.append((fig.add_subplot(gs[len(big) + k // 2, k % 2]), g))
    idle_notes, labels, shown = [], {}, []
    interval = next((m.get("rss_sample_interval_s") for m in data.metas if m.get("rss_sample_interval_s")), None)
    for ax, g in panels:
        missing = []
        for c in data.configs_of(g):
            r = median_sample(data.groups[g][c])
            series = rss_series(data, r)
            st = data.style[c]
            if not series:
                missing.append(c)
                continue
            if c not in shown:
                shown.append(c)
            ts = [p[0] for p in series]
            ys = [p[1] for p in series]
            ax.plot(ts, ys, color=st["colour"], linestyle=st["linestyle"], linewidth=2.2 if g in big else 1.5,
                    marker=st["marker"] if len(ts) <= 4 or (g in big and len(ts) <= 40) else None, markersize=4,
                    label=c)
            if g in big:
                fr = num(r, "throughput")
                met = parse_metrics(r["workload_metrics"])
                peak, end = _float(met.get("rss_peak_kib")), _float(met.get("rss_end_kib"))
                text = c
                if fr is not None and peak is not None and end is not None:
                    text = f"{c}: {peak / KiB:.0f} → {end / KiB:.0f} MiB, {fr:.0%} of freed returned"
                    idle_notes.append(f"{c} {peak / KiB:.0f} → {end / KiB:.0f} MiB ({fr:.0%} of the freed bytes "
                                      "returned)")
                labels.setdefault(ax, []).append((ts[-1], ys[-1], text, mix(st["colour"], -0.3)))
        if missing:
            why = f" (shorter than the {interval * 1000:.0f} ms sampling interval)" if interval else ""
            ax.text(0.99, 0.02, textwrap.fill(f"no RSS samples{why}: " + ", ".join(missing), 90),
                    transform=ax.transAxes, ha="right", va="bottom", fontsize=7.5, color="#666666",
                    style="italic")
        ax.set_ylim(bottom=0, top=ax.get_ylim()[1] * 1.08)
        ax.set_xlim(left=0)
        if g in big:
            ax.set_xlim(0, ax.get_xlim()[1] * 1.5)
        ax.set_ylabel("RSS, MiB")
        ax.set_xlabel("seconds since the sample's process started")
        ax.grid(color="#eeeeee", linewidth=0.6)
        if g in big:
            ax.set_title(textwrap.fill(f"{group_title(g)}: allocate to the peak, free most, then idle; what is "
                                       "still resident at the end is what the allocator kept (lower is better)",
                                       140), fontsize=10.5)
        else:
            ax.set_title(textwrap.fill(short_group(g, data), 70) + " (lower is better)", fontsize=9.5)
    fig.legend(handles=legend_handles(data, shown, kind="line"), loc="upper center", ncol=min(len(shown), 6),
               fontsize=9, bbox_to_anchor=(0.5, 1 - 0.75 / fig.get_figheight()), frameon=False)
    fig.suptitle("Resident memory over time, one line per config (its sample with the median throughput); "
                 "lower is better", fontsize=12)
    fig.tight_layout(rect=(0, 0.03, 1, 1 - 1.1 / fig.get_figheight()))
    for ax, items in labels.items():
        place_labels(ax, items, dy=-5, spacing=1.1)
    every = f"every {interval * 1000:.0f} ms" if interval else "periodically"
    caption = (f"RSS sampled by the harness from /proc/PID/statm {every}, in MiB, against seconds since the "
               "sample's process started; for each config its sample with the median throughput (zero readings "
               "while the process exits are dropped). Short peaks between two samples are missed"
               + (f": {', '.join(data.idle)}'s own peak (from its workload_metrics) can lie above the drawn line"
                  if data.idle else "")
               + ". The sampler records RSS only, so there is no fault-rate timeline."
               + (f" {', '.join(data.idle)} (top) shows what each allocator keeps after freeing most of its memory: "
                  + ("; ".join(idle_notes) if idle_notes else "not in this run") + "." if data.idle else ""))
    png, svg = finish(fig, "rss_timeline", outdir, footnote, written)
    return {"name": "rss_timeline", "png": png, "svg": svg,
            "title": "RSS over time per configuration (lower is better)", "better": "lower", "caption": caption}


# ---------------------------------------------------------------- 5. latency percentiles

PERCENTILES = [("latency_p50_us", "p50", "o"), ("latency_p99_us", "p99", "s"), ("latency_p999_us", "p99.9", "^")]


def draw_latency(data, outdir, footnote, written):
    groups = [g for g in data.group_order
              if any(num(r, "latency_p50_us") is not None for rs in data.groups[g].values() for r in rs)]
    groups = groups[:MAX_PANELS]
    if not groups:
        return None
    nconf = max(len(data.configs_of(g)) for g in groups)
    ncol = min(2, len(groups))
    nrow = math.ceil(len(groups) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(max(12, 8.5 * ncol), (0.55 * nconf + 2.2) * nrow + 2.0),
                             squeeze=False)
    notes = []
    for ax, g in zip(axes.ravel(), groups):
        configs = data.configs_of(g)
        what = next((r["latency_what"] for c in configs for r in data.groups[g][c] if r["latency_what"]), "op")
        scale, unit = (1e-3, "ms") if what == "step" else (1.0, "µs")
        for i, c in enumerate(configs):
            st = data.style[c]
            for k, (col, label, marker) in enumerate(PERCENTILES):
                vals = [v * scale for v in (num(r, col) for r in data.groups[g][c]) if v is not None]
                if not vals:
                    continue
                med = float(np.median(vals))
                y = i + (k - 1) * 0.18
                ax.plot([min(vals), max(vals)], [y, y], color=st["colour"], linewidth=1.5)
                ax.plot([med], [y], marker=marker, color=st["colour"], markeredgecolor="black", markersize=8,
                        linestyle="")
                ax.annotate(f"{med:.3g}", (max(vals), y), xytext=(4, 0), textcoords="offset points",
                            fontsize=7.5, va="center")
            p99 = median_of(data.groups[g][c], lambda r: num(r, "latency_p99_us"))
            if p99 is not None:
                notes.append(f"{short_group(g, data)} {c} p99 {p99 * scale:.3g} {unit}")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_yticks(range(len(configs)))
        ax.set_yticklabels(configs, fontsize=9)
        ax.set_ylim(len(configs) - 0.5, -0.5)
        ax.set_xlabel(f"latency of one {what}, {unit} (log scale)")
        ax.grid(axis="x", which="both", color="#eeeeee", linewidth=0.6)
        ax.set_title(textwrap.fill(group_title(g), 80) + f"\nper-{what} latency percentiles, lower is better",
                     fontsize=9.5)
        lo_x, hi_x = ax.get_xlim()
        ax.set_xlim(lo_x, hi_x * 1.8)
        if hi_x / lo_x < 30:  # under ~1.5 decades: label 2x and 5x too
            ax.xaxis.set_minor_formatter(FuncFormatter(
                lambda v, _: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v)), 6) in (2, 3, 5) else ""))
            ax.tick_params(axis="x", which="minor", labelsize=8)
        counts = [v for v in (num(r, "latency_count") for c in configs for r in data.groups[g][c])
                  if v is not None]
        if counts and min(counts) < 1000:
            notes.append(f"{short_group(g, data)}: only {min(counts):.0f} latencies per sample, so p99.9 "
                         "(and p99 below 100) is the slowest one")
    for ax in axes.ravel()[len(groups):]:
        ax.axis("off")
    handles = [Line2D([], [], marker=m, color="#999999", markeredgecolor="black", linestyle="", markersize=8,
                      label=f"{lab} (median of samples)") for _, lab, m in PERCENTILES]
    handles.append(Line2D([], [], color="#999999", linewidth=1.5, label="min–max over samples"))
    fig.suptitle("Latency percentiles per config (lower is better): where the slow operations are",
                 fontsize=12)
    fig.legend(handles=handles, loc="upper center", fontsize=9, ncol=len(handles), frameon=False,
               bbox_to_anchor=(0.5, 1 - 0.45 / fig.get_figheight()))
    fig.tight_layout(rect=(0, 0.03, 1, 1 - 0.9 / fig.get_figheight()))
    caption = ("p50, p99 and p99.9 latency from the workload's HDR histogram (< 0.8% error), median over "
               "samples with the min–max range, log scale; µs per operation (arena_churn) or ms per step "
               "(train_step). " + "; ".join(notes) + ".")
    png, svg = finish(fig, "latency", outdir, footnote, written)
    return {"name": "latency", "png": png, "svg": svg,
            "title": "Latency percentiles per configuration (lower is better)", "better": "lower",
            "caption": caption}


# ---------------------------------------------------------------- driver

def make_plots(csv_paths, outdir, machine_note=None, written=None, force=False, baseline=None):
    """Draw every plot the data allows into outdir (a path, or the mbout.Folder of a command
    that writes more there); return the manifest (also written to plots.json).  A path is
    refused (mbout.OutputError) when it holds files plots.py did not write, unless force.
    baseline: the configuration the captions compare against (default: the run's first).

    Raises PlotError (mbcsv.CsvError) for input it refuses (unknown schema, unreadable file, a
    malformed row).
    written, when a list, receives the path of every file written, in order.
    """
    written = [] if written is None else written
    own = not isinstance(outdir, mbout.Folder)
    if own:
        outdir = mbout.Folder(outdir, force, inputs=csv_paths)
    data = load(csv_paths)
    data.baseline = baseline
    # text.parse_math off: a label holding '$' is text, not TeX (an unbalanced one was a traceback)
    plt.rcParams.update({"svg.hashsalt": "mallocbench", "font.size": 10, "axes.titlesize": 10,
                         "path.simplify": True, "text.parse_math": False})
    footnote = machine_footnote(data, machine_note)
    manifest = []
    if data.rows:
        groups = bar_groups(data)
        names = bar_names(data, groups)
        for g in groups:
            manifest.append(draw_bars(data, g, names[g], outdir, footnote, written))
        for draw in (draw_fault_cliff, draw_rss_vs_cpu, draw_rss_timeline, draw_latency):
            entry = draw(data, outdir, footnote, written)
            if entry:
                manifest.append(entry)
    path = outdir.write("plots.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    written.append(path)
    if own:
        outdir.commit()
    return manifest


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plot mallocbench CSVs (schema 3) as PNG and SVG with a manifest.")
    ap.add_argument("csv", nargs="+", help="mallocbench run CSV(s); <name>.meta.json and <name>.rss.csv "
                                           "beside them are read when present")
    ap.add_argument("-o", "--outdir", required=True, help="directory for the PNG/SVG files and plots.json")
    ap.add_argument("--machine-note", help="footnote text naming the machine (default: from the .meta.json)")
    ap.add_argument("--force", action="store_true",
                    help="write into a folder holding files plots.py did not write (they are kept)")
    args = ap.parse_args(argv)
    written = []
    try:
        manifest = make_plots(args.csv, args.outdir, args.machine_note, written, args.force)
    except ImportError as e:  # found missing once the input was read (need())
        raise cli.Fail(f"plots.py: {mbcsv.missing_dependency(e)}", 1) from None
    except (PlotError, mbout.OutputError) as e:
        print(f"plots.py: {e}", file=sys.stderr)
        return mbcsv.EXIT_BAD_INPUT
    except OSError as e:
        print(f"plots.py: cannot write '{e.filename or args.outdir}': {e.strerror}", file=sys.stderr)
        return 1
    for p in written:
        print(p)
    if not manifest:
        print("plots.py: no rows with status ok: nothing to plot", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
