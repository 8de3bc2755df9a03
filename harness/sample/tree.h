/* tree.h - the memory of a command's or server's whole process tree, where
 * the first process's RSS would miss what its children hold (a shell that
 * runs python, a server that forks workers).
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

#include <sys/types.h>

/* The summed Pss of root and its live descendants in *kib and how many
 * processes it read in *nproc, the first maxpids of them in pids (root
 * first; pids may be NULL): 0, -ESRCH when none could be read (root is
 * gone), or -errno. */
int tree_pss_kib(pid_t root, long *kib, unsigned *nproc, pid_t *pids, size_t maxpids);

#endif
