"""flamegraph.py - folded stacks and a self-contained SVG flame graph from a
`perf record --call-graph dwarf` profile (`mallocbench run --profile`).

From a perf.data:   flamegraph.py --perf-data P.data --folded OUT.folded --svg OUT.svg
From saved text:    flamegraph.py --script-text S.txt [--stats-text R.txt] ...
                    (S.txt: `perf script --no-inline -F tid,period,event,ip,sym,dso`;
                     R.txt: `perf report --stats`, for the lost samples)

One flame graph per event (page-faults, cpu-clock, the syscall tracepoints),
stacked in one SVG: root at the bottom, callers below callees, widths by
samples, colours by kind: kernel, allocator library, libc and the loader,
program.  Folded lines are "event;root;...;leaf COUNT"; kernel frames end in
" [k]", user frames name their object ("malloc [libjemalloc.so.2]"), frames
perf could not name are "[libjemalloc.so.2]", and a stack whose unwinding
stopped before the program's entry gets the root "[unwinding stopped]".
Prints one summary line: samples and lost samples per event, top frames.
Exit 2 with one line naming the cause when perf or the input fails.
"""
import argparse
import html
import os
import re
import ctypes
import subprocess
import sys
import zlib

from . import cli
from . import mbout

SCRIPT_FIELDS = "tid,period,event,ip,sym,dso"
KERNEL = "kernel"
ALLOCATOR = "allocator"
LIBC = "libc"
PROGRAM = "program"
MARKER = "marker"
KINDS = [(KERNEL, "kernel"), (ALLOCATOR, "allocator library"), (LIBC, "libc, loader, C++ runtime"),
         (PROGRAM, "program"), (MARKER, "event / unwinding stopped")]
# hue range and saturation per kind; the shade within comes from the frame's name
PALETTE = {KERNEL: (0, 18, 75), ALLOCATOR: (95, 135, 55), LIBC: (195, 220, 60), PROGRAM: (40, 55, 85),
           MARKER: (0, 0, 0)}
ALLOCATOR_NAMES = re.compile(r"jemalloc|tcmalloc|mimalloc|scudo|tbbmalloc|hoard|snmalloc|rpmalloc")
LIBC_NAMES = re.compile(r"^(libc|ld-linux|ld-musl|libm|libpthread|libdl|libstdc\+\+|libgcc_s)[.-]")
STOPPED = "[unwinding stopped]"
# the outermost frames of a stack unwound to its end
ENTRY_FRAMES = ("_start", "_dl_start_user", "clone", "clone3", "start_thread", "__clone", "__clone3")
EVENT_ORDER = ["page-faults", "cpu-clock", "syscalls:sys_enter_madvise", "syscalls:sys_enter_munmap",
               "syscalls:sys_enter_brk"]
UNITS = {"page-faults": "faults", "cpu-clock": "ns of CPU time"}
NOTES = {"page-faults": "the user stack at each faulting instruction: who touched memory the kernel had to map "
                        "(the kernel's work for it is under cpu-clock)",
         "cpu-clock": "where the process's CPU time went, kernel included: the fault handling tower stands on "
                      "the frame that faulted, the madvise work on the allocator that asked",
         "syscalls:": "every call, with the stack that made it: which allocator function asks the kernel"}
FAULT_ENTRY = ("asm_exc_page_fault [k]", "exc_page_fault [k]")
SYSCALL_ENTRY = ("entry_SYSCALL_64_after_hwframe [k]", "entry_SYSCALL_64 [k]", "do_syscall_64 [k]")


class ProfileError(Exception):
    pass


# ---------------------------------------------------------------- parsing

def event_name(token):
    """'page-faults/period=64/:' -> 'page-faults' (modifiers and colon dropped)."""
    token = token.rstrip(":")
    return token.split("/", 1)[0] if "/" in token else token


def parse_header(line):
    """A sample's first line "TID PERIOD EVENT:" -> (event, period), or None."""
    toks = line.split()
    for i in range(len(toks) - 1, 0, -1):
        if toks[i].endswith(":"):
            try:
                return event_name(toks[i]), int(toks[i - 1])
            except ValueError:
                return None
    return None


