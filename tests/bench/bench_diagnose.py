#!/usr/bin/env python3
"""bench_diagnose.py - `mallocbench diagnose` against reality, and what it costs (issue 32).

    bench_diagnose.py MALLOCBENCH BUILD_TESTS_DIR overhead [PAIRS]
    bench_diagnose.py MALLOCBENCH BUILD_TESTS_DIR validate [BLOCKS]
    bench_diagnose.py MALLOCBENCH BUILD_TESTS_DIR rank [PAIRS]
    bench_diagnose.py MALLOCBENCH BUILD_TESTS_DIR attach [REPEATS]

overhead: each program's own time for its work (the "elapsed S" it prints) run alone and run
as `diagnose -- CMD` (the events open before it starts), in alternating pairs: the paired ratio
(Hodges-Lehmann, 95% CI, the project's one estimator), diagnose's CPU per record, and the wall
time added per fault.  refault_prog re-faulting as fast as it can (the worst case), refault_prog
below 5,000 faults/s (the goal: <= 2%), a CPU-bound Python loop.

validate: each framework program (workloads/frameworks/) under each family that re-faults
there (glibc, jemalloc, mimalloc, scudo, with their defaults), started on its own with
diagnose attached from outside for a window after its start-up: the predicted gain of the
family's keep setting; then `mallocbench run` of the default against the keep setting, paired
blocks, through compare: the measured gain and its CI.  Prints the table the closing note
quotes: predicted against measured, and whether each goal is met (issue 32's "prove it").
Needs Debian's python3-torch (else skips); all of it ~60 min on 2 cores (DIAG_PROGRAMS and
DIAG_FAMILIES keep fewer).

attach (issue 43): what a process's mapping count costs diagnose.  A target with 100 and with
60,000 file mappings (one page of a file at each of 60,000 adjacent addresses: none merge),
idle, watched for 1 ms: diagnose's own CPU (attach reads /proc/PID/maps); then the same targets
madvising and re-touching a page as fast as they can, watched for 2 s: diagnose's CPU per
recorded record at both counts.  Goals: attach <= 0.5 s of CPU at 60,000; the per-record cost
at 60,000 within noise of that at 100 (medians of REPEATS, their ratio).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from mallocbench import compare, mbdata, stats

MB = sys.argv[1] if len(sys.argv) > 1 else "build/mallocbench"
BUILD = sys.argv[2] if len(sys.argv) > 2 else "build/tests"
WHAT = sys.argv[3] if len(sys.argv) > 3 else "overhead"
PY = "/usr/bin/python3"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def diag(args, timeout=600):
    p = subprocess.run([MB, "diagnose", "--json", *args], capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        raise SystemExit(f"diagnose {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    out = p.stdout
    return json.loads(out[out.index("{"):] if not out.startswith("{") else out)


def timed(cmd, attach):
    """The program's own time for its work ("elapsed S" it prints), run alone or as diagnose's
    command (`diagnose -- CMD`: the events are open before it starts, so diagnose's start-up
    does not share its CPU), with the document of the watched run."""
    argv = ([MB, "diagnose", "--json", "--"] if attach else []) + cmd
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True).stdout
    elapsed = float(next(l.split()[1] for l in out.splitlines() if l.startswith("elapsed ")))
    doc = json.loads(out[out.index("\n{") + 1:]) if attach else None
    return elapsed, doc


def overhead():
    pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    loop = ("import time\nt = time.perf_counter()\ns = 0\nfor i in range(20_000_000): s += i * i\n"
            "print('elapsed', time.perf_counter() - t)")
    progs = [("refault_prog, busy", [os.path.join(BUILD, "refault_prog"), "1000", "300", "0"]),
             ("refault_prog, 4k faults/s", [os.path.join(BUILD, "refault_prog"), "200", "100", "50"]),
             ("python3 loop, few faults", [PY, "-c", loop])]
    print(f"the program's own time, alone and watched by `diagnose -- CMD`: {pairs} alternating pairs each")
    print(f"{'program':26} {'alone s':>8} {'watched s':>9} {'ratio (95% CI)':>24} {'faults/s':>9} "
          f"{'records':>8} {'ns/record (diagnose CPU)':>25} {'ns/fault (wall)':>16}")
    for name, cmd in progs:
        alone, watched, docs = [], [], []
        for i in range(pairs):
            for attach in ((False, True) if i % 2 == 0 else (True, False)):
                wall, doc = timed(cmd, attach)
                (watched if attach else alone).append(wall)
                if doc:
                    docs.append(doc)
        ch = stats.paired_change(alone, watched)
        faults = sum(sum(e["faults"][k] for k in ("minor", "major")) for e in docs[-1]["processes"])
        records = stats.median([d["watch"]["records"] for d in docs])
        selfcpu = stats.median([d["self_cpu_s"] for d in docs])
        extra = stats.median(watched) - stats.median(alone)
        print(f"{name:26} {stats.median(alone):8.3f} {stats.median(watched):9.3f} "
              f"{ch.estimate:8.4f} [{ch.lo:.4f}, {ch.hi:.4f}] {faults / stats.median(watched):9,.0f} "
              f"{records:8,.0f} {selfcpu * 1e9 / records if records else 0:25,.0f} "
              + (f"{extra * 1e9 / faults:16,.0f}" if faults / stats.median(watched) > 1000 else f"{'-':>16}"))


# ---- validation ----------------------------------------------------------------------------

PROGRAMS = [
    ("elementwise", ["workloads/frameworks/elementwise.py", "--size-mib", "16", "--steps", "{n}"], 8,
     r"steps/s: ([0-9.]+)"),
    ("train", ["workloads/frameworks/train.py", "--steps", "{n}", "--batch", "16384", "--hidden", "128"], 5,
     r"steps/s: ([0-9.]+)"),
    ("infer", ["workloads/frameworks/infer.py", "--requests", "{n}", "--max-batch", "64"], 200,
     r"samples/s: ([0-9.]+)"),
    ("numpy", ["workloads/frameworks/numpy_pipeline.py", "--batches", "{n}", "--rows", "1024", "--cols", "1024"], 8,
     r"batches/s: ([0-9.]+)"),
    # the served model: serve_model.py under the family, client.py (plain glibc, not counted)
    # driving it; n: requests per measured run
    ("serve", ["workloads/frameworks/serve_model.py", "--port", "{port}"], 200, r"requests/s: ([0-9.]+)"),
]
FAMILIES = ["glibc", "jemalloc", "mimalloc", "scudo"]
# DIAG_PROGRAMS, DIAG_FAMILIES: comma lists to keep (default all)
if os.environ.get("DIAG_PROGRAMS"):
    PROGRAMS = [p for p in PROGRAMS if p[0] in os.environ["DIAG_PROGRAMS"].split(",")]
if os.environ.get("DIAG_FAMILIES"):
    FAMILIES = [f for f in FAMILIES if f in os.environ["DIAG_FAMILIES"].split(",")]
STARTUP_S, WINDOW_S = 4.0, 5.0


def have_torch():
    """Debian's python3-torch importable; else a line saying so (the caller skips, 77)."""
    try:
        subprocess.run([PY, "-c", "import torch"], check=True, capture_output=True)
        return True
    except (subprocess.CalledProcessError, FileNotFoundError):
        print("SKIP: python3-torch is not installed")
        return False


