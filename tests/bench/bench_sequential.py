#!/usr/bin/python3
"""bench_sequential.py - the error rate and the price of the sequential stopping rule
(scripts/mallocbench/sequential.py; docs/precision.md "Stopping when the verdict is settled"),
simulated on the committed runs' own noise.

Sources: every comparison of a committed run (tests/fixtures/*.csv, docs/examples/*.csv) with
>= 8 paired blocks: each configuration against its workload's first, the per-block log ratios
of the primary figure (change's block medians, paired by block), centred on their median.  A
simulated run resamples a source's centred ratios with replacement to the cap (30 blocks) and
gives each a random sign (so its true centre is 0), then adds a planted change.

  a) A/A: the share of runs whose stop says improved or regressed (and whose stop CI misses 0),
     with its Clopper-Pearson 95% CI; target: the CI's upper end <= 5.5%.
  b) planted 3%, 10%, 2x: blocks to a verdict (median, 90th percentile), the share with no
     verdict by the cap and the median wall time (blocks x the source's median block time,
     every configuration of its workload), sequential against today's plan (--resolution 2%:
     the 95% CI checked after every block from 6, stopping at +-2% or the cap) and a fixed 30
     blocks at 95%; target: sequential's median <= 1.3x today's for 3% and 10%.
  c) re-measuring disturbed blocks: each sample disturbed with probability p (its figure
     divided by a factor, on a random configuration or always the other); a disturbed block
     measured again whole, at most twice, for at most a quarter of the plan's blocks (the
     harness's remeasure_most: 7 of 30, the first disturbed blocks take them); the bias
     of the 30-block estimate and the coverage of its 95% CI (and of the sequential stop's),
     against not re-measuring and against no disturbance.

The rule runs vectorised here (numpy; the same Walsh averages, critical values and settle
as sequential.stop), checked first to give sequential.stop's stops on a few hundred runs.

    bench_sequential.py [--runs 10000] [--seed 1] [--looks 8:.008,12:.004,18:.008] [--alternatives]
exit 1 when a target is missed (meant for the default 10000 runs: with a few hundred, a source's
Clopper-Pearson CI alone is wider than the 5.5% target)."""
import argparse
import glob
import math
import os
import sys
import time
import warnings

try:
    import numpy as np
    from scipy import stats as ss
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)
import mallocbench
from mallocbench import change
from mallocbench import mbcsv
from mallocbench import sequential

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CAP = 30
MIN_BLOCKS = 8
FLOOR, RESOLUTION = 0.01, 0.02
EFFECTS = (("3%", 1.03), ("10%", 1.10), ("2x", 2.0))
AA_MAX = 0.055       # the A/A false-verdict rate's CI upper end
BLOCKS_MAX = 1.3     # sequential's median blocks against today's, for 3% and 10%
WHY = (None, "improved", "regressed", "negligible", "resolution", "cap")
NONE, IMPROVED, REGRESSED, NEGLIGIBLE, RESOLVED, CAPPED = range(6)
TODAY_FROM = 6       # today's plan: the first block count checked (VERDICT_MIN_BLOCKS)
TODAY_ALPHA = 0.05


# ---- the sources ----------------------------------------------------------------------------

def block_seconds(rows):
    """The median over blocks of the sum of total_wall_s of a workload's rows in each block."""
    per = {}
    for r in rows:
        try:
            v = float(r.get("total_wall_s") or "nan")
        except ValueError:
            continue
        if r.get("block", "") != "" and math.isfinite(v):
            key = (r.get("matrix_id", ""), r["block"], r.get("_machine") or r.get("host", ""))
            per[key] = per.get(key, 0.0) + v
    return float(np.median(list(per.values()))) if per else float("nan")