def parse_frame(line):
    """'ffffffff8123 handle_mm_fault ([kernel.kallsyms])' -> (addr, sym, dso)."""
    body = line.strip()
    addr, _, rest = body.partition(" ")
    cut = rest.rfind(" (")
    if cut < 0 or not rest.endswith(")"):
        return addr, rest.strip(), ""
    return addr, rest[:cut].strip(), rest[cut + 2:-1]


def is_kernel(addr, dso):
    try:
        high = int(addr, 16) >= 0xFFFF800000000000
    except ValueError:
        high = False
    return high and dso.startswith("[") and dso != "[unknown]"


def frame_names(frames):
    """The frames of one sample (leaf first, as perf prints them) as folded
    frame names, leaf first, and whether unwinding stopped short of the
    program's entry; an inlined frame (perf script without --no-inline)
    takes the object of the function it sits in, the next frame at its
    address."""
    names, stopped = [], False
    for i, (addr, sym, dso) in enumerate(frames):
        if addr.lower() == "ffffffffffffffff":
            stopped = True
            break
        if is_kernel(addr, dso):
            names.append(f"{sym} [k]")
            continue
        j = i
        while dso == "inlined" and j + 1 < len(frames) and frames[j + 1][0] == addr:
            j += 1
            dso = frames[j][2]
        base = os.path.basename(dso) if dso and dso != "inlined" else "unknown"
        names.append(f"[{base}]" if sym in ("", "[unknown]") else f"{sym} [{base}]")
    if names and not stopped:
        user = [n for n in names if not n.endswith(" [k]")]
        stopped = bool(user) and user[-1].split(" [", 1)[0] not in ENTRY_FRAMES
    return names, stopped


def fold_script(text):
    """perf script text -> ({event: {stack: samples}}, {event: period}, {event: stopped})."""
    folded, periods, stopped = {}, {}, {}
    for block in re.split(r"\n\s*\n", text):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines or lines[0].startswith("\t"):  # frames are tab-indented, headers not
            continue
        head = parse_header(lines[0])
        if not head:
            continue
        event, period = head
        names, cut = frame_names([parse_frame(l) for l in lines[1:]])
        stack = [event] + ([STOPPED] if cut else []) + names[::-1]
        key = ";".join(stack)
        counts = folded.setdefault(event, {})
        counts[key] = counts.get(key, 0) + 1
        periods[event] = period
        stopped[event] = stopped.get(event, 0) + (1 if cut else 0)
    return folded, periods, stopped


def parse_lost(text):
    """`perf report --stats` text -> {event: lost samples}: each event's
    "LOST_SAMPLES events" in its "<event> stats:" section."""
    lost, current = {}, None
    for line in text.splitlines():
        s = line.strip()
        if s.endswith(" stats:"):
            current = None if s == "Aggregated stats:" else event_name(s[: -len(" stats:")])
        elif current and s.startswith("LOST_SAMPLES events:"):
            lost[current] = int(s.split(":", 1)[1].split()[0])
    return lost


def ordered_events(events):
    known = [e for e in EVENT_ORDER if e in events]
    return known + sorted(e for e in events if e not in EVENT_ORDER)


def write_folded(folded, path, force=False):
    lines = [f"{stack} {folded[ev][stack]}\n" for ev in ordered_events(folded) for stack in sorted(folded[ev])]
    mbout.write(path, "".join(lines), force=force)


def read_folded(text):
    """Folded lines back to {event: {stack: samples}} (the renderer's input)."""
    folded = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack:
            ev = stack.split(";", 1)[0]
            folded.setdefault(ev, {})[stack] = folded.get(ev, {}).get(stack, 0) + int(n)
    return folded


# ---------------------------------------------------------------- frames

def allocator_objects(lib):
    """The names a preloaded library's frames carry: its file and the file its link points to."""
    return tuple(sorted({os.path.basename(lib), os.path.basename(os.path.realpath(lib))})) if lib else ()


