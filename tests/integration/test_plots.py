#!/usr/bin/python3
"""test_plots.py - scripts/plots.py on a real small run.

Usage: test_plots.py FIXTURE.csv (tests/fixtures/small-run.csv, with its
.meta.json and .rss.csv).  Draws every plot into a temporary directory and
checks the manifest, the files, the refusal of other schemas, determinism,
the family colours (the sidecar's, else the fixed fallback; on
tests/fixtures/new-families.csv too, whose families no script names), and the
figures the plots are computed from; and report.py with plots, as a user runs it (its shebang),
whose figures are the second run of the determinism check, linked from its report.  Exit 77 =
skip (no matplotlib).
"""
import csv
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SKIP = 77
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(HERE, "..", "scripts", "plots.py")
REPORT = os.path.join(HERE, "..", "scripts", "report.py")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


from mbtest import FAILS, check, check_eq  # noqa: E402


def check_near(got, want, tol, what):
    check(got is not None and abs(got - want) <= tol, f"{what}: got {got!r}, expected {want} ± {tol}")


def load_module():
    """plots' helpers (plotkit: the data and styles; plotfigs: what its figures compute), the
    drawing library loaded as plots loads it."""
    from mallocbench import plotfigs, plotkit, plots
    plots.use_file_backend()
    return plotkit, plotfigs


def run_cli(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=600)


def write_variant(src, dst, edit):
    """A copy of a CSV with edit(row) applied to every row."""
    with open(src, newline="") as f:
        reader = csv.DictReader(f)
        fields, rows = reader.fieldnames, list(reader)
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        for r in rows:
            edit(r)
            w.writerow(r)


def data_setting(kit, label):
    """What the plots print as a configuration's setting, from its columns (mbdata.setting_text)."""
    family, _, tun = label.partition("[")
    cfg = kit.mbdata.Config(label, family, tun.rstrip("]"), "" if family == "glibc" else f"/usr/lib/lib{family}.so")
    return kit.mbdata.setting_text(cfg)


def test_pure(kit, figs):
    """The parsers and the statistics on their own."""
    check_eq(kit.parse_size("256K"), 256 << 10, "parse_size 256K")
    check_eq(kit.parse_size("16M"), 16 << 20, "parse_size 16M")
    check_eq(kit.parse_size("4096"), 4096, "parse_size 4096")
    for bad in ("1M/4M", "64K..4M", "@shapes.txt", "", "M", "16Q", "1.5M"):
        check_eq(kit.parse_size(bad), None, f"parse_size {bad!r}")
    check_eq(kit.format_size(32 << 20), "32M", "format_size 32M")
    check_eq(kit.parse_params("size=16M,count=2"), [("size", "16M"), ("count", "2")], "parse_params")
    check_eq(kit.parse_metrics("a=1;b=x"), {"a": "1", "b": "x"}, "parse_metrics")
    check_eq(data_setting(kit, "jemalloc[dirty_decay_ms=-1]"), "dirty_decay_ms=-1", "setting of a tuned config")
    check_eq(data_setting(kit, "tcmalloc"), "defaults", "setting of a config with its defaults")
    check_eq(kit.num({"x": ""}, "x"), None, "an empty cell is not 0")
    check_eq(kit.num({"x": "0"}, "x"), 0.0, "a 0 cell is 0")
    med, lo, hi, how = kit.median_ci([3.0, 1.0, 2.0])
    check_eq((med, lo, hi, how), (2.0, 1.0, 3.0, "minmax"), "median_ci below 6 samples: min..max")
    med, lo, hi, how = kit.median_ci([float(v) for v in range(1, 21)])
    check_eq((med, lo, hi, how), (10.5, 6.0, 15.0, "ci95"), "median_ci of 1..20: exact binomial ranks 6 and 15")
    front = figs.pareto_frontier([(1, 5, "a"), (2, 3, "b"), (3, 4, "c"), (4, 1, "d")])
    check_eq([p[2] for p in front], ["a", "b", "d"], "pareto_frontier drops the dominated point")
    check_eq(figs.cliff_text([(1, 0.0, 1), (2, 250.0, 1), (4, 256.0, 1)]), "from 2", "cliff_text")
    check_eq(figs.cliff_text([(1, 0.0, 1), (2, 1.0, 1)]), None, "cliff_text without a cliff")


