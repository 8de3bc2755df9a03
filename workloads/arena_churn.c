/* arena_churn.c - allocation churn across threads, like a framework's
 * inter-op thread pool.  Each thread keeps LIVE objects in a ring and per
 * op replaces one slot chosen at random (so lifetimes are geometric); the
 * object it replaces is freed there, or with probability REMOTE% handed
 * through a lock-free SPSC queue to the next thread, which frees it.  Sizes
 * mix small, medium and large; TOUCH writes into every object so page faults
 * show.  Reports ops/s and per-op latency percentiles; the checksum depends
 * only on the sizes and values written, never on addresses or timing.
 * Nothing but the objects is allocated inside the measured loop and no
 * object is read back; alloc=stub swaps malloc/free for a trivial allocator
 * to measure what the loop itself costs (tests/bench/bench_churn.py). */
#include "dist.h"
#include "gate.h"
#include "hashmap.h"
#include "units.h"
#include "hist.h"
#include "queue.h"
#include "region.h"
#include "workload.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* Size classes: each is six octaves [2^k, 2^(k+1)), one picked uniformly,
 * then a size uniformly inside it ("log-uniform by octave"). */
#define OCTAVES 6
static const unsigned class_octave0[3] = {4, 10, 16}; /* 16 B, 1 KiB, 64 KiB */
static const char *const class_name[3] = {"small", "medium", "large"};

#define POP_MAX 4         /* remote objects a thread frees per op, at most */
#define HDR 16            /* each object starts with {identity, size} */

/* Ring slots and queue items are tagged pointers: the object's stub class
 * in the top bits (user addresses stay below 2^57), so freeing never reads
 * the object. */
#define TAG_SHIFT 58
#define TAG_PTR(v) ((void *)((v) & ((UINT64_C(1) << TAG_SHIFT) - 1)))
#define TAG_CLASS(v) ((unsigned)((v) >> TAG_SHIFT))

/* The stub allocator: per-thread stacks of free objects in power-of-two
 * classes over bump-allocated 64 MiB chunks; a thread holding stub_keep()
 * free objects of a class gives half of them to a shared pool, and takes
 * from it before bumping, so memory handed between threads stays bounded.
 * Only the pool (rarely used) links through the objects. */
#define STUB_CLASSES 23   /* up to 4 MiB */
#define STUB_CHUNK (64u << 20)
#define STUB_KEEP_BYTES (1u << 20)
#define STUB_KEEP_MAX 64

typedef struct churn churn_t;

/* One queue per cache-line-aligned slot: no false sharing between queues. */
typedef struct {
    spsc_t q;
} __attribute__((aligned(64))) churn_q_t;

typedef struct {
    uint32_t n[STUB_CLASSES];
    void *stack[STUB_CLASSES][STUB_KEEP_MAX];
    char *bump, *end;
    void *chunks;         /* list through each chunk's first word */
    uint64_t nchunks;
} stub_t;

typedef struct {
    churn_t *c;
    unsigned id;
    uint64_t rng;
    uint64_t seq;         /* objects this thread allocated: their identity */
    uint64_t *ring;       /* live objects, tagged (0: empty slot) */
    spsc_t *in, *out;     /* from the previous thread, to the next one */
    hist_t *hist;         /* ns per timed op */
    stub_t stub;
    uint64_t sum;         /* checksum: sum over the objects made */
    int err;
    /* figures of the measured region */
    uint64_t ops, bytes, remote_frees, local_frees, queue_full, nclass[3];
} __attribute__((aligned(64))) churn_thr_t;

struct churn {
    /* read by every op: never written after setup */
    unsigned threads;
    uint64_t ops, warmup, live, stride, timing;
    uint32_t remote, w_large, w_medium, w_total;
    bool stub;
    size_t qcap;
    churn_q_t *q;         /* q[i]: thread i to thread (i+1) % threads */
    void ***qslots;
    churn_thr_t *thr;
    /* written rarely, each on its own line */
    _Alignas(64) atomic_int failed;
    _Alignas(64) atomic_uint warm_done;
    atomic_uint done;
    gate_t gate;
    _Alignas(64) pthread_mutex_t pool_lock; /* the stub's shared pool */
    void *pool[STUB_CLASSES];
};

static inline uint32_t below32(uint64_t r, uint32_t n)
{
    return (uint32_t)(((r & 0xffffffffu) * n) >> 32);
}

#define now_ns mono_ns

static inline unsigned stub_class(uint64_t size)
{
    return size <= 16 ? 4 : 64u - (unsigned)__builtin_clzll(size - 1);
}

