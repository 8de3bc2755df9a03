#!/usr/bin/env python3
"""include_graph.py - the harness's include graph by folder, drawn from the compiler's own
dependency output (the .d files ninja keeps: `ninja -t deps`).

    python3 docs/include_graph.py BUILD [--svg FILE [--force]] [--check]

Reads every object of harness/ in BUILD (the harness library and main.c) and the
headers of harness/ each one depended on as compiled (transitively: what the compiler
opened), and prints one table: the files of each folder, and each arrow between two
folders with the number of (source, header) pairs behind it.  --svg writes the
drawing (the folders top down in their stage order, an arrow per pair of folders,
downward arrows on the left, any upward one in red on the right): docs/include-graph.svg
is this script's output for the tree it sits in.  --check exits 1 when any arrow goes
up (a folder depending on one drawn above it).  The stage order is the one
tests/unit/test_structure.py checks; a folder it does not know is drawn last."""
import argparse
import collections
import html
import os
import subprocess
import sys

STAGES = ("cmd", "plan", "machine", "verdict", "output", "watch", "sample", "base")  # test_structure.py's


def deps(build):
    """{source path under harness/: set of header paths under harness/} from ninja's log."""
    out = subprocess.run(["ninja", "-C", build, "-t", "deps"], capture_output=True, text=True, check=True).stdout
    root = os.path.realpath(os.path.join(build, ".."))
    got = collections.defaultdict(set)
    src = None
    for line in out.split("\n"):
        if line and not line.startswith(" "):
            src = None
            continue
        path = line.strip()
        if not path:
            continue
        full = os.path.realpath(os.path.join(build, path))
        rel = os.path.relpath(full, root)
        if src is None:                      # the first dependency is the source itself
            src = rel if rel.startswith("harness/") and rel.endswith(".c") else ""
            continue
        if src and rel.startswith("harness/") and rel.endswith(".h"):
            got[src].add(rel)
    return got


def folder(path):
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else "harness"


def rank(f):
    return STAGES.index(f) if f in STAGES else len(STAGES)


def graph(dep):
    files = collections.defaultdict(set)
    arrows = collections.Counter()
    for src, headers in dep.items():
        files[folder(src)].add(os.path.basename(src))
        for h in headers:
            files[folder(h)].add(os.path.basename(h))
            a, b = folder(src), folder(h)
            if a != b:
                arrows[(a, b)] += 1
    return files, arrows


def floors(folders, arrows):
    """The longest chain of arrows below each folder: 1 for a folder that depends on none."""
    memo = {}

    def depth(f, seen=()):
        if f in memo:
            return memo[f]
        if f in seen:
            return float("inf")              # a circle: no floors
        below = [depth(b, seen + (f,)) for (a, b) in arrows if a == f]
        memo[f] = 1 + max(below, default=0)
        return memo[f]

    return max((depth(f) for f in folders), default=0)


