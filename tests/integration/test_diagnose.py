#!/usr/bin/env python3
"""test_diagnose.py - `mallocbench diagnose` end to end (root: it skips without).

Usage: test_diagnose.py MALLOCBENCH CASE TESTS_BUILD_DIR.  Cases:
  exact        tests/programs/refault_prog.c writes each page of a MADV_NOHUGEPAGE
               buffer, gives it back and writes it again ROUNDS times: with madvise
               (MADV_DONTNEED), the re-faults are exactly PAGES x ROUNDS, all in the
               age bucket its gap puts them in, none lost; munmap the same by munmap;
               MADV_FREE none (lazily freed bytes exact); a read before the write
               re-faults the same pages; the program's own calls are not its
               allocator's; the breakdown sums to the faults.
  fork         copy-on-write after fork, in the parent and (--children) in each child
               it forks, counted as such; without --children only the process itself.
  all          --all on three processes whose losses differ many times ranks them in that
               order; a process that ends inside the window is reported to its end.
  light        --light=8: about an eighth of the faults recorded, the counts scaled, the
               exact re-fault share (of a full run) inside the CI the words give.
  stacks       --stacks PREFIX: the folded stacks and flame graph written, perf's scratch files
               gone, fault stacks through the program's main, those on re-faulted pages apart,
               madvise stacks; an existing
               output refused without --force; not with --all.
  attach_exit  -p on a process that exits in the middle of the window: the window
               ends at its exit, what it did is reported, exit 0.
  interrupt    SIGINT and SIGTERM end a 60 s window at once with the report; the
               process watched runs on; diagnose leaves no process behind.
  refusals     not root (as nobody): one line, exit 2, nothing watched; bad -p,
               two modes, --top without --all, a bad duration: one line each, exit 2.
  allocators   recognised: glibc (no library: "or unrecognised"), jemalloc preloaded
               and linked, a static program (its libc's marks), a program with a malloc
               of its own (no family), with the version of the owning package.
  environment  a secret in the watched process's environment appears nowhere in the
               words or the JSON, while its MALLOC_CONF does (-p and a command).
  json         --json: schema mallocbench-diagnose/1, the fields and their types, and
               the words of the document equal those a saved document renders.
  blame        tests/programs/blame_prog.c loads twelve copies of blame_lib (each faults once
               from its constructor, as a framework's libraries do at import) and a large
               library it never calls (ICU's data, where installed), then faults in its own
               loop: the fault path's CPU samples are blamed on blame_prog, with more than half
               of them, as a command (--) and attached (-p); the large library has none.
  family       -a FAMILY -t ... runs the command under that family (jemalloc preloaded, its
               setting in MALLOC_CONF) and its Verify line is an exec command line that exec
               runs (-r 1, both configurations ok); a command given as `env LD_PRELOAD=...
               MALLOC_CONF=...` gets a Verify line without env that exec accepts
               (--print-commands), and a library of the family's outside the system directories
               is named in it (FAMILY:PATH); -a and -t refused where they mean nothing.
  hostile_exe  a watched program whose file was deleted, with something put at "prog (deleted)"
               in its owner's folder: a FIFO (diagnose never hangs on it), a regular file and a
               link into a root-only folder, both a static program carrying jemalloc's marks
               (diagnose reads the file the kernel runs, glibc's, never the planted one).
  bounds       a process that munmaps empty gigabytes as fast as it can: diagnose keeps to its
               --max-memory (the model capped, the counts said to be lower bounds), its window
               ends on time, and SIGTERM in the middle of such a flood ends it within seconds.
  args         a watched process's arguments (a secret among them) appear nowhere in the words or
               the JSON, its program's name does and their count is said; --show-args keeps them.
  stacks_links --stacks refuses a link already at PREFIX.perf.data or .perf.log (a dangling one
               included: perf, as root, would create its target) and creates nothing there.
"""
import glob
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

from mbtest import SKIP, check, check_eq, main, rows, run

BUILD = sys.argv[3] if len(sys.argv) > 3 else ""
PROG = os.path.join(BUILD, "refault_prog")
BLAME = os.path.join(BUILD, "blame_prog")
BLAME_LIB = os.path.join(BUILD, "blame_lib.so")
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
SECRET = "hunter2-secret-7f3a9"


def diag_json(mb, *args, env=None):
    p = subprocess.run([mb, "diagnose", "--json", *args], capture_output=True, text=True, timeout=300, env=env)
    check_eq(p.returncode, 0, f"diagnose {' '.join(args)}: exit ({p.stderr.strip()})")
    out = p.stdout
    start = out.find("\n{")  # the command's own output comes first
    doc = json.loads(out if out.startswith("{") else out[start + 1:])
    return doc, p


