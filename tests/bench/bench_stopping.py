#!/usr/bin/env python3
"""bench_stopping.py - issue 45's real runs of the sequential plan (docs/precision.md, "Real
runs"), each part printing its commands, their elapsed time and a Markdown table:

  aa          `run -a glibc,g2=glibc` beside a CPU hog: the default sequential plan (cap 30) and a
              fixed 30 blocks; the CI of g2/glibc, whether it contains 1 (a verdict that excludes
              1 is a false one), wall and CPU, re-measured blocks.
  planted     `exec -a glibc,g2=glibc -t g2:arena_test=8 -- planted_prog UNITS 10 arena_test`
              beside the hog: g2 does 10% more work (tests/programs/planted_prog.c reads the
              configuration's GLIBC_TUNABLES; arena_test=8 is glibc's default, so the allocator
              is the same), so its runs/s is 1/1.10 and its CPU per run 1.10 of glibc's: does
              each figure's CI hold the planted change?  Once per primary figure (--figure
              throughput, and cpu where the harness has it).
  resolution  the default `exec` of workloads/frameworks/elementwise.py (Debian's python3 with
              torch) and of `gcc -O2 -c` of the ~0.5 MB C file tests/programs/gen_compile.py
              writes, under glibc, jemalloc, tcmalloc, quiet and beside the hog: time, blocks,
              each comparison's stop, and the resolution (CI half-width / estimate) of wall
              (runs/s) and of CPU (user+sys per run) on the same blocks, with the 1-min load.
  keep-purge  `run -w tensor_copy:size=8M,count=2,steps=10 -a glibc,jk=jemalloc
              -t jk:dirty_decay_ms=-1` (the default plan): time, blocks, the stop, the CI.

The hog: Debian's `stress-ng --cpu 2` (scripts/deps.sh test installs it), else two spinning
processes of this script's own.  The load average is /proc/loadavg's 1-min figure, read every
2 s while a run lasts (mean and largest).  Figures, not pass/fail; run it on a quiet machine.

    bench_stopping.py MALLOCBENCH [--part all|aa|planted|resolution|keep-purge]
                      [--hog default|on|off|both] [--max-blocks N] [--figure throughput|cpu]
                      [--allocators LIST] [--planted PATH] [--tiny]

--hog default: aa and planted beside the hog, resolution quiet and beside it, keep-purge quiet.
--tiny: small work, a cap of 8 blocks and two allocators, to check the script (aa, planted and
keep-purge take seconds each, resolution minutes: elementwise.py starts torch in every sample).
"""
import argparse
import json
import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from mallocbench import mbcsv, mbdata, sequential  # noqa: E402  (PYTHONPATH=scripts:tests)

PARTS = ("aa", "planted", "resolution", "keep-purge")
HOG_DEFAULT = {"aa": ("on",), "planted": ("on",), "resolution": ("off", "on"), "keep-purge": ("off",)}
PLANTED_PCT = 10
PLANTED_WORD = "arena_test"  # g2's setting: glibc's own default value (8), so no other change
ELEMENTWISE = "workloads/frameworks/elementwise.py"
GEN_COMPILE = "tests/programs/gen_compile.py"


class Sizes:
    """The work of each part: full (the issue's runs) or tiny (a check of the script)."""

    def __init__(self, tiny, cap):
        self.cap = cap or (8 if tiny else 30)
        self.aa = "tensor_copy:size=1M,count=2,steps=5" if tiny else "tensor_copy:size=8M,count=2,steps=10"
        self.units = 2000 if tiny else 100000
        self.elementwise = ["--size-mib", "2", "--steps", "2"] if tiny else []
        self.source = 30000 if tiny else 500000
        self.keep = "tensor_copy:size=8M,count=2,steps=" + ("2" if tiny else "10")
        self.extra = ["--no-limit"] if tiny else []
        self.allocators = "glibc,jemalloc" if tiny else "glibc,jemalloc,tcmalloc"


