"""thp.py - huge pages as a condition (`make thp`, matrices/thp.ini; docs/thp.md).

    python3 -m mallocbench.thp RUN.csv... [-o OUT.md [--force]]

Each configuration with huge pages on (huge=advise: the family's own huge-page setting; huge=system:
the kernel's own mode) is paired by block with the same configuration under huge=never (THP off
for its process tree; mbdata.huge_pairs: the same family, library and other settings, whatever
the labels).  Says in sentences, per workload, from the data: for whom huge pages remove the
re-fault cost and how much (faults per unit of work, the primary figure's change with its CI:
change.pair, the one estimator of a paired change), their give-back calls beside them (a
setting that stops give-backs drops faults too), for whom they add splits (machine-wide counts)
or memory, the huge-page share under each condition (0% where huge pages were asked for and
not given: never shown as on), khugepaged and compaction as the condition's own effects, and
whether the best configuration changes between the conditions; then the pairs' table and the
cross-family ranking under each condition.  Markdown on stdout, or -o FILE (replaced only with
--force, never an input).  Bad input: one line, exit 2.
"""
import argparse
import sys

from . import change
from . import cli
from . import mbcsv
from . import mbdata
from . import mbout
from . import stats
from . import words

# faults fall to a third or less: huge pages removed the re-fault cost (the frameworks report's
# re-fault rule is the same factor, 3x the lowest)
FAULT_DROP = 3.0
# others_cpu_s above two clock ticks: other tasks could have added to the machine-wide counts
OTHERS_TICKS_S = 0.02
# a huge-page fault costing this share of its 512 small faults or more saves little (docs/thp.md,
# What a VM hides: a host that backs guest memory with 4 KiB pages)
HOST_SMALL = 0.5
FAULTS = next(m for m in change.METRICS if m[4] == "faults")
GIVE_BACK_CALLS = (("madvise", next(m for m in change.METRICS if m[4] == "madvise")),
                   ("munmap", next(m for m in change.METRICS if m[4] == "munmap")))


med = mbdata.median_of
col = mbdata.column


def memory_metric(rows):
    """The peak memory as a metric of change.pair: mbdata.peak_memory_mib, named
    mbdata.peak_memory_name, in MiB, lower better."""
    return (mbdata.peak_memory_name(rows), "MiB", "lower", mbdata.peak_memory_mib, "peak_memory")


def measure(on_rows, off_rows, cond):
    """What one pair's rows say: {on, off, cond (the on side's condition), prim, faults, memory
    (change.pair cells: on against off), share_on, share_off, gb_on, gb_off ({call: (off, on)}
    medians per unit of work), splits (off, on medians per sample), khuge, compact (on's
    medians), others (the largest others_cpu_s of both sides)}."""
    both = on_rows + off_rows
    out = {"on": on_rows[0]["config"], "off": off_rows[0]["config"], "cond": cond,
           "prim": change.pair(off_rows, on_rows), "faults": change.pair(off_rows, on_rows, FAULTS),
           "memory": change.pair(off_rows, on_rows, memory_metric(both)), "memory_name": mbdata.peak_memory_name(both),
           "fault_unit": mbdata.unit_of(mbdata.METRIC["faults"], both),
           "share_on": med(on_rows, mbdata.huge_share), "share_off": med(off_rows, mbdata.huge_share),
           "splits": (med(off_rows, mbdata.thp_splits), med(on_rows, mbdata.thp_splits)),
           "pmd": (med(off_rows, col("thp_pmd_splits")), med(on_rows, col("thp_pmd_splits"))),
           "page": (med(off_rows, col("thp_page_splits")), med(on_rows, col("thp_page_splits"))),
           "khuge": med(on_rows, col("khugepaged_collapses")), "compact": med(on_rows, col("compactions")),
           "others": max((v for v in map(mbdata.others_cpu_s, both) if v is not None), default=None),
           "faults_med": (med(off_rows, FAULTS[3]), med(on_rows, FAULTS[3])),
           "mem_med": (med(off_rows, mbdata.peak_memory_mib), med(on_rows, mbdata.peak_memory_mib))}
    out["gb"] = {name: (med(off_rows, m[3]), med(on_rows, m[3])) for name, m in GIVE_BACK_CALLS}
    out["thp"] = {c: med(on_rows, lambda r, c=c: mbdata.thp_counts(r)[c]) for c in ("thp_faults", "thp_fallbacks")}
    return out


