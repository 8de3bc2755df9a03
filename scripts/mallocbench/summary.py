#!/usr/bin/env python3
"""summary.py - a readable table from a mallocbench CSV.

One line per workload and allocator configuration: medians over the samples
that ended ok, with the spread, and the kernel work behind the throughput.
Reads columns by name through scripts/mbcsv.py, which refuses a schema it does
not know and any malformed row (one line naming file and row, exit 2).
Standard library only, so any python3 runs it.

    scripts/summary.py results/run.csv [--markdown] [--baseline CONFIG]

The ratios are against the run's first configuration unless --baseline names another.
"""
import argparse
import os
import statistics
import sys

from . import cli
from . import mbcsv
from . import mbdata


def die(msg, status=1):
    raise cli.Fail(f"summary.py: {msg}", status)


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
    if unit == "fraction":   # a share, not a rate: as a percentage, never '0 fraction'
        return f"{m * 100:.0f}%" + (f" ±{s:.0f}%" if s is not None else "")
    scaled, u = (m / 1e9, "GB/s") if unit == "B/s" else (m, unit)
    return f"{scaled:.3g} {u}" + (f" ±{s:.0f}%" if s is not None else "")


def ratio_means_something(unit, base):
    """A ratio to the baseline's figure is printed for a rate or a size with a positive
    baseline; a fraction's ratio (0.5 of 0.98 released) or one to 0 says nothing."""
    return bool(base) and base > 0 and unit != "fraction"


def summarize(rows, baseline, order=None):
    """One line per workload and configuration; configurations in `order` (as the run
    was asked for: mbcsv.config_order), others after by name."""
    return _lines(rows, baseline, order)


def _lines(rows, baseline, order):
    groups = {}
    for r in rows:
        key = (r["workload"], r["workload_params"], r["config"])
        groups.setdefault(key, []).append(r)
    out = []
    base = {}
    for (wl, params, config), rs in groups.items():
        ok = [r for r in rs if r["status"] == "ok"]
        bad = [r for r in rs if r["status"] != "ok"]
        t = [num(r, "throughput") for r in ok]
        gib_faults = [mbdata.faults_per_mib(r) for r in ok]
        user = med([num(r, "region_user_s") for r in ok])
        sys_ = med([num(r, "region_sys_s") for r in ok])
        line = {
            "workload": wl, "params": params, "config": config,
            "n": f"{len(ok)}/{len(rs)}",
            "throughput": throughput_text(t, ok[0]["throughput_unit"] if ok else ""),
            "_t": med(t), "_unit": ok[0]["throughput_unit"] if ok else "", "_figure": ok[0]["metric"] if ok else "",
            "faults/MiB": fmt(med(gib_faults), ".1f", ""),
            "faults/run": fmt(med([mbdata.faults_per_run(r) for r in ok]), ".0f", ""),
            "madvise": fmt(med([num(r, "region_madvise_calls") for r in ok]), ".0f"),
            "munmap": fmt(med([num(r, "region_munmap_calls") for r in ok]), ".0f"),
            "brk": fmt(med([num(r, "region_brk_calls") for r in ok]), ".0f"),
            "sys%": fmt(sys_ / (user + sys_) * 100 if user is not None and sys_ is not None and user + sys_ > 0
                        else None, ".0f"),
            "peak RSS MiB": fmt(med([num(r, "rss_peak_kib") for r in ok]) / 1024
                                if med([num(r, "rss_peak_kib") for r in ok]) is not None else None, ".0f"),
            "tree PSS MiB": fmt(med([mbdata.tree_pss_mib(r) for r in ok]), ".0f", ""),
            "of limit": fmt(pct(med([num(r, "fraction_of_limit") for r in ok])), ".0f", "") + (
                "%" if med([num(r, "fraction_of_limit") for r in ok]) is not None else ""),
            "p50 us": fmt(med([num(r, "latency_p50_us") for r in ok]), ".3g", ""),
            "p99 us": fmt(med([num(r, "latency_p99_us") for r in ok]), ".3g", ""),
            "p99.9 us": fmt(med([num(r, "latency_p999_us") for r in ok]), ".3g", ""),
            "notes": mbdata.printable("; ".join(sorted({f"{r['status']}: {r['message']}" for r in bad}))[:120]),
        }
        if config == baseline:
            base[(wl, params)] = line["_t"]
        out.append(line)
    rank = {c: i for i, c in enumerate(order or [])}
    out.sort(key=lambda l: (rank.get(l["config"], len(rank)), l["config"]))
    for line in out:
        b = base.get((line["workload"], line["params"]))
        line[f"vs {baseline}"] = (f"{line['_t'] / b:.2f}x" if ratio_means_something(line["_unit"], b)
                                  and line["_t"] is not None else "-")
    return out


