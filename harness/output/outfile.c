/* outfile.c - write an output through a fresh temporary and a rename, or in
 * place for a device or FIFO, under a lock on the resolved path that refuses
 * a second writer with the holder's pid (contract: outfile.h). */
#include "outfile.h"
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_resolve(const char *path, char *real, size_t len, char *err, size_t errlen)
{
    struct stat st;
    char buf[PATH_MAX];
    if (!path[0]) {
        snprintf(err, errlen, "cannot write '': an empty path");
        return -ENOENT;
    }
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        if (!realpath(path, buf)) { /* the link goes nowhere: where it points is not ours to guess */
            int e = errno;
            snprintf(err, errlen, "cannot write '%s': it is a symbolic link that does not resolve: %s", path,
                     strerror(e));
            return -e;
        }
    } else {
        char d[PATH_MAX], b[PATH_MAX], dir[PATH_MAX];
        snprintf(d, sizeof d, "%s", path);
        snprintf(b, sizeof b, "%s", path);
        const char *base = basename(b);
        if (!strcmp(base, ".") || !strcmp(base, "..") || !strcmp(base, "/")) {
            snprintf(err, errlen, "cannot write '%s': it is a directory", path);
            return -EISDIR;
        }
        if (!realpath(dirname(d), dir)) {
            int e = errno;
            snprintf(err, errlen, "cannot write '%s': cannot create it in its directory: %s", path, strerror(e));
            return -e;
        }
        if ((size_t)snprintf(buf, sizeof buf, "%s/%s", strcmp(dir, "/") ? dir : "", base) >= sizeof buf) {
            snprintf(err, errlen, "cannot write '%s': the path is too long", path);
            return -ENAMETOOLONG;
        }
    }
    if ((size_t)snprintf(real, len, "%s", buf) >= len) {
        snprintf(err, errlen, "cannot write '%s': the path is too long", path);
        return -ENAMETOOLONG;
    }
    return 0;
}

int outfile_check_links(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink > 1) {
        snprintf(err, errlen, "cannot write '%s': it has %lu names (hard links); writing through one would "
                 "change or part the others", path, (unsigned long)st.st_nlink);
        return -EMLINK;
    }
    return 0;
}

int outfile_check_sidecar(const char *path, bool force, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISLNK(st.st_mode)) {
        snprintf(err, errlen, "cannot write '%s': it is a symbolic link (a sidecar is written beside its CSV, "
                 "never through a link); remove it", path);
        return -ELOOP;
    }
    if (!S_ISREG(st.st_mode)) { /* a FIFO would block the writer, a device take what is not its own */
        snprintf(err, errlen, "cannot write '%s': it is not a regular file (%s); a sidecar is a file of "
                 "its own: remove it", path, S_ISDIR(st.st_mode) ? "a folder" : S_ISFIFO(st.st_mode) ? "a FIFO" :
                 "a device or socket");
        return -EINVAL;
    }
    if (!force) {
        snprintf(err, errlen, "'%s' exists: add --force to replace it", path);
        return -EEXIST;
    }
    return outfile_check_links(path, err, errlen);
}

bool outfile_same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int outfile_temp(const char *real, char *tmp, size_t len)
{
    return file_temp(real, tmp, len);
}

/* fsync the directory holding path, so that a rename survives a crash. */
static void sync_dir(const char *path)
{
    char d[PATH_MAX];
    snprintf(d, sizeof d, "%s", path);
    int fd = open(dirname(d), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* best effort: some file systems refuse fsync on a directory */
        close(fd);
    }
}

int outfile_place(int fd, const char *tmp, const char *dst, bool replace)
{
    if (fd >= 0 && fsync(fd) && errno != EINVAL && errno != EROFS)
        return -errno;
    if (replace) {
        if (rename(tmp, dst))
            return -errno;
    } else if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, RENAME_NOREPLACE)) {
        if (errno != EINVAL && errno != ENOSYS)
            return -errno;
        if (link(tmp, dst)) /* a file system without RENAME_NOREPLACE: link refuses an existing name too */
            return -errno;
        unlink(tmp);
    }
    sync_dir(dst);
    return 0;
}

bool outfile_is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* The message for a lock held by another process, in err. */
static void outfile_locked_msg(const char *path, pid_t holder, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot write '%s': process %ld is writing it (it holds '%s.lock')", path,
             (long)holder, path);
}

/* The pid of the process whose lock on fd conflicts with ours, or 0 when
 * it let go meanwhile. */
static pid_t lock_holder(int fd)
{
    struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_GETLK, &q) < 0 || q.l_type == F_UNLCK)
        return 0;
    return q.l_pid;
}

/* Is the file open on fd still the one at path (not removed by a holder
 * that unlocked it between our open and our lock)? */