def comparisons(run, name, earlier):
    """[source] of one run: each configuration against its workload's first, >= MIN_BLOCKS
    pairs, none of whose samples an earlier file holds (a fixture made from another run's rows
    repeats its measurements: counted once)."""
    fn = change.METRICS[0][3]
    out = []
    for (wl, _params), by_config in run.groups.items():
        configs = [c for c in run.config_order if c in by_config]
        if len(configs) < 2:
            continue
        base = change._unit_values(by_config[configs[0]], fn, False)
        secs = block_seconds([r for c in configs for r in by_config[c]])
        for c in configs[1:]:
            if any(sample_key(r) in earlier for r in by_config[configs[0]] + by_config[c]):
                continue
            other = change._unit_values(by_config[c], fn, False)
            common = change._common_blocks(base, other) or []
            d = [math.log(other[u] / base[u]) for u in common if base[u] > 0 and other[u] > 0]
            if len(d) >= MIN_BLOCKS:
                d = np.array(d)
                out.append({"name": f"{name} {wl} {c}/{configs[0]}", "d": d - np.median(d), "raw": d,
                            "block_s": secs})
    return out


def sample_key(r):
    return r.get("run_id", ""), r.get("throughput", "")


def sources():
    """[{name, d (centred log ratios), raw, block_s}] of every committed run (comparisons)."""
    paths = sorted(glob.glob(os.path.join(ROOT, "tests", "fixtures", "*.csv")) +
                   glob.glob(os.path.join(ROOT, "docs", "examples", "*.csv")))
    out, earlier = [], set()
    for p in paths:
        if p.endswith(".rss.csv"):
            continue
        try:
            run = mallocbench.load(p)
        except mbcsv.CsvError as e:
            print(f"skipped {os.path.relpath(p, ROOT)}: {e}")
            continue
        out += comparisons(run, os.path.basename(p)[:-4], earlier)
        earlier |= {sample_key(r) for r in run.ok}
    return out


def resample(rng, d, runs, cap=CAP):
    """runs x cap: d drawn with replacement, each with a random sign."""
    return rng.choice(d, size=(runs, cap)) * rng.choice((-1.0, 1.0), size=(runs, cap))


# ---- the rule, vectorised -------------------------------------------------------------------

