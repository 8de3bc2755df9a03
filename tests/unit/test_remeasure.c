/* test_remeasure.c - harness/plan/remeasure.c on rows and stores filled by
 * hand: which samples were disturbed from outside (the same rows and answers
 * as tests/unit/test_disturb_outside.py gives scripts/mallocbench/disturb.py
 * outside(): the two rules agree), the attempt's seed, the run's limit, a
 * block's values dropped from the stopping store, --resume's attempts. */
#include "../check.h"
#include "remeasure.h"

#include <math.h>

/* One row: status, total_wall_s, steal_s, region_wall_s, region_run_delay_s,
 * region_task_clock_s, region_user_s, region_sys_s, khugepaged, compactions
 * ("" not measured), and the why expected ("" not disturbed from outside).
 * On 2 CPUs.  Keep in step with OUTSIDE_ROWS in test_disturb_outside.py. */
static const struct {
    const char *f[10], *why;
} rows[] = {
    {{"ok", "10", "0.30", "", "", "", "", "", "", ""}, "steal 1.5%"},
    {{"ok", "10", "0.10", "1.0", "0.04", "1.0", "", "", "", ""}, ""},
    {{"ok", "10", "", "1.0", "0.5", "1.0", "", "", "", ""}, "waited 33% for a CPU beyond its own threads' demand"},
    /* its own two threads wanted 3 s of CPU in 1 s on 2 CPUs: the 1 s they waited is theirs */
    {{"ok", "10", "", "1.0", "1.0", "2.0", "", "", "", ""}, ""},
    {{"ok", "10", "", "1.0", "1.0", "1.8", "", "", "", ""}, "waited 7% for a CPU beyond its own threads' demand"},
    {{"ok", "10", "", "1.0", "0.10", "", "0.60", "0.40", "", ""}, "waited 9% for a CPU beyond its own threads' demand"},
    {{"error", "10", "0.50", "1.0", "0.5", "1.0", "", "", "", ""}, ""},
    {{"ok", "10", "0", "1.0", "0.01", "1.0", "", "", "5", "3"}, ""},
    {{"ok", "2", "", "", "0.2", "1.0", "", "", "", ""}, "waited 17% for a CPU beyond its own threads' demand"},
    {{"ok", "", "", "", "", "", "", "", "", ""}, ""},
    /* past the shares, but shorter than REMEASURE_MIN_S: one preemption, one jiffy */
    {{"ok", "0.04", "", "", "0.004", "0.0001", "", "", "", ""}, ""},
    {{"ok", "1", "0.04", "1", "0.04", "0.5", "", "", "", ""}, ""},
};

static const csv_col_t cols[10] = {COL_status, COL_total_wall_s, COL_steal_s, COL_region_wall_s,
                                   COL_region_run_delay_s, COL_region_task_clock_s, COL_region_user_s,
                                   COL_region_sys_s, COL_khugepaged_collapses, COL_compactions};

static void test_rule(void)
{
    static csv_row_t row;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        csv_row_clear(&row);
        for (int k = 0; k < 10; k++)
            csv_set(&row, cols[k], "%s", rows[i].f[k]);
        char why[160] = "";
        bool out = remeasure_outside(&row, 2, why, sizeof why);
        CHECK_INT(out, rows[i].why[0] != '\0');
        CHECK_STR(why, out ? rows[i].why : "");
    }
}

static void test_budget(void)
{
    CHECK_U64(remeasure_seed(12345, 0), 12345);
    CHECK(remeasure_seed(12345, 1) != 12345 && remeasure_seed(12345, 2) != remeasure_seed(12345, 1));
    CHECK_INT(remeasure_most(30, 1, 1), 7);
    CHECK_INT(remeasure_most(10, 1, 1), 2);
    CHECK_INT(remeasure_most(3, 1, 1), 1);
    CHECK_INT(remeasure_most(30, 1, 2), 3); /* the shard's 15 blocks */
    CHECK_INT(remeasure_most(30, 2, 3), 2);
}

/* Block 2 of 3 dropped from two cells' stores, the others kept in order;
 * then its positions not done and its attempt the next, until the limits. */
