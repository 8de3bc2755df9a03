#!/usr/bin/env python3
"""test_one_answer.py - one answer in every view (issue 31): each CSV given is rendered through
every view that shows a configuration against its baseline, and the test fails when any two
disagree on a pair's ratio, its unit or its verdict word.

The reference is `compare --json` (the records of change.analyse).  Against it:
the Python API (mallocbench.compare: the same records), compare's text table, its --csv-out,
summary (text and Markdown: the vs column), report (Markdown: the summary table, the statistics
table and the "Best:" sentences; --json: its summary and comparison; --html), the dashboard's
nightly ratio (nightly.load over the CSV stored as one night), tune's wording of a pair
(tunereport.change_text over the same blocks), and the units of CPU, faults and calls (compare's
`/MiB` is summary's `faults/MiB` and report's `unit_of_work`).  A frameworks CSV (FW=path)
also checks the frameworks report's table.

Every change carries its unit (issue 42): a ratio ends in 'x', a difference (a change that is not
a ratio) is signed, '+' or '-' (or '0→' from zero), with its metric's unit ('-98.2 pp' for a share,
'+5.00 ms/sample'), and `change_unit` in the JSON names the unit of its numbers; every resolution
('±9.6%', '±0.05 pp') and every other view (summary, report, tune) writes the same text.  Each run
given as SPREAD=path is also checked as 8 blocks (its blocks repeated, each figure scaled by
1 + block/100), so that its differences get a CI and a resolution.

Usage: test_one_answer.py RUN.csv [RUN.csv ...] [SPREAD=RUN.csv] [FW=frameworks.csv]; a fresh
`make compare`: test_one_answer.py results/compare-*/run.csv.  Exit 77 without scipy."""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import scipy  # noqa: F401
except ImportError:
    print("SKIP: no scipy here (apt-get install python3-scipy; run /usr/bin/python3)")
    sys.exit(77)

import mallocbench
from mallocbench import dashboard, mbdata, nightly, tunereport
from mallocbench import words as mbwords
from mbtest import FAILS, check, entry

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(HERE, "..", "scripts")


def script(name, *args):
    """What `scripts/NAME ARGS` prints, its entry run in this process (mbtest.entry)."""
    rc, out, err = entry(os.path.join(SCRIPTS, name), *args)
    check(rc == 0, f"{name} {' '.join(args)}: exit {rc}: {err[-400:]!r}")
    return out


def words(cell):
    """A record as the tables word it (words.change_words): where the run stopped the pair on this
    figure, when first ('settled at block 8: 0.720x regressed')."""
    if cell["method"] == "ratio of medians (unpaired: fewer than 2 pairs)":
        return f"{cell['text']} unpaired"
    said = f"{cell['text']} {cell['verdict']}" if cell["verdict"] not in ("-", "") else cell["text"]
    seq = cell.get("sequential")
    return f"{seq['words']}: {said}" if seq and seq["controlled"] else said


def primary_rows(text):
    """{workload title: [row lines]} of compare's first table (the primary figures)."""
    out, cur = {}, None
    for line in text.split("\n")[text.split("\n").index("primary figure of each workload") + 1:]:
        if not line.strip():
            break
        if line.startswith("  "):
            if cur is not None:
                out[cur].append(line)
        else:
            cur = line
            out.setdefault(cur, [])
    return out


# a difference as every view writes it: signed (or from zero) and a unit after the number
DIFF_TEXT = re.compile(r"(0→[0-9.]+|[+-][0-9.]+|0) ?(?P<unit>[^0-9\s.+-][^\s]*|\(no unit\))$")
# a resolution: '±' a number, then a unit ('%', ' pp', ' ms/sample', '/run')
RESOLUTION = re.compile(r"±([0-9.]+)(?P<unit>%| ?[^\s,0-9.][^\s,]*)?")


