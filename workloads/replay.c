/* replay.c - replays an allocation trace (.mbt, common/trace.h) recorded by
 * `mallocbench record`: one thread per recorded thread of the chosen
 * process, each making the same allocator calls in its recorded order.
 * Before the region the events are merged by time only to tell objects
 * apart (an address reused after its free is a new object); threads then
 * run free of each other, synchronizing only where an object crosses
 * threads: its producer publishes the pointer with a release store on the
 * object's slot, its consumer acquire-waits on it (spin, then futex).
 * The checksum hashes the per-op call counts, so it is the same under
 * every allocator. */
#include "gate.h"
#include "hashmap.h"
#include "hist.h"
#include "memavail.h"
#include "region.h"
#include "sysmem.h"
#include "trace.h"
#include "units.h"
#include "workload.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "replay.c waits with a futex on the low half of a 64-bit slot: little-endian only"
#endif

#define NONE UINT32_MAX
#define TOUCH_ALL UINT32_MAX
#define SPIN 200

enum { TOUCH_PAGE, TOUCH_NONE, TOUCH_RECORDED };
enum { TIMING_FAST, TIMING_RECORDED };
enum { OVER_MEMORY_REFUSE, OVER_MEMORY_WARN };
enum { F_WAIT = 1, F_PUB = 2, F_GOT = 4 };
/* Where the program's huge-page advice on a block began and ended, as rules a
 * block at another address follows (rop_t.advise_how). */
enum {
    ADV_AFTER_START = 1, /* from the first page boundary after the block's start, even
                          * when the start is one (numpy: p + 4096 - p % 4096);
                          * without it, from the start's page boundary or the next */
    ADV_END_UP = 2       /* to the block's end rounded up to a page (the kernel
                          * rounds the length up); without it, rounded down */
};

/* One replayed call.  in: the object it frees (free, realloc's old block);
 * out: the object it makes.  F_WAIT: `in` is made by another thread;
 * F_PUB: `out` is freed by another thread; F_GOT: the recording got memory
 * (a pointer for a size above 0), so a failure here is the replay's. */
typedef struct {
    uint64_t t;           /* ns since the process's first event */
    uint64_t size;        /* bytes asked for (calloc: nmemb * size) */
    uint64_t arg;         /* alignment; calloc: nmemb; realloc: old size */
    uint32_t in, out;
    uint32_t touch;       /* pages to write at most (TOUCH_ALL: every page) */
    uint8_t op, flags;
    uint8_t advice;       /* MADV_HUGEPAGE or MADV_NOHUGEPAGE the program gave the block; 0 none */
    uint8_t advise_how;   /* ADV_*: the advised range's rules */
} rop_t;

typedef struct replay replay_t;

typedef struct {
    replay_t *r;
    rop_t *ops;
    size_t nops;
    size_t from, to;      /* its ops in the region: [from, to); before it and after it run unmeasured */
    hist_t *hist;
    uint64_t calls[MBT_OP_COUNT];
    uint64_t bytes, waits, rbytes;
    uint64_t failed;      /* calls that failed where the recording got memory */
    uint64_t failed_size; /* the size of the first of them */
} __attribute__((aligned(64))) rthr_t;

struct replay {
    unsigned nthr;
    rthr_t *thr;
    /* per object: 0 not made yet, 2 a consumer sleeps on it, else its
     * pointer | 1 (NULL made: 1) */
    _Atomic uint64_t *slot;
    uint8_t *freed;       /* per object: some op frees it */
    uint32_t nobj;
    uint64_t page, lat_every, go_ns;
    uint64_t t0;          /* the first event's time (ops' t are from it) */
    uint64_t shift;       /* timing=recorded: the region's start, from t0 */
    const char *region;   /* "recorded" (the program's), "whole", or "none" (the trace has none) */
    int timing;
    unsigned missing;     /* ops emulated: replay_missing_ops() */
    uint64_t unknown_free, unknown_realloc, over_live, reordered, peak_live;
    uint64_t advised, advice_skipped; /* the program's madvise calls: on a block, or not replayed */
    unsigned main;        /* the thread replayed on the worker's own (the recorded main), or NONE */
    gate_t gate;
};

/* ---- building the op arrays (not measured) --------------------------------- */

typedef struct {
    uint64_t size;        /* live bytes it holds, as recorded */
    uint32_t prod;        /* thread that makes it */
    size_t prod_op;       /* the op that makes it */
} bobj_t;

typedef struct {
    replay_t *r;
    const mbt_trace_t *t;
    size_t *tix;          /* trace thread of each replay thread */
    size_t *next;         /* next event of each replay thread */
    unsigned *heap;       /* replay threads by time of their next event */
    unsigned nheap;
    bobj_t *obj;
    size_t objcap;
    hmap_t map;           /* live address -> object (keyed: addresses come from the file) */
    uint64_t t0, live;
    size_t img;           /* process image (trace proc index) of the last event */
    uint32_t rec_page;
    int touch;
} build_t;

