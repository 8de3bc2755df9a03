/* region.c - the worker's half of the region handshake (see region.h): a
 * line to the harness on MB_SYNC_FD, then a one-byte reply once it has read
 * its counters.  Without MB_SYNC_FD, or where its descriptor is not the
 * socket MB_SYNC_ID names, the worker runs alone, as by hand. */
#include "region.h"
#include "units.h"
#include "result.h"
#include "mallocbench.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int sync_fd = -2; /* -2 not looked up yet, -1 none */
static double t_begin, t_end;
static char sync_token[72];

extern char **environ;

/* Before main: the token out of the environment, its string overwritten
 * where it lies, so that nothing the worker runs can read it back. */
__attribute__((constructor)) static void sync_take_token(void)
{
    size_t n = strlen(MB_SYNC_TOKEN_ENV);
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, MB_SYNC_TOKEN_ENV, n) || (*e)[n] != '=')
            continue;
        char *v = *e + n + 1;
        if (strlen(v) < sizeof sync_token)
            memcpy(sync_token, v, strlen(v) + 1);
        memset(v, 'x', strlen(v));
    }
    unsetenv(MB_SYNC_TOKEN_ENV);
}

static int sync_get(void)
{
    if (sync_fd == -2)
        sync_fd = mb_sync_fd_(); /* the header's check: the harness's socket, or none */
    return sync_fd;
}

/* One line, its token first: 0, or -1. */
static int sync_send(const char *line)
{
    int fd = sync_get();
    char buf[WL_RESULT_LINE_MAX + sizeof sync_token + 1];
    if (fd < 0)
        return -1;
    snprintf(buf, sizeof buf, "%s%s%s", sync_token, *sync_token ? " " : "", line);
    return mb_sync_write_(fd, buf); /* the header's writer: one loop for both */
}

/* A marker, then the harness's one-byte answer (include/mallocbench.h). */
static void sync_marker(const char *line)
{
    if (sync_send(line) != 0)
        return;
    char ack;
    while (read(sync_fd, &ack, 1) < 0 && errno == EINTR)
        ;
}

double region_now(void)
{
    return mono_now();
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

static bool fail_sent;

bool region_failed(void)
{
    return fail_sent;
}

void region_fail(const char *msg)
{
    char line[512];
    fail_sent = true;
    snprintf(line, sizeof line, "fail %s\n", msg);
    if (sync_get() >= 0)
        sync_send(line);
    fprintf(stderr, "mallocbench-worker: %s\n", msg);
}

void region_pin_thread(unsigned index)
{
    const char *on = getenv(MB_PIN_THREADS_ENV);
    if (!on || strcmp(on, "1"))
        return;
    cpu_set_t all, one;
    if (sched_getaffinity(0, sizeof all, &all))
        return;
    int n = CPU_COUNT(&all);
    if (n < 1)
        return;
    unsigned want = index % (unsigned)n, seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &all))
            continue;
        if (seen++ == want) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
    }
}
