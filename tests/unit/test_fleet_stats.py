#!/usr/bin/env python3
"""test_fleet_stats.py - one answer from several machines (docs/fleet.md), on a real run.

FIXTURE (18 blocks of a pair, one machine) is split over three "machines" (block b on machine
b mod 3, as three shards would run it, or at random):
  planted   one machine's ratios scaled by a known factor: every machine's paired estimate
            holds its planted value (factor x the unsplit estimate) in its CI; compare says
            "differs by machine" in its text and JSON, the pooled CI is wider than any
            machine's, and names what differs between the machines' descriptions (their
            page-fault cost, with the trend) where the sidecars give one.
  aa        200 random splits with nothing planted: "differs by machine" in at most 5%.
  formulas  the pooled estimate against an independent computation: Paule-Mandel's tau^2
            solves Q(tau^2) = k - 1, the Hartung-Knapp CI is mu +- t(k-1) sqrt(q / sum w),
            the Q-profile CI of tau^2 meets the chi^2 quantiles, I^2 from tau^2; machines that
            agree closely get a CI no narrower than the plain random-effects one; a machine
            whose CI has no width is left out.
  two       two machines: each one's answer and the words, no pooled CI: the cell is the
            paired change over all their blocks, marked not pooled.
  runs      compare --fleet over three whole runs of one plan, a file per machine: each
            machine's answer is its run's own; a file given twice, --fleet beside another CSV
            refused.
  history   tests/fixtures/fleet-history/: a run per machine, named after it and calibrated;
            compare --fleet pools the folder.
  real      the first real fleet answer: vm-686f62 (a fault at 11 us) and vm-5892ce (1.84 us): je-keep
            against glibc differs by machine, 58.5x [52.2, 63.0] against 6.4x [4.3, 9.6], the larger
            where a fault costs more; a third machine's run (made up from a fixture) gives the
            pooled cell with tau and I^2 with no change of code (third).
  kinds     two real machines of this kind: exec-fixed.csv (an Intel Xeon, kernel v1147, a
            sidecar from before boot_id) and its plan rerun on an AMD EPYC (v1272): compare
            --fleet tells them apart, gives each one's answer, pools nothing, and says what
            differs between them (CPU, kernel) in its footer and JSON.
  dashboard a synthetic 6-night history of three machines (tests/make_history.py): the fleet
            view's words write each machine's ratio as compare does, and data.js holds a
            ratio with compare's digits (4 significant elsewhere), so that the page writes
            it as compare does too.
  labels    machines are boots of a host: one host over two boots gets two labels, shards of
            one merged sidecar keep their own machines, a resumed run (its earlier part under
            "previous") stays one machine, a run whose sidecar is lost is a machine of its own.
Exit 77 without scipy or statsmodels."""
import copy
import csv
import io
import json
import math
import os
import random
import subprocess
import sys
import tempfile

try:
    import scipy.stats  # noqa: F401
    import statsmodels  # noqa: F401
except ImportError as e:
    print(f"SKIP: {e.name} is missing (apt-get install python3-scipy python3-statsmodels)")
    sys.exit(77)

from mallocbench import change, compare, mbdata, stats, words  # noqa: E402

FIXTURE = sys.argv[1]
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, file=sys.stderr)