def check_units(name, cells, texts):
    """Every change carries its unit; every resolution in texts ({view: text}) too."""
    for c in cells:
        if c["kind"] == "ratio":
            check(c["text"].endswith("x") and c["change_unit"] == "ratio",
                  f"{name}: a ratio is written 'Nx', change_unit ratio: {c['text']!r} {c.get('change_unit')!r}")
        elif c["kind"] == "diff":
            m = DIFF_TEXT.match(c["text"])
            check(m is not None and c["change_unit"] == c["unit"],
                  f"{name}: {c['config']} {c['workload']} {c['figure']}: a difference is signed and carries "
                  f"its unit ({c['unit']!r}): {c['text']!r}, change_unit {c.get('change_unit')!r}")
            if m and c["unit"] == "fraction":
                check(m.group("unit") == "pp", f"{name}: a share's difference in percentage points: {c['text']!r}")
    for view, text in texts.items():
        for line in text.split("\n"):
            if "resolution" not in line:
                continue
            for m in RESOLUTION.finditer(line):
                check(m.group("unit"), f"{name}: {view}: a resolution without its unit: {m.group(0)!r} in {line!r}")


def spread_copy(path, tmp, blocks=8):
    """path's run as `blocks` blocks: its blocks repeated, each figure scaled by 1 + block/100
    (so a difference is not the same in every block and gets a CI), with its sidecar."""
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        fields, rs = rd.fieldnames, list(rd)
    have = sorted({int(r["block"]) for r in rs})
    out = os.path.join(tmp, "spread-" + os.path.basename(path))
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        n = 0
        for b in range(blocks):
            for r in rs:
                if int(r["block"]) != have[b % len(have)]:
                    continue
                r = dict(r, block=str(b), sample=str(n))
                if r["throughput"]:
                    r["throughput"] = f"{float(r['throughput']) * (1 + b / 100):.6g}"
                w.writerow(r)
                n += 1
    meta = mbdata.sidecar(path, ".meta.json")
    if os.path.exists(meta):
        shutil.copy(meta, mbdata.sidecar(out, ".meta.json"))
    return out


def check_kind_series(name, c, mine):
    """The series (one per machine kind) of compare's cell c, stored as one night measured by
    several machines: one machine's series holds compare's answer on it, a kind of all of them
    compare's answer over them."""
    per = {m["machine"]: m["estimate"] for m in c.get("machines", [])}
    check(per and mine and sorted(m for x in mine for m in x["measured_by"]["2026-01-01"]) == sorted(per),
          f"{name}: the kinds' series of {c['config']} hold every machine compare names: {sorted(per)}")
    for x in mine:
        ms = x["measured_by"]["2026-01-01"]
        want = per.get(ms[0]) if len(ms) == 1 else c["estimate"] if set(ms) == set(per) else None
        check(want is not None and abs(x["ratio"][-1] / want - 1) < 1e-9,
              f"{name}: the dashboard's ratio of {c['config']} on {ms} is compare's {want}: {x['ratio'][-1]}")


def check_run(path, tmp):
    name = os.path.basename(path)
    ref = json.loads(script("compare.py", path, "--json"))
    cells = [c for c in ref["cells"] if not c["geomean"]]
    prim = [c for c in cells if c["primary"]]
    check(prim, f"{name}: compare --json has primary cells")

    # the API: the same records
    api = mallocbench.compare(path)
    check(api["cells"] == ref["cells"], f"{name}: mallocbench.compare() gives compare --json's records")

    text = check_compare_views(name, path, tmp, cells, prim)
    stext = check_summary(name, path, ref["baseline"], cells, prim)
    rmd, rjs = check_report(name, path, ref, cells, prim)
    # every change and resolution with its unit, in every view that writes one
    check_units(name, cells, {"compare": text, "summary": stext, "report": rmd,
                              "compare --json notes": "\n".join(ref["notes"])})
    for c in prim:
        line = next((s for s in rjs["summary"] if (s["workload"], s["params"], s["config"]) ==
                     (c["workload"], c["params"], c["config"])), None)
        check(line is None or line["change"]["unit"] == c["change_unit"],
              f"{name}: report --json's change has compare's unit: {line and line['change']}")

    check_dashboard_ratio(name, path, tmp, prim)
    check_tune_words(name, path, ref["baseline"], prim)
    return {"ref": ref, "compare": text, "summary": stext, "report": rjs}


