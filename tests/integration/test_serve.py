#!/usr/bin/env python3
"""test_serve.py - `mallocbench serve` (tests/meson.build).

    test_serve.py MALLOCBENCH CASE BUILDDIR

The server and client are tests/programs/serve_prog.c (BUILDDIR/tests/serve_prog).

counts       under every installed allocator: status ok, the server's allocator
             proven, the figure and the latencies from the client's output, the
             server's region faults > 0; a client that allocates and touches
             64 MiB before each request (16384 faults each, 800k in all) leaves
             the server's counts where they were (the client is not counted); no
             process of the sample is left.
never_ready  a server that never listens: an error row "not ready after 1 s" in
             well under the --timeout, and nothing left running.
ignore_term  a server that ignores SIGTERM is killed after --grace: row ok,
             stop=kill, the sample lasts the grace and no more, nothing left.
failures     a client that fails, a server that exits under load, a port that
             another process already listens on: rows with status error, each
             saying why; a server that defines its own malloc is refused before
             any run.
ready_file   ready=file:PATH: a file left from before does not count as ready
             (the server that never writes it times out); one the server
             creates does.
memcached    Debian's memcached under every installed allocator, loaded by
             memcaslap (libmemcached-tools): ok, proven, its TPS the figure, its
             region faults > 0; skips (77) when either is missing.
cli          missing --ready, --client or server, a bad ready, latency name or
             client, --profile (a server needs its client): one-line errors, exit 2;
             serve as a [workload serve] section of a matrix, and `compare` on
             its CSV.
"""
import os
import socket
import subprocess
import sys
import time

from mbtest import check, check_eq, installed, main, metrics, rows, run  # noqa: E402

BUILD = sys.argv[3] if len(sys.argv) > 3 else "build"
PROG = os.path.join(BUILD, "tests", "serve_prog")
HOG = 64 << 20


TAG = f"--tag=case{os.getpid()}"  # on every command line of this case: other cases run beside it


def left_running():
    """This case's serve_prog processes still alive."""
    p = subprocess.run(["pgrep", "-f", TAG], capture_output=True, text=True)
    return [l for l in p.stdout.split() if l.strip()]


def serve(mb, out, *opts, client="", server="", expect_rc=0):
    return run(mb, "serve", "-o", out, "--ready", "tcp:auto", *opts, "--client", f"{client} {TAG}", "--",
               *server.split(), TAG, expect_rc=expect_rc)


def case_counts(mb, tmp):
    fams = installed(mb)
    for fam in fams:
        res = {}
        for hog in (0, HOG):
            out = os.path.join(tmp, f"{fam}-{hog}.csv")
            client = f"{PROG} client {{port}} --requests 50" + (f" --hog {hog}" if hog else "")
            serve(mb, out, "-a", fam, "-r", "2", "--metric", "requests/s: ([0-9.]+)", "--unit", "req/s",
                  "--latency", "p50=p50_us: ([0-9.]+)", "--latency", "p99=p99_us: ([0-9.]+)",
                  "--latency-unit", "us", client=client, server=f"{PROG} server {{port}} --alloc 4194304")
            rs = rows(out)
            check_eq(len(rs), 2, f"{fam} hog={hog}: rows")
            for r in rs:
                check_eq(r["status"], "ok", f"{fam} hog={hog}: status ({r['message']})")
                check(float(r["throughput"] or 0) > 0 and r["throughput_unit"] == "req/s",
                      f"{fam}: figure from the client: {r['throughput']} {r['throughput_unit']}")
                p50, p99 = float(r["latency_p50_us"] or 0), float(r["latency_p99_us"] or 0)
                check(0 < p50 <= p99, f"{fam}: latencies from the client: p50 {p50} p99 {p99}")
                check_eq(r["latency_what"], "request", f"{fam}: latency_what")
                check_eq((r["latency_p999_us"], r["latency_max_us"]), ("", ""),
                         f"{fam}: latencies not asked for are empty (not measured)")
                check(int(r["region_minor_faults"] or 0) > 0, f"{fam}: the server faults in its region")
                check(fam == "glibc" or fam in r["malloc_so"], f"{fam}: proven: {r['malloc_so']}")
            res[hog] = min(int(r["region_minor_faults"] or 0) for r in rs)
        print(f"{fam}: server region faults {res[0]} with a plain client, {res[HOG]} with a client that "
              f"faults 800k times")
        # the hog's 50 x 16384 faults would be visible many times over if counted
        check(res[HOG] <= res[0] * 1.5 + 5000,
              f"{fam}: the client's faults are not the server's: {res[HOG]} against {res[0]}")
    check_eq(left_running(), [], "no server or client left running")


