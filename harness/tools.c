/* tools.c - finding the worker, the probe and the scripts (contract:
 * tools.h).  Install locations are compiled in relative to the program's own
 * directory (/proc/self/exe), so an install under --destdir or moved
 * elsewhere finds its parts; an absolute location is used as it is. */
#include "tools.h"
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(MB_LIBEXECDIR_REL) || !defined(MB_DATADIR_REL) || !defined(MB_SOURCE_DIR)
#error "tools.c needs MB_LIBEXECDIR_REL, MB_DATADIR_REL and MB_SOURCE_DIR (meson.build)"
#endif

#define MAX_PLACES 2

/* The directory of the running program: 0 or -errno. */
static int self_dir(char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return -errno;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -ENOENT;
    *slash = '\0';
    if ((size_t)snprintf(out, len, "%s", slash == self ? "/" : self) >= len)
        return -ENAMETOOLONG;
    return 0;
}

/* DIR, relative to the program's directory unless absolute, canonical
 * where it exists (so error messages show a plain path). */
static void place(const char *dir, char *out, size_t len)
{
    char self[PATH_MAX], raw[PATH_MAX], real[PATH_MAX];
    if (dir[0] == '/')
        snprintf(raw, sizeof raw, "%s", dir);
    else if (self_dir(self, sizeof self) == 0)
        snprintf(raw, sizeof raw, "%s/%s", self, dir);
    else
        snprintf(raw, sizeof raw, "<this program's directory: /proc/self/exe unreadable>/%s", dir);
    snprintf(out, len, "%s", realpath(raw, real) ? real : raw);
}

/* NAME in the first of DIRS where it is readable, into out: 0, or -ENOENT
 * with the places looked in listed in looked ("A or B"). */
static int search(const char *name, const char *const *dirs, int ndirs,
                  char *out, size_t len, char *looked, size_t looked_len)
{
    looked[0] = '\0';
    for (int i = 0; i < ndirs; i++) {
        char dir[PATH_MAX];
        place(dirs[i], dir, sizeof dir);
        if ((size_t)snprintf(out, len, "%s/%s", dir, name) < len && access(out, R_OK) == 0)
            return 0;
        size_t used = strlen(looked);
        snprintf(looked + used, looked_len - used, "%s%s", i ? " or " : "", dir);
    }
    return -ENOENT;
}

int find_tools(run_opts_t *o, char *worker, char *probe, size_t len)
{
    const char *const dirs[MAX_PLACES] = {".", MB_LIBEXECDIR_REL};
    char looked[2 * PATH_MAX + 8];
    if (!o->worker) {
        if (search("mallocbench-worker", dirs, MAX_PLACES, worker, len, looked, sizeof looked))
            return die_usage("cannot find mallocbench-worker in %s (use --worker PATH)", looked);
        o->worker = worker;
    }
    if (!o->probe) {
        if (search("libmbprobe.so", dirs, MAX_PLACES, probe, len, looked, sizeof looked))
            return die_usage("cannot find libmbprobe.so in %s (use --probe PATH)", looked);
        o->probe = probe;
    }
    if (access(o->worker, X_OK))
        return die_usage("cannot execute worker '%s': %s", o->worker, strerror(errno));
    if (access(o->probe, R_OK))
        return die_usage("cannot read probe '%s': %s", o->probe, strerror(errno));
    return 0;
}

int tools_find_script(const char *name, char *out, size_t len)
{
    const char *const dirs[MAX_PLACES] = {MB_DATADIR_REL "/scripts", MB_SOURCE_DIR "/scripts"};
    char looked[2 * PATH_MAX + 8];
    if (search(name, dirs, MAX_PLACES, out, len, looked, sizeof looked))
        return die_usage("cannot find %s in %s", name, looked);
    return 0;
}
