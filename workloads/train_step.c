/* train_step.c - a model-training-like loop.  Each step allocates the
 * activations of LAYERS in order, each computed by a pool of THREADS from
 * the layer before; then walks back, allocating a gradient per layer
 * (computed from the gradient above and the layer's activation) and freeing
 * that activation; the gradients are freed at the end of the step, after
 * they update the layer's weight.  Page faults on freshly allocated buffers
 * happen in the pool, competing with real arithmetic, as in a framework.
 * Reports steps per second of step time and the step-time distribution. */
#include "dist.h"
#include "units.h"
#include "hist.h"
#include "region.h"
#include "workload.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TS_MAX_THREADS 64
#define TS_LOGU_LAYERS 8  /* layers drawn (once per run) from a log-uniform LAYERS */
#define TS_ALIGN 16       /* elements per slice boundary: 64 bytes, no shared cache line */

/* One layer's compute: out[j] = f(in[j mod nin] + aux[j] + j) for every
 * 32-bit element j, f being PASSES rounds of multiply-xorshift under salt. */
typedef struct {
    uint32_t *out;
    const uint32_t *in, *aux;
    size_t nout, nin, naux;
    uint32_t salt;
    unsigned passes;
} ts_job_t;

typedef struct {
    uint64_t sum; /* this thread's share of the job's reduction */
    char pad[56];
} ts_part_t;

typedef struct ts_pool ts_pool_t;

typedef struct {
    ts_pool_t *pool;
    unsigned idx;
} ts_arg_t;

struct ts_pool {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    ts_job_t job;
    uint64_t gen;     /* bumped once per job; each thread runs each job once */
    unsigned pending; /* threads still computing the current job */
    bool quit;
    unsigned n;
    pthread_t tid[TS_MAX_THREADS];
    ts_arg_t arg[TS_MAX_THREADS];
    ts_part_t part[TS_MAX_THREADS];
};

static inline uint32_t ts_mix(uint32_t x, uint32_t salt, unsigned passes)
{
    for (unsigned p = 0; p < passes; p++) {
        x ^= salt;
        x *= 0x9e3779b1u;
        x ^= x >> 15;
    }
    return x;
}

/* Elements [lo, hi) of a job; returns the sum of the values written (a sum,
 * so the job's result does not depend on how it was split). */
static uint64_t ts_compute(const ts_job_t *j, size_t lo, size_t hi)
{
    uint64_t s = 0;
    size_t k = j->nin ? lo % j->nin : 0;
    for (size_t e = lo; e < hi; e++) {
        uint32_t x = (uint32_t)e;
        if (j->nin) {
            x += j->in[k];
            if (++k == j->nin)
                k = 0;
        }
        if (j->naux)
            x += j->aux[e];
        x = ts_mix(x, j->salt, j->passes);
        j->out[e] = x;
        s += x;
    }
    return s;
}

static void ts_slice(size_t n, unsigned t, unsigned nt, size_t *lo, size_t *hi)
{
    *lo = t ? (size_t)((uint64_t)n * t / nt) & ~(size_t)(TS_ALIGN - 1) : 0;
    *hi = t + 1 < nt ? (size_t)((uint64_t)n * (t + 1) / nt) & ~(size_t)(TS_ALIGN - 1) : n;
    if (*hi < *lo)
        *hi = *lo;
}

static void *ts_thread(void *argp)
{
    ts_arg_t *arg = argp;
    ts_pool_t *p = arg->pool;
    uint64_t seen = 0;
    region_pin_thread(arg->idx);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit)
            break;
        seen = p->gen;
        ts_job_t job = p->job;
        pthread_mutex_unlock(&p->mu);
        size_t lo, hi;
        ts_slice(job.nout, arg->idx, p->n, &lo, &hi);
        p->part[arg->idx].sum = ts_compute(&job, lo, hi);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Hands one job to every thread and waits until all are done. */
static uint64_t ts_pool_run(ts_pool_t *p, const ts_job_t *job)
{
    pthread_mutex_lock(&p->mu);
    p->job = *job;
    p->pending = p->n;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    while (p->pending)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    uint64_t s = 0;
    for (unsigned t = 0; t < p->n; t++)
        s += p->part[t].sum;
    return s;
}

static void ts_pool_stop(ts_pool_t *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned t = 0; t < p->n; t++)
        pthread_join(p->tid[t], NULL);
    p->n = 0;
}

