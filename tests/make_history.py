#!/usr/bin/python3
"""make_history.py - a synthetic, schema-valid nightly history (docs/dashboard.md) for the
detector's tests, the site's browser test and the detector benchmark: rows built from
tests/fixtures/small-run.csv's header and a template row, sidecars from its .meta.json,
with planted changes (steps, spikes, drifts, recoveries, environment and machine-wide moves,
counts that move, counters not counted, configurations added or dropped).

    make_history.py OUTDIR [--nights 30] [--machines 2] [--seed 1] [--regress-last] [--family NAME=#RRGGBB ...]

The CLI writes OUTDIR/<machine-id>/<NIGHT>.{csv,meta.json,rss.csv} (HOST-BOOT: machine i is host
ci-i in one boot) with a few planted
changes (listed on stdout); --regress-last adds a 10% regression of jemalloc's throughput on
the last two nights of the first machine (detect.py then exits 3); --family adds a configuration
of a family of that name with that plot colour in its sidecars.  The sidecars carry each family's
colour as the fixture's sidecar gives it.  write() is the library entry the tests use."""
import argparse
import copy
import csv
import datetime
import hashlib
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
from mallocbench import machines as mbmachines
from mallocbench import mbcsv

FIXTURE = os.path.join(HERE, "fixtures", "small-run.csv")

# config, allocator, tunables (requested_tunables / sidecar environment), version
CONFIGS = [
    ("glibc", "glibc", "", "2.36"),
    ("glibc-aa", "glibc", "", "2.36"),
    ("jemalloc", "jemalloc", "", "5.3.0"),
    ("je-keep", "jemalloc", "dirty_decay_ms=-1", "5.3.0"),
    ("tcmalloc", "tcmalloc", "", "2.10"),
]
# workload, params, metric, unit, throughput of glibc
WORKLOADS = [
    ("tensor_copy", "size=16M,count=4,steps=25", "copy bandwidth", "B/s", 4.0e9),
    ("arena_churn", "threads=2,ops=150000,warmup=50000", "allocations per second", "ops/s", 2.0e7),
]
CFG_FACTOR = {"glibc": 1.0, "glibc-aa": 1.0, "jemalloc": 1.2, "je-keep": 1.25, "tcmalloc": 1.1, "mimalloc": 1.15}
# deterministic counts per configuration: madvise, munmap, brk, faults (per GiB copied)
COUNTS = {"glibc": (0, 40, 12, 4096), "glibc-aa": (0, 40, 12, 4096), "jemalloc": (30, 4, 0, 2048),
          "je-keep": (0, 4, 0, 1024), "tcmalloc": (8, 0, 0, 3000), "mimalloc": (20, 2, 0, 2500)}
MACHINES = [
    {"cpu_model": "AMD EPYC 7763 64-Core Processor", "cores_online": 2, "mem_total_kib": 24683584,
     "kernel": "6.1.0-30-amd64", "thp_enabled": "madvise", "glibc_version": "2.36"},
    {"cpu_model": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", "cores_online": 4, "mem_total_kib": 16331984,
     "kernel": "6.1.0-30-amd64", "thp_enabled": "always", "glibc_version": "2.36"},
    {"cpu_model": "AMD EPYC 9654 96-Core Processor", "cores_online": 2, "mem_total_kib": 24683584,
     "kernel": "6.1.0-30-amd64", "thp_enabled": "madvise", "glibc_version": "2.36"},
]


def template():
    """(header, one row as a dict, the fixture's meta) from tests/fixtures."""
    with open(FIXTURE, newline="") as f:
        rd = csv.reader(f)
        header = next(rd)
        row = dict(zip(header, next(rd)))
    with open(FIXTURE[:-4] + ".meta.json") as f:
        meta = json.load(f)
    return header, row, meta


def fixture_colours():
    """{family: '#RRGGBB'} as the fixture's sidecar gives them (the harness's own)."""
    return {c["allocator"]: c["colour"] for c in template()[2]["configs"] if c.get("colour")}


