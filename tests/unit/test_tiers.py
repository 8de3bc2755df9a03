#!/usr/bin/env python3
"""test_tiers.py - every test carries a kind and a tier (docs/testing.md).

Usage: test_tiers.py BUILD_ROOT SOURCE_ROOT.  Reads meson's introspection
(BUILD_ROOT/meson-info/intro-tests.json and intro-benchmarks.json) and fails when
  - a test or benchmark has not exactly one kind suite (unit, integration, fuzz,
    benchmarks) and exactly one tier suite (fast, slow), or has a suite that is
    neither (but `smoke`, on fast integration tests: the smokes that `make test`
    also runs in the sanitizer build);
  - a unit test is slow (the editing loop, `--suite unit`, is every unit test);
  - a benchmark is fast (a benchmark prints figures: it is a measurement);
  - a fuzz target has no fast run (fuzz_NAME) and a slow one (fuzz_NAME_long);
  - a command of the harness (a line of cli.h's MB_COMMANDS table, C or PY) has no smoke test
    smoke_NAME in the suite smoke.
Checks its rules on made-up entries first, so it cannot pass by reading nothing.
"""
import json
import os
import re
import sys

KINDS = {"unit", "integration", "fuzz", "benchmarks"}
TIERS = {"fast", "slow"}
SMOKE = "smoke"  # the fast smokes of each command, also run in the sanitizer build
FAILS = []


def fail(what):
    FAILS.append(what)
    print("FAIL:", what, file=sys.stderr)


def suites(entry):
    """meson writes suites as PROJECT:NAME; the names alone."""
    return [s.split(":", 1)[-1] for s in entry["suite"]]


def problems(tests, benchmarks, commands):
    out = []
    for kind_of, entries in (("test", tests), ("benchmark", benchmarks)):
        for t in entries:
            s = suites(t)
            kinds, tiers = [x for x in s if x in KINDS], [x for x in s if x in TIERS]
            other = [x for x in s if x not in KINDS | TIERS and not (x == SMOKE and kinds == ["integration"]
                                                                 and tiers == ["fast"])]
            if len(kinds) != 1 or len(tiers) != 1 or other:
                out.append(f"{kind_of} {t['name']}: suites {s}: one kind of {sorted(KINDS)} and one tier of {sorted(TIERS)}")
                continue
            if kinds == ["unit"] and tiers == ["slow"]:
                out.append(f"{kind_of} {t['name']}: a unit test is fast (--suite unit is the loop while editing)")
            if kind_of == "benchmark" and tiers == ["fast"]:
                out.append(f"benchmark {t['name']}: a benchmark measures: slow")
    fast = {t["name"] for t in tests if "fast" in suites(t)}
    smoke = {t["name"] for t in tests if SMOKE in suites(t)}
    slow = {t["name"] for t in tests if "slow" in suites(t)}
    fuzz = {t["name"] for t in tests if "fuzz" in suites(t)}
    for name in sorted(n for n in fuzz if not n.endswith("_long")):
        if name not in fast or name + "_long" not in slow:
            out.append(f"fuzz target {name}: needs {name} in the fast tier and {name}_long in the slow")
    for c in sorted(commands):
        if f"smoke_{c}" not in smoke:
            out.append(f"command {c}: no fast smoke test smoke_{c} in the suite {SMOKE} (tests/integration/test_smoke.py)")
    return out


def self_check():
    t = lambda name, *s: {"name": name, "suite": [f"mallocbench:{x}" for x in s]}
    good = [t("a", "unit", "fast"), t("fuzz_x", "fuzz", "fast"), t("fuzz_x_long", "fuzz", "slow"),
            t("smoke_run", "integration", "fast", "smoke")]
    if problems(good, [t("b", "benchmarks", "slow")], {"run"}):
        fail(f"the rules refuse a good suite: {problems(good, [], {'run'})}")
    bad = [t("a", "unit"), t("b", "unit", "slow"), t("c", "integration", "fast", "slow"),
           t("d", "integration", "fast", "misc"), t("fuzz_y", "fuzz", "fast"), t("smoke_run", "integration", "fast"),
           t("f", "unit", "fast", "smoke")]
    got = problems(bad, [t("e", "benchmarks", "fast")], {"run"})
    if len(got) != 8:
        fail(f"the rules miss a bad suite: {got}")


def main():
    if len(sys.argv) != 3:
        print("usage: test_tiers.py BUILD_ROOT SOURCE_ROOT", file=sys.stderr)
        return 2
    build, src = sys.argv[1:]
    self_check()
    info = os.path.join(build, "meson-info")
    with open(os.path.join(info, "intro-tests.json"), encoding="utf-8") as f:
        tests = json.load(f)
    with open(os.path.join(info, "intro-benchmarks.json"), encoding="utf-8") as f:
        benchmarks = json.load(f)
    with open(os.path.join(src, "harness", "cmd", "cli.h"), encoding="utf-8") as f:
        commands = set(re.findall(r'^\s*X\((\w+), (?:C|PY), "', f.read(), re.M))
    if len(tests) < 50 or len(commands) < 10:
        fail(f"read {len(tests)} tests and {len(commands)} commands: the introspection or the table moved")
    for what in problems(tests, benchmarks, commands):
        fail(what)
    print(f"{len(tests)} tests, {len(benchmarks)} benchmarks, {len(commands)} commands checked")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
