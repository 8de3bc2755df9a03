/* counters.h - perf_event_open counters on one child process, inherited by
 * its threads and children.  Every counter reports its raw value, time
 * enabled and time running, or the reason it could not be counted: a
 * counter that failed is never a 0.  Library functions return 0 or -errno. */
#ifndef MB_COUNTERS_H
#define MB_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define CNT_REASON_MAX 160
#define CNT_MAX 48

/* The fixed events, counted on every sample, each once:
 *   X(name, source, what, CSV total column, CSV region column, unit)
 * source SW: perf software event `what` (PERF_COUNT_SW_*); TP: tracepoint
 * syscalls:`what`, its id read from tracefs at run time (tracefs is mounted
 * if absent and we are root).  unit ns: nanoseconds, seconds in the CSV;
 * count: a count.  A new one: a line here and its two columns in csv.h. */
#define CNT_FIXED_EVENTS(X) \
    X(task_clock_ns,    SW, PERF_COUNT_SW_TASK_CLOCK,       total_task_clock_s,     region_task_clock_s,     ns) \
    X(context_switches, SW, PERF_COUNT_SW_CONTEXT_SWITCHES, total_context_switches, region_context_switches, count) \
    X(cpu_migrations,   SW, PERF_COUNT_SW_CPU_MIGRATIONS,   total_cpu_migrations,   region_cpu_migrations,   count) \
    X(minor_faults,     SW, PERF_COUNT_SW_PAGE_FAULTS_MIN,  total_minor_faults,     region_minor_faults,     count) \
    X(major_faults,     SW, PERF_COUNT_SW_PAGE_FAULTS_MAJ,  total_major_faults,     region_major_faults,     count) \
    X(madvise,          TP, sys_enter_madvise,              total_madvise_calls,    region_madvise_calls,    count) \
    X(mmap,             TP, sys_enter_mmap,                 total_mmap_calls,       region_mmap_calls,       count) \
    X(munmap,           TP, sys_enter_munmap,               total_munmap_calls,     region_munmap_calls,     count) \
    X(brk,              TP, sys_enter_brk,                  total_brk_calls,        region_brk_calls,        count) \
    X(mremap,           TP, sys_enter_mremap,               total_mremap_calls,     region_mremap_calls,     count) \
    X(mprotect,         TP, sys_enter_mprotect,             total_mprotect_calls,   region_mprotect_calls,   count)

/* CNT_UNIT_IS_NS(unit): the count is nanoseconds. */
#define CNT_UNIT_IS_NS(unit) CNT_UNIT_NS_##unit
#define CNT_UNIT_NS_ns 1
#define CNT_UNIT_NS_count 0

#define CNT_EV_INDEX(name, src, what, total, region, unit) CNT_EV_##name,
typedef enum { CNT_FIXED_EVENTS(CNT_EV_INDEX) CNT_NFIXED } cnt_fixed_t;
#undef CNT_EV_INDEX

typedef struct {
    const char *name;            /* CSV-safe name: "minor_faults", "madvise", or the user's event */
    bool supported;              /* false: reason says why (e.g. "not supported: no PMU (ENOENT)") */
    char reason[CNT_REASON_MAX];
    uint64_t value;              /* raw count (task_clock_ns: nanoseconds) */
    uint64_t enabled;            /* ns the counter was enabled */
    uint64_t running;            /* ns it was actually on the PMU */
} cnt_value_t;

typedef struct cnt_set cnt_set_t;

/* A set holds the fixed events, first and in their order (index
 * CNT_EV_<name>), then the extra ones: user event names, e.g. "cycles",
 * "dTLB-load-misses" (through libpfm4 when built with it) or
 * "syscalls:sys_enter_mremap" (tracepoint).
 * A name that neither libpfm4 nor tracefs knows is refused here, before any
 * run, with a one-line reason in err.  A name that encodes but the machine
 * cannot count (no PMU) is accepted and reported unsupported at open. */
int cnt_set_new(cnt_set_t **out, const char *const *extra, size_t nextra,
                char *err, size_t errlen);
void cnt_set_free(cnt_set_t *s);

size_t cnt_count(const cnt_set_t *s);
const char *cnt_name(const cnt_set_t *s, size_t i);

/* Open every counter on pid (stopped before exec): disabled, enable_on_exec,
 * inherit.  Per-counter failures are recorded as unsupported with the
 * reason; returns -errno only when nothing at all can be opened. */
int cnt_open(cnt_set_t *s, pid_t pid);
/* Read a snapshot of all counters into out[cnt_count(s)]. */
int cnt_read(const cnt_set_t *s, cnt_value_t *out);
/* Close the descriptors; the set can be opened again for the next child. */
void cnt_close(cnt_set_t *s);

/* One counter's read(2) as cnt_open's read_format lays it out: { value,
 * time enabled, time running }, into v (supported).  A pure function, so
 * the order of the fields is tested without a PMU that multiplexes. */
void cnt_from_read(const uint64_t buf[3], cnt_value_t *v);
/* value * enabled / running, NAN when unsupported or never running. */
double cnt_scaled(const cnt_value_t *v);
/* Difference of two snapshots of one counter (after - before), scaled by
 * the running fraction of the interval; NAN when unsupported. */
double cnt_delta(const cnt_value_t *before, const cnt_value_t *after);

/* The id of tracepoint cat:name in tracefs (tracefs.h): 0, or -errno (-EINVAL: a name that
 * is not a tracepoint's). */
int cnt_tracepoint_id(const char *cat, const char *name, uint64_t *id);

/* Print the events this machine offers and whether each can be counted
 * (for `mallocbench list events`). */
int cnt_list_events(FILE *out);

/* One line saying how counting is done here (privilege, exclude_kernel,
 * tracefs path, libpfm4 version, PMU present) for the JSON sidecar. */
void cnt_describe(char *buf, size_t len);

#endif
