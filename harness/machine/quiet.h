/* quiet.h - is the machine quiet enough to measure on?  Read before a run
 * starts: the 1-minute load, the other tasks runnable now (the least of a
 * few readings of /proc/stat's procs_running over an eighth of a second,
 * less the harness), the host's steal time over that window, and the CPU
 * frequency governors where the kernel exposes them.  `run` warns with the
 * figures and refuses under --require-quiet. */
#ifndef MB_QUIET_H
#define MB_QUIET_H
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    double load1;               /* /proc/loadavg; < 0 unknown */
    long ncpu;                  /* online CPUs */
    int others_runnable;        /* runnable tasks besides the harness, the least seen; < 0 unknown */
    double steal_pct;           /* share of CPU time the host took over the window; < 0 unknown */
    char governor[64];          /* "performance", another, "mixed", or "" (not exposed: a VM) */
    bool quiet;
    char why[512];              /* what is not quiet, with the figures; "" when quiet */
} quiet_t;

/* Looks (about 250 ms) and fills q. */
void quiet_check(quiet_t *q);

#endif
