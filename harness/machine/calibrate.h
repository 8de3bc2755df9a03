/* calibrate.h - the machine's own costs: the calibrate workload run under glibc (a copy's
 * bandwidth, one minor fault, one re-fault whole), shared by `calibrate` and `diagnose
 * --calibrate`, and cached per boot for every run's sidecar (sysinfo.h's machine_calib_t). */
#ifndef MB_CALIBRATE_H
#define MB_CALIBRATE_H
#include "sysinfo.h"

#include <stdbool.h>
#include <stdint.h>

/* The calibrate workload run under glibc: SIZE and ROUNDS over its defaults (NULL: the
 * default), `samples` runs (1..CALIB_SAMPLES_MAX), each figure's values sorted (the median at
 * n / 2).  0, or 2 after a line (bad SIZE), 1 when a run failed (a line on stderr when report). */
#define CALIB_SAMPLES_MAX 5
enum { CALIB_BW, CALIB_FAULT, CALIB_REFAULT, CALIB_REFAULT_SYS, CALIB_NFIG };
typedef struct {
    double v[CALIB_NFIG][CALIB_SAMPLES_MAX]; /* memcpy B/s; ns: a fault, a re-fault whole, its system time */
    int n;
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

#endif