COLS = ["config", "n", "throughput", "vs", "of limit", "faults/MiB", "faults/run", "madvise", "munmap", "brk",
        "sys%", "peak RSS MiB", "tree PSS MiB", "p50 us", "p99 us", "p99.9 us", "notes"]
OPTIONAL = {"notes", "tree PSS MiB", "of limit", "faults/MiB", "faults/run", "p50 us", "p99 us", "p99.9 us"}
# the footer's line for each column, printed only for the columns a table has
EXPLAIN = [
    ("throughput", "{figure}: median over ok samples, ±half the range"),
    ("vs", "vs {baseline}: ratio to the baseline's median ('-' for a fraction or a zero baseline: no ratio means anything)"),
    ("of limit", "of limit: share of the same work with buffers allocated once (the machine's memcpy limit)"),
    ("faults/MiB", "faults/MiB: minor page faults in the measured region per MiB touched (256 = every 4 KiB page "
                   "faulted again)"),
    ("faults/run", "faults/run: minor page faults in the measured region of one run (no bytes touched are known)"),
    ("madvise", "madvise/munmap/brk: calls per run in the measured region{window}"),
    ("sys%", "sys%: system share of its CPU time"),
    ("tree PSS MiB", "tree PSS: commands and servers, the peak of the whole process tree's summed PSS (a shell and "
                     "what it runs, a server and its forks); peak RSS is the first process's alone"),
    ("p50 us", "p50/p99/p99.9: latency of one op or step, where the workload times them"),
]
IDLE_WINDOW = (" (for {workloads}: the idle window after the free only; memory an allocator gives back at "
               "free() itself, as glibc does, is returned before it, so its calls are not in these columns)")


def render(lines, baseline, markdown, out, idle=(), hints=()):
    """The tables and a footer that explains the columns they have.  idle: the workloads whose
    measured region is an idle window (trait idle_region); hints: lines the figures need beside
    them (a duration-bound command)."""
    cols = [c if c != "vs" else f"vs {baseline}" for c in COLS]
    shown, figures = set(), set()
    by_wl = {}
    for l in lines:
        by_wl.setdefault((l["workload"], l["params"]), []).append(l)

    def order(key):  # workloads by name, sizes in increasing order
        size = param_of(key[1], "size")
        return (key[0], size_key(size) if size else 0, key[1])

    for (wl, params), ls in sorted(by_wl.items(), key=lambda kv: order(kv[0])):
        title = f"{wl} ({mbdata.params_shown(params)})"
        used = [c for c in cols if c not in OPTIONAL or any(l[c] for l in ls)]
        shown.update("vs" if c.startswith("vs ") else c for c in used)
        figures.update(l["_figure"] for l in ls if l["_figure"])
        fig = {l["_figure"] for l in ls if l["_figure"]}
        # the primary figure's own name in its column head
        heads = [next(iter(fig)) if c == "throughput" and len(fig) == 1 else c for c in used]
        table = [[str(l[c]) for c in used] for l in ls]
        if markdown:
            md = mbdata.md_text
            out.write(f"\n### {md(title)}\n\n| " + " | ".join(map(md, heads)) + " |\n|" + "---|" * len(used) + "\n")
            for row in table:
                out.write("| " + " | ".join(map(md, row)) + " |\n")
        else:
            widths = [max(len(c), *(len(r[i]) for r in table)) for i, c in enumerate(heads)]
            out.write(f"\n{title}\n")
            out.write("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                                for i, (c, w) in enumerate(zip(heads, widths))).rstrip() + "\n")
            for row in table:
                out.write("  ".join(v.ljust(w) if i == 0 or used[i] == "notes" else v.rjust(w)
                                    for i, (v, w) in enumerate(zip(row, widths))).rstrip() + "\n")
    idle_here = sorted({l["workload"] for l in lines} & set(idle))
    window = IDLE_WINDOW.format(workloads=", ".join(idle_here)) if idle_here else ""
    notes = [text.format(figure=", ".join(sorted(figures)) or "throughput", baseline=baseline, window=window)
             for col, text in EXPLAIN if col in shown]
    out.write("\n" + "".join(f"{n}.\n" for n in notes + list(hints)))


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
                row += [l["faults/MiB"], fmt(l["_t"] / 1e9, ".2f") if l and l["_t"] is not None else "-"] \
                    if l else ["-", "-"]
            table.append(row)
        if markdown:
            md = mbdata.md_text
            out.write(f"\n{md(f'{wl} ({rest}) against {param}')}\n")
            out.write("\n| " + " | ".join(map(md, head)) + " |\n|" + "---|" * len(head) + "\n")
            for row in table:
                out.write("| " + " | ".join(map(md, row)) + " |\n")
        else:
            out.write(f"\n{wl} ({rest}) against {param}\n")
            widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(head)]
            out.write("  ".join(h.rjust(w) for h, w in zip(head, widths)) + "\n")
            for row in table:
                out.write("  ".join(v.rjust(w) for v, w in zip(row, widths)) + "\n")
    out.write("\nfaults/MiB: 256 = every page of every buffer faulted again (the allocator gave it back).\n")


