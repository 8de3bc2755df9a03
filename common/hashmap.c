/* hashmap.c - the keyed u64 -> u64 map of hashmap.h: SipHash-1-3 of the
 * 8-byte key picks the home slot, linear probing from there; deletion
 * shifts the entries after a hole back, so no tombstones accumulate. */
#include "hashmap.h"
#include "sysmem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND(v0, v1, v2, v3) do { \
    v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
    v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
    v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
    v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); } while (0)

/* SipHash-1-3 of the 8 little-endian bytes of x under (k0, k1). */
static uint64_t siphash13_u64(uint64_t k0, uint64_t k1, uint64_t x)
{
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    uint64_t last = (uint64_t)8 << 56; /* the length byte; no tail bytes */
    v3 ^= x;
    SIPROUND(v0, v1, v2, v3);
    v0 ^= x;
    v3 ^= last;
    SIPROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    SIPROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t hmap_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

void hmap_init(hmap_t *m, const uint64_t *key)
{
    memset(m, 0, sizeof *m);
    uint64_t k[2];
    if (key) {
        k[0] = key[0];
        k[1] = key[1];
    } else if (getrandom(k, sizeof k, GRND_NONBLOCK) != (ssize_t)sizeof k) {
        /* no entropy yet (early boot): still unknown to whoever wrote the input */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        k[0] = hmap_mix64((uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)m);
        k[1] = hmap_mix64((uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&k ^ k[0]);
    }
    m->k0 = k[0];
    m->k1 = k[1];
}

void hmap_free(hmap_t *m)
{
    sysmem_free(m->key);
    sysmem_free(m->val);
    m->key = m->val = NULL;
    m->cap = m->n = 0;
    m->has_zero = 0;
}

void hmap_clear(hmap_t *m)
{
    if (m->cap)
        memset(m->key, 0, m->cap * sizeof *m->key);
    m->n = 0;
    m->has_zero = 0;
}

size_t hmap_count(const hmap_t *m)
{
    return m->n + (m->has_zero ? 1 : 0);
}

static size_t home(const hmap_t *m, uint64_t k)
{
    return (size_t)siphash13_u64(m->k0, m->k1, k) & (m->cap - 1);
}

/* The slot holding k (k != 0), or the empty slot where it would go;
 * counts the slots visited in *probes when not NULL. */
static size_t slot_of(const hmap_t *m, uint64_t k, uint64_t *probes)
{
    size_t mask = m->cap - 1, i = home(m, k), n = 1;
    while (m->key[i] && m->key[i] != k) {
        i = (i + 1) & mask;
        n++;
    }
    if (probes)
        *probes += n;
    return i;
}

static int grow(hmap_t *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(uint64_t) || cap < m->cap)
        return -ENOMEM;
    hmap_t g = *m;
    g.cap = cap;
    g.key = sysmem_calloc(cap, sizeof *g.key);
    g.val = sysmem_malloc(cap * sizeof *g.val);
    if (!g.key || !g.val) {
        sysmem_free(g.key);
        sysmem_free(g.val);
        return -ENOMEM;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->key[i]) {
            size_t j = slot_of(&g, m->key[i], &g.probes);
            g.key[j] = m->key[i];
            g.val[j] = m->val[i];
        }
    sysmem_free(m->key);
    sysmem_free(m->val);
    *m = g;
    return 0;
}

uint64_t *hmap_get(const hmap_t *m, uint64_t k)
{
    if (!k)
        return m->has_zero ? (uint64_t *)&m->zero_val : NULL;
    if (!m->cap)
        return NULL;
    size_t i = slot_of(m, k, NULL);
    return m->key[i] ? &m->val[i] : NULL;
}

int hmap_put(hmap_t *m, uint64_t k, uint64_t v)
{
    if (!k) {
        m->has_zero = 1;
        m->zero_val = v;
        return 0;
    }
    if ((m->n + 1) * 4 > m->cap * 3) {
        int rc = grow(m);
        if (rc)
            return rc;
    }
    size_t i = slot_of(m, k, &m->probes);
    if (!m->key[i]) {
        m->key[i] = k;
        m->n++;
    }
    m->val[i] = v;
    return 0;
}

int hmap_del(hmap_t *m, uint64_t k, uint64_t *v)
{
    if (!k) {
        if (!m->has_zero)
            return -ENOENT;
        if (v)
            *v = m->zero_val;
        m->has_zero = 0;
        return 0;
    }
    if (!m->cap)
        return -ENOENT;
    size_t mask = m->cap - 1, i = slot_of(m, k, &m->probes);
    if (!m->key[i])
        return -ENOENT;
    if (v)
        *v = m->val[i];
    m->key[i] = 0;
    m->n--;
    /* an entry after the hole moves into it unless its home lies
     * cyclically in (hole, its slot]: then it is reachable as it is */
    for (size_t j = (i + 1) & mask; m->key[j]; j = (j + 1) & mask) {
        m->probes++;
        size_t h = home(m, m->key[j]);
        if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
            continue;
        m->key[i] = m->key[j];
        m->val[i] = m->val[j];
        m->key[j] = 0;
        i = j;
    }
    return 0;
}
