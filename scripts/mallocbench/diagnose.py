"""diagnose.py - the words and the prediction of `mallocbench diagnose`, from the document the
harness measured (schema mallocbench-diagnose-raw/1: every fault and give-back call of the
window, classified; cpu-clock samples by where they fell; the allocator and the settings it
started with).  This module only reads that document: it predicts what the allocator's keep
setting would save and cost, says it first in one paragraph, then the tables; --json gives the
document with the analysis added (schema mallocbench-diagnose/1).

    mallocbench diagnose -p PID | --all | -- CMD     (the harness measures, then runs this)
    python3 -m mallocbench.diagnose DOC.json [--json] [--top N]   (a document saved with --json)

The prediction (docs/diagnose.md):
  saved CPU, lower end = the samples under the fault entry x the share of faults the setting
      removes (re-faults on memory given back by the calls it stops) + the samples under those
      calls + the TLB-flush samples they cause (on its own CPUs, and on others in proportion to
      its share of every give-back call of the host); each count widened to its 95% Poisson
      interval;
  upper end = the lower end + the removed faults x (calibrate's fault cost - the in-place cost
      per fault), where `--calibrate` measured it (the part of a fault a guest does not see);
  speedup 1/(1-s), s = saved / the process's CPU: "predicted" for a CPU-bound process, else
      "up to";
  memory = the peak, over the window, of the bytes given back (by the calls the setting stops)
      and not yet touched again or unmapped; still growing at the window's end: its rate.
The huge-page setting's prediction (the family's huge_advise, what -t FAMILY:huge=advise sets):
  saved CPU = the samples under the fault entry x the share of faults that were re-faults on
      pages the allocator gave back with their whole 2 MiB-aligned block (Wilson under --light)
      - the blocks those re-faults touched again (one huge fault each, a 95% Poisson interval)
      x calibrate's huge_fault_ns; none without `--calibrate`'s huge_fault_ns.
"""
import argparse
import json
import math
import os
import re
import shlex
import sys

from . import cli
from . import flamegraph
from . import mbcsv
from . import mbdata
from . import mbout

SCHEMA_RAW = "mallocbench-diagnose-raw/1"
SCHEMA = "mallocbench-diagnose/1"
AGES = ("<10 ms", "<100 ms", "<1 s", "<10 s", "older")
CLASSES = (("first_touch", "first touch"), ("refault", "re-fault on memory given back"),
           ("lazy_reclaimed", "re-fault on lazily freed memory the kernel reclaimed"),
           ("cow", "copy-on-write after fork"), ("file", "file-backed"), ("other", "other"))
CALLS = ("madvise", "munmap", "brk", "mremap", "mmap_fixed")
CALL_WORDS = {"madvise": "madvise", "munmap": "munmap", "brk": "brk (shrinking)",
              "mremap": "mremap (shrinking)", "mmap_fixed": "mmap(MAP_FIXED) over pages in use"}
# the calls a keep setting's `stops` entry ends (munmap also covers the other unmapping calls)
STOPPED_CALLS = {"madvise": ("madvise",), "munmap": ("munmap", "mremap", "mmap_fixed"), "brk": ("brk",)}
LINKED = ("linked", "static", "built-in")  # how an allocator is there that exec cannot swap by preloading
MIN_SAMPLES = 50  # cpu-clock samples (ms of CPU) below which no saving is predicted in words
CPU_BOUND = 0.9  # of one CPU: below it, the speedup is only an upper bound
MIB = 1 << 20
Z95 = 1.959964


def load(path):
    try:
        doc = mbcsv.read_json(path)
    except mbcsv.CsvError as e:  # a FIFO or a device: never waited on
        raise cli.Fail(str(e), 2)
    except OSError as e:
        raise cli.Fail(f"cannot read '{path}': {e.strerror}", 2)
    except ValueError as e:
        raise cli.Fail(f"'{path}' is not JSON: {e}", 2)
    if not isinstance(doc, dict) or doc.get("schema") not in (SCHEMA_RAW, SCHEMA):
        raise cli.Fail(f"'{path}' is not a diagnose document (schema {SCHEMA_RAW} or {SCHEMA})", 2)
    return doc


def wilson(k, n):
    """A 95% interval for the proportion k/n (Wilson score); (0, 1) when n is 0."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    d = 1 + Z95 ** 2 / n
    c = (p + Z95 ** 2 / (2 * n)) / d
    h = Z95 * math.sqrt(p * (1 - p) / n + Z95 ** 2 / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def poisson_ci(n):
    """A 95% interval for a Poisson count n (Wilson-Hilferty for the ends; 0 -> [0, 3.7])."""
    if n <= 0:
        return 0.0, 3.689
    lo = n * (1 - 1 / (9 * n) - Z95 / (3 * math.sqrt(n))) ** 3
    m = n + 1
    hi = m * (1 - 1 / (9 * m) + Z95 / (3 * math.sqrt(m))) ** 3
    return max(lo, 0.0), hi


def _sum_into(acc, d):
    for k, v in d.items():
        if isinstance(v, dict):
            _sum_into(acc.setdefault(k, {}), v)
        elif isinstance(v, list) and v and all(isinstance(x, (int, float)) for x in v):
            cur = acc.setdefault(k, [0] * len(v))
            acc[k] = [a + b for a, b in zip(cur, v)]
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            acc[k] = acc.get(k, 0) + v


def combine(entries):
    """The counts of several images (a process and its children) summed into one."""
    tot = {}
    for e in entries:
        for key in ("faults", "calls", "cpu_samples"):
            _sum_into(tot.setdefault(key, {}), e[key])
        for key in ("lazy_bytes", "untracked_bytes", "failed_calls"):
            tot[key] = tot.get(key, 0) + e[key]
        for key in ("peak_bytes", "end_bytes"):
            _sum_into(tot.setdefault(key, {}), e["kept_memory"][key])
    adv = {}
    for e in entries:
        for a in e["advice"]:
            c = adv.setdefault(a["advice"], {"advice": a["advice"], "calls": 0, "bytes": 0})
            c["calls"] += a["calls"]
            c["bytes"] += a["bytes"]
    tot["advice"] = sorted(adv.values(), key=lambda a: -a["bytes"])
    libs = {}
    for key in ("fault_libs", "giveback_libs"):
        agg = {}
        for e in entries:
            for lib in e[key]:
                agg[lib["lib"]] = agg.get(lib["lib"], 0) + lib["samples"]
        libs[key] = sorted(({"lib": k, "samples": v} for k, v in agg.items()), key=lambda x: -x["samples"])
    tot.update(libs)
    return tot


def _main_entry(entries):
    return max(entries, key=lambda e: (e["cpu_samples"]["all"], e["faults"]["minor"] + e["faults"]["major"]))


def growth(entry, stops):
    """Bytes/s the kept memory still grew by over the window's second half, or None."""
    col = 1 if stops == ["madvise"] else 2
    s = entry["kept_memory"]["series"]
    if len(s) < 4:
        return None
    end_t, end_v = s[-1][0], s[-1][col]
    peak = max(p[col] for p in s)
    mid = next((p for p in s if p[0] >= end_t / 2), None)
    if not peak or end_v < 0.9 * peak or mid is None or end_t - mid[0] <= 0 or end_v <= mid[col]:
        return None
    return (end_v - mid[col]) / (end_t - mid[0])