def test_data(kit, figs, fixture, tmp):
    """What the plots are drawn from, computed on the fixture."""
    data = kit.load([fixture])
    check_eq(kit.FAMILIES, ["glibc", "jemalloc", "tcmalloc", "mimalloc"], "family order")
    check_eq(data.configs, ["glibc", "jemalloc", "jemalloc[dirty_decay_ms=-1]", "tcmalloc", "mimalloc"],
             "configs ordered by family, then label")
    series = figs.fault_cliff_series(data)
    check_eq(len(series), 1, "one size sweep in the fixture")
    fam = next(iter(series), None)
    check(fam is not None and fam[0] == "tensor_copy", f"the sweep is tensor_copy: {fam}")
    if fam:
        je = {s: m for s, m, _ in series[fam].get("jemalloc", [])}
        check_eq(sorted(je), [256 << 10, 4 << 20, 16 << 20, 32 << 20], "jemalloc sweep sizes")
        check_near(je.get(16 << 20), 256.0, 2.0, "jemalloc defaults faults/MiB at 16M (every page again)")
        check_near(je.get(4 << 20), 0.0, 1.0, "jemalloc defaults faults/MiB at 4M (pages kept)")
        tuned = {s: m for s, m, _ in series[fam].get("jemalloc[dirty_decay_ms=-1]", [])}
        check_near(tuned.get(16 << 20), 0.0, 1.0, "jemalloc dirty_decay_ms=-1 faults/MiB at 16M")
        check_eq(figs.cliff_text(series[fam]["jemalloc"]), "from 16M", "jemalloc's cliff")
        check_eq(figs.cliff_text(series[fam]["glibc"]), "from 256K", "glibc's cliff")
        check_eq(figs.cliff_text(series[fam]["tcmalloc"]), None, "tcmalloc keeps its pages")
    idle = next(g for g in data.group_order if g[0] == "idle_release")
    kept = {c: rss for _, rss, c, _ in figs.rss_vs_cpu_points(data, idle, "kept")}
    check(kept.get("glibc", 1e9) < kept.get("jemalloc", 0) / 2,
          f"idle_release: glibc keeps less than half of jemalloc's RSS: {kept}")

    # an empty (not measured) cell is left out, never taken as 0; not-ok rows are not plotted
    variant = os.path.join(tmp, "variant.csv")
    first = {}

    def edit(r):
        if r["workload"] == "tensor_copy" and r["config"] == "jemalloc" and r["workload_params"].startswith(
                "size=16M"):
            if not first:
                first["sample"] = r["sample"]
                r["region_minor_faults"] = ""
            else:
                r["status"], r["message"] = "crashed", "signal 11"
    write_variant(fixture, variant, edit)
    data = kit.load([variant])
    fam = next(iter(figs.fault_cliff_series(data)), None)
    je = {s: (m, n) for s, m, n in figs.fault_cliff_series(data)[fam]["jemalloc"]} if fam else {}
    check(16 << 20 not in je, f"16M jemalloc: one empty cell and one crashed row give no point: {je}")
    g16 = next(g for g in data.group_order if g[0] == "tensor_copy" and g[1].startswith("size=16M"))
    check_eq(len(data.groups[g16]["jemalloc"]), 1, "the crashed row is not among the plotted rows")
    check_eq(len(data.not_ok.get(g16, [])), 1, "the crashed row is counted as left out")


def copy_run(fixture, dst, edit_meta=None):
    """The fixture CSV copied to dst with its .meta.json (through edit_meta(meta) when given;
    edit_meta None and no sidecar wanted: pass edit_meta=False)."""
    shutil.copyfile(fixture, dst)
    if edit_meta is False:
        return dst
    with open(fixture[:-4] + ".meta.json") as f:
        meta = json.load(f)
    if edit_meta:
        edit_meta(meta)
    with open(dst[:-4] + ".meta.json", "w") as f:
        json.dump(meta, f)
    return dst