def read():
    with open(FIXTURE, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


HEADER, ROWS = read()
CONFIGS = list(dict.fromkeys(r["config"] for r in ROWS))
BASE, OTHER = CONFIGS[0], CONFIGS[1]
BLOCKS = sorted({int(r["block"]) for r in ROWS})


def split(assign, scale=None):
    """The fixture's rows with host = assign[block]; scale {machine: factor} on OTHER's
    throughput (the primary figure)."""
    out = []
    for r in ROWS:
        r = dict(r)
        m = assign[int(r["block"])]
        r["host"] = m
        if scale and r["config"] == OTHER and m in scale:
            r["throughput"] = repr(float(r["throughput"]) * scale[m])
        out.append(r)
    return out


def write(rows, path, metas=None):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        w.writeheader()
        w.writerows(rows)
    if metas is not None:
        with open(path[:-4] + ".meta.json", "w") as f:
            json.dump(metas, f)


def primary_cell(run):
    recs = compare.api(run, baseline=BASE, metrics=["throughput"])["cells"]
    return next(c for c in recs if not c["geomean"] and c["config"] == OTHER)


def unsplit():
    ch = change.change([r for r in ROWS if r["config"] == BASE and r["status"] == "ok"],
                        [r for r in ROWS if r["config"] == OTHER and r["status"] == "ok"],
                        lambda r: float(r["throughput"]) if r["throughput"] else None)
    return ch.estimate


def case_planted(tmp):
    r_all = unsplit()
    factor = {"A": 1.0, "B": 1.0, "C": 1.5}
    assign = {b: "ABC"[b % 3] for b in BLOCKS}
    path = os.path.join(tmp, "planted.csv")
    write(split(assign, factor), path)
    cell = primary_cell(path)
    check("machines" in cell and "pooled" in cell, f"a cell of three machines has them: {sorted(cell)}")
    ms = {m["machine"]: m for m in cell.get("machines", [])}
    check(sorted(ms) == ["A", "B", "C"], f"each machine's estimate: {sorted(ms)}")
    for m, f in factor.items():
        e = ms.get(m, {})
        planted = r_all * f
        check(e.get("lo") is not None and e["lo"] <= planted <= e["hi"],
              f"{m}: planted {planted:.4g} inside its CI [{e.get('lo')}, {e.get('hi')}] (estimate {e.get('estimate')})")
    pl = cell.get("pooled", {})
    check(pl.get("differs") is True and pl.get("words", "").startswith("differs by machine: "),
          f"differs by machine: {pl.get('words')!r}")
    check(pl.get("k") == 3 and pl["lo"] < pl["estimate"] < pl["hi"], f"a pooled estimate and CI: {pl}")
    check(all(pl["hi"] - pl["lo"] > e["hi"] - e["lo"] for e in ms.values()),
          "the pooled CI is wider than each machine's (the machines disagree)")
    check(cell["estimate"] == pl["estimate"] and cell["method"] == stats.POOLED,
          f"the cell's answer is the pooled one: {cell['estimate']} {cell['method']!r}")
    # its words in compare's text, with what differs between the machines' descriptions
    rows = split(assign, factor)
    run_ids = {"A": "run-a", "B": "run-b", "C": "run-c"}
    for r in rows:
        r["run_id"] = run_ids[r["host"]]
    # the machines' descriptions: page faults that cost more where the ratio is higher
    order = sorted("ABC", key=lambda m: ms.get(m, {}).get("estimate") or 0)
    cal = dict(zip(order, (11000, 12000, 36000)))
    load = {"A": 0.2, "B": 0.3, "C": 1.9}
    metas = {"run_id": "merged", "machine": {}, "configs": [{"config": BASE}, {"config": OTHER}],
             "shards": [{"run_id": run_ids[m], "machine": {"host": m, "boot_id": f"boot-{m}", "thp_enabled": "madvise",
                                                           "calibration": {"fault_ns": cal[m], "load1": load[m]}}}
                        for m in "ABC"]}
    path2 = os.path.join(tmp, "described.csv")
    write(rows, path2, metas)
    out = subprocess.run([sys.executable, "-m", "mallocbench.compare", path2, "--baseline", BASE],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"compare: {out.stderr}")
    text = out.stdout
    check("on each machine:" in text and "pooled over 3 machines" in text and "differs by machine:" in text,
          f"compare's text names each machine and the pooled answer: {text[:1500]}")
    want = "page-fault cost " + ", ".join(f"{cal[m] / 1000:.3g} µs on {m}" for m in
                                          sorted("ABC", key=lambda m: -ms[m]["estimate"])) + " (the ratio rises with it)"
    check(want in text, f"what differs between them: {want!r} in {text[:2500]}")
    check("calibrated at load " in text and "1.9 on C" in text, "the load each machine was calibrated at, told apart")
    check("THP" not in text.split("differs by machine:")[1].split("\n")[0], "a trait all share is not a difference")


def case_aa(tmp):
    rng = random.Random(20261206)
    flagged = 0
    n = 200
    base = [r for r in ROWS if r["status"] == "ok"]
    fn = lambda r: float(r["throughput"]) if r["throughput"] else None  # noqa: E731
    for _ in range(n):
        bl = BLOCKS[:]
        rng.shuffle(bl)
        assign = {b: "ABC"[i % 3] for i, b in enumerate(bl)}
        rows = split(assign)
        ch = change.change([r for r in rows if r["config"] == BASE and r["status"] == "ok"],
                            [r for r in rows if r["config"] == OTHER and r["status"] == "ok"], fn)
        flagged += bool(ch.fleet and ch.fleet.differs)
    check(len(base) > 0 and flagged <= 0.05 * n, f"A/A splits flagged 'differs by machine': {flagged} of {n}")
    print(f"A/A: {flagged} of {n} random splits over three machines flagged")


def case_formulas(tmp):
    from scipy.stats import chi2, t as t_dist
    rng = random.Random(3)

    def machine(f, n=8):
        base = [100 * (1 + rng.gauss(0, 0.03)) for _ in range(n)]
        return stats.paired_change(base, [b * f * (1 + rng.gauss(0, 0.02)) for b in base])
    ms = [("A", machine(1.05)), ("B", machine(1.2)), ("C", machine(1.1)), ("D", machine(1.3))]
    pl = stats.pool(ms)
    y = [math.log(ch.estimate) for _, ch in ms]
    v = [((math.log(ch.hi) - math.log(ch.lo)) / (2 * 1.959963984540054)) ** 2 for _, ch in ms]
    k = len(y)
    tau2 = pl.tau ** 2

    def q_gen(t2):
        w = [1 / (vi + t2) for vi in v]
        mu = sum(wi * yi for wi, yi in zip(w, y)) / sum(w)
        return sum(wi * (yi - mu) ** 2 for wi, yi in zip(w, y)), mu, w
    q, mu, w = q_gen(tau2)
    check(tau2 > 0 and abs(q - (k - 1)) < 1e-3 * (k - 1), f"Paule-Mandel: Q(tau^2) = {q:.6g}, k - 1 = {k - 1}")
    qs = q / (k - 1)
    half = t_dist.isf(0.025, k - 1) * math.sqrt(qs / sum(w))
    check(abs(math.log(pl.estimate) - mu) < 1e-9, f"pooled log ratio {math.log(pl.estimate)} = mu {mu}")
    check(abs(math.log(pl.lo) - (mu - half)) < 1e-6 and abs(math.log(pl.hi) - (mu + half)) < 1e-6,
          f"Hartung-Knapp CI [{pl.lo}, {pl.hi}] = exp(mu -+ {half:.6g})")
    lo2, hi2 = pl.tau_ci[0] ** 2, pl.tau_ci[1] ** 2
    check(lo2 <= tau2 <= hi2, f"tau^2 {tau2} inside its CI [{lo2}, {hi2}]")
    check(lo2 == 0 or abs(q_gen(lo2)[0] - chi2.isf(0.025, k - 1)) < 1e-6, "the Q-profile's lower end")
    check(abs(q_gen(hi2)[0] - chi2.isf(0.975, k - 1)) < 1e-6, "the Q-profile's upper end")
    wf = [1 / vi for vi in v]
    s2 = (k - 1) * sum(wf) / (sum(wf) ** 2 - sum(x * x for x in wf))
    check(abs(pl.i2 - tau2 / (tau2 + s2)) < 1e-9, f"I^2 {pl.i2} from tau^2")
    qf = sum(x * (yi - sum(a * b for a, b in zip(wf, y)) / sum(wf)) ** 2 for x, yi in zip(wf, y))
    check(abs(pl.q - qf) < 1e-9 and abs(pl.q_p - chi2.sf(qf, k - 1)) < 1e-9, f"Cochran's Q {pl.q} = {qf}")

    # machines that agree closely (tau^2 = 0): the CI no narrower than the plain random-effects one,
    # so wider than each machine's here (t with 2 degrees of freedom)
    def fixed(est, lo, hi, n=8):
        return stats.Change("ratio", est, lo, hi, 0.5, n, n, "test", 0.0, True, 0.95, 1, 1, True)
    close = [("A", fixed(1.004, 0.90, 1.12)), ("B", fixed(1.005, 0.90, 1.12)), ("C", fixed(1.006, 0.90, 1.12))]
    pc = stats.pool(close)
    check(pc.tau == 0 and pc.lo <= 0.90 and pc.hi >= 1.12 and pc.p > 0.5,
          f"agreeing machines: CI [{pc.lo}, {pc.hi}] no narrower than theirs, p {pc.p}")
    # a machine whose CI has no width (every pair one value) is shown, not pooled, and breaks nothing
    flat = close[:2] + [("D", fixed(1.2, 1.2, 1.2))]
    pf = stats.pool(flat)
    check(pf.left_out == ["D"] and pf.k == 2 and pf.estimate is None, f"a CI of no width left out: {pf.left_out}")
    check(pf.left_why == {"D": stats.NO_SPREAD}, f"and why: {pf.left_why}")
    # ... but it is exact: 1.2 lies beyond both CIs, so the machines differ (Q alone never sees it)
    check(pf.differs and words.fleet_words(pf).startswith("differs by machine: 1.200x on D"),
          f"an exact machine beyond the others' CIs: {words.fleet_words(pf)}")
    inside = close + [("D", fixed(1.01, 1.01, 1.01))]
    pi = stats.pool(inside)
    check(not pi.differs and pi.estimate is not None, "an exact machine inside the pooled CI: no difference")
    check(words.fleet_words(pi) == "consistent across machines",
          f"an exact machine held to the CIs is judged: {words.fleet_words(pi)}")
    check(stats.pooled_change(pi).n == 24, f"the pooled change counts the pooled machines' blocks: {stats.pooled_change(pi).n}")
    few = close[:2] + [("E", fixed(3.0, None, None, n=3))]
    check(stats.pool(few).left_why == {"E": stats.NO_CI} and not stats.pool(few).differs
          and words.fleet_words(stats.pool(few))
          == "consistent across the machines with a CI (E not judged)",
          f"a machine with too few blocks: not pooled, not judged: {words.fleet_words(stats.pool(few))}")
    # at a family's level (99%) a 6-block machine shows no CI: it is left out, not weighed by its 95% one,
    # and an exact machine beside it is held to the CIs there are (no crash on a missing one)
    rng2 = random.Random(3)
    base, other, where = {}, {}, {}
    for m, r, n, noise in (("A", 1.10, 6, 0.02), ("B", 1.12, 6, 0.02), ("C", 2.0, 8, 0.0)):
        for _ in range(n):
            u = len(base)
            base[u] = 1000 + rng2.randint(0, 50)
            other[u], where[u] = base[u] * r * (1 + rng2.uniform(-noise, noise)), m
    ch = change._fleet_change(base, other, list(base), 0.99, where, 0.01)
    check(ch is not None and ch.fleet.left_why == {"A": stats.NO_CI, "B": stats.NO_CI, "C": stats.NO_SPREAD},
          f"99%: the 6-block machines show no CI and are left out: {ch and ch.fleet.left_why}")
    ch = change._fleet_change(base, other, list(base), 0.95, where, 0.01)
    check(ch is not None and ch.fleet.differs and ch.fleet.k == 2, "95%: the exact 2.0x beyond both CIs: differs")
    two_exact = [("A", fixed(1.4, 1.4, 1.4)), ("B", fixed(2.0, 2.0, 2.0))]
    check(stats.pool(two_exact).differs, "two exact machines that disagree differ")
    # the weights come from a fixed level: a family-adjusted CI does not move Q or tau
    wide = [(m, stats.Change("ratio", ch.estimate, ch.lo * 0.98, ch.hi / 0.98, ch.p, ch.n, ch.n, "test", 0.0, True,
                             0.99, 1, 1, True)) for m, ch in ms]
    pw = stats.pool(wide, level=0.99, weigh=ms)
    check(abs(pw.q - pl.q) < 1e-9 and abs(pw.tau - pl.tau) < 1e-9 and abs(pw.estimate - pl.estimate) < 1e-12,
          f"weights from the 95% CIs: Q {pw.q} = {pl.q} at the family's 99%")


def case_two(tmp):
    assign = {b: "AB"[b % 2] for b in BLOCKS}
    path = os.path.join(tmp, "two.csv")
    write(split(assign, {"B": 1.5}), path)
    cell = primary_cell(path)
    pl = cell.get("pooled", {})
    check(sorted(m["machine"] for m in cell.get("machines", [])) == ["A", "B"], "each of two machines")
    rows = split(assign, {"B": 1.5})
    plain = stats.paired_change(*[[v for _, v in sorted(
        (int(r["block"]), float(r["throughput"])) for r in rows if r["config"] == c and r["status"] == "ok")]
        for c in (BASE, OTHER)])
    check(pl.get("lo") is None and cell["lo"] is not None and abs(cell["estimate"] - plain.estimate) < 1e-9 * plain.estimate
          and "not pooled" in cell["method"],
          f"two machines: no pooled CI; the cell is the paired change over all blocks: {cell['estimate']} "
          f"{plain.estimate} {cell['method']!r}")
    check(pl.get("words", "").startswith("differs by machine"), f"the words still: {pl.get('words')!r}")


def case_runs(tmp):
    """compare --fleet: one plan run whole on three machines, a file each (their blocks share
    numbers, never units)."""
    paths = []
    for m, f in (("A", 1.0), ("B", 1.0), ("C", 1.5)):
        rows = split({b: m for b in BLOCKS}, {m: f})
        for r in rows:
            r["run_id"] = f"run-{m}"
        paths.append(os.path.join(tmp, f"{m}.csv"))
        write(rows, paths[-1])
    out = subprocess.run([sys.executable, "-m", "mallocbench.compare", "--fleet", *paths, "--baseline", BASE,
                          "--json", "--metric", "throughput"], capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"compare --fleet: {out.stderr}")
    cell = next(c for c in json.loads(out.stdout)["cells"] if not c["geomean"]) if out.returncode == 0 else {}
    ms = {m["machine"]: m for m in cell.get("machines", [])}
    check(sorted(ms) == ["A", "B", "C"] and all(m["n"] == len(BLOCKS) for m in ms.values()),
          f"each run is a machine with all its blocks: {[(k, v['n']) for k, v in ms.items()]}")
    r_all = unsplit()
    check(abs(ms["A"]["estimate"] - r_all) < 1e-9 * r_all and abs(ms["C"]["estimate"] - 1.5 * r_all) < 1e-6 * r_all,
          f"a machine's answer is its run's own: {ms['A']['estimate']} {ms['C']['estimate']} (unsplit {r_all})")
    check(cell.get("pooled", {}).get("differs") is True, "the scaled run differs")
    bad = subprocess.run([sys.executable, "-m", "mallocbench.compare", "--fleet", paths[0], paths[0]],
                         capture_output=True, text=True, timeout=120)
    check(bad.returncode != 0 and "again" in bad.stderr, f"a run given twice is refused: {bad.stderr!r}")
    bad = subprocess.run([sys.executable, "-m", "mallocbench.compare", paths[0], "--fleet", paths[1]],
                         capture_output=True, text=True, timeout=120)
    check(bad.returncode == 2 and "--fleet" in bad.stderr, f"--fleet with another CSV refused: {bad.stderr!r}")


def case_history(tmp):
    """tests/fixtures/fleet-history/ (make fleet-probe): one run per machine, each named after
    its host and boot and describing its machine; compare --fleet pools the folder."""
    d = os.path.join(os.path.dirname(os.path.abspath(FIXTURE)), "fleet-history")
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".csv") and not f.endswith(".rss.csv"))
    check(files, "the fleet history has a run")
    for f in files:
        meta = json.load(open(f[:-4] + ".meta.json"))
        m = meta["machine"]
        want = f"{m['host']}-{m['boot_id'].replace('-', '')[:6]}.csv"
        check(os.path.basename(f) == want, f"{f}: named after its machine ({want})")
        cal = m.get("calibration") or {}
        check(cal.get("fault_ns", 0) > 0 and cal.get("memcpy_bytes_per_s", 0) > 0, f"{f}: its machine calibrated")
    run = mbdata.load(files)
    check(len(run.machines) == len(files), f"one machine per run: {sorted(run.machines)}")
    out = subprocess.run([sys.executable, "-m", "mallocbench.compare", "--fleet", *files, "--json"],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"compare --fleet over the history: {out.stderr}")
    cells = json.loads(out.stdout)["cells"] if out.returncode == 0 else []
    if len(files) >= 2:
        check(all(len(c.get("machines", [])) == len(files) for c in cells if c["metric"] == "throughput"),
              "each cell on every machine of the history")


