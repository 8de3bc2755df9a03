"""report.py - `mallocbench report RUN.csv`: the report of a run, from its CSV and sidecars
only: the lines a reader must see first (configurations with no ok sample, a machine that was
not quiet, disturbed samples, the resolution each comparison reached), a short "what this
shows" per workload written from the numbers (who re-faults and from which size, what share of
CPU is system time, which setting removed the faults and at what RSS cost), the summary
tables, the plots, and the statistics against the baseline.  Every ratio in it is compare's
paired estimate with compare's verdict word (one answer in every view).

    mallocbench report RUN.csv [--markdown | --json | --html] [-o DIR] [--baseline CONFIG]
                               [--no-plots] [--force]

Without -o the report goes to stdout, without plots.  With -o DIR it is written as
DIR/report.md (.json, .html) beside its plots and compare.csv (`make compare` writes
results/compare-<date>/ so).  The baseline is the run's first configuration unless --baseline
names another.

The plots need matplotlib (Debian's /usr/bin/python3 with python3-matplotlib): without it the
report is not written and the line on stderr says what to install, exit 1, unless --no-plots
asks for none.  Input that is not a mallocbench CSV of the schema (mbcsv): one line naming
file and row, exit 2.
"""
import argparse
import html
import io
import json
import os
import sys

from . import change
from . import cli
from . import compare
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats
from . import summary
from . import words

REFAULT = 128  # faults per MiB: half the pages of every buffer faulted again
CPU_METRIC = next(m for m in change.METRICS if m[4] == "user_cpu")


med = mbdata.median_of


faults_per_mib = mbdata.faults_per_mib
sys_share = mbdata.sys_share
param = mbdata.param_of
num = mbcsv.num


