/* outfile.h - the one way a command writes an output file, and the lock that
 * keeps two writers off one output.  A regular file (or a name not yet
 * there) is written to PATH.tmp and renamed over PATH when complete; a
 * device or FIFO is written in place, never truncated, replaced or locked
 * (a device gets the data only; a FIFO is written, not replaced).
 *
 * The lock is a POSIX write lock on the sibling PATH.lock, taken without
 * waiting: a second writer is refused with the holder's pid (F_GETLK names
 * it; the pid is also written into PATH.lock for people).  The lock file is
 * removed by its holder, still locked, on unlock; one left by a killed
 * process holds no lock and is taken over. */
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
    const char *path;
    char tmp[PATH_MAX + 8];      /* absolute PATH.tmp ("" when written in place) */
    int fd;                      /* where the data goes */
    bool direct;                 /* a device or FIFO: written in place */
    outfile_lock_t lock;
} outfile_t;

/* Is path there and not a regular file (a device, a FIFO, a socket)?
 * Follows symbolic links; a directory counts as regular here (callers
 * refuse it when they open). */
bool outfile_is_special(const char *path);

/* Lock path for this process.  0 (l->fd = -1 when path is a device or FIFO:
 * such a target is never locked); -EWOULDBLOCK with *holder = the pid of
 * the process that holds it; another -errno with err filled in. */
int outfile_lock(outfile_lock_t *l, const char *path, pid_t *holder, char *err, size_t errlen);
/* Remove PATH.lock and release it (a no-op when nothing is locked). */
void outfile_unlock(outfile_lock_t *l);

/* The message for a lock held by another process, in err. */
void outfile_locked_msg(const char *path, pid_t holder, char *err, size_t errlen);

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