def night_name(i, start="2026-11-01"):
    return (datetime.date.fromisoformat(start) + datetime.timedelta(days=i)).isoformat()


def _applies(ev, machine, night, wl, config, metric):
    if ev.get("machine", machine) != machine:
        return False
    if ev.get("workload", wl) != wl or ev.get("metric", metric) != metric:
        return False
    if "config" in ev and ev["config"] != config:
        return False
    if "allocator" in ev and ev["allocator"] != dict((c[0], c[1]) for c in ev.get("_configs", CONFIGS)).get(config):
        return False
    return True


def effect(events, machine, night, wl, config, metric):
    """(multiplier, additive) of the planted events on one value."""
    mult, add = 1.0, 0.0
    for ev in events:
        if ev["kind"] in ("missing", "absent") or (ev["kind"] == "env" and not ev.get("size")):
            continue
        if not _applies(ev, machine, night, wl, config, metric):
            continue
        k, n0, size = ev["kind"], ev["night"], ev.get("size", 0.0)
        until = ev.get("until", 10 ** 9)
        if k in ("step", "env", "machine") and n0 <= night < until:
            frac = size
        elif k == "spike" and night == n0:
            frac = size
        elif k == "drift" and night >= n0:
            frac = size * min(night - n0 + 1, ev.get("length", 10 ** 9))
        else:
            continue
        if ev.get("additive"):
            add += frac
        else:
            mult *= 1 + frac
    return mult, add


