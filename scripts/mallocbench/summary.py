"""summary.py - a readable table from a mallocbench CSV.

One line per workload and allocator configuration: medians over the samples that ended ok,
with the spread, each configuration against the baseline with the verdict compare gives the
same pair (change.analyse: the paired Hodges-Lehmann ratio, one estimator in every view), and
the kernel work behind the figure, per unit of work (mbdata.work: per MiB where the workload
declares its bytes, per run of a command, per unit of a rate figure).  Reads columns by name
through mbcsv, which refuses a schema it does not know and any malformed row (one line naming
file and row, exit 2).  The verdicts need numpy and scipy (Debian's python3 is used when this
interpreter lacks them).

    scripts/summary.py results/run.csv [--markdown] [--baseline CONFIG] [--runs-per-s]

The ratios are against the run's first configuration unless --baseline names another.  A
command's runs/s is shown as the time of one run, '7.20 s [6.90..8.10]' (median [fastest..
slowest], as hyperfine shows a time); --runs-per-s shows the runs/s themselves.
"""
import argparse
import statistics
import sys

from . import change
from . import cli
from . import mbcsv
from . import mbdata
from . import stats
from . import words


def load(paths):
    """The run (mbdata.Run: .rows, every row whatever its status; .traits from the sidecar);
    mbcsv.CsvError for bad input."""
    return mbdata.load(paths)


num = mbcsv.num  # a finite float, None when not measured


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def spread(vals):
    """Half the range as a share of the median: what one more sample may move by."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    m = statistics.median(vals)
    return (max(vals) - min(vals)) / 2 / m * 100 if m else None


def pct(v):
    return None if v is None else v * 100


def fmt(v, spec, empty="-"):
    return empty if v is None else format(v, spec)


def throughput_text(vals, unit):
    m = med(vals)
    if m is None:
        return "-"
    s = spread(vals)
    # a share (unit fraction) as a percentage, as compare writes it, never '0 fraction'
    return words.fmt_value(m, unit) + (f" ±{s:.0f}%" if s is not None else "")


def time_text(times):
    """A command's time of one run as the summary shows it (hyperfine's form): the median
    over the ok samples and [fastest..slowest] in the median's scale, '7.20 s [6.90..8.10]'."""
    m = med(times)
    if m is None:
        return "-"
    t = [v for v in times if v is not None]
    return words.fmt_value(m, "s") + (f" [{words.fmt_ci((min(t), max(t)), 's', m)}]" if len(t) > 1 else "")


def as_time(unit):
    """Is a figure in this unit shown as a time (a command's runs/s: 1 / the time of a run)?"""
    return unit == "runs/s"


# the counts per unit of work, each column named as its metric's key in change.METRICS (CPU beside them
# is user + sys)
COUNTS = ("faults", "madvise", "munmap", "brk")


