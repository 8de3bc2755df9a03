#!/usr/bin/env python3
"""test_flamegraph.py SOURCE_ROOT - scripts/flamegraph.py on the canned
tests/fixtures/perf-script-small.txt (`perf script --no-inline -F
tid,period,event,ip,sym,dso` of 3 page-faults, 2 cpu-clock, 1 madvise and 1
brk sample) and perf-report-stats-small.txt (5 page-faults samples lost):
the folded stacks line by line, the lost samples, the SVG's sections,
colours by kind, tooltips and the summary line."""
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
from mallocbench import flamegraph as fg
from mbtest import FAILS, check, check_eq  # noqa: E402

FIX = os.path.join(ROOT, "tests", "fixtures")
SCRIPT = os.path.join(FIX, "perf-script-small.txt")
STATS = os.path.join(FIX, "perf-report-stats-small.txt")
W = "[mallocbench-worker]"
USER = (f"_start {W};__libc_start_main@@GLIBC_2.34 [libc.so.6];__libc_start_call_main [libc.so.6];"
        f"main {W};tensor_copy_run {W}")
WANT = {
    f"page-faults;{USER};tc_step {W};__memmove_avx512_unaligned_erms [libc.so.6]": 2,
    "page-faults;[unwinding stopped];[libjemalloc.so.2];[libjemalloc.so.2]": 1,
    (f"cpu-clock;{USER};tc_step {W};__memmove_avx512_unaligned_erms [libc.so.6];asm_exc_page_fault [k];"
     "exc_page_fault [k];handle_mm_fault [k];__handle_mm_fault [k];do_anonymous_page [k];"
     "get_page_from_freelist [k];clear_page_erms [k]"): 1,
    f"cpu-clock;{USER}": 1,
    (f"syscalls:sys_enter_madvise;{USER};tc_step {W};[libjemalloc.so.2];[libjemalloc.so.2];"
     "__madvise [libc.so.6];entry_SYSCALL_64_after_hwframe [k];do_syscall_64 [k];syscall_trace_enter [k]"): 1,
    # the inlined frame takes the object of sbrk, the frame at its address
    ("syscalls:sys_enter_brk;_dl_start_user [ld-linux-x86-64.so.2];sbrk [libc.so.6];"
     "__GI___sbrk [libc.so.6];__brk [libc.so.6]"): 1,
}


def case_fold():
    with open(SCRIPT) as f:
        folded, periods, stopped = fg.fold_script(f.read())
    got = {s: c for ev in folded.values() for s, c in ev.items()}
    for stack in sorted(set(WANT) | set(got)):
        check_eq(got.get(stack), WANT.get(stack), f"folded {stack[:90]}")
    check_eq(periods, {"page-faults": 64, "cpu-clock": 250000, "syscalls:sys_enter_madvise": 1,
                       "syscalls:sys_enter_brk": 1}, "periods")
    check_eq(stopped.get("page-faults"), 1, "stacks with unwinding stopped")
    with open(STATS) as f:
        check_eq(fg.parse_lost(f.read()), {"page-faults": 5}, "lost samples from perf report --stats")
    check_eq(fg.frame_kind("clear_page_erms [k]"), fg.KERNEL, "kind of a kernel frame")
    check_eq(fg.frame_kind("[libjemalloc.so.2]"), fg.ALLOCATOR, "kind of an allocator frame")
    check_eq(fg.frame_kind("f [libmine.so]", ("libmine.so",)), fg.ALLOCATOR, "kind of a user's allocator")
    check_eq(fg.frame_kind("__madvise [libc.so.6]"), fg.LIBC, "kind of a libc frame")
    check_eq(fg.frame_kind(f"main {W}"), fg.PROGRAM, "kind of a program frame")
    # folded text round trip
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "x.folded")
        fg.write_folded(folded, path)
        with open(path) as f:
            text = f.read()
        check_eq(fg.read_folded(text), folded, "folded file read back")
        check(text.splitlines()[0].startswith("page-faults;"), "page-faults first in the folded file")


