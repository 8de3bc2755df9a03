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

/* /proc/stat read once: the aggregate steal and total jiffies of all CPUs,
 * and the tasks runnable now (procs_running, -1 unknown); 0, or -1. */
typedef struct {
    unsigned long long steal, total;
    int running;
} disturb_stat_t;
int disturb_stat(disturb_stat_t *st);

/* Machine-wide counters now: steal (seconds, all CPUs), khugepaged's
 * collapses (thp_collapse_alloc), compactions (compact_stall +
 * compact_daemon_wake), the OOM killer's kills since boot (oom_kill), the
 * last three from one read of /proc/vmstat; -1 where unknown. */
typedef struct {
    double steal_s;
    long collapses, compactions, oom_kills;
} disturb_machine_t;
void disturb_machine(disturb_machine_t *m);

#endif