def keep_env(keep, started):
    """The keep setting's variables, each joined to the value the process started with where it
    set that variable already (MALLOC_CONF=narenas:2 -> MALLOC_CONF=narenas:2,dirty_decay_ms:-1,...)."""
    had = {v[:v.index("=")]: v[v.index("=") + 1:] for v in started if "=" in v}
    out = []
    for v in keep["env"]:
        name, value = v[:v.index("=")], v[v.index("=") + 1:]
        if had.get(name) and keep.get("joined_by"):
            value = had[name] + keep["joined_by"] + value
        out.append(f"{name}={value}")
    return out


def huge_share(st):
    """AnonHugePages / Anonymous of one /proc reading (None: no reading, or no anonymous memory)."""
    if not st or not st.get("anon_kib"):
        return None
    return st["anon_huge_kib"] / st["anon_kib"]


def huge_window(doc, main):
    """The window's huge pages: the process's share at its readings, the machine's counts."""
    return {"share_start": huge_share(main.get("proc_start")), "share_end": huge_share(main.get("proc_end")),
            "share_peak": huge_share(main.get("proc_peak")), "peak": main.get("proc_peak"),
            "thp_faults": doc["window"].get("thp_faults"), "thp_fallbacks": doc["window"].get("thp_fallbacks"),
            "thp_pmd_splits": doc["window"].get("thp_pmd_splits")}


def huge_count(p):
    """The huge faults a prediction counts, in words: the blocks seen, or under --light the range
    from the blocks recorded to `period` times as many."""
    lo, hi = p["huge_faults"], p.get("huge_faults_hi", p["huge_faults"])
    return count(lo) if hi == lo else f"between {count(lo)} and {count(hi)}"


def huge_prediction(doc, alloc, f, cs, nrec, period):
    """What the family's huge-page setting is predicted to save: the re-faults on whole 2 MiB
    blocks the allocator gave back (each block's pages one small fault apiece now) replaced by
    one huge fault a block touched again, at calibrate's huge_fault_ns.  {"why": ...} without a
    setting, a calibration, or such a re-fault."""
    fam = alloc["family"] or "its allocator"
    setting = alloc.get("huge_advise") or ""
    if not setting:
        return {"setting": None, "why": alloc.get("huge_none") or f"no huge-page setting is known for {fam}"}
    whole, blocks = f.get("alloc_refault_whole", 0), f.get("alloc_whole_blocks", 0)
    huge_ns = doc.get("calibrate_huge_fault_ns")
    # a block counts at its first recorded re-fault: with one fault in `period` recorded, a block
    # re-faulted whole (512 faults) is all but surely seen, one touched in a few pages may not be,
    # so the blocks lie between those recorded and period x as many
    out = {"setting": setting, "removed_faults": whole * period, "huge_faults": blocks,
           "huge_faults_hi": blocks * period,
           "huge_fault_ns": huge_ns, "saved_cpu_s": None, "saved_share": None, "speedup": None, "why": None}
    if not whole:
        out["why"] = f"none of its re-faults were on a whole 2 MiB block {fam} had given back"
        return out
    if not huge_ns:
        out["why"] = "the prediction needs a huge fault's cost: run diagnose with --calibrate"
        return out
    period_ns = doc["watch"]["cpu_period_ns"]
    share = whole / nrec
    s_lo, s_hi = wilson(whole, nrec) if period > 1 else (share, share)
    f_lo, f_hi = poisson_ci(cs["fault"])
    b_lo, b_hi = poisson_ci(blocks)
    b_hi *= period  # the upper end of the blocks seen, each seen block standing for up to `period`
    per = huge_ns / period_ns  # cpu-clock samples one block's huge fault costs
    lo, hi = f_lo * s_lo - b_hi * per, f_hi * s_hi - b_lo * per
    # the upper end as the keep setting's: a re-fault's whole cost on this machine (calibrate),
    # the part no kernel sample sees (a VM host's fault) included, bounded by its user time
    whole_ns = doc.get("calibrate_refault_ns") or doc.get("calibrate_fault_ns")
    if whole_ns:
        n_hi = (f_hi * s_hi / cs["fault"] if cs["fault"] else 1.0) * whole * period  # removed faults, upper
        hi = max(hi, min(n_hi * whole_ns / period_ns, f_hi * s_hi + cs["user"]) - b_lo * per)
    all_s = cs["all"] or 0
    out["saved_cpu_s"] = [lo * period_ns / 1e9, hi * period_ns / 1e9]
    out["saved_share"] = [min(lo / all_s, 0.99), min(hi / all_s, 0.99)] if all_s else [0.0, 0.0]
    out["speedup"] = [1 / (1 - x) for x in out["saved_share"]]
    return out