def test_colours(kit, fixture, tmp):
    """One colour per family from the run's sidecar, never from a table of names; a fixed
    fallback where the sidecar has none (old sidecars, no sidecar)."""
    mbcsv = kit.mbcsv
    fb = mbcsv.FALLBACK_COLOURS
    check_eq(mbcsv.assign_colours(["a", "b", "a"], {}), {"a": fb[0], "b": fb[1]}, "fallback in family order")
    check_eq(mbcsv.assign_colours(["a", "b"], {"b": fb[0].lower()}), {"a": fb[1], "b": fb[0]},
             "a sidecar's colour is kept (upper-cased) and not given to another family")
    for bad in ("red", "#12345", "#1234567", "#12345G", "url(x)", 7, None):
        check_eq(mbcsv.assign_colours(["a"], {"a": bad}), {"a": fb[0]}, f"colour {bad!r} is taken as none")
    many = mbcsv.assign_colours([f"f{i}" for i in range(len(fb) + 1)], {})
    check_eq(many[f"f{len(fb)}"], fb[0], "more families than colours: the palette cycles")

    # the fixture's sidecar carries the harness's colours
    data = kit.load([fixture])
    check_eq(data.colours, {"glibc": "#0072B2", "jemalloc": "#D55E00", "tcmalloc": "#009E73", "mimalloc": "#CC79A7"},
             "small-run: the sidecar's colours")
    base, tuned = data.style["jemalloc"], data.style["jemalloc[dirty_decay_ms=-1]"]
    check(base["colour"] == "#D55E00" and tuned["colour"] != base["colour"] and tuned["hatch"] != base["hatch"],
          f"a variant is a shade and a hatch of its family's colour: {base} {tuned}")

    # an old sidecar without colours, and no sidecar at all: the fallback, the same every time
    old = copy_run(fixture, os.path.join(tmp, "old-sidecar.csv"),
                   lambda m: [c.pop("colour", None) for c in m["configs"]])
    data = kit.load([old])
    check_eq(data.colours, dict(zip(["glibc", "jemalloc", "tcmalloc", "mimalloc"], fb)),
             "a sidecar without colours: the fallback in the sidecar's family order")
    bare = copy_run(fixture, os.path.join(tmp, "no-sidecar.csv"), False)
    first, again = kit.load([bare]).colours, kit.load([bare]).colours
    check(first == again and sorted(first.values()) == sorted(fb[:4]),
          f"no sidecar: four distinct fallback colours, the same twice: {first} {again}")

    # families no script names (scudo listed first, tbbmalloc), coloured by their sidecar
    nf = os.path.join(os.path.dirname(fixture), "new-families.csv")
    want = {"scudo": "#E69F00", "glibc": "#0072B2", "tbbmalloc": "#56B4E9"}
    data = kit.load([nf])
    check_eq(data.colours, want, "new families: the sidecar's colours")
    check_eq({c: data.style[c]["colour"] for c in data.configs}, want, "new families: the configs' colours")
    nocol = copy_run(nf, os.path.join(tmp, "new-families.csv"), lambda m: [c.pop("colour") for c in m["configs"]])
    check_eq(kit.load([nocol]).colours, dict(zip(["scudo", "glibc", "tbbmalloc"], fb)),
             "new families without sidecar colours: the fallback (so the colours above came from the sidecar)")
    out = os.path.join(tmp, "new-families")
    p = run_cli(nf, "-o", out)
    check_eq(p.returncode, 0, f"kit.py on new families (stderr: {p.stderr.strip()[-300:]})")
    svg = os.path.join(out, "bars_arena_churn.svg")
    text = open(svg).read().lower() if os.path.exists(svg) else ""
    for fam, col in want.items():
        check(f"fill: {col.lower()}" in text, f"{svg}: {fam}'s bars in {col}")