def summarize(rows, baseline, order=None, trade_offs=(), res=None, runs_per_s=False):
    """One line per workload and configuration; configurations in `order` (as the run
    was asked for: mbcsv.config_order), others after by name.  The vs column and every
    per-work median come from change.analyse (res: one already made for these rows).  A
    command's runs/s is shown as the time of a run (time_text) unless runs_per_s."""
    ok_rows = [r for r in rows if r["status"] == "ok"]
    if res is None:
        res = change.analyse(ok_rows, baseline=baseline, order={c: i for i, c in enumerate(order or [])} or None,
                              trade_offs=trade_offs)
    cells = {(c.workload, c.params, c.config, c.table): c for c in res if not c.geomean}
    prims = {(c.workload, c.params, c.config): c for c in res if c.primary and not c.geomean}  # the vs column's
    groups = {}
    for r in rows:
        groups.setdefault((r["workload"], r["workload_params"], r["config"]), []).append(r)
    out = []
    for (wl, params, config), rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        bad = [r for r in rs if r["status"] != "ok"]
        t = [num(r, "throughput") for r in ok]
        unit = ok[0]["throughput_unit"] if ok else ""
        per = mbdata.work_unit(ok) if ok else ""

        def cell(table, wl=wl, params=params, config=config):
            return cells.get((wl, params, config, table))

        def median_of(table, c=cell):
            x = c(table)
            return x.median if x else None
        prim = prims.get((wl, params, config))
        timed = as_time(unit) and not runs_per_s
        times = [1 / v if v else None for v in t] if timed else []
        line = {
            "workload": wl, "params": params, "config": config, "_per": per,
            "n": f"{len(ok)}/{len(rs)}",
            "throughput": time_text(times) if timed else throughput_text(t, unit),
            "_t": med(t), "_unit": unit, "_figure": TIME_HEAD if timed else mbdata.figure_name(ok[0]) if ok else "",
            "_time": (med(times), min(x for x in times if x is not None), max(x for x in times if x is not None))
            if timed and any(x is not None for x in times) else None,
            "vs": "baseline" if config == baseline and ok else words.change_words(prim),
            "_cell": prim, "_vs": prim.metric if prim is not None and prim.key != "throughput" else "",
        }
        cpu = median_of(table_of(CPU_KEYS[0]))  # the one estimator: the median of each sample's user + sys
        line["_CPU"] = cpu
        line["CPU"] = words.fmt_value(cpu, "s") if cpu is not None else "-"  # the head says per what
        for col in COUNTS:
            v = median_of(next(m[0] for m in change.METRICS if m[4] == col))
            line[col] = words.fmt(v)
            line["_" + col] = v
        share = med([mbdata.sys_share(r) for r in ok])
        line["sys%"] = fmt(pct(share), ".0f")
        rss = median_of(table_of("peak RSS MiB"))
        line["_share"], line["_rss"] = share, rss
        line["peak RSS MiB"] = fmt(rss, ".0f")
        line["tree PSS MiB"] = fmt(median_of(table_of("tree PSS MiB")), ".0f", "")
        lim = med([num(r, "fraction_of_limit") for r in ok])
        line["of limit"] = fmt(pct(lim), ".0f", "") + ("%" if lim is not None else "")
        for col in ("p50", "p99", "p99.9"):
            v = median_of(table_of(col))
            line[col] = words.fmt_value(v, "us") if v is not None else ""
        line["notes"] = mbdata.printable("; ".join(sorted({f"{r['status']}: {r['message']}" for r in bad}))[:120])
        out.append(line)
    rank = {c: i for i, c in enumerate(order or [])}
    out.sort(key=lambda l: (rank.get(l["config"], len(rank)), l["config"]))
    return out


# the head of a command's time column (its runs/s shown as the time of a run)
TIME_HEAD = "time of a run"
COLS = ["config", "n", "throughput", "vs", "of limit", "CPU", "sys%", "faults", "madvise", "munmap", "brk",
        "peak RSS MiB", "tree PSS MiB", "p50", "p99", "p99.9", "notes"]
OPTIONAL = {"notes", "tree PSS MiB", "of limit", "p50", "p99", "p99.9"}
PER_COLS = {"CPU", "faults", "madvise", "munmap", "brk"}  # headed per the workload's unit of work
# the columns that show one metric, by its key in the registry (mbdata.METRICS); CPU is the metric cpu
METRIC_COLS = {"throughput": "throughput", "sys%": "sys_share", "faults": "faults", "madvise": "madvise",
               "munmap": "munmap", "brk": "brk", "peak RSS MiB": "peak_rss", "tree PSS MiB": "tree_pss",
               "p50": "latency_p50", "p99": "latency_p99", "p99.9": "latency_p999"}
CPU_KEYS = ("cpu",)  # the CPU column: user + sys of each sample, per unit of work


def table_of(col):
    """The table (change's cells' `table`: the registry's name) of a column's metric, by its key."""
    return mbdata.METRIC[METRIC_COLS.get(col, col)].name
