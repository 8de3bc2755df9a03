/* outfile.c - write an output through PATH.tmp and a rename, or in place
 * for a device or FIFO, under a lock that refuses a second writer with the
 * holder's pid (contract: outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool outfile_is_special(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

void outfile_locked_msg(const char *path, pid_t holder, char *err, size_t errlen)
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
    if ((size_t)snprintf(l->path, sizeof l->path, "%s.lock", path) >= sizeof l->path) {
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
    pid_t holder;
    int rc = outfile_lock(&f->lock, path, &holder, err, errlen);
    if (rc)
        return rc;
    char cwd[PATH_MAX];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    if ((size_t)snprintf(f->tmp, sizeof f->tmp, "%s%s%s.tmp", cwd, cwd[0] ? "/" : "", path) >= sizeof f->tmp) {
        outfile_unlock(&f->lock);
        snprintf(err, errlen, "cannot write '%s': the path is too long", path);
        return -ENAMETOOLONG;
    }
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) {
        rc = -errno;
        snprintf(err, errlen, "cannot write '%s': %s", f->tmp, strerror(errno));
        outfile_unlock(&f->lock);
        return rc;
    }
    return 0;
}

int outfile_commit(outfile_t *f, char *err, size_t errlen)
{
    int rc = 0;
    if (f->fd >= 0 && close(f->fd))
        rc = -errno;
    f->fd = -1;
    if (!rc && !f->direct && rename(f->tmp, f->path))
        rc = -errno;
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
