/* test_hashmap.c - the keyed u64 map (common/hashmap.c): put, get, replace,
 * delete (backward shift), growth and clear against a plain array model,
 * key 0 and UINT64_MAX as keys, and keys that all share one slot under an
 * identity or multiplicative hash still costing a bounded number of probes
 * each (counted, not timed). */
#include "../check.h"
#include "hashmap.h"

#include <errno.h>

static const uint64_t fixed_key[2] = {0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};

static void test_basic(void)
{
    hmap_t m;
    hmap_init(&m, fixed_key);
    uint64_t v = 7;
    CHECK(hmap_get(&m, 1) == NULL);
    CHECK(hmap_get(&m, 0) == NULL);
    CHECK_INT(hmap_del(&m, 1, &v), -ENOENT);
    CHECK_INT(hmap_del(&m, 0, &v), -ENOENT);
    CHECK_U64(v, 7);
    CHECK_INT(hmap_count(&m), 0);
    const uint64_t keys[] = {0, 1, 2, UINT64_MAX, 0x8000000000000001ULL, 1ULL << 63};
    size_t n = sizeof keys / sizeof *keys;
    for (size_t i = 0; i < n; i++)
        CHECK_INT(hmap_put(&m, keys[i], 100 + i), 0);
    CHECK_INT(hmap_count(&m), n);
    for (size_t i = 0; i < n; i++) {
        uint64_t *p = hmap_get(&m, keys[i]);
        CHECK(p != NULL);
        if (p)
            CHECK_U64(*p, 100 + i);
    }
    CHECK_INT(hmap_put(&m, UINT64_MAX, 5), 0); /* replace */
    CHECK_INT(hmap_put(&m, 0, 6), 0);
    CHECK_INT(hmap_count(&m), n);
    CHECK_U64(*hmap_get(&m, UINT64_MAX), 5);
    CHECK_U64(*hmap_get(&m, 0), 6);
    CHECK_INT(hmap_del(&m, 0, &v), 0);
    CHECK_U64(v, 6);
    CHECK_INT(hmap_del(&m, UINT64_MAX, NULL), 0);
    CHECK(hmap_get(&m, 0) == NULL);
    CHECK(hmap_get(&m, UINT64_MAX) == NULL);
    CHECK_INT(hmap_count(&m), n - 2);
    hmap_clear(&m);
    CHECK_INT(hmap_count(&m), 0);
    CHECK(hmap_get(&m, 1) == NULL);
    CHECK_INT(hmap_put(&m, 1, 9), 0);
    CHECK_U64(*hmap_get(&m, 1), 9);
    hmap_free(&m);
    hmap_free(&m); /* twice is harmless */
}

/* Random puts and deletes over a small key range (so that keys come and
 * go and deletion shifts run through full clusters) against an array. */
static void test_model(const uint64_t *key)
{
    enum { RANGE = 5000, STEPS = 400000 };
    static uint64_t model[RANGE];
    static unsigned char in[RANGE];
    memset(in, 0, sizeof in);
    hmap_t m;
    hmap_init(&m, key);
    uint64_t s = 12345, bad = 0;
    size_t count = 0;
    for (int step = 0; step < STEPS; step++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        uint64_t r = s >> 33, k = r % RANGE, stored = k * 0x10000; /* spread-out keys */
        uint64_t v;
        if ((r >> 20) % 3) {
            CHECK_INT(hmap_put(&m, stored, r), 0);
            count += !in[k];
            in[k] = 1;
            model[k] = r;
        } else {
            int rc = hmap_del(&m, stored, &v);
            bad += rc != (in[k] ? 0 : -ENOENT) || (in[k] && v != model[k]);
            count -= in[k];
            in[k] = 0;
        }
        if (step % 1000 == 0)
            for (uint64_t j = 0; j < RANGE; j++) {
                uint64_t *p = hmap_get(&m, j * 0x10000);
                bad += in[j] ? !p || *p != model[j] : p != NULL;
            }
    }
    CHECK_U64(bad, 0);
    CHECK_INT(hmap_count(&m), count);
    hmap_free(&m);
}

/* Growth from empty to 300k entries, all found, then all deleted. */
static void test_growth(void)
{
    enum { N = 300000 };
    hmap_t m;
    hmap_init(&m, NULL);
    uint64_t bad = 0, v;
    for (uint64_t i = 1; i <= N; i++)
        bad += hmap_put(&m, i * 48, i) != 0;
    CHECK_INT(hmap_count(&m), N);
    CHECK(m.cap >= N * 4 / 3);
    for (uint64_t i = 1; i <= N; i++) {
        uint64_t *p = hmap_get(&m, i * 48);
        bad += !p || *p != i;
    }
    CHECK(hmap_get(&m, 47) == NULL);
    for (uint64_t i = 1; i <= N; i++)
        bad += hmap_del(&m, i * 48, &v) != 0 || v != i;
    CHECK_U64(bad, 0);
    CHECK_INT(hmap_count(&m), 0);
    hmap_free(&m);
}

/* 200k keys that are multiples of 2^44: one slot for all of them under
 * k & mask, and under k * odd & mask (the old maps of trace.c and replay.c
 * were of that kind; 150k such pointers took 17.6 s).  Keyed, the probes
 * per operation stay a small constant, growth included. */
static void test_collisions(const uint64_t *key)
{
    enum { N = 200000 };
    hmap_t m;
    hmap_init(&m, key);
    uint64_t bad = 0;
    for (uint64_t i = 1; i <= N; i++)
        bad += hmap_put(&m, i << 44, i) != 0;
    uint64_t put_probes = m.probes;
    for (uint64_t i = 1; i <= N; i++)
        bad += hmap_del(&m, i << 44, NULL) != 0;
    uint64_t del_probes = m.probes - put_probes;
    CHECK_U64(bad, 0);
    fprintf(stderr, "collisions: %d puts %" PRIu64 " probes (growth included), %d deletes %"
            PRIu64 " probes\n", N, put_probes, N, del_probes);
    /* quadratic would be about N * N / 2 = 2e10 */
    CHECK(put_probes < 16ULL * N);
    CHECK(del_probes < 16ULL * N);
    hmap_free(&m);
}

/* The checksum mixer is MurmurHash3's fmix64, fixed forever: replay
 * checksums of a trace must not change. */
static void test_mix64(void)
{
    CHECK_U64(hmap_mix64(0), 0);
    CHECK_U64(hmap_mix64(1), 0xb456bcfc34c2cb2cULL);
    CHECK_U64(hmap_mix64(0x6a09e667f3bcc909ULL), 0xc25abb1cbd5e0221ULL);
}

int main(void)
{
    test_basic();
    test_model(fixed_key);
    test_model(NULL);
    test_growth();
    test_collisions(fixed_key);
    test_collisions(NULL);
    test_mix64();
    CHECK_DONE();
}