/* The chosen process: pid 0 = proc[0], the recorded command. */
static int replay_pick_pid(const mbt_trace_t *t, uint64_t want, uint32_t *pid, char *err,
                           size_t errlen)
{
    if (!want) {
        if (!t->nproc) {
            snprintf(err, errlen, "the trace holds no process");
            return -EINVAL;
        }
        *pid = t->proc[0].pid;
        return 0;
    }
    for (size_t i = 0; i < t->nproc; i++)
        if (t->proc[i].pid == want)
            return *pid = (uint32_t)want, 0;
    for (size_t i = 0; i < t->nthread; i++)
        if (t->thread[i].pid == want)
            return *pid = (uint32_t)want, 0;
    size_t off = (size_t)snprintf(err, errlen, "no process %" PRIu64 " in the trace (processes:", want);
    for (size_t i = 0; i < t->nproc && off < errlen; i++)
        off += (size_t)snprintf(err + off, errlen - off, " %u", t->proc[i].pid);
    if (off < errlen)
        snprintf(err + off, errlen - off, ")");
    return -EINVAL;
}

static uint64_t ev_time(const build_t *b, unsigned k)
{
    return MBT_T(&b->t->thread[b->tix[k]].ev[b->next[k]]);
}

static bool heap_less(const build_t *b, unsigned x, unsigned y)
{
    uint64_t tx = ev_time(b, x), ty = ev_time(b, y);
    return tx < ty || (tx == ty && x < y);
}

