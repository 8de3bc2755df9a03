#!/usr/bin/python3
"""test_detect.py - the nightly detector (scripts/detect.py), the history's reader (nightly.py:
its machines are boots of a host, as compare names them; a folder stored before issue 44 is still
read) and store (history.py) on synthetic histories (tests/make_history.py) with planted changes: a 5%
step found at its night, A/A noise and one outlier night raising nothing, a slow drift reported,
a recovered regression kept, environment and machine labels, a count that moves by one call,
pending vs confirmed, exit 3 every night while a confirmed regression is unresolved (0 once it
recovered or HISTORY/acknowledged.txt names it), confirmed alerts whose p and CI support them
(the +9%-for-three-nights history; a blip), weakened / returning / recovered states, reports that
never move when nights are added, a new series that is not a regression, missing counters that
are null with a reason, each family's sidecar colour carried to series.json and the site's
colours (the fallback where sidecars carry none).  Exit 77 (skip) without scipy."""
import contextlib
import csv
import io
import json
import math
import os
import random
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
try:
    import numpy  # noqa: F401
    import scipy  # noqa: F401
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)
from mallocbench import cli
from mallocbench import detect
from mallocbench import history
from mallocbench import machines
from mallocbench import mbcsv
from mallocbench import nightly
import make_history  # noqa: E402

FAILS = []
TMP = tempfile.mkdtemp(prefix="test_detect.")


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, file=sys.stderr)


def noisy(rng, n, sd=0.01, f=lambda i: 0.0):
    return [1e9 * (1 + f(i)) * math.exp(rng.gauss(0, sd)) for i in range(n)]


def aa(n, value=0.0277):
    return [value] * n


def run(events, nights, name, **kw):
    d = os.path.join(TMP, name)
    ids = make_history.write(d, nights, make_history.MACHINES[:kw.pop("machines", 1)], events=events, **kw)
    out = os.path.join(TMP, name + ".out")
    rc = cli.run(detect.main, [d, "--out", out])
    with open(os.path.join(out, "alerts.csv"), newline="") as f:
        alerts = list(csv.DictReader(f))
    with open(os.path.join(out, "series.json")) as f:
        js = json.load(f)
    return rc, alerts, js, ids


def night(i):
    return make_history.night_name(i)


def pick(alerts, **kw):
    return [a for a in alerts if all(a[k] == v for k, v in kw.items())]


# ---- the two-sample test behind a change point -------------------------------------------------
# welch's p and its CI are one test: p < 0.05 exactly when the 95% CI excludes 0 (over draws whose
# p spreads across 0.05), and the CI is the t quantile 0.975 times the standard error
wr = random.Random(11)
near = 0
for k in range(300):
    a = [wr.gauss(0, 1) for _ in range(8)]
    b = [wr.gauss(wr.uniform(0, 2), 1.5) for _ in range(7)]
    p, d, lo, hi = detect.welch(a, b)
    near += 0.03 < p < 0.12
    if (p < 0.05) != (lo > 0 or hi < 0):
        check(False, f"welch: p {p:.4f} against the CI [{lo:.4f}, {hi:.4f}] of {d:.4f}")
        break
check(near >= 10, f"welch: {near} draws with p near 0.05 (the property needs some)")
from scipy.stats import t as _t  # noqa: E402
a, b = [1.0, 2.0, 4.0, 7.0], [3.0, 5.0, 6.0, 9.0, 12.0]
va, vb = sum((x - 3.5) ** 2 for x in a) / 3, sum((x - 7.0) ** 2 for x in b) / 4
se = math.sqrt(va / 4 + vb / 5)
df = se ** 4 / ((va / 4) ** 2 / 3 + (vb / 5) ** 2 / 4)
p, d, lo, hi = detect.welch(a, b)
check(abs(d - 3.5) < 1e-12 and abs((hi - lo) / 2 - _t.ppf(0.975, df) * se) < 1e-9,
      f"welch's 95% CI: half-width {(hi - lo) / 2} against {_t.ppf(0.975, df) * se}")