def test_cli(fixture, tmp):
    out1, out2 = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    p = run_cli(fixture, "-o", out1)
    check_eq(p.returncode, 0, f"plots.py exit status (stderr: {p.stderr.strip()})")
    manifest_path = os.path.join(out1, "plots.json")
    if not os.path.exists(manifest_path):
        check(False, "plots.json written")
        return
    printed = p.stdout.split()
    check(manifest_path in printed, "the manifest path is printed")
    with open(manifest_path) as f:
        manifest = json.load(f)
    names = [e.get("name") for e in manifest]
    print("plots:", ", ".join(names))
    for wl in ("tensor_copy", "arena_churn", "idle_release"):
        check(any(n.startswith("bars_" + wl) for n in names), f"a bar figure for {wl} in {names}")
    check("bars_tensor_copy_size-16M" in names, f"bars per sweep point: {names}")
    tail = [n for n in names if not n.startswith("bars_")]
    check_eq(tail, ["fault_cliff", "rss_vs_cpu", "rss_timeline", "latency"], "the other plots, in order")
    check(names.index("fault_cliff") > max(i for i, n in enumerate(names) if n.startswith("bars_")),
          "bars come first")
    for e in manifest:
        check_eq(sorted(e), ["better", "caption", "name", "png", "svg", "title"], f"{e.get('name')}: keys")
        check(e.get("better") in ("higher", "lower", None), f"{e.get('name')}: better is {e.get('better')!r}")
        check("better" in e.get("title", ""), f"{e.get('name')}: title says what is better: {e.get('title')}")
        check(len(e.get("caption", "")) > 40, f"{e.get('name')}: a caption")
        png = os.path.join(out1, e.get("png", ""))
        svg = os.path.join(out1, e.get("svg", ""))
        check(png in printed and svg in printed, f"{e.get('name')}: both files printed")
        if not os.path.isfile(png) or not os.path.isfile(svg):
            check(False, f"{e.get('name')}: {png} and {svg} exist")
            continue
        with open(png, "rb") as f:
            head = f.read(8)
        check_eq(head, PNG_SIGNATURE, f"{png}: PNG signature")
        check(os.path.getsize(png) > 5000, f"{png}: {os.path.getsize(png)} bytes, expected > 5 KB")
        try:
            root = ET.parse(svg).getroot()
            check(root.tag.endswith("svg"), f"{svg}: root element {root.tag}")
        except ET.ParseError as err:
            check(False, f"{svg}: not XML: {err}")
    cliff = next((e for e in manifest if e["name"] == "fault_cliff"), {})
    check("jemalloc from 16M" in cliff.get("caption", ""), f"fault_cliff caption names jemalloc's cliff: "
          f"{cliff.get('caption')}")

    # deterministic: the same manifest, and the same bytes, a second time, from another process:
    # report.py run as a user runs it (its shebang), which draws these plots beside its report
    # (the report with plots is checked here, not in test_report.py: a drawing fewer, 10-13 s)
    p = subprocess.run([REPORT, fixture, "-o", out2], capture_output=True, text=True, timeout=600)
    check_eq(p.returncode, 0, f"report.py with plots: exit status (stderr: {p.stderr.strip()[-300:]!r})")
    with open(os.path.join(out2, "plots.json")) as f:
        check_eq(json.load(f), manifest, "the manifest of a second run")
    for e in manifest:
        for key in ("png", "svg"):
            with open(os.path.join(out1, e[key]), "rb") as a, open(os.path.join(out2, e[key]), "rb") as b:
                check(a.read() == b.read(), f"{e[key]}: the same bytes on a second run")
    report = os.path.join(out2, "report.md")
    text = open(report, encoding="utf-8").read() if os.path.exists(report) else ""
    for needle in ("# mallocbench report", "## What this shows", "## Summary", "## Plots",
                   "## Statistics against the baseline", "jemalloc re-faults from 16M"):
        check(needle in text, f"report with plots: {needle!r} in report.md")
    for e in manifest:
        check(f"]({e['png']})" in text, f"report with plots: {e['png']} linked in report.md")
    table = os.path.join(out2, "compare.csv")
    check(os.path.exists(table) and os.path.getsize(table) > 0, "report with plots: compare.csv written")

    # --help names the schema the harness writes (mbcsv.SCHEMA), not a number of its own
    from mallocbench import mbcsv
    p = run_cli("--help")
    check(p.returncode == 0 and f"(schema {mbcsv.SCHEMA})" in p.stdout,
          f"--help names schema {mbcsv.SCHEMA}: {p.stdout[:300]!r}")

    # other schemas are refused in one line, exit 2 (bad input, scripts/mallocbench/mbcsv.py)
    old = os.path.join(tmp, "old.csv")
    write_variant(fixture, old, lambda r: r.update(schema_version="2"))
    p = run_cli(old, "-o", os.path.join(tmp, "c"))
    check_eq(p.returncode, 2, "a schema_version 2 CSV: exit status")
    check("schema_version 2" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
          f"a schema_version 2 CSV: one line naming the version: {p.stderr!r}")
    check(not os.path.exists(os.path.join(tmp, "c", "plots.json")), "nothing written for a refused CSV")
    bare = os.path.join(tmp, "bare.csv")
    with open(bare, "w") as f:
        f.write("workload,config\ntensor_copy,glibc\n")
    p = run_cli(bare, "-o", os.path.join(tmp, "d"))
    check_eq(p.returncode, 2, "a CSV without schema_version: exit status")
    check("schema_version" in p.stderr, f"a CSV without schema_version: the message: {p.stderr!r}")
    p = run_cli(os.path.join(tmp, "missing.csv"), "-o", os.path.join(tmp, "e"))
    check_eq(p.returncode, 2, "a missing CSV: exit status")
    check("cannot read" in p.stderr, f"a missing CSV: the message: {p.stderr!r}")


def main():
    if len(sys.argv) != 2:
        print("usage: test_plots.py FIXTURE.csv", file=sys.stderr)
        return 2
    if importlib.util.find_spec("matplotlib") is None or importlib.util.find_spec("numpy") is None:
        print("skip: matplotlib or numpy missing (use /usr/bin/python3 with python3-matplotlib)")
        return SKIP
    fixture = os.path.abspath(sys.argv[1])
    kit, figs = load_module()
    tmp = tempfile.mkdtemp(prefix="test_plots.")
    try:
        test_pure(kit, figs)
        test_data(kit, figs, fixture, tmp)
        test_colours(kit, fixture, tmp)
        test_cli(fixture, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