def _fleet_json(files):
    out = subprocess.run([sys.executable, "-m", "mallocbench.compare", "--fleet", *files, "--json",
                          "--metric", "throughput"], capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"compare --fleet {[os.path.basename(f) for f in files]}: {out.stderr}")
    return json.loads(out.stdout) if out.returncode == 0 else {"cells": []}


def _keep_cell(doc):
    return next((c for c in doc["cells"] if not c["geomean"] and c["config"].startswith("je-keep")), {})


def case_real(tmp):
    """The first real fleet answer (docs/fleet.md): over vm-686f62 (AMD, a fault at 11 us) and
    vm-5892ce (Intel, 1.84 us), jemalloc keeping its memory against glibc differs by machine, and
    its ratio is the larger where a fault costs more (58.5x against 6.4x); two machines pool
    nothing."""
    d = os.path.join(os.path.dirname(os.path.abspath(FIXTURE)), "fleet-history")
    files = [os.path.join(d, "vm-686f62.csv"), os.path.join(d, "vm-5892ce.csv")]
    cell = _keep_cell(_fleet_json(files))
    ms = {m["machine"]: m for m in cell.get("machines", [])}
    check(sorted(ms) == ["vm/5892ce", "vm/686f62"], f"je-keep on both real machines: {sorted(ms)}")
    if len(ms) != 2:
        return
    fault = {f"vm/{json.load(open(f[:-4] + '.meta.json'))['machine']['boot_id'][:6]}":
             json.load(open(f[:-4] + ".meta.json"))["machine"]["calibration"]["fault_ns"] for f in files}
    dear, cheap = max(fault, key=fault.get), min(fault, key=fault.get)
    check((dear, cheap) == ("vm/686f62", "vm/5892ce"), f"the AMD machine's fault is the dearer: {fault}")
    check(ms[dear]["lo"] > ms[cheap]["hi"], f"the effect rises with the fault cost: {ms[dear]} against {ms[cheap]}")
    check(words.ratio_text(ms[dear]["estimate"]) == "58.5x" and 52.1 < ms[dear]["lo"] < 52.3
          and 62.9 < ms[dear]["hi"] < 63.1, f"58.5x [52.2, 63.0] on {dear}: {ms[dear]}")
    check(6.35 < ms[cheap]["estimate"] < 6.45 and 4.3 < ms[cheap]["lo"] < 4.4 and 9.6 < ms[cheap]["hi"] < 9.7,
          f"6.4x [4.3, 9.6] on {cheap}: {ms[cheap]}")
    pl = cell.get("pooled") or {}
    check(pl.get("differs") is True and pl.get("words", "").startswith("differs by machine: 58.5x on vm/686f62"),
          f"the words: {pl.get('words')!r}")
    check("page-fault cost 11 µs on vm/686f62, 1.84 µs on vm/5892ce" in pl.get("differences", ""),
          f"the fault cost named: {pl.get('differences')!r}")
    check(pl.get("estimate") is None and pl.get("tau") is None, f"two machines pool nothing: {pl}")


