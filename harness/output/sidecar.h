/* sidecar.h - FILE.meta.json beside a run's CSV: schema version, run id,
 * start time, program version and commit, the command, the primary figure
 * ("figure"), how counters were read, the machine, every configuration (library, version, environment)
 * and how each workload's limit was measured; last, "workloads": every
 * visible workload of the registry in table order (the plot order), each
 * {"name", "metric", "lower_is_better", "traits"} (workload.h).  Written
 * to a temporary name and renamed; a resumed run keeps the first run's
 * sidecar inside its own ("previous").  A sequential plan adds "sequential"
 * last, rewritten as its comparisons stop. */
#ifndef MB_SIDECAR_H
#define MB_SIDECAR_H
#include "types.h"
#include "workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The machine as the run found it, read by the machine stage (harness/machine/), which
 * output/ does not include: the sidecar writes what it is given. */
typedef struct {
    const char *commit;   /* the source tree's git commit, "" (written null) outside git */
    bool quiet_checked;   /* "quiet": {"quiet", "why"} is written (the reports say a busy
                           * machine in their first lines) */
    bool quiet;
    const char *quiet_why;
    const char *machine;  /* the "machine" object's members, JSON text (sysinfo_machine_json) */
    const char *figure;   /* --figure: the primary figure, "throughput" or "cpu" (top-level "figure") */
} sidecar_machine_t;

/* limits: NULL when not measured (--no-limit).  0 or -errno. */
int sidecar_write(const char *path, bool keep_previous, const char *run_id, int argc, char **argv,
                  const run_config_t *cfg, size_t ncfg, char versions[][128],
                  const run_opts_t *o, const wl_args_t *wl, const double *limits, size_t nw,
                  const sidecar_machine_t *m);

/* A sequential plan's record (top-level "sequential"): the schedule planned and
 * each comparison's stop, as scripts/mallocbench/sequential.py reads it. */
typedef struct {
    unsigned blocks;
    double alpha;
} sidecar_look_t;
typedef struct {
    const char *workload, *params, *config, *baseline; /* params: the rows' workload_params */
    const char *why;                                   /* improved ... interrupted, "no ratio" */
    unsigned look, blocks;
    size_t n;
    double alpha, estimate, lo, hi;                    /* NAN: written null */
} sidecar_stop_t;
typedef struct {
    const char *figure;
    double floor, resolution, budget_s;
    unsigned cap;
    const sidecar_look_t *looks;
    size_t nlooks;
    const sidecar_stop_t *stops;
    size_t nstops;
} sidecar_seq_t;

/* The sidecar at path, as sidecar_write left it (read once into *base, which
 * the caller frees), with "sequential": s as its last member: written to a
 * temporary name and renamed, each time the stops change.  0 or -errno. */
int sidecar_sequential(const char *path, char **base, const sidecar_seq_t *s);

/* The members (no braces) "name", "metric" (the descriptor's own, even
 * where parameters may choose another), "lower_is_better" and "traits" (a
 * list) of w: an entry of the sidecar's "workloads", the start of one of
 * `list workloads --json`. */
void sidecar_workload_facts(FILE *f, const wl_t *w);

#endif
