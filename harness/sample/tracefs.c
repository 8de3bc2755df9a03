/* tracefs.c - where tracefs is, found once (contract: tracefs.h): its two mount points are
 * named here only (tests/unit/test_structure.py holds that). */
#include "tracefs.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t tracefs_once = PTHREAD_ONCE_INIT;
static const char *tracefs_found;   /* NULL when unavailable */
static char tracefs_reason[256];    /* why unavailable */

static bool is_dir(const char *path, int *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *err = errno;
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        *err = ENOTDIR;
        return false;
    }
    return true;
}

/* Find tracefs, mounting it at /sys/kernel/tracing when absent and root. */
static void tracefs_find(void)
{
    static const char *const dirs[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
    char ev[PATH_MAX];
    int err0 = 0, err = 0;

    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        snprintf(ev, sizeof ev, "%s/events", dirs[i]);
        if (is_dir(ev, &err)) {
            tracefs_found = dirs[i];
            return;
        }
        if (i == 0)
            err0 = err;
    }
    if (err0 == ENOENT && geteuid() == 0) {
        if (mount("nodev", dirs[0], "tracefs", 0, NULL) != 0) {
            snprintf(tracefs_reason, sizeof tracefs_reason, "tracefs not available: mount on %s: %s", dirs[0],
                     strerror(errno));
            return;
        }
        snprintf(ev, sizeof ev, "%s/events", dirs[0]);
        if (is_dir(ev, &err)) {
            tracefs_found = dirs[0];
            return;
        }
        snprintf(tracefs_reason, sizeof tracefs_reason, "tracefs not available: mounted, but %.80s: %s", ev,
                 strerror(err));
        return;
    }
    if (err0 == ENOENT)
        snprintf(tracefs_reason, sizeof tracefs_reason,
                 "tracefs not available: not mounted at %s (mounting needs root)", dirs[0]);
    else
        snprintf(tracefs_reason, sizeof tracefs_reason, "tracefs not available: %s/events: %s%s", dirs[0],
                 strerror(err0), err0 == EACCES ? " (root only)" : "");
}

const char *tracefs_dir(void)
{
    pthread_once(&tracefs_once, tracefs_find);
    return tracefs_found;
}

const char *tracefs_why(void)
{
    pthread_once(&tracefs_once, tracefs_find);
    return tracefs_found ? "" : tracefs_reason;
}
