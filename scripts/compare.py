#!/usr/bin/env python3
"""compare.py - benchstat-style tables from mallocbench CSVs.

One run:   compare.py run.csv [--baseline glibc]
           every configuration against the baseline, within each workload
Two runs:  compare.py old.csv new.csv
           each configuration of the new run against the same one in the old
           (before/after an allocator upgrade or a tunable change)

Per workload and metric: the median with its 95% CI; the change as a ratio
with its 95% CI (block-paired ratios when both sides ran in the same blocks,
else Hodges-Lehmann); a Mann-Whitney U p-value, Holm-corrected across the
whole table; "~" where the change is not significant or smaller than the
practical floor (--floor, default 1%); a geometric-mean row per
configuration; a warning where a configuration has fewer than 6 samples.
Output: a terminal table, --markdown, or --csv FILE.  Input that is not a
mallocbench CSV of schema 3 (scripts/mbcsv.py) is refused in one line naming
the file and row, exit 2.
"""
import argparse
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mbcsv  # noqa: E402
import stats  # noqa: E402

SCHEMA = mbcsv.SCHEMA
FAMILIES = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]


def _per_s(col):
    def f(r):
        v, t = num(r, col), num(r, "region_wall_s")
        return v / t if v is not None and t else None
    return f


def _per_gb(r):
    f, b = num(r, "region_minor_faults"), num(r, "region_bytes")
    return f / b * 1e9 if f is not None and b else None


def _mib(col):
    def f(r):
        v = num(r, col)
        return v / 1024 if v is not None else None
    return f


def _col(col):
    return lambda r: num(r, col)


# name, unit, better, value of a row
METRICS = [
    ("throughput", None, "higher", _col("throughput")),
    ("user CPU", "s", "lower", _col("region_user_s")),
    ("sys CPU", "s", "lower", _col("region_sys_s")),
    ("faults per GB", "/GB", "lower", _per_gb),
    ("madvise per s", "/s", "lower", _per_s("region_madvise_calls")),
    ("munmap per s", "/s", "lower", _per_s("region_munmap_calls")),
    ("brk per s", "/s", "lower", _per_s("region_brk_calls")),
    ("peak RSS", "MiB", "lower", _mib("rss_peak_kib")),
    ("latency p50", "us", "lower", _col("latency_p50_us")),
    ("latency p99", "us", "lower", _col("latency_p99_us")),
    ("latency p99.9", "us", "lower", _col("latency_p999_us")),
]


num = mbcsv.num  # a finite float, None when not measured


def die(msg, status=1):
    print(f"compare.py: {msg}", file=sys.stderr)
    sys.exit(status)


def load(path):
    """The rows with status ok; mbcsv.CsvError for input that is not a schema-3 CSV."""
    return [r for r in mbcsv.read(path)[1] if r["status"] == "ok"]


def config_rank(config):
    fam = config.split("[")[0].split("@")[0]
    return (FAMILIES.index(fam) if fam in FAMILIES else 9, config)


def samples(rows):
    """{(workload, params): {config: [rows]}}"""
    out = {}
    for r in rows:
        out.setdefault((r["workload"], r["workload_params"]), {}).setdefault(r["config"], []).append(r)
    return out


def unit_of(metric, rows):
    if metric[1]:
        return metric[1]
    u = rows[0]["throughput_unit"] if rows else ""
    return "GB/s" if u == "B/s" else u


def scale(metric, rows, v):
    if v is None:
        return None
    return v / 1e9 if metric[1] is None and rows and rows[0]["throughput_unit"] == "B/s" else v


