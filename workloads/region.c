/* region.c - the worker's half of the region handshake (see region.h): a
 * line to the harness on MB_SYNC_FD, then a one-byte reply once it has read
 * its counters.  Without MB_SYNC_FD the worker runs alone, as by hand. */
#include "region.h"

#include <errno.h>
#include <inttypes.h>
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
    if (fd < 0)
        return;
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t w = write(fd, line + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

/* Send a marker and wait for the harness to answer (it reads counters first). */
static void sync_marker(const char *line)
{
    int fd = sync_get();
    if (fd < 0)
        return;
    sync_send(line);
    char ack;
    while (read(fd, &ack, 1) < 0 && errno == EINTR)
        ;
}

double region_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void region_begin(void)
{
    sync_marker("begin\n");
    t_begin = region_now();
}

void region_end(void)
{
    t_end = region_now();
    sync_marker("end\n");
}

double region_seconds(void) { return t_end - t_begin; }

void region_report(const wl_args_t *a, const wl_result_t *r)
{
    char params[1024], line[2560];
    wl_format_args(a, ',', params, sizeof params);
    int n = snprintf(line, sizeof line,
                     "result workload=%s params=%s throughput=%.6g unit=%s region_s=%.6f bytes=%" PRIu64
                     " ops=%" PRIu64 " checksum=%016" PRIx64,
                     a->wl->name, params, r->throughput, r->unit, r->region_s, r->bytes, r->ops,
                     r->checksum);
    if (r->lat_what && n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n,
                      " lat_what=%s lat_p50_us=%.3f lat_p99_us=%.3f lat_p999_us=%.3f lat_max_us=%.3f"
                      " lat_count=%" PRIu64,
                      r->lat_what, r->lat_p50_us, r->lat_p99_us, r->lat_p999_us, r->lat_max_us,
                      r->lat_count);
    if (r->extra[0] && n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " extra=%s", r->extra);
    if (n > 0 && (size_t)n < sizeof line - 1)
        snprintf(line + n, sizeof line - (size_t)n, "\n");
    else
        line[sizeof line - 2] = '\n', line[sizeof line - 1] = '\0';
    if (sync_get() >= 0)
        sync_send(line);
    else
        fputs(line, stdout);
}

void region_fail(const char *msg)
{
    char line[512];
    snprintf(line, sizeof line, "fail %s\n", msg);
    if (sync_get() >= 0)
        sync_send(line);
    fprintf(stderr, "mallocbench-worker: %s\n", msg);
}
