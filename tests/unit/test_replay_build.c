/* test_replay_build.c - the replay's objects from a trace built in memory
 * (workloads/replay.c, included whole: its builder is static): a
 * realloc(p, 0) that freed p ends p's object and holds nothing, while a
 * realloc that failed (ptr 0 for a size above 0) keeps its block, which a
 * later free then frees; the replay's peak of live bytes follows, and an
 * address handed out again after realloc(p, 0) is a new object, not one made
 * over a live block.  Nothing is replayed: no allocator call is made. */
#include "../../workloads/replay.c" /* its descriptor too: the core library's copy is then never linked */
#include "../check.h"

typedef struct {
    unsigned char b[4096];
    size_t n;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

/* One process (pid 100), one thread, these events. */
static void trace_of(buf_t *b, const mbt_event_t *ev, size_t n)
{
    static const char text[] = "command=prog\n", exe[] = "/bin/prog";
    mbt_header_t h = {.version = MBT_VERSION, .header_len = sizeof h, .page_size = 4096,
                      .text_len = sizeof text - 1, .start_ns = 1};
    memcpy(h.magic, MBT_MAGIC, 8);
    b->n = 0;
    put(b, &h, sizeof h);
    put(b, text, sizeof text - 1);
    mbt_process_t p = {.pid = 100, .ppid = 1, .start_ns = 1, .exe_len = sizeof exe - 1};
    mbt_chunk_t c = {MBT_CHUNK_MAGIC, MBT_CHUNK_PROCESS, 100, 100, 0, (uint32_t)(sizeof p + sizeof exe - 1)};
    put(b, &c, sizeof c);
    put(b, &p, sizeof p);
    put(b, exe, sizeof exe - 1);
    mbt_chunk_t e = {MBT_CHUNK_MAGIC, MBT_CHUNK_EVENTS, 100, 100, 0, (uint32_t)(n * sizeof *ev)};
    put(b, &e, sizeof e);
    put(b, ev, n * sizeof *ev);
}

#define EV(t, op, ptr, size, arg) {MBT_T_OP(t, op), ptr, size, arg}
#define A 0x7f0000010000ull
#define B 0x7f0000020000ull

/* The replay built from the events (NULL on failure, checked). */
static replay_t *build(const mbt_event_t *ev, size_t n)
{
    static buf_t b;
    trace_of(&b, ev, n);
    mbt_trace_t t;
    char err[256];
    int rc = mbt_parse(b.b, b.n, &t, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    replay_t *r = sysmem_aligned64(sizeof *r);
    memset(r, 0, sizeof *r);
    r->page = 4096;
    rc = replay_build(r, &t, 100, TOUCH_PAGE);
    mbt_free(&t);
    CHECK_INT(rc, 0);
    CHECK_INT(r->nthr, 1);
    if (rc || r->nthr != 1) {
        replay_release(r);
        return NULL;
    }
    return r;
}

static void test_realloc_zero(void)
{
    const mbt_event_t ev[] = {
        EV(10, MBT_MALLOC, A, 100, 0),
        EV(20, MBT_REALLOC, 0, 0, A),         /* realloc(A, 0): A freed, nothing made */
        EV(30, MBT_MALLOC, A, 64, 0),         /* A handed out again: a new block */
        EV(40, MBT_MALLOC, B, 500, 0),        /* live 64 + 500: the peak */
        EV(50, MBT_REALLOC, 0, 1ull << 50, B),/* failed: B stays where it was */
        EV(60, MBT_FREE, B, 0, 0),
        EV(70, MBT_FREE, A, 0, 0),
    };
    replay_t *r = build(ev, sizeof ev / sizeof ev[0]);
    if (!r)
        return;
    const rthr_t *th = &r->thr[0];
    CHECK_INT(th->nops, 7);
    if (th->nops == 7) {
        const rop_t *op = th->ops;
        CHECK_INT(op[1].op, MBT_REALLOC);
        CHECK_INT(op[1].in, op[0].out);      /* realloc(A, 0) frees the first block */
        CHECK_U64(op[1].arg, 100);           /* its old size */
        CHECK_U64(op[1].size, 0);
        CHECK(!(op[1].flags & F_GOT));       /* a NULL from it is no failure */
        CHECK(op[2].out != op[1].out);
        CHECK_INT(op[6].in, op[2].out);      /* the last free frees the second block at A */
        CHECK_INT(op[4].in, op[3].out);      /* the failed realloc takes B... */
        CHECK_INT(op[5].in, op[4].out);      /* ...and keeps it: the free frees what it kept */
        CHECK_U64(op[4].arg, 500);
    }
    CHECK_U64(r->peak_live, 564);            /* 100 freed by realloc(A, 0) before 64 + 500 */
    CHECK_U64(r->over_live, 0);              /* A was free when it was handed out again */
    CHECK_U64(r->unknown_free, 0);
    CHECK_U64(r->unknown_realloc, 0);
    replay_release(r);
}

/* realloc(A, 0) then a free of A: the free is of an address no longer live. */
static void test_free_after_zero(void)
{
    const mbt_event_t ev[] = {
        EV(10, MBT_MALLOC, A, 4096, 0),
        EV(20, MBT_REALLOC, 0, 0, A),
        EV(30, MBT_FREE, A, 0, 0),            /* unknown: A was freed by the realloc */
        EV(40, MBT_MALLOC, B, 10, 0),
        EV(50, MBT_FREE, B, 0, 0),
    };
    replay_t *r = build(ev, sizeof ev / sizeof ev[0]);
    if (!r)
        return;
    CHECK_U64(r->unknown_free, 1);
    CHECK_U64(r->peak_live, 4096);
    CHECK_INT(r->thr[0].nops, 4);            /* the unknown free makes no op */
    replay_release(r);
}

int main(void)
{
    test_realloc_zero();
    test_free_after_zero();
    CHECK_DONE();
}
