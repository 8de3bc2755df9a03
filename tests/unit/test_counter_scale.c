/* test_counter_scale.c - a multiplexed counter on a fake read, no PMU needed
 * (harness/sample/counters.c): the read's fields land as value, enabled,
 * running in that order; the whole-process figure is value * enabled /
 * running and the region's the same of the two snapshots' differences.
 * Every value, enabled and running here differ, so a field taken for
 * another, or a scale by one time alone, changes the answer. */
#include "../check.h"
#include "counters.h"

#include <math.h>

/* A counter on the PMU a quarter of the time it was enabled. */
static void test_from_read(void)
{
    const uint64_t buf[3] = {1000, 400, 100};
    cnt_value_t v = {.name = "cycles"};
    cnt_from_read(buf, &v);
    CHECK(v.supported);
    CHECK_STR(v.name, "cycles");
    CHECK_U64(v.value, 1000);
    CHECK_U64(v.enabled, 400);
    CHECK_U64(v.running, 100);
    CHECK(cnt_scaled(&v) == 4000.0);
}

static void test_scaled(void)
{
    cnt_value_t v = {.name = "x", .supported = true, .value = 300, .enabled = 90, .running = 30};
    CHECK(cnt_scaled(&v) == 900.0);         /* not 100 (swapped), nor 27000 (enabled alone) */
    v = (cnt_value_t){.supported = true, .value = 7, .enabled = 1000, .running = 1};
    CHECK(cnt_scaled(&v) == 7000.0);
    v = (cnt_value_t){.supported = true, .value = 123, .enabled = 55, .running = 55};
    CHECK(cnt_scaled(&v) == 123.0);         /* never off the PMU: the raw count */
    v.running = 0;
    CHECK(isnan(cnt_scaled(&v)));           /* enabled, never ran: no figure, never 0 */
    v = (cnt_value_t){.supported = true, .value = 0, .enabled = 0, .running = 0};
    CHECK(isnan(cnt_scaled(&v)));
}

/* Two snapshots: the region ran 1/5 of its enabled time, the process before it all the time. */
static void test_delta(void)
{
    const uint64_t b[3] = {500, 200, 200}, a[3] = {800, 1200, 400};
    cnt_value_t before = {0}, after = {0};
    cnt_from_read(b, &before);
    cnt_from_read(a, &after);
    CHECK(cnt_delta(&before, &after) == 1500.0);   /* 300 * 1000 / 200 */
    CHECK(cnt_scaled(&after) == 2400.0);            /* 800 * 1200 / 400 */
    /* a region that ran all of its enabled time is exact, whatever the totals */
    const uint64_t c[3] = {900, 1300, 500};
    cnt_value_t end = {0};
    cnt_from_read(c, &end);
    CHECK(cnt_delta(&after, &end) == 100.0);
    /* enabled longer than it ran on either side: scaled by the region's own times */
    const uint64_t d[3] = {1000, 1500, 520};
    cnt_from_read(d, &end);
    CHECK(cnt_delta(&after, &end) == 200.0 * 300.0 / 120.0);
}

int main(void)
{
    test_from_read();
    test_scaled();
    test_delta();
    CHECK_DONE();
}
