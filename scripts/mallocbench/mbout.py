"""mbout.py - the one way a script writes a file: the same discipline as the
harness's outfile.c.

- A target is resolved once (a symbolic link to its file, the directory with
  realpath); that path is the one checked and replaced.
- An existing target is refused without force; a target that is an input of
  the same command is refused even with force; a regular file with more than
  one name (a hard link) is refused.
- A whole file goes to a temporary with a fresh random name beside it, created
  O_CREAT|O_EXCL|O_NOFOLLOW (tempfile.mkstemp: nothing existing is opened,
  followed or truncated), written, fsync'd, renamed, and the directory fsync'd.
- A FIFO or device target is written in place.
- A command that writes a folder (report, plots, detect, site) keeps a manifest
  of the files it owns there (.mallocbench-manifest): it replaces only those
  and refuses a folder holding files it does not list, unless force.
- A file is written under the harness's lock (outfile.c, outfile_lock): a POSIX
  write lock (fcntl F_SETLK, never waiting) on REALPATH.lock, opened O_NOFOLLOW,
  a regular file of one name holding the locker's pid, removed by its holder.
  A C writer (`mallocbench run/exec -o`) and a script exclude each other both
  ways; the second is refused naming the holder's pid, in the harness's words.
  open_text holds it from its check to its write; a folder's files and its
  manifest are each written under their own.

Errors are OutputError with one line that names the path and the cause.
"""
import atexit
import contextlib
import errno
import fcntl
import io
import os
import stat
import struct
import tempfile

MANIFEST = ".mallocbench-manifest"


class OutputError(Exception):
    """A target that must not be written: one line naming it and why."""


class NotRegular(Exception):
    """An input that is not a regular file (a FIFO, a device): one line naming it."""


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))


