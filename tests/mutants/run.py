#!/usr/bin/env python3
"""run.py - the mutation audit: does the test suite catch realistic bugs?

Usage: tests/mutants/run.py [--tier fast|slow] [--work DIR] [--out FILE] [PATCH...]

Each tests/mutants/NN-area.patch plants one bug (its header says the area,
the build it is audited in, and the bug).  For each patch, in a scratch
worktree of HEAD (never in this checkout): apply it, rebuild, run the
tier's tests as `make test` (fast) or the rest of `make test-full` (slow:
in the plain build the slow tests; in the sanitizer build every integration
test but the smokes, and the long fuzz runs) run them in that build, with
--maxfail 1 (unit tests first: they have the highest priority), note the
first failing test, revert.  A kill counts only where the unmutated tree
passes that same test twice; a sanitizer report, only where the unmutated
tier leaves none; a patch that does not apply or build is reported as such,
not as a kill.  `--tier slow` is for the mutants the fast tier missed.  A
reused --work tree is first reset to this checkout's HEAD.

Mutants whose header says `Build: san` (memory-safety bugs) are audited in
a clang-14 ASan+UBSan build (as build-san/ is made), the others in a plain
build.  The table is printed and, with --out, written as TSV (a new file:
an existing one is refused).  Exit 0 when every audited mutant applied and
built, 2 on bad input.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HEADER = re.compile(r"^(Area|Build|Bug):\s*(.*?)\s*$", re.M)
AREAS = ("sample", "probe", "replay", "stats", "writers", "counters", "matrix", "merge", "verdict")
# what `make test` (fast) and the rest of `make test-full` (slow) run in each build (Makefile's SUITES_*)
SUITES = {
    ("fast", "plain"): ["--suite", "fast"],
    ("fast", "san"): ["--suite", "unit", "--suite", "smoke", "--suite", "fuzz", "--no-suite", "slow"],
    ("slow", "plain"): ["--suite", "slow"],
    ("slow", "san"): ["--suite", "integration", "--suite", "slow", "--no-suite", "smoke", "--no-suite", "benchmarks"],
}


def die(msg):
    print(f"run.py: {msg}", file=sys.stderr)
    sys.exit(2)


def header(path):
    """The patch's Area/Build/Bug lines, checked: one line error otherwise."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head = text.split("diff --git", 1)[0]
    fields = dict(HEADER.findall(head))
    if set(fields) != {"Area", "Build", "Bug"}:
        die(f"'{path}': the header needs Area:, Build: and Bug: lines before the diff")
    if fields["Area"] not in AREAS:
        die(f"'{path}': area '{fields['Area']}' is not one of {', '.join(AREAS)}")
    if fields["Build"] not in ("plain", "san"):
        die(f"'{path}': build '{fields['Build']}' is not plain or san")
    return fields


def sh(cmd, cwd, env=None, quiet=True):
    return subprocess.run(cmd, cwd=cwd, env=env, text=True,
                          stdout=subprocess.PIPE if quiet else None,
                          stderr=subprocess.STDOUT if quiet else None)


class Tree:
    """A scratch worktree of HEAD with one build of the kind a mutant needs."""

    def __init__(self, work):
        self.dir = os.path.join(work, "tree")
        if not os.path.isdir(self.dir):
            p = sh(["git", "-C", ROOT, "worktree", "add", "--detach", self.dir, "HEAD"], ROOT)
            if p.returncode:
                die(f"cannot make a worktree in '{self.dir}': {p.stdout.strip()}")
        # a tree reused from an earlier (perhaps interrupted) audit: this checkout's HEAD, no change left
        head = sh(["git", "-C", ROOT, "rev-parse", "HEAD"], ROOT).stdout.strip()
        p = sh(["git", "checkout", "-q", "--detach", head], self.dir)
        p2 = sh(["git", "reset", "-q", "--hard", head], self.dir)
        if p.returncode or p2.returncode or sh(["git", "status", "--porcelain", "-uno"], self.dir).stdout.strip():
            die(f"cannot reset the work tree '{self.dir}' to {head[:12]}: {(p.stdout + p2.stdout).strip()}")
        # the dashboard's browser test needs node_modules; share this checkout's
        nm = os.path.join(ROOT, "node_modules")
        if os.path.isdir(nm) and not os.path.exists(os.path.join(self.dir, "node_modules")):
            os.symlink(nm, os.path.join(self.dir, "node_modules"))
        self.builds = {}

    def build(self, kind):
        b = os.path.join(self.dir, "build" if kind == "plain" else "build-san")
        if kind not in self.builds:
            env = dict(os.environ)
            args = ["meson", "setup", b]
            if kind == "san":
                env["CC"] = "clang-14"
                args += ["-Dbuildtype=debugoptimized", "-Dsanitize_harness=address,undefined", "-Dfuzz=true"]
            if not os.path.exists(os.path.join(b, "build.ninja")):
                p = sh(args, self.dir, env)
                if p.returncode:
                    die(f"meson setup failed in '{b}':\n{p.stdout[-2000:]}")
            self.builds[kind] = b
        return b

    def compile(self, kind):
        p = sh(["meson", "compile", "-C", self.build(kind)], self.dir)
        return p.returncode == 0, p.stdout

    def apply(self, patch, reverse=False):
        return sh(["git", "apply"] + (["-R"] if reverse else []) + [patch], self.dir).returncode == 0

    def tests(self, kind, tier, names=None, maxfail=1, log="mutant"):
        """Run the tier (or the named tests); the names of those that failed."""
        b = self.build(kind)
        env = dict(os.environ, MB_SCHEMA=os.path.join(b, "schema.json"))
        if kind == "san":
            if tier == "fast":
                env["FUZZ_SECONDS"] = "10"
            env["TUNE_SEEDS"] = "3"
            shutil.rmtree(os.path.join(b, "sanitizer"), ignore_errors=True)
        cmd = ["meson", "test", "-C", b, "--no-rebuild", "--logbase", log]
        cmd += names or SUITES[(tier, kind)]
        if maxfail:
            cmd += ["--maxfail", str(maxfail)]
        path = os.path.join(b, "meson-logs", log + ".json")
        if os.path.exists(path):
            os.unlink(path)
        sh(cmd, self.dir, env)
        failed = []
        if not os.path.exists(path):
            return None  # meson ran no test: the tree or the build is broken
        with open(path, encoding="utf-8") as f:
            for line in f:
                t = json.loads(line)
                if t["result"] in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"):
                    failed.append(t["name"].rpartition(" / ")[2])  # "project:suites / name"
        if kind == "san":
            rep = glob.glob(os.path.join(b, "sanitizer", "report.*"))
            if rep and not failed:
                failed.append("sanitizer-report")
        return failed