class Hog:
    """A CPU hog on two cores while the block runs: stress-ng --cpu 2, else two spinning
    processes; each in a session of its own, ended by its process group id."""

    def __init__(self, on):
        self.on, self.procs, self.what = on, [], "quiet"

    def __enter__(self):
        if not self.on:
            return self
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
        if shutil.which("stress-ng"):
            self.procs = [subprocess.Popen(["stress-ng", "--cpu", "2", "--quiet"], **quiet)]
            self.what = "stress-ng --cpu 2"
        else:
            self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], **quiet) for _ in range(2)]
            self.what = "2 x python3 -c 'while True: pass'"
        time.sleep(3)  # the hog's threads running before the first sample
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


class Load:
    """/proc/loadavg's 1-min figure every 2 s while the block runs."""

    def __enter__(self):
        self.seen, self.done = [], threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)
        self.thread.start()
        return self

    def sample(self):
        while True:
            with open("/proc/loadavg", encoding="ascii") as f:
                self.seen.append(float(f.read().split()[0]))
            if self.done.wait(2):
                return

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def text(self):
        return f"{sum(self.seen) / len(self.seen):.2f} (max {max(self.seen):.2f})" if self.seen else "-"


def harness_has(mb, option):
    return option in subprocess.run([mb, "run", "--help"], capture_output=True, text=True).stdout


def measure(mb, argv, out, hog):
    """Run `mallocbench ARGV -o OUT` from the repository root beside the hog (or not), printing
    the command first; {"elapsed", "load", "hog", "stop_lines", "out"}.  A failed run exits."""
    cmd = [mb, argv[0], "-o", out, *argv[1:]]  # before exec's `--`
    print(f"\n$ {shlex.join([os.path.relpath(mb, ROOT) if mb.startswith(ROOT) else mb, *argv])}"
          f"{'   (beside the hog)' if hog else ''}", flush=True)
    with Hog(hog) as h, Load() as load:
        t0 = time.time()
        p = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        elapsed = time.time() - t0
    if p.returncode not in (0, 4) or not os.path.exists(out):
        sys.exit(f"bench_stopping: the run failed (exit {p.returncode}): {p.stderr.strip()[-2000:]}")
    if p.returncode == 4:
        print("warning: " + "; ".join(l for l in p.stderr.splitlines() if "no ok sample" in l))
    lines = [l.strip() for l in p.stderr.splitlines() + p.stdout.splitlines()
             if "settled at" in l or "stopped at" in l]
    print(f"elapsed {elapsed:.0f} s, load (1-min) {load.text()}, hog: {h.what}", flush=True)
    for l in lines:
        print("  " + l)
    return {"elapsed": elapsed, "load": load.text(), "hog": h.what, "stop_lines": lines, "out": out}


def last_attempt(rows):
    """The ok rows of each block's last attempt (schema 8's `attempt`; all rows before it), and
    how many blocks were measured again."""
    top = {}
    for r in rows:
        top[r["block"]] = max(top.get(r["block"], 0), int(r.get("attempt") or 0))
    kept = [r for r in rows if int(r.get("attempt") or 0) == top[r["block"]] and r["status"] == "ok"]
    return kept, sum(1 for a in top.values() if a > 0)


def cpu_cell(rows, base, config, blocks):
    """CPU (user+sys) per unit of work, config against base paired by block, over the blocks
    below `blocks`, with its 95% CI: the fallback while compare has no "cpu" figure."""
    def per_block(c):
        out = {}
        for r in rows:
            w = mbdata.work(r)[0]
            s = mbdata.cpu_seconds(r)
            if r["config"] == c and int(r["block"]) < blocks and w and s:
                out[int(r["block"])] = s / w
        return out
    b, o = per_block(base), per_block(config)
    d = [math.log(o[k] / b[k]) for k in sorted(o) if k in b and o[k] > 0 and b[k] > 0]
    est, lo, hi = sequential.ci(d, 0.05)
    if est is None:
        return None
    return {"estimate": math.exp(est), "lo": math.exp(lo) if lo is not None else None,
            "hi": math.exp(hi) if hi is not None else None, "level": 0.95, "verdict": "(user+sys)"}