def case_never_ready(mb, tmp):
    out = os.path.join(tmp, "n.csv")
    t0 = time.monotonic()
    serve(mb, out, "-a", "glibc", "-r", "1", "--ready-timeout", "1", "--timeout", "60",
          client=f"{PROG} client {{port}}", server=f"{PROG} server {{port}} --never-ready", expect_rc=4)
    took = time.monotonic() - t0
    rs = rows(out)
    check_eq([r["status"] for r in rs], ["error"], "a server that never gets ready")
    check(rs and "not ready after 1 s" in rs[0]["message"], f"message: {rs[0]['message'] if rs else ''}")
    check(took < 20, f"it gave up after the ready time-out, not --timeout: {took:.1f} s")
    check_eq(left_running(), [], "nothing left running")


def case_ignore_term(mb, tmp):
    out = os.path.join(tmp, "t.csv")
    serve(mb, out, "-a", "glibc", "-r", "1", "--grace", "1",
          client=f"{PROG} client {{port}} --requests 20", server=f"{PROG} server {{port}} --ignore-term")
    rs = rows(out)
    check_eq([r["status"] for r in rs], ["ok"], f"rows: {[r['message'] for r in rs]}")
    if rs:
        check_eq(metrics(rs[0]).get("stop"), "kill", "stopped with SIGKILL after the grace")
        wall = float(rs[0]["total_wall_s"])
        check(1.0 <= wall < 6, f"the server lived the grace (1 s) after its client, no more: {wall:.2f} s")
    check_eq(left_running(), [], "nothing left running")
    out2 = os.path.join(tmp, "t2.csv")
    serve(mb, out2, "-a", "glibc", "-r", "1", client=f"{PROG} client {{port}} --requests 20",
          server=f"{PROG} server {{port}}")
    rs = rows(out2)
    check(rs and metrics(rs[0]).get("stop") == "term", "a server that obeys SIGTERM is not killed")


def case_failures(mb, tmp):
    out = os.path.join(tmp, "f.csv")
    serve(mb, out, "-a", "glibc", "-r", "1", client=f"{PROG} client 1",
          server=f"{PROG} server {{port}}", expect_rc=4)  # 4: no ok sample
    rs = rows(out)
    check(rs and rs[0]["status"] == "error" and "the client exited with code 1" in rs[0]["message"]
          and "request 0 failed" in rs[0]["message"], f"failing client: {rs[0]['message'] if rs else rs}")
    out = os.path.join(tmp, "g.csv")
    serve(mb, out, "-a", "glibc", "-r", "1", client=f"{PROG} client {{port}} --requests 50",
          server=f"{PROG} server {{port}} --exit-after 5", expect_rc=4)
    rs = rows(out)
    check(rs and rs[0]["status"] == "error" and "exit code 3" in rs[0]["message"]
          and "while its client ran" in rs[0]["message"], f"server dies: {rs[0]['message'] if rs else rs}")
    # a port another process listens on would be taken for the server
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(4)
    port = busy.getsockname()[1]
    out = os.path.join(tmp, "h.csv")
    run(mb, "serve", "-o", out, "-a", "glibc", "-r", "1", "--ready", f"tcp:{port}", "--client",
        f"{PROG} client {port} {TAG}", "--", PROG, "server", str(port), TAG, expect_rc=4)
    busy.close()
    rs = rows(out)
    check(rs and rs[0]["status"] == "error" and "already accepts connections" in rs[0]["message"],
          f"port taken: {rs[0]['message'] if rs else rs}")
    own = os.path.join(BUILD, "tests", "own_malloc_def")
    if os.path.exists(own):
        p = run(mb, "serve", "-o", os.path.join(tmp, "o.csv"), "-a", "glibc", "--ready", "tcp:auto",
                "--client", f"{PROG} client {{port}} {TAG}", "--", own, "{port}", TAG, expect_rc=2)
        check("defines its own malloc" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
              f"own malloc refused in one line: {p.stderr!r}")
        check(not os.path.exists(os.path.join(tmp, "o.csv")), "refused before any run")
    check_eq(left_running(), [], "nothing left running")