/* Free objects of class cls a thread keeps: 1 MiB worth, 2..64 objects. */
static inline uint32_t stub_keep(unsigned cls)
{
    uint32_t n = STUB_KEEP_BYTES >> cls;
    return n < 2 ? 2 : n > STUB_KEEP_MAX ? STUB_KEEP_MAX : n;
}

static void *stub_bump(stub_t *s, unsigned cls)
{
    size_t need = (size_t)1 << cls;
    if (!s->bump || (size_t)(s->end - s->bump) < need) {
        char *chunk = mmap(NULL, STUB_CHUNK, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (chunk == MAP_FAILED)
            return NULL;
        *(void **)chunk = s->chunks;
        s->chunks = chunk;
        s->nchunks++;
        s->bump = chunk + 64;
        s->end = chunk + STUB_CHUNK;
    }
    void *p = s->bump;
    s->bump += need;
    return p;
}

static void *stub_alloc(churn_thr_t *t, unsigned cls)
{
    stub_t *s = &t->stub;
    if (!s->n[cls]) {
        churn_t *c = t->c;
        uint32_t want = stub_keep(cls) / 2;
        pthread_mutex_lock(&c->pool_lock);
        while (s->n[cls] < want && c->pool[cls]) {
            void *p = c->pool[cls];
            c->pool[cls] = *(void **)p;
            s->stack[cls][s->n[cls]++] = p;
        }
        pthread_mutex_unlock(&c->pool_lock);
        if (!s->n[cls])
            return stub_bump(s, cls);
    }
    return s->stack[cls][--s->n[cls]];
}

static void stub_free(churn_thr_t *t, void *p, unsigned cls)
{
    stub_t *s = &t->stub;
    uint32_t keep = stub_keep(cls);
    if (s->n[cls] == keep) {
        churn_t *c = t->c;
        pthread_mutex_lock(&c->pool_lock);
        while (s->n[cls] > keep / 2) {
            void *q = s->stack[cls][--s->n[cls]];
            *(void **)q = c->pool[cls];
            c->pool[cls] = q;
        }
        pthread_mutex_unlock(&c->pool_lock);
    }
    s->stack[cls][s->n[cls]++] = p;
}

static void stub_release(stub_t *s)
{
    while (s->chunks) {
        void *next = *(void **)s->chunks;
        munmap(s->chunks, STUB_CHUNK);
        s->chunks = next;
    }
}

/* Header {identity, size}, then one word every `stride` bytes and the last
 * word, so with stride <= 4 KiB every page of the object is written. */
static inline void obj_fill(unsigned char *p, uint64_t size, uint64_t w, uint64_t stride)
{
    uint64_t hdr[2] = {w, size};
    memcpy(p, hdr, sizeof hdr);
    if (!stride)
        return;
    for (uint64_t off = HDR; off + 8 <= size; off += stride)
        memcpy(p + off, &w, 8);
    if (size >= HDR + 8)
        memcpy(p + size - 8, &w, 8);
}

static inline void obj_free(churn_thr_t *t, uint64_t v)
{
    if (t->c->stub)
        stub_free(t, TAG_PTR(v), TAG_CLASS(v));
    else
        free(TAG_PTR(v));
}

/* One op: free what the previous thread handed over (up to POP_MAX), then
 * replace a random slot of the ring with a new object.  The random numbers
 * drawn never depend on timing, so every run with a seed makes the same
 * objects. */
static inline int churn_op(churn_thr_t *t)
{
    churn_t *c = t->c;
    void *in;
    for (int k = 0; k < POP_MAX && spsc_pop(t->in, &in); k++) {
        obj_free(t, (uint64_t)(uintptr_t)in);
        t->remote_frees++;
    }
    /* r1: slot (low 32 bits), hand over or not (high 32);
     * r2: class (low 32), octave (11 bits), offset in the octave (21 bits) */
    uint64_t r1 = rng_next(&t->rng), r2 = rng_next(&t->rng);
    uint64_t *slot = &t->ring[below32(r1, (uint32_t)c->live)];
    uint64_t old = *slot;
    if (old) {
        if (below32(r1 >> 32, 100) < c->remote) {
            if (!spsc_push(t->out, (void *)(uintptr_t)old)) {
                t->queue_full++;
                obj_free(t, old);
                t->local_frees++;
            }
        } else {
            obj_free(t, old);
            t->local_frees++;
        }
    }
    uint32_t u = below32(r2, c->w_total);
    unsigned cls = u < c->w_large ? 2 : u < c->w_large + c->w_medium ? 1 : 0;
    unsigned k = class_octave0[cls] + (unsigned)((((r2 >> 32) & 0x7ff) * OCTAVES) >> 11);
    uint64_t size = (UINT64_C(1) << k) + ((r2 >> 43) & ((UINT64_C(1) << k) - 1));
    unsigned scls = stub_class(size);
    void *p = c->stub ? stub_alloc(t, scls) : malloc(size);
    if (!p) {
        *slot = 0; /* its object is gone already */
        return -ENOMEM;
    }
    uint64_t w = t->seq++ * 0x9e3779b97f4a7c15ULL + t->id;
    obj_fill(p, size, w, c->stride);
    t->sum += (w ^ size * 0xc4ceb9fe1a85ec53ULL) * 0xff51afd7ed558ccdULL;
    *slot = (uint64_t)(uintptr_t)p | (uint64_t)scls << TAG_SHIFT;
    t->bytes += size;
    t->nclass[cls]++;
    return 0;
}

/* n ops, timing one in c->timing; stops early when any thread failed. */
static void churn_loop(churn_thr_t *t, uint64_t n, bool timed)
{
    churn_t *c = t->c;
    uint64_t every = timed ? c->timing : 0, countdown = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (atomic_load_explicit(&c->failed, memory_order_relaxed))
            return;
        int rc;
        if (every && countdown-- == 0) {
            uint64_t t0 = now_ns();
            rc = churn_op(t);
            hist_record(t->hist, now_ns() - t0);
            countdown = every - 1;
        } else {
            rc = churn_op(t);
        }
        if (rc) {
            t->err = rc;
            atomic_store(&c->failed, 1);
            return;
        }
        t->ops++;
    }
}