def check_compare_views(name, path, tmp, cells, prim):
    """compare's own table and --csv-out hold its --json cells; returns the table's text."""
    text = script("compare.py", path)
    tables = primary_rows(text)
    for c in prim:
        rows = [l for t, ls in tables.items() if t.startswith(mbdata.workload_title(c["workload"], c["params"]) + ":")
                for l in ls]
        hit = [r for r in rows if r.split()[:1] == [c["config"]] and f" {c['text']} " in r
               and f" {c['verdict']} " in r + " "]
        check(hit, f"{name}: compare's table shows {c['config']} on {c['workload']} as {c['text']} {c['verdict']}")
    out = os.path.join(tmp, name + ".cells.csv")
    script("compare.py", path, "--csv-out", out)
    with open(out, newline="") as f:
        got = {(r["workload"], r["workload_params"], r["config"], r["metric"]): r for r in csv.DictReader(f)}
    for c in cells:
        r = got.get((c["workload"], c["params"], c["config"], c["metric"] if c["metric"] != "throughput"
                     else "throughput"))
        if r is None:  # the CSV names tables as compare does: the registry's display name
            r = next((x for k, x in got.items() if k[:3] == (c["workload"], c["params"], c["config"])
                      and x["figure"] == c["figure"]), None)
        check(r is not None and r["verdict"] == c["verdict"] and
              (c["estimate"] is None or abs(float(r["estimate"]) / c["estimate"] - 1) < 1e-5
               if c["estimate"] else True),
              f"{name}: --csv-out agrees on {c['config']} {c['workload']} {c['figure']}: {r and r['verdict']}")

    return text


def check_summary(name, path, base, cells, prim):
    """summary, text and Markdown: the vs column is compare's words; returns the text table."""
    for md in (False, True):
        stext = script("summary.py", path, *(["--markdown"] if md else []))
        for c in prim:
            want = words(c)
            lines = [l for l in stext.split("\n") if (l.startswith(f"| {mbdata.md_text(c['config'])} |") if md
                                                       else l.split()[:1] == [c["config"]])]
            check(any(want in l for l in lines),
                  f"{name}: summary{' --markdown' if md else ''} shows {c['config']} vs {base} as {want!r}: {lines}")
        # one unit: compare's faults per MiB is summary's faults/MiB
        for c in cells:
            if c["metric"] == "faults" and c["unit"] == "/MiB":
                check("faults/MiB" in stext, f"{name}: faults per MiB in compare, faults/MiB in summary")

    return stext


def check_report(name, path, ref, cells, prim):
    """report's Markdown, JSON and HTML say compare's words; returns (Markdown, JSON)."""
    rmd = script("report.py", path)
    rjs = json.loads(script("report.py", path, "--json"))
    rhtml = script("report.py", path, "--html")
    check(rjs["comparison"]["cells"] == ref["cells"], f"{name}: report --json's comparison is compare --json's")
    first = rmd.split("## What this shows")[0]
    check("resolution reached" in first, f"{name}: the report's first lines state the resolution reached")
    for c in prim:
        want = words(c)
        check(f"| {mbdata.md_text(want)} |" in rmd, f"{name}: report.md's summary table shows {want!r}")
        check(want in rhtml, f"{name}: report.html shows {want!r}")
        line = next((s for s in rjs["summary"] if (s["workload"], s["params"], s["config"]) ==
                     (c["workload"], c["params"], c["config"])), None)
        check(line is not None and line["change"]["verdict"] == c["verdict"] and
              line["change"]["estimate"] == c["estimate"] and line["text"]["vs"] == want,
              f"{name}: report --json's summary agrees with compare on {c['config']} {c['workload']}")
        faults = next((x for x in cells if x["metric"] == "faults" and
                       (x["workload"], x["params"], x["config"]) == (c["workload"], c["params"], c["config"])), None)
        check(line is None or faults is None or faults["unit"] == f"/{line['unit_of_work']}",
              f"{name}: one unit of work for {c['workload']}: compare {faults and faults['unit']}, "
              f"report {line and line['unit_of_work']}")
    for s_ in rjs["what_this_shows"]:
        text = s_["text"]
        if "Best: " in text:
            best = text.split("Best: ", 1)[1].split(",", 1)[0]
            wl_cells = [c for c in prim if c["config"] == best
                        and mbdata.workload_title(c["workload"], c["params"]) == s_["title"]]
            check(any(f"{best}, {words(c)} against" in text for c in wl_cells),
                  f"{name}: report's sentence '{text[text.index('Best: '):][:80]}' is compare's words")

    return rmd, rjs


