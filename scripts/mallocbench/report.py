#!/usr/bin/python3
"""report.py - results/compare-<date>/report.md from a mallocbench CSV: the
summary tables, the statistics against the baseline, the plots, and a short
"what this shows" per workload written from the numbers (who re-faults and
from which size, what share of CPU is system time, which setting removed the
faults and at what RSS cost).  Reads only the CSV and its sidecars.

    report.py RUN.csv -o OUTDIR [--baseline CONFIG] [--no-plots]

The baseline is the run's first configuration unless --baseline names another.

The plots need matplotlib (Debian's /usr/bin/python3 with python3-matplotlib):
without it the report is not written and the line on stderr says what to
install, exit 1, unless --no-plots asks for none.  Input that is not a
mallocbench CSV of schema 3 (scripts/mbcsv.py): one line naming file and row,
exit 2.
"""
import argparse
import io
import os
import sys

from . import cli
from . import compare
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats
from . import summary

REFAULT = 128  # faults per MiB: half the pages of every buffer faulted again


def med(rows, fn):
    vals = [v for v in (fn(r) for r in rows) if v is not None]
    return stats.median(vals) if vals else None


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
        meds = {c: med(rs, lambda r: num(r, "throughput")) for c, rs in configs.items()}
        unit = next(iter(configs.values()))[0]["throughput_unit"]
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
            best = max(good, key=lambda c: meds[c])
            if "idle_region" in run.traits(wl):
                parts = [f"{c} {meds[c]:.2f}" for c in sorted(good, key=rank)]
                text.append("Share of the freed memory given back to the kernel by the end of the idle: "
                            + ", ".join(parts) + ".")
            elif baseline in meds and meds[baseline]:
                text.append(f"Fastest: {best} at {meds[best] / meds[baseline]:.2f}x {baseline} "
                            f"({unit}).")
        for c, rs in sorted(configs.items(), key=lambda kv: rank(kv[0])):
            default = run.family_default(c)
            base = configs.get(default) if default else None
            if not base:
                continue
            f0, f1 = med(base, faults_per_mib), med(rs, faults_per_mib)
            r0 = med(base, mbdata.peak_memory_mib)  # commands and servers: the tree's PSS
            r1 = med(rs, mbdata.peak_memory_mib)
            t0, t1 = med(base, lambda r: num(r, "throughput")), meds[c]
            c0 = med(base, mbdata.region_cpu_s)
            c1 = med(rs, mbdata.region_cpu_s)
            bits = []
            if f0 and f0 >= REFAULT and f1 is not None:
                bits.append(f"removes {(1 - f1 / f0) * 100:.0f}% of the faults")
            if t0 and t1:
                bits.append(f"throughput {t1 / t0:.2f}x")
            if c0 and c1 is not None:
                bits.append(f"CPU {c1 / c0:.2f}x")
            if r0 and r1:
                bits.append(f"{mbdata.peak_memory_name(base + rs)} {r1 - r0:+.0f} MiB")
            if bits:
                cfg = run.configs[c]
                text.append(f"{cfg.tunables} on {cfg.family}: " + ", ".join(bits) + " against its defaults.")
        if text:
            out.append((f"{wl} ({params})", " ".join(text)))
    return out


