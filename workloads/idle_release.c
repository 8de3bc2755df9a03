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
    uint64_t peak = wl_get(a, "peak"), keep = wl_get(a, "keep"), seed = wl_get(a, "seed");
    uint64_t idle_ms = wl_get(a, "idle_ms"), sample_ms = wl_get(a, "sample_ms");
    uint64_t tick_ms = wl_get(a, "tick_ms");
    if (idle_ms / sample_ms + 2 > IR_MAX_SAMPLES)
        sample_ms = idle_ms / (IR_MAX_SAMPLES - 2) + 1;
    r->page = sysconf(_SC_PAGESIZE);
    r->statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (r->statm < 0) {
        int e = errno;
        ir_free(r);
        return -e;
    }

    /* The sizes, drawn once to count them; drawn again, identically, below. */
    dist_t *d0 = malloc(sizeof *d0);
    if (!d0) {
        ir_free(r);
        return -ENOMEM;
    }
    memcpy(d0, &r->dist, sizeof *d0);
    uint64_t rng = rng_seed(seed), total = 0;
    while (total < peak) {
        uint64_t s = dist_next(d0, &rng);
        total += s < peak - total ? s : peak - total;
        if (++r->n > IR_MAX_OBJECTS) {
            free(d0);
            ir_free(r);
            return -ERANGE;
        }
    }
    free(d0);
    r->maxs = (size_t)(idle_ms / sample_ms + 2);
    r->ptr = calloc(r->n, sizeof *r->ptr);
    r->size = calloc(r->n, sizeof *r->size);
    r->order = calloc(r->n, sizeof *r->order);
    r->st = calloc(r->maxs, sizeof *r->st);
    r->srss = calloc(r->maxs, sizeof *r->srss);
    if (!r->ptr || !r->size || !r->order || !r->st || !r->srss) {
        ir_free(r);
        return -ENOMEM;
    }

    /* fault the bookkeeping in now, so that it is in the baseline, not the curve */
    ir_prefault(r->ptr, r->n * sizeof *r->ptr);
    ir_prefault(r->size, r->n * sizeof *r->size);
    ir_prefault(r->order, r->n * sizeof *r->order);
    ir_prefault(r->st, r->maxs * sizeof *r->st);
    ir_prefault(r->srss, r->maxs * sizeof *r->srss);
    uint64_t h = 0xcbf29ce484222325ULL;
    uint64_t rss_base = ir_rss(r);
    rng = rng_seed(seed);
    total = 0;
    for (size_t i = 0; i < r->n; i++) {
        uint64_t s = dist_next(&r->dist, &rng);
        r->size[i] = s < peak - total ? s : peak - total;
        total += r->size[i];
        r->ptr[i] = malloc(r->size[i]);
        if (!r->ptr[i]) {
            ir_free(r);
            return -ENOMEM;
        }
        memset(r->ptr[i], ir_byte(seed, i), r->size[i]);
        h = ir_hash(h, r->size[i]);
    }
    uint64_t rss_peak = ir_rss(r);

    /* Free all but KEEP% of the bytes, in a seeded random order. */
    for (size_t i = 0; i < r->n; i++)
        r->order[i] = i;
    for (size_t i = r->n; i > 1; i--) {
        size_t j = (size_t)rng_below(&rng, i);
        size_t x = r->order[i - 1];
        r->order[i - 1] = r->order[j];
        r->order[j] = x;
    }
    uint64_t target = total / 100 * keep + total % 100 * keep / 100, kept = 0, freed = 0;
    for (size_t k = 0; k < r->n; k++) {
        size_t i = r->order[k];
        if (kept < target) {
            kept += r->size[i];
            continue;
        }
        freed += r->size[i];
        free(r->ptr[i]);
        r->ptr[i] = NULL;
    }
    double t_free = region_now();
    uint64_t rss_after_free = ir_rss(r);

    /* The idle: sleep, sample, and (TICK_MS) one allocation now and then. */
    region_begin();
    uint64_t tick_ops = 0, tick_bytes = 0;
    double end = t_free + (double)idle_ms * 1e-3;
    double next_sample = region_now(), next_tick = tick_ms ? next_sample + (double)tick_ms * 1e-3 : 0;
    int rc = 0;
    for (;;) {
        double now = region_now();
        if (now >= next_sample && r->ns < r->maxs) {
            r->st[r->ns] = now - t_free;
            r->srss[r->ns++] = ir_rss(r);
            while (next_sample <= now) /* a late wake-up skips samples, never bunches them */
                next_sample += (double)sample_ms * 1e-3;
        }
        if (tick_ms && now >= next_tick && now < end) {
            uint64_t s = dist_next(&r->dist, &rng);
            unsigned char *p = malloc(s);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            memset(p, (int)(s & 0xff), s);
            h = ir_hash(h, s + p[s - 1]);
            free(p);
            tick_ops++;
            tick_bytes += s;
            next_tick += (double)tick_ms * 1e-3;
        }
        if (now >= end)
            break;
        double wake = next_sample < end ? next_sample : end;
        if (tick_ms && next_tick < wake)
            wake = next_tick;
        ir_sleep_until(wake);
    }
    uint64_t rss_end = ir_rss(r);
    region_end();
    if (r->ns < r->maxs) {
        r->st[r->ns] = region_now() - t_free;
        r->srss[r->ns++] = rss_end;
    }

    /* What stayed live is intact: one byte per page and the last one. */
    for (size_t i = 0; i < r->n; i++) {
        if (!r->ptr[i])
            continue;
        unsigned char want = ir_byte(seed, i);
        for (uint64_t off = 0; off < r->size[i]; off += 4096)
            if (r->ptr[i][off] != want)
                rc = rc ? rc : -EIO;
        h = ir_hash(h, r->ptr[i][r->size[i] - 1] + ((uint64_t)i << 8));
    }
    h = ir_hash(h, kept);

    /* Returned = peak RSS minus final RSS; t_half = when half of it was gone
     * (-1 when less than 1% of the freed bytes came back: noise, not a curve). */
    uint64_t returned = rss_peak > rss_end ? rss_peak - rss_end : 0;
    double t_half = -1;
    if (returned && returned >= freed / 100) {
        uint64_t level = rss_peak - returned / 2;
        if (rss_after_free <= level)
            t_half = 0;
        for (size_t s = 0; t_half < 0 && s < r->ns; s++)
            if (r->srss[s] <= level)
                t_half = r->st[s];
    }
    /* the same for what the idle alone gave back (purging by decay) */
    double t_half_idle = -1;
    if (rss_after_free > rss_end && rss_after_free - rss_end >= freed / 100) {
        uint64_t level = rss_after_free - (rss_after_free - rss_end) / 2;
        for (size_t s = 0; t_half_idle < 0 && s < r->ns; s++)
            if (r->srss[s] <= level)
                t_half_idle = r->st[s];
    }
    uint64_t at_free = rss_peak > rss_after_free ? rss_peak - rss_after_free : 0;
    uint64_t in_idle = rss_after_free > rss_end ? rss_after_free - rss_end : 0;
    size_t n = r->n, ns = r->ns;
    ir_free(r);
    if (rc)
        return rc;
    res->region_s = region_seconds();
    res->bytes = tick_bytes;
    res->ops = tick_ops;
    res->throughput = freed ? (double)returned / (double)freed : 0;
    res->unit = "fraction";
    res->checksum = h;
    snprintf(res->extra, sizeof res->extra,
             "objects=%zu;freed_bytes=%llu;kept_bytes=%llu;rss_base_kib=%llu;rss_peak_kib=%llu;"
             "rss_after_free_kib=%llu;rss_end_kib=%llu;returned_at_free=%.4f;returned_in_idle=%.4f;"
             "t_half_ms=%.1f;t_half_idle_ms=%.1f;rss_samples=%zu;tick_ops=%llu",
             n, (unsigned long long)freed, (unsigned long long)kept,
             (unsigned long long)(rss_base / 1024), (unsigned long long)(rss_peak / 1024),
             (unsigned long long)(rss_after_free / 1024), (unsigned long long)(rss_end / 1024),
             freed ? (double)at_free / (double)freed : 0.0,
             freed ? (double)in_idle / (double)freed : 0.0, t_half < 0 ? -1.0 : t_half * 1e3,
             t_half_idle < 0 ? -1.0 : t_half_idle * 1e3, ns,
             (unsigned long long)tick_ops);
    return 0;
}

static const wl_param_t idle_release_params[] = {
    {"peak", WLP_SIZE, "256M", 4096, 1ULL << 40, NULL, "bytes",
     "bytes allocated (every byte written) before the free phase"},
    {"size", WLP_SIZES, "64K..4M", 1, 1ULL << 36, NULL, "bytes",
     "object sizes: 1M, a list 64K/1M (cycling), 64K..4M (log-uniform) or @shapes.txt"},
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
};
