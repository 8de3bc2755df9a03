#!/usr/bin/env python3
"""test_record.py - mallocbench record and trace end to end.

Usage: test_record.py MALLOCBENCH CASE RECORD_PROG.  Cases:
  counts         tests/programs/record_prog.c at N=0 and N=1000: two processes, the
                 right threads, the program's own calls counted exactly (the
                 difference), unknown frees counted, the constructor's block,
                 the touched pages of a 4 MiB block, times in order.
  real_programs  python3 and sort recorded: they work, the trace reads back.
  corrupt        flipped-byte traces and a cut file header refused by
                 `trace` with the byte offset of the break, exit 2, one line.
  cut            a recorded trace cut inside a chunk (a full disk) read by
                 `trace` up to its last whole chunk, one warning line naming
                 the byte; cut at a chunk boundary, read whole, no warning.
  escape         header text and exe paths holding ESC sequences, other
                 control bytes, a C1 control, bytes that are not UTF-8 and
                 backslashes: `trace` prints them as \\xNN and \\\\, keeps
                 UTF-8 and the text's line breaks.
  bad_input      no command, an existing output, an unknown command or
                 allocator refused before anything runs; the command's exit
                 code (and 128+signal) passed through.
  like_run       as `run` does: an inherited LD_PRELOAD of another allocator
                 (jemalloc) scrubbed from the command's environment (the
                 trace says glibc, the command sees only the recorder), and
                 no orphan left when the harness is killed by SIGKILL.
  daemon         a grandchild that setsid's and keeps allocating is killed
                 when the command exits, before the trace is finished: it is
                 gone, record says so, and the trace no longer grows.
"""
import os
import random
import shlex
import signal
import struct
import subprocess
import sys
import time

from mbtest import check, check_eq, main, run

PROG = sys.argv[3] if len(sys.argv) > 3 else ""
OPS = ["", "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc", "memalign",
       "valloc", "pvalloc", "thread_start", "thread_end"]
HDR, CHUNK, PROC, EV = 32, 24, 24, 32


def read_trace(path):
    """A minimal independent reader: (procs, {(pid, tid, image): [events]}, chunk offsets)."""
    b = open(path, "rb").read()
    assert b[:8] == b"MBTRACE\0"
    _, hlen, _, tlen, _ = struct.unpack_from("<IIIIQ", b, 8)
    off, procs, threads, chunks, image = hlen + tlen, [], {}, [], {}
    while off < len(b):
        magic, kind, pid, tid, seq, plen = struct.unpack_from("<6I", b, off)
        chunks.append((off, kind, plen))
        if kind == 2:
            p = struct.unpack_from("<IIQII", b, off + CHUNK)
            procs.append({"pid": pid, "ppid": p[1], "forked": p[3],
                          "exe": b[off + CHUNK + PROC:off + CHUNK + plen].decode()})
            image[pid] = len(procs) - 1
        else:
            evs = threads.setdefault((pid, tid, image[pid]), [])
            for e in range(off + CHUNK, off + CHUNK + plen, EV):
                t_op, ptr, size, arg = struct.unpack_from("<4Q", b, e)
                evs.append((t_op >> 8, OPS[t_op & 0xff], ptr, size, arg))
        off += CHUNK + plen
    return procs, threads, chunks


def trace_stats(mb, path):
    """`mallocbench trace`: {pid: {key: int}} in order, and the processes line."""
    out = run(mb, "trace", path).stdout
    procs, cur, summary = {}, None, ""
    for line in out.splitlines():
        if line.startswith("processes:"):
            summary = line
        elif line.startswith("process "):
            cur = procs.setdefault(int(line.split()[1].rstrip(":")), {})
        elif cur is not None and line.startswith("  "):
            k, v = line.split()
            cur[k] = int(v)
    return procs, summary


def record(mb, tmp, name, *cmd, expect_rc=0):
    out = os.path.join(tmp, name)
    p = run(mb, "record", "-o", out, "--", *cmd, expect_rc=expect_rc)
    return out, p