def target(doc):
    """The process entry with the most faults (the command's last image)."""
    return max(doc["processes"], key=lambda e: e["faults"]["minor"] + e["faults"]["major"])


def sums(e):
    f = e["faults"]
    parts = sum(f[k] for k in ("first_touch", "refault", "lazy_reclaimed", "cow", "file", "other"))
    check_eq(parts, f["minor"] + f["major"], "the breakdown sums to the faults")
    check_eq(sum(f["refault_age"]), f["refault"], "the ages sum to the re-faults")


def case_exact(mb, tmp):
    pages, rounds = 256, 5
    for mode in ("dontneed", "munmap", "free", "read"):
        doc, _ = diag_json(mb, "--", PROG, str(pages), str(rounds), "20", mode)
        check_eq(doc["watch"]["lost"], 0, f"{mode}: records lost")
        e = target(doc)
        f = e["faults"]
        sums(e)
        check(f["first_touch"] >= pages, f"{mode}: first touch {f['first_touch']} < {pages}")
        want = 0 if mode == "free" else pages * rounds
        if mode == "read":
            check_eq(f["refault_pages"], want, "read: re-faulted pages")
            check(f["refault"] >= want, f"read: re-faults {f['refault']} < {want}")
        else:
            check_eq(f["refault"], want, f"{mode}: re-faults")
            check_eq(f["refault_pages"], want, f"{mode}: re-faulted pages")
            check_eq(f["refault_age"][1], want, f"{mode}: re-faults 10-100 ms after the give-back (20 ms gap)")
        by = "munmap" if mode == "munmap" else "madvise"
        check_eq(f["refault_by"][by], 0 if mode == "free" else f["refault"], f"{mode}: re-faults by {by}")
        check_eq(sum(f["alloc_refault_by"].values()), 0, f"{mode}: the program's own calls counted as its allocator's")
        adv = {a["advice"]: a for a in e["advice"]}
        if mode in ("dontneed", "read"):
            check_eq(adv.get("MADV_DONTNEED", {}).get("calls"), rounds, f"{mode}: MADV_DONTNEED calls")
            check_eq(adv.get("MADV_DONTNEED", {}).get("bytes"), rounds * pages * 4096, f"{mode}: MADV_DONTNEED bytes")
        if mode == "free":
            check_eq(e["lazy_bytes"], rounds * pages * 4096, "free: lazily freed bytes")
            check_eq(adv.get("MADV_FREE", {}).get("calls"), rounds, "free: MADV_FREE calls")
        if mode == "munmap":
            check(e["calls"]["munmap"]["calls"] >= rounds, f"munmap: {e['calls']['munmap']['calls']} calls")


def case_fork(mb, tmp):
    pages, rounds = 256, 3
    doc, _ = diag_json(mb, "--children", "--", PROG, str(pages), str(rounds), "0", "fork")
    check_eq(doc["watch"]["lost"], 0, "records lost")
    parent = [e for e in doc["processes"] if not e["forked"]]
    kids = [e for e in doc["processes"] if e["forked"]]
    check_eq(len(kids), rounds, "children watched")
    e = target({"processes": parent})
    sums(e)
    # the parent's pages (and the few of its stack it writes) are copied on write after each fork
    check(pages * rounds <= e["faults"]["cow"] <= pages * rounds + 16 * rounds,
          f"parent: {e['faults']['cow']} copy-on-write faults, want {pages * rounds} and a few stack pages")
    check_eq(e["faults"]["refault"], 0, "parent: re-faults")
    for k in kids:
        sums(k)
        check(pages <= k["faults"]["cow"] <= pages + 16, f"child: {k['faults']['cow']} copy-on-write faults")
        check_eq(k["faults"]["first_touch"] + k["faults"]["refault"] > pages, False, "child: pages it inherited taken as new")
    doc, _ = diag_json(mb, "--", PROG, str(pages), "1", "0", "fork")
    check_eq([e["forked"] for e in doc["processes"]], [False], "without --children: only the process itself")
    cow = target(doc)["faults"]["cow"]
    check(pages <= cow <= pages + 16, f"without --children: the parent's {cow} copy-on-write faults, want {pages}")


def case_light(mb, tmp):
    pages, rounds = 1000, 20
    full, _ = diag_json(mb, "--", PROG, str(pages), str(rounds), "0")
    light, _ = diag_json(mb, "--light=8", "--", PROG, str(pages), str(rounds), "0")
    check_eq(light["watch"]["fault_period"], 8, "the period recorded")
    tf, tl = full["analysis"][0], light["analysis"][0]
    recorded = tl["faults_recorded"]
    check(tf["faults"] / 12 < recorded < tf["faults"] / 5, f"--light=8 recorded {recorded} of ~{tf['faults']} faults")
    lo, hi = tl["refault_share_ci"]
    check(lo <= tf["refault_share"] <= hi, f"the exact re-fault share {tf['refault_share']:.4f} outside the "
          f"--light CI [{lo:.4f}, {hi:.4f}]")
    check(0.7 * tf["faults"] < tl["faults"] < 1.3 * tf["faults"], f"scaled faults {tl['faults']} against {tf['faults']}")
    check("95% CI" in "\n".join(light["words"]), "the words give the share's CI")


