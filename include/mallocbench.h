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
 * Any language can do the same: write the line, read one byte. */
#ifndef MALLOCBENCH_H
#define MALLOCBENCH_H
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

static inline void mb_region_marker_(const char *line)
{
    const char *s = getenv("MB_SYNC_FD");
    if (!s || !*s)
        return;
    int fd = atoi(s);
    if (mb_sync_write_(fd, line) != 0)
        return;
    char ack;
    while (read(fd, &ack, 1) < 0 && errno == EINTR)
        ;
}

static inline void mb_region_begin(void) { mb_region_marker_("begin\n"); }
static inline void mb_region_end(void) { mb_region_marker_("end\n"); }

#endif