# ---- the detector on arrays (many seeds) ---------------------------------------------------------
# a 5% step after 20 nights: found at night 20 (+-1), a regression, confirmed
for seed in range(20):
    rng = random.Random(seed)
    recs, _ = detect.replay(detect.Series(noisy(rng, 40, f=lambda i: -0.05 if i >= 20 else 0), "timing",
                                          "higher", aa(40)))
    check(len(recs) == 1 and abs(recs[0]["i"] - 20) <= 1 and detect.direction(recs[0]["diff"], "higher")
          == "regression", f"seed {seed}: a 5% step at night 20: {[(r['i'], r['change_pct']) for r in recs]}")

# 60 nights of A/A-level noise: no alert (over many seeds: at most one seed in 50)
fa = 0
for seed in range(50):
    rng = random.Random(100 + seed)
    recs, pend = detect.replay(detect.Series(noisy(rng, 60), "timing", "higher", aa(60)))
    fa += bool(recs) or pend is not None
check(fa <= 1, f"A/A noise: {fa} of 50 sixty-night series raised an alert")

# one outlier night (+15%, -15%) is not a change point, wherever it falls
for at in (5, 20, 37, 39):
    for size in (0.15, -0.15):
        rng = random.Random(at)
        recs, pend = detect.replay(detect.Series(noisy(rng, 40, f=lambda i: size if i == at else 0), "timing",
                                                 "higher", aa(40)))
        check(not recs, f"one outlier night {at} ({size:+.0%}) is not a change point: {[r['i'] for r in recs]}")
        check((pend is None) == (at != 39), f"an outlier on the latest night {at} is pending, no earlier one")

# 0.5%/night drift over 20 nights (never 3% a night) is reported as a regression
for seed in range(10):
    rng = random.Random(200 + seed)
    recs, _ = detect.replay(detect.Series(noisy(rng, 50, f=lambda i: -0.005 * min(max(0, i - 15), 20)), "timing",
                                          "higher", aa(50)))
    check(any(detect.direction(r["diff"], "higher") == "regression" and 15 <= r["i"] <= 40 for r in recs),
          f"seed {seed}: a 0.5%/night drift is reported: {[(r['i'], r['change_pct']) for r in recs]}")

# a deterministic count that moves by one call: a change at that night; a one-night blip is not
recs, _ = detect.replay(detect.Series([40.0] * 20 + [41.0] * 10, "count", "lower"))
check(len(recs) == 1 and recs[0]["i"] == 20, f"a count 40 -> 41: {[(r['i'], r['diff']) for r in recs]}")
recs, _ = detect.replay(detect.Series([40.0] * 20 + [41.0] + [40.0] * 9, "count", "lower"))
check(not recs, "one night of 41 calls among 40s is not a change")
# a count with its own spread: a move within it is nothing
rng = random.Random(3)
recs, _ = detect.replay(detect.Series([1000 + rng.gauss(0, 30) + (20 if i >= 20 else 0) for i in range(40)],
                                      "count", "lower"))
check(not recs, f"a 20-call move in a count whose nights vary by 30: {[r['i'] for r in recs]}")

# stability: what is reported as of night k is reported with the same night for every later k
rng = random.Random(7)
vals = noisy(rng, 60, f=lambda i: (-0.06 if 20 <= i < 35 else 0) + (-0.004 * max(0, i - 40)))
seen = {}
for k in range(10, 61):
    recs, _ = detect.replay(detect.Series(vals[:k], "timing", "higher", aa(k)))
    now = {(r["i"], r["diff"] > 0): r["detected"] for r in recs}
    for key, det in seen.items():
        check(now.get(key) == det, f"as of night {k}: the change at night {key[0]} (first reported at night "
                                   f"{det}) is {'moved or gone' if key not in now else 'reported at ' + str(now[key])}")
    seen.update(now)
check(any(abs(i - 20) <= 1 and not up for i, up in seen) and any(abs(i - 35) <= 1 and up for i, up in seen),
      f"a regression at 20 and its recovery at 35 are both in the record: {sorted(seen)}")

