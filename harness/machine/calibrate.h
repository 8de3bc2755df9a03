/* calibrate.h - the machine's own costs: the calibrate workload run under glibc (a copy's
 * bandwidth, one minor fault, one re-fault whole, one 2 MiB huge-page fault), shared by `calibrate` and `diagnose
 * --calibrate`, and cached per boot for every run's sidecar (sysinfo.h's machine_calib_t). */
#ifndef MB_CALIBRATE_H
#define MB_CALIBRATE_H
#include "sysinfo.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The calibrate workload run under glibc: SIZE and ROUNDS over its defaults (NULL: the
 * default), `samples` runs (1..CALIB_SAMPLES_MAX), each figure's values sorted (the median at
 * n / 2).  0, or 2 after a line (bad SIZE), 1 when a run failed (a line on stderr when report). */
#define CALIB_SAMPLES_MAX 5
enum { CALIB_BW, CALIB_FAULT, CALIB_REFAULT, CALIB_REFAULT_SYS, CALIB_HUGE, CALIB_NFIG };
typedef struct {
    /* memcpy B/s; ns: a fault, a re-fault whole, its system time, a huge fault (NaN in a sample
     * where no fault was shown huge; the NaNs sort last: the median is v[CALIB_HUGE][huge_n / 2]) */
    double v[CALIB_NFIG][CALIB_SAMPLES_MAX];
    int n;
    int huge_n;           /* samples with a huge fault's cost */
    double huge_faults;   /* over the samples: faults timed as huge (the range's AnonHugePages said so) */
    double huge_fallbacks; /* faults of the advised range given no huge page */
    double huge_unknown;  /* faults neither smaps nor vmstat could tell */
    bool huge_off;        /* THP refused for the calibrating process (prctl, or madvise EINVAL) */
    char thp_enabled[16], thp_defrag[16]; /* the kernel's THP words as it ran ("" when absent) */
    uint64_t size;
    double load1; /* the 1-minute load average as it began (NAN: unreadable) */
    double steal; /* the share of the CPUs' time the host stole while it ran (NAN: unknown) */
} calib_t;
int calibrate_measure(const char *size, const char *rounds, int samples, double timeout_s, bool report,
                      calib_t *c);
/* The machine's costs for a run's sidecar: this boot's cached calibration while it is fresh
 * (under 24 h old, the load average within 0.5 of the one it was measured at), else measured
 * now (3 runs of 4 MiB, ~0.5 s) and cached, in $MB_CALIBRATION_CACHE, else
 * $XDG_RUNTIME_DIR/mallocbench, /run/mallocbench (root) or ~/.cache/mallocbench:
 * calibration-BOOT_ID.txt.  Never fails: m->have false and m->why. */
void calibrate_machine(machine_calib_t *m);
/* Why a calibration has no huge fault's cost, in one line (into why; "" when it has one):
 * enabled/defrag the bracketed THP words ("" when /sys/kernel/mm/transparent_hugepage is
 * absent), the counts as calib_t's.  Pure: the cache's figures give the same words. */
void calibrate_huge_why(const char *enabled, const char *defrag, double huge_faults, double fallbacks, bool off,
                        double unknown, char *why, size_t len);

#endif