def svg_frames(root):
    """[(title, fill, width)] of every frame rectangle."""
    ns = "{http://www.w3.org/2000/svg}"
    out = []
    for g in root.iter(ns + "g"):
        t, r = g.find(ns + "title"), g.find(ns + "rect")
        if t is not None and r is not None:
            out.append((t.text, r.get("fill"), float(r.get("width"))))
    return out


def case_cli():
    """The script as profile.c runs it, on saved text: files, SVG, summary."""
    with tempfile.TemporaryDirectory() as tmp:
        folded, svg = os.path.join(tmp, "c.folded"), os.path.join(tmp, "c.svg")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "flamegraph.py"), "--script-text", SCRIPT,
                            "--stats-text", STATS, "--folded", folded, "--svg", svg, "--title", "tensor_copy under jemalloc",
                            "--allocator-lib", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"],
                           capture_output=True, text=True)
        check_eq(p.returncode, 0, f"exit code ({p.stderr.strip()})")
        line = p.stdout.strip()
        check("page-faults 3 samples (lost 5;" in line, f"summary counts page faults and lost: {line}")
        check("madvise 1 samples (lost 0; callers: [libjemalloc.so.2] 100%)" in line, f"summary madvise caller: {line}")
        check("in page faults 50%" in line, f"summary: cpu-clock share in page faults: {line}")
        with open(folded) as f:
            check_eq(len(f.read().splitlines()), len(WANT), "folded lines")
        root = ET.parse(svg).getroot()  # well-formed XML
        text = ET.tostring(root, encoding="unicode")
        check("<script" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", ""),
              "self-contained: no script, no link")
        check("tensor_copy under jemalloc" in text, "title in the SVG")
        frames = svg_frames(root)
        titles = [t for t, _, _ in frames]
        check(any(t.startswith("page-faults - 3 samples (100.00%), about 192 faults") for t in titles),
              "root tooltip: samples, percent, faults estimated from the period")
        check(any(t.startswith("clear_page_erms [k] - 1 samples (50.00%)") for t in titles), "kernel frame tooltip")
        for name, kind in [("clear_page_erms [k]", fg.KERNEL), ("[libjemalloc.so.2]", fg.ALLOCATOR),
                           ("__madvise [libc.so.6]", fg.LIBC), (f"tc_step {W}", fg.PROGRAM)]:
            fills = {fill for t, fill, _ in frames if t.startswith(name + " - ")}
            check_eq(fills, {fg.frame_colour(name, kind)}, f"colour of {name}")
        hues = {kind: fg.PALETTE[kind][:2] for kind in (fg.KERNEL, fg.ALLOCATOR, fg.LIBC, fg.PROGRAM)}
        spans = sorted(hues.values())
        check(all(a[1] < b[0] for a, b in zip(spans, spans[1:])), f"kinds have disjoint hues: {hues}")
        # widths by samples: in page-faults, _start has 2 of 3 samples
        full = [w for t, _, w in frames if t.startswith("page-faults - ")][0]
        start = [w for t, _, w in frames if t.startswith(f"_start {W} - 2 samples")]
        check(bool(start) and abs(start[0] - full * 2 / 3) < 0.01, f"width by samples: {start} of {full}")
        heads = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "h"]
        check_eq([h.split(":")[0] if h.startswith("page") or h.startswith("cpu") else h.split(": ")[0] for h in heads],
                 ["page-faults", "cpu-clock", "syscalls:sys_enter_madvise", "syscalls:sys_enter_brk"],
                 "one section per event, in order")
        check("lost samples: 5 of 12 (page-faults 5" in text, f"lost samples in the subtitle: {text[:600]}")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "flamegraph.py"), "--script-text",
                            os.path.join(tmp, "missing.txt"), "--folded", folded, "--svg", svg, "--force"],
                           capture_output=True, text=True)
        check_eq(p.returncode, 2, "missing input: exit 2")
        check("cannot read" in p.stderr and "missing.txt" in p.stderr, f"missing input named: {p.stderr.strip()}")


def main():
    case_fold()
    case_cli()
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