def case_third(tmp):
    """A third machine's run in the fleet history (made up here from vm-686f62's run: another host
    and boot, je-keep's throughput scaled by 0.5) gives the pooled cell with tau and I^2 with no
    change of code."""
    d = os.path.join(os.path.dirname(os.path.abspath(FIXTURE)), "fleet-history")
    src = os.path.join(d, "vm-686f62.csv")
    with open(src, newline="") as f:
        rd = csv.DictReader(f)
        head, rows = rd.fieldnames, list(rd)
    meta = json.load(open(src[:-4] + ".meta.json"))
    for r in rows:
        r["run_id"], r["host"] = "third-run", "vm3"
        if r["config"].startswith("je-keep") and r["throughput"]:
            r["throughput"] = repr(float(r["throughput"]) * 0.5)
    meta["run_id"] = "third-run"
    meta["machine"] = dict(meta["machine"], host="vm3", boot_id="333333aa-0000-0000-0000-000000000000")
    third = os.path.join(tmp, "vm3-333333.csv")
    with open(third, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=head, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with open(third[:-4] + ".meta.json", "w") as f:
        json.dump(meta, f)
    files = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".csv")) + [third]
    cell = _keep_cell(_fleet_json(files))
    pl = cell.get("pooled") or {}
    check(pl.get("k") == 3 and pl.get("estimate") is not None and pl.get("lo") is not None,
          f"three machines: a pooled cell: {pl}")
    check(isinstance(pl.get("tau"), float) and pl["tau"] > 0 and isinstance(pl.get("i2"), float)
          and pl.get("tau_ci") and pl.get("i2_ci"), f"with tau and I^2 and their CIs: {pl}")
    check(pl.get("differs") is True and cell.get("estimate") == pl.get("estimate"),
          f"the pooled ratio is the cell's answer, and it differs by machine: {cell.get('estimate')} {pl}")