def write(outdir, nights=30, machines=None, configs=None, workloads=None, events=(), noise=0.01, samples=6,
          seed=1, start="2026-11-01", counts_noise=0.0, colours=None, fresh=False):
    """Write the history; returns {machine index: its machine kind, what its series follow}.
    fresh: every night of machine i is a fresh boot of a fresh host (host ci-i-YYYYMMDD), as on an
    ephemeral CI runner: a machine a night, one kind.  noise: the sd of each night's
    level (relative, per configuration, independent); samples scatter around it at noise/2.
    events: dicts with kind step|spike|drift|machine|env|missing|absent, machine (index), night,
    and as they apply: config, allocator, workload, metric (throughput, user_cpu, sys_cpu,
    madvise, munmap, brk, faults, peak_rss), size (a fraction; with additive: calls), until
    (recovery night), length (drift nights), what/to (env: 'kernel', 'glibc' or an allocator,
    its new version), counter (missing: the counter not counted), from/until (absent: the
    configuration is out of the run outside [from, until)).  colours: {family: '#RRGGBB'} the
    sidecars give (default: the fixture sidecar's; {}: none, as sidecars before colours)."""
    header, tmpl, meta0 = template()
    colours = fixture_colours() if colours is None else colours
    machines = machines or MACHINES[:2]
    configs = configs or CONFIGS
    workloads = workloads or WORKLOADS
    rng = random.Random(seed)
    ids = {}
    events = [dict(ev, _configs=configs) for ev in events]
    for mi, mach in enumerate(machines):
        versions = {"kernel": mach["kernel"], "glibc": mach["glibc_version"]}
        versions.update({a: v for _, a, _, v in configs})
        for ni in range(nights):
            night = night_name(ni, start)
            host = f"ci-{mi}-{night.replace('-', '')}" if fresh else f"ci-{mi}"
            boot = (hashlib.sha1(host.encode()).hexdigest()[:8] if fresh else f"{mi:08x}") + "-0000-4000-8000-000000000000"
            for ev in events:
                if ev["kind"] == "env" and ev.get("machine", mi) == mi and ev["night"] == ni:
                    versions[ev["what"]] = ev["to"]
            meta = copy.deepcopy(meta0)
            meta["run_id"] = f"{night.replace('-', '')}T030000Z-{mi:04x}"
            meta["started"] = night + "T03:00:00Z"
            meta["machine"] = dict(meta["machine"], **mach)
            meta["machine"].update(host=host, kernel=versions["kernel"], glibc_version=versions["glibc"],
                                   boot_id=mach.get("boot_id", boot))
            present = [c for c in configs if _present(events, mi, ni, c[0])]
            meta["configs"] = [dict({"config": c, "allocator": a}, **({"colour": colours[a]} if a in colours else {}),
                                    lib_path="", version=versions["glibc"] if a == "glibc" else versions[a],
                                    environment=[f"MALLOC_CONF={t}"] if t else []) for c, a, t, _ in present]
            meta["limits"] = []
            d = os.path.join(outdir, mbmachines.machine_id(meta))
            os.makedirs(d, exist_ok=True)
            rows = []
            sample = 0
            for wl, params, mname, unit, base in workloads:
                for c, a, t, _ in present:
                    level = {}
                    for metric in ("throughput", "user_cpu", "sys_cpu", "peak_rss"):
                        m, ad = effect(events, mi, ni, wl, c, metric)
                        level[metric] = m * math.exp(rng.gauss(0, noise)) + ad
                    cnt = {}
                    for j, metric in enumerate(("madvise", "munmap", "brk", "faults")):
                        m, ad = effect(events, mi, ni, wl, c, metric)
                        v = COUNTS.get(c, (5, 5, 5, 2048))[j] * m + ad
                        if counts_noise:
                            v *= math.exp(rng.gauss(0, counts_noise))
                        cnt[metric] = v
                    notes = []
                    for ev in events:
                        if ev["kind"] == "missing" and ev.get("machine", mi) == mi and ev["night"] <= ni < ev.get(
                                "until", ev["night"] + 1):
                            notes.append(ev.get("counter", "madvise"))
                    for rep in range(samples):
                        r = dict(tmpl)
                        s = lambda: math.exp(rng.gauss(0, noise / 2))  # noqa: E731
                        thr = base * CFG_FACTOR.get(c, 1.0) * level["throughput"] * s()
                        r.update({
                            "run_id": meta["run_id"], "sample": str(sample), "block": str(rep), "position": "0",
                            "timestamp": night + "T03:00:00.000Z", "host": host, "workload": wl,
                            "workload_params": params, "allocator": a, "config": c, "lib_path": "",
                            "alloc_version": meta["configs"][[p[0] for p in present].index(c)]["version"],
                            "malloc_so": "", "requested_tunables": t, "effective_tunables": t,
                            "repetition": str(rep), "status": "ok", "message": "",
                            "region_wall_s": "2.000000",
                            "region_user_s": f"{1.6 / CFG_FACTOR.get(c, 1.0) * level['user_cpu'] * s():.2f}",
                            "region_sys_s": f"{0.4 * level['sys_cpu'] * s():.2f}",
                            "region_minor_faults": f"{cnt['faults']:.0f}", "region_bytes": "1073741824",
                            "region_madvise_calls": f"{cnt['madvise']:.0f}",
                            "region_munmap_calls": f"{cnt['munmap']:.0f}",
                            "region_brk_calls": f"{cnt['brk']:.0f}",
                            "throughput": f"{thr:.6g}", "throughput_unit": unit, "metric": mname,
                            "metric_better": "higher", "limit_throughput": "", "fraction_of_limit": "",
                            "rss_peak_kib": f"{65536 * level['peak_rss'] * s():.0f}",
                            "rss_final_kib": "8192", "rss_samples": "10", "counter_notes": "",
                            "checksum": "0", "workload_metrics": "", "alloc_stats": "",
                        })
                        if notes:
                            why = "not counted: tracefs not mounted"
                            for cn in notes:
                                r[f"region_{cn}_calls" if cn != "minor_faults" else "region_minor_faults"] = ""
                                r[f"total_{cn}_calls" if cn != "minor_faults" else "total_minor_faults"] = ""
                            r["counter_notes"] = "; ".join(f"{cn}: {why}" for cn in notes)
                        rows.append(r)
                        sample += 1
            _write_night(os.path.join(d, night), header, rows, meta)
        ids[mi] = mbmachines.machine_kind(meta)
    return ids


