/* trace.c - the .mbt reader (see trace.h): a strict parser over a buffer,
 * every error "byte N: <what>" at the field that is wrong; events grouped
 * per thread in program order; per-process stats (counts, peak live bytes). */
#include "trace.h"

#include "hashmap.h"
#include "sysmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define HDR_LEN MBT_HEADER_SIZE
#define CHUNK_LEN MBT_CHUNK_SIZE
#define PROC_LEN MBT_PROCESS_SIZE
#define EV_LEN MBT_EVENT_SIZE
/* Byte offset of a field in its on-disk record (the structs are the layout). */
#define HDR(f) offsetof(mbt_header_t, f)
#define CHK(f) offsetof(mbt_chunk_t, f)
#define PRC(f) offsetof(mbt_process_t, f)
#define EVT(f) offsetof(mbt_event_t, f)

static const char *const op_names[MBT_OP_COUNT] = {
    [MBT_MALLOC] = "malloc", [MBT_CALLOC] = "calloc", [MBT_REALLOC] = "realloc",
    [MBT_FREE] = "free", [MBT_POSIX_MEMALIGN] = "posix_memalign",
    [MBT_ALIGNED_ALLOC] = "aligned_alloc", [MBT_MEMALIGN] = "memalign",
    [MBT_VALLOC] = "valloc", [MBT_PVALLOC] = "pvalloc",
    [MBT_THREAD_START] = "thread_start", [MBT_THREAD_END] = "thread_end",
    [MBT_MADVISE] = "madvise",
};

const char *mbt_op_name(unsigned op)
{
    return op < MBT_OP_COUNT ? op_names[op] : NULL;
}

/* ---- parsing --------------------------------------------------------------- */

typedef struct {
    const unsigned char *b;
    size_t len;
    char *err;
    size_t errlen;
    mbt_trace_t *t;
    hmap_t threads;     /* (pid << 32 | tid) -> thread index */
    hmap_t procs;       /* pid -> index of its latest process */
    uint32_t *next_seq; /* per thread */
    uint64_t *last_t;   /* per thread: time of its latest event */
    size_t *cap;        /* events allocated per thread */
    size_t thread_cap, proc_cap;
} rd_t;

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
    return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

