/* plan.h - which samples run, in which order: every cell (workload x
 * allocator configuration) once per block, each block's order shuffled
 * from a recorded seed, so drift hits every cell alike; a sample is known
 * by (block, position) whatever the shard, so shards merge and an
 * interrupted run resumes without repeating itself.  Pure functions. */
#ifndef MB_PLAN_H
#define MB_PLAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Position p of block b holds cell order[p]: a permutation of 0..ncells-1
 * that depends only on (seed, block). */
void plan_block_order(uint64_t seed, unsigned block, size_t ncells, size_t *order);

/* Is block b in shard k of n (1-based k)?  Whole blocks, round-robin
 * (block b to shard b mod n + 1): a block's pairs are measured on one
 * machine, whichever shard it lands on. */
bool plan_in_shard(unsigned block, unsigned k, unsigned n);

/* "K/N" with 1 <= K <= N: 0, or -EINVAL. */
int plan_parse_shard(const char *s, unsigned *k, unsigned *n);

/* Distribution-free 95% confidence interval of the median of n sorted
 * values (order statistics, normal approximation to the binomial); false
 * when n < 6, too few for one. */
bool plan_median_ci(const double *sorted, size_t n, double *lo, double *hi);
/* Median of n sorted values. */
double plan_median(const double *sorted, size_t n);
/* The Hodges-Lehmann estimate of the centre of the paired differences d (n of
 * them, any order) and its 95% CI from the exact signed-rank null (a normal
 * approximation above 300 pairs): the estimate and interval compare prints
 * for the same pairs (scripts/mallocbench/stats.py signed_rank_shift, untied
 * data), so a run's stated resolution is the report's.  false below 6 pairs
 * (no 95% CI exists) or without memory. */
bool plan_hl_ci(const double *d, size_t n, double *est, double *lo, double *hi);
/* The same at level 1 - alpha (the sequential plan's looks: seqstop.c): true when the
 * CI exists, else lo and hi NAN (this n can reject nothing at alpha); est NAN when
 * n is 0 (or without memory). */
bool plan_hl_ci_at(const double *d, size_t n, double alpha, double *est, double *lo, double *hi);
/* Largest t with 2 P(W+ <= t) <= alpha (relative tolerance 1e-9) under the exact sign-flip
 * null of n untied ranks (a normal approximation above 300 pairs), as stats.py _critical and
 * sequential.critical: the CI at level 1 - alpha is then [W[t], W[M-1-t]] of the M sorted
 * Walsh averages.  -1 when this n can reject nothing at alpha; -2 without memory. */
long plan_signed_rank_critical(size_t n, double alpha);

/* FNV-1a over text: identifies a run plan (its cells, blocks and seed). */
uint64_t plan_hash(uint64_t h, const char *text);
#define PLAN_HASH_INIT 0xcbf29ce484222325ULL

#endif