static bool still_there(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int outfile_lock(outfile_lock_t *l, const char *path, pid_t *holder, char *err, size_t errlen)
{
    l->fd = -1;
    *holder = 0;
    if (outfile_is_special(path))
        return 0; /* a device or FIFO: locking it would block its other users */
    char real[PATH_MAX];
    int rrc = outfile_resolve(path, real, sizeof real, err, errlen);
    if (rrc)
        return rrc;
    if ((size_t)snprintf(l->path, sizeof l->path, "%s.lock", real) >= sizeof l->path) {
        snprintf(err, errlen, "cannot write '%s': the path is too long", path);
        return -ENAMETOOLONG;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            int rc = -errno;
            snprintf(err, errlen, "cannot write '%s': cannot create its lock '%s': %s", path, l->path,
                     strerror(errno));
            return rc;
        }
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(fd, F_SETLK, &fl) < 0) {
            int e = errno;
            pid_t pid = e == EACCES || e == EAGAIN ? lock_holder(fd) : 0;
            close(fd);
            if (pid > 0) {
                *holder = pid;
                outfile_locked_msg(path, pid, err, errlen);
                return -EWOULDBLOCK;
            }
            if (e == EACCES || e == EAGAIN)
                continue; /* released meanwhile */
            snprintf(err, errlen, "cannot lock '%s': %s", l->path, strerror(e));
            return -e;
        }
        if (!still_there(fd, l->path)) {
            close(fd); /* its holder removed it as we locked it: take the new one */
            continue;
        }
        struct stat st;
        if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink > 1) {
            /* a hard link planted at the lock's name: writing our pid would change that file */
            snprintf(err, errlen, "cannot write '%s': its lock '%s' is not a lock file (%s); remove it if no "
                     "run is using it", path, l->path, S_ISREG(st.st_mode) ? "it has other names" : "not a regular file");
            close(fd);
            return -EEXIST;
        }
        char text[32];
        int n = snprintf(text, sizeof text, "%ld\n", (long)getpid());
        bool noted = ftruncate(fd, 0) == 0 && pwrite(fd, text, (size_t)n, 0) == n;
        (void)noted; /* the pid in the file is for people only; F_GETLK reports it */
        l->fd = fd;
        return 0;
    }
    snprintf(err, errlen, "cannot lock '%s': it keeps changing hands", l->path);
    return -EAGAIN;
}

void outfile_unlock(outfile_lock_t *l)
{
    if (l->fd < 0)
        return;
    /* removed while still held, so nobody locks a file that is about to go */
    if (still_there(l->fd, l->path))
        unlink(l->path);
    close(l->fd);
    l->fd = -1;
}

int outfile_open(outfile_t *f, const char *path, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    f->fd = f->lock.fd = -1;
    struct stat st;
    bool there = stat(path, &st) == 0;
    if (there && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write '%s': it is a directory", path);
        return -EISDIR;
    }
    if (there && !S_ISREG(st.st_mode)) {
        f->direct = true; /* never truncated, replaced or locked */
        f->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (f->fd < 0) {
            int rc = -errno;
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
            return rc;
        }
        return 0;
    }
    int rc = outfile_resolve(path, f->real, sizeof f->real, err, errlen);
    if (!rc)
        rc = outfile_check_links(f->real, err, errlen);
    if (rc)
        return rc;
    pid_t holder;
    if ((rc = outfile_lock(&f->lock, f->real, &holder, err, errlen)))
        return rc;
    f->fd = outfile_temp(f->real, f->tmp, sizeof f->tmp);
    if (f->fd < 0) {
        rc = f->fd;
        snprintf(err, errlen, "cannot write '%s': a temporary beside it: %s", path, strerror(-rc));
        outfile_unlock(&f->lock);
        return rc;
    }
    return 0;
}

int outfile_commit(outfile_t *f, char *err, size_t errlen)
{
    int rc = 0;
    if (!f->direct) {
        /* record's processes wrote the temporary by its name and closed it: reopen to fsync */
        int fd = f->fd >= 0 ? f->fd : open(f->tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        rc = fd < 0 ? -errno : outfile_place(fd, f->tmp, f->real, true);
        if (fd >= 0 && fd != f->fd)
            close(fd);
    }
    if (f->fd >= 0 && close(f->fd) && !rc)
        rc = -errno;
    f->fd = -1;
    if (rc) {
        snprintf(err, errlen, "cannot write '%s': %s", f->path, strerror(-rc));
        if (!f->direct)
            unlink(f->tmp);
    }
    outfile_unlock(&f->lock);
    return rc;
}

int outfile_fopen(outfile_t *f, const char *path, FILE **s, char *err, size_t errlen)
{
    int rc = outfile_open(f, path, err, errlen);
    if (rc)
        return rc;
    if (!(*s = fdopen(f->fd, "w"))) {
        rc = -errno;
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-rc));
        outfile_abort(f);
    }
    return rc;
}

int outfile_fclose(outfile_t *f, FILE *s, char *err, size_t errlen)
{
    int rc = ferror(s) ? -EIO : 0;
    if (fclose(s) && !rc)
        rc = -errno;
    f->fd = -1; /* closed with s */
    if (rc) {
        outfile_abort(f);
        return rc;
    }
    return outfile_commit(f, err, errlen);
}

void outfile_abort(outfile_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    if (!f->direct && f->tmp[0])
        unlink(f->tmp);
    outfile_unlock(&f->lock);
}