def die(msg, status=1):
    raise cli.Fail(f"report.py: {msg}", status)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--outdir", required=True)
    ap.add_argument("--baseline", metavar="CONFIG",
                    help="configuration the others are compared against (default: the run's first "
                         "configuration, as its .meta.json lists them - like hyperfine's reference, its first command)")
    ap.add_argument("--no-plots", action="store_true", help="write the report without plots (no matplotlib needed)")
    ap.add_argument("--force", action="store_true",
                    help="write into a folder holding files this report did not write (they are kept)")
    args = ap.parse_args(argv)
    try:  # refused before any work: a folder of someone else's files, the input inside it replaced
        folder = mbout.Folder(args.outdir, args.force, inputs=[args.csv])
    except mbout.OutputError as e:
        die(str(e), mbcsv.EXIT_BAD_INPUT)
    plots = None
    if not args.no_plots:
        try:
            from . import plots
        except ImportError as e:
            die(f"{mbcsv.missing_dependency(e)}, or pass --no-plots")
        plots.use_file_backend()
    try:  # the statistics need scipy: Debian's interpreter when this one lacks it
        stats.require_scipy()
    except ImportError as e:
        die(mbcsv.missing_dependency(e))
    try:
        run = mbdata.load(args.csv)
        rows = run.ok
    except mbcsv.CsvError as e:
        die(str(e), mbcsv.EXIT_BAD_INPUT)
    if not rows:
        die(f"no ok rows in '{args.csv}'")
    order = run.config_order
    if args.baseline is not None and args.baseline not in order:
        die(f"no configuration '{args.baseline}' in {args.csv} (it has: {', '.join(order)})")
    args.baseline = args.baseline or order[0]
    meta = run.metas[0] if run.metas else {}
    m = meta.get("machine", {})
    md = io.StringIO()
    md.write("# mallocbench report\n\n")
    # every text from the CSV or its sidecar is escaped (mbdata.md_text, md_code): shown as text
    t, code = mbdata.md_text, mbdata.md_code
    md.write(f"- data: {code(os.path.basename(args.csv))} ({len(rows)} ok samples)\n")
    if meta:
        md.write(f"- machine: {t(m.get('cpu_model'))}, {t(m.get('cores_online'))} cores, "
                 f"{(m.get('mem_total_kib') or 0) / 2**20:.0f} GiB, kernel {t(m.get('kernel'))}, THP "
                 f"{t(m.get('thp_enabled'))}, glibc {t(m.get('glibc_version'))}\n")
        md.write(f"- started {t(meta.get('started'))}, commit {code(meta.get('git_commit'))}\n")
        md.write(f"- command: {code(' '.join(map(str, meta.get('command', []))))}\n")
    failed = mbdata.no_ok_sample(run)
    if failed:
        md.write("\n## Configurations with no ok sample\n\nLeft out of every table and plot below, because none "
                 "of their samples finished:\n\n" + "".join(f"- {t(x)}\n" for x in failed))
    md.write("\n## What this shows\n\n")
    for title, text in what_it_shows(run, args.baseline):
        md.write(f"- **{t(title)}**: {t(text)}\n")
    md.write("\n## Summary\n")
    buf = io.StringIO()
    summary.render(summary.summarize(rows, args.baseline, order), args.baseline, True, buf)
    md.write(buf.getvalue())
    md.write("\n## Plots\n")
    if plots is None:
        md.write("\nNot drawn (--no-plots).\n")
    else:
        for p in plots.make_plots([args.csv], folder):
            md.write(f"\n### {t(p['title'])}\n\n![{mbdata.md_alt(p['title'])}]({os.path.basename(p['png'])})\n\n"
                     f"{t(p.get('caption', ''))}\n")
    md.write("\n## Statistics against the baseline\n")
    md.write(f"\nEach configuration against {t(args.baseline)}, paired by block: the change is the Hodges-Lehmann "
             "estimate of the per-block ratio with its confidence interval from the exact Wilcoxon signed-rank "
             "test. " + compare.VERDICT_TEXT.format(floor="1%") + "\n")
    buf = io.StringIO()
    wanted = ("throughput", "sys CPU", "faults per GB", "peak RSS", "peak PSS of the process tree", "latency p99")
    res = compare.analyse(rows, baseline=args.baseline, floor=0.01,
                          metrics=[x for x in compare.METRICS if x[0] in wanted],
                          order=compare.config_order(rows, [args.csv]))
    if any(not c["is_base"] for c in res):
        compare.render(res, True, buf)
        try:
            compare.write_csv(compare.analyse(rows, baseline=args.baseline, floor=0.01,
                                              order=compare.config_order(rows, [args.csv])),
                              folder.file("compare.csv"), force=True, inputs=[args.csv])
        except mbout.OutputError as e:
            die(str(e))
    md.write(buf.getvalue() or "\nNo baseline configuration to compare against.\n")
    md.write("\nEvery metric, every configuration: `compare.csv` beside this report.\n")
    try:
        out = folder.write("report.md", md.getvalue())
        folder.commit()
    except mbout.OutputError as e:
        die(str(e))
    print(out)


if __name__ == "__main__":
    sys.exit(cli.run(main))
