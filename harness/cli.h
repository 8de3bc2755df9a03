/* cli.h - what the command-line files share: the error printers (one line,
 * "mallocbench: ..."; die_usage for bad usage or input, exit code 2, die_io
 * for a read, write or allocation that failed, exit code 1), errors that point at the
 * matrix line of a spec entry, and each command's entry point.  cli.c is
 * the bottom of the commands' layers: it calls nothing above it. */
#ifndef MB_CLI_H
#define MB_CLI_H
#include "spec.h"

extern const char *prog;

/* Print "mallocbench: <message>" and return 2 (bad usage or input). */
int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "mallocbench: <message>" and return 1: a read, a write or an
 * allocation failed, not the user. */
int die_io(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One of the two by the -errno of what failed: die_usage when rc says the
 * input itself is wrong (malformed, not there, not a file, too large),
 * else die_io (a read or write failed). */
int die_for(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Errors about the spec entry at this matrix line (0: the command line)
 * start "file:line: " until the next spec_at. */
void spec_at(const run_spec_t *sp, unsigned line);
/* die_usage with the entry's place in front. */
int die_spec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The value of --NAME VALUE or --NAME=VALUE at argv[*i] (stepping *i past a
 * separate value), or NULL when argv[*i] is not that option. */
const char *cli_take(const char *name, int argc, char **argv, int *i);

int cmd_run(int argc, char **argv, int full_argc, char **full_argv);
int cmd_merge(int argc, char **argv);
/* `exec [RUN OPTIONS] -- CMD ARGS`: run of the exec pseudo-workload (cmd_exec.c). */
int cmd_exec(int argc, char **argv, int full_argc, char **full_argv);
/* `serve [RUN OPTIONS] --ready R --client 'CLIENT' -- SERVER ARGS`: run of the
 * serve pseudo-workload (cmd_serve.c). */
int cmd_serve(int argc, char **argv, int full_argc, char **full_argv);
/* mallocbench record [-o FILE] [-a ALLOCATOR[=LIB]] [--force] -- CMD ARGS...
 * (cmd_record.c): the command's exit code (128+signal), 2 on bad usage or
 * input; mallocbench trace FILE: 0, or 2 (one line with the byte offset). */
int cmd_record(int argc, char **argv);
int cmd_trace(int argc, char **argv);
/* cmd_list.c, cmd_calibrate.c, cmd_compare.c, cmd_schema.c */
int cmd_list(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_compare(int argc, char **argv);
/* `tune`: checks its input, then hands over to scripts/tune.py (cmd_tune.c) */
int cmd_tune(int argc, char **argv);
int cmd_schema(int argc, char **argv);

#endif