def workload_pairs(run, pairs):
    """{(workload, params): [measure()]} of every pair both of whose sides have ok rows there."""
    cond = mbdata.config_huge(run)
    out = {}
    for key, groups in run.groups.items():
        for on, off in pairs:
            if groups.get(on) and groups.get(off):
                out.setdefault(key, []).append(measure(groups[on], groups[off], cond[on]))
    return out


# ---- sentences ------------------------------------------------------------------------------

def removed(p):
    """Did huge pages remove the pair's re-fault cost: its faults fell to 1/FAULT_DROP or less,
    the whole CI below no change?"""
    ch = p["faults"].change if p["faults"] else None
    return (ch is not None and ch.kind == "ratio" and ch.estimate <= 1 / FAULT_DROP
            and ch.hi is not None and ch.hi < 1)


def not_given(p):
    """Huge pages asked for (advise, system) and not given: a huge-page share of 0 at the peak."""
    return p["share_on"] == 0


def give_backs_fell(p):
    """Did the pair's give-back calls (madvise + munmap per unit of work) fall to 1/FAULT_DROP or less?"""
    off = sum(a or 0 for a, _ in p["gb"].values())
    on = sum(b or 0 for _, b in p["gb"].values())
    return off > 0 and on <= off / FAULT_DROP


def give_back_text(p):
    """'madvise 40/MiB → 0/MiB, munmap 10/MiB → 0/MiB' (medians per unit of work)."""
    return ", ".join(f"{name} {words.from_to(a, b, p['fault_unit'])}"
                     for name, (a, b) in p["gb"].items())


def refault_lines(ps):
    """For whom huge pages remove the re-fault cost, and how much; give-backs beside faults."""
    out = []
    unit = ps[0]["fault_unit"]
    faults = words.quantity("faults", unit)
    for p in ps:
        if not removed(p):
            continue
        fa, fb = p["faults_med"]
        s = (f"huge pages remove the re-fault cost for {p['on']}: faults "
             f"{words.from_to(fa, fb, unit)} ({words.ratio_with_ci(p['faults'])}), {give_back_text(p)}; "
             f"{p['prim'].metric if p['prim'] else 'the primary figure'} {words.with_ci(p['prim'])} against "
             f"{p['off']}.")
        if not_given(p):
            s = (f"{p['on']}'s faults fell ({faults} {words.from_to(fa, fb, unit)}, "
                 f"{words.ratio_with_ci(p['faults'])}) but huge pages were not given (0% of its anonymous "
                 f"memory): the drop is not huge pages'; {give_back_text(p)}.")
        elif p["share_on"] is None:
            s = (f"{p['on']}'s faults fell ({faults} {words.from_to(fa, fb, unit)}, "
                 f"{words.ratio_with_ci(p['faults'])}) but its huge-page share was not measured: nothing shows "
                 f"the drop is huge pages'; {give_back_text(p)}.")
        elif give_backs_fell(p):
            s += (" Its give-back calls fell too: the setting also stops giving memory back, so the drop in "
                  "faults is not huge pages' alone.")
        out.append(s)
    rest = [p for p in ps if not removed(p)]
    if rest:
        out.append("huge pages do not remove the re-fault cost (faults to a third or less) for "
                   + ", ".join(f"{p['on']} ({faults} {words.ratio_with_ci(p['faults'])})" for p in rest) + ".")
    return out