# pending after one night, confirmed after two
rng = random.Random(11)
base = noisy(rng, 30)
recs, pend = detect.replay(detect.Series(base[:29] + [base[29] * 0.9], "timing", "higher", aa(30)))
check(not recs and pend is not None and pend["i"] == 29, "one slow latest night: pending, nothing recorded")
recs, pend = detect.replay(detect.Series(base[:28] + [base[28] * 0.9, base[29] * 0.9], "timing", "higher", aa(30)))
check(len(recs) == 1 and recs[0]["i"] == 28 and recs[0]["state"] == "confirmed" and recs[0]["detected"] == 29,
      f"two slow latest nights: confirmed at the first: {recs}")

# ---- through files: history.py, detect.py's labels, exit code, series.json ------------------------
JE = dict(config="jemalloc", workload="tensor_copy", metric="throughput")
# the recovered regression stays in the record; its night and both directions
rc, alerts, js, ids = run([dict(kind="step", machine=0, night=20, size=-0.08, until=32, **JE)], 45, "recover")
mine = pick(alerts, config="jemalloc", workload="tensor_copy", metric="throughput")
check(any(a["direction"] == "regression" and night(19) <= a["night"] <= night(21) for a in mine)
      and any(a["direction"] == "improvement" and night(31) <= a["night"] <= night(33) for a in mine),
      f"regression at 20 and recovery at 32 both in alerts.csv: {[(a['night'], a['direction']) for a in mine]}")
check(len(alerts) == len(mine), f"nothing else alerted: {[(a['config'], a['metric'], a['night']) for a in alerts if a not in mine]}")
check(rc == 0, f"exit {rc} for a history whose regression is long past (expected 0)")

# exit 3 for a confirmed regression on the latest night; 0 while it is one night old (pending)
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=28, size=-0.10, **JE)], 30, "gate")
check(rc == 3, f"a 10% regression on the last two nights: exit {rc}, expected 3")
check([a["status"] for a in alerts] == ["confirmed"], f"...and one confirmed alert: {alerts}")
s = next(s for s in js["series"] if s["config"] == "jemalloc" and s["metric"] == "throughput"
         and s["workload"] == "tensor_copy")
check(s["latest"]["status"] == "regression", f"latest.status regression: {s['latest']}")
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=29, size=-0.10, **JE)], 30, "pending")
check(rc == 0 and [a["status"] for a in alerts] == ["pending"], f"one slow night: pending, exit 0 ({rc}, {alerts})")
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=28, size=+0.10, **JE)], 30, "improved")
check(rc == 0 and [a["direction"] for a in alerts] == ["improvement"], f"a confirmed improvement: exit 0 ({rc})")

# environment: a change on the night jemalloc's version changes
rc, alerts, js, ids = run([dict(kind="env", machine=0, night=15, what="jemalloc", to="5.3.1", allocator="jemalloc",
                                workload="tensor_copy", metric="throughput", size=-0.08)], 30, "env")
je = pick(alerts, config="jemalloc", workload="tensor_copy", metric="throughput")
check(je and all(a["status"] == "environment" for a in je), f"a change with jemalloc 5.3.1: environment: {je}")
m = js["machine_kinds"][ids[0]]
check(any("jemalloc 5.3.0 -> 5.3.1" == e["what"] and e["night"] == night(15) for e in m["environment"]),
      f"series.json lists the version change: {m['environment']}")
check(rc == 0, "an environment change does not fail the gate")

# machine: every configuration 7% faster together (no fingerprint change): `machine`, ratios quiet
rc, alerts, js, _ = run([dict(kind="machine", machine=0, night=15, workload="tensor_copy", metric="throughput",
                              size=0.07)], 30, "machine")
tc = pick(alerts, workload="tensor_copy", metric="throughput")
check(tc and all(a["status"] == "machine" and a["basis"] == "median" for a in tc),
      f"a machine-wide move is `machine`: {[(a['config'], a['status'], a['basis']) for a in tc]}")
check(len(tc) == len(alerts), "nothing else")

# the baseline alone moves: its own change, not every other configuration's ratio
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=15, config="glibc", workload="tensor_copy",
                              metric="throughput", size=-0.08)], 30, "baseline")
