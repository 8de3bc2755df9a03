#!/usr/bin/env python3
"""tune.py - `mallocbench tune` after harness/cmd_tune.c has checked its input: races
candidate allocator configurations through `mallocbench run` and confirms the winner.

Candidates: each family's default, the families' hand-picked settings (`known` in the family
data), a seeded Latin hypercube over each family's search domains (`list tunables --json`),
and after the first round neighbours of the leaders.  Each round runs every survivor in K
fresh randomized blocks (one `run`, its own CSV); a candidate that the paired test
(stats.paired_change over the blocks it shares with the leader) shows worse is dropped.  Every
`run` is killed at the deadline, so the budget holds to within one sample.  The confirmation
is one more `run` in fresh blocks of the winner, its family's default, glibc's default and the
hand-picked setting; the report's figures come from it alone.
"""
import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mbcsv  # noqa: E402
import mbdata  # noqa: E402
import stats  # noqa: E402

FIRST_BLOCKS, ROUND_BLOCKS, CONFIRM_MAX = 2, 3, 10
OBJECTIVES = {  # key: (what it measures, value of a row, better)
    "throughput": ("throughput", lambda r: mbcsv.num(r, "throughput"), None),
    "cpu": ("user+sys CPU s", lambda r: mbdata.cpu_seconds(r), "lower"),
    "rss": ("peak RSS MiB", mbdata.peak_rss_mib, "lower"),
    "sys": ("kernel CPU s", mbdata.metric_fn("sys_cpu"), "lower"),
}


class RunFailed(Exception):
    pass


def harness():
    return os.environ.get("MB_HARNESS") or "mallocbench"


class Cand:
    """One configuration: label (unique, as run's -a LABEL=FAMILY), family, pairs
    ((tunable, value), ...) asked for (() = the family's defaults), and how it came."""

    def __init__(self, label, fam, pairs, origin):
        self.label, self.fam, self.pairs, self.origin = label, fam, tuple(pairs), origin
        self.alive, self.dropped = True, ""

    def text(self):
        return " ".join(f"{k}={v}" for k, v in self.pairs) or "defaults"


# ---- the search space ----------------------------------------------------------------------

def space(families, overrides):
    """{family: {'dims': [(name, domain)], 'help': {name: text}, 'known': pairs or None,
    'known_label'}} from `list tunables --json`; --domain FAMILY:NAME=SPEC replaces the domains
    of the families it names (checked by cmd_tune.c)."""
    out = subprocess.run([harness(), "list", "tunables", "--json"], capture_output=True, text=True, check=True)
    data = {f["name"]: f for f in json.loads(out.stdout)["families"]}
    given = {}
    for text in overrides:
        fam, _, rest = text.partition(":")
        i = rest.index("=")
        spec = rest[i + 1:]
        if ".." in spec:
            lo, _, hi = spec.partition("..")
            dom = {"kind": "log", "lo": number(lo), "hi": number(hi)}
        else:
            dom = {"kind": "values", "values": spec.split("|")}
        given.setdefault(fam, []).append((rest[:i], dom))
    res = {}
    for fam in families:
        f = data[fam]
        dims = given.get(fam) or [(t["name"], t["domain"]) for t in f["tunables"] if t["domain"]]
        res[fam] = {"dims": dims, "help": {t["name"]: t["help"] for t in f["tunables"]},
                    "known": [tuple(p) for p in f["known"]] if f["known"] else None,
                    "known_label": f["known_label"], "given": fam in given}
    return res


def number(text):
    v = mbdata.parse_size(text)
    return float(v) if v is not None else float(text)


def pick(dom, u):
    """The value of a domain at u in [0, 1): a list index, or log-uniform in LO..HI."""
    if dom["kind"] == "values":
        return dom["values"][min(int(u * len(dom["values"])), len(dom["values"]) - 1)]
    lo, hi = math.log(dom["lo"]), math.log(dom["hi"])
    return str(int(round(math.exp(lo + u * (hi - lo)))))


def hypercube(fam, dims, n, rng):
    """n points of a Latin hypercube over dims: in each dimension every n-th stratum once."""
    perms = [rng.sample(range(n), n) for _ in dims]
    out = []
    for i in range(n):
        out.append(tuple((name, pick(dom, (perms[d][i] + rng.random()) / n)) for d, (name, dom) in enumerate(dims)))
    return out