def analyse(doc, entries):
    """What the window says of one target (the images in entries) and what its keep setting is
    predicted to save and cost."""
    tot = combine(entries)
    main = _main_entry(entries)
    alloc = main["allocator"]
    period_ns = doc["watch"]["cpu_period_ns"]
    secs = max(min(max(e["seconds"] for e in entries), doc["window"]["seconds"]), 1e-9)
    f = tot["faults"]
    period = doc["watch"].get("fault_period", 1)  # --light: one minor fault in `period` recorded
    nrec = f["minor"] + f["major"]                   # the faults recorded (and classified)
    nfaults = f["minor"] * period + f["major"]       # the faults it had
    cs = tot["cpu_samples"]
    cpu_s = cs["all"] * period_ns / 1e9
    keep = alloc.get("keep")
    stops = keep["stops"] if keep else []
    # only what the allocator gave back, by the calls its keep setting stops, is removed
    removed = sum(f["alloc_refault_by"].get(k, 0) for k in stops)
    stopped_calls = [c for k in stops for c in STOPPED_CALLS[k]]
    calls = tot["calls"]
    calls_all = sum(calls[c]["calls"] for c in CALLS if c != "mmap_fixed")
    calls_stopped = sum(calls[c]["alloc_calls"] for c in stopped_calls)
    host_calls = calls_all + sum(v for k, v in doc["watch"]["other_calls"].items() if k != "mmap_fixed")
    share_removed = removed / nrec if nrec else 0.0
    share_lo, share_hi = wilson(removed, nrec) if period > 1 else (share_removed, share_removed)
    gb_samples = sum(cs["giveback_by"].get(c, 0) * calls[c]["alloc_calls"] / calls[c]["calls"]
                     for c in stopped_calls if calls[c]["calls"])
    tlb = cs["tlb"] * (calls_stopped / calls_all if calls_all else 0.0)
    tlb_other = doc["watch"]["tlb_other_samples"] * (calls_stopped / host_calls if host_calls else 0.0)
    fault_lo, fault_hi = poisson_ci(cs["fault"])
    gb_lo, gb_hi = poisson_ci(gb_samples)
    lower = fault_lo * share_lo + gb_lo + tlb + tlb_other
    upper = fault_hi * share_hi + gb_hi + tlb + tlb_other
    inplace_ns = cs["fault"] * period_ns / nfaults if nfaults and cs["fault"] else None
    calib = doc.get("calibrate_fault_ns")
    # what one re-fault costs whole on this machine against the part of it the kernel's own
    # time shows (calibrate: a buffer written after MADV_DONTNEED less written resident):
    # the rest is paid where no kernel sample sees it (user time: a VM host's fault, caches)
    whole, whole_sys = doc.get("calibrate_refault_ns"), doc.get("calibrate_refault_sys_ns")
    vm_extra = None
    if removed and whole and whole_sys and whole > whole_sys > 0:
        vm_extra = fault_hi * share_hi * (whole / whole_sys - 1)
    elif removed and calib and inplace_ns is not None:  # a calibrate without the split
        vm_extra = share_hi * nfaults * max(0.0, calib - inplace_ns) / period_ns
    if vm_extra is not None:
        vm_extra = min(vm_extra, cs["user"])  # paid in its user time, which bounds it
        upper += vm_extra
    if removed == 0 and calls_stopped == 0:
        lower = upper = 0.0
    all_s = cs["all"] or 0
    s_lo = min(lower / all_s, 0.99) if all_s else 0.0
    s_hi = min(upper / all_s, 0.99) if all_s else 0.0
    pick = "madvise" if stops == ["madvise"] else "any"
    env_fix = keep_env(keep, alloc["vars"]) if keep else []
    extra_rss = tot["peak_bytes"].get(pick, 0)
    lost_to_refaults = (cs["fault"] * (f["refault"] / nrec if nrec else 0.0) + cs["giveback"] + cs["tlb"]) \
        * period_ns / 1e9
    return {
        "pid": main["pid"], "comm": main["comm"], "images": len(entries), "seconds": secs,
        "ended": all(e["ended"] for e in entries),
        "allocator": alloc, "lower_bounds": doc["watch"].get("lower_bounds", doc["watch"]["lost"] > 0),
        "faults": nfaults, "faults_per_s": nfaults / secs, "major_per_s": f["major"] / secs,
        "fault_period": period, "faults_recorded": nrec,
        "breakdown": {k: f[k] * period for k, _ in CLASSES}, "refault_age": [a * period for a in f["refault_age"]],
        "refault_pages": f["refault_pages"] * period, "refault_bytes": f["refault_pages"] * period * 4096,
        "first_after_unmap": f.get("first_after_unmap", 0) * period,
        "refault_by": {k: v * period for k, v in f["refault_by"].items()},
        "refault_share": f["refault"] / nrec if nrec else 0.0,
        "refault_share_ci": list(wilson(f["refault"], nrec)) if period > 1 else None,
        "alloc_refault_by": {k: v * period for k, v in f["alloc_refault_by"].items()},
        "alloc_refault_share": sum(f["alloc_refault_by"].values()) / nrec if nrec else 0.0,
        "alloc_refault_share_ci": list(wilson(sum(f["alloc_refault_by"].values()), nrec)) if period > 1 else None,
        "calls": tot["calls"], "advice": tot["advice"], "failed_calls": tot["failed_calls"],
        "lazy_bytes": tot["lazy_bytes"], "untracked_bytes": tot["untracked_bytes"],
        "cpu_s": cpu_s, "cpu_of_one": cpu_s / secs, "samples": cs,
        "fault_cpu_share": cs["fault"] / all_s if all_s else 0.0,
        "giveback_cpu_share": cs["giveback"] / all_s if all_s else 0.0,
        "lost_to_refaults_s": lost_to_refaults,
        "fault_libs": tot["fault_libs"], "giveback_libs": tot["giveback_libs"],
        "inplace_fault_ns": inplace_ns, "calibrate_fault_ns": calib,
        "calibrate_refault_ns": doc.get("calibrate_refault_ns"),
        "calibrate_refault_sys_ns": doc.get("calibrate_refault_sys_ns"),
        "cmdline": main.get("cmdline") or [], "args_hidden": main.get("args_hidden", 0),
        "proc_start": main.get("proc_start"), "proc_end": main.get("proc_end"),
        "huge": dict(huge_window(doc, main), prediction=huge_prediction(doc, alloc, f, cs, nrec, period)),
        "prediction": None if not keep else {
            "setting": keep["setting"], "settings": keep["settings"], "env": env_fix, "stops": stops,
            "removed_faults": removed * period, "removed_share": share_removed,
            "saved_cpu_s": [lower * period_ns / 1e9, upper * period_ns / 1e9],
            "saved_share": [s_lo, s_hi],
            "speedup": [1 / (1 - s_lo), 1 / (1 - s_hi)],
            "cpu_bound": cpu_s / secs >= CPU_BOUND,
            "enough_samples": cs["all"] >= MIN_SAMPLES,
            "vm_part_s": None if vm_extra is None else vm_extra * period_ns / 1e9,
            "extra_rss_bytes": extra_rss,
            "growth_bytes_per_s": growth(main, stops),
        },
    }


