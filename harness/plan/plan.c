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

bool plan_in_shard(unsigned block, unsigned k, unsigned n)
{
    return n <= 1 || block % n == k - 1;
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

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* z with P(Z > z) = alpha / 2 for a standard normal Z (scipy's norm.isf(alpha / 2)), by
 * bisection on erfc: 0.05 gives 1.959963984540054. */
static double normal_isf_half(double alpha)
{
    if (fabs(alpha - 0.05) < 1e-12)
        return 1.959963984540054;
    double lo = 0, hi = 40;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = (lo + hi) / 2;
        if (0.5 * erfc(mid / sqrt(2.0)) > alpha / 2)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}

long plan_signed_rank_critical(size_t n, double alpha)
{
    if (n > 300) { /* stats.py's normal approximation */
        double m = (double)n * (double)(n + 1) / 2;
        return (long)floor(m / 2 - normal_isf_half(alpha) *
                                       sqrt((double)n * (double)(n + 1) * (double)(2 * n + 1) / 24));
    }
    size_t smax = n * (n + 1) / 2;
    double *f = calloc(smax + 1, sizeof *f);
    if (!f)
        return -2;
    f[0] = 1.0;
    size_t reach = 0;
    for (size_t r = 1; r <= n; r++) { /* P(sum) after rank r's fair coin, in place from the top */
        for (size_t s = reach + r; s >= r; s--)
            f[s] = 0.5 * f[s] + 0.5 * f[s - r];
        for (size_t s = r; s-- > 0;)
            f[s] *= 0.5;
        reach += r;
    }
    long t = -1;
    double cdf = 0;
    for (size_t s = 0; s <= smax; s++) {
        cdf += f[s];
        if (2 * cdf <= alpha * (1 + 1e-9))
            t = (long)s;
        else
            break;
    }
    free(f);
    return t;
}

bool plan_hl_ci_at(const double *d, size_t n, double alpha, double *est, double *lo, double *hi)
{
    *est = *lo = *hi = NAN;
    if (!n)
        return false;
    size_t m = n * (n + 1) / 2;
    double *w = malloc(m * sizeof *w);
    if (!w)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i; j < n; j++)
            w[k++] = (d[i] + d[j]) / 2;
    qsort(w, m, sizeof *w, cmp_dbl);
    *est = plan_median(w, m);
    long t = plan_signed_rank_critical(n, alpha);
    bool ok = t >= 0 && (size_t)t < m;
    if (ok) {
        *lo = w[t];
        *hi = w[m - 1 - (size_t)t];
    }
    free(w);
    return ok;
}

bool plan_hl_ci(const double *d, size_t n, double *est, double *lo, double *hi)
{
    return n >= 6 && plan_hl_ci_at(d, n, 0.05, est, lo, hi);
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
