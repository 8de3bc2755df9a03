/* main.c - the mallocbench command line: `run` measures workloads under
 * allocators into CSV, `list` shows what is installed and accepted,
 * `schema` prints the CSV schema.  Every input is checked before any run;
 * exit codes: 0 ok, 1 a run failed to start, a check or a read/write failed,
 * 2 bad usage or input, 130 interrupted (everything measured so far is in the CSV). */
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

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mallocbench COMMAND [options]\n"
            "Shows what a memory allocator costs a program: throughput, and the kernel work it\n"
            "causes (page faults, madvise/munmap/brk calls, system time, RSS).\n\n"
            "commands:\n"
            "  run      measure workloads under allocators, one CSV row per process run\n"
            "  exec     measure your own command under allocators, as `run` does a workload\n"
            "  serve    measure your own server under allocators while an unpreloaded client loads it\n"
            "  list     allocators | workloads | events | tunables [ALLOCATOR]\n"
            "  tune     search the allocators' tunables for the best configuration of one workload (scripts/tune.py)\n"
            "  compare  statistics of one run against a baseline, or of two runs (scripts/compare.py)\n"
            "  merge    join the CSVs of the shards of one plan\n"
            "  record   a command's every allocation call into a trace (-o FILE -- CMD ARGS...)\n"
            "  trace    what a trace of `record` holds: processes, threads, calls, peak bytes\n"
            "  calibrate  the machine's memcpy bandwidth and the cost of one page fault\n"
            "  schema   print the CSV schema (Markdown)\n"
            "  version  print the version\n"
            "`mallocbench COMMAND --help` for each command's options.\n");
}

/* Every argument must be UTF-8: labels, tunables, workload parameters, the
 * command of exec and every path reach the CSV and its JSON sidecar, which
 * scripts read as UTF-8 (issue 18).  0, or 2 after naming the first that is
 * not, what it belongs to and the offset of its first bad byte. */
static int check_arguments(int argc, char **argv)
{
    int dash = 0;
    for (int i = 1; i < argc; i++) {
        size_t bad;
        if (!dash && !strcmp(argv[i], "--"))
            dash = i;
        if (!text_utf8_check(argv[i], &bad))
            continue;
        char what[96] = "";
        if (dash && i > dash)
            snprintf(what, sizeof what, " (word %d of the command after --)", i - dash);
        else if (i > 1 && argv[i - 1][0] == '-' && argv[i - 1][1] && !strchr(argv[i - 1], '='))
            snprintf(what, sizeof what, " (the value of %.40s)", argv[i - 1]);
        return die_usage("argument %d%s '%s': not UTF-8 at byte %zu (arguments must be UTF-8)", i, what,
                         argv[i], bad);
    }
    return 0;
}

/* Every command, in the order usage() lists them: its entry point in
 * cmd_NAME.c (run and exec also get the whole command line, for the sidecar). */
typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    int (*run_full)(int argc, char **argv, int full_argc, char **full_argv);
} command_t;

static const command_t commands[] = {
    {"run", NULL, cmd_run},         {"exec", NULL, cmd_exec},   {"serve", NULL, cmd_serve},
    {"record", cmd_record, NULL},
    {"trace", cmd_trace, NULL},     {"list", cmd_list, NULL},   {"compare", cmd_compare, NULL},
    {"tune", cmd_tune, NULL},
    {"merge", cmd_merge, NULL},     {"calibrate", cmd_calibrate, NULL},
    {"schema", cmd_schema, NULL},   {NULL, NULL, NULL},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (check_arguments(argc, argv))
        return 2;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("mallocbench %s\n", MB_VERSION);
        return 0;
    }
    for (const command_t *c = commands; c->name; c++) {
        if (strcmp(cmd, c->name))
            continue;
        return c->run ? c->run(argc - 1, argv + 1) : c->run_full(argc - 1, argv + 1, argc, argv);
    }
    return die_usage("unknown command '%s' (run, exec, serve, record, trace, list, tune, compare, merge, calibrate, schema, version; "
                     "see --help)", cmd);
}