check([(a["config"], a["direction"]) for a in alerts] == [("glibc", "regression")],
      f"the baseline's regression, no mirrored ratio improvements: {[(a['config'], a['basis']) for a in alerts]}")

# a count (tcmalloc munmap 0 -> 1 call), a new series, a dropped one, a missing counter
rc, alerts, js, ids = run([
    dict(kind="step", machine=0, night=12, config="tcmalloc", workload="arena_churn", metric="munmap", size=1,
         additive=True),
    dict(kind="absent", machine=0, config="je-keep", **{"from": 10}),
    dict(kind="absent", machine=0, config="tcmalloc", until=25),
    dict(kind="missing", machine=0, night=18, counter="madvise"),
], 30, "matrix")
mu = pick(alerts, config="tcmalloc", metric="munmap", workload="arena_churn")
check(len(mu) == 1 and mu[0]["night"] == night(12) and mu[0]["direction"] == "regression",
      f"a deterministic count that moves by 1 call is a change at its night: {mu}")
check(not pick(alerts, config="je-keep"), "a configuration added to the matrix is a new series, not a change")
check(all(a["config"] == "tcmalloc" and a["metric"] == "munmap" for a in alerts),
      f"nothing but that: {[(a['config'], a['metric'], a['night']) for a in alerts]}")
jk = [s for s in js["series"] if s["config"] == "je-keep" and s["metric"] == "throughput"]
check(jk and all(s["nights"][0] == night(10) for s in jk), "the new series starts on its first night")
tcs = [s for s in js["series"] if s["config"] == "tcmalloc" and s["metric"] == "throughput"]
check(tcs and all(s["latest"]["status"] == "missing" for s in tcs), "a dropped series' latest status is missing")
mad = [s for s in js["series"] if s["metric"] == "madvise"]
for s in mad:
    i = s["nights"].index(night(18)) if night(18) in s["nights"] else None
    check(i is not None and s["median"][i] is None and any(m["night"] == night(18) and "not counted" in m["why"]
                                                           for m in s["missing"]),
          f"{s['id']}: the night madvise was not counted is null with the reason")
check(any(m["night"] == night(18) for m in js["machine_kinds"][ids[0]]["missing_counters"]),
      "the machine kind lists its missing counters")

# 60 nights of A/A noise through files (throughput, CPU, counts, RSS of every configuration): nothing
rc, alerts, js, ids = run([], 60, "quiet", machines=2)
check(not alerts and rc == 0, f"a quiet 60-night history on 2 machines raised {len(alerts)}: "
                              f"{[(a['config'], a['metric'], a['night'], a['change_pct']) for a in alerts][:5]}")
check(len(js["machines"]) == 2 and len(js["machine_kinds"]) == 2 and len(ids) == 2 and ids[0] != ids[1],
      "two machines of two kinds, two kinds' series")

# ephemeral runners: every night a fresh boot of a fresh host, one kind.  A series follows the
# kind: one series of 30 nights (not 30 of one night each), where a planted step is found, and a
# kernel that came with a reboot labels the change at its night `environment`
rc, alerts, js, ids = run([dict(kind="step", machine=0, night=20, size=-0.10, **JE),
                           dict(kind="env", machine=0, night=10, what="kernel", to="6.1.0-31-amd64", allocator="glibc",
                                workload="arena_churn", metric="throughput", size=-0.08)], 30, "fresh", fresh=True)
check(len(js["machines"]) == 30 and list(js["machine_kinds"]) == [ids[0]],
      f"30 nights on 30 fresh machines, one kind: {len(js['machines'])} machines, kinds {list(js['machine_kinds'])}")
je = [s for s in js["series"] if (s["workload"], s["config"], s["metric"]) == ("tensor_copy", "jemalloc", "throughput")]
check(len(je) == 1 and len(je[0]["nights"]) == 30 and je[0]["machine_kind"] == ids[0],
      f"one series of 30 nights: {[(s['id'], len(s['nights'])) for s in je]}")