def case_kinds(tmp):
    d = os.path.dirname(os.path.abspath(FIXTURE))
    files = [os.path.join(d, "exec-fixed.csv"), os.path.join(d, "exec-fixed-686f62.csv")]
    out = subprocess.run([sys.executable, "-m", "mallocbench.compare", "--fleet", *files, "--json"],
                         capture_output=True, text=True, timeout=120)
    check(out.returncode == 0, f"compare --fleet over two machines' runs: {out.stderr}")
    got = json.loads(out.stdout) if out.returncode == 0 else {"cells": [], "machines": []}
    labels = [m["machine"] for m in got["machines"]]
    check(labels == ["vm/6.18.44-fc-v1147", "vm/686f62"], f"two machines, told apart: {labels}")
    cpus = sorted(str(m["description"].get("cpu_model")) for m in got["machines"])
    check(cpus == ["AMD EPYC", "Intel(R) Xeon(R) Processor"], f"each machine's description: {cpus}")
    diff = got.get("machine_differences", "")
    check("Intel(R) Xeon(R) Processor on vm/6.18.44-fc-v1147" in diff and "AMD EPYC on vm/686f62" in diff
          and "kernel" in diff, f"what differs between them: {diff!r}")
    cells = {(c["config"], c["metric"]): c for c in got["cells"]}
    for cfg in ("jemalloc", "tcmalloc"):
        c = cells.get((cfg, "throughput"), {})
        each = {m["machine"]: m["n"] for m in c.get("machines", [])}
        check(each == {"vm/6.18.44-fc-v1147": 3, "vm/686f62": 12}, f"{cfg}: each machine's blocks {each}")
        check((c.get("pooled") or {}).get("estimate", 0) is None and c.get("n") == 15,
              f"{cfg}: two machines, one with a CI: nothing pooled, the paired change over all 15 blocks")
        # page faults per run are the allocator's, not the machine's: one answer on both
        f = [m["estimate"] for m in cells.get((cfg, "faults"), {}).get("machines", [])]
        check(len(f) == 2 and max(f) < 1.05 * min(f), f"{cfg}: faults ratio alike on both machines {f}")
    text = subprocess.run([sys.executable, "-m", "mallocbench.compare", "--fleet", *files],
                          capture_output=True, text=True, timeout=120).stdout
    check(f"the machines differ in {diff}." in text, "the footer says what differs")


