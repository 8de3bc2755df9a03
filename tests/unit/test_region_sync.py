#!/usr/bin/env python3
"""test_region_sync.py - `with mallocbench.region():` (scripts/mallocbench/region.py) writes its
markers only to the harness's socket (issue 43): the descriptor MB_SYNC_FD names must be the
socket whose st_dev:st_ino MB_SYNC_ID names.  A descendant whose descriptor of that number is
an unrelated file, another socket or a pipe, or that lacks MB_SYNC_ID, writes nothing, and
runs its region as by hand; a bad number is still refused by name."""
import os
import socket
import sys
import tempfile

from mallocbench import RegionError, region
from mbtest import FAILS, check, check_eq

regionmod = sys.modules["mallocbench.region"]  # the module (the package's `region` is its class)

FD = 9


def ident(fd):
    st = os.fstat(fd)
    return f"{st.st_dev}:{st.st_ino}"


def marked(env):
    """Runs one region with env as MB_SYNC_* (the rest of os.environ kept)."""
    for k in ("MB_SYNC_FD", "MB_SYNC_ID"):
        os.environ.pop(k, None)
    os.environ.update(env)
    with region():
        pass


def main():
    harness, child = socket.socketpair()
    os.dup2(child.fileno(), FD)
    harness.sendall(b"gg")  # the answers, ahead
    marked({"MB_SYNC_FD": str(FD), "MB_SYNC_ID": ident(FD)})
    harness.setblocking(False)
    check_eq(harness.recv(64), b"begin\nend\n", "the harness's socket gets both markers")

    # a descendant whose descriptor FD is a file of its own (the number reused): nothing in it
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), FD)
        marked({"MB_SYNC_FD": str(FD), "MB_SYNC_ID": ident(child.fileno())})
        check_eq(os.fstat(f.fileno()).st_size, 0, "an unrelated file at that number is left alone")
    other, other_child = socket.socketpair()
    os.dup2(other_child.fileno(), FD)
    marked({"MB_SYNC_FD": str(FD), "MB_SYNC_ID": ident(child.fileno())})
    other.setblocking(False)
    try:
        got = other.recv(64)
    except BlockingIOError:
        got = b""
    check_eq(got, b"", "another socket at that number gets nothing")
    r, w = os.pipe()
    os.dup2(w, FD)
    marked({"MB_SYNC_FD": str(FD), "MB_SYNC_ID": ident(child.fileno())})
    os.set_blocking(r, False)
    try:
        got = os.read(r, 64)
    except BlockingIOError:
        got = b""
    check_eq(got, b"", "a pipe at that number gets nothing")
    os.close(FD)
    marked({"MB_SYNC_FD": str(FD), "MB_SYNC_ID": ident(child.fileno())})  # closed: nothing, no error

    # the socket itself, but no identity, or a malformed one: nothing
    os.dup2(child.fileno(), FD)
    for bad in ({}, {"MB_SYNC_ID": ""}, {"MB_SYNC_ID": "1"}, {"MB_SYNC_ID": "x:1"},
                {"MB_SYNC_ID": ident(child.fileno()) + "0"}):
        marked(dict(bad, MB_SYNC_FD=str(FD)))
    try:
        got = harness.recv(64)
    except BlockingIOError:
        got = b""
    check_eq(got, b"", "without the socket's identity nothing is written")
    check(regionmod._fd() is None, "no descriptor without MB_SYNC_ID")
    # a bad number is named, before any check
    try:
        marked({"MB_SYNC_FD": "x", "MB_SYNC_ID": ident(child.fileno())})
        check(False, "MB_SYNC_FD=x refused")
    except RegionError as e:
        check("MB_SYNC_FD='x' is not a descriptor number" in str(e), f"a bad number named: {e}")
    if FAILS:
        print(f"{len(FAILS)} check(s) failed", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
