"""fwcommon.py - what the framework programs share: one thread everywhere,
the measured region (include/mallocbench.h's protocol: write begin/end to
MB_SYNC_FD, wait for one byte; nothing outside the harness), and a checksum
that is the same on every allocator and every run.

Import it before torch or numpy: it pins the thread pools through the
environment, which OpenMP/MKL/OpenBLAS read once when they load."""
import hashlib
import os
import stat
import struct

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"


def _sync(word):
    """The marker, only to the harness's socket: the descriptor MB_SYNC_FD names must be the
    socket whose device and inode MB_SYNC_ID ("DEV:INO") gives (a descendant that inherited the
    variables may hold another file at that number; mallocbench.h's check)."""
    fd, (dev, sep, ino) = os.environ.get("MB_SYNC_FD", ""), os.environ.get("MB_SYNC_ID", "").partition(":")
    if not (fd.isdigit() and sep and dev.isdigit() and ino.isdigit()):
        return
    try:
        st = os.fstat(int(fd))
    except OSError:
        return
    if not stat.S_ISSOCK(st.st_mode) or (st.st_dev, st.st_ino) != (int(dev), int(ino)):
        return
    os.write(int(fd), word)
    os.read(int(fd), 1)


def region_begin():
    """Start of the measured work: the harness reads every counter now."""
    _sync(b"begin\n")


def region_end():
    _sync(b"end\n")


class Checksum:
    """SHA-256 over values rounded to `digits` significant digits: the ops are
    deterministic on one thread, and the rounding keeps a last-bit difference
    (a vector tail, an alignment) from turning into a different checksum."""

    def __init__(self, digits=6):
        self.fmt = "%.{}e".format(digits - 1)
        self.h = hashlib.sha256()

    def add(self, value):
        v = float(value)
        self.h.update((self.fmt % (0.0 if v == 0 else v)).encode() + b";")

    def add_int(self, value):
        self.h.update(struct.pack("<q", int(value)))

    def hex(self):
        return self.h.hexdigest()[:16]


def positive(text):
    v = int(text)
    if v < 1:
        raise ValueError(f"{text!r} is not a positive integer")
    return v
