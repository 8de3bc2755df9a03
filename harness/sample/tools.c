/* tools.c - finding the worker, the probe and the Python package (contract:
 * tools.h).  Install locations are compiled in relative to the program's own
 * directory (/proc/self/exe), so an install under --destdir or moved
 * elsewhere finds its parts; an absolute location is used as it is. */
#include "tools.h"
#include "error.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(MB_LIBEXECDIR_REL) || !defined(MB_PYLIB_REL) || !defined(MB_SOURCE_DIR)
#error "tools.c needs MB_LIBEXECDIR_REL, MB_PYLIB_REL and MB_SOURCE_DIR (meson.build)"
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

int tools_find(run_opts_t *o, char *worker, char *probe, size_t len)
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

/* The directory that holds the mallocbench Python package (its
 * mallocbench/__init__.py) into out: the installed one, relative to this
 * program, else the source tree's scripts/.  0, or 2 after one line naming
 * every place looked in. */
static int tools_python_path(char *out, size_t len)
{
    const char *const dirs[MAX_PLACES] = {MB_PYLIB_REL, MB_SOURCE_DIR "/scripts"};
    char looked[2 * PATH_MAX + 8], init[PATH_MAX];
    if (search("mallocbench/__init__.py", dirs, MAX_PLACES, init, sizeof init, looked, sizeof looked))
        return die_usage("cannot find the mallocbench Python package in %s", looked);
    char *end = strstr(init, "/mallocbench/__init__.py");
    if ((size_t)(end - init) >= len)
        return die_usage("the path of the mallocbench Python package is too long: %s", init);
    snprintf(out, len, "%.*s", (int)(end - init), init);
    return 0;
}

/* The package's directory into dir and "PYTHONPATH=<dir>[:<ours>]" into
 * out, from one search: 0, or 2 after one line. */
static int python_env(char *dir, size_t dlen, char *out, size_t len)
{
    if (tools_python_path(dir, dlen))
        return 2;
    const char *old = getenv("PYTHONPATH");
    if ((size_t)snprintf(out, len, "PYTHONPATH=%s%s%s", dir, old && *old ? ":" : "", old ? old : "") >= len)
        return die_usage("PYTHONPATH would be too long with the mallocbench package's directory '%s'", dir);
    return 0;
}

int tools_python_env(char *out, size_t len)
{
    char dir[PATH_MAX];
    return python_env(dir, sizeof dir, out, len);
}

int tools_exec_python(const char *module, int nargs, char *const *args)
{
    char var[2 * PATH_MAX], dir[PATH_MAX], self[PATH_MAX];
    if (python_env(dir, sizeof dir, var, sizeof var))
        return 2;
    /* the package's directory for this interpreter only: cli.run takes it out of
     * PYTHONPATH again (MB_PYTHONPATH) before the script starts anything; and no
     * module from the user's current directory (python3 -m puts it first on the
     * path; PYTHONSAFEPATH, python 3.11, leaves it out), undone the same way */
    setenv("PYTHONPATH", var + strlen("PYTHONPATH="), 1);
    setenv("MB_PYTHONPATH", dir, 1);
    if (!getenv("PYTHONSAFEPATH")) {
        setenv("PYTHONSAFEPATH", "1", 1);
        setenv("MB_PYTHONSAFEPATH", "1", 1);
    }
    /* the scripts read the CSV schema from `MB_HARNESS schema --json` where no
     * schema.json lies beside them or in build/ (mbcsv.schema_places) */
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        setenv("MB_HARNESS", self, 0);
    }
    char name[128];
    snprintf(name, sizeof name, "mallocbench.%s", module);
    char **argv = calloc((size_t)nargs + 4, sizeof *argv);
    if (!argv)
        return die_io("out of memory");
    argv[1] = (char *)"-m";
    argv[2] = name;
    for (int i = 0; i < nargs; i++)
        argv[i + 3] = args[i];
    static const char *const pythons[] = {"/usr/bin/python3", "/usr/local/bin/python3", "python3"};
    for (size_t i = 0; i < sizeof pythons / sizeof *pythons; i++) {
        argv[0] = (char *)pythons[i];
        execvp(pythons[i], argv);
    }
    free(argv);
    return die_usage("%s: cannot run python3: %s", module, strerror(errno));
}