def check_dashboard_ratio(name, path, tmp, prim):
    """The dashboard's nightly ratio: compare's estimate, written as compare writes it."""
    hist = os.path.join(tmp, "history")
    shutil.rmtree(hist, ignore_errors=True)
    night = os.path.join(tmp, "night.csv")
    shutil.copy(path, night)
    meta = mbdata.sidecar(path, ".meta.json")
    if os.path.exists(meta):
        shutil.copy(meta, mbdata.sidecar(night, ".meta.json"))
        subprocess.run([sys.executable, os.path.join(SCRIPTS, "history.py"), "store", night, hist, "2026-01-01"],
                       check=True, capture_output=True)
        doc = nightly.load(hist)
        series, fleet = doc["series"], {(f["workload"], f["params"], f["config"]): f for f in doc["fleet"]}
        shown = []
        for c in prim:
            if c["kind"] != "ratio":
                continue
            key = (c["workload"], c["params"], c["config"])
            if len(doc["machines"]) > 1:
                # a night measured on several machines (merged shards) is a night of each, as
                # compare names them; a series follows a machine kind, its night over the kind's
                # machines: one machine's series holds compare's answer on it, a kind of all of
                # them compare's answer over them; the fleet view pools the machines as compare
                # does (change.fleet)
                check_kind_series(name, c, [x for x in series if (x["workload"], x["params"], x["config"],
                                                                 x["metric"]) == key + ("throughput",)])
                pooled = (fleet.get(key) or {}).get("pooled", [None])[-1]
                want = (c.get("pooled") or {}).get("estimate")
                check(want is None and pooled is None or want and pooled and abs(pooled / want - 1) < 1e-9,
                      f"{name}: the dashboard's pooled ratio of {c['config']} is compare's {want}: {pooled}")
                if pooled is not None:
                    shown.append((c["text"], json.loads(dashboard.dump({"ratio": [pooled]}))["ratio"][0]))
                continue
            s = next((x for x in series if (x["workload"], x["params"], x["config"], x["metric"]) ==
                      key + (c["metric"],)), None)
            check(s is not None and abs(s["ratio"][-1] / c["estimate"] - 1) < 1e-9,
                  f"{name}: the dashboard's ratio of {c['config']} on {c['workload']} is compare's "
                  f"{c['estimate']}: {s and s['ratio'][-1]}")
            if s is not None:  # as data.js holds it (dashboard.dump), as the page reads it
                shown.append((c["text"], json.loads(dashboard.dump({"ratio": [s["ratio"][-1]]}))["ratio"][0]))
        # and the dashboard writes it as compare does (site/ratio.js, run by node where there is one)
        node = shutil.which("node") or shutil.which("nodejs")
        if node and shown:
            js = ("global.window = {}; require(process.argv[1]); console.log(JSON.stringify("
                  "process.argv.slice(2).map(function (v) { return window.MB_RATIO.value(null, Number(v)); })))")
            out = subprocess.run([node, "-e", js, os.path.join(HERE, "..", "site", "ratio.js"),
                                  *[repr(v) for _, v in shown]], capture_output=True, text=True, timeout=60)
            got = json.loads(out.stdout) if out.returncode == 0 else []
            check(got == [t.replace("x", "\u00d7") for t, _ in shown],
                  f"{name}: the dashboard's ratio text {got} is compare's {[t for t, _ in shown]} ({out.stderr})")


def check_tune_words(name, path, base, prim):
    """tune's wording of a pair over the same blocks is compare's."""
    run = mbdata.load(path)
    trade = set(run.with_trait("trade_off"))
    for c in [c for c in prim if c["metric"] == "throughput" and not c.get("sequential")][:6]:
        # tune words its own pairs (its race stops them itself): a run's sequential cells are compare's
        vals, machines = {}, {}
        for r in run.ok:
            if (r["workload"], r["workload_params"]) == (c["workload"], c["params"]):
                key = (r["matrix_id"], r["block"], r["_machine"])
                vals.setdefault(r["config"], {})[key] = mbdata.num(r, "throughput")
                machines[key] = r["_machine"]
        got = tunereport.change_text(vals, base, c["config"], c["better"], c["workload"] in trade, machines,
                                     unit=c["unit"])
        check(got.startswith(words(c)), f"{name}: tune words {c['config']} on {c['workload']} as {got!r}, "
                                       f"compare as {words(c)!r}")


SEQ_FIXTURE = os.path.join(HERE, "fixtures", "seq-stopped.csv")  # tests/fixtures/make_seq_fixture.py wrote it