def read_regular(path, follow=True):
    """The bytes of the regular file at path, the one way a script reads an input or a sidecar
    (mbcsv.read_bytes): opened O_NONBLOCK and checked with fstat before a byte is read, so a
    FIFO or device (given, or planted as a sidecar) raises NotRegular where a read would wait
    for a writer forever; not follow: a symbolic link at path is refused too (OSError ELOOP).
    OSError where it cannot be opened or read."""
    # stat first: opening a device has effects of its own (a watchdog armed, a tape rewound) that
    # no flag undoes; then the descriptor must be what was checked
    before = os.stat(path, follow_symlinks=follow)
    if not stat.S_ISREG(before.st_mode):
        kind = next((k for test, k in _KINDS if test(before.st_mode)), "not a regular file")
        raise NotRegular(f"cannot read '{path}': it is {kind}, not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW))
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise NotRegular(f"cannot read '{path}': it was replaced as it was opened")
        mode = st.st_mode
        if not stat.S_ISREG(mode):
            kind = next((k for test, k in _KINDS if test(mode)), "not a regular file")
            raise NotRegular(f"cannot read '{path}': it is {kind}, not a regular file")
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read()
    finally:
        if fd >= 0:
            os.close(fd)


def resolve(path):
    """The absolute path writing `path` changes."""
    if not path:
        raise OutputError("cannot write '': an empty path")
    if os.path.islink(path):
        if not os.path.exists(path):
            raise OutputError(f"cannot write '{path}': it is a symbolic link that does not resolve")
        return os.path.realpath(path)
    head, base = os.path.split(path)
    if base in ("", ".", ".."):
        raise OutputError(f"cannot write '{path}': it is a directory")
    return os.path.join(os.path.realpath(head or "."), base)


def _same(a, b):
    try:
        x, y = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (x.st_dev, x.st_ino) == (y.st_dev, y.st_ino)


def check(path, force=False, inputs=(), own=False):
    """Refuse what must not be written (see the module's rules); the resolved path,
    or None for a FIFO or device written in place.  own: a file the command names itself (a
    journal, a plot beside an output; the user did not name it): a symbolic link, a FIFO or a
    device at its name is refused, never written through (as the harness's sidecars)."""
    if own:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise OutputError(f"cannot write '{path}': {e.strerror or e}") from None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise OutputError(f"cannot write '{path}': it is a symbolic link (a file this command names itself "
                              f"is never written through one); remove it")
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise OutputError(f"cannot write '{path}': it is not a regular file")
    real = resolve(path)
    for i in inputs:
        if i and _same(real, i):
            raise OutputError(f"cannot write '{path}': it is an input of this command ({i}); "
                              f"name another output")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as e:  # a folder that is a file, no permission: one line, never a traceback
        raise OutputError(f"cannot write '{path}': {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"cannot write '{path}': it is a directory")
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_nlink > 1:
        raise OutputError(f"cannot write '{path}': it has {st.st_nlink} names (hard links); writing through "
                          f"one would change or part the others")
    if not force:
        raise OutputError(f"'{path}' exists: add --force to replace it")
    return real


# struct flock as the kernel takes it (Linux, 64-bit off_t): l_type, l_whence, l_start, l_len,
# l_pid; only F_GETLK needs it (fcntl.lockf sets the lock)
_FLOCK = "hhqqi4x"
_held = {}  # {lock path: [fd, depth]}: POSIX locks are a process's, and closing any fd of the
#            file drops them all, so one process takes each lock once and counts its users


def _holder(fd):
    """The pid of the process whose lock on fd conflicts with ours, 0 when it let go meanwhile."""
    try:
        got = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError:
        return 0
    typ, _, _, _, pid = struct.unpack(_FLOCK, got)
    return 0 if typ == fcntl.F_UNLCK else pid


def _still_there(fd, path):
    try:
        a, b = os.fstat(fd), os.lstat(path)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


_SIDECARS = (".meta.json", ".rss.csv")
_with = {}  # {lock path: [the locks of the CSVs it is a sidecar of, one per lock() taken]}


def lock(real):
    """Take real's lock as the harness's outfile_lock does (the module's rules); the lock's
    path, for unlock().  OutputError, in the harness's words, where another process holds it.
    A sidecar's name (BASE.meta.json, BASE.rss.csv) takes its CSV's lock too: the harness holds
    only BASE.csv's while it writes all three."""
    for suffix in _SIDECARS:
        if real.endswith(suffix):
            try:
                csv = lock(real[:-len(suffix)] + ".csv")
            except OutputError as e:
                raise OutputError(f"cannot write '{real}', a sidecar of its CSV: {e}") from None
            try:
                name = _lock_one(real)
            except OutputError:
                unlock(csv)
                raise
            _with.setdefault(name, []).append(csv)
            return name
    return _lock_one(real)


def _lock_one(real):
    name = real + ".lock"
    if name in _held:
        _held[name][1] += 1
        return name
    for _ in range(100):
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise OutputError(f"cannot write '{real}': cannot create its lock '{name}': {e.strerror}") from None
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            pid = _holder(fd) if e.errno in (errno.EACCES, errno.EAGAIN) else 0
            os.close(fd)
            if pid > 0:
                raise OutputError(f"cannot write '{real}': process {pid} is writing it (it holds '{name}')") from None
            if e.errno in (errno.EACCES, errno.EAGAIN):
                continue  # released meanwhile
            raise OutputError(f"cannot lock '{name}': {e.strerror}") from None
        if not _still_there(fd, name):
            os.close(fd)  # its holder removed it as we locked it: take the new one
            continue
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            os.close(fd)  # a hard link planted at the lock's name: writing our pid would change that file
            raise OutputError(f"cannot write '{real}': its lock '{name}' is not a lock file "
                              f"({'it has other names' if stat.S_ISREG(st.st_mode) else 'not a regular file'}); "
                              f"remove it if no run is using it")
        with contextlib.suppress(OSError):  # the pid is for people; F_GETLK reports it
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _held[name] = [fd, 1]
        return name
    raise OutputError(f"cannot lock '{name}': it keeps changing hands")


def unlock(name):
    """Let go of a lock lock() took (its last user removes the file, still holding it)."""
    if name is None or name not in _held:
        return
    if _with.get(name):
        unlock(_with[name].pop())
    _held[name][1] -= 1
    if _held[name][1] > 0:
        return
    fd = _held.pop(name)[0]
    if _still_there(fd, name):
        with contextlib.suppress(OSError):
            os.unlink(name)
    os.close(fd)


def hold(path, force=False, inputs=()):
    """check(), and path's lock taken until this process exits: a command that checks its
    output before its work holds it through that work (its write takes it again)."""
    real = check(path, force, inputs)
    if real:
        lock(real)


@atexit.register
def _let_go():
    """Locks still held at exit (hold(), a folder never committed): their files removed."""
    for name in list(_held):
        _held[name][1] = 1
        unlock(name)


def _sync_dir(d):
    try:
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory
    finally:
        os.close(fd)


def _place(real, data, binary):
    d, base = os.path.split(real)
    fd, tmp = tempfile.mkstemp(prefix=base + ".", suffix=".tmp", dir=d)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data if binary else data.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_dir(d)


def write(path, data, force=False, inputs=(), own=False):
    """Write str (UTF-8) or bytes to path whole, under the module's rules (own: see check)."""
    binary = isinstance(data, (bytes, bytearray))
    real = check(path, force, inputs, own)
    if real is None:  # a FIFO or a device: in place
        with open(path, "ab" if binary else "a", **({} if binary else {"encoding": "utf-8"})) as f:
            f.write(data)
        return
    held = lock(real)
    try:
        _place(real, data, binary)
    except OSError as e:
        raise OutputError(f"cannot write '{path}': {e.strerror or e}") from None
    finally:
        unlock(held)


@contextlib.contextmanager
def open_text(path, force=False, inputs=(), newline=None):
    """A text stream whose contents are written to path whole when the block ends
    without an exception (nothing is written otherwise)."""
    real = check(path, force, inputs)  # refused before any work
    held = lock(real) if real else None  # and held through it: no other writer meanwhile
    try:
        buf = io.StringIO(newline=newline)
        yield buf
        write(path, buf.getvalue(), force=force, inputs=inputs)
    finally:
        unlock(held)


class Folder:
    """A folder a command writes: only the files its manifest lists are replaced; a
    folder holding others is refused unless force.  file(name) gives a path to pass
    to write(); commit() writes the manifest."""

    def __init__(self, folder, force=False, inputs=()):
        self.folder, self.force, self.inputs = folder, force, inputs
        self.owned, self.written = set(), set()
        if os.path.islink(folder) and not os.path.isdir(folder):
            raise OutputError(f"cannot write into '{folder}': a symbolic link that does not resolve")
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise OutputError(f"cannot write into '{folder}': it is not a directory")
        man = os.path.join(folder, MANIFEST)
        try:
            if os.path.islink(man):
                raise OutputError(f"cannot write into '{folder}': its {MANIFEST} is a symbolic link; remove it")
            if os.path.isfile(man):
                with open(man, encoding="utf-8") as f:
                    self.owned = {l.strip() for l in f if l.strip() and "/" not in l.strip() and l.strip() != MANIFEST}
            mine = self.owned | {MANIFEST}
            others = sorted(n for n in set(os.listdir(folder)) - mine
                            if not (n.endswith(".lock") and n[:-5] in mine)) if os.path.isdir(folder) else []
        except (OSError, UnicodeDecodeError) as e:
            raise OutputError(f"cannot write into '{folder}': {getattr(e, 'strerror', None) or e}") from None
        if not force:
            if others:
                raise OutputError(f"cannot write into '{folder}': it holds files this command did not write "
                                  f"({', '.join(others[:3])}{', ...' if len(others) > 3 else ''}); "
                                  f"name another folder or add --force")
        self.held = None
        if os.path.isdir(folder):
            self._take()

    def _take(self):
        """The folder's lock (its manifest's), held until commit: two commands writing one
        folder, or a script and the harness, exclude each other."""
        if self.held is None:
            self.held = lock(os.path.join(os.path.realpath(self.folder), MANIFEST))

    def file(self, name):
        """The path of name inside the folder (created now: nothing exists before a first file)."""
        if "/" in name or name in ("", ".", "..", MANIFEST):
            raise OutputError(f"'{name}' is not a file name inside '{self.folder}'")
        try:
            os.makedirs(self.folder, exist_ok=True)
        except OSError as e:
            raise OutputError(f"cannot create '{self.folder}': {e.strerror}") from None
        self._take()
        self.written.add(name)
        path = os.path.join(self.folder, name)
        if os.path.islink(path):  # a file of the folder is written there, never through a link out of it
            raise OutputError(f"cannot write '{path}': it is a symbolic link (a folder's files are written "
                              f"in it, never through a link); remove it")
        return path

    def write(self, name, data):
        path = self.file(name)
        write(path, data, force=True, inputs=self.inputs)  # the folder was checked when opened
        return path

    def commit(self):
        names = sorted(self.owned | self.written)
        man = os.path.join(self.folder, MANIFEST)
        if os.path.islink(man):
            raise OutputError(f"cannot write '{man}': it is a symbolic link; remove it")
        try:
            write(man, "".join(n + "\n" for n in names), force=True)
        finally:
            unlock(self.held)
            self.held = None


def copy(src, dst, force=False, inputs=()):
    """dst as a copy of src's bytes, under the module's rules."""
    with open(src, "rb") as f:
        data = f.read()
    write(dst, data, force=force, inputs=inputs)