def targets(doc):
    """The targets of the document: one (the process, with its children) for -p and a command;
    every process (its images together) for --all, ranked by the CPU re-faults cost it."""
    procs = doc["processes"]
    if not procs:
        return []
    if doc["mode"] != "all":
        return [analyse(doc, procs)]
    by_pid = {}
    for e in procs:
        by_pid.setdefault(e["pid"], []).append(e)
    out = [analyse(doc, es) for es in by_pid.values()]
    out.sort(key=lambda t: (-t["lost_to_refaults_s"], -t["faults"]))
    return out


# ---- words -------------------------------------------------------------------------------

def count(n):
    return f"{n:,.0f}"


def pct(x):
    return f"{100 * x:.0f}%" if x >= 0.01 or x == 0 else f"{100 * x:.1f}%"


def mib(b):
    return f"{b / MIB:,.1f} MiB" if b < 100 * MIB else f"{b / MIB:,.0f} MiB"


def mib_s(b):
    return f"{b / MIB:,.1f} MiB/s"


def secs_words(s):
    return f"{s:.3g} s" if s < 100 else f"{s:,.0f} s"


def share_words(x, ci):
    """A share; under --light, with its 95% CI (from the faults recorded)."""
    return pct(x) if not ci else f"{pct(x)} (95% CI {pct(ci[0])}–{pct(ci[1])})"


def who(t):
    a = t["allocator"]
    fam = a["family"]
    if not fam:
        name = "allocator unknown"
    elif not a["sure"]:
        name = f"{fam} or unrecognised"
    else:
        ver = "" if a["version"] in ("", "unknown") else " " + a["version"].split("-")[0].split("+")[0]
        name = f"{fam}{ver} {a['how']}"
    keep = (t["prediction"] or {}).get("env") or []
    names = [v[:v.index("=")] for v in keep]  # the variables, NAME=value
    found = [v for v in a["vars"]]
    if a.get("malloc_conf_compiled"):
        found = found + [f'malloc_conf "{a["malloc_conf_compiled"]}" compiled in']
    if not a.get("environment_read") and not found:
        conf = "its environment unreadable"
    elif found:
        conf = ", ".join(found)
    elif names:
        conf = " and ".join(names) + " unset"
    else:
        conf = "no allocator variable set"
    return f"{t['comm'] or '?'}, {name}, {conf}"


# the lines that split CPU samples by the mapped file their user address fell in: what each counts
LIBS_WORDS = (("fault_libs", "CPU samples in the fault path, by the code that touched the page"),
              ("giveback_libs", "CPU samples in give-back calls, by the code that made the call"))


def verify_command(doc, t):
    """The `mallocbench exec` command line that measures the default against the keep setting,
    always one exec accepts: the family (and its library where it is not the family's own) as
    -a takes it, the settings the process started with and the keep setting as -t takes them,
    the command without an env(1) that set allocator variables.  None where exec cannot swap the
    allocator (a program that links or carries its own) or nothing is predicted."""
    p = t["prediction"]
    a = t["allocator"]
    if not p or a["how"] in LINKED:
        return None
    ex = a.get("as_exec") or {}
    item = a["family"] + (f":{ex['library']}" if ex.get("library") else "")
    started = ex.get("settings", [])
    keep_names = {mbdata.setting_name(s) for s in p["settings"]}
    sets = [f"default:{s}" for s in started] + [f"keep:{s}" for s in started if mbdata.setting_name(s) not in keep_names] \
        + [f"keep:{s}" for s in p["settings"]]
    if doc["mode"] == "command":
        cmd = doc["target"].get("exec_command", doc["target"]["command"])
    else:
        cmd = t.get("cmdline") or []
    tail = " ".join(shlex.quote(c) for c in cmd) if cmd else "CMD ARGS"
    if doc["mode"] != "command" and cmd and t.get("args_hidden"):  # a process's arguments were left out
        tail += " ARGS"
    words = ["-a", f"default={item},keep={item}"]
    for s in sets:
        words += ["-t", s]
    return "mallocbench exec " + " ".join(shlex.quote(w) for w in words) + " -- " + tail


