#!/usr/bin/env python3
"""test_frameworks.py - the framework suite (workloads/frameworks/) is
deterministic and runs under every installed allocator (tests/meson.build).

    test_frameworks.py MALLOCBENCH CASE BUILDDIR

CASE is a program: infer, train, elementwise, train_step (libtorch C++),
numpy, serve (serve_model.py loaded by client.py).  Each, with short
arguments: run twice directly, the same checksum both times; then through
`mallocbench exec` (serve: `mallocbench serve`, the client unpreloaded) under
each installed family (one invocation each, one sample): status ok, the
printed figure taken by --metric (> 0; serve: the client's p50 and p99 too),
and the checksum the program (serve: the client, over the server's answers)
printed under that allocator equal to the direct one.  exec records no
checksum for a program it did not write, so the command is `sh -c 'PROG >
FILE'` plus a cat of FILE: the figure still reaches --metric and the
checksum is read from FILE.  Skips (77) with the reason when
python3-torch or numpy is missing, or train_step was not built.
"""
import os
import re
import shlex
import subprocess
import sys

from mbtest import SKIP, check, check_eq, installed, main, rows, run

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FW = os.path.join(ROOT, "workloads", "frameworks")
BUILD = sys.argv[3] if len(sys.argv) > 3 else os.path.join(ROOT, "build")
PY = "/usr/bin/python3"  # Debian's: python3-torch and python3-numpy live there

# name: (argv with short arguments, --metric regex, what it needs)
PROGRAMS = {
    "infer": ([PY, f"{FW}/infer.py", "--requests", "20", "--max-batch", "32"], r"samples/s: ([0-9.]+)", "torch"),
    "train": ([PY, f"{FW}/train.py", "--steps", "2", "--batch", "4096", "--hidden", "64"],
              r"steps/s: ([0-9.]+)", "torch"),
    "elementwise": ([PY, f"{FW}/elementwise.py", "--size-mib", "8", "--steps", "2"], r"steps/s: ([0-9.]+)", "torch"),
    "train_step": ([f"{BUILD}/workloads/frameworks/train_step", "--steps", "2", "--batch", "4096", "--hidden", "64"],
                   r"steps/s: ([0-9.]+)", "train_step"),
    "numpy": ([PY, f"{FW}/numpy_pipeline.py", "--batches", "2", "--rows", "256", "--cols", "256"],
              r"batches/s: ([0-9.]+)", "numpy"),
    # the client; the server is SERVER, started by serve (or by direct_serve)
    "serve": ([PY, f"{FW}/client.py", "http://127.0.0.1:{port}", "--requests", "30", "--max-batch", "32"],
              r"requests/s: ([0-9.]+)", "torch"),
}
SERVER = [PY, f"{FW}/serve_model.py", "--port", "{port}"]
CHECKSUM = re.compile(r"^checksum: ([0-9a-f]{16})$", re.M)


def missing(need):
    """Why the program cannot run here, or None."""
    if need == "train_step":
        path = PROGRAMS["train_step"][0][0]
        return None if os.access(path, os.X_OK) else \
            f"{path} not built (libtorch-dev missing: make deps-frameworks, then meson setup --reconfigure)"
    mod = {"torch": "torch", "numpy": "numpy"}[need]
    p = subprocess.run([PY, "-c", f"import {mod}"], capture_output=True, text=True)
    return None if p.returncode == 0 else f"{PY} cannot import {mod} (apt-get install python3-{mod})"


def checksum_of(text, what):
    m = CHECKSUM.findall(text)
    check(len(m) == 1, f"{what}: expected one 'checksum: HEX' line, output:\n{text}")
    return m[0] if m else None


