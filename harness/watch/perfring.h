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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PR_CPU_PERIOD_NS 1000000ull /* one cpu-clock sample per ms of CPU time */
#define PR_RING_PAGES 1024          /* 4 MiB of ring per CPU (a power of two) */
#define PR_USER_IPS 4               /* user addresses kept from a cpu-clock sample's chain */

typedef enum {
    PR_FAULT,       /* a[0] the address */
    PR_MAJOR,       /* a[0] the address */
    PR_ENTER,       /* sys; a[0..5] the arguments; a[6] the user ip, a[7] the word at the
                     * user stack's top (a leaf syscall wrapper's return address) */
    PR_EXIT,        /* sys; a[0] the result */
    PR_CPU,         /* at; a[0..3] user addresses, innermost first (0: none) */
    PR_COMM,        /* name; sys 1: the comm of an exec */
    PR_FORK,        /* a[0] parent pid, a[1] parent tid */
    PR_GONE,        /* a thread ended */
    PR_MMAP,        /* a[0] addr, a[1] len, a[2] pgoff, a[3] prot, a[4] flags; name */
} pr_kind_t;

typedef enum { PR_SYS_MADVISE, PR_SYS_MUNMAP, PR_SYS_BRK, PR_SYS_MREMAP, PR_SYS_MMAP, PR_NSYS } pr_sys_t;

/* Where a cpu-clock sample found the CPU. */
typedef enum {
    PR_AT_USER,     /* in user space */
    PR_AT_KERNEL,   /* in the kernel, none of the below */
    PR_AT_FAULT,    /* under the page-fault entry */
    PR_AT_GIVEBACK, /* under one of the give-back calls (sys says which) */
    PR_AT_TLB,      /* a TLB-flush IPI (another CPU changed a shared mm) */
    PR_NAT
} pr_at_t;

typedef struct {
    uint64_t time;      /* CLOCK_MONOTONIC, ns */
    int32_t pid, tid;
    uint8_t kind, sys, at, pad;
    uint32_t cpu;
    uint64_t a[8];
    uint32_t name;      /* COMM, MMAP: pr_name()'s handle; 0 none */
} pr_rec_t;

/* Which processes' records to keep (the rest are dropped as they are read):
 * want(ctx, pid).  A cpu-clock sample of another process is kept only when
 * it is a TLB-flush IPI; another process's give-back calls are only counted. */
typedef bool (*pr_want_fn)(void *ctx, int32_t pid);

typedef struct pr_watch pr_watch_t;

typedef struct {
    uint64_t records, lost, throttled;  /* read; lost (PERF_RECORD_LOST); throttle records */
    uint64_t other_calls[PR_NSYS];      /* give-back calls entered by processes not kept */
    unsigned ncpus;
    bool ksyms;                         /* /proc/kallsyms was readable: cpu samples classified */
} pr_stats_t;

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
