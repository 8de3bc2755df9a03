/* schedule.h - the state of one `run` invocation, and running its plan:
 * work scales (read back by --resume, calibrated by --min-time), warm-up,
 * then the blocks, each in its shuffled order, one row per sample written
 * whole, until the plan is done, has converged (--adaptive), has every
 * comparison stopped (a sequential plan, seqstop.h), is out of budget or is
 * interrupted.  cmd_run.c builds the state and reports on it;
 * schedule.c runs the samples. */
#ifndef MB_SCHEDULE_H
#define MB_SCHEDULE_H
#include "counters.h"
#include "csv.h"
#include "options.h"
#include "output.h"
#include "remeasure.h"
#include "resolve.h"
#include "rows.h"
#include "seqstop.h"
#include "types.h"
#include "spec.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct run_ctx run_ctx_t;

/* Called after each sample is written: its block b, the workload w and the
 * configuration k of its cell. */
typedef void run_progress_fn(const run_ctx_t *c, unsigned b, size_t w, size_t k);

/* What changes while the plan runs, per configuration and workload. */
typedef struct {
    char versions[SPEC_MAX_CONFIGS][128];   /* each configuration's, from its proof */
    double limits[SPEC_MAX_WORKLOADS];      /* each workload's, measured in the current block */
} run_state_t;

/* Everything one invocation holds; freed in one place (cmd_run.c).  r is the
 * plan, read-only after resolve_spec; st and the buffers below change. */
struct run_ctx {
    run_spec_t sp;
    run_cli_t cli;
    resolved_t r;
    run_state_t st;
    char worker[PATH_MAX], probe[PATH_MAX];
    unsigned blocks;
    out_t out;
    row_ctx_t x;
    csv_table_t prev;              /* --resume: the rows the output already has (read once) */
    char run_id[64], shard_txt[32], host[256];
    cnt_set_t *cnt;
    size_t *order, *ntput, ndone;
    bool *done, *converged;
    bool *stopped;                 /* per cell: its warm-up and a sample failed the same way */
    int *warm_failed;              /* per cell: the warm-up's status + 1 when it failed, else 0 */
    size_t *cell_run, *cell_ok;    /* per cell: samples this invocation ran, and those ok */
    size_t *cell_prev, *cell_prev_ok; /* --resume: the file's rows of each cell, and those ok */
    double *tput;
    unsigned *tblock;              /* the block of each tput value: pairs cells block by block */
    /* a sequential plan (schedule_sequential): its looks, each comparison's stop (per cell;
     * a workload's first configuration has none), the blocks complete; stops_changed (cmd_run.c)
     * records them in the sidecar whenever one is added */
    seq_look_t looks[SEQ_MAX_LOOKS];
    size_t nlooks;
    seq_stop_t *stop;
    bool *lower;                   /* per workload: its primary figure is better lower */
    unsigned seq_complete;
    void (*stops_changed)(run_ctx_t *c);
    char *seq_base;                /* the sidecar as first written (sidecar_sequential) */
    bool seq_warned;
    wl_args_t *cell_args;          /* per cell: the workload as run, --min-time scaling applied */
    uint64_t *cell_scale;          /* its work_scale; 0: not calibrated yet */
    csv_row_t *row;
    run_sample_t *s;
    remeasure_t rm;                /* blocks measured again whole (remeasure.h): each one's attempt */
    /* progress */
    size_t planned, nrun, nok, nbad;
    double t_start, spent;
    bool tty;                      /* progress on a terminal: one line, rewritten */
};

/* --resolution: cell i's comparison with its workload's first configuration
 * can reach no ratio (its baseline stopped or never ok after the fewest blocks,
 * or a figure <= 0: a difference), so it adds no blocks. */
bool schedule_no_ratio(const run_ctx_t *c, size_t i, unsigned blocks_done);
/* Run the plan: 0, or 1 when the run must stop (a child could not be
 * started, the output takes no more rows); *nblocks: the blocks begun. */
int schedule_plan(run_ctx_t *c, run_progress_fn *progress, unsigned *nblocks);
/* Relative half-width of the 95% CI of a cell's median throughput (v: its
 * n samples); INFINITY when it has too few. */
double schedule_cell_ci(const double *v, size_t n);
/* --resolution: the relative half-width of the 95% CI of the median per-block
 * ratio of cell i to its workload's first configuration (paired by block);
 * INFINITY below 6 pairs.  --adaptive: schedule_cell_ci of the cell.  The
 * first configuration itself: 0 (it converges with the others). */
double schedule_cell_halfwidth(const run_ctx_t *c, size_t i);
/* The target half-width (--resolution or --adaptive), 0 for a fixed plan. */
double schedule_target(const run_spec_t *sp);
/* Is the plan sequential (--resolution or the default plan, with two configurations or
 * more): its comparisons stop by seqstop.h's looks. */
bool schedule_sequential(const run_ctx_t *c);
/* The primary figure (--figure) of the row just filled: NAN when it has none. */
double schedule_primary(const run_ctx_t *c, const csv_row_t *row);
/* The same of row i of a table read back (--resume). */
double schedule_primary_prev(const run_ctx_t *c, const csv_table_t *t, size_t i);
/* A sequential run interrupted: its open comparisons stop ("interrupted") at the
 * blocks complete, spending the alpha left. */
void schedule_seq_interrupted(run_ctx_t *c);

/* Before any measured run, for each configuration: its library can be
 * read, the loader takes its settings (ALLOC_CHECK_LOADER), and the worker
 * runs once under it (a no-op workload, no counters), judged ok and proven
 * (judge_preflight).  version gets the allocator's version.  0, or -errno
 * with one line in err. */
int schedule_preflight(const run_opts_t *o, const run_config_t *c, char *version, size_t vlen, char *err,
                       size_t errlen);

#endif