def svg(folders, files, arrows):
    down = sorted((k for k in arrows if rank(k[0]) < rank(k[1])), key=lambda k: (rank(k[1]) - rank(k[0]), rank(k[0])))
    up = sorted(k for k in arrows if rank(k[0]) >= rank(k[1]))
    far = [k for k in down if rank(k[1]) - rank(k[0]) > 1]
    bh, gap = 44, 34
    left = 40 + 22 * len(far)
    w = max(left + 260 + 40 + 22 * len(up), 620)
    y = {f: 20 + i * (bh + gap) for i, f in enumerate(folders)}
    height = 40 + len(folders) * (bh + gap)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" '
           f'font-family="sans-serif" font-size="13">',
           '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0,0L10,5L0,10z"/></marker>'
           '<marker id="u" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0,0L10,5L0,10z" fill="#c00"/></marker></defs>']
    for f in folders:
        out.append(f'<rect x="{left}" y="{y[f]}" width="260" height="{bh}" rx="6" fill="#eef3fb" stroke="#4a6fa5"/>')
        out.append(f'<text x="{left + 130}" y="{y[f] + 19}" text-anchor="middle" font-weight="bold">'
                   f'harness/{html.escape(f)}/</text>')
        out.append(f'<text x="{left + 130}" y="{y[f] + 35}" text-anchor="middle" fill="#555">'
                   f'{len(files[f])} files</text>')
    near = 0
    for (a, b) in down:
        if rank(b) - rank(a) == 1:
            x = left + 130
            near += 1
            out.append(f'<line x1="{x}" y1="{y[a] + bh}" x2="{x}" y2="{y[b]}" stroke="#333" marker-end="url(#a)"/>')
            out.append(f'<text x="{x + 4}" y="{(y[a] + bh + y[b]) / 2 + 4}" font-size="11">{arrows[(a, b)]}</text>')
    for i, (a, b) in enumerate(far):
        x = left - 16 - 22 * i
        y0, y1 = y[a] + bh / 2 + 6 - 3 * (i % 4), y[b] + bh / 2 - 6 + 3 * (i % 4)
        out.append(f'<path d="M{left},{y0} H{x} V{y1} H{left}" fill="none" stroke="#333" marker-end="url(#a)"/>')
        out.append(f'<text x="{x + 3}" y="{y0 + 16 + 12 * (i % 2)}" font-size="10">{arrows[(a, b)]}</text>')
    for i, (a, b) in enumerate(up):
        x = left + 260 + 20 + 18 * i
        y0, y1 = y[a] + 8, y[b] + bh - 8
        out.append(f'<path d="M{left + 260},{y0} H{x} V{y1} H{left + 260}" fill="none" stroke="#c00" '
                   f'marker-end="url(#u)"/>')
        out.append(f'<text x="{x + 3}" y="{(y0 + y1) / 2}" font-size="11" fill="#c00">{arrows[(a, b)]}</text>')
    out.append(f'<text x="10" y="{height - 20}" font-size="11" fill="#555">an arrow: sources of a folder '
               f'depend on headers of the folder it points at;</text>')
    out.append(f'<text x="10" y="{height - 6}" font-size="11" fill="#555">its number: the source-header pairs '
               f'behind it, as the compiler saw them (ninja -t deps)</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--svg", metavar="FILE")
    ap.add_argument("--force", action="store_true", help="replace an existing --svg file")
    ap.add_argument("--check", action="store_true", help="exit 1 when an arrow goes up")
    a = ap.parse_args()
    try:
        dep = deps(a.build)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"include_graph.py: cannot read the dependencies of '{a.build}': {e}", file=sys.stderr)
        return 2
    if not dep:
        print(f"include_graph.py: '{a.build}' has no compiled harness source (build it first)", file=sys.stderr)
        return 2
    files, arrows = graph(dep)
    folders = sorted(files, key=lambda f: (rank(f), f))
    up = [k for k in arrows if rank(k[0]) >= rank(k[1])]
    print(f"{len(folders)} folders, {sum(len(v) for v in files.values())} files, {len(arrows)} arrows between "
          f"folders ({sum(arrows.values())} source-header pairs), {len(up)} upward, "
          f"{floors(folders, arrows)} floors")
    for f in folders:
        print(f"  harness/{f}/: {len(files[f])} files")
    for (x, y), n in sorted(arrows.items(), key=lambda kv: (rank(kv[0][0]), rank(kv[0][1]))):
        print(f"  {x} -> {y}: {n}{'  (UP)' if (x, y) in up else ''}")
    if a.svg:
        if os.path.lexists(a.svg) and not a.force:
            print(f"include_graph.py: '{a.svg}' exists (add --force to replace it)", file=sys.stderr)
            return 2
        tmp = a.svg + ".tmp"
        with open(tmp, "x", encoding="utf-8") as f:
            f.write(svg(folders, files, arrows))
        os.replace(tmp, a.svg)
    return 1 if a.check and up else 0


if __name__ == "__main__":
    sys.exit(main())