def case_counts(mb, tmp):
    n = 1000
    # meson sets MALLOC_PERTURB_, with which glibc itself writes every byte it hands
    # out: the 4 MiB block would be all touched
    os.environ.pop("MALLOC_PERTURB_", None)
    stats = {}
    for k in (0, n):
        path, p = record(mb, tmp, f"n{k}.mbt", PROG, str(k))
        check("recorded" in p.stderr and "2 processes" in p.stderr, f"summary: {p.stderr!r}")
        procs, summary = trace_stats(mb, path)
        check(summary.startswith("processes: 2 (2 images), threads: 5,"), f"N={k}: {summary!r}")
        check_eq(len(procs), 2, f"N={k}: processes")
        stats[k] = list(procs.values())
        parent, child = stats[k][0], stats[k][1] if len(stats[k]) > 1 else {}
        check_eq(parent.get("threads"), 4, f"N={k}: parent threads (main + 3)")
        check_eq(child.get("threads"), 1, f"N={k}: child threads")
        check_eq(parent.get("thread_start"), 4, f"N={k}: parent thread_start")
        check_eq(parent.get("thread_end"), 4, f"N={k}: parent thread_end (3 joined, main at exit)")
        check_eq(child.get("thread_end"), 1, f"N={k}: child thread_end (at _exit)")
        check(parent.get("peak_live_bytes", 0) >= (4 << 20) + 12345, f"N={k}: peak {parent}")
        check_eq(parent.get("live_bytes_end", -1) < 12345, True, f"N={k}: kept block freed at end")
        tr_procs, threads, _ = read_trace(path)
        check_eq([q["forked"] for q in tr_procs], [0, 1], f"N={k}: exec then fork")
        check(tr_procs[0]["exe"].endswith("record_prog"), f"exe {tr_procs[0]['exe']}")
        main_ev = threads.get((tr_procs[0]["pid"], tr_procs[0]["pid"], 0), [])
        check(any(e[1] == "malloc" and e[3] == 12345 for e in main_ev), "the constructor's malloc")
        big = [e for e in main_ev if e[1] == "malloc" and e[3] == 4 << 20]
        frees = [e for e in main_ev if big and e[1] == "free" and e[2] == big[0][2]]
        pages = frees[-1][4] if frees else 0
        check(512 <= pages <= 514, f"N={k}: touched pages of the 4 MiB block: {pages}")
        for key, evs in threads.items():
            times = [e[0] for e in evs]
            check(times == sorted(times), f"{key}: times in program order")
            check(evs and evs[0][1] == "thread_start", f"{key}: starts with thread_start")
    p0, p1 = stats[0], stats[n]
    want_parent = {"malloc": 4 * n, "calloc": n, "realloc": n, "posix_memalign": n,
                   "aligned_alloc": n, "memalign": n, "valloc": n, "pvalloc": n, "free": 11 * n,
                   "unknown_free": n, "thread_start": 0, "thread_end": 0}
    for key, want in want_parent.items():
        check_eq(p1[0].get(key, 0) - p0[0].get(key, 0), want, f"parent {key}, N={n} minus N=0")
    for key, want in {"malloc": n, "free": n, "unknown_free": 0, "realloc": 0}.items():
        check_eq(p1[1].get(key, 0) - p0[1].get(key, 0), want, f"child {key}, N={n} minus N=0")


def case_real_programs(mb, tmp):
    path, p = record(mb, tmp, "py.mbt", "/usr/bin/python3", "-c",
                     "d = {i: str(i) for i in range(100000)}; print(len(d))")
    check_eq(p.stdout.strip(), "100000", "python's output under the recorder")
    procs, _ = trace_stats(mb, path)
    py = next(iter(procs.values()), {})
    check(py.get("malloc", 0) + py.get("realloc", 0) > 1000, f"python's calls: {py}")
    check(py.get("peak_live_bytes", 0) > 4 << 20, f"python's peak: {py.get('peak_live_bytes')}")
    data = os.path.join(tmp, "data.txt")
    nums = [random.randrange(10 ** 9) for _ in range(200000)]
    with open(data, "w") as f:
        f.write("".join(f"{x}\n" for x in nums))
    out = os.path.join(tmp, "sorted.txt")
    path, p = record(mb, tmp, "sort.mbt", "sort", "-n", "-S", "1M", "--parallel=2", data, "-o", out)
    with open(out) as f:
        check(f.read() == "".join(f"{x}\n" for x in sorted(nums)), "sort's output under the recorder")
    procs, summary = trace_stats(mb, path)
    check(summary.startswith("processes: 1"), f"sort: {summary}")
    s = next(iter(procs.values()), {})
    check(s.get("malloc", 0) > 10 and s.get("free", 0) > 10, f"sort's calls: {s}")


def refused(mb, path, want, what):
    p = run(mb, "trace", path, expect_rc=2)
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and f": byte {want}: " in p.stderr and what in p.stderr,
          f"{os.path.basename(path)}: wanted byte {want} ({what}), got {p.stderr!r}")


