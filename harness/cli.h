/* cli.h - what the command-line files share: the one error printer (one
 * line, "mallocbench: ...", exit code 2) and finding our own worker and
 * probe; each command's entry point. */
#ifndef MB_CLI_H
#define MB_CLI_H
#include "run.h"

#include <stddef.h>

#define MAX_WORKLOADS 256
#define MAX_CONFIGS 256
#define MAX_SWEEPS 32
#define MAX_VALUES 32
#define MAX_EVENTS 16

extern const char *prog;

/* Print "mallocbench: <message>" and return 2 (bad usage or input). */
int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Fill o->worker and o->probe (beside this program unless given): 0 or 2. */
int find_tools(run_opts_t *o, char *worker, char *probe, size_t len);

int cmd_run(int argc, char **argv, int full_argc, char **full_argv);
int cmd_merge(int argc, char **argv);

#endif