def case_ready_file(mb, tmp):
    flag = os.path.join(tmp, "ready.flag")
    with open(flag, "w"):
        pass
    out = os.path.join(tmp, "s.csv")
    run(mb, "serve", "-o", out, "-a", "glibc", "-r", "1", "--ready", f"file:{flag}", "--ready-timeout", "1",
        "--client", f"{PROG} client 47999", "--", PROG, "server", "47999", "--never-ready", expect_rc=4)
    rs = rows(out)
    check(rs and rs[0]["status"] == "error" and "not ready" in rs[0]["message"],
          f"a stale file is not readiness: {rs[0]['message'] if rs else rs}")
    os.unlink(flag)
    out = os.path.join(tmp, "r.csv")
    serve_port = free_port()
    run(mb, "serve", "-o", out, "-a", "glibc", "-r", "2", "--ready", f"file:{flag}", "--client",
        f"{PROG} client {serve_port} --requests 20", "--", PROG, "server", str(serve_port), "--ready-file", flag)
    rs = rows(out)
    check_eq([r["status"] for r in rs], ["ok", "ok"], f"ready=file: {[r['message'] for r in rs]}")


def case_memcached(mb, tmp):
    import shutil
    if not shutil.which("memcached") or not shutil.which("memcaslap"):
        print("SKIP: memcached or memcaslap missing (apt-get install memcached libmemcached-tools)",
              file=sys.stderr)
        sys.exit(77)
    out = os.path.join(tmp, "mc.csv")
    run(mb, "serve", "-o", out, "-r", "1", "--ready", "tcp:auto", "--metric", "TPS: ([0-9]+)", "--unit", "ops/s",
        "--client", "memcaslap -s 127.0.0.1:{port} -T 1 -c 4 -x 20000 -X 16384", "--",
        "memcached", "-p", "{port}", "-U", "0", "-t", "1", "-u", "root" if os.getuid() == 0 else os.getlogin(),
        "-m", "128")
    rs = rows(out)
    check_eq(sorted(r["allocator"] for r in rs), sorted(installed(mb)), "one row per installed allocator")
    for r in rs:
        check_eq(r["status"], "ok", f"memcached under {r['allocator']}: status ({r['message']})")
        check(float(r["throughput"] or 0) > 0, f"{r['allocator']}: TPS {r['throughput']}")
        check(int(r["region_minor_faults"] or 0) > 0, f"{r['allocator']}: the server's region faults")
        check(r["allocator"] == "glibc" or r["allocator"] in r["malloc_so"] or "tbbmalloc" in r["malloc_so"],
              f"{r['allocator']}: proven: {r['malloc_so']}")
        print(f"memcached {r['allocator']:10s} {float(r['throughput'] or 0):9.0f} ops/s "
              f"{r['region_minor_faults']:>7s} faults {r['region_madvise_calls']:>5s} madvise")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def case_cli(mb, tmp):
    for args, want in (
        (["--client", "x", "--", PROG], "--ready is missing"),
        (["--ready", "tcp:auto", "--", PROG, "{port}"], "--client is missing"),
        (["--ready", "tcp:auto", "--client", "x"], "no server"),
        (["--ready", "udp:9", "--client", PROG, "--", PROG, "{port}"], "is not tcp:PORT"),
        (["--ready", "tcp:auto", "--client", PROG, "--", PROG, "server"], "{port}"),
        (["--ready", "tcp:auto", "--latency", "p42=x", "--client", PROG, "--", PROG, "{port}"], "p50=REGEX"),
        (["--ready", "tcp:auto", "--client", "/nonexistent/x", "--", PROG, "{port}"], "client"),
        (["--profile", "--ready", "tcp:auto", "--client", PROG, "--", PROG, "{port}"], "--profile"),
    ):
        p = run(mb, "serve", "-o", os.path.join(tmp, "x.csv"), *args, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and want in lines[0], f"{args}: one line naming {want!r}: {p.stderr!r}")
    ini = os.path.join(tmp, "m.ini")
    with open(ini, "w") as f:
        f.write(f"[run]\nrepetitions = 2\nallocators = glibc,jemalloc\n\n[workload serve]\nready = tcp:auto\n"
                f"metric = requests/s: ([0-9.]+)\nunit = req/s\nclient = {PROG} client {{port}} --requests 30\n"
                f"cmd = {PROG} server {{port}}\n")
    out = os.path.join(tmp, "m.csv")
    run(mb, "run", "-m", ini, "-o", out)
    rs = rows(out)
    check_eq(sorted(r["status"] for r in rs), ["ok"] * 4, f"matrix rows: {[r['message'] for r in rs]}")
    p = run(mb, "compare", out)
    check("serve" in p.stdout and "jemalloc" in p.stdout, f"compare reads serve rows: {p.stdout[:400]!r}")


if __name__ == "__main__":
    sys.exit(main({n[5:]: f for n, f in globals().items() if n.startswith("case_")}))