def check_sequential(tmp):
    """A run sized for a verdict (issue 45), through every view: the committed fixture (stopped on
    throughput) and its copy made with the CPU as the primary figure (make_seq_fixture.make).
    jemalloc settled at block 8 while g2 ran to the cap (12): jemalloc's cells use blocks 0-7 of
    glibc only, its CI is the sidecar's (the look's level), no p; every view says the same words."""
    import importlib.util  # the fixture's generator beside it (tests/fixtures is no package)
    spec = importlib.util.spec_from_file_location("make_seq_fixture", os.path.join(HERE, "fixtures", "make_seq_fixture.py"))
    make_seq_fixture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_seq_fixture)
    cpu = os.path.join(tmp, "seq-cpu.csv")
    for path, figure in ((SEQ_FIXTURE, "throughput"), (cpu, "cpu")):
        stops = make_seq_fixture.make(cpu, "cpu") if figure == "cpu" else mbdata.read_meta(path)["sequential"]["stops"]
        name = f"{os.path.basename(path)} ({figure})"
        got = check_run(path, tmp)
        ref = got["ref"]
        prim = [c for c in ref["cells"] if c["primary"] and not c["geomean"]]
        check([c["metric"] for c in prim] == [figure] * 2, f"{name}: the sidecar's figure is primary: {prim}")
        for st in stops:
            c = next(c for c in prim if c["config"] == st["config"])
            seq = c.get("sequential") or {}
            check(c["p"] is None and (seq.get("look"), seq.get("blocks"), seq.get("alpha"), seq.get("why")) ==
                  (st["look"], st["blocks"], st["alpha"], st["why"]) and seq.get("controlled") is True,
                  f"{name}: {c['config']}'s cell is the sidecar's stop, no p: {c['p']} {seq}")
            check(c["n"] == c["n_base"] == st["n"] and abs(c["level"] - (1 - st["alpha"])) < 1e-12,
                  f"{name}: {c['config']}: blocks before its stop only, at the look's level: {c['n']}/{c['n_base']}")
            # the views print the CI of the rule that stopped it (sequential.ci, untied null), ties or not
            check(all(abs(c[k] / st[k] - 1) < 1e-9 for k in ("estimate", "lo", "hi")),
                  f"{name}: {c['config']}'s change and CI are the stop's: {c['estimate']} [{c['lo']}, {c['hi']}] "
                  f"vs {st['estimate']} [{st['lo']}, {st['hi']}]")
            others = [x for x in ref["cells"] if x["config"] == st["config"] and not x["primary"] and not x["geomean"]]
            check(others and all(x["sequential"]["controlled"] is False and x["level"] == 0.95 and
                                 x["sequential"]["note"] == f"not error-controlled: the run stopped on "
                                                            f"{'CPU' if figure == 'cpu' else 'throughput'}"
                                 for x in others), f"{name}: the pair's other figures are marked not error-controlled")
        jem = next(c for c in prim if c["config"] == "jemalloc")
        check(words(jem).startswith("settled at block 8: ") and words(jem).endswith(" regressed"),
              f"{name}: jemalloc settled at block 8: {words(jem)!r}")
        g2 = next(c for c in prim if c["config"] == "g2")
        check(words(g2).startswith("stopped at the cap, block 12: "), f"{name}: g2 ran to the cap: {words(g2)!r}")
        text = got["compare"]
        check(f"jemalloc vs glibc, exec: {words(jem)} [" in text and "sequential: each CI at its look's level" in text,
              f"{name}: compare says where jemalloc settled and what it prints instead of p")
        check_cpu_column(name, ref, got["summary"], got["report"])


def check_cpu_column(name, ref, stext, rjs):
    """The CPU figure is one number: compare's CPU median (the median of each sample's user + sys
    per unit of work) is summary's CPU column (its Markdown) and report --json's cpu_s_per_work."""
    cpu = [c for c in ref["cells"] if c["metric"] == "cpu" and not c["geomean"]]
    check(cpu, f"{name}: compare has the CPU figure")
    for c in cpu:
        line = next(s for s in rjs["summary"] if (s["workload"], s["params"], s["config"]) ==
                    (c["workload"], c["params"], c["config"]))
        check(line["cpu_s_per_work"] == c["median"], f"{name}: report's CPU of {c['config']} is compare's "
                                                       f"{c['median']}: {line['cpu_s_per_work']}")
        row = next((l for l in stext.split("\n") if l.startswith(f"| {c['config']} |")), "")
        check(f" {mbwords.fmt_value(c['median'], 's')} " in row + " ",
              f"{name}: summary's CPU of {c['config']} is compare's {mbwords.fmt_value(c['median'], 's')}: {row}")