def compare_cells(base_rows, rows, metric, paired):
    """Statistics of one configuration against its baseline on one metric."""
    fn = metric[3]
    a = [fn(r) for r in base_rows]
    b = [fn(r) for r in rows]
    a = [x for x in a if x is not None]
    b = [x for x in b if x is not None]
    cell = {"n_base": len(a), "n": len(b), "median": stats.median(b) if b else None,
            "ci": stats.median_ci(b) if b else None, "base_median": stats.median(a) if a else None,
            "ratio": None, "ratio_lo": None, "ratio_hi": None, "p": float("nan")}
    if not a or not b:
        return cell
    if all(x == 0 for x in a + b):
        cell.update(ratio=1.0, p=1.0)
        return cell
    cell["p"], _ = stats.mann_whitney(a, b)
    res = None
    if paired:
        by_block = {}
        for r in base_rows:
            v = fn(r)
            if v is not None:
                by_block.setdefault(r["block"], [None, None])[0] = v
        for r in rows:
            v = fn(r)
            if v is not None:
                by_block.setdefault(r["block"], [None, None])[1] = v
        pairs = [(x, y) for x, y in by_block.values() if x is not None and y is not None]
        if len(pairs) >= 2:
            res = stats.paired_ratio(pairs)
    if res is None:
        res = stats.hodges_lehmann_ratio(a, b)
    if res is None:  # zeros: a ratio of medians, without a CI
        ma, mb = stats.median(a), stats.median(b)
        res = (mb / ma if ma else float("inf"), None, None)
    cell["ratio"], cell["ratio_lo"], cell["ratio_hi"] = res
    return cell


def build(base_groups, new_groups, baseline, two_runs, floor):
    """All cells of the table; p-values Holm-corrected across it."""
    cells = []
    for (wl, params), configs in new_groups.items():
        for config in sorted(configs, key=config_rank):
            if two_runs:
                base_rows = base_groups.get((wl, params), {}).get(config)
            else:
                if config == baseline:
                    continue
                base_rows = configs.get(baseline)
            if not base_rows:
                continue
            rows = configs[config]
            paired = not two_runs and all(r.get("block", "") != "" for r in rows + base_rows)
            for metric in METRICS:
                c = compare_cells(base_rows, rows, metric, paired)
                if c["n"] == 0 or c["n_base"] == 0:
                    continue
                c.update(workload=wl, params=params, config=config, metric=metric, rows=rows,
                         baseline=f"{config} (old)" if two_runs else baseline)
                cells.append(c)
    adj = stats.holm([c["p"] for c in cells])
    for c, p in zip(cells, adj):
        c["p_adj"] = p
        r = c["ratio"]
        c["significant"] = (not math.isnan(p) and p < 0.05 and r is not None and not math.isinf(r)
                            and abs(r - 1) >= floor)
    return cells


def fmt(v, nd=3):
    if v is None or (isinstance(v, float) and (math.isnan(v) or math.isinf(v))):
        return "-"
    a = abs(v)
    if a >= 1e6 or (a < 1e-3 and a > 0):
        return f"{v:.{nd}g}"
    return f"{v:.{nd}g}" if a < 1000 else f"{v:.0f}"