def cost_lines(ps):
    """For whom huge pages add splits (machine-wide) or memory, and how much."""
    out = []
    for p in ps:
        a, b = p["splits"]
        if b is not None and b > 0 and b > (a or 0):
            s = (f"huge pages add splits for {p['on']}: {words.HUGE_FIGURES['splits']} {words.from_to(a, b)} "
                 f"(PMD {words.from_to(*p['pmd'])}, page "
                 f"{words.from_to(*p['page'])}); {words.MACHINE_WIDE}")
            if p["others"] is not None and p["others"] > OTHERS_TICKS_S:
                s += (f"; other tasks used up to {words.fmt_value(p['others'], 's')} of CPU during these samples "
                      "and could have added to them")
            out.append(s + ".")
        cell = p["memory"]
        if cell is not None and cell.verdict.startswith("regressed"):
            out.append(f"huge pages add memory for {p['on']}: {p['memory_name']} "
                       f"{words.from_to(*p['mem_med'], 'MiB')} ({words.ratio_with_ci(cell)}).")
    if not out:
        out.append("huge pages add no splits and no memory for any configuration here.")
    return out


def share_lines(ps):
    """The huge-page share under each condition; huge pages asked for and not given named."""
    off = {p["off"]: p["share_off"] for p in ps}
    held = [c for c, v in off.items() if v]
    s = (f"{words.HUGE_FIGURES['huge_share']}: under huge=never "
         + ("0% for every configuration" if not held and all(v == 0 for v in off.values()) else
            ", ".join(f"{c} {words.huge_share_text(v, 'never')}" for c, v in off.items()))
         + "; with huge pages on " + ", ".join(f"{p['on']} {words.huge_share_text(p['share_on'], p['cond'])}"
                                               for p in ps) + ".")
    out = [s]
    for c in held:
        out.append(f"{c} held huge pages under huge=never ({words.huge_share_text(off[c], 'never')}): "
                   "THP was not off for it, and its pairs say nothing of the condition.")
    for p in ps:
        if not_given(p):
            out.append(f"huge pages were not given to {p['on']} (0% of its anonymous memory at its "
                       f"peak): it ran as with huge pages off, whatever {words.HUGE_CONDITION[p['cond']]} asked.")
    return out


def own_effect_lines(ps):
    """khugepaged and compaction under huge pages on: the condition's own effects."""
    out = []
    for p in ps:
        k, c = p["khuge"], p["compact"]
        if (k or 0) > 0 or (c or 0) > 0:
            out.append(f"during {p['on']}'s samples khugepaged collapsed {words.fmt_count(k, True)} "
                       f"huge pages and the kernel compacted memory {words.fmt_count(c, True)} time(s) (medians per sample, machine-wide): "
                       "the condition's own effects, not a disturbance from outside.")
    return out


# ---- the ranking under each condition ---------------------------------------------------------

def ranking(groups, configs, base):
    """[(config, cell)] of configs on one workload, best first by the primary figure against
    base (change.pair; base itself first-class with no cell), those without rows left out."""
    out = []
    for c in configs:
        if not groups.get(c):
            continue
        out.append((c, None if c == base else change.pair(groups[base], groups[c])))
    better = next((cell.better for _, cell in out if cell is not None), "higher")

    def value(item):
        cell = item[1]
        if cell is None:
            return 1.0
        ch = cell.change
        return ch.estimate if ch is not None and ch.kind == "ratio" else float("nan")
    vals = {c: value((c, cell)) for c, cell in out}
    known = [x for x in out if vals[x[0]] == vals[x[0]]]
    known.sort(key=lambda x: vals[x[0]], reverse=(better == "higher"))
    return known + [x for x in out if vals[x[0]] != vals[x[0]]]


def rank_cell(c, cell, base):
    return "baseline" if c == base else words.with_ci(cell)