def walsh_ci(D, t):
    """(est, lo, hi) per row of D: the Hodges-Lehmann pseudo-median of its Walsh averages and
    the t-th from each end (sequential.ci; lo, hi nan when t < 0)."""
    n = D.shape[1]
    i, j = np.triu_indices(n)
    W = (D[:, i] + D[:, j]) / 2
    m = W.shape[1]
    ks = sorted({(m - 1) // 2, m // 2} | ({t, m - 1 - t} if t >= 0 else set()))
    W.partition(ks, axis=1)
    est = (W[:, (m - 1) // 2] + W[:, m // 2]) / 2
    if t < 0:
        return est, np.full(len(D), np.nan), np.full(len(D), np.nan)
    return est, W[:, t], W[:, m - 1 - t]


def settle(est, lo, hi, floor=FLOOR, resolution=RESOLUTION):
    """sequential.settle's why per row as a code of WHY (NONE where it could still change)."""
    with np.errstate(invalid="ignore"):
        e, l, h = np.exp(est), np.exp(lo), np.exp(hi)
        up, down = l > 1 + floor, h < 1 - floor
        why = np.where(up, IMPROVED, np.where(down, REGRESSED, NONE))
        why[(why == NONE) & (l >= 1 - floor) & (h <= 1 + floor)] = NEGLIGIBLE
        if resolution > 0:
            why[(why == NONE) & ((h - l) / 2 / e <= resolution)] = RESOLVED
    return why


def empty(runs):
    return {"look": np.zeros(runs, int), "blocks": np.zeros(runs, int), "why": np.zeros(runs, int),
            "alpha": np.zeros(runs), "est": np.zeros(runs), "lo": np.zeros(runs), "hi": np.zeros(runs)}


def record(out, idx, done, k, b, a, why, est, lo, hi):
    sel = idx[done]
    out["look"][sel], out["blocks"][sel], out["why"][sel], out["alpha"][sel] = k, b, why[done], a
    out["est"][sel], out["lo"][sel], out["hi"][sel] = est[done], lo[done], hi[done]


def seq_stops(D, plan):
    """sequential.stop of every row of D (no budget): the first look whose CI settles, else the
    last look (why cap unless that settles)."""
    out, live = empty(len(D)), np.ones(len(D), bool)
    for k, (b, a) in enumerate(plan, 1):
        idx = np.flatnonzero(live)
        est, lo, hi = walsh_ci(D[idx, :b], sequential.critical(b, a))
        why = settle(est, lo, hi)
        done = (why != NONE) | (k == len(plan))
        why[why == NONE] = CAPPED
        record(out, idx, done, k, b, a, why, est, lo, hi)
        live[idx[done]] = False
    return out


def today_stops(D, cap=CAP):
    """Today's default plan (harness/plan/schedule.c cells_converged): after each block from
    TODAY_FROM, stop when the 95% CI's half-width (exp(hi) - exp(lo)) / 2 / exp(est) <= 2%; at
    the cap stop.  why: the 95% CI's verdict at the stop (CAPPED where none)."""
    out, live = empty(len(D)), np.ones(len(D), bool)
    for b in range(TODAY_FROM, cap + 1):
        idx = np.flatnonzero(live)
        est, lo, hi = walsh_ci(D[idx, :b], sequential.critical(b, TODAY_ALPHA))
        with np.errstate(invalid="ignore"):
            half = (np.exp(hi) - np.exp(lo)) / 2 / np.exp(est)
        done = (half <= RESOLUTION) | (b == cap)
        why = settle(est, lo, hi)
        why[why == NONE] = CAPPED
        record(out, idx, done, 0, b, TODAY_ALPHA, why, est, lo, hi)
        live[idx[done]] = False
    return out


def fixed_stops(D, n=CAP):
    """A fixed plan of n blocks, its 95% CI."""
    out = empty(len(D))
    est, lo, hi = walsh_ci(D[:, :n], sequential.critical(n, TODAY_ALPHA))
    why = settle(est, lo, hi)
    why[why == NONE] = CAPPED
    record(out, np.arange(len(D)), np.ones(len(D), bool), 1, n, TODAY_ALPHA, why, est, lo, hi)
    return out


def check_against_stop(rng, srcs, plan, runs=300):
    """seq_stops gives sequential.stop's look, blocks and why, and its CI to 1e-9, on runs
    simulated from the first sources, A/A and planted; exits on a difference."""
    bad = 0
    for s, shift in zip(srcs[:4], (0.0, math.log(1.03), math.log(1.10), math.log(2.0))):
        D = resample(rng, s["d"], runs // 4) + shift
        fast = seq_stops(D, plan)
        for r in range(len(D)):
            want = sequential.stop(list(D[r]), CAP, FLOOR, RESOLUTION)
            got = (int(fast["look"][r]), int(fast["blocks"][r]), WHY[fast["why"][r]])
            if got != (want["look"], want["blocks"], want["why"]) or not all(
                    math.isclose(math.exp(fast[k][r]), want[v], rel_tol=1e-9)
                    for k, v in (("est", "estimate"), ("lo", "lo"), ("hi", "hi"))):
                bad += 1
                print(f"MISMATCH {s['name']} run {r}: fast {got}, sequential.stop {want}")
    if bad:
        sys.exit(f"bench_sequential: the vectorised rule differs from sequential.stop in {bad} runs")
    print(f"check: the vectorised rule gives sequential.stop's stops and CIs in {4 * (runs // 4)} of "
          f"{4 * (runs // 4)} runs\n")


# ---- a) A/A ---------------------------------------------------------------------------------

def cp(k, n):
    """Clopper-Pearson 95% CI of k in n (scipy's binomtest; its pdf warns of a 0 it handles)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ci = ss.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def aa(rng, srcs, plan, runs):
    """The A/A table; the list of misses."""
    print("a) simulated A/A (true change 0): false verdict = the stop says improved or regressed")
    print(f"   {runs} runs per source, cap {CAP}, looks {plan_text(plan)}; target: the 95% CI's upper end "
          f"<= {AA_MAX:.1%}\n")
    print(f"{'source':<62} {'n':>3} {'false':>6} {'rate':>6} {'95% CI':>16} {'CI misses 0':>11} {'stop 8':>6}  ")
    misses, tot = [], [0, 0, 0, 0]
    for s in srcs + [None]:
        if s is None:
            k, miss, early, n = tot
            name, nb = "pooled", ""
        else:
            st = seq_stops(resample(rng, s["d"], runs), plan)
            k = int(np.isin(st["why"], (IMPROVED, REGRESSED)).sum())
            miss = int(((st["lo"] > 0) | (st["hi"] < 0)).sum())
            early = int((st["blocks"] == plan[0][0]).sum())
            n, name, nb = runs, s["name"], len(s["d"])
            tot = [tot[0] + k, tot[1] + miss, tot[2] + early, tot[3] + n]
        lo, hi = cp(k, n)
        ok = hi <= AA_MAX
        if not ok:
            misses.append(f"A/A {name}: false verdicts {k / n:.2%}, CI upper {hi:.2%} > {AA_MAX:.1%}")
        print(f"{name[:62]:<62} {nb:>3} {k:>6} {k / n:>6.2%} [{lo:>6.2%}, {hi:>6.2%}] {miss / n:>11.2%} "
              f"{early / n:>6.1%}  {'PASS' if ok else 'FAIL'}")
    print()
    return misses


def plan_text(plan):
    return ", ".join(f"{b}:{a:.3g}" for b, a in plan)


# ---- b) planted changes ---------------------------------------------------------------------

def summary(st, block_s):
    """(median blocks, 90th percentile, share with no verdict by the cap, median wall s, share
    with the planted change's verdict)."""
    b = st["blocks"]
    return (float(np.median(b)), float(np.percentile(b, 90)), float(np.mean(st["why"] == CAPPED)),
            float(np.median(b * block_s)), float(np.mean(st["why"] == IMPROVED)))


def cells(sm):
    med, p90, none, wall, _ = sm
    return f"{med:>5.0f} {p90:>4.0f} {none:>6.1%} {wall:>7.1f}"


def planted(rng, srcs, plan, runs, show=True):
    """The planted-change table; ({effect: {rule: summary}} pooled, {effect: [(source, sequential's
    median blocks / today's)]})."""
    if show:
        print("b) planted changes: blocks to a verdict (median, p90), share with no verdict by the cap "
              f"(cap {CAP}), median wall s to the stop")
        print(f"   sequential: looks {plan_text(plan)}; today: --resolution 2% (95% CI after each block "
              f"from {TODAY_FROM}, stop at +-2% or the cap); fixed: {CAP} blocks, 95% CI\n")
        head = f"{'med':>5} {'p90':>4} {'none':>6} {'wall s':>7}"
        print(f"{'source':<52} {'chg':>4} | {'sequential':^25} | {'today':^25} | {'fixed 30':>8} | seq/today")
        print(f"{'':<52} {'':>4} | {head} | {head} | {'none':>8} |")
    pooled, ratios = {}, {}
    for label, effect in EFFECTS:
        acc = {"seq": [], "today": [], "fixed": []}
        for s in srcs:
            D = resample(rng, s["d"], runs) + math.log(effect)
            got = {"seq": seq_stops(D, plan), "today": today_stops(D), "fixed": fixed_stops(D)}
            for k, st in got.items():
                acc[k].append((st, s["block_s"]))
            per = {k: summary(st, s["block_s"]) for k, st in got.items()}
            ratios.setdefault(label, []).append((s["name"], per["seq"][0] / per["today"][0]))
            if show:
                line(s["name"][:52], label, per)
        joined = {k: joined_summary(v) for k, v in acc.items()}
        pooled[label] = joined
        if show:
            line("pooled", label, joined)
            print()
    return pooled, ratios


def joined_summary(parts):
    b = np.concatenate([st["blocks"] for st, _ in parts])
    why = np.concatenate([st["why"] for st, _ in parts])
    wall = np.concatenate([st["blocks"] * s for st, s in parts])
    return (float(np.median(b)), float(np.percentile(b, 90)), float(np.mean(why == CAPPED)),
            float(np.nanmedian(wall)), float(np.mean(why == IMPROVED)))


def line(name, label, sm):
    ratio = sm["seq"][0] / sm["today"][0]
    print(f"{name:<52} {label:>4} | {cells(sm['seq'])} | {cells(sm['today'])} | {sm['fixed'][2]:>8.1%} | "
          f"{ratio:.2f}")


def verdict_shares(pooled):
    """The share of runs whose stop gives the planted change's verdict (improved), pooled."""
    print("share of runs whose stop says improved (the planted change's verdict), pooled:")
    print(f"{'chg':>4} {'sequential':>11} {'today':>8} {'fixed 30':>9}")
    for label, sm in pooled.items():
        print(f"{label:>4} {sm['seq'][4]:>11.1%} {sm['today'][4]:>8.1%} {sm['fixed'][4]:>9.1%}")
    print()


def blocks_targets(pooled, ratios):
    """The pooled target (a miss) and the sources over it (printed)."""
    misses = []
    for label in ("3%", "10%"):
        seq, today = pooled[label]["seq"][0], pooled[label]["today"][0]
        ok = seq <= BLOCKS_MAX * today
        print(f"target {label}: sequential's median blocks {seq:.0f} = {seq / today:.2f}x today's {today:.0f} "
              f"(<= {BLOCKS_MAX}x), pooled: {'PASS' if ok else 'FAIL'}")
        over = [f"{name} {r:.2f}x" for name, r in ratios[label] if r > BLOCKS_MAX]
        print(f"   sources over {BLOCKS_MAX}x: {len(over)} of {len(ratios[label])}" + (": " if over else "") +
              "; ".join(over))
        if not ok:
            misses.append(f"{label}: sequential needs {seq / today:.2f}x today's median blocks")
    print()
    return misses


# ---- the price: the CI at the cap -----------------------------------------------------------

def price(rng, srcs, plan, runs):
    """How much wider the cap look's CI (level 1 - its alpha) is than a fixed plan's 95% one on
    the same 30 blocks: the median width ratio, pooled, and the normal quantiles' ratio."""
    cap_alpha = plan[-1][1]
    ratios = []
    for s in srcs:
        D = resample(rng, s["d"], max(1, runs // 10))
        _, lo1, hi1 = walsh_ci(D, sequential.critical(CAP, cap_alpha))
        _, lo0, hi0 = walsh_ci(D, sequential.critical(CAP, TODAY_ALPHA))
        wide = hi0 > lo0  # a source of a few distinct ratios can give a CI of width 0
        ratios.append((hi1 - lo1)[wide] / (hi0 - lo0)[wide])
    r = np.concatenate(ratios)
    z = ss.norm.isf(cap_alpha / 2) / ss.norm.isf(TODAY_ALPHA / 2)
    print(f"price: at the cap ({CAP} blocks) the CI is at {1 - cap_alpha:.1%}: median width {np.median(r):.3f}x "
          f"the fixed 95% CI's on the same blocks (normal quantiles {ss.norm.isf(cap_alpha / 2):.3f} / "
          f"{ss.norm.isf(TODAY_ALPHA / 2):.3f} = {z:.3f}); exact critical ranks t = "
          f"{sequential.critical(CAP, cap_alpha)} against {sequential.critical(CAP, TODAY_ALPHA)} of "
          f"{CAP * (CAP + 1) // 2} Walsh averages\n")


# ---- c) re-measuring disturbed blocks -------------------------------------------------------

REMEASURE = ((0.1, 1.0, "random"), (0.3, 1.0, "random"), (0.1, 1.3, "random"), (0.3, 1.3, "random"),
             (0.1, 1.3, "other"), (0.3, 1.3, "other"))
ATTEMPTS = 3  # the first measurement and at most two more


def pooled_noise(rng, srcs, runs, shape):
    """Draws of shape (runs, ...) from one source per run (chosen at random), random signs."""
    lens = np.array([len(s["d"]) for s in srcs])
    pad = np.zeros((len(srcs), lens.max()))
    for i, s in enumerate(srcs):
        pad[i, :lens[i]] = s["d"]
    src = rng.integers(len(srcs), size=runs)
    pick = (rng.random((runs,) + shape) * lens[src].reshape((runs,) + (1,) * len(shape))).astype(int)
    sign = rng.choice((-1.0, 1.0), size=(runs,) + shape)
    return pad[src.reshape((runs,) + (1,) * len(shape)), pick] * sign


def disturbed_runs(rng, srcs, runs, p, factor, which):
    """(undisturbed, kept, remeasured) runs x CAP log ratios and the re-measured block count per
    run: every attempt of every block has its own noise and its own disturbances (each sample,
    the baseline's and the other's, disturbed with probability p; 'other': only the other's);
    a disturbed sample's figure is divided by factor.  kept: every block's first attempt;
    remeasured: a disturbed block measured again whole, at most twice, while fewer than a
    quarter of the plan's blocks were (harness/plan/remeasure.c); the last attempt counts."""
    noise = pooled_noise(rng, srcs, runs, (CAP, ATTEMPTS))
    hit = rng.random((runs, CAP, ATTEMPTS, 2)) < p
    if which == "other":
        hit[..., 0] = False
    shift = math.log(factor) * (hit[..., 0].astype(float) - hit[..., 1])  # base slower: ratio up
    flagged = hit.any(axis=3)
    values = noise + shift
    redone = np.zeros(runs, int)
    chosen = np.zeros((runs, CAP), int)
    for b in range(CAP):
        att = np.zeros(runs, int)
        allowed = redone < max(1, CAP // 4)
        again = flagged[:, b, 0] & allowed
        redone += again
        att[again] = 1
        again2 = again & flagged[:, b, 1]
        att[again2] = 2
        chosen[:, b] = att
    pick = np.take_along_axis(values, chosen[..., None], axis=2)[..., 0]
    return noise[:, :, 0], values[:, :, 0], pick, redone


def coverage(D, truth, plan):
    est, lo, hi = walsh_ci(D, sequential.critical(CAP, TODAY_ALPHA))
    st = seq_stops(D, plan)
    bias = math.exp(float(np.mean(est)) - truth) - 1
    return (bias, float(np.mean((lo <= truth) & (truth <= hi))),
            float(np.mean((st["lo"] <= truth) & (truth <= st["hi"]))))


def remeasure(rng, srcs, plan, runs):
    """The re-measuring table: bias of the 30-block estimate (mean log, as a ratio), coverage of
    its 95% CI and of the sequential stop's CI."""
    print("c) re-measuring disturbed blocks (pooled noise; each run draws its source at random): bias of "
          f"the {CAP}-block estimate")
    print(f"   (exp(mean log estimate - truth) - 1), coverage of its 95% CI / of the sequential stop's CI; "
          f"{runs} runs per row\n")
    print(f"{'p':>4} {'factor':>6} {'on':>6} {'truth':>5} | {'undisturbed':^23} | {'kept (no re-measure)':^23} | "
          f"{'re-measured':^23} | {'blocks redone':>13}")
    print(f"{'':>4} {'':>6} {'':>6} {'':>5} |" + f" {'bias':>7} {'cov':>6} {'seq':>6} |" * 3)
    misses = []
    for p, factor, which in REMEASURE:
        for truth_ratio in (1.0, 1.10):
            truth = math.log(truth_ratio)
            clean, kept, redone_d, redone = disturbed_runs(rng, srcs, runs, p, factor, which)
            row = [coverage(D + truth, truth, plan) for D in (clean, kept, redone_d)]
            print(f"{p:>4.1f} {factor:>6.1f} {which:>6} {truth_ratio:>5.2f} |" +
                  "".join(f" {b:>+7.2%} {c:>6.1%} {s:>6.1%} |" for b, c, s in row) +
                  f" {np.mean(redone):>13.1f}")
            if factor == 1.0 and abs(row[2][0] - row[0][0]) > 0.002:
                misses.append(f"re-measuring on signals alone moved the estimate by "
                              f"{row[2][0] - row[0][0]:+.2%} (p {p}, truth {truth_ratio})")
    print()
    return misses


# ---- other schedules (--alternatives) -------------------------------------------------------

ALTERNATIVES = (((8, 0.008), (12, 0.004), (18, 0.008)),
                ((8, 0.008), (16, 0.008)),
                ((8, 0.01), (12, 0.005), (18, 0.005)),
                ((8, 0.008), (12, 0.004), (16, 0.004), (20, 0.004), (24, 0.004)),
                ((8, 0.008), (10, 0.004), (12, 0.004), (15, 0.004), (19, 0.004), (24, 0.004)),
                ((6, 0.032), (12, 0.004)),
                ((6, 0.032), (9, 0.004), (14, 0.004)),
                ((8, 0.02),))


def plan_of(interim, cap=CAP):
    """The looks of an interim schedule below cap, then cap with the alpha left."""
    out = [(b, a) for b, a in interim if b < cap]
    return out + [(cap, sequential.ALPHA - sum(a for _, a in out))]


def alternatives(rng, srcs, runs):
    """Other schedules on the same simulated runs (fewer per source): the pooled A/A rate, and
    per planted change the pooled median blocks, its ratio to today's and the sources whose
    own median is over BLOCKS_MAX x today's."""
    plans = [plan_of(i) for i in ALTERNATIVES]
    aa_k = [0] * len(plans)
    med = {(lbl, p): [] for lbl, _ in EFFECTS for p in range(len(plans))}
    today = {lbl: [] for lbl, _ in EFFECTS}
    for s in srcs:
        D = resample(rng, s["d"], runs)
        for p, plan in enumerate(plans):
            aa_k[p] += int(np.isin(seq_stops(D, plan)["why"], (IMPROVED, REGRESSED)).sum())
        for lbl, effect in EFFECTS:
            De = resample(rng, s["d"], runs) + math.log(effect)
            today[lbl].append(today_stops(De)["blocks"])
            for p, plan in enumerate(plans):
                med[lbl, p].append(seq_stops(De, plan)["blocks"])
    n = runs * len(srcs)
    print(f"other schedules ({runs} runs per source, the same runs for each): pooled A/A false verdicts; "
          f"per change the pooled median blocks, x today's, and the sources over {BLOCKS_MAX}x today's")
    print(f"{'looks':<58} {'A/A':>6} {'CI upper':>8} | " +
          " | ".join(f"{lbl:>4}: {'med':>3} {'x':>4} {'>':>2}" for lbl, _ in EFFECTS) + f" | {'cap CI':>6}")
    for p, plan in enumerate(plans):
        cols = []
        for lbl, _ in EFFECTS:
            seq, tod = np.median(np.concatenate(med[lbl, p])), np.median(np.concatenate(today[lbl]))
            over = sum(np.median(a) > BLOCKS_MAX * np.median(b) for a, b in zip(med[lbl, p], today[lbl]))
            cols.append(f"{'':>4}  {seq:>3.0f} {seq / tod:>4.2f} {over:>2}")
        print(f"{plan_text(plan):<58} {aa_k[p] / n:>6.2%} {cp(aa_k[p], n)[1]:>8.2%} | " + " | ".join(cols) +
              f" | {1 - plan[-1][1]:>6.1%}")
    print()


def parse_looks(text):
    try:
        return tuple((int(b), float(a)) for b, a in (x.split(":") for x in text.split(",")))
    except ValueError:
        raise argparse.ArgumentTypeError(f"looks {text!r}: BLOCKS:ALPHA,... (e.g. 8:.008,12:.004)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10000, help="simulated runs per source (default 10000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--looks", type=parse_looks, default=None,
                    help="interim looks BLOCKS:ALPHA,... below the cap (default: sequential.py's)")
    ap.add_argument("--alternatives", action="store_true", help="also the pooled figures of other schedules")
    a = ap.parse_args()
    t0 = time.time()
    rng = np.random.default_rng(a.seed)
    plan = plan_of(a.looks) if a.looks else sequential.looks(CAP)
    srcs = sources()
    if not srcs:
        print("bench_sequential: no committed comparison with >= 8 paired blocks could be read")
        return 1
    print(f"{len(srcs)} sources with >= {MIN_BLOCKS} paired blocks (per-block log ratios of the primary figure); "
          f"floor {FLOOR:.0%}, resolution {RESOLUTION:.0%}, cap {CAP}")
    if not a.looks:
        check_against_stop(rng, srcs, plan)
    misses = aa(rng, srcs, plan, a.runs)
    pooled, ratios = planted(rng, srcs, plan, a.runs)
    verdict_shares(pooled)
    misses += blocks_targets(pooled, ratios)
    price(rng, srcs, plan, a.runs)
    misses += remeasure(rng, srcs, plan, a.runs)
    if a.alternatives:
        alternatives(rng, srcs, max(1, a.runs // 5))
    print(f"{time.time() - t0:.0f} s")
    for m in misses:
        print("MISSED:", m)
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