__attribute__((format(printf, 3, 4)))
static int fail(rd_t *r, size_t off, const char *fmt, ...)
{
    if (!r->errlen)
        return -EINVAL;
    int n = snprintf(r->err, r->errlen, "byte %zu: ", off);
    if (n >= 0 && (size_t)n < r->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

static int oom(rd_t *r)
{
    if (r->errlen)
        snprintf(r->err, r->errlen, "out of memory");
    return -ENOMEM;
}

static int parse_header(rd_t *r, size_t *off)
{
    const unsigned char *b = r->b;
    size_t n = r->len < 8 ? r->len : 8;
    if (memcmp(b, MBT_MAGIC, n))
        return fail(r, 0, "bad magic: not a mallocbench trace");
    if (r->len < HDR_LEN)
        return fail(r, r->len, "file header truncated (%u bytes needed, file has %zu)",
                    HDR_LEN, r->len);
    uint32_t version = get32(b + HDR(version)), header_len = get32(b + HDR(header_len));
    uint32_t page = get32(b + HDR(page_size)), text_len = get32(b + HDR(text_len));
    if (version < MBT_VERSION_MIN || version > MBT_VERSION)
        return fail(r, HDR(version), "unknown version %u (this reader knows %u to %u)", version,
                    MBT_VERSION_MIN, MBT_VERSION);
    if (header_len < HDR_LEN)
        return fail(r, HDR(header_len), "header_len %u is less than %u", header_len, HDR_LEN);
    if (header_len > r->len)
        return fail(r, HDR(header_len), "header_len %u runs past the end of the file (%zu bytes)",
                    header_len, r->len);
    if (page < 512 || (page & (page - 1)))
        return fail(r, HDR(page_size), "page_size %u is not a power of two >= 512", page);
    if (text_len > MBT_TEXT_MAX)
        return fail(r, HDR(text_len), "text_len %u is more than %u", text_len, MBT_TEXT_MAX);
    if ((size_t)header_len + text_len > r->len)
        return fail(r, HDR(text_len), "text_len %u runs past the end of the file (%zu bytes)",
                    text_len, r->len);
    const unsigned char *nul = memchr(b + header_len, 0, text_len);
    if (nul)
        return fail(r, (size_t)(nul - b), "NUL byte in the header text");
    mbt_trace_t *t = r->t;
    t->version = version;
    t->page_size = page;
    t->start_ns = get64(b + HDR(start_ns));
    if (!(t->text = sysmem_malloc((size_t)text_len + 1)))
        return oom(r);
    memcpy(t->text, b + header_len, text_len);
    t->text[text_len] = '\0';
    *off = (size_t)header_len + text_len;
    return 0;
}

static int parse_process(rd_t *r, size_t off, uint32_t pid, uint32_t seq, uint32_t plen)
{
    const unsigned char *p = r->b + off + CHUNK_LEN;
    if (seq != 0)
        return fail(r, off + CHK(seq), "process chunk with seq %u (must be 0)", seq);
    if (plen < PROC_LEN)
        return fail(r, off + CHK(payload_len), "process chunk of %u bytes is shorter than %u",
                    plen, PROC_LEN);
    if (get32(p + PRC(pid)) != pid)
        return fail(r, off + CHUNK_LEN, "process pid %u in a chunk of pid %u",
                    get32(p + PRC(pid)), pid);
    uint32_t exe_len = get32(p + PRC(exe_len));
    if (exe_len != plen - PROC_LEN)
        return fail(r, off + CHUNK_LEN + PRC(exe_len), "exe_len %u does not fill the %u-byte chunk",
                    exe_len, plen);
    mbt_trace_t *t = r->t;
    if (t->nproc == r->proc_cap) {
        size_t cap = r->proc_cap ? r->proc_cap * 2 : 4;
        mbt_proc_t *np = sysmem_realloc(t->proc, cap * sizeof *np);
        if (!np)
            return oom(r);
        t->proc = np;
        r->proc_cap = cap;
    }
    mbt_proc_t *pr = &t->proc[t->nproc];
    *pr = (mbt_proc_t){.pid = pid, .ppid = get32(p + PRC(ppid)),
                       .start_ns = get64(p + PRC(start_ns)), .forked = get32(p + PRC(forked)),
                       .first_image = t->nproc};
    uint64_t *prev = hmap_get(&r->procs, pid);
    if (prev) { /* an exec: chain the images of the pid */
        t->proc[*prev].next_image = t->nproc;
        pr->first_image = t->proc[*prev].first_image;
    }
    if (!(pr->exe = sysmem_malloc((size_t)exe_len + 1)))
        return oom(r);
    memcpy(pr->exe, p + PROC_LEN, exe_len);
    pr->exe[exe_len] = '\0';
    if (hmap_put(&r->procs, pid, t->nproc))
        return oom(r);
    t->nproc++;
    return 0;
}

/* The thread of (pid, tid) in pid's latest process, created if new: its index or -1. */
static long thread_of(rd_t *r, uint32_t pid, uint32_t tid, size_t proc)
{
    mbt_trace_t *t = r->t;
    uint64_t key = (uint64_t)pid << 32 | tid;
    uint64_t *v = hmap_get(&r->threads, key);
    if (v && t->thread[*v].proc == proc)
        return (long)*v;
    if (t->nthread == r->thread_cap) {
        size_t cap = r->thread_cap ? r->thread_cap * 2 : 8;
        mbt_thread_t *nt = sysmem_realloc(t->thread, cap * sizeof *nt);
        uint32_t *ns = sysmem_realloc(r->next_seq, cap * sizeof *ns);
        size_t *nc = sysmem_realloc(r->cap, cap * sizeof *nc);
        uint64_t *nl = sysmem_realloc(r->last_t, cap * sizeof *nl);
        if (nt)
            t->thread = nt;
        if (ns)
            r->next_seq = ns;
        if (nc)
            r->cap = nc;
        if (nl)
            r->last_t = nl;
        if (!nt || !ns || !nc || !nl)
            return -1;
        r->thread_cap = cap;
    }
    size_t i = t->nthread;
    t->thread[i] = (mbt_thread_t){.pid = pid, .tid = tid, .proc = proc};
    r->next_seq[i] = 0;
    r->cap[i] = 0;
    r->last_t[i] = 0;
    if (hmap_put(&r->threads, key, i))
        return -1;
    t->nthread++;
    return (long)i;
}

static int parse_events(rd_t *r, size_t off, uint32_t pid, uint32_t tid, uint32_t seq,
                        uint32_t plen)
{
    if (plen % EV_LEN)
        return fail(r, off + CHK(payload_len), "events payload of %u bytes is not a multiple of %u",
                    plen, EV_LEN);
    uint64_t *proc = hmap_get(&r->procs, pid);
    if (!proc)
        return fail(r, off + CHK(pid), "events of pid %u before its process chunk", pid);
    long ti = thread_of(r, pid, tid, (size_t)*proc);
    if (ti < 0)
        return oom(r);
    if (seq != r->next_seq[ti])
        return fail(r, off + CHK(seq), "chunk seq %u of thread %u/%u, expected %u", seq, pid, tid,
                    r->next_seq[ti]);
    r->next_seq[ti]++;
    mbt_thread_t *th = &r->t->thread[ti];
    size_t n = plen / EV_LEN;
    if (th->nev + n > r->cap[ti]) {
        size_t cap = r->cap[ti] ? r->cap[ti] : 64;
        while (cap < th->nev + n)
            cap *= 2;
        mbt_event_t *ne = sysmem_realloc(th->ev, cap * sizeof *ne);
        if (!ne)
            return oom(r);
        th->ev = ne;
        r->cap[ti] = cap;
    }
    const unsigned char *p = r->b + off + CHUNK_LEN;
    for (size_t i = 0; i < n; i++, p += EV_LEN) {
        mbt_event_t e = {get64(p + EVT(t_op)), get64(p + EVT(ptr)), get64(p + EVT(size)),
                         get64(p + EVT(arg))};
        unsigned op = MBT_OP(&e);
        if (op == 0 || op >= MBT_OP_COUNT || (op == MBT_MADVISE && r->t->version < 2))
            return fail(r, (size_t)(p - r->b), "unknown op %u", op);
        if (MBT_T(&e) < r->last_t[ti]) /* a replay paced by it would wait forever */
            return fail(r, (size_t)(p - r->b), "time %llu ns of thread %u/%u is before its "
                        "previous event's %llu ns", (unsigned long long)MBT_T(&e), pid, tid,
                        (unsigned long long)r->last_t[ti]);
        r->last_t[ti] = MBT_T(&e);
        th->ev[th->nev++] = e;
    }
    r->t->nevents += n;
    return 0;
}

/* The chunk at off runs past the end: a cut tail when what is there is a
 * chunk's beginning (its magic, a known kind, a payload a writer makes), read
 * up to off with a warning in err; else corruption, refused. */
static int cut_tail(rd_t *r, size_t off)
{
    const unsigned char *c = r->b + off;
    size_t have = r->len - off;
    unsigned char magic[4];
    uint32_t kind = have >= CHK(kind) + 4 ? get32(c + CHK(kind)) : MBT_CHUNK_EVENTS;
    uint32_t plen = have >= CHUNK_LEN ? get32(c + CHK(payload_len)) : 0;
    for (int i = 0; i < 4; i++)
        magic[i] = (unsigned char)(MBT_CHUNK_MAGIC >> (8 * i));
    if (memcmp(c, magic, have < 4 ? have : 4))
        return fail(r, off, "bad chunk magic in the %zu bytes at the end", have);
    if (kind != MBT_CHUNK_EVENTS && kind != MBT_CHUNK_PROCESS)
        return fail(r, off + CHK(kind), "unknown chunk kind %u", kind);
    if (plen > MBT_PAYLOAD_MAX)
        return fail(r, off + CHK(payload_len), "payload of %u bytes runs past the end of the "
                    "file (%zu bytes) and is longer than any chunk (%u)", plen, r->len,
                    MBT_PAYLOAD_MAX);
    if (kind == MBT_CHUNK_EVENTS && plen % EV_LEN)
        return fail(r, off + CHK(payload_len), "events payload of %u bytes is not a multiple of %u",
                    plen, EV_LEN);
    r->t->truncated_at = off;
    fail(r, off, "the last chunk is cut (%zu of %zu bytes): read up to it", have,
         have < CHUNK_LEN ? (size_t)CHUNK_LEN : CHUNK_LEN + (size_t)plen);
    return 0;
}

static int parse_chunks(rd_t *r, size_t off)
{
    while (off < r->len) {
        if (r->len - off < CHUNK_LEN)
            return cut_tail(r, off);
        const unsigned char *c = r->b + off;
        uint32_t magic = get32(c + CHK(magic)), kind = get32(c + CHK(kind));
        uint32_t pid = get32(c + CHK(pid)), tid = get32(c + CHK(tid));
        uint32_t seq = get32(c + CHK(seq)), plen = get32(c + CHK(payload_len));
        if (magic != MBT_CHUNK_MAGIC)
            return fail(r, off, "bad chunk magic 0x%08x", magic);
        if (kind != MBT_CHUNK_EVENTS && kind != MBT_CHUNK_PROCESS)
            return fail(r, off + CHK(kind), "unknown chunk kind %u", kind);
        if (plen > r->len - off - CHUNK_LEN)
            return cut_tail(r, off);
        int rc = kind == MBT_CHUNK_PROCESS ? parse_process(r, off, pid, seq, plen)
                                           : parse_events(r, off, pid, tid, seq, plen);
        if (rc)
            return rc;
        off += CHUNK_LEN + (size_t)plen;
    }
    return 0;
}

/* proc_thread and each image's slice of it: the threads of an image without
 * a walk over every thread. */
static int index_threads(rd_t *r)
{
    mbt_trace_t *t = r->t;
    if (!(t->proc_thread = sysmem_malloc((t->nthread ? t->nthread : 1) * sizeof *t->proc_thread)))
        return oom(r);
    for (size_t i = 0; i < t->nthread; i++)
        t->proc[t->thread[i].proc].nthreads++;
    for (size_t k = 0, at = 0; k < t->nproc; k++) {
        t->proc[k].thread0 = at;
        at += t->proc[k].nthreads;
        t->proc[k].nthreads = 0;
    }
    for (size_t i = 0; i < t->nthread; i++) {
        mbt_proc_t *p = &t->proc[t->thread[i].proc];
        t->proc_thread[p->thread0 + p->nthreads++] = i;
    }
    return 0;
}

int mbt_parse(const void *buf, size_t len, mbt_trace_t *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (errlen)
        err[0] = '\0';
    rd_t r = {.b = buf, .len = len, .err = err, .errlen = errlen, .t = t};
    hmap_init(&r.threads, NULL);
    hmap_init(&r.procs, NULL);
    size_t off = 0;
    int rc = parse_header(&r, &off);
    if (!rc)
        rc = parse_chunks(&r, off);
    if (!rc)
        rc = index_threads(&r);
    for (size_t i = 0; !rc && i < t->nthread; i++) { /* give back the doubling's slack */
        mbt_thread_t *th = &t->thread[i];
        if (!th->nev) {
            sysmem_free(th->ev);
            th->ev = NULL;
        } else if (th->nev < r.cap[i]) {
            mbt_event_t *e = sysmem_realloc(th->ev, th->nev * sizeof *e);
            if (e)
                th->ev = e;
        }
    }
    hmap_free(&r.threads);
    hmap_free(&r.procs);
    sysmem_free(r.next_seq);
    sysmem_free(r.cap);
    sysmem_free(r.last_t);
    if (rc)
        mbt_free(t);
    return rc;
}

int mbt_read(const char *path, mbt_trace_t *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        rc = -errno;
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        goto fail;
    }
    size_t len = (size_t)st.st_size;
    void *m = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
    if (m == MAP_FAILED) {
        rc = -errno;
        goto fail;
    }
    close(fd);
    char e[256];
    rc = mbt_parse(m, len, t, e, sizeof e);
    if (len)
        munmap(m, len);
    if ((rc || t->truncated_at) && errlen)
        snprintf(err, errlen, "'%s': %s", path, e);
    return rc;
fail:
    if (fd >= 0)
        close(fd);
    if (errlen)
        snprintf(err, errlen, "'%s': %s", path, rc == -EINVAL ? "not a regular file"
                                                              : strerror(-rc));
    return rc;
}

void mbt_free(mbt_trace_t *t)
{
    for (size_t i = 0; i < t->nthread; i++)
        sysmem_free(t->thread[i].ev);
    for (size_t i = 0; i < t->nproc; i++)
        sysmem_free(t->proc[i].exe);
    sysmem_free(t->thread);
    sysmem_free(t->proc_thread);
    sysmem_free(t->proc);
    sysmem_free(t->text);
    memset(t, 0, sizeof *t);
}

int mbt_text_get(const mbt_trace_t *t, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    for (const char *p = t->text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, kl) || p[kl] != '=')
            continue;
        const char *v = p + kl + 1, *end = strchr(v, '\n');
        size_t n = end ? (size_t)(end - v) : strlen(v);
        if (!len)
            return -ERANGE;
        snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), v);
        return n < len ? 0 : -ERANGE;
    }
    return -ENOENT;
}

