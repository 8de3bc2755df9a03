/* outfile.h - the one way a command writes an output file, and the lock that
 * keeps two writers off one output (the same discipline as scripts/mallocbench/mbout.py).
 *
 * A target is resolved once (outfile_resolve: a symbolic link to its file,
 * the directory through realpath); that one absolute path is both locked and
 * written.  A regular file (or a name not yet there) is written to a temporary
 * with a fresh random name beside it, created O_CREAT|O_EXCL (mkostemps:
 * nothing existing is opened, followed or truncated), then fsync'd, renamed
 * over the target and the directory fsync'd.  A regular target with more than
 * one name (a hard link) is refused: writing through one name would change
 * what the others hold, or silently part them.  A device or FIFO is written in
 * place, never truncated, replaced or locked.
 *
 * The lock is a POSIX write lock on REALPATH.lock, taken without waiting: a
 * second writer, through whatever name, is refused with the holder's pid
 * (F_GETLK names it; the pid is also written into the lock for people).  The
 * lock is opened O_NOFOLLOW and refused, before anything is written to it,
 * unless it is a regular file with one name.  It is removed by its holder,
 * still locked, on unlock; one left by a killed process holds no lock and is
 * taken over. */
#ifndef MB_OUTFILE_H
#define MB_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

typedef struct {
    int fd;                      /* -1: nothing locked (not a regular file) */
    char path[PATH_MAX + 8];     /* PATH.lock */
} outfile_lock_t;

typedef struct {
    const char *path;            /* as the user named it (for messages) */
    char real[PATH_MAX];         /* resolved: what is locked and replaced */
    char tmp[PATH_MAX + 16];     /* absolute REAL.XXXXXX.tmp ("" when written in place) */
    int fd;                      /* where the data goes */
    bool direct;                 /* a device or FIFO: written in place */
    outfile_lock_t lock;
} outfile_t;

/* Is path there and not a regular file (a device, a FIFO, a socket)?
 * Follows symbolic links; a directory counts as regular here (callers
 * refuse it when they open). */
bool outfile_is_special(const char *path);

/* The absolute path that writing path changes: a symbolic link resolved to
 * its file (a dangling one refused), the directory of a name not yet there
 * resolved with realpath.  0, or -errno with err filled in. */
int outfile_resolve(const char *path, char *real, size_t len, char *err, size_t errlen);

/* Refuse (-EMLINK, err filled in) a regular file at path with more than one
 * name; 0 when it has one, is not there, or is not a regular file. */
int outfile_check_links(const char *path, char *err, size_t errlen);

/* A sidecar the user did not name (BASE.meta.json, BASE.rss.csv): refused
 * when it is a symbolic link (never written through), when it is there and
 * not a regular file (a FIFO would block the writer), when it exists and
 * not force, or when it has other names.  0, or -errno with err filled in. */
int outfile_check_sidecar(const char *path, bool force, char *err, size_t errlen);

/* Do a and b name the same file (device and inode)?  false when either is
 * not there. */
bool outfile_same_file(const char *a, const char *b);

/* A new temporary beside real (REAL.XXXXXX.tmp, O_EXCL, mode 0666 less the
 * umask), its name in tmp: an fd, or -errno. */
int outfile_temp(const char *real, char *tmp, size_t len);
/* Put a complete temporary in place: fsync it (fd >= 0), rename it over dst
 * (replace) or only where dst is not there (-EEXIST otherwise, the temporary
 * kept), then fsync the directory.  0 or -errno. */
int outfile_place(int fd, const char *tmp, const char *dst, bool replace);

/* Lock path (resolved first) for this process.  0 (l->fd = -1 when path is a device or FIFO:
 * such a target is never locked); -EWOULDBLOCK with *holder = the pid of
 * the process that holds it; another -errno with err filled in. */
int outfile_lock(outfile_lock_t *l, const char *path, pid_t *holder, char *err, size_t errlen);
/* Remove PATH.lock and release it (a no-op when nothing is locked). */
void outfile_unlock(outfile_lock_t *l);

/* Lock path and open where its new contents go (see above); on failure one
 * line in err ("cannot write 'path': reason").  0 or -errno. */
int outfile_open(outfile_t *f, const char *path, char *err, size_t errlen);
/* Close, rename the temporary over path, release the lock.  0 or -errno
 * (the temporary removed, err filled in). */
int outfile_commit(outfile_t *f, char *err, size_t errlen);
/* Close, remove the temporary, release the lock. */
void outfile_abort(outfile_t *f);

/* outfile_open with a stdio stream over its descriptor in *s: 0, or -errno
 * with nothing left open (err filled in). */
int outfile_fopen(outfile_t *f, const char *path, FILE **s, char *err, size_t errlen);
/* Close s (from outfile_fopen), then commit, or abort when the stream failed
 * (-EIO on a write error, or fclose's errno): 0 or -errno. */
int outfile_fclose(outfile_t *f, FILE *s, char *err, size_t errlen);

#endif