def direct_serve(argv, what):
    """The client against the server started here, on the port it picks (--port 0)."""
    srv = subprocess.Popen([w.replace("{port}", "0") for w in SERVER], stdout=subprocess.PIPE, text=True,
                           cwd=ROOT)
    try:
        line = srv.stdout.readline()
        check(line.startswith("ready: http://"), f"{what}: the server's ready line: {line!r}")
        port = line.rsplit(":", 1)[-1].strip()
        return subprocess.run([w.replace("{port}", port) for w in argv], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)
    finally:
        srv.terminate()
        srv.wait(timeout=30)


def direct(argv, what):
    if "{port}" in " ".join(argv):
        p = direct_serve(argv, what)
    else:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=120, cwd=ROOT)
    check_eq(p.returncode, 0, f"{what}: exit status (stderr: {p.stderr[-2000:]})")
    return checksum_of(p.stdout, what)


LOADER_FLAKE = "Inconsistency detected by ld.so: dl-sort-maps.c"


def case(name):
    def body(mb, tmp):
        argv, metric, need = PROGRAMS[name]
        why = missing(need)
        if why:
            print(f"SKIP: {why}", file=sys.stderr)
            sys.exit(SKIP)
        first = direct(argv, f"{name} (direct, 1st)")
        second = direct(argv, f"{name} (direct, 2nd)")
        check_eq(second, first, f"{name}: checksum of a second direct run")
        print(f"{name}: direct checksum {first}")
        for fam in installed(mb):
            out = os.path.join(tmp, f"{name}-{fam}.out")
            csv = os.path.join(tmp, f"{name}-{fam}.csv")
            cmd = f"{shlex.join(argv)} > {shlex.quote(out)}; rc=$?; cat {shlex.quote(out)}; exit $rc"
            for attempt in range(3):
                if os.path.exists(csv):
                    os.unlink(csv)
                common = ["-q", "--force", "-a", fam, "-r", "1", "--warmup-runs", "0", "--timeout", "2m", "--metric", metric,
                          "-o", csv]
                if name == "serve":
                    run(mb, "serve", *common, "--ready", "tcp:auto", "--ready-timeout", "60",
                        "--latency", "p50=p50_ms: ([0-9.]+)", "--latency", "p99=p99_ms: ([0-9.]+)",
                        "--client", f"sh -c {shlex.quote(cmd)}", "--", *SERVER)
                else:
                    run(mb, "exec", *common, "--", "sh", "-c", cmd)
                rs = rows(csv)
                # glibc 2.36's loader sometimes asserts while python loads torch's many libraries
                # under scudo (_dl_sort_maps_dfs: rpo_head == rpo): the loader's, not the program's
                # or ours; said, then tried again, at most twice
                if not (rs and LOADER_FLAKE in rs[0]["message"]):
                    break
                print(f"{name}: {fam}: the loader's assertion ({LOADER_FLAKE}), attempt {attempt + 1}: again")
            check_eq(len(rs), 1, f"{name} under {fam}: rows")
            if not rs:
                continue
            r = rs[0]
            check_eq(r["status"], "ok", f"{name} under {fam}: status (message: {r.get('message')!r})")
            fig = float(r["throughput"]) if r["throughput"] else 0.0
            check(fig > 0, f"{name} under {fam}: figure {r['throughput']!r} is not > 0")
            if name == "serve":
                p50, p99 = float(r["latency_p50_us"] or 0), float(r["latency_p99_us"] or 0)
                check(0 < p50 <= p99, f"serve under {fam}: the client's latencies p50 {p50} p99 {p99} us")
                check(int(r["region_minor_faults"] or 0) > 0, f"serve under {fam}: the server's faults")
            with open(out) if os.path.exists(out) else open(os.devnull) as f:
                got = checksum_of(f.read(), f"{name} under {fam}")
            check_eq(got, first, f"{name} under {fam}: checksum")
            print(f"{name}: {fam:10s} {r['status']} {fig:10.2f} {r['throughput_unit']:10s} checksum {got}")
    return body


if __name__ == "__main__":
    sys.exit(main({n: case(n) for n in PROGRAMS}))