/* ---- stats ----------------------------------------------------------------- */

typedef struct {
    uint64_t t;
    uint32_t th;        /* thread index: ties keep thread order */
    uint32_t i;         /* event index: and program order */
} ref_t;

static int ref_cmp(const void *a, const void *b)
{
    const ref_t *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->th != y->th)
        return x->th < y->th ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Sums saturate: a corrupt size cannot wrap them round. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void live_sub(mbt_stats_t *s, uint64_t n)
{
    s->live_bytes_end = n > s->live_bytes_end ? 0 : s->live_bytes_end - n;
}

/* A free the replay makes too (a block it holds ends). */
static void held_sub(mbt_stats_t *s, uint64_t n)
{
    s->replay_live_bytes = n > s->replay_live_bytes ? 0 : s->replay_live_bytes - n;
}

/* Account one event against the live set; -ENOMEM. */
static int stats_event(const mbt_event_t *e, hmap_t *live, mbt_stats_t *s)
{
    unsigned op = MBT_OP(e);
    uint64_t old;
    s->count[op]++;
    if (op == MBT_FREE || (op == MBT_REALLOC && e->arg)) {
        uint64_t p = op == MBT_FREE ? e->ptr : e->arg;
        bool failed = op == MBT_REALLOC && !e->ptr && e->size; /* old block kept */
        if (p && !failed) {
            if (!hmap_del(live, p, &old)) {
                live_sub(s, old);
                held_sub(s, old);
            } else {
                s->unknown_free++;
            }
        }
    }
    if (op == MBT_THREAD_START || op == MBT_THREAD_END || op == MBT_FREE || op == MBT_MADVISE ||
        !e->ptr)
        return 0;
    if (!hmap_del(live, e->ptr, &old)) /* freed unseen: gone for the program, kept by a replay */
        live_sub(s, old);
    if (hmap_put(live, e->ptr, e->size))
        return -ENOMEM;
    s->bytes_allocated = sat_add(s->bytes_allocated, e->size);
    s->live_bytes_end = sat_add(s->live_bytes_end, e->size);
    if (s->live_bytes_end > s->peak_live_bytes)
        s->peak_live_bytes = s->live_bytes_end;
    s->replay_live_bytes = sat_add(s->replay_live_bytes, e->size);
    if (s->replay_live_bytes > s->replay_peak_bytes)
        s->replay_peak_bytes = s->replay_live_bytes;
    return 0;
}

