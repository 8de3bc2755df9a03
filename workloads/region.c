/* region.c - the worker's half of the region handshake (see region.h): a
 * line to the harness on MB_SYNC_FD, then a one-byte reply once it has read
 * its counters.  Without MB_SYNC_FD the worker runs alone, as by hand. */
#include "region.h"
#include "units.h"
#include "result.h"
#include "mallocbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int sync_fd = -2; /* -2 not looked up yet, -1 none */
static double t_begin, t_end;

static int sync_get(void)
{
    if (sync_fd == -2) {
        const char *s = getenv(MB_SYNC_FD_ENV);
        char *end;
        long fd = s ? strtol(s, &end, 10) : -1;
        sync_fd = (s && *s && !*end && fd >= 0) ? (int)fd : -1;
    }
    return sync_fd;
}

static void sync_send(const char *line)
{
    int fd = sync_get();
    if (fd >= 0)
        (void)mb_sync_write_(fd, line); /* the header's writer: one loop for both */
}

double region_now(void)
{
    return mono_now();
}

void region_begin(void)
{
    mb_region_begin(); /* the markers as any program sends them (include/mallocbench.h) */
    t_begin = region_now();
}

void region_end(void)
{
    t_end = region_now();
    mb_region_end();
}

double region_seconds(void) { return t_end - t_begin; }

int region_report(const wl_args_t *a, const wl_result_t *r)
{
    char line[WL_RESULT_LINE_MAX], err[512];
    int rc = wl_result_format(a, r, line, sizeof line, err, sizeof err);
    if (rc) {
        region_fail(err);
        return rc;
    }
    if (sync_get() >= 0)
        sync_send(line);
    else
        fputs(line, stdout);
    return 0;
}

void region_fail(const char *msg)
{
    char line[512];
    snprintf(line, sizeof line, "fail %s\n", msg);
    if (sync_get() >= 0)
        sync_send(line);
    fprintf(stderr, "mallocbench-worker: %s\n", msg);
}