def verify_notes(doc, t):
    """What the Verify line could not carry over: allocator variables exec sets no tunable for,
    the env(1) words it dropped; and for a program that carries its allocator, how to verify."""
    p = t["prediction"]
    a = t["allocator"]
    if not p:
        return []
    if a["how"] in LINKED:
        return [f"To verify: exec cannot swap an allocator linked into the program: start it with "
                f"{' '.join(p['env'])} and run diagnose again."]
    out = []
    if doc["mode"] != "command" and t.get("args_hidden"):
        out.append(f"(ARGS: the process's {t['args_hidden']} argument(s), left out since they may carry secrets; "
                   f"diagnose --show-args keeps them.)")
    left = (a.get("as_exec") or {}).get("not_settable") or []
    if left:
        out.append(f"(The Verify line sets the allocator through exec's -a and -t only: it leaves out "
                   f"{'; '.join(left)}, which it could not read as a tunable of {a['family']}.)")
    dropped = (doc["target"].get("exec_dropped") or []) if doc["mode"] == "command" else []
    if dropped:
        out.append(f"(The Verify line runs the command without env's {' '.join(dropped)}: exec sets the allocator "
                   "itself; `diagnose -a FAMILY -- CMD` does the same.)")
    return out


def paragraph(doc, t):
    """The first lines: the seed's question answered for this target."""
    secs = t["seconds"]
    lb = "at least " if t["lower_bounds"] else ""
    fam = t["allocator"]["family"] or "its allocator"
    head = f"PID {t['pid']} ({who(t)})"
    window = f"in the last {secs_words(secs)}" if doc["mode"] != "command" else f"over its {secs_words(secs)} run"
    if not t["faults"] and not t["samples"]["all"]:
        return [f"{head}: nothing ran {window}: no fault, no give-back call, no CPU sample."]
    gb = sum(t["calls"][c]["alloc_bytes"] for c in CALLS)
    top_call = max(CALLS, key=lambda c: t["calls"][c]["alloc_bytes"])
    adv = t["advice"][0]["advice"] if top_call == "madvise" and t["advice"] else None
    how = f"madvise({adv})" if adv else CALL_WORDS[top_call]
    ages = t["refault_age"]
    young = next((i for i in range(len(AGES)) if sum(ages[:i + 1]) >= 0.5 * sum(ages)), len(AGES) - 1) \
        if sum(ages) else None
    lines = [f"{head}: {pct(t['fault_cpu_share'])} of its CPU {window} was the kernel's fault path"
             + (f" and {pct(t['giveback_cpu_share'])} the calls that give memory back" if t["giveback_cpu_share"] >= 0.005 else "")
             + f"; {share_words(t['alloc_refault_share'], t['alloc_refault_share_ci'])} of its {lb}"
             + f"{'~' if t['fault_period'] > 1 else ''}{count(t['faults_per_s'])} faults/s hit pages {fam} had given back"
             + (f" ({mib_s(gb / secs)}, most with {how})" if gb else "")
             + (f" and {pct(t['refault_share'] - t['alloc_refault_share'])} pages its own code had given back"
                if t["refault_share"] - t["alloc_refault_share"] >= 0.005 else "")
             + (f", most of them less than {AGES[young][1:]} earlier" if young is not None and t["breakdown"]["refault"] else "")
             + (f"; {pct(t['first_after_unmap'] / t['faults'])} touched new memory in place of memory {fam} had unmapped"
                if t["faults"] and t["first_after_unmap"] / t["faults"] >= 0.05 else "")
             + "."]
    p = t["prediction"]
    if not p:
        lines.append(f"No keep setting is known for {fam or 'this allocator'}: nothing is predicted.")
        return lines
    env = " ".join(p["env"])
    if p["removed_faults"] == 0 and p["saved_cpu_s"][1] == 0:
        lines.append(f"`{env}` would remove none of them: {fam} gave nothing back by the calls it stops.")
        return lines
    if not p["enough_samples"]:
        lines.append(f"Too little of its CPU was watched ({t['samples']['all']} ms) to predict what "
                     f"`{env}` would save.")
        return lines
    lo, hi = p["saved_share"]
    sp_lo, sp_hi = p["speedup"]
    bound = "" if p["cpu_bound"] else "up to "
    rss = f"+{mib(p['extra_rss_bytes'])} RSS"
    if p["growth_bytes_per_s"]:
        rss += f", still growing by {mib_s(p['growth_bytes_per_s'])} at the window's end"
    lines.append(f"`{env}` is predicted to save {pct(lo)}–{pct(hi)} of its CPU "
                 f"({bound}{sp_lo:.2f}–{sp_hi:.2f}×) for up to {rss}.")
    if not p["cpu_bound"]:
        lines.append(f"(It used {pct(t['cpu_of_one'])} of one CPU: the rest of its time went to waiting, so the "
                     "speedup of its work is at most that.)")
    v = verify_command(doc, t)
    if v:
        lines.append(f"Verify: {v}")
    return lines + verify_notes(doc, t)


def huge_table_line(h):
    """The window's huge pages: the process's share of its anonymous memory, the machine's faults."""
    at = [f"{pct(h[k])} {w}" for k, w in (("share_start", "at the start"), ("share_end", "at the end"),
                                           ("share_peak", "at its largest reading")) if h[k] is not None]
    if h["peak"] and h["share_peak"] is not None:
        at[-1] += f" ({mib(h['peak']['anon_kib'] * 1024)})"
    mine = (", ".join(at) + " of its anonymous memory in huge pages") if at else "its huge-page share was not read"
    vm = [f"{count(h[k])} {w}" for k, w in (("thp_faults", "huge-page faults"), ("thp_fallbacks", "fell back to small pages"),
                                             ("thp_pmd_splits", "huge pages split")) if h[k] is not None]
    return (f"Huge pages: {mine}; machine-wide over the window (any process's): "
            + (", ".join(vm) if vm else "/proc/vmstat unreadable"))


