/* hist.c - the HDR-style histogram of hist.h.  Values below HIST_SUB have
 * a bucket each (exact); above, each power of two [2^k, 2^(k+1)) is split
 * into HIST_SUB/2 .. HIST_SUB equal sub-buckets of width 2^(k-HIST_SUB_BITS),
 * so a bucket's width is at most 2^-HIST_SUB_BITS of the values in it. */
#include "hist.h"

#include <string.h>

/* Bucket of v: v itself below HIST_SUB; else the top HIST_SUB_BITS+1 bits
 * of v (HIST_SUB..2*HIST_SUB-1) in band `shift + 1`. */
static inline unsigned hist_index(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned msb = 63u - (unsigned)__builtin_clzll(v);
    unsigned shift = msb - HIST_SUB_BITS;
    return (shift + 1) * HIST_SUB + (unsigned)(v >> shift) - HIST_SUB;
}

/* Highest value that falls in bucket i (UINT64_MAX for the last one). */
static uint64_t hist_bucket_high(unsigned i)
{
    if (i < HIST_SUB)
        return i;
    unsigned shift = i / HIST_SUB - 1;
    uint64_t sub = HIST_SUB + i % HIST_SUB;
    return (sub << shift) + ((UINT64_C(1) << shift) - 1);
}

void hist_init(hist_t *h)
{
    memset(h->count, 0, sizeof h->count);
    h->total = 0;
    h->min = UINT64_MAX;
    h->max = 0;
}

void hist_record(hist_t *h, uint64_t value)
{
    h->count[hist_index(value)]++;
    h->total++;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
}

void hist_merge(hist_t *dst, const hist_t *src)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        dst->count[i] += src->count[i];
    dst->total += src->total;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t hist_percentile(const hist_t *h, double p)
{
    if (h->total == 0)
        return 0;
    if (!(p > 0)) /* also NaN */
        return h->min;
    if (p >= 100)
        return h->max;
    /* rank = ceil(p% of total), at least 1 */
    double x = p * (double)h->total / 100.0;
    uint64_t rank = (uint64_t)x;
    if ((double)rank < x)
        rank++;
    if (rank == 0)
        rank = 1;
    if (rank > h->total)
        rank = h->total;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->count[i];
        if (seen >= rank) {
            uint64_t v = hist_bucket_high(i);
            return v > h->max ? h->max : v;
        }
    }
    return h->max; /* not reached: the counts add up to total */
}