def case_dashboard(tmp):
    from mallocbench import dashboard, nightly
    hist = os.path.join(tmp, "hist")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "..", "make_history.py"), hist, "--nights", "6",
                    "--machines", "3"], check=True, capture_output=True, timeout=120)
    said = 0
    for f in nightly.load(hist)["fleet"]:
        for i, w in enumerate(f["words"]):
            if not (w or "").startswith("differs by machine: "):
                continue
            for part in w[len("differs by machine: "):].split(", "):
                x, m = part.split(" on ", 1)
                said += 1
                check(x == words.ratio_text(f["ratio"][m][i]), f"the fleet view's {x} on {m} is compare's "
                                                               f"{words.ratio_text(f['ratio'][m][i])}")
    check(said > 0, "the synthetic history has machines that differ")
    got = json.loads(dashboard.dump({"series": [{"ratio": [12.3456], "lo": [12.3456]}],
                                     "fleet": [{"ratio": {"a": [0.1235123]}, "pooled": [12.3456],
                                                "lo": [0.1235123], "hi": [11.152345], "k": [3]}]}))
    check(got["series"][0] == {"ratio": [12.3], "lo": [12.35]},
          f"a series' ratio with compare's digits, its other figures with 4: {got['series']}")
    check(got["fleet"][0] == {"ratio": {"a": [0.124]}, "pooled": [12.3], "lo": [0.124], "hi": [11.2], "k": [3]},
          f"a fleet entry's ratios with compare's digits: {got['fleet']}")


