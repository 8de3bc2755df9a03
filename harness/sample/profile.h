/* profile.h - where the faults come from: one extra, unmeasured sample of a
 * cell run under `perf record --call-graph dwarf` (page faults, CPU time,
 * the madvise/munmap/brk tracepoints), folded and drawn as a flame graph by
 * scripts/flamegraph.py.  It never makes a CSV row.  docs/profile.md says
 * what is sampled and how to read the picture. */
#ifndef MB_PROFILE_H
#define MB_PROFILE_H
#include "types.h"

#include <stdbool.h>
#include <stddef.h>

/* Sampling periods, documented in docs/profile.md: one page-faults sample
 * per PROFILE_FAULT_PERIOD faults (tensor_copy size=16M,count=4,steps=10
 * under jemalloc: ~250k faults, ~3,900 samples), one cpu-clock sample per
 * PROFILE_CPU_PERIOD_NS of CPU time, every syscall. */
#define PROFILE_FAULT_PERIOD 64
#define PROFILE_CPU_PERIOD_NS 250000
#define PROFILE_STACK_BYTES 16384 /* user stack copied per sample for DWARF unwinding */
#define PROFILE_BUFFER_MIB 16     /* perf's ring buffer per CPU (-m) ... */
#define PROFILE_BUFFERS_MIB 256   /* ... halved while all CPUs' together exceed this */
#define PROFILE_TIMEOUT_FACTOR 4  /* the profiled run may take this many times --timeout */

/* The one `perf record` command line (run --profile's and diagnose --stacks'):
 *   PERF record -q -N [-d] -o DATA -m SIZE --call-graph dwarf,PROFILE_STACK_BYTES -c 1
 *   -e page-faults/period=FAULT_PERIOD/ [-e cpu-clock/period=PROFILE_CPU_PERIOD_NS/]
 *   [-e syscalls:sys_enter_madvise -e ..._munmap -e ..._brk] (-p PID | -- CMD...)
 * SIZE is PROFILE_BUFFER_MIB per CPU, halved while all CPUs' exceed PROFILE_BUFFERS_MIB. */
typedef struct {
    const char *perf, *data;
    int fault_period;      /* one sample per this many page faults */
    bool cpu;              /* cpu-clock samples too */
    bool tracepoints;      /* every madvise, munmap and brk call */
    bool data_addr;        /* -d: the faulting addresses */
    const char *pid;       /* -p PID, or NULL: */
    char *const *cmd;      /* -- CMD... (NULL-terminated) */
} profile_record_t;
/* The words in *argvp (malloc'd, NULL-terminated; launch_free_words after): 0 or -ENOMEM. */
int profile_record_argv(const profile_record_t *r, char ***argvp);

/* A command to profile: argv (argv[0] a path; NULL-terminated), run with
 * our environment less the allocator variables, plus assign
 * ("LD_PRELOAD=...", the configuration's variables); title heads the SVG;
 * alloc_lib ("" or NULL for none) is the allocator whose frames are green. */
typedef struct {
    char *const *assign;
    size_t nassign;
    char *const *argv;
    const char *title;
    const char *alloc_lib;
    bool thp_disable;      /* recorded with THP off for its tree (huge=never: spawn.h) */
} profile_cmd_t;

/* Runs the cell (o, c, a) once under perf record and writes
 * OUT_PREFIX.folded and OUT_PREFIX.svg (OUT_PREFIX.perf.data and
 * OUT_PREFIX.perf.log are deleted after).  summary gets one line: samples
 * and lost samples per event, top frames, the time it took; or, on
 * failure, the reason (perf missing, not permitted, no samples).
 * Returns 0 or -errno. */
int profile_cell(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, const char *out_prefix,
                 char *summary, size_t len);

#endif
