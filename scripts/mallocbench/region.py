"""region.py - `with mallocbench.region():` marks the measured region of a Python program run
by `mallocbench exec` (or `serve`'s client-less programs): the same protocol as
include/mallocbench.h.  On entering it writes "begin\\n" to the descriptor named by MB_SYNC_FD
and waits for the harness's one-byte answer (the harness reads every counter before it
answers, so the region is bracketed exactly); on leaving, "end\\n" the same way.

Outside mallocbench (no MB_SYNC_FD) it does nothing, so the program runs unchanged by hand.
Nor does it where the descriptor is not the harness's socket: the variables are inherited by
every descendant, in which that number may be some unrelated file, so a marker is written only
when fstat of the descriptor is a socket with the device and inode MB_SYNC_ID ("DEV:INO") names
(include/mallocbench.h).
Regions do not nest: entering one while another is open, from any thread, raises
RegionError.  Safe from any thread (one lock guards the descriptor and the state); the harness
measures the last region a process marks.  Standard library only."""
import errno
import os
import stat
import threading


class RegionError(RuntimeError):
    """A region entered while another is open (regions do not nest), or a descriptor that
    MB_SYNC_FD names but that is not one."""


_LOCK = threading.Lock()
_OPEN = [False]


def _fd():
    text = os.environ.get("MB_SYNC_FD", "")
    if not text:
        return None
    try:
        fd = int(text)
    except ValueError:
        raise RegionError(f"MB_SYNC_FD={text!r} is not a descriptor number") from None
    if fd < 0:
        raise RegionError(f"MB_SYNC_FD={text!r} is not a descriptor number")
    return fd if _is_sync_socket(fd) else None


def _is_sync_socket(fd):
    """Is fd the harness's socket, the one MB_SYNC_ID ("DEV:INO") names?  Not where the variable
    is missing or malformed, fd is closed, or it is another file (a descendant's reused number)."""
    dev, sep, ino = os.environ.get("MB_SYNC_ID", "").partition(":")
    if not (sep and dev.isdigit() and ino.isdigit()):
        return False
    try:
        st = os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISSOCK(st.st_mode) and (st.st_dev, st.st_ino) == (int(dev), int(ino))


def _marker(fd, line):
    """The line written whole (through short writes and EINTR), then the one-byte answer."""
    data = line.encode()
    while data:
        try:
            n = os.write(fd, data)
        except InterruptedError:
            continue
        except OSError as e:
            raise RegionError(f"cannot write the region's marker to MB_SYNC_FD={fd}: "
                              f"{os.strerror(e.errno or errno.EIO)}") from None
        data = data[n:]
    while True:
        try:
            os.read(fd, 1)
            return
        except InterruptedError:
            continue
        except OSError as e:
            raise RegionError(f"no answer from the harness on MB_SYNC_FD={fd}: "
                              f"{os.strerror(e.errno or errno.EIO)}") from None


class region:
    """Context manager: the block it guards is the measured region (see the module's text)."""

    def __enter__(self):
        with _LOCK:
            if _OPEN[0]:
                raise RegionError("mallocbench.region() entered while a region is open: regions do not nest")
            fd = _fd()
            if fd is not None:
                _marker(fd, "begin\n")
            _OPEN[0] = True
        return self

    def __exit__(self, *exc):
        with _LOCK:
            _OPEN[0] = False
            fd = _fd()
            if fd is not None:
                _marker(fd, "end\n")
        return False
