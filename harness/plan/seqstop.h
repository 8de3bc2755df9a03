/* seqstop.h - the rule by which a sequential plan stops a comparison (a
 * configuration against its workload's first one, paired by block, on the primary
 * figure): looks at fixed block counts, each with its share of alpha 0.05, the
 * exact Hodges-Lehmann / signed-rank CI of the per-block log ratios at that
 * look's level, settled when the CI lies beyond or inside the +-floor band or
 * reaches the resolution.  The same rule as scripts/mallocbench/sequential.py
 * (the contract: the views, tune's race and the simulation read a CSV with it),
 * and the primary figure of a row as scripts/mallocbench/mbdata.py defines it.
 * Pure functions (docs/precision.md, "Stopping when the verdict is settled"). */
#ifndef MB_SEQSTOP_H
#define MB_SEQSTOP_H
#include <stdbool.h>
#include <stddef.h>

#define SEQ_ALPHA 0.05     /* spent over all the looks: every look's CI covers together at >= 95% */
#define SEQ_FLOOR 0.01     /* the band of no change: compare's --floor default */
#define SEQ_MAX_LOOKS 4    /* three interim looks, then the cap */

typedef struct {
    unsigned blocks;       /* the look is taken once blocks 0 .. blocks-1 are done */
    double alpha;          /* its share of SEQ_ALPHA: its CI's level is 1 - alpha */
} seq_look_t;

/* Why a comparison stopped; SEQ_OPEN while it runs. */
typedef enum {
    SEQ_OPEN, SEQ_IMPROVED, SEQ_REGRESSED, SEQ_NEGLIGIBLE, SEQ_RESOLUTION, /* settled */
    SEQ_CAP, SEQ_BUDGET, SEQ_INTERRUPTED, SEQ_NO_RATIO                     /* forced */
} seq_why_t;

/* One comparison's stop, as the sidecar records it: the look (1-based; for a
 * forced stop between looks, the number of looks taken + 1), the blocks its CI
 * used, its pairs n, its alpha, and the ratio's estimate and CI (NAN: none). */
typedef struct {
    seq_why_t why;
    unsigned look, blocks;
    size_t n;
    double alpha, est, lo, hi;
} seq_stop_t;

/* The looks of a plan capped at cap blocks (sequential.looks): the interim
 * looks (8, .008), (12, .004), (18, .008) below the cap, then the cap spending
 * the alpha left; a cap <= 8: one look with all of it.  Returns how many. */
size_t seq_looks(unsigned cap, seq_look_t out[SEQ_MAX_LOOKS]);
/* The alpha a look forced at `blocks` (budget, interrupt) spends: SEQ_ALPHA less
 * the looks below it (sequential.alpha_left); *taken: how many those are. */
double seq_alpha_left(const seq_look_t *looks, size_t nlooks, unsigned blocks, unsigned *taken);

/* One look (sequential.settle): why it settled, or SEQ_OPEN when the verdict
 * could still change; *e, *l, *h the ratio and its CI (exponentiated; NAN: none).
 * lower_better: the figure's better direction is down (CPU, a latency). */
seq_why_t seq_settle(const double *d, size_t n, double alpha, double floor, double resolution, bool lower_better,
                     double *e, double *l, double *h);
/* "improved", ..., "no ratio" (the sidecar's words); "open" for SEQ_OPEN. */
const char *seq_why_name(seq_why_t why);
/* stats.verdict's word for a ratio's CI [l, h]: improved, regressed, improved?,
 * regressed?, negligible, within noise; "too few" when there is none. */
const char *seq_words(double l, double h, double floor, bool lower_better);

/* A row's field by column name ("" or NULL when empty or absent). */
typedef const char *seq_get_fn(const void *row, const char *column);
/* The primary figure of one ok row: its throughput, or (cpu) the CPU time (user
 * + sys; the whole process's for a workload whose region is idle) per unit of
 * its work, as mbdata.cpu_seconds(r) / mbdata.work(r)[0]; NAN when the row
 * lacks what it needs. */
double seq_figure_value(bool cpu, bool idle_region, seq_get_fn *get, const void *row);

#endif
