#!/usr/bin/env python3
"""test_readme.py - the README's examples stay true to today's output.

Usage: test_readme.py MALLOCBENCH README.  Every example block in the README
(and in docs/*.md beside it) is announced by a comment
    <!-- example: COMMAND | date YYYY-MM-DD | commit SHA [| check: COMMAND] -->
and followed by a fenced block holding that command's real output.  The test
runs the command (`check:` instead, when the command itself is too slow for a
test; `mallocbench` is the harness given, `{run}` a small real run of every
installed allocator that the test makes once) and compares the block's shape
with today's output: numbers (and '-', a value not measured) become #,
absolute paths their file name, SI prefixes and verdict words drop out, runs
of spaces are one space.  Every line of the block must then appear in the
output, in order; lines between two `...` lines are one contiguous run, and a
run not cut by `...` must begin and end where the output's paragraph does,
so a new row or column fails it.  Commands run from the source root without
the allocator variables of the caller's environment, as a user's shell would.
Also: each summary column and verdict word is explained in the README, each
link to a file exists, each `make TARGET` the README names is a Makefile
target, and the Layout block names every source file of the code directories
and no file that does not exist.  Exit 77 when a family is not installed (the examples list them all).
"""
import glob
import os
import re
import shlex
import subprocess
import sys
import tempfile

SKIP = 77
FAILS = []
EXAMPLE = re.compile(r"^<!--\s*example:\s*(.*?)\s*-->[ \t]*\n[ \t]*```[^\n]*\n(.*?)\n[ \t]*```", re.S | re.M)
# a marker anywhere but in an indented code block or a code span
ANNOUNCED = re.compile(r"^(?! {4})[^`\n]*<!--\s*example:", re.M)
# the run behind {run}: every installed allocator on tensor_copy, the workload of
# the examples, small and short; 6 blocks, the fewest at which compare prints
# every CI and a verdict other than "too few"
RUN = ("mallocbench run -q -w tensor_copy:size=1M,count=4,steps=5,warmup=1 -r 6 "
       "--warmup-runs 0 --timeout 1m -o {out}")


def fail(what):
    """Recorded, printed together at the end (after any output it refers to)."""
    FAILS.append(what)


def parse_stamp(text):
    """'CMD | date D | commit C | check: X [| exact]' -> dict; None when malformed.  exact: the
    block is the check's output line for line (figures included), which therefore reads only
    committed files (docs/examples/): the README's figures come from them through a script."""
    parts = [p.strip() for p in text.split(" | ")]
    out = {"command": parts[0]}
    for p in parts[1:]:
        if p == "exact":
            out["exact"] = True
            continue
        key, _, val = p.partition(" ")
        key = key.rstrip(":")
        if key not in ("date", "commit", "check") or not val.strip():
            return None
        out[key] = val.strip()
    ok = (re.fullmatch(r"\d{4}-\d\d-\d\d", out.get("date", "")) and
          re.fullmatch(r"[0-9a-f]{7,40}", out.get("commit", "")))
    return out if ok else None