def print_table(results, tier, flaky=()):
    """The table (printed), as TSV lines; a kill the clean tree repeats is a flaky-kill."""
    lines = ["mutant\tarea\tbuild\ttier\tresult\ttest\tseconds\tbug"]
    for name, h, verdict, test, secs in results:
        if verdict == "killed" and (h["Build"], test) in flaky:
            verdict = "flaky-kill"
        lines.append(f"{name}\t{h['Area']}\t{h['Build']}\t{tier}\t{verdict}\t{test}\t{secs:.0f}\t{h['Bug']}")
    print("\n".join(lines))
    killed = sum(1 for l in lines[1:] if l.split("\t")[4] == "killed")
    print(f"{tier}: {killed} of {len(results)} killed")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("patches", nargs="*", help="patches (default: tests/mutants/*.patch)")
    ap.add_argument("--tier", choices=("fast", "slow"), default="fast")
    ap.add_argument("--work", help="scratch folder (default: a new one in /tmp; kept, with its builds)")
    ap.add_argument("--out", help="TSV of the results (a new file)")
    a = ap.parse_args()
    patches = a.patches or sorted(glob.glob(os.path.join(HERE, "*.patch")))
    if not patches:
        die("no patches")
    heads = {p: header(p) for p in patches}
    if a.out and os.path.lexists(a.out):
        die(f"'{a.out}' exists: name a new file")
    work = a.work or tempfile.mkdtemp(prefix="mb-mutants-")
    os.makedirs(work, exist_ok=True)
    tree = Tree(work)
    results = []
    for p in patches:
        h = heads[p]
        name = os.path.basename(p)
        t0 = time.monotonic()
        if not tree.apply(os.path.abspath(p)):
            results.append((name, h, "does-not-apply", "", 0))
            print(f"{name}: does not apply", flush=True)
            continue
        try:
            ok, _ = tree.compile(h["Build"])
            if not ok:
                verdict, test = "does-not-build", ""
            else:
                failed = tree.tests(h["Build"], a.tier)
                if failed is None:
                    verdict, test = "no-test-log", ""
                else:
                    verdict, test = ("killed", failed[0]) if failed else ("survived", "")
        finally:
            if not tree.apply(os.path.abspath(p), reverse=True):
                print_table(results, a.tier)
                die(f"'{name}' cannot be reverted in '{tree.dir}': fix the worktree by hand")
        results.append((name, h, verdict, test, time.monotonic() - t0))
        print(f"{name}: {verdict} {test} ({time.monotonic() - t0:.0f} s)", flush=True)
    # a kill counts only where the unmutated tree passes the killing test twice
    flaky = set()
    for kind in ("plain", "san"):
        killers = sorted({r[3] for r in results if r[2] == "killed" and r[1]["Build"] == kind
                          and r[3] != "sanitizer-report"})
        if not killers:
            continue
        tree.compile(kind)
        for i in range(2):
            flaky |= {(kind, n) for n in tree.tests(kind, a.tier, names=killers, maxfail=0, log=f"clean{i}") or []}
    if any(r[2] == "killed" and r[3] == "sanitizer-report" for r in results):
        # a report counts as a kill only where the unmutated tier leaves none
        tree.compile("san")
        if tree.tests("san", a.tier, maxfail=0, log="clean-san") != []:
            flaky.add(("san", "sanitizer-report"))
    lines = print_table(results, a.tier, flaky)
    print(f"work tree {tree.dir}")
    if a.out:
        with open(a.out, "x", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
    return 0 if all(r[2] in ("killed", "survived") for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