def best_lines(groups, ps, base):
    """The cross-family ranking under huge=never and with huge pages on, and whether the best
    (by the primary figure) changes between them; ratios against one baseline, base (never)."""
    never = list(dict.fromkeys(p["off"] for p in ps))
    on = [p["on"] for p in ps]
    if base not in never:
        never.insert(0, base)
    r_off, r_on = ranking(groups, never, base), ranking(groups, on, base)
    if not r_off or not r_on:
        return [], []
    prim = next((cell.metric for _, cell in r_off + r_on if cell is not None), "the primary figure")
    cond = {p["on"]: p["cond"] for p in ps}
    table = [f"| rank | under huge=never | {prim} vs {base} (95% CI) | with huge pages on | "
             f"{prim} vs {base} (95% CI) |", "|---|---|---|---|---|"]
    for i in range(max(len(r_off), len(r_on))):
        a = r_off[i] if i < len(r_off) else ("", None)
        b = r_on[i] if i < len(r_on) else ("", None)
        table.append(f"| {i + 1} | {mbdata.md_text(a[0])} | {rank_cell(a[0], a[1], base) if a[0] else ''} | "
                     f"{mbdata.md_text(b[0])}{' (' + words.HUGE_CONDITION[cond[b[0]]] + ')' if b[0] else ''} | "
                     f"{rank_cell(b[0], b[1], base) if b[0] else ''} |")
    best_off, best_on = r_off[0][0], r_on[0][0]
    partner = {p["on"]: p["off"] for p in ps}
    same = partner.get(best_on) == best_off
    given = next(p for p in ps if p["on"] == best_on)
    line = (f"the best configuration by {prim} is {best_off} under huge=never "
            f"({rank_cell(best_off, r_off[0][1], base)}) and {best_on} with huge pages on "
            f"({rank_cell(best_on, r_on[0][1], base)}"
            + (", though huge pages were not given to it" if not_given(given) else "") + "): "
            + ("the same configuration: the best does not change." if same else "the best changes."))
    return [line], table


# ---- tables and the report ------------------------------------------------------------------