/* The events of process image k merged by time into s's live set (emptied
 * first: an exec's blocks are gone for the program; a replay keeps them, so
 * replay_live_bytes goes on). */
static int stats_image(const mbt_trace_t *t, size_t k, hmap_t *live, mbt_stats_t *s)
{
    const mbt_proc_t *p = &t->proc[k];
    const size_t *ths = t->proc_thread + p->thread0;
    size_t n = 0;
    for (size_t i = 0; i < p->nthreads; i++)
        n += t->thread[ths[i]].nev;
    s->nthreads += p->nthreads;
    ref_t *ref = sysmem_malloc((n ? n : 1) * sizeof *ref);
    if (!ref)
        return -ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < p->nthreads; i++)
        for (size_t j = 0; j < t->thread[ths[i]].nev; j++)
            ref[m++] = (ref_t){MBT_T(&t->thread[ths[i]].ev[j]), (uint32_t)ths[i], (uint32_t)j};
    qsort(ref, n, sizeof *ref, ref_cmp);
    hmap_clear(live);
    int rc = 0;
    s->live_bytes_end = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = stats_event(&t->thread[ref[i].th].ev[ref[i].i], live, s);
    sysmem_free(ref);
    return rc;
}

int mbt_stats_proc(const mbt_trace_t *t, size_t k, mbt_stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (k >= t->nproc)
        return -ENOENT;
    hmap_t live;
    hmap_init(&live, NULL);
    int rc = 0;
    k = t->proc[k].first_image;
    do {
        rc = stats_image(t, k, &live, s);
        k = t->proc[k].next_image;
    } while (!rc && k);
    hmap_free(&live);
    return rc;
}

int mbt_stats(const mbt_trace_t *t, uint32_t pid, mbt_stats_t *s)
{
    memset(s, 0, sizeof *s);
    if (!pid && t->nproc)
        pid = t->proc[0].pid;
    for (size_t k = 0; k < t->nproc; k++)
        if (t->proc[k].pid == pid)
            return mbt_stats_proc(t, k, s);
    return -ENOENT;
}