def render(cells, two_runs, markdown, out):
    vs = "vs old" if two_runs else f"vs {cells[0]['baseline']}"
    head = ["config", "median", "95% CI", vs, "ratio 95% CI", "p (Holm)", "n"]
    warned = set()
    for metric in METRICS:
        mc = [c for c in cells if c["metric"] is metric]
        if not mc:
            continue
        unit = unit_of(metric, mc[0]["rows"])
        table = []  # rows of cells, or a workload title (a str)
        last = None
        for c in mc:
            if (c["workload"], c["params"]) != last:
                last = (c["workload"], c["params"])
                table.append(f"{c['workload']} ({c['params']})")
            med, ci = scale(metric, c["rows"], c["median"]), c["ci"]
            ci_txt = (f"{fmt(scale(metric, c['rows'], ci[0]))}..{fmt(scale(metric, c['rows'], ci[1]))}"
                      if ci else "(n<6)")
            delta = f"{c['ratio']:.3f}x" if c["significant"] else "~"
            rci = (f"{c['ratio_lo']:.3f}..{c['ratio_hi']:.3f}" if c["ratio_lo"] is not None else "-")
            p = "-" if math.isnan(c["p_adj"]) else f"{c['p_adj']:.3g}"
            table.append([c["config"], fmt(med), ci_txt, delta, rci, p, f"{c['n']}/{c['n_base']}"])
            if min(c["n"], c["n_base"]) < 6:
                warned.add(c["config"] if c["n"] < 6 else c["baseline"])
        # geometric mean of the ratios per configuration, across workloads
        by_cfg = {}
        for c in mc:
            if c["ratio"] is not None and c["ratio"] > 0 and not math.isinf(c["ratio"]):
                by_cfg.setdefault(c["config"], []).append(c["ratio"])
        geo = [[cfg, "", "", f"{stats.geomean(v):.3f}x", "", "", ""]
               for cfg, v in sorted(by_cfg.items(), key=lambda kv: config_rank(kv[0])) if len(v) > 1]
        if geo:
            table.append("geometric mean over workloads")
            table += geo
        title = f"{metric[0]} ({unit}, {metric[2]} is better)"
        rows = [r for r in table if not isinstance(r, str)]
        if markdown:
            out.write(f"\n#### {title}\n\n| " + " | ".join(head) + " |\n|" + "---|" * len(head) + "\n")
            for row in table:
                out.write(f"| **{row}** |" + " |" * (len(head) - 1) + "\n" if isinstance(row, str)
                          else "| " + " | ".join(row) + " |\n")
        else:
            widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
            out.write(f"\n{title}\n")
            out.write("  " + "  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip() + "\n")
            for row in table:
                out.write(row + "\n" if isinstance(row, str) else
                          "  " + "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() + "\n")
    out.write("\n~: not significant (Holm-corrected Mann-Whitney p >= 0.05) or a change below the floor.\n")
    if warned:
        out.write("warning: fewer than 6 samples for " + ", ".join(sorted(warned)) +
                  ": confidence intervals need 6 or more; add repetitions.\n")


def write_csv(cells, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "unit", "better", "workload", "workload_params", "config", "baseline", "n",
                    "n_baseline", "median", "ci_low", "ci_high", "baseline_median", "ratio", "ratio_ci_low",
                    "ratio_ci_high", "p", "p_holm", "significant"])
        for c in cells:
            ci = c["ci"] or (None, None)
            w.writerow([c["metric"][0], unit_of(c["metric"], c["rows"]), c["metric"][2], c["workload"],
                        c["params"], c["config"], c["baseline"], c["n"], c["n_base"],
                        *["" if v is None else f"{v:.6g}" for v in
                          (scale(c["metric"], c["rows"], c["median"]), scale(c["metric"], c["rows"], ci[0]),
                           scale(c["metric"], c["rows"], ci[1]),
                           scale(c["metric"], c["rows"], c["base_median"]), c["ratio"], c["ratio_lo"],
                           c["ratio_hi"])],
                        "" if math.isnan(c["p"]) else f"{c['p']:.6g}",
                        "" if math.isnan(c["p_adj"]) else f"{c['p_adj']:.6g}", int(c["significant"])])


def main(argv=None):
    try:
        return run(argv)
    except mbcsv.CsvError as e:
        die(str(e), mbcsv.EXIT_BAD_INPUT)


def run(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="one run (configurations against a baseline) or old.csv new.csv")
    ap.add_argument("--baseline", default="glibc", help="configuration compared against (one run; default glibc)")
    ap.add_argument("--floor", type=float, default=1.0, help="practical-significance floor in %% (default 1)")
    ap.add_argument("--markdown", action="store_true", help="Markdown tables")
    ap.add_argument("--csv-out", metavar="FILE", help="also write every cell as CSV")
    ap.add_argument("--metric", action="append", help="only these metrics (repeatable), e.g. throughput")
    args = ap.parse_args(argv)
    if len(args.csv) > 2:
        die("give one CSV, or two (old new)")
    global METRICS
    if args.metric:
        known = {m[0] for m in METRICS}
        bad = [m for m in args.metric if m not in known]
        if bad:
            die(f"unknown metric {bad[0]!r} (valid: {', '.join(m[0] for m in METRICS)})")
        METRICS = [m for m in METRICS if m[0] in args.metric]
    two = len(args.csv) == 2
    new = samples(load(args.csv[-1]))
    base = samples(load(args.csv[0])) if two else new
    if not two and not any(args.baseline in g for g in new.values()):
        die(f"no configuration '{args.baseline}' in {args.csv[0]} (use --baseline CONFIG)")
    cells = build(base, new, args.baseline, two, args.floor / 100)
    if not cells:
        die("nothing to compare: no configuration has a counterpart")
    render(cells, two, args.markdown, sys.stdout)
    if args.csv_out:
        write_csv(cells, args.csv_out)
    return cells


if __name__ == "__main__":
    main()