def signed_range(lo, hi):
    """A predicted change of CPU share in words: save, cost, or either."""
    if lo >= 0:
        return f"save {pct(lo)}–{pct(hi)} of its CPU"
    if hi <= 0:
        return f"cost {pct(-hi)}–{pct(-lo)} of its CPU more"
    return f"change its CPU by −{pct(-lo)} to +{pct(hi)} saved (neither sure)"


def huge_lines(doc, t):
    """The family's huge-page setting: predicted beside the keep setting, or why not."""
    p = t["huge"]["prediction"]
    fam = t["allocator"]["family"] or "its allocator"
    if not p["setting"] or p["saved_share"] is None:
        return [f"Huge pages ({p['setting'] or 'no setting'}): {p['why']}: nothing is predicted."]
    if t["samples"]["all"] < MIN_SAMPLES:
        return [f"Huge pages ({p['setting']}): too little of its CPU was watched ({t['samples']['all']} ms) to "
                "predict what they would save."]
    lo, hi = p["saved_share"]
    sp = f" ({'' if t['cpu_of_one'] >= CPU_BOUND else 'up to '}{p['speedup'][0]:.2f}–{p['speedup'][1]:.2f}×)" \
        if lo >= 0 else ""
    line = (f"`-t {fam}:{p['setting']}` (its huge-page setting, huge=advise) is predicted to {signed_range(lo, hi)}{sp}: "
            f"{count(p['removed_faults'])} re-faults landed on 2 MiB blocks {fam} gave back whole; huge pages "
            f"would take them as {huge_count(p)} huge faults of {p['huge_fault_ns']:,.0f} ns (calibrate).")
    out = [line]
    if t["allocator"]["how"] not in LINKED:
        cmd = doc["target"].get("exec_command", doc["target"]["command"]) if doc["mode"] == "command" \
            else (t.get("cmdline") or [])
        tail = " ".join(shlex.quote(c) for c in cmd) if cmd else "CMD ARGS"
        out.append(f"Verify: mallocbench exec -a {fam} -t {fam}:huge=system,advise -- {tail}")
    return out


def table(rows, head):
    w = [max(len(str(r[i])) for r in [head] + rows) for i in range(len(head))]
    out = ["  ".join(str(h).ljust(w[i]) if i == 0 else str(h).rjust(w[i]) for i, h in enumerate(head))]
    for r in rows:
        out.append("  ".join(str(c).ljust(w[i]) if i == 0 else str(c).rjust(w[i]) for i, c in enumerate(r)))
    return out


def tables(doc, t):
    out = []
    n = t["faults"] or 1
    secs = t["seconds"]
    rows = [[words, count(t["breakdown"][k]), pct(t["breakdown"][k] / n)] for k, words in CLASSES]
    rows.insert(1, ["  of them, new memory in place of memory the allocator unmapped",
                    count(t["first_after_unmap"]), pct(t["first_after_unmap"] / n)])
    for i, a in enumerate(AGES):
        rows.append([f"  given back {a} before", count(t["refault_age"][i]), pct(t["refault_age"][i] / n)])
    light = f"; --light: one in {t['fault_period']} recorded ({count(t['faults_recorded'])}), counts scaled" \
        if t["fault_period"] > 1 else ""
    out += ["", f"Faults ({count(t['faults'])}, {count(t['faults_per_s'])}/s, {count(t['major_per_s'])} major/s{light}):"]
    out += table(rows, ["kind", "faults", "share"])
    out.append(f"re-faulted: {count(t['refault_pages'])} pages of 4 KiB ({mib(t['refault_bytes'])}); "
               f"given back by madvise {count(t['refault_by']['madvise'])}, munmap {count(t['refault_by']['munmap'])}, "
               f"brk {count(t['refault_by']['brk'])} faults; of them by the allocator "
               f"{count(sum(t['alloc_refault_by'].values()))}")
    rows = [[CALL_WORDS[c], count(t["calls"][c]["calls"] / secs), mib_s(t["calls"][c]["bytes"] / secs),
             pct(t["calls"][c]["alloc_calls"] / t["calls"][c]["calls"]) if t["calls"][c]["calls"] else "-"]
            for c in CALLS]
    rows += [[f"  {a['advice']}", count(a["calls"] / secs), mib_s(a["bytes"] / secs), ""] for a in t["advice"]]
    out += ["", "Calls that give memory back (those that succeeded):"]
    out += table(rows, ["call", "calls/s", "bytes/s", "by the allocator"])
    if t["lazy_bytes"]:
        out.append(f"lazily freed (MADV_FREE): {mib_s(t['lazy_bytes'] / secs)}: a re-touch before the kernel "
                   "reclaims it does not fault")
    if t["failed_calls"]:
        out.append(f"failed calls (not counted above): {count(t['failed_calls'])}")
    s = t["samples"]
    alls = s["all"] or 1
    rows = [["user space", count(s["user"]), pct(s["user"] / alls)],
            ["kernel: page-fault entry", count(s["fault"]), pct(s["fault"] / alls)],
            ["kernel: give-back calls", count(s["giveback"]), pct(s["giveback"] / alls)],
            ["kernel: TLB-flush IPIs", count(s["tlb"]), pct(s["tlb"] / alls)],
            ["kernel: other", count(s["kernel"]), pct(s["kernel"] / alls)]]
    out += ["", f"Its CPU ({secs_words(t['cpu_s'])}, {pct(t['cpu_of_one'])} of one CPU; cpu-clock samples, "
                f"one per {doc['watch']['cpu_period_ns'] / 1e6:g} ms):"]
    out += table(rows, ["where", "samples", "share"])
    for key, what in LIBS_WORDS:
        if t[key]:
            out.append(f"{what}: " + ", ".join(f"{lib['lib'].rsplit('/', 1)[-1]} {lib['samples']}" for lib in t[key][:4]))
    if t["inplace_fault_ns"]:
        cal = (f"; calibrate: {t['calibrate_fault_ns']:,.0f} ns a fault"
               + (f", {t['calibrate_refault_ns']:,.0f} ns a re-fault whole ({t['calibrate_refault_sys_ns']:,.0f} ns of it "
                  "system time)" if t.get("calibrate_refault_ns") and t.get("calibrate_refault_sys_ns") else "")
               if t["calibrate_fault_ns"] else " (--calibrate measures this machine's, for the upper end)")
        out.append(f"in-place cost of one fault: {t['inplace_fault_ns']:,.0f} ns{cal}")
    ps, pe = t["proc_start"], t["proc_end"]
    if pe:
        out.append(f"RSS {mib(ps['rss_kib'] * 1024) if ps else '?'} → {mib(pe['rss_kib'] * 1024)}")
    out.append(huge_table_line(t["huge"]))
    a = t["allocator"]
    out += ["", f"Allocator: {a['family'] or 'unknown'} ({a['evidence']})"
                + (f"; version {a['version']} ({a['version_how']})" if a["version"] != "unknown" else "; version unknown")]
    out.append("Started with: " + (", ".join(a["vars"]) or "no allocator variable")
               + (f"; /etc/malloc.conf names {a['malloc_conf_file']}" if a["malloc_conf_file"] else "")
               + (f"; its program's malloc_conf is \"{a['malloc_conf_compiled']}\"" if a.get("malloc_conf_compiled") else "")
               + ". Settings changed at run time (mallopt, mallctl) cannot be seen from outside.")
    return out


