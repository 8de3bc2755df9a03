/* dist.c - size distributions (fixed, list, log-uniform, shapes file,
 * recorded trace) and the seeded random numbers every workload draws from. */
#include "dist.h"
#include "fileio.h"
#include "trace.h"
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t rng_seed(uint64_t seed)
{
    /* splitmix64 scrambles nearby seeds apart; never 0 */
    uint64_t z = splitmix64(&seed);
    return z ? z : 0x9e3779b97f4a7c15ULL;
}

uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545f4914f6cdd1dULL;
}

uint64_t rng_below(uint64_t *s, uint64_t n)
{
    if (n <= 1)
        return 0;
    /* Lemire's multiply-shift: bias below 2^-64 * n, fine here */
    return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

static const struct {
    const char *name;
    unsigned bytes;
} dtypes[] = {
    {"float64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8}, {"int32", 4},
    {"int16", 2},   {"int8", 1},    {"uint8", 1},   {"bool", 1},     {"complex64", 8},
    {"complex128", 16}, {"double", 8}, {"float", 4}, {"half", 2},
};

int dist_parse_shape(const char *line, uint64_t *bytes, char *err, size_t errlen)
{
    *bytes = 0;
    const char *p = line;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p || *p == '#')
        return 0;
    uint64_t elems = 1;
    int dims = 0;
    for (;;) {
        if (!isdigit((unsigned char)*p)) {
            snprintf(err, errlen, "expected a dimension such as 1024x1024 at '%.20s'", p);
            return -EINVAL;
        }
        char *end;
        errno = 0;
        unsigned long long d = strtoull(p, &end, 10);
        if (errno || (d && elems > UINT64_MAX / d)) {
            snprintf(err, errlen, "shape too large");
            return -ERANGE;
        }
        elems *= d;
        dims++;
        p = end;
        if (*p == 'x' || *p == 'X' || *p == '*') {
            p++;
            continue;
        }
        break;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    char dtype[32];
    size_t n = 0;
    while (*p && !isspace((unsigned char)*p) && *p != '#' && n + 1 < sizeof dtype)
        dtype[n++] = *p++;
    dtype[n] = '\0';
    while (isspace((unsigned char)*p))
        p++;
    if (*p && *p != '#') {
        snprintf(err, errlen, "unexpected '%.20s' after the dtype", p);
        return -EINVAL;
    }
    if (!n) {
        snprintf(err, errlen, "missing dtype (e.g. float32)");
        return -EINVAL;
    }
    for (size_t i = 0; i < sizeof dtypes / sizeof *dtypes; i++) {
        if (strcmp(dtypes[i].name, dtype) == 0) {
            if (elems > UINT64_MAX / dtypes[i].bytes) {
                snprintf(err, errlen, "shape too large");
                return -ERANGE;
            }
            *bytes = elems * dtypes[i].bytes;
            if (*bytes == 0) {
                snprintf(err, errlen, "a tensor of 0 bytes");
                return -EINVAL;
            }
            (void)dims;
            return 0;
        }
    }
    snprintf(err, errlen, "unknown dtype '%s'", dtype);
    return -EINVAL;
}

int dist_parse_shapes_text(const char *name, const char *buf, size_t len, dist_t *d, char *err,
                           size_t errlen)
{
    char line[512], why[256];
    unsigned lineno = 0;
    memset(d, 0, offsetof(dist_t, v));
    d->lo = d->hi = 0;
    d->next = 0;
    d->kind = DIST_SHAPES;
    for (size_t pos = 0; pos < len;) {
        const char *nl = memchr(buf + pos, '\n', len - pos);
        size_t n = (nl ? (size_t)(nl - buf) : len) - pos;
        lineno++;
        if (n >= sizeof line - 1) {
            snprintf(err, errlen, "%s:%u: line too long", name, lineno);
            return -EINVAL;
        }
        if (memchr(buf + pos, '\0', n)) {
            snprintf(err, errlen, "%s:%u: a NUL byte (not a text file?)", name, lineno);
            return -EINVAL;
        }
        memcpy(line, buf + pos, n);
        line[n] = '\0';
        pos += n + 1;
        uint64_t b;
        if (dist_parse_shape(line, &b, why, sizeof why)) {
            snprintf(err, errlen, "%s:%u: %s", name, lineno, why);
            return -EINVAL;
        }
        if (!b)
            continue;
        if (d->n >= DIST_MAX) {
            snprintf(err, errlen, "%s:%u: more than %d tensors", name, lineno, DIST_MAX);
            return -E2BIG;
        }
        d->v[d->n++] = b;
    }
    if (!d->n) {
        snprintf(err, errlen, "%s: no tensor shapes", name);
        return -EINVAL;
    }
    return 0;
}

/* Read the whole file (at most DIST_FILE_MAX bytes), then parse it. */
#define DIST_FILE_MAX (16u << 20)
static int parse_shapes(const char *path, dist_t *d, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    int rc = file_read_all(path, DIST_FILE_MAX, &buf, &len);
    if (rc == -EFBIG)
        snprintf(err, errlen, "%s: larger than 16 MiB", path);
    else if (rc)
        snprintf(err, errlen, "cannot %s shapes file '%s': %s", rc == -ENOENT || rc == -EACCES ? "open" : "read",
                 path, strerror(-rc));
    if (rc)
        return rc;
    rc = dist_parse_shapes_text(path, buf, len, d, err, errlen);
    free(buf);
    return rc;
}

/* An allocation op of the trace (one that returns a new block of `size`). */
static int trace_is_alloc(unsigned op)
{
    return op == MBT_MALLOC || op == MBT_CALLOC || op == MBT_REALLOC || op == MBT_POSIX_MEMALIGN ||
           op == MBT_ALIGNED_ALLOC || op == MBT_MEMALIGN || op == MBT_VALLOC || op == MBT_PVALLOC;
}

static int trace_keeps(const mbt_event_t *e, uint64_t min)
{
    return trace_is_alloc(MBT_OP(e)) && e->ptr && e->size >= min;
}

/* The alignment e's call asked for: 0 for malloc, calloc and realloc. */
static uint64_t trace_align(const mbt_trace_t *t, const mbt_event_t *e)
{
    switch (MBT_OP(e)) {
    case MBT_POSIX_MEMALIGN:
    case MBT_ALIGNED_ALLOC:
    case MBT_MEMALIGN: return e->arg;
    case MBT_VALLOC:
    case MBT_PVALLOC: return t->page_size;
    default: return 0;
    }
}

/* The sizes of t's successful allocations of at least min, as a list;
 * -ENOENT when there is none. */
static int dist_from_trace(const mbt_trace_t *t, uint64_t min, dist_t *d)
{
    uint64_t total = 0, k = 0;
    memset(d, 0, offsetof(dist_t, v));
    d->kind = DIST_LIST;
    for (size_t i = 0; i < t->nthread; i++)
        for (size_t j = 0; j < t->thread[i].nev; j++)
            total += (uint64_t)trace_keeps(&t->thread[i].ev[j], min);
    if (!total)
        return -ENOENT;
    /* more than DIST_MAX: the k-th kept allocation is taken when it is the
     * first at or past floor(n * total / DIST_MAX), an even stride in order */
    for (size_t i = 0; i < t->nthread && d->n < DIST_MAX; i++)
        for (size_t j = 0; j < t->thread[i].nev && d->n < DIST_MAX; j++) {
            const mbt_event_t *e = &t->thread[i].ev[j];
            if (!trace_keeps(e, min))
                continue;
            if (total <= DIST_MAX ||
                k == (uint64_t)(((unsigned __int128)d->n * total) / DIST_MAX)) {
                d->align[d->n] = trace_align(t, e);
                d->aligned |= d->align[d->n] != 0;
                d->v[d->n++] = e->size;
            }
            k++;
        }
    if (d->n == 1)
        d->kind = DIST_FIXED;
    return 0;
}

/* "FILE" or "FILE:min=SIZE" (the last ":min=" splits, so a path may hold ':'). */
#define DIST_TRACE_MIN_DEFAULT (64u << 10)
static int parse_trace(const char *arg, dist_t *d, char *err, size_t errlen)
{
    char path[1024];
    uint64_t min = DIST_TRACE_MIN_DEFAULT;
    const char *opt = NULL;
    for (const char *p = strstr(arg, ":min="); p; p = strstr(p + 1, ":min="))
        opt = p;
    size_t plen = opt ? (size_t)(opt - arg) : strlen(arg);
    if (!plen || plen >= sizeof path) {
        snprintf(err, errlen, "bad trace spec 'trace:%s' (expected trace:FILE or trace:FILE:min=64K)", arg);
        return -EINVAL;
    }
    snprintf(path, sizeof path, "%.*s", (int)plen, arg);
    if (opt && (units_parse_size(opt + 5, &min) || min == 0)) {
        snprintf(err, errlen, "bad bound '%s' in 'trace:%s' (expected a size such as 64K, at least 1)",
                 opt + 5, arg);
        return -EINVAL;
    }
    mbt_trace_t t;
    char why[512];
    int rc = mbt_read(path, &t, why, sizeof why);
    if (rc) {
        if (rc == -EINVAL && why[0])
            snprintf(err, errlen, "cannot read trace %s", why);
        else
            snprintf(err, errlen, "cannot open trace '%s': %s", path, strerror(-rc));
        return rc;
    }
    rc = dist_from_trace(&t, min, d);
    mbt_free(&t);
    if (rc) {
        char b[32];
        units_format_size(min, b, sizeof b);
        snprintf(err, errlen, "trace '%s': no allocation of at least %s (lower it with :min=)", path, b);
        return -EINVAL;
    }
    return 0;
}

static int one_size(const char *s, uint64_t *v, char *err, size_t errlen, const char *spec)
{
    if (units_parse_size(s, v) || *v == 0) {
        snprintf(err, errlen, "bad size '%s' in '%s' (expected e.g. 16M, 1M/4M/16M, 64K..64M, @shapes.txt or trace:t.mbt)",
                 s, spec);
        return -EINVAL;
    }
    return 0;
}

int dist_parse(const char *spec, dist_t *d, char *err, size_t errlen)
{
    memset(d, 0, offsetof(dist_t, v));
    d->next = 0;
    if (!spec || !*spec) {
        snprintf(err, errlen, "empty size");
        return -EINVAL;
    }
    if (spec[0] == '@')
        return parse_shapes(spec + 1, d, err, errlen);
    if (strncmp(spec, "trace:", 6) == 0)
        return parse_trace(spec + 6, d, err, errlen);
    const char *dots = strstr(spec, "..");
    if (dots) {
        char lo[64];
        if ((size_t)(dots - spec) >= sizeof lo) {
            snprintf(err, errlen, "bad size range '%s'", spec);
            return -EINVAL;
        }
        snprintf(lo, sizeof lo, "%.*s", (int)(dots - spec), spec);
        if (one_size(lo, &d->lo, err, errlen, spec) || one_size(dots + 2, &d->hi, err, errlen, spec))
            return -EINVAL;
        if (d->lo > d->hi) {
            snprintf(err, errlen, "bad size range '%s': the low bound is above the high one", spec);
            return -EINVAL;
        }
        d->kind = DIST_LOGUNIFORM;
        return 0;
    }
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) {
        snprintf(err, errlen, "size list too long");
        return -EINVAL;
    }
    char *save = NULL;
    for (char *t = strtok_r(buf, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (d->n >= DIST_MAX) {
            snprintf(err, errlen, "more than %d sizes", DIST_MAX);
            return -E2BIG;
        }
        if (one_size(t, &d->v[d->n], err, errlen, spec))
            return -EINVAL;
        d->n++;
    }
    if (!d->n || spec[strlen(spec) - 1] == '/' || spec[0] == '/') {
        snprintf(err, errlen, "bad size list '%s'", spec);
        return -EINVAL;
    }
    d->kind = d->n == 1 ? DIST_FIXED : DIST_LIST;
    return 0;
}

uint64_t dist_next(dist_t *d, uint64_t *rng)
{
    switch (d->kind) {
    case DIST_FIXED:
        return d->v[0];
    case DIST_LIST:
    case DIST_SHAPES: {
        uint64_t v = d->v[d->next];
        d->last = d->next;
        d->next = (d->next + 1) % d->n;
        return v;
    }
    case DIST_LOGUNIFORM: {
        if (d->lo == d->hi)
            return d->lo;
        double u = (double)(rng_next(rng) >> 11) * 0x1.0p-53; /* [0, 1) */
        double v = exp(log((double)d->lo) + u * (log((double)d->hi + 1.0) - log((double)d->lo)));
        uint64_t r = (uint64_t)v;
        return r < d->lo ? d->lo : r > d->hi ? d->hi : r;
    }
    }
    return 0;
}

uint64_t dist_align(const dist_t *d)
{
    return d->aligned && d->last < d->n ? d->align[d->last] : 0;
}

uint64_t dist_max(const dist_t *d)
{
    if (d->kind == DIST_LOGUNIFORM)
        return d->hi;
    uint64_t m = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i] > m)
            m = d->v[i];
    return m;
}