check(je and all(len(je[0]["measured_by"].get(n, [])) == 1 for n in je[0]["nights"])
      and len({m for ms in je[0]["measured_by"].values() for m in ms}) == 30,
      f"each night measured by that night's machine: {je and list(je[0]['measured_by'].items())[:2]}")
reg = pick(alerts, workload="tensor_copy", config="jemalloc", metric="throughput", direction="regression")
check(reg and reg[0]["night"] == night(20) and reg[0]["status"] == "confirmed" and rc == 3,
      f"the step planted at night 20 is found across boots: {[(a['night'], a['status']) for a in reg]}, exit {rc}")
env = [a for a in alerts if a["workload"] == "arena_churn"]
check(env and all(a["status"] == "environment" and a["night"] == night(10) for a in env),
      f"a move with the kernel a reboot brought: environment: {[(a['config'], a['status'], a['night']) for a in env]}")
check(any(e["what"] == "kernel 6.1.0-30-amd64 -> 6.1.0-31-amd64" and e["night"] == night(10)
          for e in js["machine_kinds"][ids[0]]["environment"]),
      f"the kind's environment names the kernel change: {js['machine_kinds'][ids[0]]['environment']}")
check(all(a["machine_kind"] == ids[0] for a in alerts), "alerts name the kind")
# another CPU is another kind: a series of its own, though the host name pattern goes on
kd = os.path.join(TMP, "kind-change")
k1 = make_history.write(kd, 10, make_history.MACHINES[:1], fresh=True)[0]
k2 = make_history.write(kd, 10, make_history.MACHINES[2:3], fresh=True, start=night(10))[0]
hk = nightly.load(kd)
tc = [s for s in hk["series"] if (s["workload"], s["config"], s["metric"]) == ("tensor_copy", "glibc", "throughput")]
check(k1 != k2 and sorted(hk["kinds"]) == sorted([k1, k2])
      and sorted((s["machine_kind"], s["nights"][0], len(s["nights"])) for s in tc)
      == sorted([(k1, night(0), 10), (k2, night(10), 10)]),
      f"a kind change starts another series: {[(s['machine_kind'], s['nights'][0], len(s['nights'])) for s in tc]}")

# family colours: carried from the sidecars into series.json (null where none is given, as in
# sidecars written before colours), and the site's colour per family: the sidecar's, else the fallback
from mallocbench import dashboard as mb_site  # noqa: E402
fams = [("scudo", "scudo", "", "14.0.6"), ("glibc", "glibc", "", "2.36"), ("tbbmalloc", "tbbmalloc", "", "2021.8")]
rc, alerts, js, ids = run([], 8, "colours", configs=fams, colours={"scudo": "#E69F00", "tbbmalloc": "#56B4E9"})
got = {(s["allocator"], s["colour"]) for s in js["series"]}
check(got == {("scudo", "#E69F00"), ("glibc", None), ("tbbmalloc", "#56B4E9")},
      f"series.json carries each family's sidecar colour, null without one: {sorted(got, key=str)}")
fb = mbcsv.FALLBACK_COLOURS
check(mb_site.family_colours(js["series"]) == {"scudo": "#E69F00", "glibc": fb[0], "tbbmalloc": "#56B4E9"},
      f"site: the sidecar's colours, the fallback for glibc: {mb_site.family_colours(js['series'])}")
rc, alerts, js, ids = run([], 8, "no-colours", configs=fams, colours={})
check(all(s["colour"] is None for s in js["series"]), "sidecars without colours: every series' colour is null")
check(mb_site.family_colours(js["series"]) == dict(zip(["scudo", "glibc", "tbbmalloc"], fb)),
      f"site without colours: the fallback in family order: {mb_site.family_colours(js['series'])}")

# ---- judgements consistent with their numbers (issue 20, section 5) -------------------------------
def agrees(a):
    """An alert's shown figures support a confirmed verdict: p below the detector's ALPHA and a
    CI on one side of no change."""
    lo, hi, p = float(a["ci_lo"]), float(a["ci_hi"]), float(a["p"])
    return p < detect.ALPHA and lo * hi > 0


