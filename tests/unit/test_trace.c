/* test_trace.c - the .mbt reader (common/trace.c) on traces built in memory:
 * a valid one read back thread by thread, each corruption refused with the
 * byte offset of the broken field, a thread's time going backwards refused,
 * a cut tail read up to the last whole chunk (truncated_at, a warning) while
 * a cut inside the file header or corruption at the end is refused, and the stats
 * (counts, unknown frees, peak live bytes across threads merged by time). */
#include "../check.h"
#include "trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct {
    unsigned char b[8192];
    size_t n;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
    memcpy(b->b + b->n, p, n);
    b->n += n;
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void header(buf_t *b, const char *text)
{
    mbt_header_t h = {.version = MBT_VERSION, .header_len = sizeof h, .page_size = 4096,
                      .text_len = (uint32_t)strlen(text), .start_ns = 12345};
    memcpy(h.magic, MBT_MAGIC, 8);
    put(b, &h, sizeof h);
    put(b, text, strlen(text));
}

static void process(buf_t *b, uint32_t pid, uint32_t ppid, uint32_t forked, const char *exe)
{
    mbt_process_t p = {.pid = pid, .ppid = ppid, .start_ns = 7, .forked = forked,
                       .exe_len = (uint32_t)strlen(exe)};
    mbt_chunk_t c = {MBT_CHUNK_MAGIC, MBT_CHUNK_PROCESS, pid, pid, 0,
                     (uint32_t)(sizeof p + strlen(exe))};
    put(b, &c, sizeof c);
    put(b, &p, sizeof p);
    put(b, exe, strlen(exe));
}

static void events(buf_t *b, uint32_t pid, uint32_t tid, uint32_t seq, const mbt_event_t *e,
                   size_t n)
{
    mbt_chunk_t c = {MBT_CHUNK_MAGIC, MBT_CHUNK_EVENTS, pid, tid, seq,
                     (uint32_t)(n * sizeof *e)};
    put(b, &c, sizeof c);
    put(b, e, n * sizeof *e);
}

#define EV(t, op, ptr, size, arg) {MBT_T_OP(t, op), ptr, size, arg}

/* Offsets of the records of the trace valid() builds, for the corruptions. */
static size_t off_proc, off_ev0, off_ev1, off_ev2, off_fork;

/* pid 100: main thread 100 (two chunks), thread 101; forked child 200. */
static void valid(buf_t *b)
{
    b->n = 0;
    header(b, "command=prog a b\nallocator=glibc\n");
    off_proc = b->n;
    process(b, 100, 1, 0, "/bin/prog");
    const mbt_event_t m0[] = {
        EV(10, MBT_THREAD_START, 0, 0, 0),
        EV(20, MBT_MALLOC, 0x1000, 100, 0),
        EV(30, MBT_CALLOC, 0x2000, 40, 4),
        EV(50, MBT_REALLOC, 0x3000, 300, 0x1000), /* live 100+40 -> 40+300 */
    };
    const mbt_event_t t1[] = {
        EV(40, MBT_THREAD_START, 0, 0, 100),
        EV(45, MBT_POSIX_MEMALIGN, 0x4000, 1000, 64), /* live 1140 at t=45 */
        EV(60, MBT_FREE, 0x4000, 0, 0),
        EV(70, MBT_THREAD_END, 0, 0, 0),
    };
    const mbt_event_t m1[] = {
        EV(55, MBT_FREE, 0x2000, 0, 0),   /* live 300 + 1000 */
        EV(80, MBT_FREE, 0x9999, 0, 0),   /* never allocated in the trace */
        EV(81, MBT_FREE, 0, 0, 0),        /* free(NULL) */
        EV(82, MBT_MALLOC, 0, 1ull << 50, 0), /* failed */
        EV(83, MBT_REALLOC, 0, 0, 0x3000),    /* realloc(p, 0) freed p */
    };
    off_ev0 = b->n;
    events(b, 100, 100, 0, m0, 4);
    off_ev1 = b->n;
    events(b, 100, 101, 0, t1, 4);
    off_ev2 = b->n;
    events(b, 100, 100, 1, m1, 5);
    off_fork = b->n;
    process(b, 200, 100, 1, "/bin/prog");
    const mbt_event_t c0[] = {EV(90, MBT_THREAD_START, 0, 0, 100), EV(91, MBT_VALLOC, 0x5000, 8, 0)};
    events(b, 200, 200, 0, c0, 2);
}