/* Until every thread has finished its ops, keep freeing what arrives, so no
 * producer finds its queue full because its consumer stopped early.  With
 * a queue of 1024 slots or more (longer to fill than a 20 us nap and its
 * timer slack) it naps between looks, so a thread that finished first burns
 * no CPU in the region; with a smaller one it yields. */
static void churn_drain_until(churn_thr_t *t, atomic_uint *done)
{
    churn_t *c = t->c;
    atomic_fetch_add(done, 1);
    if (!c->remote)
        return; /* nothing will arrive */
    while (atomic_load(done) < c->threads && !atomic_load(&c->failed)) {
        void *p;
        if (spsc_pop(t->in, &p)) {
            obj_free(t, (uint64_t)(uintptr_t)p);
            t->remote_frees++;
        } else if (c->qcap >= 1024) {
            nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
        } else {
            sched_yield();
        }
    }
}

static void *churn_thread(void *arg)
{
    churn_thr_t *t = arg;
    churn_t *c = t->c;
    region_pin_thread(t->id);
    gate_enter(&c->gate);

    /* setup, in this thread (its own arena): ring, histogram, queue out */
    t->ring = calloc(c->live, sizeof *t->ring);
    t->hist = malloc(sizeof *t->hist);
    c->qslots[t->id] = malloc(c->qcap * sizeof(void *));
    if (!t->ring || !t->hist || !c->qslots[t->id]) {
        t->err = -ENOMEM;
        atomic_store(&c->failed, 1);
    } else {
        hist_init(t->hist);
        spsc_init(t->out, c->qslots[t->id], c->qcap);
    }
    gate_sync(&c->gate); /* A: queues ready */
    churn_loop(t, c->warmup, false);
    churn_drain_until(t, &c->warm_done);
    t->ops = t->bytes = t->remote_frees = t->local_frees = t->queue_full = 0;
    memset(t->nclass, 0, sizeof t->nclass);
    gate_sync(&c->gate); /* B: warm; main begins the region */
    gate_sync(&c->gate); /* C: go */
    churn_loop(t, c->ops, true);
    churn_drain_until(t, &c->done);
    gate_sync(&c->gate); /* D: all done; main ends the region */
    gate_sync(&c->gate); /* E: clean up */
    if (t->ring) {
        void *p;
        while (spsc_pop(t->in, &p)) /* every producer is past D */
            obj_free(t, (uint64_t)(uintptr_t)p);
        for (uint64_t i = 0; i < c->live; i++)
            if (t->ring[i])
                obj_free(t, t->ring[i]);
        free(t->ring);
        t->ring = NULL;
    }
    return NULL;
}