def examples(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    found = []
    blocks = list(EXAMPLE.finditer(text))
    if len(ANNOUNCED.findall(text)) != len(blocks):
        fail(f"{path}: an example comment is not followed at once by a fenced block")
    for m in blocks:
        stamp = parse_stamp(m.group(1))
        line = text.count("\n", 0, m.start()) + 1
        if stamp is None:
            fail(f"{path}:{line}: example comment needs 'COMMAND | date YYYY-MM-DD | commit SHA': {m.group(1)!r}")
            continue
        found.append((f"{os.path.basename(path)}:{line}", stamp, m.group(2).split("\n")))
    return found


ALLOC_ENV = ("MALLOC_", "GLIBC_TUNABLES", "JE_MALLOC_CONF", "TCMALLOC_", "MIMALLOC_", "SCUDO_OPTIONS",
             "GWP_ASAN_OPTIONS", "TBB_", "LD_PRELOAD")
VERDICTS = ("within noise", "too few", "improved?", "regressed?", "improved", "regressed", "negligible",
            "trade-off", "unpaired")
PATH = re.compile(r"(?<![\w.])/(?:[^\s:/,]+/)+([^\s:/,]+)")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")
PREFIXED = re.compile(r"#( ?)(?:Ki|Mi|Gi|Ti|k|M|G|T|µ|u|m|n)?(B/s|B|iB|s|ops/s|steps/s)(?![\w/])")


def shape(line):
    """What of a line must not drift: words, column layout, units; not values."""
    s = PATH.sub(r"\1", line)
    for v in VERDICTS:
        s = s.replace(v, "VERDICT")
    s = re.sub(r"(?<!\S)~(?!\S)", "VERDICT", s)
    s = NUMBER.sub("#", s)
    s = re.sub(r"(?<!\S)-(?!\S)", "#", s)  # a value not measured is still a value cell
    s = PREFIXED.sub(r"#\1\2", s)
    return " ".join(s.split())


def chunks(block):
    """The block as runs of lines between '...' lines: (lines, open_before, open_after)."""
    out, cur, open_before = [], [], False
    for line in block:
        if line.strip() == "...":
            if cur:
                out.append((cur, open_before, True))
            cur, open_before = [], True
        else:
            cur.append(line)
    if cur:
        out.append((cur, open_before, False))
    return out


def exact(line):
    return line.rstrip()


def match(block, output, same=shape):
    """None when the block's shape (same=exact: its very text) is found in output, else why not."""
    got = [same(l) for l in output]
    pos = 0
    for lines, open_before, open_after in chunks(block):
        want = [same(l) for l in lines]
        while want and not want[0]:
            want.pop(0)
        while want and not want[-1]:
            want.pop()
        hit = None
        for i in range(pos, len(got) - len(want) + 1):
            if got[i:i + len(want)] != want:
                continue
            starts = open_before or i == 0 or not got[i - 1]
            end = i + len(want)
            ends = open_after or end == len(got) or not got[end]
            if starts and ends:
                hit = i
                break
        if hit is None:
            return explain(want, got)
        pos = hit + len(want)
    return None


def explain(want, got):
    """Why want is not in got: the first differing line where it matches best."""
    best = max(range(max(1, len(got))), key=lambda i: sum(a == b for a, b in zip(got[i:i + len(want)], want)))
    for k, w in enumerate(want):
        g = got[best + k] if best + k < len(got) else "(end of output)"
        if w != g:
            return f"README has {w!r} where today's output has {g!r}"
    before = got[best - 1] if best > 0 else ""
    after = got[best + len(want)] if best + len(want) < len(got) else ""
    return (f"today the lines continue a longer paragraph (before: {before!r}, after: {after!r}); "
            "show the rest or cut it with a '...' line")


class Runner:
    def __init__(self, mb, root, tmp):
        self.mb, self.root, self.tmp, self._run = mb, root, tmp, None

    def command(self, cmd):
        return re.sub(r"(?<![\w/.-])mallocbench(?![\w-])", shlex.quote(self.mb), cmd)

    def small_run(self):
        if self._run is None:
            out = os.path.join(self.tmp, "run.csv")
            text, rc = self.shell(RUN.format(out=out))
            if rc != 0:
                fail(f"the small run for {{run}} failed (exit {rc}):\n{text}")
            self._run = out
        return self._run

    def shell(self, cmd):
        # as a user's shell runs it: without the allocator variables meson sets
        # (MALLOC_PERTURB_), which --print-commands would show being unset
        env = {k: v for k, v in os.environ.items() if not k.startswith(ALLOC_ENV)}
        p = subprocess.run(["sh", "-c", self.command(cmd)], cwd=self.root, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=600, env=env)
        # whether the machine is busy is today's, not the example's
        text = "".join(l for l in p.stdout.splitlines(True) if "warning: the machine is not quiet" not in l)
        return text, p.returncode

    def output(self, stamp):
        cmd = stamp.get("check", stamp["command"])
        if cmd.startswith("make "):
            fail(f"'{cmd}' is too slow for a test: give the example a '| check: COMMAND'")
            return None
        if "{run}" in cmd:
            cmd = cmd.replace("{run}", shlex.quote(self.small_run()))
        text, _ = self.shell(cmd)  # an example may show a refusal: the output is what counts
        return text.split("\n")


def check_examples(mb, root, files):
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(mb, root, tmp)
        for path in files:
            for where, stamp, block in examples(path):
                if stamp.get("exact") and "docs/examples/" not in stamp.get("check", ""):
                    fail(f"{where}: an exact example must read a committed file (docs/examples/): {stamp}")
                    continue
                output = runner.output(stamp)
                if output is None:
                    continue
                why = match(block, output, exact if stamp.get("exact") else shape)
                if why:
                    fail(f"{where}: the example of '{stamp['command']}' no longer matches: {why}")
                    print("today's output:\n" + "\n".join(output), file=sys.stderr)


def check_links(files):
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            file = os.path.join(os.path.dirname(path), target.split("#")[0])
            if not os.path.exists(file):
                fail(f"{path}: link to '{target}': no such file")


def make_targets(root):
    with open(os.path.join(root, "Makefile"), encoding="utf-8") as f:
        text = f.read()
    targets = set()
    for m in re.finditer(r"^([A-Za-z$(][^:=\n]*):(?!=)", text, re.M):
        targets.update(m.group(1).split())
    return targets


def check_make(root, readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    code = re.findall(r"```[^\n]*\n(.*?)```", text, re.S) + re.findall(r"`([^`\n]+)`", text)
    named = set()
    for span in code:
        for m in re.finditer(r"(?:^|[\s;&|])make((?:[ \t]+\S+)+)", span, re.M):
            words = [w for w in m.group(1).split() if "=" not in w and not w.startswith("-")]
            if words and not words[0].startswith("#"):
                named.add(words[0])
    targets = make_targets(root)
    if not {"compare", "test"} <= named:
        fail(f"{readme}: the README should name `make compare` and `make test` (named: {sorted(named)})")
    for t in sorted(named - targets):
        fail(f"{readme}: names `make {t}`, which is not a Makefile target")


LAYOUT_DIRS = ("allocators", "workloads", "harness", "common", "scripts", "record")
SOURCE = re.compile(r"(?<![\w*/.-])([\w-]+\.(?:c|h|py|sh|ini))\b")


def check_layout(root, readme):
    """The Layout block names only files that exist, and every source file
    (.c, .py) of the code directories and their folders (an indented `name/`
    is a folder of the one above): a new file must be placed in it."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Layout\n.*?```[^\n]*\n(.*?)```", text, re.S | re.M)
    if not m:
        fail(f"{readme}: no code block under '## Layout'")
        return
    named, top, cur = set(), "", ""
    for line in m.group(1).split("\n"):
        d = re.match(r"(\s*)([\w.]+)/\s", line)
        if d:  # a folder at the line's start; indented: a folder of the one above
            if d.group(1):
                cur = os.path.join(top, d.group(2))
            else:
                top = cur = d.group(2)
        for name in SOURCE.findall(line):
            path = os.path.join(cur, name) if cur else name
            named.add(path)
            if not os.path.exists(os.path.join(root, path)):
                fail(f"{readme}: Layout names '{path}', which does not exist")
    for d in LAYOUT_DIRS:
        for dirpath, dirs, names in os.walk(os.path.join(root, d)):
            # the harness's stage folders and the Python package are named file by file
            dirs[:] = [x for x in dirs if x != "__pycache__" and d in ("harness", "scripts")]
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                if name.endswith((".c", ".py")) and rel not in named:
                    fail(f"{readme}: Layout does not name '{rel}'")


def check_vocabulary(root, readme):
    """Every summary column and verdict word is explained (in bold) in the README."""
    from mallocbench import stats
    from mallocbench import summary
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    words = [v for v in stats.VERDICTS if v != "-"] + [c for c in summary.COLS if c not in ("config", "vs")] + ["vs glibc"]
    for w in words:
        if f"**{w}**" not in text:
            fail(f"{readme}: '{w}' is never explained (expected **{w}** in *Reading a result*)")


def main():
    mb, readme = sys.argv[1], os.path.abspath(sys.argv[2])
    root = os.path.dirname(readme)
    docs = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    check_links([readme] + docs)
    check_make(root, readme)
    check_layout(root, readme)
    check_vocabulary(root, readme)
    listed = subprocess.run([mb, "list", "allocators"], capture_output=True, text=True)
    absent = [l.split()[0] for l in listed.stdout.splitlines()[1:] if len(l.split()) > 1 and l.split()[1] != "yes"]
    if listed.returncode != 0:
        fail(f"{mb} list allocators: exit {listed.returncode}: {listed.stderr.strip()}")
    elif not absent:
        check_examples(mb, root, [readme] + docs)
    elif not FAILS:
        print(f"SKIP: the examples list every family; not installed: {', '.join(absent)} "
              "(scripts/deps.sh installs them); links, make targets and words checked", file=sys.stderr)
        return SKIP
    for f in FAILS:
        print("FAIL:", f, file=sys.stderr)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