TC = dict(config="tcmalloc", workload="tensor_copy", metric="throughput")
# the synthetic history of the issue: 1% noise, tcmalloc +9% on three nights, then back on the last
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=16, size=0.09, until=19, **TC)], 20, "back")
mine = pick(alerts, **TC)
check(len(mine) == 1 and agrees(mine[0]), f"+9% for three nights: the alert shows the deciding p and CI "
      f"(p < {detect.ALPHA}, CI excluding 0): {[(a['status'], a['p'], a['ci_lo'], a['ci_hi']) for a in mine]}")
check(mine and mine[0]["status"] == "returning", f"...and says the latest night went back: {mine}")
s = next(s for s in js["series"] if s["id"] == mine[0]["series"]) if mine else {"latest": {}}
check(s["latest"].get("status") == "returning", f"the series' latest status shows the return: {s['latest']}")
# every alert of every planted history: a confirmed one agrees with its own numbers
for name in ("back", "recover", "gate"):
    with open(os.path.join(TMP, name + ".out", "alerts.csv"), newline="") as f:
        for a in csv.DictReader(f):
            if a["status"] == "confirmed":
                check(agrees(a), f"{name}: confirmed alert contradicts its numbers: {a}")
# a one-night blip among two slow nights: no confirmed alert over numbers that do not support it
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=20, size=-0.10, until=22, **JE),
                         dict(kind="spike", machine=0, night=24, size=0.2, **JE)], 30, "blip")
check(all(agrees(a) for a in alerts if a["status"] == "confirmed"), f"a blip: {alerts}")
# a change that goes half back (+9%, then +5% with 1% noise): weakened, its current figures beside the deciding ones
rng = random.Random(8)
vals = [1e9 * math.exp(rng.gauss(0, 0.01)) for _ in range(25)] + [1.09e9] * 2
vals += [1.05e9 * math.exp(rng.gauss(0, 0.01)) for _ in range(3)]
recs, _ = detect.replay(detect.Series(vals, "timing", "higher", aa(len(vals))))
check(len(recs) == 1 and recs[0]["state"] == "weakened" and recs[0]["p"] < detect.ALPHA
      and recs[0]["now"]["p"] >= detect.ALPHA, f"+9% then +5%: weakened: {recs}")
recs, _ = detect.replay(detect.Series(vals[:27] + [1.09e9] * 3, "timing", "higher", aa(30)))
check(len(recs) == 1 and recs[0]["state"] == "confirmed", f"+9% held: confirmed: {recs}")

# the gate stays red while a confirmed regression is unresolved; acknowledged or recovered: green
for extra in (1, 3):
    rc, alerts, js, _ = run([dict(kind="step", machine=0, night=26, size=-0.10, **JE)], 28 + extra, f"red{extra}")
    check(rc == 3, f"a regression confirmed on night 27, {extra} night(s) later unfixed: exit {rc}, expected 3")
hdir = os.path.join(TMP, "red3")
reg = pick(alerts, config="jemalloc", direction="regression")
with open(os.path.join(hdir, detect.ACK_FILE), "w") as f:
    f.write("# acknowledged regressions\n")
    f.write(f"tensor_copy jemalloc throughput {reg[0]['night'] if reg else '2026-11-27'} expected: bigger arenas\n")
rc = cli.run(detect.main, [hdir, "--out", os.path.join(TMP, "red3.ack")])
check(rc == 0, f"the regression acknowledged in {detect.ACK_FILE}: exit {rc}, expected 0")
with open(os.path.join(TMP, "red3.ack", "alerts.csv"), newline="") as f:
    acked = [a for a in csv.DictReader(f) if a["config"] == "jemalloc"]
check(acked and acked[0]["acknowledged"] == "expected: bigger arenas", f"alerts.csv names the reason: {acked}")
with open(os.path.join(hdir, detect.ACK_FILE), "a") as f:
    f.write("tensor_copy jemalloc throughput 2026-11-27\n")
