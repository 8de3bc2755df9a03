/* idle_release.c - the memory-return side of the trade-off: what decay
 * buys.  Allocates objects until PEAK bytes are live (every byte written),
 * frees all but KEEP percent of them in a seeded random order, then idles
 * for IDLE_MS making no allocator call (unless TICK_MS asks for a trickle),
 * sampling its own RSS.  The measured region is the idle; the result is the
 * fraction of the freed bytes the RSS gave back by its end. */
#include "dist.h"
#include "region.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define IR_MAX_SAMPLES 100000     /* a longer idle samples less often */
#define IR_MAX_OBJECTS (1u << 26) /* 1.5 GiB of bookkeeping: PEAK/SIZE beyond is refused */

typedef struct {
    dist_t dist;
    size_t n;
    unsigned char **ptr;
    uint64_t *size;
    size_t *order;
    double *st;       /* sample times, s after the free phase */
    uint64_t *srss;   /* sampled RSS, bytes */
    size_t ns, maxs;
    int statm;
    long page;
    uint64_t seed, rng, h;            /* the draws, and the checksum */
    uint64_t total, kept, freed;      /* bytes allocated, kept, freed */
    uint64_t tick_ops, tick_bytes;    /* the idle's allocations */
} ir_t;

/* Resident bytes from /proc/self/statm, read without allocating. */
static uint64_t ir_rss(const ir_t *r)
{
    char buf[128];
    ssize_t got = pread(r->statm, buf, sizeof buf - 1, 0);
    if (got <= 0)
        return 0;
    buf[got] = '\0';
    char *p = strchr(buf, ' ');
    return p ? strtoull(p + 1, NULL, 10) * (uint64_t)r->page : 0;
}

static uint64_t ir_hash(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ULL;
}

/* The byte object i is filled with: depends on the seed and i only. */
static unsigned char ir_byte(uint64_t seed, size_t i)
{
    return (unsigned char)((seed * 0x9e3779b97f4a7c15ULL + i * 0xbf58476d1ce4e5b9ULL) >> 56);
}

/* Writes a zero into every page of zeroed memory (a memset the compiler
 * cannot drop after calloc). */
static void ir_prefault(void *p, size_t len)
{
    volatile unsigned char *b = p;
    for (size_t off = 0; off < len; off += 4096)
        b[off] = 0;
    if (len)
        b[len - 1] = 0;
}

