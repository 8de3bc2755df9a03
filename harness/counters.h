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

typedef struct {
    const char *name;            /* CSV-safe name: "minor_faults", "madvise", or the user's event */
    bool supported;              /* false: reason says why (e.g. "not supported: no PMU (ENOENT)") */
    char reason[CNT_REASON_MAX];
    uint64_t value;              /* raw count (task_clock_ns: nanoseconds) */
    uint64_t enabled;            /* ns the counter was enabled */
    uint64_t running;            /* ns it was actually on the PMU */
} cnt_value_t;

typedef struct cnt_set cnt_set_t;

/* The fixed events, always in this order, then the extra ones:
 *   task_clock_ns, context_switches, cpu_migrations, minor_faults,
 *   major_faults, madvise, mmap, munmap, brk, mremap, mprotect
 * (the last six are syscalls:sys_enter_* tracepoints, ids read from tracefs
 * at run time; tracefs is mounted if absent and we are root).
 * extra: user event names, e.g. "cycles", "dTLB-load-misses" (through
 * libpfm4 when built with it) or "syscalls:sys_enter_mremap" (tracepoint).
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

/* value * enabled / running, NAN when unsupported or never running. */
double cnt_scaled(const cnt_value_t *v);
/* Difference of two snapshots of one counter (after - before), scaled by
 * the running fraction of the interval; NAN when unsupported. */
double cnt_delta(const cnt_value_t *before, const cnt_value_t *after);

/* Print the events this machine offers and whether each can be counted
 * (for `mallocbench list events`). */
int cnt_list_events(FILE *out);

/* One line saying how counting is done here (privilege, exclude_kernel,
 * tracefs path, libpfm4 version, PMU present) for the JSON sidecar. */
void cnt_describe(char *buf, size_t len);

#endif