check(cli.run(detect.main, [hdir, "--out", os.path.join(TMP, "red3.bad")]) == 2, "an acknowledgement without a reason: exit 2")
rc, alerts, js, _ = run([dict(kind="step", machine=0, night=20, size=-0.10, until=26, **JE)], 30, "healed")
check(rc == 0, f"a regression whose series recovered: exit {rc}, expected 0")
check(any(a["status"] == "recovered" and a["direction"] == "regression" for a in alerts),
      f"...and its alert says recovered: {[(a['night'], a['direction'], a['status']) for a in alerts]}")



# machine kinds: stable, readable, different for different hardware (never a machine's name)
meta = {"machine": {"cpu_model": "AMD EPYC 7763 64-Core Processor", "cores_online": 2, "mem_total_kib": 24683584,
                    "kernel": "6.18.44-fc", "thp_enabled": "madvise"}}
kind = machines.machine_kind(meta)
check(kind.startswith("amd-epyc-7763-2c-24g-k6-madvise-") and len(kind.rsplit("-", 1)[1]) == 6, f"machine kind {kind}")
meta2 = json.loads(json.dumps(meta))
meta2["machine"]["kernel"] = "6.19.1"
check(machines.machine_kind(meta2) == kind, "a kernel minor update keeps the machine kind")
meta2["machine"]["cores_online"] = 4
check(machines.machine_kind(meta2) != kind, "other cores: another kind")
# a machine is a boot of a host: its id is HOST-BOOT, as compare labels one host's boots
meta["machine"].update(host="vm", boot_id="686f62ab-0000-4000-8000-000000000000")
check(history.machine_id(meta) == "vm-686f62", f"the machine's id: {history.machine_id(meta)}")
meta2 = json.loads(json.dumps(meta))
meta2["machine"]["boot_id"] = "5892ce9d-0000-4000-8000-000000000000"
check(history.machine_id(meta2) == "vm-5892ce" and machines.machine_kind(meta2) == machines.machine_kind(meta),
      "two identical VMs (one image, one host name): one kind, two machines")
run_dir = os.path.join(TMP, "store")
os.makedirs(run_dir)


