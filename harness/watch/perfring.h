/* perfring.h - every CPU watched at once, for `mallocbench diagnose`: per-CPU
 * system-wide perf events (pid -1, one set per CPU, so new threads and
 * processes are followed into the same buffers), read from one ring per CPU
 * and handed on in time order.  Only perf_event_open descriptors: nothing
 * is written to tracefs (it is only read, for tracepoint ids), no BPF, no
 * cgroups, so closing them -- or dying -- leaves nothing behind.
 *
 * The events on each CPU: minor and major page faults (period 1, the
 * faulting address), the enter and exit of madvise, munmap, brk, mremap and
 * mmap (their arguments and result), and cpu-clock samples (every
 * PR_CPU_PERIOD_NS of CPU time) with the kernel call chain, classified
 * here against /proc/kallsyms; the fault event also carries the task, comm
 * and mmap records that follow fork, exec, exit and the mappings. */
#ifndef MB_PERFRING_H
#define MB_PERFRING_H
#include "perfparse.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PR_CPU_PERIOD_NS 1000000ull /* one cpu-clock sample per ms of CPU time */
#define PR_RING_PAGES 1024          /* 4 MiB of ring per CPU (a power of two) */

/* The records (pr_rec_t), the processes kept (pr_want_fn), the counts (pr_stats_t): perfparse.h. */
typedef struct pr_watch pr_watch_t;

/* Opens the events on every online CPU (disabled) and maps their rings: 0,
 * or -errno with one line in err (EACCES: not root; ENOENT: no tracefs).
 * fault_period: one record per this many faults of a CPU (1: every fault;
 * more: --light, the re-fault figures become estimates). */
int pr_open(pr_watch_t **out, unsigned fault_period, pr_want_fn want, void *ctx, char *err, size_t errlen);
/* Starts counting on every CPU; pr_disable stops it (the window's end). */
void pr_enable(pr_watch_t *w);
void pr_disable(pr_watch_t *w);
/* Reads every ring, then hands the records stamped before `upto`, in time
 * order, to fn (UINT64_MAX: all of them); the rest wait for the next call.
 * 0, or -ENOMEM when a record could not be kept (then or before). */
int pr_poll(pr_watch_t *w, uint64_t upto, void (*fn)(void *ctx, const pr_rec_t *r), void *ctx);
/* A name (comm, mapped file) by its handle; "" for 0. */
const char *pr_name(const pr_watch_t *w, uint32_t name);
void pr_stats(const pr_watch_t *w, pr_stats_t *st);
/* Closes every descriptor and unmaps every ring. */
void pr_close(pr_watch_t *w);

/* The CLOCK_MONOTONIC time the records are stamped with, in ns. */
uint64_t pr_now(void);

#endif
