#!/usr/bin/env python3
"""test_calibrate.py MALLOCBENCH CASE - the cost of one 2 MiB huge-page fault (issue 46): never
shown as if measured where the kernel gave no huge page.

huge_measured  `calibrate 1M` on this machine: where THP is on (madvise or always) and a fault
               was shown huge, the cost in ns, how many faults, the defrag mode (the kernel's
               word) and the same cost beside 512 x the minor fault; otherwise one line
               "not measured: WHY" and no figure.
huge_off       THP refused to the process tree (prctl PR_SET_THP_DISABLE, inherited by the
               worker: the kernel gives it no huge page): `calibrate` says why in one line; a
               run's sidecar has huge_fault_ns null and huge_fault_missing says why; nothing
               cached (the process's state, not the machine's), so a run without it measures.
huge_cache     the per-boot cache: a file whose huge fault is NaN because every fault fell
               back is taken (null, and why); a file from before the figure (no huge keys),
               a NaN beside faults shown huge, a cost beside none, junk after it, a THP word
               other than the kernel's now: all remeasured, never a crash.
"""
import ctypes
import json
import os
import re
import subprocess
import sys
import time

from mbtest import check, check_eq, main, thp_word

TINY = "tensor_copy:size=64K,count=2,steps=1,warmup=0"
PR_SET_THP_DISABLE = 41


def thp_off():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0):
        os._exit(3)


def harness(mb, *args, env=None, off=False):
    return subprocess.run([mb, *args], capture_output=True, text=True, timeout=300, env=env,
                          preexec_fn=thp_off if off else None)


def huge_lines(out):
    return [ln for ln in out.splitlines() if ln.startswith("huge page fault")]


def case_huge_measured(mb, tmp):
    p = harness(mb, "calibrate", "1M")
    check_eq(p.returncode, 0, f"calibrate 1M: {p.stderr!r}")
    lines = huge_lines(p.stdout)
    check_eq(len(lines), 1, f"one huge-fault line: {p.stdout!r}")
    m = re.match(r"huge page fault +([0-9]+) ns .* ([0-9]+) faults each shown huge .* ([0-9]+) fell back, "
                 r"defrag=(\w+);", lines[0] if lines else "")
    enabled = thp_word("enabled")
    if not m:
        check(lines and lines[0].startswith("huge page fault   not measured: ") and not re.search(r"\d+ ns", lines[0]),
              f"no figure, and why: {lines!r}")
        check(enabled in ("", "never") or "fell back" in lines[0],
              f"THP {enabled!r} here: only a fallback excuses no figure: {lines!r}")
        return
    check(enabled in ("madvise", "always"), f"a figure only where THP gives huge pages ({enabled!r})")
    ns, faults = float(m.group(1)), int(m.group(2))
    check(ns > 0 and faults > 0, f"a cost over faults shown huge: {lines[0]!r}")
    check_eq(m.group(4), thp_word("defrag"), "the defrag mode it ran under")
    minor = float(re.search(r"minor page fault +([0-9]+) ns", p.stdout).group(1))
    beside = re.search(r"costs ([0-9.e+-]+)x 512 minor faults \(([0-9]+) ns\)", p.stdout)
    check(beside is not None, f"beside 512 minor faults: {p.stdout!r}")
    if beside:
        check(abs(int(beside.group(2)) - 512 * minor) <= 512, f"512 x the minor fault ({minor:.0f} ns, rounded): "
              f"{beside.group(0)!r}")
        check(abs(float(beside.group(1)) - ns / (512 * minor)) <= 0.01 * ns / (512 * minor) + 1e-3,
              f"the ratio of the two: {beside.group(0)!r}")


def run_meta(mb, tmp, name, env, off=False):
    out = os.path.join(tmp, name + ".csv")
    p = harness(mb, "run", "-q", "-w", TINY, "-a", "glibc", "-r", "1", "--no-limit", "-o", out, env=env, off=off)
    check(p.returncode == 0, f"run -o {out}: {p.returncode} {p.stderr[-300:]!r}")
    try:
        return json.load(open(out[:-4] + ".meta.json"))["machine"]["calibration"] or {}
    except (OSError, ValueError, KeyError) as e:
        check(False, f"{out}: no sidecar calibration: {e}")
        return {}