def analyse(mb, out):
    """What a run ended with: {"blocks", "remeasured", "baseline", "stops": {config: stop},
    "cells": {config: {"wall": cell, "cpu": cell}}} from its CSV, sidecar and compare --json."""
    rows, remeasured = last_attempt(mbcsv.read(out)[1])
    seq = (mbcsv.read_meta(out) or {}).get("sequential") or {}
    stops = {s["config"]: s for s in seq.get("stops", [])}
    p = subprocess.run([mb, "compare", "--json", out], capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        sys.exit(f"bench_stopping: compare --json {out} failed: {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    cells = {}
    for c in doc["cells"]:
        if c["workload"] != "geomean" and c["metric"] in ("throughput", "cpu"):
            cells.setdefault(c["config"], {})["wall" if c["metric"] == "throughput" else "cpu"] = c
    blocks = 1 + max((int(r["block"]) for r in rows), default=-1)
    for config, got in cells.items():
        if "cpu" not in got:
            used = stops[config]["blocks"] if config in stops else blocks
            got["cpu"] = cpu_cell(rows, doc["baseline"], config, used)
    return {"blocks": blocks, "remeasured": remeasured, "baseline": doc["baseline"], "stops": stops,
            "cells": cells}


def is_ratio(cell):
    """compare gives a difference instead of a ratio where a figure is 0 (CPU under a clock
    tick: tiny work); the fallback cell is always a ratio."""
    return cell.get("kind", "ratio") == "ratio"


def ci_text(cell):
    """estimate [lo, hi] (level); * where compare says the CI is not error-controlled (a figure
    the run did not stop on)."""
    if not cell or cell.get("estimate") is None:
        return "-"
    mark = "*" if (cell.get("sequential") or {}).get("controlled") is False else ""
    if not is_ratio(cell):
        return f"difference {cell['estimate']:+.3g} {cell.get('change_unit', '')}{mark}"
    if cell.get("lo") is None:
        return f"{cell['estimate']:.3f}x [no CI]{mark}"
    return f"{cell['estimate']:.3f}x [{cell['lo']:.3f}, {cell['hi']:.3f}] ({100 * cell['level']:.1f}%){mark}"


def resolution(cell):
    if not cell or cell.get("lo") is None or not is_ratio(cell):
        return "-"
    return f"±{100 * (cell['hi'] - cell['lo']) / 2 / cell['estimate']:.1f}%"


def holds(cell, value):
    if not cell or cell.get("lo") is None or not is_ratio(cell):
        return "no ratio CI"
    return "yes" if cell["lo"] <= value <= cell["hi"] else "NO"


def stop_text(got, config):
    s = got["stops"].get(config)
    if not s:
        return f"fixed, {got['blocks']} blocks"
    return f"{s['why']} at block {s['blocks']} (look {s['look']}, alpha {s['alpha']:g})"


def table(head, rows):
    """A Markdown table, and what its marks mean."""
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    if any("*" in str(x) for r in rows for x in r):
        print("\n\\*: not error-controlled, the run stopped on the other figure (95% CI on the stop's blocks)")


def part_aa(mb, tmp, sz, hogs, figure):
    """The A/A pair beside the hog: the sequential plan (cap) and a fixed plan of cap blocks."""
    out = []
    for hog in hogs:
        for plan, args in (("sequential", ["--max-blocks", str(sz.cap)]), ("fixed", ["-r", str(sz.cap)])):
            csv = os.path.join(tmp, f"aa-{plan}-{hog}.csv")
            argv = ["run", "-w", sz.aa, "-a", "glibc,g2=glibc", *args, *figure, *sz.extra]
            run = measure(mb, argv, csv, hog == "on")
            got = analyse(mb, csv)
            for config, c in got["cells"].items():
                out.append([plan, run["hog"], f"{run['elapsed']:.0f} s", got["blocks"], got["remeasured"],
                            run["load"], stop_text(got, config), ci_text(c.get("wall")), holds(c.get("wall"), 1),
                            (c.get("wall") or {}).get("verdict"), ci_text(c.get("cpu")), holds(c.get("cpu"), 1)])
    print(f"\nA/A: {sz.aa}, g2 against glibc (the same allocator); a CI without 1 is a false verdict")
    table(["plan", "hog", "time", "blocks", "re-measured", "load 1-min", "stop", "wall (throughput)",
           "holds 1", "verdict", "CPU (user+sys)", "holds 1"], out)


def part_planted(mb, tmp, sz, hogs, planted, figures):
    """g2 does PLANTED_PCT% more work: runs/s 1/1.10, CPU per run 1.10 of glibc's."""
    want = {"wall": 100 / (100 + PLANTED_PCT), "cpu": (100 + PLANTED_PCT) / 100}
    out = []
    for hog in hogs:
        for fig in figures:
            csv = os.path.join(tmp, f"planted-{fig}-{hog}.csv")
            argv = ["exec", "-a", "glibc,g2=glibc", "-t", f"g2:{PLANTED_WORD}=8", "--max-blocks", str(sz.cap),
                    *(["--figure", fig] if fig != "default" else []), *sz.extra,
                    "--", planted, str(sz.units), str(PLANTED_PCT), PLANTED_WORD]
            run = measure(mb, argv, csv, hog == "on")
            got = analyse(mb, csv)
            for config, c in got["cells"].items():
                out.append([fig, run["hog"], f"{run['elapsed']:.0f} s", got["blocks"], got["remeasured"],
                            run["load"], stop_text(got, config), ci_text(c.get("wall")),
                            holds(c.get("wall"), want["wall"]), ci_text(c.get("cpu")),
                            holds(c.get("cpu"), want["cpu"])])
    print(f"\nPlanted {PLANTED_PCT}%: g2 does {PLANTED_PCT}% more work than glibc: wall (runs/s) "
          f"{want['wall']:.3f}x, CPU per run {want['cpu']:.3f}x")
    table(["primary figure", "hog", "time", "blocks", "re-measured", "load 1-min", "stop", "wall (runs/s)",
           f"holds {want['wall']:.3f}", "CPU per run", f"holds {want['cpu']:.3f}"], out)


def programs(tmp, sz):
    """[(name, command)] of the resolution part: elementwise.py where Debian's python3 has
    torch, and the gcc compile of a file gen_compile.py writes into tmp."""
    out = []
    torch = subprocess.run(["/usr/bin/python3", "-c", "import torch"], capture_output=True).returncode == 0
    if torch:
        out.append(("elementwise.py", ["/usr/bin/python3", ELEMENTWISE, *sz.elementwise]))
    else:
        print("elementwise.py skipped: /usr/bin/python3 has no torch (apt-get install python3-torch)")
    src = os.path.join(tmp, "compile.c")
    subprocess.run([sys.executable, os.path.join(ROOT, GEN_COMPILE), src, str(sz.source)], check=True)
    out.append((f"gcc -O2 -c ({os.path.getsize(src) // 1000} kB)", ["gcc", "-O2", "-c", src, "-o", "/dev/null"]))
    return out


def part_resolution(mb, tmp, sz, hogs, figure, allocators):
    out = []
    for name, cmd in programs(tmp, sz):
        for hog in hogs:
            csv = os.path.join(tmp, f"res-{len(out)}-{hog}.csv")
            argv = ["exec", "-a", allocators, "--max-blocks", str(sz.cap), *figure, *sz.extra, "--", *cmd]
            run = measure(mb, argv, csv, hog == "on")
            got = analyse(mb, csv)
            for config, c in got["cells"].items():
                out.append([name, run["hog"], run["load"], f"{run['elapsed']:.0f} s", got["blocks"],
                            got["remeasured"], f"{config} vs {got['baseline']}", stop_text(got, config),
                            ci_text(c.get("wall")), resolution(c.get("wall")), ci_text(c.get("cpu")),
                            resolution(c.get("cpu"))])
                # each run's rows at once: a part of 20 minutes cut short keeps what it measured
                print("  | " + " | ".join(map(str, out[-1])) + " |", flush=True)
    print("\nResolution side by side: wall (runs/s, higher is better) and CPU (user+sys per run, lower is "
          "better) on the same blocks; res: the CI's half-width over its estimate")
    table(["program", "hog", "load 1-min", "time", "blocks", "re-measured", "pair", "stop", "wall",
           "wall res", "CPU", "CPU res"], out)


def part_keep_purge(mb, tmp, sz, hogs, figure):
    out = []
    for hog in hogs:
        csv = os.path.join(tmp, f"keep-{hog}.csv")
        cap = ["--max-blocks", str(sz.cap)] if sz.cap != 30 else []
        argv = ["run", "-w", sz.keep, "-a", "glibc,jk=jemalloc", "-t", "jk:dirty_decay_ms=-1", *cap, *figure,
                *sz.extra]
        run = measure(mb, argv, csv, hog == "on")
        got = analyse(mb, csv)
        for config, c in got["cells"].items():
            out.append([run["hog"], f"{run['elapsed']:.0f} s", got["blocks"], run["load"], stop_text(got, config),
                        "; ".join(run["stop_lines"]) or "-", ci_text(c.get("wall")),
                        (c.get("wall") or {}).get("verdict")])
    print("\nKeep against purge: jemalloc dirty_decay_ms=-1 against glibc")
    table(["hog", "time", "blocks", "load 1-min", "stop", "the run's stop line", "CI", "verdict"], out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mallocbench")
    ap.add_argument("--part", choices=("all",) + PARTS, default="all")
    ap.add_argument("--hog", choices=("default", "on", "off", "both"), default="default")
    ap.add_argument("--max-blocks", type=int, default=0, help="the cap (default 30; 8 with --tiny)")
    ap.add_argument("--figure", choices=("throughput", "cpu"), help="the primary figure (aa, resolution, keep-purge)")
    ap.add_argument("--allocators", help="the resolution part's -a (glibc,jemalloc,tcmalloc; --tiny: glibc,jemalloc)")
    ap.add_argument("--planted", help="planted_prog (default: BUILD/tests/planted_prog beside MALLOCBENCH)")
    ap.add_argument("--tiny", action="store_true", help="small work, cap 8: a check of the script")
    a = ap.parse_args()
    mb = os.path.abspath(a.mallocbench)
    planted = os.path.abspath(a.planted or os.path.join(os.path.dirname(mb), "tests", "planted_prog"))
    # a SIGTERM (timeout, meson's) ends the hog with the script: its __exit__ runs on SystemExit
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sz = Sizes(a.tiny, a.max_blocks)
    has_figure = harness_has(mb, "--figure")
    if a.figure and not has_figure:
        sys.exit("bench_stopping: this harness has no --figure")
    figure = ["--figure", a.figure] if a.figure else []
    hogs = lambda part: {"default": HOG_DEFAULT[part], "on": ("on",), "off": ("off",), "both": ("off", "on")}[a.hog]
    print(f"cap {sz.cap} blocks; {'tiny work' if a.tiny else 'full work'}; --figure "
          f"{'available' if has_figure else 'not in this harness (CPU from user+sys)'}")
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        for part in (PARTS if a.part == "all" else (a.part,)):
            p0 = time.time()
            print(f"\n## {part}")
            if part == "aa":
                part_aa(mb, tmp, sz, hogs(part), figure)
            elif part == "planted":
                if not os.access(planted, os.X_OK):
                    sys.exit(f"bench_stopping: no planted_prog at '{planted}' (meson compile -C build; or --planted)")
                part_planted(mb, tmp, sz, hogs(part), planted, ["throughput", "cpu"] if has_figure else ["default"])
            elif part == "resolution":
                part_resolution(mb, tmp, sz, hogs(part), figure, a.allocators or sz.allocators)
            else:
                part_keep_purge(mb, tmp, sz, hogs(part), figure)
            print(f"\n{part}: {time.time() - p0:.0f} s")
    print(f"\nall: {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
