"""plotkit.py - what every figure of plots.py shares: the data (the ok rows grouped, in a fixed
order), each configuration's colour and style, the computations several figures read, and the
drawing helpers (titles, footnote, labels that never overlap, a figure written as PNG and SVG).

A helper of the plots view (plots.py), imported only by it and its figure modules (plotbars.py,
plotfigs.py).  matplotlib and numpy are imported by need() once the input is read; a module
that draws reads them from here when it draws (plotkit.plt), never at import.
"""
import io
import os
import textwrap

from . import mbcsv
from . import mbdata
from . import stats


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
    of scripts/mallocbench/stats.py, the one compare prints) or 'minmax' (too few samples for one)."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None
    med = float(np.median(v))
    ci = stats.median_ci(v) if n >= MIN_CI_SAMPLES else None
    if ci is None:
        return med, v[0], v[-1], "minmax"
    return med, ci[0], ci[1], "ci95"


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


def bar_groups(data):
    """Groups that get a bar figure: all but the inner points of long size sweeps."""
    skip = set()
    for points in sweep_families(data).values():
        if len(points) > MAX_SWEEP_BARS:
            keep = {int(round(x)) for x in np.linspace(0, len(points) - 1, MAX_SWEEP_BARS)}
            skip.update(g for i, (_, g) in enumerate(points) if i not in keep)
    return [g for g in data.group_order if g not in skip]


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
