/* test_hist.c - the latency histogram (workloads/hist.c): percentiles of a
 * known input within the stated relative error, small values exact, exact
 * min/max, merge equal to recording both, empty and extreme values. */
#include "../check.h"
#include "hist.h"

#include <math.h>

static hist_t h1, h2, both;

/* |got - want| <= want * 2^-HIST_SUB_BITS, with want a true percentile */
#define CHECK_NEAR(got, want) do { uint64_t g_ = (got), w_ = (want); \
    double e_ = fabs((double)g_ - (double)w_) / (double)w_; \
    if (e_ > 1.0 / HIST_SUB) { check_failures++; fprintf(stderr, \
    "%s:%d: %s = %" PRIu64 ", want %" PRIu64 " within %.2f%% (off by %.3f%%)\n", \
    __FILE__, __LINE__, #got, g_, w_, 100.0 / HIST_SUB, e_ * 100); } } while (0)

static void test_uniform(void)
{
    hist_init(&h1);
    for (uint64_t v = 1; v <= 10000; v++)
        hist_record(&h1, v);
    CHECK_U64(h1.total, 10000);
    CHECK_U64(h1.min, 1);
    CHECK_U64(h1.max, 10000);
    CHECK_NEAR(hist_percentile(&h1, 50), 5000);
    CHECK_NEAR(hist_percentile(&h1, 90), 9000);
    CHECK_NEAR(hist_percentile(&h1, 99), 9900);
    CHECK_NEAR(hist_percentile(&h1, 99.9), 9990);
    CHECK_U64(hist_percentile(&h1, 100), 10000);
    CHECK_U64(hist_percentile(&h1, 0.01), 1); /* rank 1: the smallest, exact */
    /* reported values are bucket tops: never below the true percentile */
    CHECK(hist_percentile(&h1, 50) >= 5000);
    CHECK(hist_percentile(&h1, 99) >= 9900);
    /* monotone in p */
    uint64_t prev = 0;
    for (double p = 0.5; p <= 100; p += 0.5) {
        uint64_t v = hist_percentile(&h1, p);
        CHECK(v >= prev);
        prev = v;
    }
}

static void test_small_exact(void)
{
    hist_init(&h1);
    for (uint64_t v = 0; v < HIST_SUB; v++)
        hist_record(&h1, v);
    /* rank k+1 is the value k, reported exactly */
    for (uint64_t k = 0; k < HIST_SUB; k++)
        CHECK_U64(hist_percentile(&h1, 100.0 * (double)(k + 1) / HIST_SUB), k);
    hist_init(&h1);
    hist_record(&h1, 7);
    hist_record(&h1, 7);
    hist_record(&h1, 3);
    CHECK_U64(hist_percentile(&h1, 33), 3);
    CHECK_U64(hist_percentile(&h1, 34), 7);
    CHECK_U64(hist_percentile(&h1, 100), 7);
    CHECK_U64(h1.min, 3);
}

static void test_error_bound(void)
{
    /* one value at a time, over many magnitudes: p100 is the exact max, and
     * p50 of {v, v} is v's bucket top (clamped), within the relative bound */
    uint64_t vs[] = {127, 128, 129, 255, 256, 1000, 4095, 4097, 123456789, 1ULL << 40,
                     (1ULL << 40) + 12345, 0x7fffffffffffffffULL, UINT64_MAX - 1};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        hist_init(&h1);
        hist_record(&h1, vs[i]);
        hist_record(&h1, 1ULL << 62 > vs[i] ? vs[i] * 2 - vs[i] / 2 : vs[i]); /* a larger max */
        CHECK_NEAR(hist_percentile(&h1, 50), vs[i]);
        CHECK(hist_percentile(&h1, 50) >= vs[i]);
        CHECK_U64(hist_percentile(&h1, 100), h1.max);
    }
}

static void test_merge(void)
{
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    hist_init(&h1);
    hist_init(&h2);
    hist_init(&both);
    for (int i = 0; i < 100000; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        uint64_t v = s >> (s & 63); /* all magnitudes */
        hist_record(i % 3 ? &h1 : &h2, v);
        hist_record(&both, v);
    }
    hist_merge(&h1, &h2);
    CHECK(memcmp(&h1, &both, sizeof h1) == 0);
    CHECK_U64(h1.total, 100000);
    CHECK_U64(hist_percentile(&h1, 99), hist_percentile(&both, 99));
    /* merging an empty histogram changes nothing, min included */
    hist_init(&h2);
    hist_merge(&h1, &h2);
    CHECK(memcmp(&h1, &both, sizeof h1) == 0);
    /* into an empty one: a copy */
    hist_init(&h2);
    hist_merge(&h2, &both);
    CHECK(memcmp(&h2, &both, sizeof h2) == 0);
}

static void test_empty_and_huge(void)
{
    hist_init(&h1);
    CHECK_U64(h1.total, 0);
    CHECK_U64(hist_percentile(&h1, 50), 0);
    CHECK_U64(hist_percentile(&h1, 100), 0);
    CHECK_U64(hist_percentile(&h1, 0), 0);

    hist_init(&h1);
    hist_record(&h1, UINT64_MAX);
    hist_record(&h1, UINT64_MAX);
    hist_record(&h1, 0);
    CHECK_U64(h1.count[HIST_BUCKETS - 1], 2); /* the last bucket, not past it */
    CHECK_U64(h1.count[0], 1);
    CHECK_U64(hist_percentile(&h1, 100), UINT64_MAX);
    CHECK_U64(hist_percentile(&h1, 50), UINT64_MAX);
    CHECK_U64(hist_percentile(&h1, 33), 0);
    CHECK_U64(h1.min, 0);
    CHECK_U64(h1.max, UINT64_MAX);
    /* nonsense percentiles give the extremes, never a crash */
    CHECK_U64(hist_percentile(&h1, 1000), UINT64_MAX);
    CHECK_U64(hist_percentile(&h1, -5), 0);
    CHECK_U64(hist_percentile(&h1, NAN), 0);
    /* every power of two lands in range */
    hist_init(&h1);
    for (int k = 0; k < 64; k++)
        hist_record(&h1, 1ULL << k);
    CHECK_U64(h1.total, 64);
    uint64_t n = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        n += h1.count[i];
    CHECK_U64(n, 64);
}

int main(void)
{
    CHECK(sizeof(hist_t) < 64 * 1024); /* "~64 KiB, fixed" */
    test_uniform();
    test_small_exact();
    test_error_bound();
    test_merge();
    test_empty_and_huge();
    CHECK_DONE();
}
