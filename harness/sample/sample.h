/* sample.h - one sample: one fresh child process running the worker under one
 * allocator configuration, counted from exec to exit, with the measured
 * region's counters read at the worker's region markers, RSS sampled from
 * /proc, and the probe's report from inside the child.  A crash, a kill or
 * a time-out is a status in the sample, never an error of the harness. */
#ifndef MB_SAMPLE_H
#define MB_SAMPLE_H
#include "types.h"

#include <stdio.h>

/* Run one sample and observe it: how it ended, its counters, its output's
 * head and tail, the probe's keys, its RSS readings.  It judges nothing:
 * judge_sample (judge.h) gives the status.  cnt may be NULL (no counters:
 * the pre-flight check).  out starts zeroed (calloc) and is released with
 * sample_free.  Returns 0, or -errno when the harness itself could not
 * start the child (out of fds, fork failed). */
int sample_run(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, cnt_set_t *cnt,
               run_sample_t *out);
/* Free what a sample holds (its RSS readings) and the sample itself. */
void sample_free(run_sample_t *s);

/* What the dynamic loader lists as the tunables in effect under c's
 * environment (`ld.so --list-tunables`), into out: 0, or -errno with one
 * line in err (no loader at MB_LDSO, it failed).  Only for a family whose
 * settings the loader checks (ALLOC_CHECK_LOADER). */
int sample_loader_listing(const run_config_t *c, char *out, size_t len, char *err, size_t errlen);

/* Ask the running sample to stop (from a signal handler): the child is
 * killed and the sample comes back with status error "interrupted". */
void sample_interrupt(void);
bool sample_interrupted(void);

#endif