def notes(doc):
    w = doc["watch"]
    out = []
    if w["lost"]:
        out.append(f"{count(w['lost'])} records were lost: the counts are lower bounds.")
    if w.get("capped"):
        out.append(f"diagnose reached its memory cap ({mib(w['model_limit'])} for its page model; --max-memory): "
                   f"memory given back past it was counted, not followed page by page: the counts are lower bounds.")
    if w.get("dropped_records"):
        out.append(f"{count(w['dropped_records'])} records came after the window's end or a stop signal and were "
                   f"not taken: the counts are lower bounds.")
    if not w["kernel_symbols"]:
        out.append("Kernel symbols were unreadable: CPU samples are not split by place.")
    out.append(f"Watched {doc['window']['seconds']:.2f} s on {w['cpus']} CPUs ({doc['window']['ended']}); "
               f"{count(w['records'])} records, {count(w['lost'])} lost; diagnose used "
               f"{doc.get('self_cpu_s', 0):.2f} s of CPU"
               + (f" ({doc['self_cpu_s'] * 1e9 / w['records']:,.0f} ns per record)" if w["records"] and doc.get("self_cpu_s") else "")
               + ".")
    return out


def ranking(doc, ts, top):
    rows = []
    for i, t in enumerate([t for t in ts if t["faults"] or t["cpu_s"]][:top]):
        rows.append([str(i + 1), str(t["pid"]), t["comm"] or "?",
                     (t["allocator"]["family"] + ("" if t["allocator"]["sure"] else "?")) or "unknown",
                     f"{t['cpu_s']:.2f}", f"{t['lost_to_refaults_s']:.3f}",
                     pct(t["lost_to_refaults_s"] / t["cpu_s"]) if t["cpu_s"] else "-",
                     count(t["faults_per_s"]), pct(t["refault_share"])])
    return table(rows, ["#", "pid", "comm", "allocator", "CPU s", "lost to re-faults s", "of its CPU",
                        "faults/s", "re-faults"])


def render(doc, top=10):
    """The words, each line printable (mbdata.printable): a watched process's name, its
    environment's allocator settings, its command line, its libraries and stacks are another
    user's text, and no control sequence of theirs reaches the terminal or the --json words."""
    return [mbdata.printable(line) for line in _render(doc, top)]


def _render(doc, top):
    ts = targets(doc)
    lines = []
    if not ts:
        return ["No process was watched."] + notes(doc)
    if doc["mode"] == "all":
        lines.append(f"Every process of the host, {doc['window']['seconds']:.2f} s, ranked by the CPU that "
                     "re-faults and give-back calls cost them (? = glibc or unrecognised):")
        lines += ranking(doc, ts, top)
        for t in ts[:min(top, 3)]:
            if t["lost_to_refaults_s"] > 0:
                lines += [""] + paragraph(doc, t)
    else:
        t = ts[0]
        lines += paragraph(doc, t)
        lines += huge_lines(doc, t)
        lines += tables(doc, t)
        lines += stack_lines(doc.get("stacks"))
    lines += [""] + notes(doc)
    return lines


def _trim(stack, keep):
    """A folded stack 'event;root;...;leaf' cut to its frames past the kernel, libc and the
    allocator (`keep` of them, leaf last): the program's code that touched or gave back."""
    frames = stack.split(";")[1:]
    while frames and flamegraph.frame_kind(frames[-1]) in (flamegraph.KERNEL, flamegraph.LIBC,
                                                           flamegraph.MARKER):
        frames.pop()
    if keep == "program":
        while frames and flamegraph.frame_kind(frames[-1]) == flamegraph.ALLOCATOR:
            frames.pop()
    return ";".join(frames[-4:]) or "(no frame of its own)"


REFAULTED_EVENT = "page-faults on re-faulted pages"


def refaulted_subset(data, script, pages):
    """The blocks of `script` (perf script with call chains) that are faults on pages the page
    model saw re-faulted, as a script text of their own; None when perf's two listings do not
    line up.  pages: {(pid, page address)}; the addresses come from a second listing
    (`-F pid,event,addr`, one line per sample, in the same order)."""
    compact = [l for l in flamegraph.run_perf("perf", ["script", "-i", data, "-F", "pid,event,addr"]).splitlines()
               if l.strip()]
    blocks = [b for b in re.split(r"\n\s*\n", script) if b.strip() and not b.lstrip("\n").startswith("\t")]
    if len(blocks) != len(compact):
        return None
    keep = []
    for block, line in zip(blocks, compact):
        f = line.split()
        if len(f) < 3 or not f[1].startswith("page-faults"):
            continue
        try:
            key = (int(f[0]), int(f[-1], 16) & ~4095)
        except ValueError:
            continue
        if key in pages:
            keep.append(block)
    return "\n\n".join(keep) + "\n"