def names(items):
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def what_it_shows(run, baseline):
    """Sentences per workload group, from the medians of the run's ok rows (mbdata.Run)."""
    groups = run.groups
    rank = run.config_rank
    out = []
    for (wl, rest), sizes in run.curves("size_curve", "size").items():
        points = {size: groups[g] for size, g in sizes.items()}
        if len(points) < 2:
            continue
        cliffs = {}
        for size in sorted(points, key=mbdata.size_key):
            for config, rs in points[size].items():
                f = med(rs, faults_per_mib)
                if f is not None and f >= REFAULT and config not in cliffs:
                    cliffs[config] = size
        allc = {c for p in points.values() for c in p}
        keep = sorted(allc - set(cliffs), key=rank)
        lines = [f"{c} re-faults from {cliffs[c]}" for c in sorted(cliffs, key=rank)]
        if keep:
            lines.append(f"{names(keep)} {'keeps' if len(keep) == 1 else 'keep'} their pages at every size "
                         f"measured (up to {max(points, key=mbdata.size_key)})")
        out.append((f"{wl} across sizes ({rest})", "; ".join(lines) + ": from that size on, every buffer "
                    "freed is given back to the kernel and faulted in again on the next step."))

    def order(item):
        (wl, params), _ = item
        size = param(params, "size")
        return (wl, mbdata.size_key(size) if size else 0, params)

    for (wl, params), configs in sorted(groups.items(), key=order):
        text = []
        # the primary figure (mbdata.primary_key: the workload's own, or the CPU where the sidecar says so;
        # a trade-off's share is its own figure whatever the run's)
        prim = mbdata.METRIC["throughput" if run.traits(wl) & {"trade_off", "idle_region"} else
                             mbdata.primary_key([r for rs in configs.values() for r in rs])]
        meds = {c: med(rs, prim.fn) for c, rs in configs.items()}
        unit = mbdata.unit_of(prim, [r for rs in configs.values() for r in rs])
        refault = {c: med(rs, faults_per_mib) for c, rs in configs.items()}
        bad = [c for c in sorted(configs, key=rank) if (refault[c] or 0) >= REFAULT]
        if bad:
            how = []
            for c in bad:
                rs = configs[c]
                calls = {k: med(rs, lambda r, k=k: num(r, f"region_{k}_calls")) or 0
                         for k in ("madvise", "munmap", "brk")}
                via = max(calls, key=calls.get)
                sh = med(rs, sys_share)
                how.append(f"{c} ({refault[c]:.0f} faults/MiB, via {via}"
                           + (f", {sh * 100:.0f}% of its CPU in the kernel)" if sh is not None else ")"))
            text.append(f"Re-faults the memory it touches again: {'; '.join(how)}.")
        elif any(v is not None for v in refault.values()):
            text.append("No configuration faults its memory in again (all below "
                        f"{REFAULT} faults/MiB).")
        good = [c for c in meds if meds[c] is not None]
        if good and unit:
            sign = -1 if (prim.better or mbcsv.better(next(iter(configs.values()))[0])) == "lower" else 1
            best = max(good, key=lambda c: (sign * meds[c], -rank(c)[0]))
            if "trade_off" in run.traits(wl) or "idle_region" in run.traits(wl):
                parts = [f"{c} {words.fmt_value(meds[c], unit)}" for c in sorted(good, key=rank)]
                text.append("Share of the freed memory given back to the kernel by the end of the idle: "
                            + ", ".join(parts) + " (a trade-off, not better or worse: memory kept is not "
                            "faulted in again, memory given back is).")
            elif baseline in configs and best != baseline:
                cell = change.pair(configs[baseline], configs[best],
                                    trade_off="trade_off" in run.traits(wl))
                text.append(f"Best: {best}, {words.change_words(cell)} against {baseline} ({unit}).")
        for c, rs in sorted(configs.items(), key=lambda kv: rank(kv[0])):
            default = run.family_default(c)
            base = configs.get(default) if default else None
            if not base:
                continue
            f0, f1 = med(base, faults_per_mib), med(rs, faults_per_mib)
            r0 = med(base, mbdata.peak_memory_mib)  # commands and servers: the tree's PSS
            r1 = med(rs, mbdata.peak_memory_mib)
            bits = []
            if f0 and f0 >= REFAULT and f1 is not None:
                bits.append(f"removes {(1 - f1 / f0) * 100:.0f}% of the faults")
            trade = "trade_off" in run.traits(wl)
            figure = change.pair(base, rs, trade_off=trade)
            if figure and figure.change is not None:
                bits.append(f"{figure.metric} {words.change_words(figure)}")
            cpu = change.pair(base, rs, metric=CPU_METRIC)
            if cpu and cpu.change is not None:
                bits.append(f"user CPU per {mbdata.work_unit(rs)} {words.change_words(cpu)}")
            if r0 and r1:
                bits.append(f"{mbdata.peak_memory_name(base + rs)} {r1 - r0:+.0f} MiB")
            if bits:
                cfg = run.configs[c]
                text.append(f"{cfg.tunables} on {cfg.family}: " + ", ".join(bits) + " against its defaults.")
        if text:
            out.append((mbdata.workload_title(wl, params), " ".join(text)))
    return out


# ---- HTML: the report's own Markdown, rendered (the subset report.md uses) ---------------------

def md_to_html(md, title="mallocbench report"):
    """The report's Markdown as one self-contained HTML page (no script, no external file but
    its plots beside it): words' one renderer inside the page's own head and style."""
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src \'self\'; '
        'style-src \'unsafe-inline\'">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font:15px/1.45 sans-serif;max-width:72em;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;"
        "text-align:right}td:first-child,th:first-child{text-align:left}img{max-width:100%}"
        "code{background:#f3f3f3}</style></head><body>",
        words.markdown_html(md), "</body></html>"]) + "\n"


# ---- the report ---------------------------------------------------------------------------------

JSON_SCHEMA = "mallocbench-report/1"
SUMMARY_KEYS = ("workload", "params", "config", "n", "throughput", "vs", "CPU", "sys%", "faults", "madvise",
                "munmap", "brk", "peak RSS MiB", "tree PSS MiB", "of limit", "p50", "p99", "p99.9", "notes")