def case_labels(tmp):
    rows = [dict(r) for r in ROWS]
    for r in rows:
        r["run_id"] = "r1" if int(r["block"]) % 2 else "r2"
    metas = [{"run_id": "merged", "machine": {"host": "vm"},
              "shards": [{"run_id": "r1", "machine": {"host": "vm", "boot_id": "aaaaaa11-2222"}},
                         {"run_id": "r2", "machine": {"host": "vm", "boot_id": "bbbbbb33-4444"}}]}]
    got = mbdata.mark_machines(rows, metas)
    check(sorted(got) == ["vm/aaaaaa", "vm/bbbbbb"], f"one host over two boots: two machines {sorted(got)}")
    # a run resumed in the same boot: its earlier part's sidecar under "previous", one machine
    res = [dict(r) for r in ROWS]
    for r in res:
        r["run_id"] = "first" if int(r["block"]) < 9 else "second"
    got = mbdata.mark_machines(res, [{"run_id": "second", "machine": {"host": "vm", "boot_id": "b1"},
                                      "previous": {"run_id": "first", "machine": {"host": "vm", "boot_id": "b1"}}}])
    check(list(got) == ["vm"], f"a resumed run is one machine: {sorted(got)}")
    # a run without its sidecar (a shard's lost) may be any machine of that host name: its own,
    # unknown, never merged into the machine another run's sidecar names
    half = [dict(r) for r in ROWS]
    for r in half:
        r["run_id"] = "known" if int(r["block"]) % 2 else "unknown"
    got = mbdata.mark_machines(half, [{"run_id": "known", "machine": {"host": "vm", "boot_id": "b1"}}])
    check(sorted(got) == ["vm/? (run unknown, no sidecar)", "vm/b1"],
          f"a sidecar missing: that run's machine unknown: {sorted(got)}")
    bare = [dict(r) for r in ROWS]
    got = mbdata.mark_machines(bare, [])
    check(list(got) == [ROWS[0]["host"]], f"no sidecar at all: the host alone {sorted(got)}")
    one = [dict(r) for r in ROWS]
    got = mbdata.mark_machines(one, [{"run_id": ROWS[0]["run_id"], "machine": {"host": "vm", "boot_id": "x"}}])
    check(set(r["_machine"] for r in one) == {ROWS[0]["host"]}, "one machine: its host name")
    # sidecars written before they carried boot_id: one that agrees with the host's known boot
    # is that boot; one with another kernel or CPU is another machine, and so are two old ones
    # that differ; rows without a sidecar join the one machine their host's sidecars name
    old = [dict(r) for r in ROWS]
    for r in old:
        r["run_id"] = ("new", "same", "other", "none")[int(r["block"]) % 4]
    new = {"host": "vm", "boot_id": "686f623d-9b9b", "kernel": "6.18.44-fc-v1272", "cpu_model": "AMD EPYC"}
    metas = [{"run_id": "new", "machine": new},
             {"run_id": "same", "machine": {"host": "vm", "kernel": "6.18.44-fc-v1272", "cpu_model": "AMD EPYC"}},
             {"run_id": "other", "machine": {"host": "vm", "kernel": "6.18.44-fc-v1147",
                                             "cpu_model": "Intel(R) Xeon(R) Processor"}}]
    got = mbdata.mark_machines(old, metas)
    check(sorted(got) == ["vm/6.18.44-fc-v1147", "vm/686f62", "vm/? (run none, no sidecar)"],
          f"an old sidecar of another kernel is another machine: {sorted(got)}")
    by = {r["run_id"]: r["_machine"] for r in old}
    check(by == {"new": "vm/686f62", "same": "vm/686f62", "other": "vm/6.18.44-fc-v1147",
                 "none": "vm/? (run none, no sidecar)"}, f"each run's machine: {by}")
    check((got.get("vm/686f62") or {}).get("boot_id") == new["boot_id"], "a boot's description is the one naming it")
    two = [dict(r) for r in ROWS]
    for r in two:
        r["run_id"] = ("a", "b", "none")[int(r["block"]) % 3]
    got = mbdata.mark_machines(two, [m for m in metas if m["run_id"] in ("same", "other")]
                               + [{"run_id": "a", "machine": {"host": "vm", "kernel": "k1", "cpu_model": "c"}},
                                  {"run_id": "b", "machine": {"host": "vm", "kernel": "k2", "cpu_model": "c"}}])
    check(sorted(got) == ["vm/? (run none, no sidecar)", "vm/k1", "vm/k2"],
          f"two old sidecars of two kernels: {sorted(got)}")


if __name__ == "__main__":
    cases = {k[5:]: v for k, v in globals().items() if k.startswith("case_")}
    with tempfile.TemporaryDirectory() as tmp:
        for name, fn in cases.items():
            if len(sys.argv) > 2 and name not in sys.argv[2:]:
                continue
            fn(tmp)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        sys.exit(1)