# the footer's line for each column, printed only for the columns a table has
EXPLAIN = [
    ("throughput", "{figure}: median over ok samples, ±half the range"),
    ("time", TIME_HEAD + ": one run's time (of the region a command marks, else of the whole command; a server's "
             "client's run): median over ok "
             "samples [fastest..slowest]; its runs/s (1 / time, higher is better) are what vs compares, so 0.5x "
             "takes twice as long (--runs-per-s, compare and every JSON give the runs/s)"),
    ("vs", "vs {baseline}: " + words.ESTIMATOR_TEXT + "; the word is compare's verdict at a 1% floor"),
    ("of limit", "of limit: share of the same work with buffers allocated once (the machine's memcpy limit)"),
    ("CPU", "CPU, faults, madvise, munmap, brk: the median of each sample's user + sys CPU time (compare's CPU), "
            "minor page faults and calls in the measured region per unit of work (per MiB the workload touches, per run of a command, per unit of a rate "
            "figure: mbdata.work){window}"),
    ("faults/MiB", "faults/MiB: 256 = every 4 KiB page of what the workload touches faulted again"),
    ("sys%", "sys%: system share of the region's CPU time ('-' under "
             f"{mbdata.SYS_SHARE_MIN_CPU:g} s of CPU: user and sys are clock-tick times)"),
    ("tree PSS MiB", "tree PSS: commands and servers, the peak of the whole process tree's summed PSS (a shell and "
                     "what it runs, a server and its forks); peak RSS is the first process's alone"),
    ("p50", "p50/p99/p99.9: latency of one op or step, where the workload times them"),
]
IDLE_WINDOW = (" (for {workloads}: the idle window after the free only; memory an allocator gives back at "
               "free() itself, as glibc does, is returned before it, so its calls are not in these columns; "
               "its CPU is the whole process's, so that purging on free counts)")


def render(lines, baseline, markdown, out, idle=(), hints=()):
    """The tables and a footer that explains the columns they have.  idle: the workloads whose
    measured region is an idle window (trait idle_region); hints: lines the figures need beside
    them (a duration-bound command)."""
    cols = COLS
    shown, figures = set(), set()
    by_wl = {}
    for l in lines:
        by_wl.setdefault((l["workload"], l["params"]), []).append(l)

    def order(key):  # workloads by name, sizes in increasing order
        size = param_of(key[1], "size")
        return (key[0], size_key(size) if size else 0, key[1])

    for (wl, params), ls in sorted(by_wl.items(), key=lambda kv: order(kv[0])):
        title = mbdata.workload_title(wl, params)
        used = [c for c in cols if c not in OPTIONAL or any(l[c] for l in ls)]
        shown.update(used)
        figures.update(l["_figure"] for l in ls if l["_figure"] and l["_figure"] != TIME_HEAD)
        if any(l["_figure"] == TIME_HEAD for l in ls):
            shown.add("time")
        fig = {l["_figure"] for l in ls if l["_figure"]}
        per = next((l["_per"] for l in ls if l["_per"]), "")
        if per == "MiB":
            shown.add("faults/MiB")
        # the primary figure's own name in its column head; per-work columns per the unit
        vs = next((l["_vs"] for l in ls if l.get("_vs")), "")  # the primary figure where it is not throughput
        heads = [next(iter(fig)) if c == "throughput" and len(fig) == 1 else
                 f"{c}/{per}" if c in PER_COLS and per else f"{vs} vs {baseline}".lstrip() if c == "vs" else c
                 for c in used]
        table = [[str(l[c]) for c in used] for l in ls]
        if markdown:
            md = mbdata.md_text
            out.write(f"\n### {md(title)}\n\n| " + " | ".join(map(md, heads)) + " |\n|" + "---|" * len(used) + "\n")
            for row in table:
                out.write("| " + " | ".join(map(md, row)) + " |\n")
        else:  # text from the input, printable (mbdata.printable): no control sequence reaches a terminal
            heads, table = list(map(mbdata.printable, heads)), [list(map(mbdata.printable, r)) for r in table]
            widths = [max(len(c), *(len(r[i]) for r in table)) for i, c in enumerate(heads)]
            out.write(f"\n{mbdata.printable(title)}\n")
            out.write("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(heads, widths))).rstrip() + "\n")
            for row in table:
                out.write("  ".join(v.ljust(w) if i == 0 or used[i] == "notes" else v.rjust(w)
                                    for i, (v, w) in enumerate(zip(row, widths))).rstrip() + "\n")
    idle_here = sorted({l["workload"] for l in lines} & set(idle))
    window = IDLE_WINDOW.format(workloads=", ".join(idle_here)) if idle_here else ""
    notes = [text.format(figure=", ".join(sorted(figures)) or "throughput", baseline=baseline, window=window)
             for col, text in EXPLAIN if col in shown and (col != "throughput" or figures)]
    out.write("\n" + "".join(f"{mbdata.printable(n)}.\n" for n in notes + list(hints)))


param_of = mbdata.param_of
size_key = mbdata.size_key


def render_curve(lines, param, markdown, out):
    """One row per value of PARAM, one column pair per configuration: the fault cliff."""
    by_wl = {}
    for l in lines:
        v = param_of(l["params"], param)
        if v is None:
            continue
        rest = mbdata.params_without(l["params"], param)
        by_wl.setdefault((l["workload"], rest), {}).setdefault(v, {})[l["config"]] = l
    for (wl, rest), rows in by_wl.items():
        configs = []
        for cells in rows.values():
            configs += [c for c in cells if c not in configs]
        head = [param] + [f"{c} {what}" for c in configs for what in ("faults/MiB", "GB/s")]
        table = []
        for v in sorted(rows, key=size_key):
            row = [v]
            for c in configs:
                l = rows[v].get(c)
                row += [l["faults"], fmt(l["_t"] / 1e9, ".2f") if l and l["_t"] is not None else "-"] \
                    if l else ["-", "-"]
            table.append(row)
        if markdown:
            md = mbdata.md_text
            out.write(f"\n{md(f'{wl} ({rest}) against {param}')}\n")
            out.write("\n| " + " | ".join(map(md, head)) + " |\n|" + "---|" * len(head) + "\n")
            for row in table:
                out.write("| " + " | ".join(map(md, row)) + " |\n")
        else:
            head, table = list(map(mbdata.printable, head)), [list(map(mbdata.printable, r)) for r in table]
            out.write(f"\n{mbdata.printable(f'{wl} ({rest}) against {param}')}\n")
            widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(head)]
            out.write("  ".join(h.rjust(w) for h, w in zip(head, widths)) + "\n")
            for row in table:
                out.write("  ".join(v.rjust(w) for v, w in zip(row, widths)) + "\n")
    out.write("\nfaults/MiB: 256 = every page of every buffer faulted again (the allocator gave it back).\n")