def case_huge_off(mb, tmp):
    p = harness(mb, "calibrate", "1M", off=True)
    check_eq(p.returncode, 0, f"calibrate under PR_SET_THP_DISABLE: {p.stderr!r}")
    check_eq(huge_lines(p.stdout), ["huge page fault   not measured: transparent huge pages are disabled for the "
                                    "calibrating process (PR_SET_THP_DISABLE)"]
             if thp_word("enabled") not in ("", "never") else huge_lines(p.stdout)[:1], "says why, in one line")
    check(not re.search(r"huge page fault +[0-9]", p.stdout) and "512 minor" not in p.stdout,
          f"no figure: {p.stdout!r}")
    cache = os.path.join(tmp, "cache")
    os.mkdir(cache, 0o755)
    env = dict(os.environ, MB_CALIBRATION_CACHE=cache)
    cal = run_meta(mb, tmp, "off", env, off=True)
    check("huge_fault_ns" in cal and cal["huge_fault_ns"] is None, f"the figure null: {cal}")
    check_eq(cal.get("huge_faults"), 0, "no fault shown huge")
    check(cal.get("huge_fault_missing"), f"and why: {cal}")
    check_eq(cal.get("cached"), False, "measured")
    check_eq(os.listdir(cache), [], "the process's own refusal is not cached for the machine")
    cal = run_meta(mb, tmp, "on", env)
    check_eq(cal.get("cached"), False, "a run with THP measures its own")
    if thp_word("enabled") in ("madvise", "always") and cal.get("huge_faults"):
        check(cal.get("huge_fault_ns", 0) > 0 and "huge_fault_missing" not in cal, f"and has the figure: {cal}")
    check_eq(len(os.listdir(cache)), 1, "and caches it")


def case_huge_cache(mb, tmp):
    cache = os.path.join(tmp, "cache")
    os.mkdir(cache, 0o755)
    env = dict(os.environ, MB_CALIBRATION_CACHE=cache)
    boot = open("/proc/sys/kernel/random/boot_id").read().strip()
    name = os.path.join(cache, f"calibration-{boot}.txt")
    enabled, defrag = thp_word("enabled"), thp_word("defrag")
    n = [0]

    def plant(huge="nan", faults="0", fallbacks="96", words=True, defrag_word=None):
        with open(name, "w") as f:
            f.write(f"boot_id={boot}\nmeasured_at={int(time.time())}\nfault_ns=15000\nrefault_ns=15000\n"
                    f"refault_sys_ns=8000\nmemcpy_bytes_per_s=1.8e10\nload1={os.getloadavg()[0]:.2f}\nsteal=0\n")
            if words:
                f.write(f"thp_enabled={enabled}\nthp_defrag={defrag if defrag_word is None else defrag_word}\n")
            if huge is not None:
                f.write(f"huge_fault_ns={huge}\nhuge_faults={faults}\nhuge_fallbacks={fallbacks}\n")
        os.chmod(name, 0o644)

    def sample():
        n[0] += 1
        return run_meta(mb, tmp, f"r{n[0]}", env)

    plant()
    cal = sample()
    check_eq(cal.get("cached"), True, "every fault fell back: a plausible file, taken")
    check("huge_fault_ns" in cal and cal["huge_fault_ns"] is None, f"its figure null, never a number: {cal}")
    want = ("every fault of the advised range fell back" if enabled not in ("", "never") else
            "transparent huge pages are off" if enabled else "no /sys/kernel/mm/transparent_hugepage")
    check(want in (cal.get("huge_fault_missing") or ""), f"and why ({want!r}): {cal}")
    check_eq(cal.get("huge_defrag"), defrag or None, "the defrag mode it was measured under")
    plant(huge="250000", faults="32", fallbacks="0")
    cal = sample()
    check(cal.get("cached") is True and cal.get("huge_fault_ns") == 250000 and "huge_fault_missing" not in cal,
          f"a measured figure taken as it was: {cal}")
    for what, kw in (("a file from before the huge figure", {"huge": None, "words": False}),
                     ("a NaN beside faults shown huge", {"faults": "32"}),
                     ("a cost beside no fault shown huge", {"huge": "250000"}),
                     ("junk after the cost", {"huge": "250000x", "faults": "8"}),
                     ("a defrag word other than the kernel's now", {"defrag_word": defrag + "x"})):
        plant(**kw)
        cal = sample()
        check_eq(cal.get("cached"), False, f"{what}: remeasured")
        text = open(name).read()
        check("\nhuge_faults=" in text and f"\nthp_defrag={defrag}\n" in text, f"{what}: the file measured anew")


if __name__ == "__main__":
    sys.exit(main({"huge_measured": case_huge_measured, "huge_off": case_huge_off, "huge_cache": case_huge_cache}))