def case_stacks(mb, tmp):
    if not shutil.which("perf"):
        print("SKIP: --stacks needs perf (linux-perf)", file=sys.stderr)
        sys.exit(SKIP)
    prefix = os.path.join(tmp, "who")
    p = run(mb, "diagnose", "--stacks", prefix, "--", PROG, "500", "4", "0")
    check("Who (perf record" in p.stdout, f"the words name the stacks: {p.stdout[-600:]!r}")
    for ext in (".folded", ".svg"):
        check(os.path.exists(prefix + ext), f"{ext} written")
    for ext in (".perf.data", ".perf.log"):
        check(not os.path.exists(prefix + ext), f"{ext} left behind")
    folded = open(prefix + ".folded").read() if os.path.exists(prefix + ".folded") else ""
    check(any(l.startswith("page-faults;") and "main [refault_prog]" in l for l in folded.splitlines()),
          "a fault stack through refault_prog's main")
    check(any(l.startswith("page-faults on re-faulted pages;") and "main [refault_prog]" in l
              for l in folded.splitlines()), "the faults on re-faulted pages, apart")
    check("stacks that touched re-faulted pages" in p.stdout, "the words give the re-faulted pages' stacks")
    check(any(l.startswith("syscalls:sys_enter_madvise;") for l in folded.splitlines()), "the madvise stacks")
    p = run(mb, "diagnose", "--stacks", prefix, "--", PROG, "10", "1", "0", expect_rc=2)
    check("exists" in p.stderr and "--force" in p.stderr, f"an existing output refused: {p.stderr!r}")
    run(mb, "diagnose", "--stacks", prefix, "--force", "--", PROG, "10", "1", "0")
    p = run(mb, "diagnose", "--all", "--stacks", prefix, expect_rc=2)
    check("not --all" in p.stderr, f"--stacks with --all: {p.stderr!r}")


def ended(d, timeout, what):
    """(stdout, stderr) of the diagnose process d once it ends; killed, and a failed check, when
    it has not ended within timeout seconds."""
    try:
        return d.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        d.kill()
        out, err = d.communicate()
        check(False, f"{what}: diagnose did not end within {timeout} s")
        return out, err


def start_prog(*args, env=None):
    p = subprocess.Popen([PROG, *args], stdout=subprocess.PIPE, text=True, env=env)
    line = p.stdout.readline()
    check(line.startswith("ready"), f"refault_prog did not start: {line!r}")
    return p


def case_attach_exit(mb, tmp):
    # waits 300 ms, then 40 rounds of 256 pages 20 ms apart (~1 s), then exits
    p = start_prog("256", "40", "20", "dontneed", "300", "0")
    t = time.monotonic()
    doc, _ = diag_json(mb, "-p", str(p.pid), "--duration", "20s")
    took = time.monotonic() - t
    p.wait(timeout=30)
    check_eq(doc["window"]["ended"], "exit", "the window's end")
    check(took < 10, f"diagnose took {took:.1f} s for a process that exited after ~1.3 s")
    e = target(doc)
    check(e["ended"], "the process is marked ended")
    check_eq(e["faults"]["refault"], 256 * 40, "re-faults up to its exit")


def case_all(mb, tmp):
    # losses far apart: busy, 5 ms between rounds, 50 ms between rounds; and one that ends early
    progs = [start_prog("1000", "1000000", "0", "dontneed", "0", "0"),
             start_prog("200", "1000000", "5", "dontneed", "0", "0"),
             start_prog("50", "1000000", "50", "dontneed", "0", "0")]
    # waits 1 s before its work (300 ms was less than diagnose's start on a loaded machine: a round
    # then fell before the window and the count read 1500), then about 0.3 s of it, then exits
    short = start_prog("100", "20", "10", "dontneed", "1000", "0")
    try:
        doc, _ = diag_json(mb, "--all", "--duration", "2s")
    finally:
        for p in progs + [short]:
            p.kill()
            p.wait()
    check_eq(doc["mode"], "all", "mode")
    ranked = [t["pid"] for t in doc["analysis"]]
    want = [p.pid for p in progs]
    got = [pid for pid in ranked if pid in want]
    check_eq(got, want, "the three ranked by what re-faults cost them")
    ends = [e for e in doc["processes"] if e["pid"] == short.pid]
    # exact where nothing was lost (a host busy with other work can overrun the rings: then a
    # lower bound, as the report says)
    lost = doc["watch"]["lost"]
    got = ends[-1]["faults"]["refault"] if ends else -1
    check(ends and ends[-1]["ended"] and (got == 100 * 20 if not lost else 0 < got <= 100 * 20),
          f"a process that ended in the window, reported to its end: {[(e['ended'], e['faults']['refault']) for e in ends]}"
          f" ({lost} records lost)")
    words = "\n".join(doc["words"])
    check(f" {progs[0].pid} " in words, "the ranking names the busiest")


