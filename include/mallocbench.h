/* mallocbench.h - mark the measured region of your own program for
 * `mallocbench exec` (header only; copy it or add -I<this dir>).
 *
 *     #include <mallocbench.h>
 *     ... set-up you do not want measured ...
 *     mb_region_begin();
 *     ... the work ...
 *     mb_region_end();
 *
 * Each call writes "begin\n" or "end\n" to the descriptor named by the
 * environment variable MB_SYNC_FD and waits for a one-byte answer: the
 * harness reads its counters (faults, syscalls, CPU time, RSS) before it
 * answers, so the region is bracketed exactly.  Without MB_SYNC_FD (run by
 * hand, or under plain `perf stat`) both calls do nothing.  Call them once
 * each, from one thread; counters cover the whole process tree either way.
 *
 * The check before any write: the variables are inherited by every
 * descendant, in which that number may be some unrelated file (Python's
 * subprocess closes inherited descriptors, and the number is reused).  So
 * the harness also sets MB_SYNC_ID=DEV:INO, the st_dev and st_ino of its
 * socket, and a call writes only when fstat(MB_SYNC_FD) is a socket with
 * exactly that device and inode; else (no MB_SYNC_ID, a bad number, another
 * file) it does nothing, as by hand.  A descendant that inherited the
 * socket itself passes the check and marks as the process started would.
 * Any language can do the same: check the descriptor, write the line, read
 * one byte. */
#ifndef MALLOCBENCH_H
#define MALLOCBENCH_H
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole line to fd, through short writes and EINTR: 0, or -1. */
static inline int mb_sync_write_(int fd, const char *line)
{
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* MB_SYNC_FD's descriptor if it is the harness's socket, the one MB_SYNC_ID
 * ("DEV:INO", decimal) names; else -1: no write goes anywhere else. */
static inline int mb_sync_fd_(void)
{
    const char *s = getenv("MB_SYNC_FD"), *id = getenv("MB_SYNC_ID");
    char *end;
    struct stat st;
    if (!s || !*s || !id || !*id)
        return -1;
    long fd = strtol(s, &end, 10);
    if (*end || fd < 0 || fd > INT_MAX)
        return -1;
    unsigned long long dev = strtoull(id, &end, 10), ino;
    if (*end != ':' || !end[1])
        return -1;
    ino = strtoull(end + 1, &end, 10);
    if (*end || fstat((int)fd, &st) != 0 || !S_ISSOCK(st.st_mode) || (unsigned long long)st.st_dev != dev ||
        (unsigned long long)st.st_ino != ino)
        return -1;
    return (int)fd;
}

static inline void mb_region_marker_(const char *line)
{
    int fd = mb_sync_fd_();
    if (fd < 0 || mb_sync_write_(fd, line) != 0)
        return;
    char ack;
    while (read(fd, &ack, 1) < 0 && errno == EINTR)
        ;
}

static inline void mb_region_begin(void) { mb_region_marker_("begin\n"); }
static inline void mb_region_end(void) { mb_region_marker_("end\n"); }

#endif
