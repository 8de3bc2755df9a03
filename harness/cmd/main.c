/* main.c - the mallocbench command line: the command named first runs, from
 * the table of cli.h's MB_COMMANDS (its one list of them, which usage() prints),
 * after every argument is checked to be UTF-8: a C command's cmd_NAME, a PY
 * command's Python module mallocbench.NAME (tools_exec_python, with MB_HARNESS
 * naming this program).  Every input is checked before any run;
 * exit codes: 0 ok, 1 a run failed to start, a check or a read/write failed,
 * 2 bad usage or input, 4 a configuration without one ok sample (run, exec, serve;
 * --keep-going: 0), 130 interrupted (everything measured so far is in the CSV). */
#include "cli.h"
#include "mb_config.h"
#include "text.h"
#include "tools.h"

#include <stdio.h>
#include <string.h>

/* The commands, from cli.h's MB_COMMANDS: usage(), the dispatch and the
 * list of valid names all read this one table.  run is NULL for a PY command. */
typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_t;

#define MB_COMMAND_RUN_C(name) cmd_##name
#define MB_COMMAND_RUN_PY(name) NULL
#define MB_COMMAND_ROW(name, kind, summary) {#name, MB_COMMAND_RUN_##kind(name), summary},
static const command_t commands[] = {MB_COMMANDS(MB_COMMAND_ROW){NULL, NULL, NULL}};
#undef MB_COMMAND_ROW
#undef MB_COMMAND_RUN_C
#undef MB_COMMAND_RUN_PY

/* Run c with argv[0] its name: its cmd_NAME, or become python3 -m mallocbench.NAME with
 * the arguments after the name (returns only on failure, 2 after one line). */
static int command_run(const command_t *c, int argc, char **argv)
{
    return c->run ? c->run(argc, argv) : tools_exec_python(c->name, argc - 1, argv + 1);
}

/* "run, exec, ...": every command's name, in the table's order. */
static const char *command_names(void)
{
    static char names[512];
    names[0] = '\0';
    for (const command_t *c = commands; c->name; c++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", c == commands ? "" : ", ", c->name);
    return names;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mallocbench COMMAND [options]\n"
            "Shows what a memory allocator costs a program: throughput, and the kernel work it\n"
            "causes (page faults, madvise/munmap/brk calls, system time, RSS).\n\n"
            "commands:\n");
    for (const command_t *c = commands; c->name; c++)
        fprintf(out, "  %-8s %s%s\n", c->name, strlen(c->name) > 8 ? " " : "", c->summary);
    fprintf(out, "`mallocbench COMMAND --help` (or `mallocbench help COMMAND`) for each command's options.\n");
}

int cmd_version(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("mallocbench %s\n", MB_VERSION);
    return 0;
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
        if (argc < 3) {
            usage(stdout);
            return 0;
        }
        /* `help COMMAND` is `COMMAND --help` */
        for (const command_t *c = commands; c->name; c++)
            if (!strcmp(argv[2], c->name)) {
                char *args[] = {argv[2], (char *)"--help", NULL};
                return command_run(c, 2, args);
            }
        return die_usage("help: unknown command '%s' (%s)", argv[2], command_names());
    }
    if (!strcmp(cmd, "--version"))
        cmd = "version";
    cli_set_whole(argc, argv);
    for (const command_t *c = commands; c->name; c++)
        if (!strcmp(cmd, c->name))
            return command_run(c, argc - 1, argv + 1);
    return die_usage("unknown command '%s' (%s; see --help)", cmd, command_names());
}