def deleted_prog(tmp):
    """refault_prog copied into a folder, started, and its file deleted: (process, the folder, the
    name /proc/PID/exe gives it, "prog (deleted)")."""
    folder = os.path.join(tmp, "owner")
    os.makedirs(folder)
    copy = os.path.join(folder, "prog")
    shutil.copy2(PROG, copy)
    p = subprocess.Popen([copy, "64", "100000", "20", "dontneed", "0", "0"], stdout=subprocess.PIPE, text=True)
    check(p.stdout.readline().startswith("ready"), "the copy of refault_prog did not start")
    os.unlink(copy)
    return p, folder, copy + " (deleted)"


def planted_static(path):
    """A static program (exec_static) with jemalloc's mark appended: what a program file at
    path would be recognised as, were it read."""
    with open(os.path.join(BUILD, "exec_static"), "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data + b"\0<jemalloc>: \0je_mallctl\0")
    os.chmod(path, 0o755)


def case_hostile_exe(mb, tmp):
    if not os.path.exists(os.path.join(BUILD, "exec_static")):
        return print("SKIP: no exec_static (static glibc not installed)", file=sys.stderr)
    secret = os.path.join(tmp, "rootonly")
    os.makedirs(secret, mode=0o700)
    planted_static(os.path.join(secret, "je_static"))
    for what in ("fifo", "file", "link"):
        p, folder, name = deleted_prog(os.path.join(tmp, what))
        if what == "fifo":
            os.mkfifo(name)
        elif what == "file":
            planted_static(name)
        else:
            os.symlink(os.path.join(secret, "je_static"), name)
        t = time.monotonic()
        try:
            d = subprocess.run([mb, "diagnose", "--json", "-p", str(p.pid), "--duration", "1s"], capture_output=True,
                               text=True, timeout=60)
        except subprocess.TimeoutExpired:
            check(False, f"{what} at {name!r}: diagnose hung (60 s)")
            p.kill()
            p.wait()
            continue
        took = time.monotonic() - t
        p.kill()
        p.wait()
        check_eq(d.returncode, 0, f"{what}: exit ({d.stderr.strip()})")
        check(took < 30, f"{what}: a 1 s window took {took:.1f} s")
        a = target(json.loads(d.stdout))["allocator"]
        check_eq((a["family"], a["how"]), ("glibc", "libc"), f"{what} planted at the deleted program's name: "
                                                              f"recognised as")
        check("je_static" not in json.dumps(a) and "jemalloc" not in a["evidence"],
              f"{what}: the planted file was read: {a['evidence']!r}")


FLOOD = """
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
print("ready", flush=True)
i = 0
while True:  # munmap of nothing succeeds: empty gigabytes given back, as fast as it goes
    libc.munmap(0x200000000000 + (i % 4096) * (1 << 30), 1 << 30)
    i += 1
"""


def case_bounds(mb, tmp):
    import resource
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    for sig in (None, signal.SIGTERM):
        f = subprocess.Popen([py, "-c", FLOOD], stdout=subprocess.PIPE, text=True)
        check(f.stdout.readline().startswith("ready"), "the flood did not start")
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.monotonic()
        d = subprocess.Popen([mb, "diagnose", "--json", "--max-memory", "64M", "-p", str(f.pid), "--duration",
                              "2s" if sig is None else "60s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            if sig is not None:
                time.sleep(1.5)
                t = time.monotonic()
                d.send_signal(sig)
            out, err = ended(d, 60, str(sig))
            took = time.monotonic() - t
        finally:  # the flood never outlives the test
            f.kill()
            f.wait()
        check_eq(d.returncode, 0, f"{sig}: exit ({err.strip()})")
        if d.returncode:
            continue
        # generous for a loaded machine: the 0f369bc model ran a 3 s window for 17 s here
        check(took < (12 if sig is None else 8), f"{sig}: {'the 2 s window' if sig is None else 'the end after SIGTERM'} "
                                                 f"took {took:.1f} s")
        doc = json.loads(out)
        w = doc["watch"]
        check(w["model_bytes"] <= w["model_limit"] <= 64 << 20, f"{sig}: the model {w['model_bytes']} B past its limit "
                                                                f"{w['model_limit']} B")
        # the cap, or (on a machine too slow to reach it in the window) records dropped at the end
        check((w["capped"] or w["dropped_records"]) and w["lower_bounds"],
              f"{sig}: neither capped nor cut, or not said to give lower bounds: {w}")
        e = target(doc) if doc["processes"] else None
        check(e is not None and (e["untracked_bytes"] > 0 or not w["capped"]),
              f"{sig}: the bytes past the cap are not counted as untracked")
        check(any("lower bound" in line for line in doc["words"]), f"{sig}: the words do not say the counts are "
                                                                   f"lower bounds")
        maxrss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if maxrss > before:  # KiB: diagnose's own peak (or its words' python), the flood's far under it
            check(maxrss < 200 * 1024, f"{sig}: diagnose's peak RSS {maxrss // 1024} MiB (--max-memory 64M)")


def case_args(mb, tmp):
    p = subprocess.Popen(["/bin/sh", "-c", "sleep 60; :", "sh", "--token=" + SECRET], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        outs = [subprocess.run([mb, "diagnose", *json_arg, "-p", str(p.pid), "--duration", "300ms"],
                               capture_output=True, text=True, timeout=120) for json_arg in ([], ["--json"])]
        shown = subprocess.run([mb, "diagnose", "--json", "--show-args", "-p", str(p.pid), "--duration", "300ms"],
                               capture_output=True, text=True, timeout=120)
    finally:
        os.killpg(p.pid, signal.SIGKILL)  # its sleep too
        p.wait()
    for o in outs:
        check_eq(o.returncode, 0, f"exit ({o.stderr.strip()})")
        check(SECRET not in o.stdout and SECRET not in o.stderr, "an argument of the process is in the output")
    doc = json.loads(outs[1].stdout)
    e = [x for x in doc["processes"] if x["pid"] == p.pid]
    check(e and e[0]["cmdline"] == ["/bin/sh"] and e[0]["args_hidden"] == 4,
          f"the program's name kept, its 4 arguments counted: {e and (e[0]['cmdline'], e[0]['args_hidden'])}")
    check(SECRET in shown.stdout, "--show-args keeps the arguments")


def case_stacks_links(mb, tmp):
    if not shutil.which("perf"):
        return print("SKIP: no perf", file=sys.stderr)
    secret = os.path.join(tmp, "rootonly")
    os.makedirs(secret, mode=0o700)
    p = start_prog("64", "100000", "20", "dontneed", "0", "0")
    try:
        for ext, target_exists in ((".perf.data", False), (".perf.log", False), (".perf.data", True)):
            prefix = os.path.join(tmp, f"st{ext}{int(target_exists)}")
            dest = os.path.join(secret, f"made{ext}{int(target_exists)}")
            if target_exists:
                with open(dest, "w") as f:
                    f.write("root's own\n")
            os.symlink(dest, prefix + ext)
            d = subprocess.run([mb, "diagnose", "--json", "-p", str(p.pid), "--duration", "300ms", "--stacks", prefix,
                                "--force"], capture_output=True, text=True, timeout=60)
            check_eq(d.returncode, 2, f"a link at {ext} (target {'there' if target_exists else 'missing'}): "
                                      f"exit ({d.stderr.strip()})")
            check(ext in d.stderr and "exists" in d.stderr, f"{ext}: the refusal names it: {d.stderr.strip()!r}")
            if target_exists:
                with open(dest) as f:
                    check_eq(f.read(), "root's own\n", f"{ext}: the link's target was written")
            else:
                check(not os.path.lexists(dest), f"{ext}: the dangling link's target was created")
    finally:
        p.kill()
        p.wait()


def procs_with_parent(ppid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == ppid:
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
    return out


def case_interrupt(mb, tmp):
    for sig in (signal.SIGINT, signal.SIGTERM):
        p = start_prog("64", "100000", "50", "dontneed", "0", "0")
        d = subprocess.Popen([mb, "diagnose", "--json", "-p", str(p.pid), "--duration", "60s"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.5)
        t = time.monotonic()
        d.send_signal(sig)
        out, err = ended(d, 20, sig.name)
        check(time.monotonic() - t < 10, f"{sig.name}: ending took {time.monotonic() - t:.1f} s")
        check_eq(d.returncode, 0, f"{sig.name}: exit ({err.strip()})")
        try:
            doc = json.loads(out)
            check_eq(doc["window"]["ended"], "interrupted" if sig == signal.SIGINT else "terminated",
                     f"{sig.name}: the window's end")
            check(target(doc)["faults"]["refault"] > 0, f"{sig.name}: what was watched is reported")
        except ValueError:
            check(False, f"{sig.name}: no JSON document: {out[:200]!r}")
        check(p.poll() is None, f"{sig.name}: the process watched was stopped")
        check_eq(procs_with_parent(d.pid), [], f"{sig.name}: processes left by diagnose")
        check(not os.path.exists(f"/proc/{d.pid}"), f"{sig.name}: diagnose still runs")
        p.kill()
        p.wait()


def case_refusals(mb, tmp):
    setpriv = "/usr/bin/setpriv"
    if os.path.exists(setpriv):
        p = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", mb, "diagnose", "--all",
                            "--duration", "1s"], capture_output=True, text=True, timeout=60)
        check_eq(p.returncode, 2, "not root: exit")
        check("needs root" in p.stderr and p.stderr.count("\n") == 1, f"not root: {p.stderr!r}")
        check_eq(p.stdout, "", "not root: nothing on stdout")
    bad = [(["-p", "0"], "not a process id"), (["-p", "4194000"], "no such process"),
           (["-p", "1", "--all"], "not several"), (["--all", "--top", "3x"], "--top"),
           (["--all", "--duration", "soon"], "--duration"), (["-p", "1", "--top", "3"], "--all only"),
           ([], "give -p PID"), (["--", "/no/such/program"], "cannot run")]
    for args, words in bad:
        p = subprocess.run([mb, "diagnose", *args], capture_output=True, text=True, timeout=60)
        check_eq(p.returncode, 2, f"{args}: exit")
        check(words in p.stderr and p.stderr.count("\n") == 1, f"{args}: {p.stderr!r} lacks {words!r}")


def case_allocators(mb, tmp):
    doc, _ = diag_json(mb, "--", PROG, "16", "1", "0")
    a = target(doc)["allocator"]
    check_eq((a["family"], a["how"], a["sure"]), ("glibc", "libc", False), "glibc: recognised as")
    check(a["version"] not in ("", "unknown") and a["version_how"].startswith("package libc6"),
          f"glibc: version {a['version']!r} from {a['version_how']!r}")
    static = os.path.join(BUILD, "exec_static")
    if os.path.exists(static):
        doc, _ = diag_json(mb, "--", static)
        a = target(doc)["allocator"]
        check_eq((a["family"], a["how"]), ("glibc", "static"), "static: recognised as")
        check("glibc.malloc" in a["evidence"], f"static: evidence {a['evidence']!r}")
    own = os.path.join(BUILD, "own_malloc_def")
    doc, _ = diag_json(mb, "--", own)
    a = target(doc)["allocator"]
    check_eq((a["family"], a["how"], a["sure"]), ("", "built-in", False), "own malloc: recognised as")
    if not os.path.exists(JEMALLOC):
        print("jemalloc not installed: its cases skipped", file=sys.stderr)
        return
    env = dict(os.environ, LD_PRELOAD=JEMALLOC, MALLOC_CONF="narenas:3")
    env.pop("MALLOC_PERTURB_", None)  # meson sets it: an allocator variable too
    doc, _ = diag_json(mb, "--", PROG, "16", "1", "0", env=env)
    a = target(doc)["allocator"]
    check_eq((a["family"], a["how"], a["sure"]), ("jemalloc", "preloaded", True), "jemalloc preloaded: recognised as")
    check(a["version"].startswith("5.") and "libjemalloc2" in a["version_how"], f"jemalloc: version {a['version']!r}")
    check_eq(a["vars"], ["MALLOC_CONF=narenas:3"], "jemalloc: its settings")
    check_eq(a["keep"]["env"], ["MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1"], "jemalloc: the keep setting")
    mimalloc = "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2"  # a link to libmimalloc.so.2.0, the file mapped
    if os.path.exists(mimalloc):
        env = dict(os.environ, LD_PRELOAD=mimalloc)
        doc, _ = diag_json(mb, "--", PROG, "16", "3", "50", env=env)
        a = target(doc)["allocator"]
        check_eq((a["family"], a["how"]), ("mimalloc", "preloaded"), "mimalloc preloaded (a versioned file): recognised as")
    compiled = os.path.join(BUILD, "refault_je")
    if os.path.exists(compiled):
        doc, _ = diag_json(mb, "--", compiled, "16", "4", "50")
        a = target(doc)["allocator"]
        check_eq((a["family"], a["how"], a["malloc_conf_compiled"]), ("jemalloc", "linked", "narenas:3"),
                 "jemalloc linked with its malloc_conf compiled in, read from outside")
        check("narenas:3" in "\n".join(doc["words"]), "the words give the compiled-in malloc_conf")
    linked = os.path.join(BUILD, "own_malloc_je")
    if os.path.exists(linked):
        doc, _ = diag_json(mb, "--", linked)
        a = target(doc)["allocator"]
        check_eq((a["family"], a["how"]), ("jemalloc", "linked"), "jemalloc linked: recognised as")


def case_environment(mb, tmp):
    env = dict(os.environ, SECRET_TOKEN=SECRET, GLIBC_TUNABLES="glibc.malloc.arena_max=2")
    outputs = []
    for words in (False, True):
        args = [mb, "diagnose"] + ([] if words else ["--json"]) + ["--", PROG, "64", "2", "0"]
        outputs.append(subprocess.run(args, capture_output=True, text=True, env=env, timeout=120))
    p = start_prog("64", "100", "20", "dontneed", "0", "0", env=env)
    for words in (False, True):
        args = [mb, "diagnose"] + ([] if words else ["--json"]) + ["-p", str(p.pid), "--duration", "500ms"]
        outputs.append(subprocess.run(args, capture_output=True, text=True, timeout=120))
    p.kill()
    p.wait()
    for i, o in enumerate(outputs):
        check_eq(o.returncode, 0, f"run {i}: exit ({o.stderr.strip()})")
        check(SECRET not in o.stdout and SECRET not in o.stderr, f"run {i}: the secret is in the output")
        check("GLIBC_TUNABLES=glibc.malloc.arena_max=2" in o.stdout, f"run {i}: the allocator variable is missing")


def case_json(mb, tmp):
    doc, _ = diag_json(mb, "--", PROG, "128", "3", "20")
    check_eq(doc["schema"], "mallocbench-diagnose/1", "schema")
    for key, typ in (("mode", str), ("target", dict), ("window", dict), ("watch", dict), ("processes", list),
                     ("analysis", list), ("words", list)):
        check(isinstance(doc.get(key), typ), f"{key}: {type(doc.get(key)).__name__}, not {typ.__name__}")
    t = doc["analysis"][0]
    for key in ("pid", "faults", "faults_per_s", "breakdown", "refault_age", "refault_share", "samples",
                "cpu_s", "prediction", "allocator"):
        check(key in t, f"analysis lacks {key}")
    pred = t["prediction"]
    check(pred and len(pred["saved_share"]) == 2 and pred["saved_share"][0] <= pred["saved_share"][1],
          f"prediction: {pred}")
    saved = os.path.join(tmp, "doc.json")
    with open(saved, "w") as f:
        json.dump(doc, f)
    env = dict(os.environ, PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "mallocbench.diagnose", saved], capture_output=True, text=True,
                       env=env, timeout=60)
    check_eq(p.returncode, 0, f"re-render: exit ({p.stderr.strip()})")
    check_eq(p.stdout.rstrip("\n").split("\n"), doc["words"], "the words of a saved document")


def blame_libs(tmp):
    """Twelve copies of blame_lib, each a library of its own, and a large library mapped and never
    called (ICU's data, 30 MiB, where it is installed)."""
    libs = []
    for i in range(12):
        libs.append(os.path.join(tmp, f"blame_lib{i}.so"))
        shutil.copy(BLAME_LIB, libs[-1])
    return libs + sorted(glob.glob("/usr/lib/*/libicudata.so.[0-9]*"))[-1:]


def blamed(doc, what):
    e = target(doc)
    libs, total = e["fault_libs"], e["cpu_samples"]["fault"]
    top = libs[0] if libs else {"lib": "", "samples": 0}
    check_eq(os.path.basename(top["lib"]), "blame_prog", f"{what}: the file blamed most ({libs[:3]})")
    check(top["samples"] * 2 > total, f"{what}: blame_prog has {top['samples']} of {total} fault-path samples")
    check_eq(sum(l["samples"] for l in libs), total, f"{what}: the files' samples sum to the fault path's")
    # a library never called gets no more than stray samples: a user stack walked without frame
    # pointers can end on a garbage return address, and its 30 MiB mapping is a large target (1
    # of 440 seen under the full test load); the code that ran has most of them (above)
    icu = sum(l["samples"] for l in libs if "libicudata" in l["lib"])
    check(icu <= max(2, total // 50), f"{what}: a library never called blamed for {icu} of {total}: {libs}")
    line = next((w for w in doc["words"] if w.startswith("CPU samples in the fault path")), "")
    check(line.startswith("CPU samples in the fault path, by the code that touched the page: blame_prog "),
          f"{what}: the words: {line!r}")


def case_blame(mb, tmp):
    libs = blame_libs(tmp)
    doc, _ = diag_json(mb, "--", BLAME, "own", "50", *libs)
    blamed(doc, "a command")
    p = subprocess.Popen([BLAME, "own", "0", *libs], stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        check(line.startswith("ready"), f"blame_prog did not start: {line!r}")
        doc, _ = diag_json(mb, "-p", str(p.pid), "--duration", "1s")
    finally:
        p.kill()
        p.wait()
    blamed(doc, "attached")


def verify_argv(doc, what):
    """The Verify line's words after `mallocbench exec`, or None."""
    lines = [w for w in doc["words"] if w.startswith("Verify: ")]
    check_eq(len(lines), 1, f"{what}: Verify lines in {doc['words'][:4]}")
    if not lines:
        return None
    argv = shlex.split(lines[0][len("Verify: "):])
    check_eq(argv[:2], ["mallocbench", "exec"], f"{what}: the Verify line")
    check(argv[2:] and "--" in argv and not any("LD_PRELOAD" in w or "MALLOC_CONF" in w for w in argv),
          f"{what}: the Verify line sets the allocator other than through -a and -t: {argv}")
    return argv[2:]


def case_family(mb, tmp):
    if not os.path.exists(JEMALLOC):
        print("SKIP: jemalloc not installed", file=sys.stderr)
        sys.exit(SKIP)
    for args, words in ((["-a", "jemalloc", "-p", "1"], "keeps its own"), (["-t", "jemalloc:narenas=2", "--", BLAME],
                        "give -a"), (["-a", "nosuch", "--", BLAME], "unknown allocator"),
                        (["-a", "glibc,jemalloc", "--", BLAME], "under one")):
        p = subprocess.run([mb, "diagnose", *args], capture_output=True, text=True, timeout=60)
        check_eq(p.returncode, 2, f"{args}: exit")
        check(words in p.stderr and p.stderr.count("\n") == 1, f"{args}: {p.stderr!r} lacks {words!r}")
    doc, _ = diag_json(mb, "-a", "jemalloc", "-t", "jemalloc:narenas=2", "--", BLAME, "malloc", "4")
    a = target(doc)["allocator"]
    check_eq((a["family"], a["how"], a["vars"]), ("jemalloc", "preloaded", ["MALLOC_CONF=narenas:2"]),
             "-a jemalloc -t jemalloc:narenas=2: the allocator it ran")
    argv = verify_argv(doc, "-a jemalloc")
    if argv:
        check(" ".join(argv).startswith("-a default=jemalloc,keep=jemalloc -t default:narenas=2 -t keep:narenas=2 "
                                        "-t keep:dirty_decay_ms=-1 -t keep:muzzy_decay_ms=-1 -- "),
              f"-a jemalloc: the Verify line's settings: {argv}")
        out = os.path.join(tmp, "verify.csv")
        p = run(mb, "exec", "-r", "1", "-o", out, *argv)
        got = sorted((r["config"], r["status"]) for r in rows(out))
        check_eq(got, [("default[narenas=2]", "ok"), ("keep[narenas=2,dirty_decay_ms=-1,muzzy_decay_ms=-1]", "ok")],
                 "the Verify line run by exec")
    # a command that composes the allocator itself; a copy of the library outside the system's
    lib = os.path.join(tmp, "libjemalloc.so.2")
    shutil.copy(JEMALLOC, lib)
    for cmd, want in ((["env", "FOO=1", f"LD_PRELOAD={JEMALLOC}", "MALLOC_CONF=narenas:2", BLAME, "malloc", "4"],
                       "-a default=jemalloc,keep=jemalloc -t default:narenas=2 -t keep:narenas=2 "),
                      (["-a", f"jemalloc={lib}", "--", BLAME, "malloc", "4"],
                       f"-a default=jemalloc:{lib},keep=jemalloc:{lib} -t keep:dirty_decay_ms=-1 ")):
        doc, _ = diag_json(mb, *(cmd if cmd[0] == "-a" else ["--", *cmd]))
        argv = verify_argv(doc, cmd[0])
        if argv:
            check(" ".join(argv).startswith(want), f"{cmd[:2]}: the Verify line {argv}")
            check_eq(argv[argv.index("--") + 1:][:1], ["env"] if cmd[0] == "env" else [BLAME],
                     f"{cmd[:2]}: the command (env keeps FOO=1)")
            p = run(mb, "exec", "--print-commands", *argv)
            check(p.returncode == 0 and (lib in p.stdout if cmd[0] == "-a" else True),
                  f"{cmd[:2]}: exec's commands: {p.stdout[-400:]!r}")


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("SKIP: diagnose needs root", file=sys.stderr)
        sys.exit(SKIP)
    if not os.path.exists("/sys/kernel/tracing/events/syscalls") and \
            not os.path.exists("/sys/kernel/debug/tracing/events/syscalls"):
        print("SKIP: no tracefs", file=sys.stderr)
        sys.exit(SKIP)
    sys.exit(main({name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}))
