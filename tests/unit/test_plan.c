/* test_plan.c - block order (a permutation, fixed by seed and block, and
 * another for another seed), shards that partition the plan, the median's
 * confidence interval against values worked out by hand, and the CSV reader
 * against the writer. */
#include "../check.h"
#include "csv.h"
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

static void check_block_order(size_t a[10])
{
    size_t b[10], c[10];
    plan_block_order(7, 0, 10, a);
    plan_block_order(7, 0, 10, b);
    plan_block_order(7, 1, 10, c);
    int seen[10] = {0}, same = 1, differ = 0;
    for (int i = 0; i < 10; i++) {
        CHECK(a[i] < 10);
        seen[a[i]]++;
        same &= a[i] == b[i];
        differ += a[i] != c[i];
    }
    for (int i = 0; i < 10; i++)
        CHECK_INT(seen[i], 1);
    CHECK(same);
    CHECK(differ > 0); /* another block, another order */
}

/* another seed, another order; one seed, the order it has always had
 * (rows of a resumed run or of shards name samples by it) */
static void check_seed_orders(const size_t a[10])
{
    static const size_t seed7[10] = {9, 5, 8, 6, 1, 2, 4, 7, 0, 3};
    static const size_t seed7_b1[10] = {6, 4, 5, 0, 9, 8, 1, 2, 7, 3};
    static const size_t seed1[10] = {9, 0, 1, 4, 8, 2, 3, 7, 6, 5};
    size_t c[10], d[10];
    plan_block_order(1, 0, 10, d);
    plan_block_order(7, 1, 10, c);
    int seeds_differ = 0;
    for (int i = 0; i < 10; i++) {
        seeds_differ += a[i] != d[i];
        CHECK_INT(a[i], seed7[i]);
        CHECK_INT(c[i], seed7_b1[i]);
        CHECK_INT(d[i], seed1[i]);
    }
    CHECK(seeds_differ > 0);
    int distinct = 0; /* eight seeds, block 0: eight orders */
    size_t o[8][10];
    for (unsigned sd = 0; sd < 8; sd++) {
        plan_block_order(100 + sd, 0, 10, o[sd]);
        int dup = 0;
        for (unsigned e = 0; e < sd; e++)
            dup |= memcmp(o[sd], o[e], sizeof o[sd]) == 0;
        distinct += !dup;
    }
    CHECK_INT(distinct, 8);
}

/* shards: every block in exactly one of N, whole; N shards of B >= N blocks
 * hold floor(B/N) or ceil(B/N) blocks each */
static void check_shards(void)
{
    for (unsigned n = 1; n <= 4; n++) {
        unsigned held[5] = {0};
        for (unsigned blk = 0; blk < 18; blk++) {
            int owners = 0;
            for (unsigned k = 1; k <= n; k++) {
                owners += plan_in_shard(blk, k, n);
                held[k] += plan_in_shard(blk, k, n);
            }
            CHECK_INT(owners, 1);
        }
        for (unsigned k = 1; k <= n; k++)
            CHECK(held[k] == 18 / n || held[k] == (18 + n - 1) / n);
    }
    CHECK(plan_in_shard(0, 1, 3) && plan_in_shard(3, 1, 3) && plan_in_shard(1, 2, 3) && !plan_in_shard(2, 2, 3));
    unsigned k, n;
    CHECK_INT(plan_parse_shard("2/3", &k, &n), 0);
    CHECK_INT(k, 2);
    CHECK_INT(n, 3);
    CHECK_INT(plan_parse_shard("0/3", &k, &n), -EINVAL);
    CHECK_INT(plan_parse_shard("4/3", &k, &n), -EINVAL);
    CHECK_INT(plan_parse_shard("1/", &k, &n), -EINVAL);
    CHECK_INT(plan_parse_shard("1/2x", &k, &n), -EINVAL);
}

/* median CI: n = 10 -> ranks floor(5 - 3.099) = 1 .. ceil(6 + 3.099) = 10;
 * n = 20 -> ranks floor(10 - 4.383) = 5 .. ceil(11 + 4.383) = 16 */