def summary_record(line):
    """One summary line as JSON: its figures as numbers (per its unit of work) and the texts
    the tables print; the change against the baseline is compare's record's (same estimate)."""
    cell = line.get("_cell")
    ch = cell.change if cell else None
    return {"workload": line["workload"], "params": line["params"], "config": line["config"], "n": line["n"],
            "figure": line["_figure"], "unit": line["_unit"], "median": line["_t"], "unit_of_work": line["_per"],
            "cpu_s_per_work": line.get("_CPU"), "faults_per_work": line.get("_faults"),
            "madvise_per_work": line.get("_madvise"), "munmap_per_work": line.get("_munmap"),
            "brk_per_work": line.get("_brk"), "sys_share": line.get("_share"), "peak_rss_mib": line.get("_rss"),
            "time_s": None if not line.get("_time") else dict(zip(("median", "min", "max"), line["_time"])),
            "change": None if ch is None else {"estimate": words.json_number(ch.estimate), "lo": words.json_number(ch.lo),
                                               "hi": words.json_number(ch.hi), "kind": ch.kind,
                                               "unit": words.change_unit(cell), "paired": ch.paired,
                                               "verdict": cell.verdict},
            "text": {k: line.get(k) for k in SUMMARY_KEYS}}
# the statistics tables the report shows, by the metrics' keys in the registry (mbdata.METRICS)
STAT_TABLES = ("throughput", "user_cpu", "sys_cpu", "faults", "peak_rss", "tree_pss", "latency_p99")


