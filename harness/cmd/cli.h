/* cli.h - the commands: each is cmd_NAME(argc, argv) in cmd_NAME.c (trace
 * lives beside record in cmd_record.c) and one line of MB_COMMANDS below,
 * which gives main.c its table, its usage text and its list of valid names.
 * Adding a command is its file plus that line: meson.build reads the table
 * for the files to build.  Also what the commands share: reading --NAME VALUE, and
 * the whole command line, which run, exec and serve record in the sidecar.
 * Errors are error.h's one-line printers. */
#ifndef MB_CLI_H
#define MB_CLI_H
#include "error.h"
#include "spec.h"
#include "sysinfo.h"

#include <stdbool.h>
#include <stdint.h>

/* X(name, one line for usage), in the order usage() lists them. */
#define MB_COMMANDS(X)                                                                                     \
    X(run, "measure workloads under allocators, one CSV row per process run")                            \
    X(exec, "measure your own command under allocators, as `run` does a workload")                       \
    X(serve, "measure your own server under allocators while an unpreloaded client loads it")            \
    X(list, "allocators | workloads | events | tunables [ALLOCATOR]")                                    \
    X(tune, "search the allocators' tunables for the best configuration of one workload (scripts/tune.py)") \
    X(compare, "statistics of one run against a baseline, or of two runs (--json: records)")           \
    X(report, "the report of a run: sentences, tables, plots (--markdown, --json, --html; -o DIR)")      \
    X(merge, "join the CSVs of the shards of one plan")                                                   \
    X(record, "a command's every allocation call into a trace (-o FILE -- CMD ARGS...)")                 \
    X(trace, "what a trace of `record` holds: processes, threads, calls, peak bytes")                    \
    X(diagnose, "a running process (-p PID, --all, -- CMD): the CPU it loses to re-faults, the fix, its saving") \
    X(calibrate, "the machine's memcpy bandwidth and the cost of one page fault")                          \
    X(schema, "print the CSV schema (Markdown)")                                                          \
    X(version, "print the version")

#define MB_COMMAND_DECLARE(name, summary) int cmd_##name(int argc, char **argv);
MB_COMMANDS(MB_COMMAND_DECLARE)
#undef MB_COMMAND_DECLARE

/* The calibrate workload run under glibc (cmd_calibrate.c), shared by calibrate and
 * diagnose --calibrate: SIZE and ROUNDS over its defaults (NULL: the default), `samples`
 * runs (1..CALIB_SAMPLES_MAX), each figure's values sorted (the median at n / 2).  0, or 2
 * after a line (bad SIZE), 1 when a run failed (a line on stderr when report). */
#define CALIB_SAMPLES_MAX 5
enum { CALIB_BW, CALIB_FAULT, CALIB_REFAULT, CALIB_REFAULT_SYS, CALIB_NFIG };
typedef struct {
    double v[CALIB_NFIG][CALIB_SAMPLES_MAX]; /* memcpy B/s; ns: a fault, a re-fault whole, its system time */
    int n;
    uint64_t size;
    double load1; /* the 1-minute load average as it began (NAN: unreadable) */
    double steal; /* the share of the CPUs' time the host stole while it ran (NAN: unknown) */
} calib_t;
int calibrate_measure(const char *size, const char *rounds, int samples, double timeout_s, bool report,
                      calib_t *c);
/* The machine's costs for a run's sidecar (sysinfo.h's machine_calib_t): this boot's cached
 * calibration while it is fresh (under 24 h old, the load average within 0.5 of the one it
 * was measured at), else measured now (3 runs of 4 MiB, ~0.5 s) and cached, in
 * $MB_CALIBRATION_CACHE, else $XDG_RUNTIME_DIR/mallocbench, /run/mallocbench (root) or
 * ~/.cache/mallocbench: calibration-BOOT_ID.txt.  Never fails: m->have false and m->why. */
void calibrate_machine(machine_calib_t *m);

/* The value of --NAME VALUE or --NAME=VALUE at argv[*i] (stepping *i past a
 * separate value), or NULL when argv[*i] is not that option. */
const char *cli_take(const char *name, int argc, char **argv, int *i);

/* The whole command line as main() got it (set once there), for the sidecar. */
void cli_set_whole(int argc, char **argv);
void cli_whole(int *argc, char ***argv);

#endif
