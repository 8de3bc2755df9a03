/* plan.c - block order, shards and the median's confidence interval. */
#include "plan.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void plan_block_order(uint64_t seed, unsigned block, size_t ncells, size_t *order)
{
    uint64_t s = seed ^ ((uint64_t)block * 0xd1b54a32d192ed03ULL);
    for (size_t i = 0; i < ncells; i++)
        order[i] = i;
    for (size_t i = ncells; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)(((unsigned __int128)splitmix64(&s) * i) >> 64);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

bool plan_in_shard(unsigned block, size_t position, size_t ncells, unsigned k, unsigned n)
{
    if (n <= 1)
        return true;
    return ((uint64_t)block * ncells + position) % n == (uint64_t)(k - 1);
}

int plan_parse_shard(const char *s, unsigned *k, unsigned *n)
{
    char *end;
    unsigned long a = strtoul(s, &end, 10);
    if (end == s || *end != '/')
        return -EINVAL;
    const char *p = end + 1;
    unsigned long b = strtoul(p, &end, 10);
    if (end == p || *end || a < 1 || b < 1 || a > b || b > 100000)
        return -EINVAL;
    *k = (unsigned)a;
    *n = (unsigned)b;
    return 0;
}

double plan_median(const double *v, size_t n)
{
    if (!n)
        return NAN;
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool plan_median_ci(const double *v, size_t n, double *lo, double *hi)
{
    if (n < 6)
        return false;
    /* ranks (1-based) n/2 -+ 1.96 sqrt(n)/2, widened to whole ranks */
    double half = 1.959964 * sqrt((double)n) / 2.0;
    long l = (long)floor((double)n / 2.0 - half);
    long u = (long)ceil((double)n / 2.0 + 1.0 + half);
    if (l < 1)
        l = 1;
    if (u > (long)n)
        u = (long)n;
    *lo = v[l - 1];
    *hi = v[u - 1];
    return true;
}

uint64_t plan_hash(uint64_t h, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL;
    }
    h ^= 0xff; /* separator: "ab"+"c" differs from "a"+"bc" */
    h *= 0x100000001b3ULL;
    return h;
}
