/* disturb.h - how disturbed a sample was, from outside the workload: the
 * time its threads waited on a run queue and their involuntary context
 * switches (/proc/PID/task/TID/schedstat and status), and, machine-wide over
 * the sample, the host's steal time and whether khugepaged collapsed pages
 * or the kernel compacted memory (/proc/stat, /proc/vmstat).  compare
 * relates a cell's spread to these columns and marks disturbed samples. */
#ifndef MB_DISTURB_H
#define MB_DISTURB_H
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DISTURB_TASKS 1024

/* The last reading of each thread seen: a thread that ends keeps its last
 * (in gone_* once the table filled and it was let go for a new one). */
typedef struct {
    struct {
        int tid;
        uint64_t delay_ns, nivcsw;
    } t[DISTURB_TASKS];
    size_t n;
    uint64_t gone_delay_ns, gone_nivcsw;
} disturb_tasks_t;

/* Reads every thread of pid now into d (new threads added, known ones
 * updated): the process started and, for commands and servers, every
 * process of its tree at each reading of the tree (tree.h). */
void disturb_scan(pid_t pid, disturb_tasks_t *d);
/* Sums over the threads of d: run-queue delay (ns) and involuntary switches. */
void disturb_sums(const disturb_tasks_t *d, uint64_t *delay_ns, uint64_t *nivcsw);

/* /proc/stat read once: the aggregate steal, busy (user nice system irq
 * softirq) and total jiffies of all CPUs, and the tasks runnable now
 * (procs_running, -1 unknown); 0, or -1. */
typedef struct {
    unsigned long long steal, busy, total;
    int running;
} disturb_stat_t;
int disturb_stat(disturb_stat_t *st);

/* Machine-wide counters now: steal and busy time (seconds, all CPUs: user +
 * nice + system + irq + softirq), khugepaged's collapses (thp_collapse_alloc),
 * compactions (compact_stall + compact_daemon_wake), the OOM killer's kills
 * since boot (oom_kill), and the huge-page counts: faults that got a huge page
 * (thp_fault_alloc) and that fell back to small ones (thp_fault_fallback), PMD
 * splits (thp_split_pmd: what a MADV_DONTNEED on part of a huge page does) and
 * page splits (thp_split_page: thp_deferred_split_page counts a page queued
 * for a split that thp_split_page counts again when it happens, and
 * thp_underused_split_page is part of thp_split_page, so neither is added);
 * the /proc/vmstat ones from one read; -1 where unknown.  No per-process
 * huge-fault or split counter exists without kprobes. */
typedef struct {
    double steal_s, busy_s;
    long collapses, compactions, oom_kills;
    long thp_faults, thp_fallbacks, pmd_splits, page_splits;
} disturb_machine_t;
void disturb_machine(disturb_machine_t *m);

#endif
