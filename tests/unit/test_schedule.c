/* test_schedule.c - harness/plan/schedule.c's convergence figures on cells filled by
 * hand: under --resolution a configuration's samples are paired with its
 * workload's first configuration block by block (a block missing on one side
 * leaves its partner out, never shifts the later pairs) and their Hodges-Lehmann
 * CI is the resolution (the one compare prints); below 6 pairs the
 * half-width is infinite; the first configuration itself is 0; --adaptive
 * takes the cell's own samples. */
#include "../check.h"
#include "plan.h"
#include "schedule.h"

#include <math.h>

#define BLOCKS 8

static run_ctx_t c;  /* large: static */
static double tput[2 * BLOCKS];
static unsigned tblock[2 * BLOCKS];
static size_t ntput[2];

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The relative half-width of the paired Hodges-Lehmann CI of log-ratios d (n
 * of them): the resolution compare states (plan_hl_ci), or INFINITY. */
static double halfwidth_of(double *d, size_t n)
{
    double est, lo, hi;
    qsort(d, n, sizeof *d, cmp); /* order does not matter to it: sorted to show that */
    if (n < 6 || !plan_hl_ci(d, n, &est, &lo, &hi))
        return INFINITY;
    return (exp(hi) - exp(lo)) / 2 / exp(est);
}

/* Cell 0 (the baseline) lacks block `missing`; cell 1 has every block.  The
 * other configuration is 1 + b/50 times the baseline in block b, and the
 * baseline itself varies by block, so any pairing but by block gives other ratios. */
static void fill(unsigned missing)
{
    ntput[0] = ntput[1] = 0;
    for (unsigned b = 0; b < BLOCKS; b++) {
        double base = 100.0 * (1 + (b % 3));
        if (b != missing) {
            tput[ntput[0]] = base;
            tblock[ntput[0]++] = b;
        }
        tput[BLOCKS + ntput[1]] = base * (1 + b / 50.0);
        tblock[BLOCKS + ntput[1]++] = b;
    }
}

int main(void)
{
    c.r.ncfg = 2;
    c.r.nw = 1;
    c.r.ncells = 2;
    c.blocks = BLOCKS;
    c.tput = tput;
    c.tblock = tblock;
    c.ntput = ntput;
    c.sp.resolution = 0.01;

    /* every block on both sides */
    fill(BLOCKS);
    double d[BLOCKS];
    size_t n = 0;
    for (unsigned b = 0; b < BLOCKS; b++)
        d[n++] = log(1 + b / 50.0);
    double want = halfwidth_of(d, n);
    CHECK(isfinite(want));
    CHECK(fabs(schedule_cell_halfwidth(&c, 1) - want) < 1e-12);
    CHECK(schedule_cell_halfwidth(&c, 0) == 0);

    /* block 2 missing from the baseline: 7 pairs, by block */
    fill(2);
    n = 0;
    for (unsigned b = 0; b < BLOCKS; b++)
        if (b != 2)
            d[n++] = log(1 + b / 50.0);
    want = halfwidth_of(d, n);
    double got = schedule_cell_halfwidth(&c, 1);
    if (fabs(got - want) >= 1e-12)
        fprintf(stderr, "paired by block: half-width %.6g, expected %.6g\n", got, want);
    CHECK(fabs(got - want) < 1e-12);

    /* fewer than 6 pairs: infinite */
    ntput[0] = 5;
    CHECK(isinf(schedule_cell_halfwidth(&c, 1)));

    /* --adaptive (no --resolution): the cell's own samples */
    c.sp.resolution = 0;
    c.sp.adaptive = 0.05;
    fill(BLOCKS);
    CHECK(fabs(schedule_cell_halfwidth(&c, 1) - schedule_cell_ci(&tput[BLOCKS], BLOCKS)) < 1e-12);
    CHECK_DONE();
}