def check_frameworks(path):
    base = mbdata.baseline_config(mbdata.load(path))  # the report's baseline: glibc's defaults
    ref = json.loads(script("compare.py", path, "--json", "--baseline", base))
    # the report shows a configuration by its label (mbdata.config_label: without its tunables)
    said = {(mbdata.config_label(c["config"]), words(c)) for c in ref["cells"] if c["primary"] and not c["geomean"]}
    text = script("frameworks.py", path)
    table = text.split("## Programs × configurations", 1)[-1].split("\n## ", 1)[0]
    rows = [l.split(" | ") for l in table.split("\n") if l.startswith("| ") and not l.startswith("| program")
            and not l.startswith("|---")]
    shown = 0
    for r in rows:
        if len(r) < 3 or r[2] == "baseline":
            continue
        cfg, vs = r[1], r[2].split(" [")[0]
        shown += 1
        check(any(c == cfg and vs == w for c, w in said) or vs == "–",
              f"frameworks: {cfg}'s {vs!r} is a pair compare prints for it")
    check(shown, "frameworks: its table has pairs to check")


# the units a series can have (the registry's, per unit of work, a program's own) and values
# across every scale, exact ties (0.125, 2.5e-05) and the ends of each prefix
VALUE_UNITS = ("B/s", "B", "s", "us", "s/MiB", "s/run", "s/request", "fraction", "ops/s", "runs/s", "calls",
               "faults", "MiB", "/MiB", "/run", "")
VALUE_CASES = (0.0, 1e-07, 2.5e-05, 0.000999, 0.001, 0.0012345, 0.125, 0.5, 0.9995, 1.0, 1.125, 9.995, 12.3, 99.95,
               999.5, 1234.0, 9999.0, 10000.0, 12345.0, 999950.0, 1.5e9, 1.2345e12, 3.3e15, -3.2, -0.0045, 7e21)


def check_value_js(node):
    """The dashboard's plots write a value as every view does: site/series.js's MB_VALUE.text is
    words.fmt_value for each unit, over fixed and seeded random values (issue 44: the site wrote
    1.5 GB/s and 12.3 kops/s where compare writes 1.50 GB/s and 12.3 k ops/s)."""
    import random
    rnd = random.Random(44)
    vals = list(VALUE_CASES) + [rnd.choice((1, -1)) * 10 ** rnd.uniform(-8, 14) for _ in range(300)] + \
        [round(rnd.uniform(0, 1000), rnd.randint(0, 4)) for _ in range(100)]
    cases = [(v, u) for u in VALUE_UNITS for v in vals]
    js = ("global.window = {}; global.document = {body: {dataset: {}}, getElementById: function () { return {}; }};"
          "require(process.argv[1]); var cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
          "console.log(JSON.stringify(cases.map(function (c) { return window.MB_VALUE.text(c[0], c[1]); })))")
    out = subprocess.run([node, "-e", js, os.path.join(HERE, "..", "site", "series.js")], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=60)
    got = json.loads(out.stdout) if out.returncode == 0 else []
    want = [mbwords.fmt_value(v, u) for v, u in cases]
    bad = [(c, g, w) for c, g, w in zip(cases, got, want) if g != w]
    check(len(got) == len(want) and not bad,
          f"series.js writes a value as words.fmt_value: {len(bad)} of {len(want)} differ {bad[:5]} {out.stderr[-300:]}")


def main():
    args = sys.argv[1:]
    fw = [a[3:] for a in args if a.startswith("FW=")]
    spread = [a[7:] for a in args if a.startswith("SPREAD=")]
    runs = [a for a in args if not a.startswith(("FW=", "SPREAD="))]
    with tempfile.TemporaryDirectory() as tmp:
        for p in runs:
            check_run(os.path.abspath(p), tmp)
        for p in spread:
            check_run(spread_copy(os.path.abspath(p), tmp), tmp)
            runs.append(p)
        check_sequential(tmp)
        runs += [SEQ_FIXTURE, "its CPU-figure copy"]
    for p in fw:
        check_frameworks(p)
    node = shutil.which("node") or shutil.which("nodejs")
    if node:
        check_value_js(node)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print(f"ok: {len(runs)} runs through every view" + (", and the frameworks report" if fw else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
