/* cmd_compare.c - `mallocbench compare`: hands its arguments to
 * scripts/compare.py (the statistics read only CSV), under an interpreter
 * that has what it needs, with MB_HARNESS set for the schema. */
#include "cli.h"
#include "counters.h"
#include "csv.h"
#include "mb_config.h"
#include "registry.h"
#include "sample.h"
#include "sidecar.h"
#include "sysinfo.h"
#include "text.h"
#include "tools.h"
#include "units.h"
#include "verify.h"
#include "workload.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The statistics live in scripts/compare.py (it reads only CSV); run it with
 * an interpreter that has what it needs. */
int cmd_compare(int argc, char **argv)
{
    char script[PATH_MAX];
    if (tools_find_script("compare.py", script, sizeof script))
        return 2;
    /* the scripts read the CSV schema from `MB_HARNESS schema --json` where no
     * schema.json lies beside them or in build/ (scripts/mbcsv.py) */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        setenv("MB_HARNESS", self, 0);
    }
    static const char *const pythons[] = {"/usr/bin/python3", "/usr/local/bin/python3", "python3"};
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return 1;
    args[1] = script;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    for (size_t i = 0; i < sizeof pythons / sizeof *pythons; i++) {
        args[0] = (char *)pythons[i];
        execvp(pythons[i], args);
    }
    free(args);
    return die_usage("compare: cannot run python3: %s", strerror(errno));
}