static void heap_sift_down(build_t *b, unsigned i)
{
    for (;;) {
        unsigned l = 2 * i + 1, m = i;
        if (l < b->nheap && heap_less(b, b->heap[l], b->heap[m]))
            m = l;
        if (l + 1 < b->nheap && heap_less(b, b->heap[l + 1], b->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        unsigned x = b->heap[i];
        b->heap[i] = b->heap[m];
        b->heap[m] = x;
        i = m;
    }
}

static int build_reorder(build_t *b, uint64_t ptr);

/* A new object made by op `at` of thread k, at address ptr (0: none). */
static int build_obj_new(build_t *b, unsigned k, size_t at, uint64_t ptr, uint64_t size,
                         uint32_t *o)
{
    replay_t *r = b->r;
    if (r->nobj == NONE - 1)
        return -E2BIG;
    if (r->nobj == b->objcap) {
        size_t cap = b->objcap ? 2 * b->objcap : 4096;
        bobj_t *n = sysmem_realloc(b->obj, cap * sizeof *n);
        if (!n)
            return -ENOMEM;
        b->obj = n;
        b->objcap = cap;
    }
    *o = r->nobj++;
    b->obj[*o] = (bobj_t){.size = size, .prod = k, .prod_op = at};
    int rc = ptr && hmap_get(&b->map, ptr) ? build_reorder(b, ptr) : 0;
    uint32_t old = NONE;
    uint64_t *prev = !rc && ptr ? hmap_get(&b->map, ptr) : NULL;
    if (prev) {
        old = (uint32_t)*prev;
        *prev = *o;
    } else if (!rc && ptr && hmap_put(&b->map, ptr, *o)) {
        rc = -ENOMEM;
    }
    if (rc)
        return rc;
    if (old != NONE) /* made again while live, its free not at hand: both stay live here */
        r->over_live++;
    b->live += size;
    if (b->live > r->peak_live)
        r->peak_live = b->live;
    return 0;
}

/* The object op `op` of thread k frees (NONE: unknown address). */
static uint32_t build_consume(build_t *b, unsigned k, rop_t *op, uint64_t ptr)
{
    uint64_t v;
    if (hmap_del(&b->map, ptr, &v))
        return NONE;
    uint32_t o = (uint32_t)v;
    bobj_t *ob = &b->obj[o];
    b->r->freed[o] = 1;
    b->live -= ob->size;
    op->in = o;
    if (ob->prod != k) {
        op->flags |= F_WAIT;
        b->r->thr[ob->prod].ops[ob->prod_op].flags |= F_PUB;
    }
    return o;
}

/* Pages the allocation of a block freed with `pages` recorded touched writes. */
static uint32_t build_touch_recorded(const build_t *b, uint64_t pages)
{
    if (!pages)
        return TOUCH_ALL;
    uint64_t n = (pages * b->rec_page + b->r->page - 1) / b->r->page;
    return n >= TOUCH_ALL ? TOUCH_ALL - 1 : (uint32_t)n;
}

/* realloc: the old object ends; a new one begins.  A failed realloc of a
 * known block (ptr 0, size > 0) left the block where it was: the new object
 * takes its address.  An unknown old pointer makes it a malloc. */
static int build_realloc(build_t *b, unsigned k, size_t at, rop_t *op, const mbt_event_t *e)
{
    uint64_t oldsz = 0, ptr = e->ptr, size = e->size;
    if (e->arg) {
        uint32_t o = build_consume(b, k, op, e->arg);
        if (o == NONE) {
            b->r->unknown_free++;
            b->r->unknown_realloc++;
            op->op = MBT_MALLOC;
        } else {
            oldsz = b->obj[o].size;
            if (!ptr && size) { /* failed: the old block stays */
                ptr = e->arg;
                size = oldsz;
            }
        }
    }
    op->arg = oldsz;
    return build_obj_new(b, k, at, ptr, ptr ? size : 0, &op->out);
}

/* The program's madvise of a block it holds (trace version 2).  Huge-page
 * advice goes on the op that made the block: the replay advises the block right
 * after making it, before it writes it, over the range the program's rules give
 * at the block's new address.  numpy advises from p + 4096 - p % 4096 (a whole
 * page in when p is page-aligned, as jemalloc's large blocks are) to p + size,
 * which the kernel rounds up to a page; where the block's 2 MiB ranges lie
 * decides which of them may be huge, so the replay keeps those rules rather
 * than advising the block's whole pages.  A recorded start at the block's own
 * start (d == 0) keeps "from the start"; a start after it is taken as numpy's
 * rule, the two being the same unless the block is page-aligned.  Other advice,
 * and an address in no live block (memory the program mapped itself), are
 * counted and not replayed. */
static void build_madvise(build_t *b, const mbt_event_t *e)
{
    replay_t *r = b->r;
    if (e->arg != MADV_HUGEPAGE && e->arg != MADV_NOHUGEPAGE) {
        r->advice_skipped++;
        return;
    }
    /* the block starts at most a page before the advised address, 16-byte aligned */
    for (uint64_t d = e->ptr % 16; d <= b->rec_page && d <= e->ptr; d += 16) {
        uint64_t *v = hmap_get(&b->map, e->ptr - d);
        if (!v)
            continue;
        const bobj_t *ob = &b->obj[*v];
        if (d >= ob->size)
            break;
        rop_t *op = &r->thr[ob->prod].ops[ob->prod_op];
        uint64_t page = b->rec_page, end = e->ptr + (e->size + page - 1) / page * page;
        op->advice = (uint8_t)e->arg;
        op->advise_how = (uint8_t)((d > 0 ? ADV_AFTER_START : 0) |
                                   (end >= e->ptr - d + ob->size ? ADV_END_UP : 0));
        r->advised++;
        return;
    }
    r->advice_skipped++;
}

/* Event e of replay thread k into its next op; skipped events make none. */
static int build_event(build_t *b, unsigned k, const mbt_event_t *e)
{
    rthr_t *th = &b->r->thr[k];
    unsigned kind = MBT_OP(e);
    size_t img = b->t->thread[b->tix[k]].proc;
    if (img != b->img) { /* an exec: the old image's blocks stay live, unreachable, and counted */
        b->img = img;
        hmap_clear(&b->map);
    }
    if (kind == MBT_MADVISE) {
        build_madvise(b, e);
        return 0;
    }
    if (kind < MBT_MALLOC || kind > MBT_PVALLOC)
        return 0; /* thread start and end */
    size_t at = th->nops;
    rop_t *op = &th->ops[at];
    *op = (rop_t){.t = MBT_T(e) - b->t0, .size = e->size, .arg = e->arg, .in = NONE,
                  .out = NONE, .touch = b->touch == TOUCH_NONE ? 0 : TOUCH_ALL, .op = (uint8_t)kind};
    if (kind == MBT_FREE) {
        op->size = op->arg = 0;
        if (e->ptr) {
            uint32_t o = build_consume(b, k, op, e->ptr);
            if (o == NONE) {
                b->r->unknown_free++;
                return 0;
            }
            bobj_t *ob = &b->obj[o];
            if (b->touch == TOUCH_RECORDED)
                b->r->thr[ob->prod].ops[ob->prod_op].touch = build_touch_recorded(b, e->arg);
        }
        th->nops++;
        return 0;
    }
    th->nops++;
    if (e->ptr && e->size)
        op->flags |= F_GOT;
    if (kind == MBT_REALLOC)
        return build_realloc(b, k, at, op, e);
    return build_obj_new(b, k, at, e->ptr, e->ptr ? e->size : 0, &op->out);
}

/* Walk every thread's events in time order (program order within each). */
static void heap_build(build_t *b)
{
    for (unsigned i = b->nheap / 2; i-- > 0;)
        heap_sift_down(b, i);
}

/* Takes thread k's next event out of the heap's way: k was popped (or
 * removed), its event handled, and it goes back while it has events. */
static int heap_next_event(build_t *b, unsigned k)
{
    const mbt_thread_t *th = &b->t->thread[b->tix[k]];
    int rc = build_event(b, k, &th->ev[b->next[k]++]);
    if (b->next[k] < th->nev) {
        unsigned i = b->nheap++;
        b->heap[i] = k;
        while (i && heap_less(b, b->heap[i], b->heap[(i - 1) / 2])) {
            unsigned p = (i - 1) / 2, x = b->heap[p];
            b->heap[p] = b->heap[i];
            b->heap[i] = x;
            i = p;
        }
    }
    return rc;
}

/* Walk every thread's events in time order (program order within each). */
static int build_merge(build_t *b)
{
    replay_t *r = b->r;
    b->t0 = UINT64_MAX;
    for (unsigned k = 0; k < r->nthr; k++) {
        b->next[k] = 0;
        b->heap[b->nheap++] = k;
        uint64_t t = MBT_T(&b->t->thread[b->tix[k]].ev[0]);
        if (t < b->t0)
            b->t0 = t;
    }
    b->img = r->nthr ? b->t->thread[b->tix[0]].proc : 0;
    heap_build(b);
    int rc = 0;
    while (!rc && b->nheap) {
        unsigned k = b->heap[0];
        b->heap[0] = b->heap[--b->nheap];
        heap_sift_down(b, 0);
        rc = heap_next_event(b, k);
    }
    return rc;
}

/* An allocation at ptr found ptr still live: the free that let it be
 * reused was stamped later (a realloc is stamped when it returns, after
 * the block it gave back may already have been handed out again).  When
 * another thread's next event frees ptr, that event is taken first. */
static int build_reorder(build_t *b, uint64_t ptr)
{
    unsigned at = NONE; /* heap position of the first such thread */
    for (unsigned h = 0; h < b->nheap; h++) {
        unsigned j = b->heap[h];
        const mbt_event_t *e = &b->t->thread[b->tix[j]].ev[b->next[j]];
        unsigned op = MBT_OP(e);
        if (((op == MBT_FREE && e->ptr == ptr) || (op == MBT_REALLOC && e->arg == ptr)) &&
            (at == NONE || j < b->heap[at]))
            at = h;
    }
    if (at == NONE)
        return 0;
    unsigned j = b->heap[at];
    b->heap[at] = b->heap[--b->nheap];
    heap_build(b);
    b->r->reordered++;
    return heap_next_event(b, j);
}

/* The threads of pid that have events: one replay thread each. */
static int build_threads(build_t *b, uint32_t pid)
{
    replay_t *r = b->r;
    const mbt_trace_t *t = b->t;
    b->tix = sysmem_calloc(t->nthread + 1, sizeof *b->tix);
    if (!b->tix)
        return -ENOMEM;
    for (size_t i = 0; i < t->nthread; i++)
        if (t->thread[i].pid == pid && t->thread[i].nev)
            b->tix[r->nthr++] = i;
    r->thr = sysmem_aligned64((r->nthr + 1) * sizeof *r->thr);
    b->next = sysmem_calloc(r->nthr + 1, sizeof *b->next);
    b->heap = sysmem_calloc(r->nthr + 1, sizeof *b->heap);
    if (!r->thr || !b->next || !b->heap)
        return -ENOMEM;
    memset(r->thr, 0, (r->nthr + 1) * sizeof *r->thr);
    for (unsigned k = 0; k < r->nthr; k++) {
        r->thr[k].r = r;
        r->thr[k].ops = sysmem_malloc(t->thread[b->tix[k]].nev * sizeof(rop_t));
        if (!r->thr[k].ops)
            return -ENOMEM;
    }
    return 0;
}

/* The per-object arrays, sized by an upper bound (one object per event). */
static int build_objects(build_t *b)
{
    replay_t *r = b->r;
    size_t n = 0;
    for (unsigned k = 0; k < r->nthr; k++)
        n += b->t->thread[b->tix[k]].nev;
    r->freed = sysmem_calloc(n + 1, 1);
    hmap_init(&b->map, NULL);
    return r->freed ? 0 : -ENOMEM;
}

/* The op arrays of process pid from trace t. */
static int replay_build(replay_t *r, const mbt_trace_t *t, uint32_t pid, int touch)
{
    build_t b = {.r = r, .t = t, .rec_page = t->page_size ? t->page_size : (uint32_t)r->page,
                 .touch = touch};
    int rc = build_threads(&b, pid);
    r->main = NONE;
    for (unsigned k = 0; !rc && k < r->nthr; k++)
        if (t->thread[b.tix[k]].tid == pid)
            r->main = k;
    if (!rc)
        rc = build_objects(&b);
    if (!rc)
        rc = build_merge(&b);
    if (!rc) {
        r->slot = sysmem_calloc((size_t)r->nobj + 1, sizeof *r->slot);
        rc = r->slot ? 0 : -ENOMEM;
        /* written by the region's calls: its pages faulted in now, not there */
        sysmem_prefault(r->slot, ((size_t)r->nobj + 1) * sizeof *r->slot);
        sysmem_prefault(r->freed, (size_t)r->nobj + 1);
    }
    r->t0 = b.t0;
    hmap_free(&b.map);
    sysmem_free(b.obj);
    sysmem_free(b.tix);
    sysmem_free(b.next);
    sysmem_free(b.heap);
    return rc;
}

/* ---- replaying (measured) --------------------------------------------------- */

static long futex(_Atomic uint64_t *slot, int cmd, uint32_t val)
{
    return syscall(SYS_futex, (uint32_t *)slot, cmd | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

/* Pointer of object o, made by another thread: wait until it is published. */
static void *obj_wait(rthr_t *th, _Atomic uint64_t *slot)
{
    uint64_t v = atomic_load_explicit(slot, memory_order_acquire);
    if (v & 1)
        return (void *)(uintptr_t)(v & ~UINT64_C(1));
    th->waits++;
    for (int i = 0; i < SPIN; i++) {
        __builtin_ia32_pause();
        v = atomic_load_explicit(slot, memory_order_acquire);
        if (v & 1)
            return (void *)(uintptr_t)(v & ~UINT64_C(1));
    }
    for (;;) {
        v = 0;
        if (atomic_compare_exchange_strong_explicit(slot, &v, 2, memory_order_acquire,
                                                    memory_order_acquire) || v == 2)
            futex(slot, FUTEX_WAIT, 2);
        v = atomic_load_explicit(slot, memory_order_acquire);
        if (v & 1)
            return (void *)(uintptr_t)(v & ~UINT64_C(1));
    }
}

static void obj_publish(_Atomic uint64_t *slot, void *p, bool shared)
{
    uint64_t v = (uint64_t)(uintptr_t)p | 1;
    if (!shared) {
        atomic_store_explicit(slot, v, memory_order_relaxed);
        return;
    }
    if (atomic_exchange_explicit(slot, v, memory_order_release) == 2)
        futex(slot, FUTEX_WAKE, INT_MAX);
}

/* One write in each page of [p+from, p+to), at most max pages. */
static inline void touch_pages(char *p, uint64_t from, uint64_t to, uint32_t max, uint64_t page)
{
    if (!p)
        return;
    volatile char *v = p;
    for (uint32_t n = 0; from < to && n < max; n++) {
        v[from] = 1;
        from = ((uintptr_t)(p + from) / page + 1) * page - (uintptr_t)p;
    }
}

/* madvise(advice) over the block [p, p + size) by the program's rules (ADV_*). */
static void advise_block(void *p, uint64_t size, int advice, unsigned how, uint64_t page)
{
    uintptr_t a = (uintptr_t)p, from, to;
    from = how & ADV_AFTER_START ? (a / page + 1) * page : (a + page - 1) / page * page;
    to = how & ADV_END_UP ? (a + size + page - 1) / page * page : (a + size) / page * page;
    if (to > from)
        madvise((void *)from, to - from, advice);
}

/* Ops whose function the allocator serving malloc does not define (jemalloc
 * has no pvalloc: glibc's would make a block jemalloc's free cannot take):
 * a bit per op. */
static unsigned replay_missing_ops(void)
{
    static const char *const fn[MBT_OP_COUNT] = {
        [MBT_POSIX_MEMALIGN] = "posix_memalign", [MBT_ALIGNED_ALLOC] = "aligned_alloc",
        [MBT_MEMALIGN] = "memalign", [MBT_VALLOC] = "valloc", [MBT_PVALLOC] = "pvalloc"};
    Dl_info mi, di;
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    unsigned missing = 0;
    if (!m || !dladdr(m, &mi))
        return 0;
    for (unsigned op = 0; op < MBT_OP_COUNT; op++) {
        void *f = fn[op] ? dlsym(RTLD_DEFAULT, fn[op]) : NULL;
        if (fn[op] && (!f || !dladdr(f, &di) || di.dli_fbase != mi.dli_fbase))
            missing |= 1u << op;
    }
    return missing;
}

/* An aligned block through a function the allocator has (see above). */
static void *aligned_emulate(unsigned missing, uint64_t align, uint64_t size)
{
    void *q = NULL;
    if (!(missing & 1u << MBT_POSIX_MEMALIGN))
        return posix_memalign(&q, align, size) ? NULL : q;
    if (!(missing & 1u << MBT_MEMALIGN))
        return memalign(align, size);
    return malloc(size);
}

/* valloc/pvalloc's page rounding without wrapping round: size, or size
 * rounded up to a page (pvalloc, 0 asking for one page); false when that
 * is no size a block can have (more than PTRDIFF_MAX). */
static inline bool page_round(const rop_t *op, uint64_t page, uint64_t *size)
{
    uint64_t n = op->size;
    if (op->op == MBT_PVALLOC)
        n = n > PTRDIFF_MAX ? UINT64_MAX : ((n ?: 1) + page - 1) / page * page;
    *size = n;
    return n <= PTRDIFF_MAX;
}

static void *op_emulate(const rop_t *op, unsigned missing, uint64_t page, uint64_t size)
{
    switch (op->op) {
    case MBT_VALLOC:
    case MBT_PVALLOC: return aligned_emulate(missing, page, size);
    default: return aligned_emulate(missing, op->arg, op->size);
    }
}

/* The call of one op and its writes; the pointer it made (NULL: none or
 * failed; a failed realloc: the old block, and *failed set).  A valloc or
 * pvalloc of no possible size is failed without a call: an allocator that
 * wraps the rounding round would hand back a page to be written far past. */
static inline void *op_call(const rop_t *op, void *in, uint64_t page, unsigned missing, bool *failed)
{
    void *q = NULL;
    uint64_t rounded = op->size;
    if ((op->op == MBT_VALLOC || op->op == MBT_PVALLOC) && !page_round(op, page, &rounded)) {
        *failed = true;
        return NULL;
    }
    switch (missing & 1u << op->op ? 0 : op->op) {
    case 0: q = op_emulate(op, missing, page, rounded); break;
    case MBT_MALLOC: q = malloc(op->size); break;
    case MBT_CALLOC:
        q = op->arg && op->size % op->arg == 0 ? calloc(op->arg, op->size / op->arg)
                                               : calloc(1, op->size);
        break;
    case MBT_REALLOC:
        q = realloc(in, op->size);
        if (!q && op->size) { /* failed: the block is where it was */
            *failed = true;
            return in;
        }
        break;
    case MBT_FREE: free(in); return NULL;
    case MBT_POSIX_MEMALIGN:
        if (posix_memalign(&q, op->arg, op->size))
            q = NULL;
        break;
    case MBT_ALIGNED_ALLOC: q = aligned_alloc(op->arg, op->size); break;
    case MBT_MEMALIGN: q = memalign(op->arg, op->size); break;
    case MBT_VALLOC: q = valloc(op->size); break;
    case MBT_PVALLOC: q = pvalloc(op->size); break;
    }
    *failed = !q;
    if (op->advice && q) /* before the block is written */
        advise_block(q, op->size, op->advice, op->advise_how, page);
    if (op->touch && q)
        touch_pages(q, op->op == MBT_REALLOC ? op->arg : 0, op->size, op->touch, page);
    return q;
}

/* timing=recorded: not before the op's recorded offset from the region's start. */
static void op_pace(const replay_t *r, const rop_t *op)
{
    uint64_t due = r->go_ns + (op->t > r->shift ? op->t - r->shift : 0), now = mono_ns();
    if (due <= now + 10000)
        return;
    struct timespec ts = {.tv_sec = (time_t)(due / 1000000000u), .tv_nsec = (long)(due % 1000000000u)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

/* Ops [from, to) of the thread; measured: in the region (timed, paced). */
static void replay_ops(rthr_t *th, size_t from, size_t to, bool measured)
{
    replay_t *r = th->r;
    uint64_t every = measured ? r->lat_every : 0, countdown = 0;
    for (size_t i = from; i < to; i++) {
        const rop_t *op = &th->ops[i];
        void *in = NULL;
        if (op->in != NONE)
            in = op->flags & F_WAIT ? obj_wait(th, &r->slot[op->in])
                                    : (void *)(uintptr_t)(atomic_load_explicit(
                                          &r->slot[op->in], memory_order_relaxed) & ~UINT64_C(1));
        if (measured && r->timing == TIMING_RECORDED)
            op_pace(r, op);
        void *q;
        bool failed = false;
        if (every && countdown-- == 0) {
            uint64_t t0 = mono_ns();
            q = op_call(op, in, r->page, r->missing, &failed);
            hist_record(th->hist, mono_ns() - t0);
            countdown = every - 1;
        } else {
            q = op_call(op, in, r->page, r->missing, &failed);
        }
        if (op->out != NONE)
            obj_publish(&r->slot[op->out], q, op->flags & F_PUB);
        th->calls[op->op]++;
        if (!failed)
            th->bytes += op->size;
        else if (op->flags & F_GOT && !th->failed++)
            th->failed_size = op->size; /* the recording got it: the replay's figures are of less work */
    }
}

/* One member of the replay team: thread th's ops before, in and after the
 * region (th NULL: none), between the team's barriers; the lead, the
 * worker's own thread, begins and ends the region. */
static void replay_member(replay_t *r, rthr_t *th, bool lead, bool region)
{
    if (th)
        replay_ops(th, 0, th->from, false); /* before the recorded region: unmeasured */
    gate_sync(&r->gate); /* A: ready */
    if (lead) {
        if (region)
            region_begin();
        r->go_ns = mono_ns();
    }
    gate_sync(&r->gate); /* B: go */
    if (th) {
        uint64_t bytes = th->bytes;
        replay_ops(th, th->from, th->to, true);
        th->rbytes = th->bytes - bytes;
    }
    gate_sync(&r->gate); /* C: done */
    if (lead && region)
        region_end();
    gate_sync(&r->gate); /* D: after the region, unmeasured */
    if (th)
        replay_ops(th, th->to, th->nops, false);
}

static void *replay_thread(void *arg)
{
    rthr_t *th = arg;
    replay_t *r = th->r;
    region_pin_thread((unsigned)(th - r->thr));
    gate_enter(&r->gate);
    replay_member(r, th, false, false);
    return NULL;
}

/* The recorded process's main thread (tid == pid) is replayed on the
 * worker's own thread, so that an allocator that tells the main thread
 * apart serves it as in the program: glibc gives the first thread the
 * brk heap (main_arena) and every later thread an arena of mmap'd heaps,
 * which trim and grow differently (train_step's region under glibc, on a
 * new thread: 16 munmap and no brk against the program's 7 and 42, 49.9k
 * faults against 66.4k).  The others run on threads parked at A (the
 * barrier counts those that started); the region spans B..C; all joined. */
static int replay_threads(replay_t *r)
{
    pthread_t *tids = sysmem_calloc(r->nthr + 1, sizeof *tids);
    if (!tids)
        return -ENOMEM;
    int rc = 0;
    unsigned created = 0, upto = r->nthr, m = r->main;
    gate_init(&r->gate);
    for (unsigned k = 0; k < r->nthr; k++) {
        if (k == m)
            continue;
        int e = pthread_create(&tids[k], NULL, replay_thread, &r->thr[k]);
        if (e) {
            rc = -e;
            fprintf(stderr, "mallocbench-worker: replay: cannot start thread %u of %u: %s\n",
                    created + 1 + (m != NONE), r->nthr, strerror(e));
            for (unsigned i = 0; i < r->nthr; i++) /* nobody replays anything */
                r->thr[i].from = r->thr[i].to = r->thr[i].nops = 0;
            upto = k;
            break;
        }
        created++;
    }
    gate_open(&r->gate, created);
    if (m != NONE)
        region_pin_thread(m);
    replay_member(r, m != NONE ? &r->thr[m] : NULL, true, rc == 0);
    for (unsigned k = 0; k < upto; k++)
        if (k != m)
            pthread_join(tids[k], NULL);
    gate_destroy(&r->gate);
    sysmem_free(tids);
    return rc;
}

/* ---- figures and the descriptor ---------------------------------------------- */

static const unsigned counted_ops[] = {MBT_MALLOC, MBT_CALLOC, MBT_REALLOC, MBT_FREE,
                                       MBT_POSIX_MEMALIGN, MBT_ALIGNED_ALLOC, MBT_MEMALIGN,
                                       MBT_VALLOC, MBT_PVALLOC};
#define NCOUNTED (sizeof counted_ops / sizeof *counted_ops)

static void replay_extra(const replay_t *r, const uint64_t *calls, uint64_t waits, uint64_t failed, char *buf,
                         size_t len)
{
    size_t off = 0;
    for (size_t i = 0; i < NCOUNTED && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s=%" PRIu64 ";",
                                mbt_op_name(counted_ops[i]), calls[counted_ops[i]]);
    for (unsigned op = 0; op < MBT_OP_COUNT && off < len; op++)
        if (r->missing & 1u << op && calls[op])
            off += (size_t)snprintf(buf + off, len - off, "emulated_%s=%" PRIu64 ";",
                                    mbt_op_name(op), calls[op]);
    if (off < len)
        snprintf(buf + off, len - off,
                 "unknown_free=%" PRIu64 ";unknown_realloc=%" PRIu64 ";alloc_over_live=%" PRIu64
                 ";reordered=%" PRIu64 ";peak_live=%" PRIu64 ";threads=%u;waits=%" PRIu64
                 ";advised=%" PRIu64 ";advice_skipped=%" PRIu64 ";failed_calls=%" PRIu64 ";region=%s",
                 r->unknown_free, r->unknown_realloc, r->over_live, r->reordered, r->peak_live,
                 r->nthr, waits, r->advised, r->advice_skipped, failed, r->region);
}

static void replay_report(const replay_t *r, wl_result_t *res)
{
    uint64_t calls[MBT_OP_COUNT] = {0}, ops = 0, bytes = 0, waits = 0, failed = 0;
    hist_t *h = NULL;
    for (unsigned k = 0; k < r->nthr; k++) {
        const rthr_t *th = &r->thr[k];
        failed += th->failed;
        for (unsigned op = 0; op < MBT_OP_COUNT; op++)
            calls[op] += th->calls[op];
        ops += th->to - th->from;
        bytes += th->rbytes;
        waits += th->waits;
        if (!h)
            h = th->hist;
        else
            hist_merge(h, th->hist);
    }
    uint64_t sum = 0x6a09e667f3bcc909ULL;
    for (size_t i = 0; i < NCOUNTED; i++)
        sum = hmap_mix64(sum ^ (calls[counted_ops[i]] * 0x9e3779b97f4a7c15ULL + counted_ops[i]));
    res->region_s = region_seconds();
    res->ops = ops;
    res->bytes = bytes;
    res->throughput = res->region_s > 0 ? (double)ops / res->region_s : 0;
    res->unit = "ops/s";
    res->checksum = sum;
    if (h && h->total) {
        res->lat_what = "op";
        res->lat_p50_us = (double)hist_percentile(h, 50) / 1e3;
        res->lat_p99_us = (double)hist_percentile(h, 99) / 1e3;
        res->lat_p999_us = (double)hist_percentile(h, 99.9) / 1e3;
        res->lat_max_us = (double)h->max / 1e3;
        res->lat_count = h->total;
    }
    replay_extra(r, calls, waits, failed, res->extra, sizeof res->extra);
}

/* Frees what the replay left live (not counted), then the replay itself. */
static void replay_release(replay_t *r)
{
    if (r->slot && r->freed)
        for (uint32_t o = 0; o < r->nobj; o++) {
            uint64_t v = atomic_load_explicit(&r->slot[o], memory_order_relaxed);
            if (!r->freed[o] && (v & 1))
                free((void *)(uintptr_t)(v & ~UINT64_C(1)));
        }
    for (unsigned k = 0; r->thr && k < r->nthr; k++) {
        sysmem_free(r->thr[k].ops);
        sysmem_free(r->thr[k].hist);
    }
    sysmem_free(r->thr);
    sysmem_free(r->slot);
    sysmem_free(r->freed);
    sysmem_free(r);
}

/* Trace t read and process chosen, or -EINVAL with "'path': why" in err. */
static int replay_load(const wl_args_t *a, mbt_trace_t *t, uint32_t *pid, char *err, size_t errlen)
{
    const char *path = wl_get_str(a, "trace");
    if (!*path) {
        snprintf(err, errlen, "replay needs a trace: -w replay:trace=FILE.mbt");
        return -EINVAL;
    }
    int rc = mbt_read(path, t, err, errlen);
    if (rc)
        return rc;
    char why[256];
    rc = replay_pick_pid(t, wl_get(a, "pid"), pid, why, sizeof why);
    uint64_t nev = 0;
    for (size_t i = 0; !rc && i < t->nthread; i++)
        if (t->thread[i].pid == *pid)
            for (size_t j = 0; j < t->thread[i].nev; j++)
                nev += MBT_OP(&t->thread[i].ev[j]) <= MBT_PVALLOC;
    if (!rc && !nev) {
        snprintf(why, sizeof why, "process %u made no allocator call", *pid);
        rc = -EINVAL;
    }
    if (rc) {
        snprintf(err, errlen, "'%s': %s", path, why);
        mbt_free(t);
    }
    return rc;
}

/* Before any run: the trace parses, its process made calls, and the most
 * bytes that process held at once fit in the memory available (refused, or
 * with over_memory=warn a warning); a cut tail is a warning.  Warnings go to
 * stderr here, once, not from every sample's worker. */
static int replay_check(const wl_args_t *a, char *err, size_t errlen)
{
    mbt_trace_t t;
    uint32_t pid;
    int rc = replay_load(a, &t, &pid, err, errlen);
    if (rc)
        return rc;
    const char *path = wl_get_str(a, "trace");
    if (t.truncated_at)
        fprintf(stderr, "mallocbench: warning: replay: %s\n", err);
    mbt_stats_t s;
    char why[256];
    rc = mbt_stats(&t, pid, &s);
    if (rc)
        snprintf(err, errlen, "'%s': %s", path, strerror(-rc));
    else if (mem_check_peak(s.replay_peak_bytes, why, sizeof why)) { /* what the replay will hold */
        bool warn = wl_get(a, "over_memory") == OVER_MEMORY_WARN;
        if (!warn) {
            snprintf(err, errlen, "'%s': process %u: %s (over_memory=warn runs it anyway)", path,
                     pid, why);
            rc = -ENOMEM;
        } else {
            fprintf(stderr, "mallocbench: warning: replay: '%s': process %u: %s\n", path, pid,
                    why);
        }
    }
    mbt_free(&t);
    return rc;
}

/* Each thread's region [from, to): the ops between the region the program
 * marked (the trace's header line "region=BEGIN END", ns from the trace's
 * start) with region=recorded, else all of them. */
static void replay_split(replay_t *r, const mbt_trace_t *t, bool recorded)
{
    char val[128];
    unsigned long long b = 0, e = 0;
    bool have = recorded && !mbt_text_get(t, "region", val, sizeof val) &&
                sscanf(val, "%llu %llu", &b, &e) == 2 && b <= e;
    r->region = have ? "recorded" : recorded ? "none" : "whole";
    uint64_t rb = have && b > r->t0 ? b - r->t0 : 0, re = have && e > r->t0 ? e - r->t0 : 0;
    r->shift = rb;
    for (unsigned k = 0; k < r->nthr; k++) {
        rthr_t *th = &r->thr[k];
        th->from = 0, th->to = th->nops;
        if (!have)
            continue;
        while (th->from < th->nops && th->ops[th->from].t < rb)
            th->from++;
        th->to = th->from;
        while (th->to < th->nops && th->ops[th->to].t <= re)
            th->to++;
    }
}

static int replay_run(const wl_args_t *a, wl_result_t *res)
{
    char err[512];
    mbt_trace_t t;
    uint32_t pid;
    int rc = replay_load(a, &t, &pid, err, sizeof err);
    if (rc) {
        fprintf(stderr, "mallocbench-worker: replay: %s\n", err);
        return rc;
    }
    replay_t *r = sysmem_aligned64(sizeof *r);
    if (!r) {
        mbt_free(&t);
        return -ENOMEM;
    }
    memset(r, 0, sizeof *r);
    r->page = (uint64_t)sysconf(_SC_PAGESIZE);
    r->lat_every = wl_get(a, "latency");
    r->timing = (int)wl_get(a, "timing");
    r->missing = replay_missing_ops();
    rc = replay_build(r, &t, pid, (int)wl_get(a, "touch"));
    if (!rc)
        replay_split(r, &t, wl_get(a, "region") == 0);
    mbt_free(&t);
    for (unsigned k = 0; !rc && k < r->nthr; k++) {
        r->thr[k].hist = sysmem_malloc(sizeof(hist_t));
        if (!r->thr[k].hist)
            rc = -ENOMEM;
        else
            hist_init(r->thr[k].hist);
    }
    if (rc == -E2BIG)
        fprintf(stderr, "mallocbench-worker: replay: more than %u objects\n", NONE - 1);
    if (!rc)
        rc = replay_threads(r);
    uint64_t failed = 0, first = 0;
    for (unsigned k = 0; !rc && k < r->nthr; k++) {
        if (r->thr[k].failed && !failed)
            first = r->thr[k].failed_size;
        failed += r->thr[k].failed;
    }
    if (failed) { /* failed calls are fast: a throughput of work not done is no figure */
        char msg[256];
        snprintf(msg, sizeof msg, "replay: %" PRIu64 " allocator calls failed where the recording got memory "
                 "(the first asked for %" PRIu64 " bytes): out of memory or an address-space limit", failed, first);
        region_fail(msg);
        rc = -ENOMEM;
    }
    if (!rc)
        replay_report(r, res);
    replay_release(r);
    return rc;
}

static const wl_param_t replay_params[] = {
    {"trace", WLP_STRING, "", 0, 0, NULL, "path",
     "the trace to replay, written by `mallocbench record` (refused before any run unless it "
     "parses)"},
    {"pid", WLP_UINT, "0", 0, UINT32_MAX, NULL, "",
     "the recorded process to replay (0: the recorded command, the trace's first process)"},
    {"timing", WLP_ENUM, "fast", 0, 0, "fast|recorded", "",
     "fast: every call as soon as the one before it (and the object it frees) is done; "
     "recorded: each call not before its recorded time since the first event"},
    {"touch", WLP_ENUM, "page", 0, 0, "page|none|recorded", "",
     "page: write one byte in every page of each block allocated (realloc: of the new part); "
     "none: no write; recorded: as many pages as the trace saw touched when it was freed "
     "(page where the trace does not say)"},
    {"latency", WLP_UINT, "16", 0, 1000000000, NULL, "ops",
     "time one call in LATENCY (with its writes) for the latency percentiles (0: none)"},
    {"region", WLP_ENUM, "recorded", 0, 0, "recorded|whole", "",
     "recorded: measure only the calls between the region the program marked while it was "
     "recorded (include/mallocbench.h; the trace's region line), replaying those before and after "
     "it unmeasured; whole: every call (also when the trace has no region)"},
    {"over_memory", WLP_ENUM, "refuse", 0, 0, "refuse|warn", "",
     "when the process's peak live bytes are more than the memory available (MemAvailable, "
     "or the RLIMIT_AS or cgroup limit where lower): refuse the run before it starts, or "
     "warn and run it"},
};

const wl_t wl_replay = {
    .name = "replay",
    .help = "replays a trace recorded by `mallocbench record`: the same allocator calls, one "
            "thread per recorded thread, synchronized only where an object crosses threads",
    .params = replay_params,
    .nparams = sizeof replay_params / sizeof *replay_params,
    .run = replay_run,
    .metric = "replayed allocation calls per second",
    .check = replay_check,
    .smoke = "replay:trace={fixtures}/replay-kinds.mbt",
};