def libraries():
    out = subprocess.run([MB, "list", "allocators"], capture_output=True, text=True).stdout.splitlines()[1:]
    libs = {}
    for line in out:
        f = line.split()
        if len(f) >= 3 and f[1] == "yes":
            libs[f[0]] = "" if f[2] == "(libc)" else f[2]
    return libs


def predicted(name, args, n, lib):
    """diagnose -p on the program under lib, after its start-up, for WINDOW_S."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith(("MALLOC_", "GLIBC_TUNABLES", "LD_PRELOAD", "MIMALLOC_", "SCUDO_", "MB_")):
            env.pop(k)
    if lib:
        env["LD_PRELOAD"] = lib
    client = None
    if name == "serve":  # the server on a port of the kernel's choosing, loaded by the client
        p = subprocess.Popen([PY] + [a.replace("{port}", "0") for a in args], cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = p.stdout.readline().split("ready: ")[-1].strip()
        cenv = {k: v for k, v in env.items() if k != "LD_PRELOAD"}
        client = subprocess.Popen([PY, "workloads/frameworks/client.py", url, "--requests", str(n * 1000)],
                                  cwd=ROOT, env=cenv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        cmd = [PY] + [a.replace("{n}", str(n * 20)) for a in args]
        p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(STARTUP_S)
        doc = diag(["-p", str(p.pid), "--duration", f"{WINDOW_S}s", "--calibrate"])
    finally:
        for q in (client, p):
            if q:
                q.send_signal(signal.SIGKILL)
                q.wait()
    from mallocbench import diagnose
    t = diagnose.targets(doc)[0]
    return t


def measured(tmp, blocks, libs, keeps):
    ini = os.path.join(tmp, "validate.ini")
    labels = []
    for fam in FAMILIES:
        if fam in libs:
            labels += [fam, f"{fam}-keep={fam}"]
    with open(ini, "w") as f:
        f.write(f"[run]\nrepetitions = {blocks}\nwarmup_runs = 1\ntimeout = 5m\nallocators = {','.join(labels)}\n\n")
        for name, args, n, metric in PROGRAMS:
            cmd = " ".join([PY] + [a.replace("{n}", str(n)) for a in args])
            if name == "serve":  # as matrices/frameworks.ini has it
                f.write(f"[workload serve model]\nready = tcp:auto\nready_timeout = 60\nmetric = {metric}\n"
                        f"unit = req/s\nclient = {PY} workloads/frameworks/client.py http://127.0.0.1:{{port}} "
                        f"--requests {n}\ncmd = {cmd}\n\n")
                continue
            f.write(f"[workload exec {name}]\ncmd = {cmd}\nmetric = {metric}\nunit = {metric.split(':')[0]}\n\n")
        for fam in FAMILIES:
            if fam in libs and keeps.get(fam):
                f.write(f"[tunables {fam}-keep]\n" + "".join(f"{s.replace('=', ' = ', 1)}\n" for s in keeps[fam]) + "\n")
    # DIAG_CSV: where the run goes (kept), or an earlier run's CSV to read instead of running
    csv = os.environ.get("DIAG_CSV") or os.path.join(tmp, "validate.csv")
    if not os.path.exists(csv):
        subprocess.run([MB, "run", "-m", ini, "-o", csv, "--keep-going"], cwd=ROOT, check=False)
    out = {}
    faults = {}  # (program, config label) -> region faults per run, median
    run = mbdata.load(csv)
    for r in run.rows:
        if r.get("status") != "ok":
            continue
        for name, args, _, _ in PROGRAMS:
            if args[0] in r["workload_params"]:
                faults.setdefault((name, r["config"].split("[")[0]), []).append(float(r["region_minor_faults"] or 0))
    for fam in FAMILIES:
        if fam not in libs:
            continue
        for name, *_ in PROGRAMS:
            a, b = faults.get((name, fam)), faults.get((name, f"{fam}-keep"))
            if a and b:
                out[("removed", name, fam)] = 1 - stats.median(b) / stats.median(a)
        for rec in compare.api(csv, baseline=fam, metrics=["throughput"])["cells"]:
            if rec["geomean"] or not rec["config"].startswith(f"{fam}-keep"):
                continue
            for name, args, _, _ in PROGRAMS:  # an exec workload is named by its command
                if args[0] in rec["params"]:
                    out[(name, fam)] = rec
    return out


def validate():
    blocks = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    if not have_torch():
        return 77
    libs = libraries()
    preds, keeps = {}, {}
    for name, args, n, _ in PROGRAMS:
        for fam in FAMILIES:
            if fam not in libs:
                continue
            t = predicted(name, args, n, libs[fam])
            preds[(name, fam)] = t
            if t["prediction"]:
                keeps[fam] = t["prediction"]["settings"]
            print(f"predicted {name:12} {fam:9}: allocator seen {t['allocator']['family']}, "
                  f"{t['faults_per_s']:,.0f} faults/s, re-faults {100 * t['alloc_refault_share']:.0f}% (allocator), "
                  f"gain {saved_gain(t)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        meas = measured(tmp, blocks, libs, keeps)
    print()
    print("re-fault share: diagnose's, of the allocator's give-backs, in a 5 s window after start-up;")
    print("removed: (faults default - faults keep) / faults default, exec's region, per run (issue 32: within 10 points);")
    print("inside: the measured gain inside the predicted interval; 25%: |upper end - measured| <= 0.25 x measured")
    print(f"{'program':12} {'family':9} {'re-fault share':>15} {'removed (exec)':>15} {'predicted gain':>19} "
          f"{'measured gain (95% CI)':>30} {'inside':>7} {'25%':>5}")
    for (name, fam), t in preds.items():
        rec = meas.get((name, fam))
        p = t["prediction"] or {}
        lo, hi = (p.get("speedup") or [1, 1])
        rem = meas.get(("removed", name, fam))
        rem_s = f"{100 * rem:14.0f}%" if rem is not None else f"{'':>15}"
        if not rec or rec.get("estimate") is None:
            print(f"{name:12} {fam:9} {100 * t['alloc_refault_share']:14.0f}% {rem_s} {lo - 1:+8.1%}..{hi - 1:+7.1%}")
            continue
        r, clo, chi = rec["estimate"], rec["lo"], rec["hi"]
        gain = r - 1
        inside = (lo <= 1.005) if clo <= 1 <= chi else (lo - 1 <= gain <= hi - 1)
        close = "-" if clo <= 1 <= chi or gain <= 0.10 else ("met" if abs(hi - 1 - gain) <= 0.25 * gain else "no")
        print(f"{name:12} {fam:9} {100 * t['alloc_refault_share']:14.0f}% {rem_s} {lo - 1:+8.1%}..{hi - 1:+7.1%}   "
              f"{gain:+9.1%} [{clo - 1:+.1%}, {chi - 1:+.1%}]  {'yes' if inside else 'NO':>6} {close:>5}")
    return 0


def saved_gain(t):
    p = t["prediction"]
    if not p:
        return "no keep setting"
    lo, hi = p["speedup"]
    return f"{lo - 1:+.1%}..{hi - 1:+.1%}" + ("" if p["cpu_bound"] else " (up to)")


def rank():
    """--all on a host running three framework programs at once whose losses differ many times
    (elementwise under jemalloc's defaults, numpy under mimalloc or train under glibc, infer under
    glibc): ranked in that order, and how far apart their losses are.  Then the worst of them (elementwise, jemalloc) alone against watched by diagnose: its
    own steps/s, paired, the overhead on the worst framework program."""
    if not have_torch():
        return 77
    libs = libraries()
    je = libs.get("jemalloc")
    # the middle one: DIAG_RANK_MIDDLE=train (under glibc) or numpy (under mimalloc, the default)
    middle = os.environ.get("DIAG_RANK_MIDDLE", "numpy")
    runs = [("elementwise", je, ["workloads/frameworks/elementwise.py", "--size-mib", "16", "--steps", "400"]),
            ("train", "", ["workloads/frameworks/train.py", "--steps", "400", "--batch", "16384", "--hidden", "128"])
            if middle == "train" else
            ("numpy", libs.get("mimalloc", ""), ["workloads/frameworks/numpy_pipeline.py", "--batches", "400",
                                                 "--rows", "1024", "--cols", "1024"]),
            ("infer", "", ["workloads/frameworks/infer.py", "--requests", "40000", "--max-batch", "64"])]
    procs = []
    for name, lib, args in runs:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LD_PRELOAD", "MALLOC_", "MB_"))}
        if lib:
            env["LD_PRELOAD"] = lib
        procs.append((name, subprocess.Popen([PY] + args, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL)))
    try:
        time.sleep(STARTUP_S + 2)
        doc = diag(["--all", "--duration", f"{WINDOW_S}s"])
    finally:
        for _, p in procs:
            p.kill()
            p.wait()
    from mallocbench import diagnose
    ts = {t["pid"]: t for t in diagnose.targets(doc)}
    order = [t["pid"] for t in diagnose.targets(doc)]
    print(f"--all, {WINDOW_S:g} s, three framework programs at once on 2 cores:")
    print(f"{'program':12} {'rank of all':>11} {'CPU s':>7} {'lost to re-faults s':>20} {'faults/s':>9}")
    for name, p in procs:
        t = ts.get(p.pid)
        if t:
            print(f"{name:12} {order.index(p.pid) + 1:11d} {t['cpu_s']:7.2f} {t['lost_to_refaults_s']:20.3f} "
                  f"{t['faults_per_s']:9,.0f}")
    ours = [order.index(p.pid) for _, p in procs if p.pid in ts]
    print("ranked in the expected order:", "yes" if ours == sorted(ours) and len(ours) == 3 else "NO")
    lost = [ts[p.pid]["lost_to_refaults_s"] for _, p in procs if p.pid in ts]
    if len(lost) == 3:
        print("losses apart: " + ", ".join(f"{a / b:.1f}x" if b > 0 else "inf" for a, b in zip(lost, lost[1:]))
              + " (the issue: >= 3x)")
    # the overhead on the worst program: its own steps/s, alone and watched (-p after start-up)
    pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    alone, watched = [], []
    cmd = [PY, "workloads/frameworks/elementwise.py", "--size-mib", "16", "--steps", "8"]
    # the program preloaded through env(1) both ways: diagnose itself runs unpreloaded
    preload = ["env", f"LD_PRELOAD={je or ''}"]
    for i in range(pairs):
        for attach in ((False, True) if i % 2 == 0 else (True, False)):
            argv = ([MB, "diagnose", "--json", "--"] if attach else []) + preload + cmd
            out = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600).stdout
            rate = float(next(l.split()[1] for l in out.splitlines() if l.startswith("steps/s:")))
            (watched if attach else alone).append(rate)
    ch = stats.paired_change(alone, watched)
    print(f"elementwise under jemalloc (~60,000 faults/s), steps/s alone {stats.median(alone):.3f}, watched "
          f"{stats.median(watched):.3f}: watched/alone {ch.estimate:.4f} [{ch.lo:.4f}, {ch.hi:.4f}] ({pairs} pairs)"
          if ch and ch.lo is not None else f"too few pairs for a CI: {alone} {watched}")
    return 0


MAPPER = r"""
import ctypes, mmap, os, sys, tempfile
n, busy = int(sys.argv[1]), sys.argv[2] == "busy"
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
fd, path = tempfile.mkstemp()
os.ftruncate(fd, 4096)
os.unlink(path)
base = libc.mmap(None, n * 4096, 0, 0x22, -1, 0)  # PROT_NONE, MAP_PRIVATE|MAP_ANONYMOUS: the room
for i in range(n):  # MAP_SHARED|MAP_FIXED, offset 0 each time: neighbours never merge
    assert libc.mmap(base + i * 4096, 4096, 1, 0x11, fd, 0) == base + i * 4096
