#!/usr/bin/env python3
"""test_images.py - every program image a sample starts is proven, not every
process once (harness/sample/execs.c, verify.c): a command line that sets an
allocator's variable through env(1) is refused before any sample; a wrapper
that takes the probe out of LD_PRELOAD, or changes a setting, before it execs
or forks the real program makes the sample an error naming that image; a
wrapper that execs the program unchanged, and a descendant whose inherited
descriptor was closed or reused, stay ok.

Usage: test_images.py MALLOCBENCH CASE (needs root for the exec tracepoint: skips
without it)."""
import os
import sys

from mbtest import SKIP, check, installed, main, metrics, rows, run


def needs_tracepoint():
    if os.geteuid() != 0:
        print("SKIP: the exec tracepoint needs root", file=sys.stderr)
        sys.exit(SKIP)


def one(mb, tmp, name, cmd, alloc="glibc", expect_rc=None):
    out = os.path.join(tmp, name + ".csv")
    p = run(mb, "exec", "-q", "-a", alloc, "-r", "1", "--warmup-runs", "0", "-o", out, "--", *cmd,
            expect_rc=expect_rc)
    rs = rows(out)
    check(len(rs) == 1, f"{name}: one row, got {len(rs)} ({p.stderr[-400:]!r})")
    return rs[0] if rs else {"status": "", "message": "", "workload_metrics": ""}


def case_env_refused(mb, tmp):
    """env(1) that sets, unsets or clears an allocator's variable: refused, one line, nothing written."""
    refused = [
        (["env", "LD_PRELOAD=/nonexistent.so", "true"], "sets LD_PRELOAD"),
        (["env", "-i", "true"], "clears the environment"),
        (["/usr/bin/env", "-", "true"], "clears the environment"),
        (["env", "-u", "MALLOC_CONF", "true"], "unsets MALLOC_CONF"),
        (["env", "--unset=GLIBC_TUNABLES", "true"], "unsets GLIBC_TUNABLES"),
        (["env", "A=1", "env", "TCMALLOC_RELEASE_RATE=1", "true"], "sets TCMALLOC_RELEASE_RATE"),
        (["env", "-C", "/", "MIMALLOC_PURGE_DELAY=0", "true"], "sets MIMALLOC_PURGE_DELAY"),
        (["env", "-S", "SCUDO_OPTIONS=x true"], "splits a string of assignments"),
    ]
    for i, (cmd, why) in enumerate(refused):
        out = os.path.join(tmp, f"r{i}.csv")
        p = run(mb, "exec", "-q", "-a", "glibc", "-r", "1", "-o", out, "--", *cmd, expect_rc=2)
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and why in lines[0] and "env(1)" in lines[0],
              f"{cmd}: one line saying '{why}', got {p.stderr!r}")
        check(not os.path.exists(out), f"{cmd}: nothing written")
    # a variable no allocator reads passes, as does env(1) with no variable at all
    for i, cmd in enumerate((["env", "FOO=1", "true"], ["env", "--", "true"])):
        r = one(mb, tmp, f"ok{i}", cmd, expect_rc=0)
        check(r["status"] == "ok", f"{cmd}: ok, got {r['status']} {r['message']!r}")


def case_unproven_image(mb, tmp):
    """An image started without the probe is an error that names it, whether the wrapper execs it or forks it."""
    needs_tracepoint()
    cases = {
        "exec": ("LD_PRELOAD= exec /bin/true", "/bin/true"),
        "fork": ("LD_PRELOAD= /bin/true; :", "/bin/true"),
        "static": ("/sbin/ldconfig -p >/dev/null", "/sbin/ldconfig"),
    }
    # a daemon that outlives the command, its image already without the probe when the
    # sample ends (the command waits until it is): held like any other, not forgiven as a
    # straggler that had yet to load the probe
    pidfile = os.path.join(tmp, "daemon.pid")
    cases["straggler"] = (
        f"setsid sh -c 'echo $$ > {pidfile}; LD_PRELOAD= exec sleep 20' & "
        f"while [ ! -s {pidfile} ] || [ \"$(readlink /proc/$(cat {pidfile})/exe)\" != /usr/bin/sleep ]; "
        f"do sleep 0.01; done", "/usr/bin/sleep")
    for name, (script, image) in cases.items():
        if name == "static" and not os.access("/sbin/ldconfig", os.X_OK):
            continue
        r = one(mb, tmp, name, ["sh", "-c", script], expect_rc=4)
        check(r["status"] == "error", f"{name}: error, got {r['status']} {r['message']!r}")
        check(f"program image {image} " in r["message"] and "ran without the probe" in r["message"],
              f"{name}: the message names {image}: {r['message']!r}")


def case_changed_setting(mb, tmp):
    """A wrapper that sets an allocator's variable before the program: an error, in the same process or a child."""
    needs_tracepoint()
    for name, script in (("exec", "GLIBC_TUNABLES=glibc.malloc.trim_threshold=4096 exec /bin/true"),
                         ("fork", "MALLOC_ARENA_MAX=1 /bin/true; :")):
        r = one(mb, tmp, name, ["sh", "-c", script], expect_rc=4)
        check(r["status"] == "error" and "other" in r["message"] and "settings" in r["message"],
              f"{name}: an error for other settings, got {r['status']} {r['message']!r}")


def case_proven_images(mb, tmp):
    """Images that keep the probe are proven and counted: a chain of execs, a child whose descriptor was closed or reused."""
    needs_tracepoint()
    cases = {
        "chain": (["sh", "-c", "exec sh -c 'exec /bin/true'"], "1", "3"),
        "closed": (["sh", "-c", "/bin/true 4>&-; :"], "2", "2"),
        "reused": (["sh", "-c", "/bin/true 4>/dev/null; :"], "2", "2"),
        # an orphan the harness adopts (it is a subreaper, so its parent is the harness, as the
        # process started's is) that then execs: a descendant, not another image of the first
        "adopted": (["sh", "-c", f"(sh -c 'exec touch {tmp}/adopted' &); while [ ! -e {tmp}/adopted ]; do :; done"],
                    "3", "3"),
        # 700 children: their reports (about 80 KB) are more than the harness reads at once
        "many": (["sh", "-c", "i=0; while [ $i -lt 700 ]; do /bin/true; i=$((i+1)); done"], "701", "701"),
    }
    # two allocator variables, which bash passes on in another order than it got them: the
    # same settings (the digest does not hang on the order)
    if "tcmalloc" in installed(mb):
        out = os.path.join(tmp, "order.csv")
        run(mb, "exec", "-q", "-a", "tcmalloc", "-t", "tcmalloc:release_rate=5", "-t",
            "tcmalloc:max_total_thread_cache_bytes=64M", "-r", "1", "--warmup-runs", "0", "-o", out, "--",
            "sh", "-c", "bash -c '/bin/true; :'; :")
        r = (rows(out) or [{"status": "", "message": ""}])[0]
        check(r["status"] == "ok", f"variables in another order: ok, got {r['status']} {r['message']!r}")
    for name, (cmd, procs, images) in cases.items():
        r = one(mb, tmp, name, cmd, expect_rc=0)
        m = metrics(r)
        check(r["status"] == "ok", f"{name}: ok, got {r['status']} {r['message']!r}")
        check(m.get("processes") == procs and m.get("images") == images,
              f"{name}: processes={procs} images={images}, got {r['workload_metrics']!r}")


if __name__ == "__main__":
    sys.exit(main({k[5:]: v for k, v in globals().items() if k.startswith("case_")}))
