/* tree.h - the memory of a sample's whole process tree, where the first
 * process's RSS would miss what its children hold (a shell that runs python,
 * a server that forks workers), how much of it is in transparent huge pages,
 * and whether each process has them switched off.
 *
 * One reading lists every process (/proc/PID/stat), takes the tree under the
 * process started (a child whose parent died and was re-parented is no longer
 * in it), and sums Pss from /proc/PID/smaps_rollup: pages shared between the
 * tree's processes count once in all, so the sum is the tree's memory, not
 * its RSS counted again per process.  A peak shorter than the interval
 * between readings is missed.  Reading smaps_rollup takes each process's
 * mmap lock for a moment (docs/output.md gives what that costs).  No cgroup
 * is used: cgroups belong to the machine. */
#ifndef MB_TREE_H
#define MB_TREE_H

#include <stdbool.h>
#include <sys/types.h>

/* One reading of the tree: its summed Pss, Anonymous and AnonHugePages
 * (KiB, smaps_rollup), the processes read, and of them how many had
 * transparent huge pages off (THP_enabled: 0 in /proc/PID/status: prctl
 * PR_SET_THP_DISABLE, inherited across fork and execve) and the first one
 * found with them on (0: none). */
typedef struct {
    long pss_kib, anon_kib, anon_huge_kib;
    unsigned nproc, thp_read, thp_off;
    pid_t thp_on_pid;
} tree_reading_t;

/* The kernel's mode beside each process's: the bracketed word of
 * /sys/kernel/mm/transparent_hugepage/NAME ("enabled", "defrag"), e.g.
 * "madvise"; false and "" when the file is absent (a kernel without THP). */
bool tree_thp_word(const char *name, char *buf, size_t len);

/* Reads root and its live descendants (alone: root only, a built-in
 * workload, which starts no process: no listing of /proc) into *r, the
 * first maxpids of them in pids (root first; pids may be NULL): 0, -ESRCH
 * when none could be read (root is gone), or -errno. */
int tree_read(pid_t root, bool alone, tree_reading_t *r, pid_t *pids, size_t maxpids);

#endif