static void ir_sleep_until(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void ir_free(ir_t *r)
{
    if (r->ptr)
        for (size_t i = 0; i < r->n; i++)
            free(r->ptr[i]);
    free(r->ptr);
    free(r->size);
    free(r->order);
    free(r->st);
    free(r->srss);
    if (r->statm >= 0)
        close(r->statm);
    free(r);
}

/* The objects' count: the sizes drawn once (identically to ir_fill) until
 * they reach PEAK: 0, -ENOMEM or -ERANGE. */
static int ir_count(ir_t *r, uint64_t peak, uint64_t seed)
{
    dist_t *d0 = malloc(sizeof *d0);
    if (!d0)
        return -ENOMEM;
    memcpy(d0, &r->dist, sizeof *d0);
    uint64_t rng = rng_seed(seed), total = 0;
    int rc = 0;
    while (total < peak && !rc) {
        uint64_t s = dist_next(d0, &rng);
        total += s < peak - total ? s : peak - total;
        if (++r->n > IR_MAX_OBJECTS)
            rc = -ERANGE;
    }
    free(d0);
    return rc;
}

/* The bookkeeping arrays, faulted in now so that they are in the baseline,
 * not the curve. */
static int ir_book(ir_t *r)
{
    r->ptr = calloc(r->n, sizeof *r->ptr);
    r->size = calloc(r->n, sizeof *r->size);
    r->order = calloc(r->n, sizeof *r->order);
    r->st = calloc(r->maxs, sizeof *r->st);
    r->srss = calloc(r->maxs, sizeof *r->srss);
    if (!r->ptr || !r->size || !r->order || !r->st || !r->srss)
        return -ENOMEM;
    ir_prefault(r->ptr, r->n * sizeof *r->ptr);
    ir_prefault(r->size, r->n * sizeof *r->size);
    ir_prefault(r->order, r->n * sizeof *r->order);
    ir_prefault(r->st, r->maxs * sizeof *r->st);
    ir_prefault(r->srss, r->maxs * sizeof *r->srss);
    return 0;
}

/* Allocates and fills the objects up to PEAK bytes (r->total). */
static int ir_fill(ir_t *r, uint64_t peak)
{
    r->rng = rng_seed(r->seed);
    r->total = 0;
    for (size_t i = 0; i < r->n; i++) {
        uint64_t s = dist_next(&r->dist, &r->rng);
        r->size[i] = s < peak - r->total ? s : peak - r->total;
        r->total += r->size[i];
        r->ptr[i] = malloc(r->size[i]);
        if (!r->ptr[i])
            return -ENOMEM;
        memset(r->ptr[i], ir_byte(r->seed, i), r->size[i]);
        r->h = ir_hash(r->h, r->size[i]);
    }
    return 0;
}

/* Frees all but KEEP% of the bytes, in a seeded random order. */
static void ir_free_most(ir_t *r, uint64_t keep)
{
    for (size_t i = 0; i < r->n; i++)
        r->order[i] = i;
    for (size_t i = r->n; i > 1; i--) {
        size_t j = (size_t)rng_below(&r->rng, i);
        size_t x = r->order[i - 1];
        r->order[i - 1] = r->order[j];
        r->order[j] = x;
    }
    uint64_t target = r->total / 100 * keep + r->total % 100 * keep / 100;
    for (size_t k = 0; k < r->n; k++) {
        size_t i = r->order[k];
        if (r->kept < target) {
            r->kept += r->size[i];
            continue;
        }
        r->freed += r->size[i];
        free(r->ptr[i]);
        r->ptr[i] = NULL;
    }
}

/* The idle, in the region: sleep, sample RSS every SAMPLE_MS, and (TICK_MS)
 * one allocation now and then, until IDLE_MS after t_free.  0 or -ENOMEM. */
static int ir_idle(ir_t *r, double t_free, uint64_t idle_ms, uint64_t sample_ms, uint64_t tick_ms)
{
    double end = t_free + (double)idle_ms * 1e-3;
    double next_sample = region_now(), next_tick = tick_ms ? next_sample + (double)tick_ms * 1e-3 : 0;
    for (;;) {
        double now = region_now();
        if (now >= next_sample && r->ns < r->maxs) {
            r->st[r->ns] = now - t_free;
            r->srss[r->ns++] = ir_rss(r);
            while (next_sample <= now) /* a late wake-up skips samples, never bunches them */
                next_sample += (double)sample_ms * 1e-3;
        }
        if (tick_ms && now >= next_tick && now < end) {
            uint64_t s = dist_next(&r->dist, &r->rng);
            unsigned char *p = malloc(s);
            if (!p)
                return -ENOMEM;
            memset(p, (int)(s & 0xff), s);
            r->h = ir_hash(r->h, s + p[s - 1]);
            free(p);
            r->tick_ops++;
            r->tick_bytes += s;
            next_tick += (double)tick_ms * 1e-3;
        }
        if (now >= end)
            return 0;
        double wake = next_sample < end ? next_sample : end;
        if (tick_ms && next_tick < wake)
            wake = next_tick;
        ir_sleep_until(wake);
    }
}

/* What stayed live is intact (one byte per page and the last one): 0 or -EIO. */
static int ir_verify(ir_t *r)
{
    int rc = 0;
    for (size_t i = 0; i < r->n; i++) {
        if (!r->ptr[i])
            continue;
        unsigned char want = ir_byte(r->seed, i);
        for (uint64_t off = 0; off < r->size[i]; off += 4096)
            if (r->ptr[i][off] != want)
                rc = -EIO;
        r->h = ir_hash(r->h, r->ptr[i][r->size[i] - 1] + ((uint64_t)i << 8));
    }
    r->h = ir_hash(r->h, r->kept);
    return rc;
}

/* When the RSS first fell to LEVEL or below, s after the free; -1: never. */
static double ir_time_at(const ir_t *r, uint64_t level)
{
    for (size_t s = 0; s < r->ns; s++)
        if (r->srss[s] <= level)
            return r->st[s];
    return -1;
}

/* Returned = peak RSS minus final RSS; t_half = when half of it was gone,
 * t_half_idle the same for what the idle alone gave back (purging by decay);
 * -1 when less than 1% of the freed bytes came back: noise, not a curve. */
static void ir_report(const ir_t *r, const uint64_t rss[4], wl_result_t *res)
{
    uint64_t rss_base = rss[0], rss_peak = rss[1], rss_after_free = rss[2], rss_end = rss[3];
    uint64_t freed = r->freed;
    uint64_t returned = rss_peak > rss_end ? rss_peak - rss_end : 0;
    double t_half = -1;
    if (returned && returned >= freed / 100) {
        uint64_t level = rss_peak - returned / 2;
        t_half = rss_after_free <= level ? 0 : ir_time_at(r, level);
    }
    double t_half_idle = -1;
    if (rss_after_free > rss_end && rss_after_free - rss_end >= freed / 100)
        t_half_idle = ir_time_at(r, rss_after_free - (rss_after_free - rss_end) / 2);
    uint64_t at_free = rss_peak > rss_after_free ? rss_peak - rss_after_free : 0;
    uint64_t in_idle = rss_after_free > rss_end ? rss_after_free - rss_end : 0;
    res->region_s = region_seconds();
    res->bytes = r->tick_bytes;
    res->ops = r->tick_ops;
    res->throughput = freed ? (double)returned / (double)freed : 0;
    res->unit = "fraction";
    res->checksum = r->h;
    snprintf(res->extra, sizeof res->extra,
             "objects=%zu;freed_bytes=%llu;kept_bytes=%llu;rss_base_kib=%llu;rss_peak_kib=%llu;"
             "rss_after_free_kib=%llu;rss_end_kib=%llu;returned_at_free=%.4f;returned_in_idle=%.4f;"
             "t_half_ms=%.1f;t_half_idle_ms=%.1f;rss_samples=%zu;tick_ops=%llu",
             r->n, (unsigned long long)freed, (unsigned long long)r->kept,
             (unsigned long long)(rss_base / 1024), (unsigned long long)(rss_peak / 1024),
             (unsigned long long)(rss_after_free / 1024), (unsigned long long)(rss_end / 1024),
             freed ? (double)at_free / (double)freed : 0.0,
             freed ? (double)in_idle / (double)freed : 0.0, t_half < 0 ? -1.0 : t_half * 1e3,
             t_half_idle < 0 ? -1.0 : t_half_idle * 1e3, r->ns,
             (unsigned long long)r->tick_ops);
}

static int idle_release_run(const wl_args_t *a, wl_result_t *res)
{
    char err[512];
    ir_t *r = calloc(1, sizeof *r);
    if (!r)
        return -ENOMEM;
    r->statm = -1;
    if (dist_parse(wl_get_str(a, "size"), &r->dist, err, sizeof err)) {
        ir_free(r);
        return -EINVAL; /* the harness checked the spec already */
    }
    uint64_t peak = wl_get(a, "peak"), keep = wl_get(a, "keep");
    uint64_t idle_ms = wl_get(a, "idle_ms"), sample_ms = wl_get(a, "sample_ms");
    uint64_t tick_ms = wl_get(a, "tick_ms");
    if (idle_ms / sample_ms + 2 > IR_MAX_SAMPLES)
        sample_ms = idle_ms / (IR_MAX_SAMPLES - 2) + 1;
    r->seed = wl_get(a, "seed");
    r->h = 0xcbf29ce484222325ULL;
    r->page = sysconf(_SC_PAGESIZE);
    r->statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    r->maxs = (size_t)(idle_ms / sample_ms + 2);
    int rc = r->statm < 0 ? -errno : ir_count(r, peak, r->seed);
    if (!rc)
        rc = ir_book(r);
    uint64_t rss[4] = {0}; /* base, peak, after the free, end */
    if (!rc) {
        rss[0] = ir_rss(r);
        rc = ir_fill(r, peak);
    }
    if (rc) {
        ir_free(r);
        return rc;
    }
    rss[1] = ir_rss(r);
    ir_free_most(r, keep);
    double t_free = region_now();
    rss[2] = ir_rss(r);

    region_begin();
    rc = ir_idle(r, t_free, idle_ms, sample_ms, tick_ms);
    rss[3] = ir_rss(r);
    region_end();
    if (r->ns < r->maxs) {
        r->st[r->ns] = region_now() - t_free;
        r->srss[r->ns++] = rss[3];
    }
    int bad = ir_verify(r);
    rc = rc ? rc : bad;
    if (!rc)
        ir_report(r, rss, res);
    ir_free(r);
    return rc;
}

static const wl_param_t idle_release_params[] = {
    {"peak", WLP_SIZE, "256M", 4096, 1ULL << 40, NULL, "bytes",
     "bytes allocated (every byte written) before the free phase"},
    {"size", WLP_SIZES, "64K..4M", 1, 1ULL << 36, NULL, "bytes",
     "object sizes: 1M, a list 64K/1M (cycling), 64K..4M (log-uniform), @shapes.txt or "
     "trace:t.mbt[:min=64K] (a recording's allocation sizes)"},
    {"keep", WLP_UINT, "10", 0, 100, NULL, "%",
     "percent of the peak bytes kept live after the free phase (objects chosen at random)"},
    {"idle_ms", WLP_UINT, "2000", 0, 3600000, NULL, "ms",
     "idle after the free phase (the measured region): no allocator call"},
    {"sample_ms", WLP_UINT, "10", 1, 60000, NULL, "ms", "period of the workload's own RSS samples"},
    {"tick_ms", WLP_UINT, "0", 0, 3600000, NULL, "ms",
     "when not 0: one malloc/write/free of a drawn size every TICK_MS during the idle (a quiet "
     "service: allocators that purge only when called get the chance)"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the sizes and of what is kept"},
};

const wl_t wl_idle_release = {
    .name = "idle_release",
    .help = "allocate to PEAK, free all but KEEP%, idle IDLE_MS sampling RSS: the fraction of the "
            "freed bytes given back to the kernel by the end of the idle",
    .params = idle_release_params,
    .nparams = sizeof idle_release_params / sizeof *idle_release_params,
    .run = idle_release_run,
    .metric = "fraction of freed memory returned",
    .traits = "idle_region,trade_off",
    .smoke = "idle_release:peak=8M,size=64K..1M,idle_ms=50,sample_ms=5",
};
