"""plotbars.py - plots.py's bar figure of each group (workload and parameters): throughput, CPU,
faults, syscalls and RSS per configuration, each panel saying which way is better, with a
caption that words the best configuration against the baseline as every view does.

A helper of the plots view (plots.py), imported only by it; the shared data and drawing come
from plotkit.py.
"""
import math
import textwrap

from . import change
from . import mbcsv
from . import mbdata
from . import plotkit
from . import words
from .plotkit import (KiB, MiB, PAGE, REFAULT_THRESHOLD, faults_per_mib, finish, group_title, legend_handles,
                      median_ci, median_of, num, safe_name, short_group)


_sum = mbdata.sum_measured


def bar_metrics(data, group):
    """The panels of a bar figure: (title, unit text, better, per-sample fn or None, extra)."""
    rows = [r for c in data.configs_of(group) for r in data.groups[group][c]]
    unit = next((r["throughput_unit"] for r in rows if r["throughput_unit"]), "")
    tvals = [num(r, "throughput") for r in rows if num(r, "throughput") is not None]
    factor, shown = words.axis_scale(unit, tvals)  # one prefix for the panel, as compare writes its values
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
    plt, np, FuncFormatter = plotkit.plt, plotkit.np, plotkit.FuncFormatter  # the drawing library (plotkit.need)
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
                label = words.fmt_count(med)  # in the panel's unit, written as compare writes a value
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
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: words.fmt_count(v, trim=True) if v else "0"))
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
                         f"({words.fmt_count(t[best])} {metrics[0]['unit']}; {words.change_words(cell)} vs {base}).")
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