def put_run(run_id, boot=None):
    """small-run.{csv,meta.json,rss.csv} as run RUN_ID, its sidecar naming boot BOOT."""
    with open(os.path.join(HERE, "fixtures", "small-run.csv"), newline="") as f:
        rd = csv.DictReader(f)
        head, rows = rd.fieldnames, list(rd)
    with open(os.path.join(run_dir, "run.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=head, lineterminator="\n")
        w.writeheader()
        w.writerows(dict(r, run_id=run_id) for r in rows)
    m = mbcsv.read_meta(os.path.join(HERE, "fixtures", "small-run.csv"))
    m["run_id"] = run_id
    if boot:
        m["machine"]["boot_id"] = boot
    with open(os.path.join(run_dir, "run.meta.json"), "w") as f:
        json.dump(m, f)
    shutil.copy(os.path.join(HERE, "fixtures", "small-run.rss.csv"), os.path.join(run_dir, "run.rss.csv"))
    return m


hist_dir = os.path.join(TMP, "store-history")
put_run("r1")
check(cli.run(history.main, ["store", os.path.join(run_dir, "run.csv"), hist_dir, "2026-12-02"]) == 0, "store a run")
fid = history.machine_id(mbcsv.read_meta(os.path.join(HERE, "fixtures", "small-run.csv")))
check(fid == "vm-k61844fcv1045", f"a sidecar from before boot_id: its host and kernel {fid}")
check(all(os.path.exists(os.path.join(hist_dir, fid, "2026-12-02" + s)) for s in (".csv", ".meta.json", ".rss.csv")),
      "stored as HISTORY/<id>/NIGHT.*")
put_run("r1")
check(cli.run(history.main, ["store", os.path.join(run_dir, "run.csv"), hist_dir, "2026-12-02"]) == 2,
      "storing a night twice is refused")
check(cli.run(history.main, ["store", os.path.join(run_dir, "run.csv"), hist_dir, "2026-12-02", "--force"]) == 0, "--force")

# two identical VMs storing one night: two machines (before issue 44 the second was refused, one kind)
two = os.path.join(TMP, "two-vms")
for rid, boot in (("vm-a", "aaaaaa11-0000-4000-8000-000000000000"), ("vm-b", "bbbbbb22-0000-4000-8000-000000000000")):
    put_run(rid, boot)
    check(cli.run(history.main, ["store", os.path.join(run_dir, "run.csv"), two, "2026-12-02"]) == 0, f"{rid} stores the night")
check(sorted(os.listdir(two)) == ["vm-aaaaaa", "vm-bbbbbb"], f"a folder per machine: {sorted(os.listdir(two))}")
got = nightly.load(two)["machines"]
check(sorted(got) == ["vm/aaaaaa", "vm/bbbbbb"], f"two machines, labelled as compare labels them: {sorted(got)}")
check(len({m["kind"] for m in got.values()}) == 1, "one kind")
# ... whose series hold that night once, measured by both: their samples together (n twice one
# run's), the night's median over all of them
both = nightly.load(two)
one_run = [r for r in mbcsv.read(os.path.join(two, "vm-aaaaaa", "2026-12-02.csv"))[1] if r["status"] == "ok"]
s0 = next(s for s in both["series"] if s["metric"] == "throughput")
check(list(both["kinds"]) == [s0["machine_kind"]] and both["kinds"][s0["machine_kind"]]["machines"] ==
      {"2026-12-02": ["vm/aaaaaa", "vm/bbbbbb"]} and s0["measured_by"] == {"2026-12-02": ["vm/aaaaaa", "vm/bbbbbb"]},
      f"one kind's night, measured by both machines: {both['kinds']} {s0['measured_by']}")
mine = [r for r in one_run if (r["workload"], r["workload_params"], r["config"]) ==
        (s0["workload"], s0["params"], s0["config"]) and r["throughput"]]
check(s0["n"] == [2 * len(mine)], f"the night's n is both machines' samples: {s0['n']}, one run {len(mine)}")
# a history stored before issue 44 (a folder per machine kind) is still read: its nights and the
# nights stored since (HOST-BOOT) are one machine where one boot measured them
old = os.path.join(TMP, "old-history")
m = put_run("night1", "cccccc33-0000-4000-8000-000000000000")
os.makedirs(os.path.join(old, machines.machine_kind(m)))
for suf in (".csv", ".meta.json", ".rss.csv"):
    shutil.copy(os.path.join(run_dir, "run" + suf), os.path.join(old, machines.machine_kind(m), "2026-12-01" + suf))
put_run("night2", "cccccc33-0000-4000-8000-000000000000")
check(cli.run(history.main, ["store", os.path.join(run_dir, "run.csv"), old, "2026-12-02"]) == 0, "store beside an old folder")
got = nightly.load(old)["machines"]
check(list(got) == ["vm"] and got["vm"]["nights"] == ["2026-12-01", "2026-12-02"],
      f"the old folder's night and the new one's: one machine {[(k, v['nights']) for k, v in got.items()]}")
check(nightly.latest(old).endswith(os.path.join("vm-cccccc", "2026-12-02.csv")), f"latest: {nightly.latest(old)}")
# the same machine's night in both folders is refused, naming both files
for suf in (".csv", ".meta.json"):
    shutil.copy(os.path.join(old, machines.machine_kind(m), "2026-12-01" + suf), os.path.join(old, "vm-cccccc", "2026-12-01" + suf))
try:
    nightly.load(old)
    check(False, "a machine's night stored twice was read")
except nightly.HistoryError as e:
    check("2026-12-01 of machine vm again" in str(e), f"a machine's night stored twice: {e}")
err = io.StringIO()
with contextlib.redirect_stderr(err):
    rc = cli.run(detect.main, [os.path.join(TMP, "nothing-here"), "--out", os.path.join(TMP, "x")])
check(rc == 2 and err.getvalue().startswith("mallocbench: detect: ") and err.getvalue().count("\n") == 1,
      f"no history: exit 2, one line 'mallocbench detect: ...': {rc} {err.getvalue()!r}")

shutil.rmtree(TMP, ignore_errors=True)
if FAILS:
    print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("ok")