def case_corrupt(mb, tmp):
    path, _ = record(mb, tmp, "ok.mbt", PROG, "10")
    b = open(path, "rb").read()
    _, _, chunks = read_trace(path)
    ev = [c for c in chunks if c[1] == 1 and c[2] >= 2 * EV]
    check(len(ev) >= 2 and chunks[0][1] == 2, f"chunks {chunks}")
    c0, c1 = ev[0][0], ev[1][0]

    def variant(name, data):
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def flip(at, val):
        return b[:at] + bytes([val]) + b[at + 1:]

    refused(mb, variant("payload.mbt", flip(c0 + 22, 0x40)), c0 + 20, "longer than any chunk")
    refused(mb, variant("header.mbt", b[:20]), 20, "file header truncated")
    refused(mb, variant("magic.mbt", flip(0, ord("X"))), 0, "bad magic")
    refused(mb, variant("version.mbt", flip(8, 9)), 8, "unknown version 9")
    refused(mb, variant("cmagic.mbt", flip(c1 + 1, 0)), c1, "bad chunk magic")
    refused(mb, variant("kind.mbt", flip(c1 + 4, 7)), c1 + 4, "unknown chunk kind 7")
    refused(mb, variant("op.mbt", flip(c1 + CHUNK + EV, 0xEE)), c1 + CHUNK + EV, "unknown op 238")
    refused(mb, variant("seq.mbt", flip(c1 + 16, 5)), c1 + 16, "chunk seq 5")
    refused(mb, variant("len.mbt", flip(c1 + 20, b[c1 + 20] ^ 0x08)), c1 + 20, "not a multiple of 32")
    run(mb, "trace", path)  # the original still reads


def case_escape(mb, tmp):
    text = "command=evil \x1b]0;pwned\x07 \x1b[2J\ttab\nallocator=glibc\\x\n".encode() + \
        b"note=caf\xc3\xa9 \xff\xfe \xc2\x9b1m \x7f end\n"
    exe = b"/bin/\x1b[31mred\\\xe9\nnext"
    exe2 = b"/bin/ok"
    out = [struct.pack("<8sIIIIQ", b"MBTRACE\0", 1, HDR, 4096, len(text), 1), text]
    for e in (exe, exe2):  # an exec: two images of pid 9
        payload = struct.pack("<IIQII", 9, 1, 1, 0, len(e)) + e
        out.append(struct.pack("<6I", 0x4B43424D, 2, 9, 9, 0, len(payload)) + payload)
    path = os.path.join(tmp, "evil.mbt")
    with open(path, "wb") as f:
        f.write(b"".join(out))
    p = subprocess.run([mb, "trace", path], capture_output=True)
    check_eq(p.returncode, 0, f"trace: exit ({p.stderr!r})")
    o = p.stdout
    check(not any(c < 0x20 and c != 0x0A or c == 0x7F for c in o), f"no control byte but newlines: {o!r}")
    o.decode("utf-8")  # raises when a byte is not UTF-8
    want = (b"command=evil \\x1B]0;pwned\\x07 \\x1B[2J\\x09tab\nallocator=glibc\\\\x\n"
            b"note=caf\xc3\xa9 \\xFF\\xFE \\xC2\\x9B1m \\x7F end\n")
    check(want in o, f"header text escaped: {o!r}")
    check(b"process 9: exec, parent 1, /bin/\\x1B[31mred\\\\\\xE9\\x0Anext -> /bin/ok\n" in o,
          f"exe paths escaped: {o!r}")


def case_cut(mb, tmp):
    path, _ = record(mb, tmp, "ok.mbt", PROG, "10")
    b = open(path, "rb").read()
    _, _, chunks = read_trace(path)
    ev = [c for c in chunks if c[1] == 1 and c[2] >= 2 * EV]
    check(len(ev) >= 2, f"chunks {chunks}")
    c1 = ev[1][0]
    whole = os.path.join(tmp, "whole.mbt")
    with open(whole, "wb") as f:
        f.write(b[:c1])
    pw = run(mb, "trace", whole)
    check_eq(pw.stderr, "", "cut at a chunk boundary: no warning")
    for name, n in (("chunkhdr", c1 + 10), ("payload", c1 + CHUNK + EV + 5),
                    ("lastbyte", c1 + CHUNK + ev[1][2] - 1)):
        p_ = os.path.join(tmp, name + ".mbt")
        with open(p_, "wb") as f:
            f.write(b[:n])
        p = run(mb, "trace", p_)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and f"'{p_}': byte {c1}: the last chunk is cut" in p.stderr and
              "warning" in p.stderr, f"{name}: one warning naming byte {c1}: {p.stderr!r}")
        check_eq(p.stdout, pw.stdout.replace(whole, p_), f"{name}: what the whole chunks hold")