def build(run, csv_path, baseline, folder, plots):
    """(markdown, data) of the report: data holds every part as JSON-ready values (schema
    JSON_SCHEMA), the Markdown says the same in sentences and tables."""
    rows = run.ok
    order = run.config_order
    meta = run.metas[0] if run.metas else {}
    m = meta.get("machine", {})
    trade = set(run.with_trait("trade_off"))
    res = change.analyse(rows, baseline=baseline, floor=0.01, order=change.config_order(rows, [csv_path]),
                          trade_offs=trade)
    first = words.first_lines(run, res)
    shows = what_it_shows(run, baseline)
    lines = summary.summarize(run.rows, baseline, order, res=res)
    data = {"schema": JSON_SCHEMA, "data": os.path.basename(csv_path), "ok_samples": len(rows),
            "samples": len(run.rows), "baseline": baseline, "machine": m, "started": meta.get("started"),
            "commit": meta.get("git_commit"), "command": meta.get("command"), "first_lines": first,
            "what_this_shows": [{"title": a, "text": b} for a, b in shows],
            "summary": [summary_record(l) for l in lines],
            "comparison": compare.records(res), "plots": []}
    md = io.StringIO()
    md.write("# mallocbench report\n\n")
    # every text from the CSV or its sidecar is escaped (mbdata.md_text, md_code): shown as text
    t, code = mbdata.md_text, mbdata.md_code
    md.write(f"- data: {code(os.path.basename(csv_path))} ({len(rows)} ok samples of {len(run.rows)})\n")
    if meta:
        md.write(f"- machine: {t(m.get('cpu_model'))}, {t(m.get('cores_online'))} cores, "
                 f"{(m.get('mem_total_kib') or 0) / 2**20:.0f} GiB, kernel {t(m.get('kernel'))}, THP "
                 f"{t(m.get('thp_enabled'))}, glibc {t(m.get('glibc_version'))}\n")
        md.write(f"- started {t(meta.get('started'))}, commit {code(meta.get('git_commit'))}\n")
        md.write(f"- command: {code(' '.join(map(str, meta.get('command', []))))}\n")
    if first:
        md.write("\n## Read this first\n\n" + "".join(f"- {t(x)}\n" for x in first))
    md.write("\n## What this shows\n\n")
    for title, text in shows:
        md.write(f"- **{t(title)}**: {t(text)}\n")
    md.write("\n## Summary\n")
    buf = io.StringIO()
    summary.render(lines, baseline, True, buf, run.with_trait("idle_region"))
    md.write(buf.getvalue())
    md.write("\n## Plots\n")
    if plots is None:
        md.write("\nNot drawn (" + ("--no-plots" if folder else "give -o DIR to draw them") + ").\n")
    else:
        for p in plots.make_plots([csv_path], folder, baseline=baseline):
            data["plots"].append({"title": p["title"], "png": os.path.basename(p["png"]),
                                  "svg": os.path.basename(p["svg"]) if p.get("svg") else None,
                                  "caption": p.get("caption", "")})
            md.write(f"\n### {t(p['title'])}\n\n![{mbdata.md_alt(p['title'])}]({os.path.basename(p['png'])})\n\n"
                     f"{t(p.get('caption', ''))}\n")
    md.write("\n## Statistics against the baseline\n")
    md.write(f"\nEach configuration against {t(baseline)}, paired by block: the change is the Hodges-Lehmann "
             "estimate of the per-block ratio with its confidence interval from the exact Wilcoxon signed-rank "
             "test. " + words.VERDICT_TEXT.format(floor="1%") + "\n")
    shown = res.tables({mbdata.METRIC[k].name for k in STAT_TABLES})
    if any(not c.is_base for c in shown):
        buf = io.StringIO()
        compare.render(shown, True, buf)
        md.write(buf.getvalue())
        if folder:
            md.write("\nEvery metric, every configuration: `compare.csv` beside this report.\n")
    else:
        md.write("\nNo baseline configuration to compare against.\n")
    return md.getvalue(), data, res


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mallocbench report", description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    fmt = ap.add_mutually_exclusive_group()
    fmt.add_argument("--markdown", action="store_const", dest="format", const="md",
                     help="Markdown (the default)")
    fmt.add_argument("--json", action="store_const", dest="format", const="json",
                     help="every part as JSON (schema " + JSON_SCHEMA + ", docs/output.md)")
    fmt.add_argument("--html", action="store_const", dest="format", const="html",
                     help="one HTML page (its plots beside it with -o)")
    ap.add_argument("-o", "--outdir", help="write DIR/report.md (.json, .html), its plots and compare.csv "
                                           "(default: the report on stdout, no plots)")
    ap.add_argument("--baseline", metavar="CONFIG",
                    help="configuration the others are compared against (default: the run's first "
                         "configuration, as its .meta.json lists them - like hyperfine's reference, its first command)")
    ap.add_argument("--no-plots", action="store_true", help="write the report without plots (no matplotlib needed)")
    ap.add_argument("--force", action="store_true",
                    help="write into a folder holding files this report did not write (they are kept)")
    args = ap.parse_args(argv)
    args.format = args.format or "md"
    folder = None
    if args.outdir:
        try:  # refused before any work: a folder of someone else's files, the input inside it replaced
            folder = mbout.Folder(args.outdir, args.force, inputs=[args.csv])
        except mbout.OutputError as e:
            raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT)
    try:  # the input first: a refusal pays for no scipy or matplotlib import
        run = mbdata.load(args.csv)
    except mbcsv.CsvError as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT)
    plots = None
    if folder and not args.no_plots:
        from . import plots  # imports no matplotlib until need()
        try:
            plots.need()
        except ImportError as e:
            raise cli.Fail(f"{mbcsv.missing_dependency(e)}, or pass --no-plots")
    try:  # the statistics need scipy: Debian's interpreter when this one lacks it
        stats.require_scipy()
    except ImportError as e:
        raise cli.Fail(mbcsv.missing_dependency(e))
    if not run.ok:
        raise cli.Fail(f"no ok rows in '{args.csv}'")
    order = run.config_order
    if args.baseline is not None and args.baseline not in order:
        raise cli.Fail(f"no configuration '{args.baseline}' in {args.csv} (it has: {', '.join(order)})")
    baseline = args.baseline or order[0]
    md, data, res = build(run, args.csv, baseline, folder, plots)
    text = {"md": md, "json": json.dumps(data, indent=1, default=str) + "\n",
            "html": md_to_html(md)}[args.format]
    if not folder:
        sys.stdout.write(text)
        return 0
    try:
        if any(not c.is_base for c in res):
            compare.write_csv(res, folder.file("compare.csv"), force=True, inputs=[args.csv])
        out = folder.write("report." + args.format, text)
        folder.commit()
    except mbout.OutputError as e:
        raise cli.Fail(str(e))
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
