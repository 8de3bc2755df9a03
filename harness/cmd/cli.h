/* cli.h - the commands: one line each of MB_COMMANDS below, which gives main.c
 * its table, its usage text and its list of valid names.  A C command is
 * cmd_NAME(argc, argv) in cmd_NAME.c (trace lives beside record in cmd_record.c,
 * version in main.c); a PY command is the Python module mallocbench.NAME
 * (scripts/mallocbench/NAME.py, with its shim scripts/NAME.py), which main.c runs
 * with the command's arguments (sample/tools.h's tools_exec_python).  Adding a
 * command is its file (or module and shim) plus that line: meson.build reads the
 * table for the files to build.  Also what the commands share: reading --NAME VALUE, and
 * the whole command line, which run, exec and serve record in the sidecar.
 * Errors are error.h's one-line printers. */
#ifndef MB_CLI_H
#define MB_CLI_H
#include "error.h"
#include "spec.h"

#include <stdbool.h>
#include <stdint.h>

/* X(name, kind, one line for usage), in the order usage() lists them; kind C or PY (above). */
#define MB_COMMANDS(X)                                                                                              \
    X(run, C, "measure workloads under allocators, one CSV row per process run")                                    \
    X(exec, C, "measure your own command under allocators, as `run` does a workload")                               \
    X(serve, C, "measure your own server under allocators while an unpreloaded client loads it")                    \
    X(list, C, "allocators | workloads | events | tunables [ALLOCATOR]")                                            \
    X(tune, C, "search the allocators' tunables for the best configuration of one workload (scripts/tune.py)")      \
    X(compare, PY, "statistics of one run against a baseline, or of two runs (--json: records)")                    \
    X(report, PY, "the report of a run: sentences, tables, plots (--markdown, --json, --html; -o DIR)")             \
    X(merge, C, "join the CSVs of the shards of one plan")                                                          \
    X(record, C, "a command's every allocation call into a trace (-o FILE -- CMD ARGS...)")                         \
    X(trace, C, "what a trace of `record` holds: processes, threads, calls, peak bytes")                            \
    X(diagnose, C, "a running process (-p PID, --all, -- CMD): the CPU it loses to re-faults, the fix, its saving") \
    X(calibrate, C, "the machine's memcpy bandwidth and the cost of one page fault")                                \
    X(schema, C, "print the CSV schema (Markdown)")                                                                 \
    X(version, C, "print the version")

/* cmd_NAME for each C row; a PY row has no C function */
#define MB_COMMAND_DECLARE_C(name) int cmd_##name(int argc, char **argv);
#define MB_COMMAND_DECLARE_PY(name)
#define MB_COMMAND_DECLARE(name, kind, summary) MB_COMMAND_DECLARE_##kind(name)
MB_COMMANDS(MB_COMMAND_DECLARE)
#undef MB_COMMAND_DECLARE
#undef MB_COMMAND_DECLARE_C
#undef MB_COMMAND_DECLARE_PY

/* The value of --NAME VALUE or --NAME=VALUE at argv[*i] (stepping *i past a
 * separate value), or NULL when argv[*i] is not that option. */
const char *cli_take(const char *name, int argc, char **argv, int *i);

/* The whole command line as main() got it (set once there), for the sidecar. */
void cli_set_whole(int argc, char **argv);
void cli_whole(int *argc, char ***argv);

#endif