def pair_table(ps):
    unit = ps[0]["fault_unit"]
    prim = next((p["prim"].metric for p in ps if p["prim"]), "primary figure")
    lines = [f"| huge pages on | paired with | {words.HUGE_FIGURES['huge_share']}: off → on | {prim}: on vs off "
             f"(95% CI) | {words.quantity('faults', unit)}: off → on | {words.quantity('madvise / munmap calls', unit)}: off → on | "
             f"{words.HUGE_FIGURES['splits']}: off → on | {ps[0]['memory_name']}: off → on | "
             "huge-page faults / fallbacks (on) | khugepaged / compactions (on) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for p in ps:
        gb = " / ".join(words.from_to(a, b) for a, b in p["gb"].values())
        lines.append(f"| {mbdata.md_text(p['on'])} | {mbdata.md_text(p['off'])} | "
                     f"{words.huge_share_text(p['share_off'], 'never')} → "
                     f"{words.huge_share_text(p['share_on'], p['cond'])} | {words.with_ci(p['prim'])} | "
                     f"{words.from_to(*p['faults_med'], unit)} ({words.ratio_with_ci(p['faults'])}) | {gb} | "
                     f"{words.from_to(*p['splits'])} | {words.from_to(*p['mem_med'], 'MiB')} | "
                     f"{words.fmt_count(p['thp']['thp_faults'], True)} / {words.fmt_count(p['thp']['thp_fallbacks'], True)} | "
                     f"{words.fmt_count(p['khuge'], True)} / {words.fmt_count(p['compact'], True)} |")
    return lines


def calibration_line(run):
    """The machine's huge-page fault against 512 4 KiB faults (calibrate's figures), or why not."""
    cal = mbdata.calibration(run)
    f, h = cal.get("fault_ns"), cal.get("huge_fault_ns")
    if not isinstance(f, (int, float)) or not isinstance(h, (int, float)) or h != h:
        return ("The sidecar gives no huge-page fault cost (calibrate's huge_fault_ns): whether this machine "
                "backs a huge page with one host page cannot be said here (docs/thp.md).")
    r = h / (512 * f)
    return (f"Calibration: one 2 MiB huge-page fault costs {words.fmt_value(h * 1e-3, 'us')} here, against "
            f"{words.fmt_value(512 * f * 1e-3, 'us')} for its 512 4 KiB faults ({words.ratio_text(r)}): "
            + ("near their cost, as where the host backs guest memory with small pages: a huge page saves "
               "little here." if r >= HOST_SMALL else "a huge page saves most of its small pages' cost here."))


def build(run, paths):
    """The report's Markdown."""
    pairs, alone = mbdata.huge_pairs(run)
    cond = mbdata.config_huge(run)
    md = ["# Huge pages as a condition", "",
          f"From {', '.join(mbdata.md_code(p) for p in paths)} ({len(run.ok)} ok rows, {len(run.bad)} not ok). "
          "Each configuration with huge pages on is paired by block with the same configuration under huge=never "
          "(THP off for its process tree); changes are the paired Hodges-Lehmann ratio with its 95% CI "
          "(change.py). The split, khugepaged and compaction counts are " + words.MACHINE_WIDE + ".", "",
          calibration_line(run)]
    if not any(cond.values()):
        raise cli.Fail("no row names a huge-page condition (the `huge` column, schema 9): run matrices/thp.ini "
                       "(make thp)", mbcsv.EXIT_BAD_INPUT)
    if not pairs:
        raise cli.Fail("no configuration with huge pages on has a huge=never twin (the same allocator, library "
                       "and other settings)", mbcsv.EXIT_BAD_INPUT)
    md += [f"- not paired: {mbdata.md_text(c)} ({words.HUGE_CONDITION[cond[c]]}): no huge=never configuration "
           "of the same allocator, library and settings" for c in alone]
    md += [f"- no ok sample: {mbdata.md_text(x)}" for x in mbdata.no_ok_sample(run)]
    for key, ps in workload_pairs(run, pairs).items():
        title = mbdata.md_text(mbdata.workload_title(*key))
        groups = run.groups[key]
        base = mbdata.huge_baseline(run, [c for c in run.configs if cond.get(c) == "never" and groups.get(c)])
        best, table = best_lines(groups, ps, base)
        said = (refault_lines(ps) + cost_lines(ps) + share_lines(ps)
                + own_effect_lines(ps) + best)
        md += ["", f"## {title}", ""] + [f"- {s}" for s in said] + ["", "### The pairs", ""] + pair_table(ps)
        md += ["", "### The ranking under each condition", ""] + table
    return "\n".join(md) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="thp.py", description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+", help="run CSVs of matrices/thp.ini (make thp)")
    ap.add_argument("-o", "--output", help="write the Markdown here (default: stdout)")
    ap.add_argument("--force", action="store_true", help="replace an existing -o file (never an input)")
    args = ap.parse_args(argv)
    try:
        stats.require_scipy()  # the CIs
    except ImportError as e:
        raise cli.Fail(f"{e}: run it with {stats.DEBIAN_PYTHON} (python3-scipy)", 1)
    if args.output:
        try:  # refused before any work
            mbout.check(args.output, args.force, args.csv)
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2)
    try:
        run = mbdata.load(args.csv)
    except mbcsv.CsvError as e:
        raise cli.Fail(str(e), mbcsv.EXIT_BAD_INPUT) from None
    if not run.ok:
        raise cli.Fail(f"{' '.join(args.csv)}: no ok rows", mbcsv.EXIT_BAD_INPUT)
    text = build(run, args.csv)
    if args.output:
        try:
            mbout.write(args.output, text, force=args.force, inputs=args.csv)
        except mbout.OutputError as e:
            raise cli.Fail(str(e), 2)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(cli.run(main))