static void check_valid(void)
{
    buf_t b;
    valid(&b);
    mbt_trace_t t;
    char err[256];
    CHECK_INT(mbt_parse(b.b, b.n, &t, err, sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_INT(t.version, MBT_VERSION);
    CHECK_INT(t.page_size, 4096);
    CHECK_U64(t.start_ns, 12345);
    CHECK_STR(t.text, "command=prog a b\nallocator=glibc\n");
    char v[64];
    CHECK_INT(mbt_text_get(&t, "command", v, sizeof v), 0);
    CHECK_STR(v, "prog a b");
    CHECK_INT(mbt_text_get(&t, "allocator", v, sizeof v), 0);
    CHECK_STR(v, "glibc");
    CHECK_INT(mbt_text_get(&t, "machine", v, sizeof v), -ENOENT);
    CHECK_INT(mbt_text_get(&t, "command", v, 4), -ERANGE);
    CHECK_INT(t.nproc, 2);
    CHECK_INT(t.proc[0].pid, 100);
    CHECK_INT(t.proc[0].ppid, 1);
    CHECK_INT(t.proc[0].forked, 0);
    CHECK_STR(t.proc[0].exe, "/bin/prog");
    CHECK_INT(t.proc[1].pid, 200);
    CHECK_INT(t.proc[1].forked, 1);
    CHECK_INT(t.nthread, 3);
    CHECK_U64(t.nevents, 15);
    CHECK_INT(t.thread[0].tid, 100);
    CHECK_INT(t.thread[0].nev, 9);   /* both chunks, in seq order */
    CHECK_INT(t.thread[0].proc, 0);
    CHECK_INT(MBT_OP(&t.thread[0].ev[4]), MBT_FREE);
    CHECK_U64(t.thread[0].ev[4].ptr, 0x2000);
    CHECK_U64(MBT_T(&t.thread[0].ev[3]), 50);
    CHECK_INT(t.thread[1].tid, 101);
    CHECK_INT(t.thread[1].nev, 4);
    CHECK_INT(t.thread[2].pid, 200);
    CHECK_INT(t.thread[2].proc, 1);
    CHECK_STR(mbt_op_name(MBT_POSIX_MEMALIGN), "posix_memalign");
    CHECK(mbt_op_name(0) == NULL);
    CHECK(mbt_op_name(MBT_OP_COUNT) == NULL);

    mbt_stats_t s;
    CHECK_INT(mbt_stats(&t, 0, &s), 0);
    CHECK_U64(s.count[MBT_MALLOC], 2);
    CHECK_U64(s.count[MBT_CALLOC], 1);
    CHECK_U64(s.count[MBT_REALLOC], 2);
    CHECK_U64(s.count[MBT_FREE], 4);
    CHECK_U64(s.count[MBT_POSIX_MEMALIGN], 1);
    CHECK_U64(s.count[MBT_THREAD_START], 2);
    CHECK_U64(s.count[MBT_THREAD_END], 1);
    CHECK_U64(s.count[MBT_VALLOC], 0);
    CHECK_U64(s.unknown_free, 1);
    CHECK_U64(s.peak_live_bytes, 1340);  /* 40 + 300 + 1000 at t=50 */
    CHECK_U64(s.live_bytes_end, 0);
    CHECK_U64(s.bytes_allocated, 100 + 40 + 300 + 1000);
    CHECK_U64(s.nthreads, 2);
    CHECK_INT(mbt_stats(&t, 200, &s), 0);
    CHECK_U64(s.count[MBT_VALLOC], 1);
    CHECK_U64(s.live_bytes_end, 8);
    CHECK_U64(s.nthreads, 1);
    CHECK_INT(mbt_stats(&t, 300, &s), -ENOENT);
    mbt_free(&t);
}

/* Parse b with the uint32 at `at` set to v (at == SIZE_MAX: unchanged);
 * expect failure with the message starting "byte want:" and containing what. */
static void refused(const buf_t *orig, size_t len, size_t at, uint32_t v, size_t want,
                    const char *what, int line)
{
    static buf_t b;
    b = *orig;
    if (at != SIZE_MAX)
        put32(b.b + at, v);
    mbt_trace_t t;
    char err[256], prefix[32];
    int rc = mbt_parse(b.b, len, &t, err, sizeof err);
    snprintf(prefix, sizeof prefix, "byte %zu: ", want);
    if (rc != -EINVAL || strncmp(err, prefix, strlen(prefix)) || !strstr(err, what)) {
        check_failures++;
        fprintf(stderr, "line %d: rc %d, err \"%s\", wanted \"%s...%s\"\n", line, rc, err,
                prefix, what);
    }
    if (!rc)
        mbt_free(&t);
}
#define REFUSED(at, v, want, what) refused(&b, b.n, at, v, want, what, __LINE__)

static void check_corrupt(void)
{
    static buf_t b;
    valid(&b);
    REFUSED(0, 0x41414141, 0, "bad magic");
    REFUSED(8, 3, 8, "unknown version 3");
    REFUSED(8, 0, 8, "unknown version 0");
    REFUSED(12, 16, 12, "header_len 16 is less than 32");
    REFUSED(12, 1 << 20, 12, "past the end");
    REFUSED(16, 1000, 16, "page_size");
    REFUSED(20, MBT_TEXT_MAX + 1, 20, "more than");
    REFUSED(20, 5000, 20, "runs past the end");
    REFUSED(32, 0x41410041, 33, "NUL byte");
    REFUSED(off_ev0, 0x1234, off_ev0, "bad chunk magic");
    REFUSED(off_ev0 + 4, 9, off_ev0 + 4, "unknown chunk kind 9");
    REFUSED(off_ev0 + 20, 1 << 20, off_ev0 + 20, "longer than any chunk");
    REFUSED(off_ev0 + 20, 4 * 32 + 8, off_ev0 + 20, "not a multiple of 32");
    REFUSED(off_ev0 + 24 + 64, MBT_T_OP(30, 0), off_ev0 + 24 + 64, "unknown op 0");
    REFUSED(off_ev0 + 24 + 64, MBT_T_OP(30, MBT_OP_COUNT), off_ev0 + 24 + 64, "unknown op 13");
    REFUSED(off_ev0 + 16, 1, off_ev0 + 16, "chunk seq 1 of thread 100/100, expected 0");
    REFUSED(off_ev2 + 16, 0, off_ev2 + 16, "chunk seq 0 of thread 100/100, expected 1");
    REFUSED(off_ev2 + 16, 2, off_ev2 + 16, "expected 1");
    REFUSED(off_ev1 + 8, 555, off_ev1 + 8, "events of pid 555 before its process chunk");
    REFUSED(off_proc + 16, 3, off_proc + 16, "process chunk with seq 3");
    REFUSED(off_proc + 20, 20, off_proc + 20, "shorter than 24");
    REFUSED(off_proc + 24, 101, off_proc + 24, "process pid 101 in a chunk of pid 100");
    REFUSED(off_proc + 44, 3, off_proc + 44, "exe_len 3 does not fill");
    REFUSED(off_fork + 20, 1 << 20, off_fork + 20, "longer than any chunk");
    /* corruption at the very end is not a cut tail */
    size_t last = b.n - 24 - 64;
    refused(&b, last + 10, last, 0x1234, last, "bad chunk magic in the 10 bytes", __LINE__);
    refused(&b, last + 10, last + 4, 7, last + 4, "unknown chunk kind 7", __LINE__);
    refused(&b, b.n - 1, last + 20, MBT_PAYLOAD_MAX + 32, last + 20, "longer than any chunk",
            __LINE__);
    refused(&b, b.n - 1, last + 20, 40, last + 20, "not a multiple of 32", __LINE__);
}

/* Time running backwards in a thread (timing=recorded would wait for ever):
 * refused at the event, within a chunk and across a thread's chunks;
 * equal times are fine. */
static void check_time(void)
{
    static buf_t b;
    valid(&b);
    REFUSED(off_ev0 + 24 + 64, MBT_T_OP(15, MBT_CALLOC), off_ev0 + 24 + 64,
            "time 15 ns of thread 100/100 is before its previous event's 20 ns");
    REFUSED(off_ev2 + 24, MBT_T_OP(49, MBT_FREE), off_ev2 + 24,
            "time 49 ns of thread 100/100 is before its previous event's 50 ns");
    REFUSED(off_ev1 + 24 + 32, MBT_T_OP(39, MBT_POSIX_MEMALIGN), off_ev1 + 24 + 32,
            "thread 100/101");
    buf_t *c = malloc(sizeof *c);
    *c = b;
    put32(c->b + off_ev0 + 24 + 64, MBT_T_OP(20, MBT_CALLOC));
    put32(c->b + off_ev2 + 24, MBT_T_OP(50, MBT_FREE));
    mbt_trace_t t;
    char err[256];
    CHECK_INT(mbt_parse(c->b, c->n, &t, err, sizeof err), 0);
    CHECK_STR(err, "");
    mbt_free(&t);
    free(c);
}

/* A file cut anywhere after its header reads up to the last whole chunk:
 * 0, truncated_at the cut chunk's byte and the warning "byte N: ..." in err;
 * cut at a chunk boundary it is whole.  A cut file header is refused. */
static void check_cut(void)
{
    static buf_t b;
    valid(&b);
    size_t starts[] = {off_proc, off_ev0, off_ev1, off_ev2, off_fork, b.n - 24 - 64, b.n};
    size_t nst = sizeof starts / sizeof *starts;
    for (size_t len = 0; len < b.n; len++) {
        size_t at = 0; /* start of the chunk len cuts; 0: a boundary */
        bool boundary = false;
        for (size_t i = 0; i + 1 < nst; i++) {
            boundary |= len == starts[i];
            if (len > starts[i] && len < starts[i + 1])
                at = starts[i];
        }
        mbt_trace_t t;
        char err[256], want[64];
        int rc = mbt_parse(b.b, len, &t, err, sizeof err);
        snprintf(want, sizeof want, "byte %zu: the last chunk is cut (%zu of ", at, len - at);
        bool ok = len < off_proc ? rc == -EINVAL && !strncmp(err, "byte ", 5)
                  : boundary     ? rc == 0 && t.truncated_at == 0 && !err[0]
                                 : rc == 0 && t.truncated_at == at && !strncmp(err, want, strlen(want));
        if (!ok) {
            check_failures++;
            fprintf(stderr, "cut at %zu: rc %d truncated_at %zu \"%s\", wanted %zu\n", len, rc,
                    rc ? 0 : t.truncated_at, err, at);
        }
        if (!rc)
            mbt_free(&t);
    }
    /* what a cut file holds: the whole chunks before the cut */
    mbt_trace_t t;
    char err[256];
    CHECK_INT(mbt_parse(b.b, off_ev2 + 30, &t, err, sizeof err), 0);
    CHECK_INT(t.truncated_at, off_ev2);
    CHECK_U64(t.nevents, 8);
    CHECK_INT(t.nproc, 1);
    mbt_free(&t);
    refused(&b, 20, SIZE_MAX, 0, 20, "file header truncated", __LINE__);
}

/* pid 100 forks 200, then execs: two images of 100 chained, each image's
 * threads in its slice of proc_thread, stats over both images (live
 * blocks end at the exec), by pid or by any image's index. */
static void check_images(void)
{
    static buf_t b;
    b.n = 0;
    header(&b, "command=prog\n");
    process(&b, 100, 1, 0, "/bin/sh");
    const mbt_event_t a0[] = {EV(10, MBT_MALLOC, 0x1000, 100, 0)};
    const mbt_event_t a1[] = {EV(11, MBT_MALLOC, 0x2000, 50, 0)};
    events(&b, 100, 100, 0, a0, 1);
    events(&b, 100, 101, 0, a1, 1);
    process(&b, 200, 100, 1, "/bin/sh");
    const mbt_event_t c0[] = {EV(12, MBT_MALLOC, 0x3000, 7, 0)};
    events(&b, 200, 200, 0, c0, 1);
    process(&b, 100, 1, 0, "/bin/prog"); /* exec: seq restarts */
    const mbt_event_t p0[] = {EV(20, MBT_MALLOC, 0x1000, 30, 0), EV(21, MBT_FREE, 0x2000, 0, 0)};
    events(&b, 100, 100, 0, p0, 2);
    mbt_trace_t t;
    char err[256];
    CHECK_INT(mbt_parse(b.b, b.n, &t, err, sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_INT(t.nproc, 3);
    CHECK_INT(t.nthread, 4);
    CHECK_INT(t.proc[0].first_image, 0);
    CHECK_INT(t.proc[0].next_image, 2);
    CHECK_INT(t.proc[1].first_image, 1);
    CHECK_INT(t.proc[1].next_image, 0);
    CHECK_INT(t.proc[2].first_image, 0);
    CHECK_INT(t.proc[2].next_image, 0);
    CHECK_INT(t.proc[0].nthreads, 2);
    CHECK_INT(t.proc_thread[t.proc[0].thread0], 0);
    CHECK_INT(t.proc_thread[t.proc[0].thread0 + 1], 1);
    CHECK_INT(t.proc[1].nthreads, 1);
    CHECK_INT(t.proc_thread[t.proc[1].thread0], 2);
    CHECK_INT(t.proc[2].nthreads, 1);
    CHECK_INT(t.proc_thread[t.proc[2].thread0], 3);
    mbt_stats_t s, s2;
    CHECK_INT(mbt_stats(&t, 100, &s), 0);
    CHECK_U64(s.count[MBT_MALLOC], 3);
    CHECK_U64(s.nthreads, 3);
    CHECK_U64(s.unknown_free, 1);        /* 0x2000 died with the first image */
    CHECK_U64(s.peak_live_bytes, 150);
    CHECK_U64(s.live_bytes_end, 30);
    CHECK_INT(mbt_stats_proc(&t, 2, &s2), 0);  /* any image: the whole pid */
    CHECK(memcmp(&s, &s2, sizeof s) == 0);
    CHECK_INT(mbt_stats_proc(&t, 1, &s), 0);
    CHECK_U64(s.count[MBT_MALLOC], 1);
    CHECK_U64(s.live_bytes_end, 7);
    CHECK_INT(mbt_stats_proc(&t, 3, &s), -ENOENT);
    mbt_free(&t);
}

/* Version 2's madvise event: read, counted, never an allocation; a version 1
 * trace holding one is refused (version 1 had no such op). */
static void check_madvise(void)
{
    static buf_t b;
    const mbt_event_t e[] = {EV(10, MBT_MALLOC, 0x10010, 1 << 23, 0),
                             EV(11, MBT_MADVISE, 0x11000, (1 << 23) - 0xff0, 14),
                             EV(12, MBT_FREE, 0x10010, 0, 0)};
    b.n = 0;
    header(&b, "command=prog\n");
    process(&b, 100, 1, 0, "/bin/prog");
    size_t ev = b.n;
    events(&b, 100, 100, 0, e, 3);
    mbt_trace_t t;
    mbt_stats_t s;
    char err[256];
    CHECK_INT(mbt_parse(b.b, b.n, &t, err, sizeof err), 0);
    CHECK_INT(mbt_stats(&t, 100, &s), 0);
    CHECK_U64(s.count[MBT_MADVISE], 1);
    CHECK_U64(s.peak_live_bytes, 1 << 23);
    CHECK_U64(s.bytes_allocated, 1 << 23);
    CHECK_STR(mbt_op_name(MBT_MADVISE), "madvise");
    mbt_free(&t);
    put32(b.b + 8, 1); /* the same events in a version 1 trace */
    CHECK_INT(mbt_parse(b.b, b.n, &t, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "unknown op 12") != NULL);
    char at[32];
    snprintf(at, sizeof at, "byte %zu", ev + sizeof(mbt_chunk_t) + sizeof(mbt_event_t));
    CHECK(strstr(err, at) != NULL);
}

int main(void)
{
    check_madvise();
    check_valid();
    check_images();
    check_corrupt();
    check_time();
    check_cut();
    CHECK_DONE();
}