def case_bad_input(mb, tmp):
    def one_line(p, what):
        check(len(p.stderr.strip().splitlines()) == 1 and what in p.stderr, f"{what}: {p.stderr!r}")

    out = os.path.join(tmp, "t.mbt")
    one_line(run(mb, "record", "-o", out, expect_rc=2), "no command")
    check(not os.path.exists(out), "nothing written without a command")
    one_line(run(mb, "record", "-o", out, "--", "no-such-command-xyz", expect_rc=2), "not found on PATH")
    one_line(run(mb, "record", "-o", out, "-a", "nosuch", "--", "true", expect_rc=2), "unknown allocator")
    one_line(run(mb, "record", "-o", os.path.join(tmp, "no", "dir.mbt"), "--", "true", expect_rc=2),
             "cannot create")
    check(not os.path.exists(out) and not os.path.exists(out + ".tmp"), "nothing written on bad input")
    run(mb, "record", "-o", out, "--", "true")
    one_line(run(mb, "record", "-o", out, "--", "true", expect_rc=2), "exists")
    run(mb, "record", "-o", out, "--force", "--", "sh", "-c", "exit 3", expect_rc=3)
    check(os.path.exists(out) and not os.path.exists(out + ".tmp"), "a failed command's trace kept")
    run(mb, "record", "-o", out, "--force", "--", "sh", "-c", "kill -9 $$", expect_rc=137)
    run(mb, "trace", out)
    one_line(run(mb, "trace", os.path.join(tmp, "missing.mbt"), expect_rc=2), "No such file")
    one_line(run(mb, "trace", expect_rc=2), "one trace file expected")


JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def alive(pid):
    """Is pid a live process (a zombie is not)?"""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def case_like_run(mb, tmp):
    if not os.path.exists(JEMALLOC):
        print(f"SKIP: no {JEMALLOC}", file=sys.stderr)
        sys.exit(77)
    env = dict(os.environ, LD_PRELOAD=JEMALLOC)
    out, seen = os.path.join(tmp, "env.mbt"), os.path.join(tmp, "seen")
    p = subprocess.run([mb, "record", "-o", out, "--", "sh", "-c", f'echo "$LD_PRELOAD" > {seen}'],
                       env=env, capture_output=True, text=True, timeout=120)
    check_eq(p.returncode, 0, f"record under LD_PRELOAD={JEMALLOC}: {p.stderr!r}")
    preload = open(seen).read().strip() if os.path.exists(seen) else ""
    check("jemalloc" not in preload and "libmbrecord.so" in preload,
          f"the command's LD_PRELOAD is the recorder's alone: {preload!r}")
    text = run(mb, "trace", out).stdout
    check("allocator=glibc libc" in text and "jemalloc" not in text, f"the trace says glibc: {text!r}")

    pidfile = os.path.join(tmp, "pid")
    h = subprocess.Popen([mb, "record", "-o", os.path.join(tmp, "kill.mbt"), "--", "python3", "-c",
                          f"import os, time; open({pidfile!r}, 'w').write(str(os.getpid())); time.sleep(60)"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (os.path.exists(pidfile) and open(pidfile).read()):
        time.sleep(0.05)
    pid = int(open(pidfile).read()) if os.path.exists(pidfile) else 0
    check(pid > 0 and alive(pid), "the recorded command started")
    h.send_signal(signal.SIGKILL)
    h.wait()
    deadline = time.monotonic() + 2
    while pid and alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    gone = not (pid and alive(pid))
    if not gone:
        os.kill(pid, signal.SIGKILL)
    check(gone, f"the command (pid {pid}) is gone within 2 s of a SIGKILL of the harness")


def case_daemon(mb, tmp):
    out, pidfile = os.path.join(tmp, "d.mbt"), os.path.join(tmp, "daemon.pid")
    daemon = (f"import os, time; open({pidfile!r}, 'w').write(str(os.getpid()))\n"
              "end = time.time() + 20\nwhile time.time() < end: [bytearray(100) for _ in range(1000)]")
    script = (f"setsid python3 -c {shlex.quote(daemon)} & "
              f"while [ ! -s {pidfile} ]; do sleep 0.01; done")
    p = subprocess.run([mb, "record", "-o", out, "--", "sh", "-c", script], capture_output=True, text=True,
                       timeout=120)
    check_eq(p.returncode, 0, f"record of a command that leaves a daemon: {p.stderr!r}")
    pid = int(open(pidfile).read())
    check(not alive(pid), f"the daemon {pid} is gone when record returns")
    check("killed 1 process the command left running" in p.stderr, f"record says so: {p.stderr!r}")
    size = os.path.getsize(out)
    time.sleep(0.5)
    check_eq(os.path.getsize(out), size, "the finished trace does not grow")
    run(mb, "trace", out)


if __name__ == "__main__":
    sys.exit(main({"counts": case_counts, "real_programs": case_real_programs,
                   "corrupt": case_corrupt, "bad_input": case_bad_input, "cut": case_cut,
                   "escape": case_escape, "like_run": case_like_run,
                   "daemon": case_daemon}))
