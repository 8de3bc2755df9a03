/* cmd_exec.c - `mallocbench exec [RUN OPTIONS] [--metric RE [--unit U]
 * [--lower-is-better]] -- CMD ARGS...`: a `run` of the pseudo-workload
 * exec (workloads/exec.h) whose command is CMD ARGS.  Everything of `run`
 * applies (allocators, tunables, blocks, timeout, CSV, --resume); this file
 * only turns the command line into `run -w exec:...,cmd=...`. */
#include "cli.h"
#include "launch.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void exec_usage(FILE *out)
{
    fprintf(out,
            "usage: mallocbench exec [RUN OPTIONS] [--metric REGEX [--unit UNIT] [--lower-is-better]]\n"
            "                        -- CMD [ARGS...]\n"
            "Runs CMD under each allocator configuration (-a, -t) like a workload: proof of the\n"
            "allocator in every process it starts, counters of the whole process tree from exec to\n"
            "exit (or the region the program marks: include/mallocbench.h), one CSV row per run.\n"
            "Throughput is 1 / time of the marked region, or of the whole command without one\n"
            "(runs/s), or the number --metric finds in its output\n"
            "(the last line the extended REGEX matches: its first group, or the first number\n"
            "from the match on).\n"
            "--prepare CMD runs before each sample, --conclude CMD after each, --cleanup CMD once\n"
            "per configuration after its last: through /bin/sh -c, outside the measurement\n"
            "(hyperfine's options; a failing prepare or conclude makes that sample an error row).\n"
            "Refused before any run: a static or setuid program, or one that links an allocator\n"
            "itself (preloading would not really swap it).  RUN OPTIONS: see `mallocbench run --help`\n"
            "(-w is not one of them).  Example:\n"
            "  mallocbench exec -a glibc,jemalloc -r 5 -- python3 -c 'd = {i: str(i) for i in range(10**6)}'\n");
}

/* "exec:metric=RE,unit=U,better=B,cmd=QUOTED" into spec: 0, or 2 after the error. */
static int exec_spec(char **cmd, const char *metric, const char *unit, bool lower, char *spec, size_t len)
{
    char quoted[WL_STR_MAX + 1];
    if (launch_quote(cmd, quoted, sizeof quoted) || strlen(quoted) >= WL_STR_MAX)
        return die_usage("exec: the command is longer than %d characters once quoted; put it in a script",
                         WL_STR_MAX - 1);
    if ((size_t)snprintf(spec, len, "exec:metric=%s,unit=%s,better=%s,cmd=%s", metric, unit,
                         lower ? "lower" : "higher", quoted) >= len)
        return die_usage("exec: the command and --metric are too long");
    return 0;
}

int cmd_exec(int argc, char **argv)
{
    const char *metric = "", *unit = "";
    bool lower = false;
    int dash = -1;
    char **rargv = calloc((size_t)argc + 3, sizeof *rargv);
    if (!rargv)
        return die_io("out of memory");
    int n = 0;
    rargv[n++] = "run";
    for (int i = 1; i < argc && dash < 0; i++) {
        const char *v;
        if (!strcmp(argv[i], "--"))
            dash = i;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return free(rargv), exec_usage(stdout), 0;
        else if ((v = cli_take("--metric", argc, argv, &i)))
            metric = v;
        else if ((v = cli_take("--unit", argc, argv, &i)))
            unit = v;
        else if (!strcmp(argv[i], "--lower-is-better"))
            lower = true;
        else if (!strcmp(argv[i], "-w") || !strncmp(argv[i], "--workload", 10))
            return free(rargv), die_usage("exec: -w is not an option of exec (the workload is the command)");
        else
            rargv[n++] = argv[i];
    }
    if (dash < 0 || dash + 1 >= argc) {
        free(rargv);
        return die_usage("exec: no command: give it after -- (`mallocbench exec --help`)");
    }
    if ((*unit || lower) && !*metric)
        return free(rargv), die_usage("exec: --unit and --lower-is-better need --metric");
    static char spec[1024];
    if (exec_spec(argv + dash + 1, metric, unit, lower, spec, sizeof spec))
        return free(rargv), 2;
    rargv[n++] = "-w";
    rargv[n++] = spec;
    int rc = cmd_run(n, rargv);
    free(rargv);
    return rc;
}
