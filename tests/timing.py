#!/usr/bin/env python3
"""timing.py - where `make test`'s time went, from meson's own test logs.

Usage: tests/timing.py LABEL=LOG.json:WALL_SECONDS ...

Each argument names one `meson test` invocation (its label, the JSON log it
wrote with --logbase, and the wall time make measured around it).  Prints
each invocation's wall time, test count and results, the total, and the ten
slowest tests over all of them with their times.  Reads the logs only.
"""
import json
import sys


def load(path):
    tests = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                tests.append(json.loads(line))
    return tests


def main(argv):
    if not argv:
        print("usage: timing.py LABEL=LOG.json:WALL_SECONDS ...", file=sys.stderr)
        return 2
    rows, everything, total = [], [], 0.0
    for arg in argv:
        label, _, rest = arg.partition("=")
        path, _, wall = rest.rpartition(":")
        try:
            wall_s = float(wall)
            tests = load(path)
        except (ValueError, OSError) as e:
            print(f"timing.py: cannot read '{arg}': {e}", file=sys.stderr)
            return 2
        total += wall_s
        counts = {}
        for t in tests:
            counts[t["result"]] = counts.get(t["result"], 0) + 1
            everything.append((t["duration"], label, t["name"], t["result"]))
        res = ", ".join(f"{n} {r.lower()}" for r, n in sorted(counts.items()))
        rows.append(f"  {label:<24} {wall_s / 60:5.1f} min wall  {len(tests):4d} tests  ({res})")
    print("test time by tier and build:")
    print("\n".join(rows))
    print(f"  {'total':<24} {total / 60:5.1f} min wall")
    print("ten slowest tests:")
    for dur, label, name, result in sorted(everything, reverse=True)[:10]:
        print(f"  {dur:7.1f} s  {label:<24} {name}{'' if result == 'OK' else '  ' + result}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