static int churn_setup(churn_t *c, const wl_args_t *a)
{
    uint64_t ws = wl_get(a, "small"), wm = wl_get(a, "medium"), wlg = wl_get(a, "large");
    if (ws + wm + wlg == 0) {
        fprintf(stderr, "mallocbench-worker: arena_churn: small, medium and large are all 0\n");
        return -EINVAL;
    }
    c->threads = (unsigned)wl_get(a, "threads");
    c->ops = wl_get(a, "ops");
    c->warmup = wl_get(a, "warmup");
    c->live = wl_get(a, "live");
    uint64_t touch = wl_get(a, "touch");
    c->stride = touch ? (touch + 7) / 8 * 8 : 0;
    c->timing = wl_get(a, "timing");
    c->remote = (uint32_t)wl_get(a, "remote");
    c->w_large = (uint32_t)wlg;
    c->w_medium = (uint32_t)wm;
    c->w_total = (uint32_t)(ws + wm + wlg);
    c->stub = wl_get(a, "alloc") == 1;
    c->qcap = 4; /* 4 x LIVE rounded up: room while a consumer is stalled */
    while (c->qcap < 4 * c->live)
        c->qcap <<= 1;
    return 0;
}

/* Starts the threads (the barrier counts those that really started),
 * brackets the region between barriers, joins them: 0 or -errno; *created. */
static int churn_drive(churn_t *c, pthread_t *tids, unsigned n, unsigned *createdp)
{
    int rc = 0;
    unsigned created = 0;
    for (; created < n; created++) {
        int e = pthread_create(&tids[created], NULL, churn_thread, &c->thr[created]);
        if (e) {
            rc = -e;
            atomic_store(&c->failed, 1);
            break;
        }
    }
    gate_open(&c->gate, created);

    gate_sync(&c->gate); /* A */
    gate_sync(&c->gate); /* B */
    bool region = !atomic_load(&c->failed);
    if (region)
        region_begin();
    gate_sync(&c->gate); /* C */
    gate_sync(&c->gate); /* D */
    if (region)
        region_end();
    gate_sync(&c->gate); /* E */
    for (unsigned i = 0; i < created; i++)
        pthread_join(tids[i], NULL);
    *createdp = created;
    return rc;
}

/* The threads' figures summed into the result (when rc is 0 and no thread
 * failed): rc, or the first thread's error. */
static int churn_report(const churn_t *c, unsigned created, int rc, wl_result_t *res)
{
    hist_t *h = NULL;
    uint64_t sum = 0, bytes = 0, ops = 0, remote = 0, local = 0, full = 0, ncls[3] = {0}, chunks = 0;
    for (unsigned i = 0; i < created; i++) {
        const churn_thr_t *t = &c->thr[i];
        if (t->err && !rc)
            rc = t->err;
        sum += t->sum;
        bytes += t->bytes;
        ops += t->ops;
        remote += t->remote_frees;
        local += t->local_frees;
        full += t->queue_full;
        for (int k = 0; k < 3; k++)
            ncls[k] += t->nclass[k];
        chunks += t->stub.nchunks;
        if (t->hist) {
            if (!h)
                h = t->hist;
            else
                hist_merge(h, t->hist);
        }
    }
    if (!rc) {
        res->region_s = region_seconds();
        res->ops = ops;
        res->bytes = bytes;
        res->throughput = res->region_s > 0 ? (double)ops / res->region_s : 0;
        res->unit = "ops/s";
        res->checksum = sum;
        if (c->timing && h && h->total) {
            res->lat_what = "op";
            res->lat_p50_us = (double)hist_percentile(h, 50) / 1e3;
            res->lat_p99_us = (double)hist_percentile(h, 99) / 1e3;
            res->lat_p999_us = (double)hist_percentile(h, 99.9) / 1e3;
            res->lat_max_us = (double)h->max / 1e3;
            res->lat_count = h->total;
        }
        int len = snprintf(res->extra, sizeof res->extra,
                           "remote_frees=%" PRIu64 ";queue_full=%" PRIu64 ";local_frees=%" PRIu64,
                           remote, full, local);
        for (int k = 0; k < 3 && len > 0 && (size_t)len < sizeof res->extra; k++)
            len += snprintf(res->extra + len, sizeof res->extra - (size_t)len, ";%s=%" PRIu64,
                            class_name[k], ncls[k]);
        if (c->stub && len > 0 && (size_t)len < sizeof res->extra)
            snprintf(res->extra + len, sizeof res->extra - (size_t)len, ";stub_mib=%" PRIu64,
                     chunks * (STUB_CHUNK >> 20));
    }
    return rc;
}

/* Everything arena_churn_run allocated, the threads' leftovers included. */
static void churn_free(churn_t *c, pthread_t *tids, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(c->thr[i].hist);
        free(c->qslots[i]);
        stub_release(&c->thr[i].stub);
    }
    gate_destroy(&c->gate);
    pthread_mutex_destroy(&c->pool_lock);
    free(tids);
    free(c->qslots);
    free(c->q);
    free(c->thr);
    free(c);
}