def frame_kind(name, allocator_objs=()):
    if name.endswith(" [k]"):
        return KERNEL
    if not name.endswith("]") or name == STOPPED:
        return MARKER
    obj = name[name.rfind("[") + 1:-1]
    if obj in allocator_objs or ALLOCATOR_NAMES.search(obj):
        return ALLOCATOR
    if LIBC_NAMES.match(obj):
        return LIBC
    return PROGRAM


def frame_colour(name, kind):
    lo, hi, sat = PALETTE[kind]
    if kind == MARKER:
        return "rgb(200,200,200)"
    h = zlib.crc32(name.encode()) & 0xFFFF
    hue = lo + (hi - lo) * (h & 0xFF) / 255.0
    light = 55 + 15 * ((h >> 8) & 0xFF) / 255.0
    return f"hsl({hue:.0f},{sat}%,{light:.0f}%)"


def short_name(name):
    """Display text: the function without its object ("malloc"), or the object."""
    if name.endswith(" [k]"):
        return name[:-4]
    cut = name.rfind(" [")
    return name[:cut] if cut > 0 else name


def top_frames(counts, n=3):
    """The leaf frames with the most samples: [(name, samples)]."""
    self_counts = {}
    for stack, c in counts.items():
        leaf = stack.rsplit(";", 1)[-1]
        self_counts[leaf] = self_counts.get(leaf, 0) + c
    return sorted(self_counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def top_callers(counts, n=2):
    """For syscalls: the first frame from the leaf outside the kernel and libc,
    the code that asked for the call: [(name, samples)]."""
    callers = {}
    for stack, c in counts.items():
        frames = stack.split(";")[1:]
        who = next((f for f in reversed(frames) if frame_kind(f) in (ALLOCATOR, PROGRAM)), "[libc, loader]")
        callers[who] = callers.get(who, 0) + c
    return sorted(callers.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


# ---------------------------------------------------------------- tree and SVG

def build_tree(counts):
    """{stack: samples} -> nested dict {name: [samples, children]} rooted at the event."""
    root = {}
    for stack, c in counts.items():
        level = root
        for frame in stack.split(";"):
            node = level.setdefault(frame, [0, {}])
            node[0] += c
            level = node[1]
    return root


def tree_depth(level):
    return max((1 + tree_depth(node[1]) for node in level.values()), default=0)


WIDTH, PAD, ROW, FONT = 1200, 10, 16, 11
CHAR_W = FONT * 0.6


def rect_svg(name, x, y, w, samples, total, period, unit, allocator_objs):
    kind = frame_kind(name, allocator_objs)
    pct = 100.0 * samples / total if total else 0.0
    est = f", about {samples * period:,} {unit}" if unit and period > 1 else ""
    tip = html.escape(f"{name} - {samples:,} samples ({pct:.2f}%){est}; {kind}")
    out = [f'<g><title>{tip}</title><rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" '
           f'fill="{frame_colour(name, kind)}" rx="2"/>']
    chars = int((w - 4) / CHAR_W)
    text = short_name(name)
    if chars >= 3:
        shown = text if len(text) <= chars else text[: chars - 2] + ".."
        out.append(f'<text x="{x + 3:.2f}" y="{y + ROW - 4}">{html.escape(shown)}</text>')
    out.append("</g>")
    return "".join(out)


def draw_level(level, x, y, scale, total, period, unit, allocator_objs, out):
    """Children in name order, left to right; each one's callees above it."""
    for name in sorted(level):
        samples, children = level[name]
        w = samples * scale
        if w >= 0.3:
            out.append(rect_svg(name, x, y, w, samples, total, period, unit, allocator_objs))
            draw_level(children, x, y - ROW, scale, total, period, unit, allocator_objs, out)
        x += w


def share(counts, frames):
    """The fraction of samples whose stack holds one of frames."""
    total = sum(counts.values())
    hit = sum(c for stack, c in counts.items() if any(f in stack.split(";") for f in frames))
    return hit / total if total else 0.0


def period_text(event, total, period):
    if event == "cpu-clock":
        return f", 1 sample per {period / 1e6:g} ms of CPU time (about {total * period / 1e6:,.0f} ms)"
    if period > 1:
        return f", 1 sample per {period:,} {UNITS.get(event, 'events')} (about {total * period:,})"
    return " (every call)"


def event_note(event):
    return NOTES["syscalls:"] if event.startswith("syscalls:") else NOTES.get(event, "")


def section_heading(event, total, period, lost, stopped):
    est = period_text(event, total, period)
    lost_txt = "lost samples unknown" if lost is None else f"{lost:,} lost"
    return f"{event}: {total:,} samples{est}; {lost_txt}; {stopped:,} with unwinding stopped"


def draw_section(event, counts, y0, meta, allocator_objs, out):
    """One event's flame graph below y0; returns the y after it."""
    period = meta["periods"].get(event, 1)
    total = sum(counts.values())
    tree = build_tree(counts)
    depth = tree_depth(tree)
    heading = section_heading(event, total, period, meta["lost"].get(event), meta["stopped"].get(event, 0))
    out.append(f'<text class="h" x="{PAD}" y="{y0 + 14}">{html.escape(heading)}</text>'
               f'<text class="n" x="{PAD}" y="{y0 + 28}">{html.escape(event_note(event))}</text>')
    base = y0 + 36 + (depth - 1) * ROW
    scale = (WIDTH - 2 * PAD) / total if total else 0
    draw_level(tree, PAD, base, scale, total, period, UNITS.get(event, "calls"), allocator_objs, out)
    return base + ROW + 12


def legend(y, out):
    x = PAD
    for kind, label in KINDS:
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{frame_colour(label, kind)}"/>'
                   f'<text x="{x + 16}" y="{y + 10}">{html.escape(label)}</text>')
        x += 24 + len(label) * CHAR_W


def render_svg(folded, meta, title, allocator_objs=()):
    events = ordered_events(folded)
    body, y = [], 50
    legend(y - 14, body)
    for ev in events:
        y = draw_section(ev, folded[ev], y + 6, meta, allocator_objs, body)
    lost = meta["lost"]
    nlost, nsamples = sum(lost.values()), sum(sum(folded[e].values()) for e in events)
    lost_txt = (f"lost samples: {nlost:,} of {nsamples + nlost:,}" +
                ("" if not nlost else " (" + ", ".join(f"{e} {lost.get(e, 0):,}" for e in events) + ")"))
    if meta.get("lost_unknown"):
        lost_txt = "lost samples: unknown (no perf report --stats)"
    sub = f"perf record --call-graph dwarf; {lost_txt}; hover a frame for its samples"
    head = [f'<?xml version="1.0" encoding="UTF-8"?>',
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{y + PAD}" '
            f'viewBox="0 0 {WIDTH} {y + PAD}" font-family="Verdana,DejaVu Sans,sans-serif" font-size="{FONT}">',
            "<style>text{fill:#000}.t{font-size:16px;font-weight:bold}.h{font-weight:bold}.n{fill:#555}</style>",
            f'<rect width="100%" height="100%" fill="#fdfdf8"/>',
            f'<text class="t" x="{PAD}" y="18">{html.escape(title)}</text>',
            f'<text x="{PAD}" y="32">{html.escape(sub)}</text>']
    return "\n".join(head + body + ["</svg>", ""])


def summary_line(folded, meta):
    parts = []
    for ev in ordered_events(folded):
        counts = folded[ev]
        total = sum(counts.values())
        lost = meta["lost"].get(ev)
        if ev.startswith("syscalls:"):
            top = "callers: " + ", ".join(f"{n} {100.0 * c / total:.0f}%" for n, c in top_callers(counts))
        else:
            top = "top: " + ", ".join(f"{short_name(n)} {100.0 * c / total:.0f}%" for n, c in top_frames(counts))
        if ev == "cpu-clock":
            top += (f"; in page faults {100 * share(counts, FAULT_ENTRY):.0f}%,"
                    f" in syscalls {100 * share(counts, SYSCALL_ENTRY):.0f}%")
        lost_txt = "?" if lost is None else f"{lost}"
        parts.append(f"{ev.replace('syscalls:sys_enter_', '')} {total} samples (lost {lost_txt}; {top})")
    return "; ".join(parts) if parts else "no samples"


# ---------------------------------------------------------------- perf

PERF_TIMEOUT_S = 900  # perf script opens the profiled process's files by name: one may never answer


def _die_with_us():
    """In perf's child before its exec: SIGKILL when this script dies (a SIGTERM that ends the
    script must not leave a root perf reading a profiled process's files alone)."""
    try:
        ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass


def run_perf(perf, args):
    try:
        p = subprocess.run([perf, *args], capture_output=True, text=True, errors="replace", timeout=PERF_TIMEOUT_S,
                           stdin=subprocess.DEVNULL, preexec_fn=_die_with_us)
    except OSError as e:
        raise ProfileError(f"cannot run '{perf}': {e.strerror}")
    except subprocess.TimeoutExpired:
        raise ProfileError(f"perf {args[0]} did not finish in {PERF_TIMEOUT_S} s (a file of the profiled process's "
                           f"that it reads may block)")
    if p.returncode != 0:
        last = [l for l in p.stderr.splitlines() if l.strip()]
        raise ProfileError(f"perf {args[0]} failed (exit {p.returncode}): {last[-1] if last else 'no message'}")
    return p.stdout


def load(args):
    """(script text, stats text or None) from a perf.data or saved texts."""
    if args.perf_data:
        # --no-inline: perf 6.1 drops the object of a function's frame when it
        # prints the functions inlined there; inlined code counts as its caller's
        script = run_perf(args.perf, ["script", "--no-inline", "-i", args.perf_data, "-F", SCRIPT_FIELDS])
        stats = run_perf(args.perf, ["report", "-i", args.perf_data, "--stats"])
        return script, stats
    try:
        with open(args.script_text, errors="replace") as f:
            script = f.read()
        stats = None
        if args.stats_text:
            with open(args.stats_text, errors="replace") as f:
                stats = f.read()
    except OSError as e:
        raise ProfileError(f"cannot read '{e.filename}': {e.strerror}")
    return script, stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--perf-data", help="a perf.data from perf record --call-graph dwarf")
    src.add_argument("--script-text", help="saved `perf script -F %s` output" % SCRIPT_FIELDS)
    ap.add_argument("--stats-text", help="saved `perf report --stats` output (lost samples)")
    ap.add_argument("--perf", default="perf", help="the perf program (default: perf on PATH)")
    ap.add_argument("--folded", required=True, help="folded stacks to write")
    ap.add_argument("--svg", required=True, help="flame graph to write")
    ap.add_argument("--title", default="mallocbench profile", help="the SVG's title")
    ap.add_argument("--allocator-lib", default="", help="the preloaded allocator library (its frames are green)")
    ap.add_argument("--force", action="store_true", help="replace existing --folded and --svg files")
    args = ap.parse_args(argv)
    try:
        for p in (args.folded, args.svg):  # refused before any work
            mbout.check(p, args.force, inputs=[args.perf_data or args.script_text])
        script, stats = load(args)
        folded, periods, stopped = fold_script(script)
        meta = {"periods": periods, "stopped": stopped,
                "lost": parse_lost(stats) if stats is not None else {}, "lost_unknown": stats is None}
        if stats is not None:
            for ev in folded:
                meta["lost"].setdefault(ev, 0)
        write_folded(folded, args.folded, args.force)
        svg = render_svg(folded, meta, args.title, allocator_objects(args.allocator_lib))
        mbout.write(args.svg, svg, force=args.force)
    except (ProfileError, OSError, mbout.OutputError) as e:
        raise cli.Fail(str(e), 2) from None
    print(summary_line(folded, meta))
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