static void check_median_ci(double v[20])
{
    double lo, hi;
    for (int i = 0; i < 20; i++)
        v[i] = i + 1;
    CHECK(!plan_median_ci(v, 5, &lo, &hi));
    CHECK(plan_median_ci(v, 10, &lo, &hi));
    CHECK(lo == 1 && hi == 10);
    CHECK(plan_median_ci(v, 20, &lo, &hi));
    CHECK(lo == 5 && hi == 16);
    CHECK(plan_median(v, 20) == 10.5);
    CHECK(plan_median(v, 5) == 3);
    CHECK(plan_hash(PLAN_HASH_INIT, "ab") != plan_hash(plan_hash(PLAN_HASH_INIT, "a"), "b"));
}

/* the paired Hodges-Lehmann CI: the signed-rank table's two-sided 5% critical values
 * (n = 6: 0, 10: 8, 20: 52) pick the Walsh averages at those ranks from each end */
static void check_hl_ci(const double v[20])
{
    double lo, hi;
    static const size_t ns[] = {6, 10, 20};
    static const size_t crit[] = {0, 8, 52};
    double est;
    CHECK(!plan_hl_ci(v, 5, &est, &lo, &hi));
    for (int c = 0; c < 3; c++) {
        size_t n = ns[c], m = n * (n + 1) / 2, k = 0;
        double w[210];
        for (size_t i = 0; i < n; i++)
            for (size_t j = i; j < n; j++)
                w[k++] = (v[i] + v[j]) / 2;
        for (size_t i = 1; i < m; i++) /* insertion sort: the test's own ordering */
            for (size_t j = i; j > 0 && w[j - 1] > w[j]; j--) {
                double x = w[j];
                w[j] = w[j - 1];
                w[j - 1] = x;
            }
        CHECK(plan_hl_ci(v, n, &est, &lo, &hi));
        CHECK(lo == w[crit[c]] && hi == w[m - 1 - crit[c]]);
        CHECK(est == (n + 1) / 2.0); /* 1..n: the pseudo-median is the middle */
    }
}

/* the reader reads what the writer wrote */
static void check_csv_round_trip(void)
{
    char path[] = "/tmp/mb-test-plan-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    csv_writer_t w;
    CHECK_INT(csv_open(&w, path, NULL, 0), 0);
    csv_row_t *r = malloc(sizeof *r);
    csv_row_clear(r);
    csv_set(r, COL_message, "%s", "two\nlines, \"quoted\"");
    csv_set(r, COL_block, "%d", 3);
    CHECK_INT(csv_write_row(&w, r), 0);
    csv_close(&w);
    csv_table_t t;
    char err[256];
    CHECK_INT(csv_read(path, &t, err, sizeof err), 0);
    CHECK_INT(t.nrows, 1);
    CHECK_INT(t.ncols, COL_COUNT);
    CHECK_STR(t.rows[0][csv_col(&t, "message")], "two\nlines, \"quoted\"");
    CHECK_STR(t.rows[0][csv_col(&t, "block")], "3");
    CHECK_INT(csv_col(&t, "nope"), -1);
    csv_table_free(&t);
    const char *extra[] = {"total_cycles"};
    CHECK_INT(csv_open_append(&w, path, extra, 1, err, sizeof err), -EPROTO);
    CHECK(strstr(err, "columns differ") != NULL);
    CHECK_INT(csv_open_append(&w, path, NULL, 0, err, sizeof err), 0);
    CHECK_INT(csv_write_row(&w, r), 0);
    csv_close(&w);
    CHECK_INT(csv_read(path, &t, err, sizeof err), 0);
    CHECK_INT(t.nrows, 2);
    csv_table_free(&t);
    unlink(path);
    free(r);
}

int main(void)
{
    size_t a[10];
    double v[20];
    check_block_order(a);
    check_seed_orders(a);
    check_shards();
    check_median_ci(v);
    check_hl_ci(v);
    check_csv_round_trip();
    CHECK_DONE();
}