buf = mmap.mmap(-1, 4096)
addr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
print("ready", flush=True)
if not busy:
    sys.stdin.read()
while True:
    buf[0] = 1
    libc.madvise(addr, 4096, 4)  # MADV_DONTNEED: the next write re-faults
"""


def attach():
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    res = {}
    for n in (100, 60000):
        for busy in (False, True):
            cpu, per = [], []
            for _ in range(repeats):
                p = subprocess.Popen([PY, "-c", MAPPER, str(n), "busy" if busy else "idle"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
                if not p.stdout.readline().startswith("ready"):
                    raise SystemExit(f"the target with {n} mappings did not start (vm.max_map_count?)")
                try:
                    doc = diag(["-p", str(p.pid), "--duration", "2s" if busy else "1ms"])
                finally:
                    p.kill()
                    p.wait()
                cpu.append(doc["self_cpu_s"])
                # the window's CPU less the attach it began with (the idle runs' median, measured first)
                attach_s = res[n, False][0] if busy else 0.0
                per.append((doc["self_cpu_s"] - attach_s) * 1e9 / max(doc["watch"]["records"], 1))
            res[n, busy] = (stats.median(cpu), stats.median(per))
    print(f"diagnose and a process's mappings (medians of {repeats}):")
    print(f"{'mappings':>9}  {'attach CPU s':>12}  {'ns CPU / record (busy, less attach)':>34}")
    for n in (100, 60000):
        print(f"{n:>9}  {res[n, False][0]:>12.3f}  {res[n, True][1]:>34,.0f}")
    ratio = res[60000, True][1] / res[100, True][1]
    print(f"attach at 60,000 mappings: {res[60000, False][0]:.3f} s of CPU (goal <= 0.5 s): "
          f"{'met' if res[60000, False][0] <= 0.5 else 'NOT met'}")
    print(f"per-record cost, 60,000 / 100 mappings: {ratio:.2f}x (goal: no growth, ~1x): "
          f"{'met' if ratio < 1.25 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(overhead() if WHAT == "overhead" else rank() if WHAT == "rank" else attach() if WHAT == "attach"
             else validate())