static void test_block(void)
{
    static double tput[2 * 3];
    static unsigned tblock[2 * 3];
    static size_t ntput[2], planned;
    static bool done[2 * 3], conv[2], stopped[2];
    remeasure_plan_t p = {tput, tblock, ntput, done, conv, stopped, &planned, 2, 3, true};
    remeasure_t rm;
    CHECK_INT(remeasure_alloc(&rm, &p, 1, 1), 0);
    for (unsigned b = 0; b < 3; b++) {
        tput[b] = 10 + b;
        tblock[b] = b;
        done[2 * 2 + b % 2] = true;
    }
    tput[3] = 20, tblock[3] = 2, tput[4] = 21, tblock[4] = 0; /* cell 1: blocks 2 and 0 */
    ntput[0] = 3, ntput[1] = 2;
    stopped[1] = true;
    CHECK(!remeasure_block(&rm, 2, false)); /* nothing disturbed */
    rm.disturbed = true;
    CHECK(remeasure_block(&rm, 2, false));
    CHECK_INT(ntput[0], 2);
    CHECK(tput[0] == 10 && tput[1] == 11 && tblock[1] == 1);
    CHECK_INT(ntput[1], 1);
    CHECK(tput[3] == 21 && tblock[3] == 0);
    CHECK(!done[4] && !done[5] && !rm.disturbed);
    CHECK_INT(planned, 1); /* the one cell still running */
    CHECK_INT(rm.attempt[2], 1);
    CHECK_INT(rm.used, 1);
    rm.disturbed = true;
    CHECK(remeasure_block(&rm, 2, false)); /* its second time: the run's limit (1 block) is not asked again */
    CHECK_INT(rm.attempt[2], 2);
    rm.disturbed = true;
    CHECK(!remeasure_block(&rm, 2, false)); /* at most twice */
    rm.disturbed = true;
    CHECK(!remeasure_block(&rm, 1, false)); /* a quarter of 3 blocks, at least 1: used */
    remeasure_free(&rm);
}

/* Cap 30 allows 7 blocks, but only a quarter of those run so far (0 .. b), at
 * least 1: a run stopped at block 8 measured at most 2 again. */
static void test_so_far(void)
{
    static double tput[30];
    static unsigned tblock[30];
    static size_t ntput[1], planned;
    static bool done[30], conv[1], stopped[1];
    remeasure_plan_t p = {tput, tblock, ntput, done, conv, stopped, &planned, 1, 30, true};
    remeasure_t rm;
    CHECK_INT(remeasure_alloc(&rm, &p, 1, 1), 0);
    CHECK_INT(rm.most, 7);
    static const unsigned blocks[] = {0, 1, 3, 6, 7, 8, 10, 11};
    static const bool again[] = {true, false, false, false, true, false, false, true};
    for (size_t i = 0; i < sizeof blocks / sizeof *blocks; i++) {
        rm.disturbed = true;
        CHECK(remeasure_block(&rm, blocks[i], false) == again[i]);
    }
    CHECK_INT(rm.used, 3); /* blocks 0, 7 and 11: 1 of 1, 2 of 8, 3 of 12 */
    rm.disturbed = true;
    CHECK(remeasure_block(&rm, 7, false)); /* a block's second attempt is not a new block */
    remeasure_free(&rm);
}

/* --resume: each block's last attempt, and the blocks measured again. */
static void test_resume(void)
{
    const char *text = "block,position,attempt\n0,0,0\n0,1,0\n1,0,0\n1,0,1\n1,1,2\n2,0,\n9,0,1\n";
    csv_table_t t;
    char err[256];
    CHECK_INT(csv_parse("t.csv", text, strlen(text), &t, err, sizeof err), 0);
    static size_t ntput[2], planned;
    remeasure_plan_t p = {.ntput = ntput, .planned = &planned, .ncells = 2, .blocks = 3, .quiet = true};
    remeasure_t rm;
    CHECK_INT(remeasure_alloc(&rm, &p, 1, 1), 0);
    remeasure_resume(&rm, &t, 3);
    CHECK_INT(rm.attempt[0], 0);
    CHECK_INT(rm.attempt[1], 2);
    CHECK_INT(rm.attempt[2], 0);
    CHECK_INT(rm.used, 1);
    CHECK_INT(remeasure_row_attempt(&t, 3), 1);
    CHECK_INT(remeasure_row_attempt(&t, 5), 0);
    remeasure_free(&rm);
    csv_table_free(&t);
}

int main(void)
{
    test_rule();
    test_budget();
    test_block();
    test_so_far();
    test_resume();
    CHECK_DONE();
}