static int ts_pool_start(ts_pool_t *p, unsigned n)
{
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->n = 0;
    for (unsigned t = 0; t < n; t++) {
        p->arg[t] = (ts_arg_t){p, t};
        int rc = pthread_create(&p->tid[t], NULL, ts_thread, &p->arg[t]);
        if (rc) {
            ts_pool_stop(p);
            return -rc;
        }
        p->n++;
    }
    return 0;
}

static void ts_pool_destroy(ts_pool_t *p)
{
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
}

typedef struct {
    ts_pool_t pool;
    hist_t hist;
    dist_t dist;
    size_t nl;
    uint64_t *size;   /* bytes of each layer */
    uint32_t *weight; /* one scalar weight per layer, updated by its gradient */
    uint32_t **act, **grad;
    unsigned passes;
    uint64_t h;       /* checksum: every job's reduction, in order */
} ts_t;

static uint64_t ts_fnv(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
    return h;
}

/* A buffer computed by the pool; the 0-3 bytes past the last whole element
 * are written here so that every byte allocated is written. */
static uint64_t ts_fill(ts_t *t, uint32_t *out, uint64_t size, const uint32_t *in, uint64_t insize,
                        const uint32_t *aux, uint32_t salt)
{
    ts_job_t job = {out, in, aux, size / 4, in ? insize / 4 : 0, aux ? size / 4 : 0, salt, t->passes};
    uint64_t s = ts_pool_run(&t->pool, &job);
    if (size % 4)
        memset((unsigned char *)out + size / 4 * 4, (int)(salt & 0xff), size % 4);
    return s;
}

static void ts_release(ts_t *t)
{
    for (size_t i = 0; i < t->nl; i++) {
        free(t->act[i]);
        free(t->grad[i]);
        t->act[i] = t->grad[i] = NULL;
    }
}

/* One training step: forward, backward, update.  0 or -ENOMEM. */
static int ts_step(ts_t *t, uint64_t step)
{
    size_t nl = t->nl;
    uint32_t step_salt = (uint32_t)(step * 0x85ebca6bu);
    for (size_t i = 0; i < nl; i++) {
        t->act[i] = malloc(t->size[i]);
        if (!t->act[i])
            return -ENOMEM;
        uint64_t s = ts_fill(t, t->act[i], t->size[i], i ? t->act[i - 1] : NULL,
                             i ? t->size[i - 1] : 0, NULL, t->weight[i] ^ step_salt);
        t->h = ts_fnv(t->h, s);
    }
    for (size_t i = nl; i-- > 0;) {
        t->grad[i] = malloc(t->size[i]);
        if (!t->grad[i])
            return -ENOMEM;
        /* the top layer's gradient comes from its own output (the loss) */
        const uint32_t *up = i + 1 < nl ? t->grad[i + 1] : t->act[i];
        uint64_t upsize = i + 1 < nl ? t->size[i + 1] : t->size[i];
        uint64_t s = ts_fill(t, t->grad[i], t->size[i], up, upsize, t->act[i],
                             ~t->weight[i] ^ step_salt);
        t->h = ts_fnv(t->h, s);
        t->weight[i] = t->weight[i] * 0x9e3779b1u + (uint32_t)s + (uint32_t)(s >> 32);
        free(t->act[i]);
        t->act[i] = NULL;
    }
    for (size_t i = 0; i < nl; i++) {
        free(t->grad[i]);
        t->grad[i] = NULL;
    }
    return 0;
}

static void ts_sleep_ms(uint64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) && errno == EINTR)
        ;
}

#define ts_now_ns mono_ns

static void ts_free(ts_t *t)
{
    if (t->act && t->grad)
        ts_release(t);
    free(t->act);
    free(t->grad);
    free(t->size);
    free(t->weight);
    free(t);
}