static int arena_churn_run(const wl_args_t *a, wl_result_t *res)
{
    churn_t *c = aligned_alloc(64, sizeof *c);
    if (!c)
        return -ENOMEM;
    memset(c, 0, sizeof *c);
    int rc = churn_setup(c, a);
    if (rc) {
        free(c);
        return rc;
    }
    unsigned n = c->threads;
    uint64_t seed = wl_get(a, "seed");
    c->thr = aligned_alloc(64, n * sizeof *c->thr);
    c->q = aligned_alloc(64, n * sizeof *c->q);
    c->qslots = calloc(n, sizeof *c->qslots);
    pthread_t *tids = calloc(n, sizeof *tids);
    if (!c->thr || !c->q || !c->qslots || !tids) {
        free(c->thr);
        free(c->q);
        free(c->qslots);
        free(tids);
        free(c);
        return -ENOMEM;
    }
    memset(c->thr, 0, n * sizeof *c->thr);
    memset(c->q, 0, n * sizeof *c->q);
    gate_init(&c->gate);
    pthread_mutex_init(&c->pool_lock, NULL);
    for (unsigned i = 0; i < n; i++) {
        churn_thr_t *t = &c->thr[i];
        t->c = c;
        t->id = i;
        t->rng = rng_seed(hmap_mix64(seed) ^ hmap_mix64(i + 0x5851f42d4c957f2dULL));
        t->out = &c->q[i].q;
        t->in = &c->q[(i + n - 1) % n].q;
    }

    unsigned created = 0;
    rc = churn_drive(c, tids, n, &created);
    rc = churn_report(c, created, rc, res);
    churn_free(c, tids, n);
    return rc;
}

static const wl_param_t arena_churn_params[] = {
    {"threads", WLP_UINT, "2", 1, 256, NULL, "threads", "threads churning at once"},
    {"ops", WLP_UINT, "2000000", 1, 1000000000000ULL, NULL, "ops",
     "measured ops per thread; one op = one allocation, the free of the object it replaces, "
     "and up to 4 frees of objects handed over by the previous thread"},
    {"warmup", WLP_UINT, "200000", 0, 1000000000000ULL, NULL, "ops",
     "ops per thread before the measured region"},
    {"live", WLP_UINT, "1000", 1, 1u << 24, NULL, "objects",
     "objects each thread keeps live: each op replaces one at random, so lifetimes are "
     "geometric with mean LIVE ops (plus up to 4 x LIVE in flight to the next thread)"},
    {"small", WLP_UINT, "89", 0, 1000000, NULL, "weight",
     "relative weight of small sizes, 16 B..1 KiB (log-uniform by octave)"},
    {"medium", WLP_UINT, "10", 0, 1000000, NULL, "weight",
     "relative weight of medium sizes, 1 KiB..64 KiB (log-uniform by octave)"},
    {"large", WLP_UINT, "1", 0, 1000000, NULL, "weight",
     "relative weight of large sizes, 64 KiB..4 MiB (log-uniform by octave)"},
    {"remote", WLP_UINT, "50", 0, 100, NULL, "%",
     "objects freed by the next thread, handed over through a lock-free queue of 4 x LIVE "
     "slots (one that finds the queue full is freed locally and counted as queue_full)"},
    {"touch", WLP_SIZE, "4K", 0, 1ULL << 30, NULL, "bytes",
     "write a word every TOUCH bytes of each object and its last word (4K: every page, so "
     "faults show; 0: only its 16-byte header)"},
    {"alloc", WLP_ENUM, "malloc", 0, 0, "malloc|stub", "",
     "malloc: the allocator under test; stub: a per-thread free-list bump allocator instead, "
     "to measure the workload's own cost"},
    {"timing", WLP_UINT, "64", 0, 1000000000, NULL, "ops",
     "time one op in TIMING with CLOCK_MONOTONIC for the latency percentiles (0: none)"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the sizes and slots"},
};

const wl_t wl_arena_churn = {
    .name = "arena_churn",
    .help = "threads allocate, touch and free a small/medium/large mix, keeping LIVE objects "
            "each; REMOTE% are freed by the next thread (a framework's inter-op pool)",
    .params = arena_churn_params,
    .nparams = sizeof arena_churn_params / sizeof *arena_churn_params,
    .run = arena_churn_run,
    .metric = "allocations per second",
    .scale = "ops",
    .smoke = "arena_churn:threads=2,ops=20000,warmup=2000,live=100",
};
