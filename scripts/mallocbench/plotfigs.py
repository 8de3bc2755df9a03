"""plotfigs.py - plots.py's figures across groups: the fault cliff (faults per MiB against the
buffer size), RSS against CPU for tunable sweeps, RSS over time, and latency percentiles; each
with the pure computation it draws from.

A helper of the plots view (plots.py), imported only by it; the shared data and drawing come
from plotkit.py.
"""
import math
import textwrap

from . import mbdata
from . import plotkit
from . import words
from .plotkit import (FULL_REFAULT_PER_MIB, KiB, MAX_PANELS, REFAULT_THRESHOLD, bar_groups, faults_per_mib,
                      family_rank, finish, format_size, group_title, legend_handles, median_of, mix, num,
                      parse_metrics, place_labels, short_group, signed, sweep_families)


def pareto_frontier(points):
    """Points (x, y, ...) not dominated when lower x and lower y are better, sorted by x."""
    front = []
    best_y = math.inf
    for p in sorted(points, key=lambda p: (p[0], p[1])):
        if p[1] < best_y:
            front.append(p)
            best_y = p[1]
    return front


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


def draw_fault_cliff(data, outdir, footnote, written):
    plt = plotkit.plt  # the drawing library (plotkit.need)
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
            factor, shown = words.axis_scale(unit, [v for _, v in tp])
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
    plt, Line2D = plotkit.plt, plotkit.Line2D  # the drawing library (plotkit.need)
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


def rss_series(data, row):
    """The RSS series of a sample in MiB, without zero readings (a process tearing down at exit)."""
    series = data.rss.get((row["run_id"], row["sample"])) if row else None
    return [(t, kib / KiB) for t, kib in series or [] if kib > 0]


def draw_rss_timeline(data, outdir, footnote, written):
    plt = plotkit.plt  # the drawing library (plotkit.need)
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


PERCENTILES = [("latency_p50_us", "p50", "o"), ("latency_p99_us", "p99", "s"), ("latency_p999_us", "p99.9", "^")]


def draw_latency(data, outdir, footnote, written):
    plt, np, Line2D, FuncFormatter = plotkit.plt, plotkit.np, plotkit.Line2D, plotkit.FuncFormatter  # plotkit.need
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