static int train_step_run(const wl_args_t *a, wl_result_t *res)
{
    char err[512];
    ts_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    if (dist_parse(wl_get_str(a, "layers"), &t->dist, err, sizeof err)) {
        free(t);
        return -EINVAL; /* the harness checked the spec already */
    }
    uint64_t seed = wl_get(a, "seed");
    uint64_t rng = rng_seed(seed);
    uint64_t steps = wl_get(a, "steps"), warmup = wl_get(a, "warmup");
    uint64_t idle_ms = wl_get(a, "idle_ms");
    unsigned threads = (unsigned)wl_get(a, "threads");
    t->passes = (unsigned)wl_get(a, "passes");
    t->nl = t->dist.kind == DIST_LOGUNIFORM ? TS_LOGU_LAYERS : t->dist.n;
    t->size = calloc(t->nl, sizeof *t->size);
    t->weight = calloc(t->nl, sizeof *t->weight);
    t->act = calloc(t->nl, sizeof *t->act);
    t->grad = calloc(t->nl, sizeof *t->grad);
    if (!t->size || !t->weight || !t->act || !t->grad) {
        ts_free(t);
        return -ENOMEM;
    }
    uint64_t step_bytes = 0, live_peak = 0;
    for (size_t i = 0; i < t->nl; i++) {
        t->size[i] = dist_next(&t->dist, &rng);
        t->weight[i] = (uint32_t)rng_next(&rng);
        step_bytes += 2 * t->size[i];
        live_peak += t->size[i];
    }
    hist_init(&t->hist);
    int rc = ts_pool_start(&t->pool, threads);
    if (rc) {
        ts_pool_destroy(&t->pool);
        ts_free(t);
        return rc;
    }

    t->h = 0xcbf29ce484222325ULL;
    bool begun = false;
    uint64_t busy_ns = 0, done = 0;
    for (uint64_t step = 0; step < warmup + steps && !rc; step++) {
        if (step && idle_ms)
            ts_sleep_ms(idle_ms); /* the gap: decay clocks run, nothing is allocated */
        if (step == warmup) {
            region_begin(); /* the pool is parked on its condition variable */
            begun = true;
        }
        uint64_t t0 = ts_now_ns();
        rc = ts_step(t, step);
        uint64_t dt = ts_now_ns() - t0;
        if (begun && !rc) {
            hist_record(&t->hist, dt);
            busy_ns += dt;
            done++;
        }
    }
    if (begun)
        region_end();
    ts_pool_stop(&t->pool);
    ts_pool_destroy(&t->pool);
    uint64_t h = t->h;
    size_t nl = t->nl;
    hist_t *hg = &t->hist;
    if (rc) {
        ts_free(t);
        return rc;
    }
    double busy_s = (double)busy_ns * 1e-9;
    res->region_s = region_seconds();
    res->bytes = step_bytes * done;
    res->ops = 2 * (uint64_t)nl * done;
    res->throughput = busy_s > 0 ? (double)done / busy_s : 0;
    res->unit = "steps/s";
    res->checksum = h;
    res->lat_what = "step";
    res->lat_count = hg->total;
    res->lat_p50_us = (double)hist_percentile(hg, 50) * 1e-3;
    res->lat_p99_us = (double)hist_percentile(hg, 99) * 1e-3;
    res->lat_p999_us = (double)hist_percentile(hg, 99.9) * 1e-3;
    res->lat_max_us = (double)hg->max * 1e-3;
    snprintf(res->extra, sizeof res->extra,
             "layers=%zu;step_bytes=%llu;live_peak_bytes=%llu;threads=%u;passes=%u;idle_ms=%llu;"
             "busy_s=%.6f;idle_s=%.6f",
             nl, (unsigned long long)step_bytes, (unsigned long long)live_peak, threads, t->passes,
             (unsigned long long)idle_ms, busy_s, res->region_s > busy_s ? res->region_s - busy_s : 0.0);
    ts_free(t);
    return 0;
}

static const wl_param_t train_step_params[] = {
    {"layers", WLP_SIZES, "8M/16M/32M/16M/8M", 1, 1ULL << 40, NULL, "bytes",
     "activation size of each layer, in order (a list, one size, @shapes.txt, "
     "trace:t.mbt[:min=64K]; a log-uniform range draws 8 layers once per run)"},
    {"steps", WLP_UINT, "20", 1, 1000000000, NULL, "steps", "measured steps"},
    {"warmup", WLP_UINT, "3", 0, 1000000000, NULL, "steps", "steps run before the measured region"},
    {"threads", WLP_UINT, "2", 1, TS_MAX_THREADS, NULL, "threads",
     "compute pool: each buffer is split among this many threads (which fault its pages in)"},
    {"passes", WLP_UINT, "1", 1, 100000, NULL, "rounds",
     "arithmetic rounds per 4-byte element computed: compute per byte against fault cost"},
    {"idle_ms", WLP_UINT, "0", 0, 3600000, NULL, "ms",
     "idle gap before each step (no allocation; decay clocks run); excluded from step time"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the weights and of random sizes"},
};

const wl_t wl_train_step = {
    .name = "train_step",
    .help = "training steps: activations allocated layer by layer, gradients in reverse while "
            "activations are freed, a thread pool computing into every buffer; steps/s and step "
            "latency",
    .params = train_step_params,
    .nparams = sizeof train_step_params / sizeof *train_step_params,
    .run = train_step_run,
    .metric = "training steps per second",
    .scale = "steps",
    .smoke = "train_step:layers=1M/2M/1M,steps=3,warmup=1,threads=2",
};