def _write_night(base_path, header, rows, meta):
    """One stored night: BASE.csv (placed whole), its .meta.json and .rss.csv."""
    with open(base_path + ".csv.tmp", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow([r[h] for h in header])
    os.replace(base_path + ".csv.tmp", base_path + ".csv")
    with open(base_path + ".meta.json", "w") as f:
        json.dump(meta, f, indent=2)
    with open(base_path + ".rss.csv", "w") as f:
        f.write("run_id,sample,t_s,rss_kib\n")
        f.write(f"{meta['run_id']},0,0.0200,8192\n")


def _present(events, mi, ni, config):
    for ev in events:
        if ev["kind"] == "absent" and ev.get("machine", mi) == mi and ev["config"] == config:
            if not (ev.get("from", 0) <= ni < ev.get("until", 10 ** 9)):
                return False
    return True


def planted(nights, n_machines, regress_last=False):
    """The changes the CLI plants, scaled to the number of nights."""
    a, b, c = max(3, nights // 3), max(4, nights // 2), max(5, (2 * nights) // 3)
    ev = [
        {"kind": "step", "machine": 0, "config": "jemalloc", "workload": "tensor_copy", "metric": "throughput",
         "night": a, "size": -0.08},
        {"kind": "spike", "machine": 0, "config": "tcmalloc", "workload": "arena_churn", "metric": "throughput",
         "night": b, "size": 0.25},
        {"kind": "step", "machine": 0, "config": "tcmalloc", "workload": "tensor_copy", "metric": "madvise",
         "night": b, "size": 1, "additive": True},
        {"kind": "missing", "machine": 0, "night": c, "counter": "madvise"},
        {"kind": "absent", "machine": 0, "config": "je-keep", "from": a},
    ]
    if n_machines > 1:
        ev += [
            {"kind": "env", "machine": 1, "night": b, "what": "kernel", "to": "6.1.0-31-amd64", "size": 0.06,
             "metric": "throughput"},
            {"kind": "env", "machine": 1, "night": c, "what": "jemalloc", "to": "5.3.1", "allocator": "jemalloc",
             "size": 0.07, "metric": "throughput"},
        ]
    if regress_last:
        ev.append({"kind": "step", "machine": 0, "config": "jemalloc", "workload": "arena_churn",
                   "metric": "throughput", "night": nights - 2, "size": -0.10})
    return ev


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--nights", type=int, default=30)
    ap.add_argument("--machines", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--samples", type=int, default=6)
    ap.add_argument("--regress-last", action="store_true",
                    help="a confirmed 10%% regression on the last two nights (detect.py exits 3)")
    ap.add_argument("--family", action="append", default=[], metavar="NAME=#RRGGBB",
                    help="add a configuration of family NAME whose sidecar colour is #RRGGBB (repeatable)")
    args = ap.parse_args(argv)
    if args.nights < 6 or not 1 <= args.machines <= len(MACHINES):
        print(f"make_history.py: --nights >= 6 and --machines 1..{len(MACHINES)}", file=sys.stderr)
        return 2
    configs, colours = list(CONFIGS), fixture_colours()
    for fam in args.family:
        name, _, colour = fam.partition("=")
        if not name or name in {c[0] for c in configs} or not mbcsv.valid_colour(colour):
            print(f"make_history.py: --family '{fam}': not NAME=#RRGGBB with a new NAME", file=sys.stderr)
            return 2
        configs.append((name, name, "", "1.0"))
        colours[name] = colour
    ev = planted(args.nights, args.machines, args.regress_last)
    ids = write(args.outdir, args.nights, MACHINES[:args.machines], configs=configs, events=ev, seed=args.seed,
                samples=args.samples, colours=colours)
    for e in ev:
        print(f"planted on {ids[e.get('machine', 0)]}: " + ", ".join(f"{k}={v}" for k, v in e.items() if k != "machine"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
