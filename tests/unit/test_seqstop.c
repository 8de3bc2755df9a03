/* test_seqstop.c - harness/plan/seqstop.c against scripts/mallocbench/sequential.py's
 * figures: the look schedules of caps 30, 10 and 6, the exact signed-rank critical
 * values at a look's alpha, a look that settles (8 ratios all beyond the floor) and
 * one the Python rule leaves open, the words of a CI, and the CPU figure of a row. */
#include "../check.h"
#include "plan.h"
#include "seqstop.h"

#include <math.h>

static void check_looks(void)
{
    seq_look_t l[SEQ_MAX_LOOKS];
    CHECK_INT(seq_looks(30, l), 4);
    CHECK(l[0].blocks == 8 && l[0].alpha == 0.008 && l[1].blocks == 12 && l[1].alpha == 0.004);
    CHECK(l[2].blocks == 18 && l[2].alpha == 0.008 && l[3].blocks == 30);
    CHECK(l[3].alpha == 0.05 - 0.02); /* sequential: 0.030000000000000002, the same bits */
    CHECK_INT(seq_looks(10, l), 2);
    CHECK(l[0].blocks == 8 && l[1].blocks == 10 && fabs(l[1].alpha - 0.042) < 1e-15);
    CHECK_INT(seq_looks(6, l), 1);
    CHECK(l[0].blocks == 6 && l[0].alpha == 0.05);
    unsigned taken;
    seq_looks(30, l);
    CHECK(fabs(seq_alpha_left(l, 4, 15, &taken) - 0.038) < 1e-15 && taken == 2);
    CHECK(seq_alpha_left(l, 4, 8, &taken) == 0.05 && taken == 0);
}

static void check_critical(void)
{
    CHECK_INT(plan_signed_rank_critical(8, 0.008), 0);
    CHECK_INT(plan_signed_rank_critical(8, 0.042), 3);
    CHECK_INT(plan_signed_rank_critical(30, 0.03), 127);
    CHECK_INT(plan_signed_rank_critical(12, 0.004), 4);
    CHECK_INT(plan_signed_rank_critical(6, 0.05), 0);
    CHECK_INT(plan_signed_rank_critical(5, 0.05), -1);
    CHECK_INT(plan_signed_rank_critical(310, 0.03), 20674); /* the normal approximation */
}

static void check_settle(void)
{
    /* sequential.settle of these at 0.008: improved, 1.5619181034756746 [1.49, 1.7] */
    static const double up[] = {1.5, 1.6, 1.55, 1.7, 1.52, 1.58, 1.61, 1.49};
    /* and of these: open, 1.022198762488289 [0.98, 1.06] */
    static const double near[] = {1.02, 1.05, 0.99, 1.03, 1.04, 0.98, 1.06, 1.01};
    double d[8], e, l, h;
    for (int i = 0; i < 8; i++)
        d[i] = log(up[i]);
    CHECK_INT(seq_settle(d, 8, 0.008, SEQ_FLOOR, 0.02, false, &e, &l, &h), SEQ_IMPROVED);
    CHECK(fabs(e - 1.5619181034756746) < 1e-12 && fabs(l - 1.49) < 1e-12 && fabs(h - 1.7) < 1e-12);
    CHECK_INT(seq_settle(d, 8, 0.008, SEQ_FLOOR, 0.02, true, &e, &l, &h), SEQ_REGRESSED); /* lower is better */
    for (int i = 0; i < 8; i++)
        d[i] = log(near[i]);
    CHECK_INT(seq_settle(d, 8, 0.008, SEQ_FLOOR, 0.02, false, &e, &l, &h), SEQ_OPEN);
    CHECK(fabs(e - 1.022198762488289) < 1e-12 && fabs(l - 0.98) < 1e-12 && fabs(h - 1.06) < 1e-12);
    CHECK_STR(seq_words(l, h, SEQ_FLOOR, false), "within noise");
    /* 5 pairs at 0.05: no CI, open, an estimate all the same */
    CHECK_INT(seq_settle(d, 5, 0.05, SEQ_FLOOR, 0.02, false, &e, &l, &h), SEQ_OPEN);
    CHECK(isnan(l) && isnan(h) && !isnan(e));
    CHECK_STR(seq_why_name(SEQ_NO_RATIO), "no ratio");
    CHECK_STR(seq_words(1.005, 1.03, SEQ_FLOOR, false), "improved?");
    CHECK_STR(seq_words(1.005, 1.03, SEQ_FLOOR, true), "regressed?");
    CHECK_STR(seq_words(0.995, 1.005, SEQ_FLOOR, true), "negligible");
}

/* A row as column=value pairs, read by name. */
static const char *row_get(const void *row, const char *col)
{
    for (const char *const *p = row; *p; p += 2)
        if (!strcmp(p[0], col))
            return p[1];
    return NULL;
}

static void check_cpu_figure(void)
{
    const char *bytes[] = {"workload", "tensor_copy", "region_bytes", "2097152", "region_user_s", "0.30",
                           "region_sys_s", "0.10", "throughput", "5", "throughput_unit", "GB/s", NULL};
    CHECK(fabs(seq_figure_value(true, false, row_get, bytes) - 0.2) < 1e-12);  /* 0.4 s over 2 MiB */
    CHECK(seq_figure_value(false, false, row_get, bytes) == 5);
    const char *runs[] = {"workload", "exec", "region_user_s", "0.5", "region_sys_s", "0.25",
                          "throughput_unit", "runs/s", NULL};
    CHECK(fabs(seq_figure_value(true, false, row_get, runs) - 0.75) < 1e-12); /* per run */
    const char *ops[] = {"workload", "exec", "region_user_s", "1", "region_sys_s", "1", "throughput", "1000",
                         "throughput_unit", "ops/s", "region_wall_s", "2", "workload_metrics",
                         "region=marked", NULL};
    CHECK(fabs(seq_figure_value(true, false, row_get, ops) - 0.001) < 1e-15); /* 2 s over 2000 ops */
    ops[13] = "region=whole";
    CHECK(fabs(seq_figure_value(true, false, row_get, ops) - 2) < 1e-12); /* not one window: per run */
    const char *idle[] = {"total_user_s", "1", "total_sys_s", "2", "region_user_s", "0", "region_sys_s", "0",
                          "throughput_unit", "%", NULL};
    CHECK(seq_figure_value(true, true, row_get, idle) == 3);
    CHECK(isnan(seq_figure_value(true, false, row_get, (const char *[]){"region_user_s", "1", NULL})));
}

int main(void)
{
    check_looks();
    check_critical();
    check_settle();
    check_cpu_figure();
    CHECK_DONE();
}