def neighbour(c, dims, rng):
    """c with one dimension moved one step (a list) or x/÷4 (a log range)."""
    if not dims:
        return None
    name, dom = dims[rng.randrange(len(dims))]
    cur = dict(c.pairs)
    if dom["kind"] == "values":
        vals = dom["values"]
        i = vals.index(cur[name]) if cur.get(name) in vals else len(vals) // 2
        j = max(0, min(len(vals) - 1, i + rng.choice((-1, 1))))
        new = vals[j]
    else:
        v = float(cur.get(name, math.sqrt(dom["lo"] * dom["hi"])))
        new = str(int(round(max(dom["lo"], min(dom["hi"], v * rng.choice((0.25, 4.0)))))))
    cur[name] = new
    return tuple((k, cur[k]) for k, _ in dims if k in cur)


def candidates(sp, points, rng):
    out = []
    for fam, s in sp.items():
        out.append(Cand(fam, fam, (), "default"))
        if s["known"] and not s["given"]:
            out.append(Cand(s["known_label"], fam, s["known"], "hand-picked"))
        seen = {()}
        for i, pt in enumerate(hypercube(fam, s["dims"], points, rng) if s["dims"] and points else []):
            if pt not in seen:
                seen.add(pt)
                out.append(Cand(f"{fam}-s{i + 1}", fam, pt, "sampled"))
    return out


# ---- running ---------------------------------------------------------------------------------

