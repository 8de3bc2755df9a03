"""region.py - `with mallocbench.region():` marks the measured region of a Python program run
by `mallocbench exec` (or `serve`'s client-less programs): the same protocol as
include/mallocbench.h.  On entering it writes "begin\\n" to the descriptor named by MB_SYNC_FD
and waits for the harness's one-byte answer (the harness reads every counter before it
answers, so the region is bracketed exactly); on leaving, "end\\n" the same way.

Outside mallocbench (no MB_SYNC_FD) it does nothing, so the program runs unchanged by hand.
Regions do not nest: entering one while another is open, from any thread, raises
RegionError.  Safe from any thread (one lock guards the descriptor and the state); the harness
measures the last region a process marks.  Standard library only."""
import errno
import os
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
    return fd


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