def read_pages(path):
    pages = set()
    try:
        with open(path) as f:
            for line in f:
                pid, page = line.split()
                pages.add((int(pid), int(page, 16)))
    except (OSError, ValueError):
        return None
    return pages


def stacks(prefix, force, alloc_lib, pages=None):
    """perf record's stacks (PREFIX.perf.data, made by the harness) folded into PREFIX.folded and
    drawn into PREFIX.svg; perf.data and its log removed.  The top stacks that touched memory
    (faults) and that gave it back (the calls)."""
    data, log = prefix + ".perf.data", prefix + ".perf.log"
    out = {"folded": prefix + ".folded", "svg": prefix + ".svg", "faults": [], "giveback": [], "error": None}
    try:
        if not os.path.exists(data) or os.path.getsize(data) == 0:  # diagnose makes it; perf fills it
            try:  # diagnose made the log O_EXCL; read without following a link put there since
                why = mbout.read_regular(log, follow=False).decode(errors="replace").strip().splitlines()
            except (OSError, mbout.NotRegular):
                why = []
            raise flamegraph.ProfileError(f"perf record wrote nothing: {why[-1] if why else 'no message'}")
        for p in (out["folded"], out["svg"]):
            mbout.check(p, force)
        script = flamegraph.run_perf("perf", ["script", "--no-inline", "-i", data, "-F", flamegraph.SCRIPT_FIELDS])
        folded, periods, stopped = flamegraph.fold_script(script)
        if pages:
            sub = refaulted_subset(data, script, pages)
            if sub is None:
                out["error_refaulted"] = "perf's two listings did not line up: the stacks are of every fault"
            else:
                rf = flamegraph.fold_script(sub)[0].get("page-faults", {})
                folded[REFAULTED_EVENT] = {REFAULTED_EVENT + k[len("page-faults"):]: n for k, n in rf.items()}
                periods[REFAULTED_EVENT] = periods.get("page-faults", 1)
        flamegraph.write_folded(folded, out["folded"], force)
        meta = {"periods": periods, "stopped": stopped, "lost": {}, "lost_unknown": True}
        mbout.write(out["svg"], flamegraph.render_svg(folded, meta, "mallocbench diagnose",
                                                      flamegraph.allocator_objects(alloc_lib)), force=force)
        touched = REFAULTED_EVENT if folded.get(REFAULTED_EVENT) else "page-faults"
        out["faults_event"] = touched
        for key, events, keep in (("faults", (touched,), "program"),
                                  ("giveback", [e for e in folded if e.startswith("syscalls:")], "allocator")):
            agg = {}
            for ev in events:
                for st, n in folded.get(ev, {}).items():
                    k = _trim(st, keep)
                    agg[k] = agg.get(k, 0) + n
            out[key] = [{"stack": k, "samples": n} for k, n in sorted(agg.items(), key=lambda x: -x[1])[:5]]
    except (flamegraph.ProfileError, OSError, mbout.OutputError) as e:
        out["error"] = str(e)
    finally:
        for p in (data, log):
            if os.path.exists(p):
                os.unlink(p)  # mbout: the harness's own scratch files, named after the user's PREFIX
    return out


def stack_lines(st):
    if not st:
        return []
    if st["error"]:
        return ["", f"Stacks: none ({st['error']})."]
    out = ["", f"Who (perf record --call-graph dwarf; faults 1 in 16): {st['svg']}, {st['folded']}"]
    touched = "touched re-faulted pages" if st.get("faults_event") == REFAULTED_EVENT else \
        "touched memory (of every fault: none sampled on a re-faulted page)"
    for key, what in (("faults", f"{touched} (the program's frames past libc and the allocator)"),
                      ("giveback", "gave memory back (past libc)")):
        out.append(f"  stacks that {what}:")
        out += [f"    {s['samples']:>6}  {s['stack']}" for s in st[key][:3]] or ["    none sampled"]
    return out


def full(doc, top=10):
    """The --json document: the measurements, the analysis and the words."""
    out = dict(doc)
    out["schema"] = SCHEMA
    out["analysis"] = targets(doc)
    out["words"] = render(doc, top)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(prog="mallocbench diagnose", description=__doc__.split("\n\n")[0])
    ap.add_argument("doc", help="the document (the harness's, or one saved with --json)")
    ap.add_argument("--json", action="store_true", help="the document with the analysis, not words")
    ap.add_argument("--top", type=int, default=10, help="--all: processes shown")
    ap.add_argument("--stacks", help="PREFIX of perf record's stacks (the harness's --stacks)")
    ap.add_argument("--force", action="store_true", help="replace the --stacks outputs")
    ap.add_argument("--refaulted", help="the harness's re-faulted pages, 'PID PAGE' lines (for --stacks)")
    a = ap.parse_args(argv)
    doc = load(a.doc)
    if a.stacks:
        alloc = max(doc["processes"], key=lambda e: e["cpu_samples"]["all"])["allocator"] if doc["processes"] else {}
        doc["stacks"] = stacks(a.stacks, a.force, alloc.get("path", ""),
                               read_pages(a.refaulted) if a.refaulted else None)
    try:  # a saved document someone changed: one line, not a traceback from deep in the analysis
        text = json.dumps(full(doc, a.top), indent=1) if a.json else "\n".join(render(doc, a.top))
    except (KeyError, IndexError, TypeError, ValueError, AttributeError, ZeroDivisionError) as e:
        raise cli.Fail(f"{a.doc}: not a document diagnose wrote ({type(e).__name__}: {e})",
                       2) from None
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