def have_numpy():
    try:
        import numpy  # noqa: F401
        return True
    except ImportError:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="mallocbench CSV file(s)")
    ap.add_argument("--baseline", metavar="CONFIG",
                    help="configuration the ratios are against (default: the run's first configuration, "
                         "as its .meta.json lists them - like hyperfine's reference, its first command)")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables instead of text")
    ap.add_argument("--curve", metavar="PARAM",
                    help="one row per value of a swept workload parameter (e.g. size), allocators across")
    args = ap.parse_args()
    try:
        run = load(args.csv)
        rows = run.rows
        if not rows:
            die("no rows")
        order = mbcsv.config_order(args.csv, rows)
        if args.baseline is not None and args.baseline not in order:
            die(f"no configuration '{args.baseline}' in {' '.join(args.csv)} (it has: {', '.join(order)})")
        args.baseline = args.baseline or order[0]
        lines = summarize(rows, args.baseline, order)
    except mbcsv.CsvError as e:
        die(str(e), mbcsv.EXIT_BAD_INPUT)
    if args.curve:
        render_curve(lines, args.curve, args.markdown, sys.stdout)
    else:
        hints = []
        idle_keys = {k for k in run.groups if k[0] in set(run.with_trait("idle_region"))}
        for (wl, params), by_config in run.groups.items():
            why = mbdata.duration_bound(by_config)
            if why:
                hints.append(f"{wl} ({mbdata.params_shown(params)}): its runs/s cannot tell the configurations apart: "
                             f"{why}; give `mallocbench exec --metric REGEX` a figure the command prints")
            # the resolution each comparison reached: the smallest change its blocks could flag
            # (its CI needs numpy, which a plain summary does not: without it, none is said)
            reach = []
            if not have_numpy():
                continue
            base = [r for r in by_config.get(args.baseline, []) if r["status"] == "ok"]
            for cfg in (c for c in order if c in by_config and c != args.baseline):
                ok = [r for r in by_config[cfg] if r["status"] == "ok"]
                res = mbdata.resolution(mbdata.ratio_change(base, ok)) if base and ok else None
                reach.append(f"{cfg} {'+-%.1f%%' % (res * 100) if res is not None else 'none'}")
            if reach and (wl, params) not in idle_keys:
                hints.append(f"resolution reached, {wl} ({mbdata.params_shown(params)}), vs {args.baseline}: "
                             + ", ".join(reach) + " (the paired 95% CI's half-width: the smallest change these "
                             "blocks could flag; none: too few blocks)")
        hints += [f"no ok sample: {x}" for x in mbdata.no_ok_sample(run)]
        render(lines, args.baseline, args.markdown, sys.stdout, run.with_trait("idle_region"), hints)


if __name__ == "__main__":
    sys.exit(cli.run(main))