def run_round(args, cands, blocks, seed, path, deadline):
    """One `mallocbench run` of cands in `blocks` blocks into path (streamed, so a run killed at
    the deadline leaves every finished sample); the rows read back."""
    cmd = [harness(), args.via]
    cmd += ["-m", args.matrix] if args.matrix else []
    cmd += ["-w", args.workload] if args.workload else []
    cmd += ["-a", ",".join(f"{c.label}={c.fam}" for c in cands)]
    for c in cands:
        for k, v in c.pairs:
            cmd += ["-t", f"{c.label}:{k}={v}"]
    cmd += ["-r", str(blocks), "--seed", str(seed), "--warmup-runs", "0", "--no-limit", "-q",
            "-o", "-", "--sidecars", path[:-4]]
    cmd += ["--"] + args.cmd if args.cmd else []
    with open(path, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            _, err = p.communicate(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            _, err = p.communicate()
            err = ""
    if p.returncode not in (0, -signal.SIGKILL):
        sys.stderr.write(err)
        raise RunFailed(f"tune: `mallocbench run` failed (exit {p.returncode}): {' '.join(cmd[:4])} ...")
    try:
        return [r for r in mbcsv.read(path)[1] if r["status"] == "ok"]
    except mbcsv.CsvError:
        return []


def owner(cands, config):
    for c in cands:
        if config == c.label or config.startswith(c.label + "["):
            return c
    return None


def collect(rows, cands, into, key):
    """Per candidate {(run_id, block): value} of objective `key`."""
    fn = OBJECTIVES[key][1]
    for r in rows:
        c = owner(cands, r["config"])
        v = fn(r)
        if c is not None and v is not None:
            into.setdefault(c.label, {})[(r["run_id"], r["block"])] = v


def direction(rows, key):
    b = OBJECTIVES[key][2]
    return b or (mbcsv.better(rows[0]) if rows else "higher")


def med(vals):
    return stats.median(list(vals)) if vals else None


def worse(change, better):
    """True when the whole CI of other/base lies on the worse side of no change."""
    if change is None or change.lo is None or change.hi is None:
        return False
    return change.hi < change.no_change if better == "higher" else change.lo > change.no_change


def race(alive, vals, rss, better, max_rss):
    """Drops (in place) what the paired test shows worse than the leader, and what exceeds
    --max-rss; returns the leader."""
    if max_rss:
        for c in alive:
            m = med(rss.get(c.label, {}).values())
            if m is not None and m * 1048576 > max_rss and len(alive) > 1:
                c.alive, c.dropped = False, f"median peak RSS {m:.0f} MiB over --max-rss"
    alive = [c for c in alive if c.alive]
    scored = [c for c in alive if vals.get(c.label)]
    if not scored:
        return None
    sign = 1 if better == "higher" else -1
    leader = max(scored, key=lambda c: sign * med(vals[c.label].values()))
    lv = vals[leader.label]
    for c in scored:
        if c is leader:
            continue
        keys = [k for k in vals[c.label] if k in lv]
        ch = stats.paired_change([lv[k] for k in keys], [vals[c.label][k] for k in keys])
        if worse(ch, better):
            c.alive, c.dropped = False, f"worse than {leader.label} (p={ch.p:.3g}, n={ch.n})"
    return leader


def progress(rnd, alive, total, leader, samples, t0, eta):
    lead = leader.label if leader else "-"
    sys.stderr.write(f"tune: round {rnd}: {len(alive)} of {total} candidates left, leader {lead}, "
                     f"{samples} samples, {time.monotonic() - t0:.0f}s elapsed, ETA {eta:.0f}s\n")


def search(args, sp, cands, base, rng, t0, deadline):
    """The racing rounds; returns (leader, rounds [(round, path, labels)], samples, time per sample)."""
    vals, rss, rounds, samples, spent = {}, {}, [], 0, 0.0
    leader, better, rnd = None, "higher", 0
    while True:
        alive = [c for c in cands if c.alive]
        blocks = FIRST_BLOCKS if rnd == 0 else ROUND_BLOCKS
        per = spent / samples if samples else None
        # room kept for the confirmation: 6 blocks of 4, at most 40% of the budget (30% before
        # the first round has measured a sample)
        confirm = min(4 * 6 * per, 0.4 * args.budget_s) if per else 0.3 * args.budget_s
        if per and time.monotonic() + len(alive) * blocks * per + confirm > deadline:
            sign = 1 if better == "higher" else -1  # the leader first, then by median; unmeasured last
            alive.sort(key=lambda c: (c is not leader, not vals.get(c.label),
                                      -sign * (med(vals.get(c.label, {}).values()) or 0)))
            keep = max(2, len(alive) // 2)
            if len(alive) > 2 and time.monotonic() + keep * blocks * per + confirm <= deadline:
                for c in alive[keep:]:
                    c.alive, c.dropped = False, "halved out (budget)"
                alive = alive[:keep]
            else:
                break
        if len(alive) < 2 and rnd > 0:
            break
        rnd += 1
        path = f"{base}.round{rnd}.csv"
        start = time.monotonic()
        rows = run_round(args, alive, blocks, rng.randrange(1 << 31), path, deadline - confirm)
        spent += time.monotonic() - start
        samples += max(1, len(rows))
        rounds.append({"round": rnd, "csv": path, "candidates": [c.label for c in alive], "blocks": blocks,
                       "run_id": rows[0]["run_id"] if rows else ""})
        collect(rows, cands, vals, args.race_key)
        collect(rows, cands, rss, "rss")
        better = direction(rows, args.race_key) if rows else better
        leader = race(alive, vals, rss, better, args.max_rss_bytes) or leader
        if rnd == 1 and leader is not None:
            add_neighbours(sp, cands, vals, better, rng)
        per = spent / samples
        left = [c for c in cands if c.alive]
        progress(rnd, left, len(cands), leader, samples, t0, max(0.0, deadline - time.monotonic()))
        if time.monotonic() >= deadline - confirm:
            break
    return leader, rounds, vals, rss, better


def add_neighbours(sp, cands, vals, better, rng):
    """After the first round: one neighbour of each of the two best searched candidates."""
    sign = 1 if better == "higher" else -1
    scored = sorted((c for c in cands if c.alive and c.pairs and vals.get(c.label)),
                    key=lambda c: -sign * med(vals[c.label].values()))
    seen = {(c.fam, c.pairs) for c in cands}
    for i, c in enumerate(scored[:2]):
        pt = neighbour(c, sp[c.fam]["dims"], rng)
        if pt and (c.fam, pt) not in seen:
            seen.add((c.fam, pt))
            cands.append(Cand(f"{c.fam}-n{i + 1}", c.fam, pt, f"neighbour of {c.label}"))


# ---- confirmation and report --------------------------------------------------------------

def confirm(args, sp, cands, leader, base, rng, deadline, per):
    """The winner, its family's default, glibc's default and the hand-picked settings in
    fresh blocks; (configs, rows)."""
    want = [leader] if leader else []
    by = {c.label: c for c in cands}
    for lab in [leader.fam if leader else None, "glibc"] + [s["known_label"] for s in sp.values() if s["known"]]:
        c = by.get(lab) or (Cand(lab, lab, (), "default") if lab == "glibc" else None)
        if c is not None and c not in want:
            want.append(c)
    left = deadline - time.monotonic()
    # what should fit, but at least 6 blocks (the fewest pairs with a 95% CI): the run is killed at the deadline anyway, and
    # only the blocks that finished count (a killed round inflates the estimate per sample)
    k = max(6, min(CONFIRM_MAX, int(left / (len(want) * per)))) if per else 6
    if left <= 0:
        return want, [], 0
    rows = run_round(args, want, k, rng.randrange(1 << 31), base + ".confirm.csv", deadline)
    return want, rows, len({r["block"] for r in rows})


def change_text(vals, base, other):
    if base not in vals or other not in vals or base == other:
        return "-"
    keys = [k for k in vals[other] if k in vals[base]]
    ch = stats.paired_change([vals[base][k] for k in keys], [vals[other][k] for k in keys])
    if ch is None or ch.lo is None:
        return f"too few pairs (n={ch.n if ch else 0})"
    unit = "x" if ch.kind == "ratio" else ""
    return f"{ch.estimate:.3f}{unit} [{ch.lo:.3f}, {ch.hi:.3f}] p={ch.p:.3g} n={ch.n}"


def front(points, better):
    """Indices of the Pareto front: no other point has better y (throughput) and lower x."""
    sign = 1 if better == "higher" else -1
    out = []
    for i, (x, y) in enumerate(points):
        if not any(x2 <= x and sign * y2 >= sign * y and (x2, y2) != (x, y) for x2, y2 in points):
            out.append(i)
    return out


def plot(path, labels, xs, ys, xlabel, better, colours):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"(no plot: {e})"
    pts = list(zip(xs, ys))
    fr = set(front(pts, better))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (lab, x, y) in enumerate(zip(labels, xs, ys)):
        ax.scatter([x], [y], s=60 if i in fr else 20, color=colours[i], edgecolors="black" if i in fr else "none")
        ax.annotate(lab, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    fp = sorted((pts[i] for i in fr))
    ax.plot([p[0] for p in fp], [p[1] for p in fp], color="black", lw=1, ls="--", label="Pareto front")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("throughput (median of the racing blocks)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def env_line(confirm_csv, label, lib_of):
    """The production environment of configuration `label` as run's sidecar records it."""
    meta = mbdata.read_meta(confirm_csv) or {}
    for c in meta.get("configs") or []:
        if isinstance(c, dict) and (c.get("config") == label or str(c.get("config", "")).startswith(label + "[")):
            env = [e for e in c.get("environment") or [] if not str(e).startswith("MB_")]
            lib = c.get("lib_path") or lib_of.get(label, "")
            return " ".join(([f"LD_PRELOAD={lib}"] if lib else []) + env) or "(nothing to set: the defaults)"
    return "(not in the confirmation's sidecar)"


def confirmed_winner(args, want, crow, leader, better):
    """(winner, verdict): the racing leader only when the confirmation shows it better than its
    family's default (the whole paired CI on the better side); else that default, so a
    setting that only won the racing by chance (the winner's curse) is never reported."""
    if leader is None or not leader.pairs:
        return leader, "the racing leader is a family default"
    default = next((c for c in want if c.label == leader.fam), None)
    vals = {}
    collect(crow, want, vals, args.race_key)
    if default is None or leader.label not in vals or default.label not in vals:
        return leader, "not confirmed against its family default (no confirmation samples)"
    keys = [x for x in vals[leader.label] if x in vals[default.label]]
    ch = stats.paired_change([vals[default.label][x] for x in keys], [vals[leader.label][x] for x in keys])
    if ch is None or ch.lo is None:
        sign = 1 if better == "higher" else -1
        wins = sum(sign * (vals[leader.label][x] - vals[default.label][x]) > 0 for x in keys)
        if keys and wins == len(keys):
            return leader, (f"better than {default.label} defaults in all {len(keys)} confirmation blocks, "
                            f"too few for a 95% CI: give a larger --budget to confirm it")
        return default, f"{leader.label} could not be confirmed ({wins} of {len(keys)} blocks better): keep the defaults"
    flip = "lower" if better == "higher" else "higher"
    if worse(ch, flip):
        return leader, f"confirmed better than {default.label} defaults (p={ch.p:.3g}, n={ch.n})"
    return default, (f"the racing leader {leader.label} ({leader.text()}) was not confirmed better than "
                     f"{default.label} defaults (p={ch.p:.3g}, n={ch.n}): keep the defaults")


def report_md(args, sp, cands, leader, rounds, racing, want, crow, k, better, base, verdict=""):
    """tune.md: the confirmed figures, the fronts from the racing medians, the environment line."""
    lines = [f"# mallocbench tune: {args.workload or args.matrix or ' '.join(args.cmd)}", "",
             f"Objective **{args.objective}**, budget {args.budget_s:.0f} s, seed {args.seed}, "
             f"{len(cands)} candidates over {len(rounds)} racing rounds "
             f"({sum(len(v) for v in racing['main'].values())} samples)."
             + (f" --max-rss {mbdata.format_size(args.max_rss_bytes)}." if args.max_rss_bytes else ""), ""]
    if leader is None:
        return lines + ["No sample finished within the budget: no winner."]
    conf = {key: {} for key in OBJECTIVES}
    for key in OBJECTIVES:
        collect(crow, want, conf[key], key)
    fam_default = leader.fam if leader.pairs else None
    lines += ["## Confirmed (fresh interleaved blocks; nothing from the racing is reused)", "",
              f"{k} blocks (started) of {', '.join(c.label for c in want)} "
              f"({os.path.basename(base)}.confirm.csv).", "",
              "| objective | best confirmed | its setting | vs its family's default | vs glibc default |",
              "|---|---|---|---|---|"]
    for key in ("throughput", "cpu", "rss"):
        b = better if key == "throughput" else OBJECTIVES[key][2]
        sign = 1 if b == "higher" else -1
        scored = [c for c in want if conf[key].get(c.label)]
        if not scored:
            continue
        best = max(scored, key=lambda c: sign * med(conf[key][c.label].values()))
        fd = best.fam if best.pairs else None
        lines.append(f"| {OBJECTIVES[key][0]} | {best.label} | {best.text()} | "
                     f"{change_text(conf[key], fd, best.label) if fd else '(is the default)'} | "
                     f"{change_text(conf[key], 'glibc', best.label)} |")
    lines += ["", "Ratios are best/base: median of per-block ratios (Hodges-Lehmann) with its 95% CI,"
              " exact signed-rank p.", "", "| configuration | origin | median " + OBJECTIVES["throughput"][0]
              + " | median peak RSS MiB | median kernel CPU s |", "|---|---|---|---|---|"]
    for c in want:
        f = [med(conf[x].get(c.label, {}).values()) for x in ("throughput", "rss", "sys")]
        lines.append(f"| {c.label} | {c.origin} | " + " | ".join("-" if v is None else f"{v:.4g}" for v in f) + " |")
    lines += ["", f"## Winner: {leader.label} ({leader.text()})", "", verdict + ".", "",
              "Production environment (as `run` sets it for this configuration, from the confirmation's sidecar):",
              "", "```", env_line(base + ".confirm.csv", leader.label, {}), "```", ""]
    for name, v in leader.pairs:
        lines.append(f"- `{name}={v}`: {sp[leader.fam]['help'].get(name, '')}")
    if fam_default:
        lines.append(f"\nAgainst {fam_default} defaults: "
                     f"{change_text(conf['throughput'], fam_default, leader.label)} (throughput).")
    lines += pareto_section(args, cands, racing, better, base)
    lines += ["", "## Racing", "", "| candidate | origin | setting | median | samples | dropped |", "|---|---|---|---|---|---|"]
    for c in cands:
        v = racing["main"].get(c.label, {})
        m = med(v.values())
        lines.append(f"| {c.label} | {c.origin} | {c.text()} | {'-' if m is None else f'{m:.4g}'} | {len(v)} | "
                     f"{c.dropped or ('survived' if c.alive else '')} |")
    return lines


def pareto_section(args, cands, racing, better, base):
    out = ["", "## Pareto fronts (racing medians; highlighted: the front)", ""]
    colours = mbcsv.assign_colours(list(dict.fromkeys(c.fam for c in cands)), {})
    for key, what in (("rss", "peak RSS (MiB)"), ("sys", "kernel CPU (s)")):
        pts = [(c, med(racing[key].get(c.label, {}).values()), med(racing["tp"].get(c.label, {}).values()))
               for c in cands]
        pts = [p for p in pts if p[1] is not None and p[2] is not None]
        if not pts:
            continue
        png = f"{base}.pareto-{key}.png"
        err = plot(png, [p[0].label for p in pts], [p[1] for p in pts], [p[2] for p in pts], what, better,
                   [colours.get(p[0].fam, "#777777") for p in pts])
        fr = front([(p[1], p[2]) for p in pts], better)
        out += [err or f"![throughput vs {what}]({os.path.basename(png)})", "",
                f"Front (throughput vs {what}): " + ", ".join(pts[i][0].label for i in fr), ""]
    return out


def main():
    ap = argparse.ArgumentParser(prog="mallocbench tune")
    ap.add_argument("--families", required=True)
    ap.add_argument("--objective", default="throughput", choices=["throughput", "cpu", "rss", "pareto"])
    ap.add_argument("--budget-s", type=float, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-rss-bytes", type=int, default=0)
    ap.add_argument("--points", type=int, default=4)
    ap.add_argument("--domain", action="append", default=[])
    ap.add_argument("--via", default="run", help="the harness command each round runs (cmd_tune.c: run, "
                    "or exec for a command after --)")
    ap.add_argument("-w", dest="workload")
    ap.add_argument("-m", dest="matrix")
    ap.add_argument("-o", dest="out")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    args.cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    args.race_key = {"pareto": "throughput"}.get(args.objective, args.objective)
    t0 = time.monotonic()
    deadline = t0 + args.budget_s
    out = args.out or os.path.join("results", f"tune-{args.seed}.md")
    base = out[:-3] if out.endswith(".md") else out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    rng = random.Random(args.seed)
    sp = space(args.families.replace(",", " ").split(), args.domain)
    cands = candidates(sp, args.points, rng)
    sys.stderr.write(f"tune: {len(cands)} candidates, seed {args.seed}, budget {args.budget_s:.0f}s\n")
    try:
        leader, rounds, vals, rss, better = search(args, sp, cands, base, rng, t0, deadline)
    except RunFailed as e:
        sys.stderr.write(f"{e}\n")
        return 1
    samples = sum(len(v) for v in vals.values())
    per = (time.monotonic() - t0) / max(1, samples)
    want, crow, k = confirm(args, sp, cands, leader, base, rng, deadline, per)
    racer, leader, verdict = leader, *confirmed_winner(args, want, crow, leader, better)
    racing = {"main": vals, "rss": rss, "tp": {}, "sys": {}}
    for rd in rounds:
        try:
            rows = [r for r in mbcsv.read(rd["csv"])[1] if r["status"] == "ok"]
        except mbcsv.CsvError:
            continue
        collect(rows, cands, racing["tp"], "throughput")
        collect(rows, cands, racing["sys"], "sys")
    with open(base + ".tune.json", "w") as f:
        json.dump({"seed": args.seed, "objective": args.objective, "budget_s": args.budget_s,
                   "elapsed_s": time.monotonic() - t0, "winner": leader.label if leader else None,
                   "racing_leader": racer.label if racer else None, "verdict": verdict,
                   "winner_setting": leader.text() if leader else None,
                   "rounds": rounds, "confirm": {"csv": base + ".confirm.csv", "blocks": k,
                                                 "configs": [c.label for c in want]},
                   "candidates": [{"label": c.label, "family": c.fam, "tunables": c.pairs, "origin": c.origin,
                                   "dropped": c.dropped} for c in cands]}, f, indent=1)
    with open(out, "w") as f:
        f.write("\n".join(report_md(args, sp, cands, leader, rounds, racing, want, crow, k, better, base,
                                     verdict)) + "\n")
    sys.stderr.write(f"tune: winner {leader.label if leader else '-'} ({leader.text() if leader else ''}); "
                     f"{time.monotonic() - t0:.1f}s of {args.budget_s:.0f}s; report {out}\n")
    return 0 if leader else 1


if __name__ == "__main__":
    sys.exit(main())