def main():
    ap = argparse.ArgumentParser(prog="summary.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="mallocbench CSV file(s)")
    ap.add_argument("--baseline", metavar="CONFIG",
                    help="configuration the ratios are against (default: the run's first configuration, "
                         "as its .meta.json lists them - like hyperfine's reference, its first command)")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables instead of text")
    ap.add_argument("--runs-per-s", action="store_true",
                    help="a command's figure as runs/s (1 / its time), not as the time of a run")
    ap.add_argument("--curve", metavar="PARAM",
                    help="one row per value of a swept workload parameter (e.g. size), allocators across")
    args = ap.parse_args()
    try:
        run = load(args.csv)
        rows = run.rows
        if not rows:
            raise cli.Fail("no rows")
        order = mbcsv.config_order(args.csv, rows)
        if args.baseline is not None and args.baseline not in order:
            raise cli.Fail(f"no configuration '{args.baseline}' in {' '.join(args.csv)} (it has: {', '.join(order)})")
        args.baseline = args.baseline or order[0]
    except mbcsv.CsvError as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT)
    try:  # the verdicts: Debian's interpreter when this one lacks scipy
        stats.require_scipy()
    except ImportError as e:
        raise cli.Fail(mbcsv.missing_dependency(e))
    res = change.analyse(run.ok, baseline=args.baseline, order={c: i for i, c in enumerate(order)},
                          trade_offs=set(run.with_trait("trade_off")))
    lines = summarize(rows, args.baseline, order, res=res, runs_per_s=args.runs_per_s)
    if args.curve:
        render_curve(lines, args.curve, args.markdown, sys.stdout)
        return
    first = words.first_lines(run, res)
    if first:
        out = sys.stdout
        out.write("".join(f"{'- ' if args.markdown else ''}{mbdata.md_text(x) if args.markdown else mbdata.printable(x)}\n"
                          for x in first))
    hints = [res.sequential] if res.sequential else []  # what the vs column says instead of a p
    for (wl, params), by_config in run.groups.items():
        why = mbdata.duration_bound(by_config)
        if why:
            hints.append(f"{mbdata.workload_title(wl, params)}: its runs/s cannot tell the configurations apart: "
                         f"{why}; give `mallocbench exec --metric REGEX` a figure the command prints")
    render(lines, args.baseline, args.markdown, sys.stdout, run.with_trait("idle_region"), hints)


if __name__ == "__main__":
    sys.exit(cli.run(main))
