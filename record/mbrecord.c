/* mbrecord.c - libmbrecord.so, preloaded by `mallocbench record` in front of
 * the allocator: every malloc-family call and every thread's start and end
 * become 32-byte events (common/trace.h) in a per-thread buffer that is
 * appended to the trace at MB_RECORD_PATH, one writev() per chunk, when full,
 * at thread end, before fork and exec, and at exit.  Links libc only (dlsym,
 * pthread); never allocates through malloc itself.  Design and limits:
 * docs/trace.md. */
#include "trace.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define EV_PER_BUF 4096           /* 128 KiB of events per thread, one chunk */
#define BIG_MIN (1u << 20)        /* blocks measured by mincore() at free */
#define BIG_SLOTS 4096
#define BIG_PROBE 64
#define ARENA_SIZE (64 * 1024)    /* dlsym's allocations before malloc is known */
#define STAMP_MASK ((1ull << 56) - 1)
/* The reader takes a chunk cut at the end for a cut tail only when its payload
 * is one a writer can make: no chunk of ours may be longer. */
_Static_assert(EV_PER_BUF * MBT_EVENT_SIZE <= MBT_PAYLOAD_MAX, "an events chunk fits MBT_PAYLOAD_MAX");
_Static_assert(MBT_PROCESS_SIZE + PATH_MAX <= MBT_PAYLOAD_MAX, "a process chunk fits MBT_PAYLOAD_MAX");

/* ---- the real functions ---------------------------------------------------- */

static struct {
    void *(*malloc)(size_t);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    void (*free)(void *);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    int (*pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    void (*exit_)(int) __attribute__((noreturn));
    void (*Exit_)(int) __attribute__((noreturn));
    int (*execve)(const char *, char *const[], char *const[]);
    int (*execv)(const char *, char *const[]);
    int (*execvp)(const char *, char *const[]);
    int (*execvpe)(const char *, char *const[], char *const[]);
    int (*madvise)(void *, size_t, int);
} R;

/* ---- per-thread buffers ------------------------------------------------------
 * The owner appends events without a lock (count is published with a
 * release store).  Writing a chunk takes the buffer's own lock: the owner
 * when the buffer is full, or another thread at exit, exec or _exit, which
 * writes [flushed, count) and leaves the rest to the owner.  Buffers come
 * from mmap, sit on a lock-free list and are reused after their thread ends. */
enum { BUF_FREE, BUF_OWNED };
typedef struct buf {
    struct buf *next;
    _Atomic int state, lock;
    uint32_t pid, tid, seq;
    _Atomic size_t count;
    size_t flushed;
    uint64_t last_t;               /* the time of the last event written */
    mbt_event_t ev[EV_PER_BUF];    /* t_op holds stamp << 8 | op until written */
} buf_t;

static _Atomic(buf_t *) g_bufs;

enum { T_NONE, T_ACTIVE, T_ENDED };
static TLS struct {
    buf_t *buf;
    int guard;          /* >0: inside the recorder: calls pass through unrecorded */
    int state;
    int dtor_rounds;
    uint32_t tid, parent_tid;
} tls;

/* ---- process state ------------------------------------------------------- */
static struct {
    _Atomic int init;             /* 0, 1 resolving, 2 done */
    _Atomic int proc_lock;
    bool proc_written, on, use_tsc, warned;
    int fd;
    dev_t dev;
    ino_t ino;
    uint32_t pid, ppid, forked;
    size_t page;
    uint64_t start_ns;            /* header start: event times are relative to it */
    uint64_t self_start_ns;       /* when the recorder started in this process */
    uint64_t stamp0, ns0;         /* one (stamp, CLOCK_MONOTONIC) pair for the whole process ... */
    double ratio;                 /* ... and one ns-per-stamp rate: every thread's stamps are
                                     converted by the same monotonic function, so events of
                                     different threads keep their TSC order */
    pthread_key_t key;
    char path[PATH_MAX];
} G = {.fd = -1, .on = true};

/* ---- bootstrap arena: dlsym's calloc before the real one is known --------- */
static _Alignas(16) unsigned char arena[ARENA_SIZE];
static _Atomic size_t arena_used;

static bool in_arena(const void *p)
{
    return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA_SIZE;
}

static void *arena_alloc(size_t n)
{
    size_t need = 16 + ((n + 15) & ~(size_t)15);
    size_t at = atomic_fetch_add(&arena_used, need);
    if (n > ARENA_SIZE || at + need > ARENA_SIZE)
        return NULL;
    memcpy(arena + at, &n, sizeof n);
    return arena + at + 16;
}

static size_t arena_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - 16, sizeof n);
    return n;
}

/* ---- time: TSC stamps converted to CLOCK_MONOTONIC ns when written -------- */

static uint64_t clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t stamp(void)
{
#if HAVE_TSC
    if (LIKELY(G.use_tsc))
        return __rdtsc();
#endif
    return clock_ns();
}

static bool tsc_invariant(void)
{
#if HAVE_TSC
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
        __get_cpuid(0x80000007u, &a, &b, &c, &d))
        return d & (1u << 8);
#endif
    return false;
}

/* A (stamp, ns) pair taken together: the stamp between two clock reads
 * that are close (not descheduled in between), ns their midpoint. */
static void sync_pair(uint64_t *st, uint64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 16 && best > 2000; i++) {
        uint64_t a = clock_ns(), s = stamp(), b = clock_ns();
        if (b - a < best) {
            best = b - a;
            *st = s;
            *ns = a + (b - a) / 2;
        }
    }
}

/* The process's conversion: its base pair, and the TSC rate measured over
 * 2 ms (at most a few ns of error per ms: ~0.001%); 1 when stamps are ns.
 * Calibrated once per exec'd process; a fork child keeps its parent's. */
static void clock_calibrate(void)
{
    sync_pair(&G.stamp0, &G.ns0);
    G.ratio = 1.0;
    if (!G.use_tsc)
        return;
    uint64_t st, ns;
    do
        sync_pair(&st, &ns);
    while (ns - G.ns0 < 2000000);
    if (st > G.stamp0)
        G.ratio = (double)(ns - G.ns0) / (double)(st - G.stamp0);
}

/* ---- raw output ---------------------------------------------------------- */

static uint32_t gettid_(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

static void warn_once(const char *what, int err)
{
    if (G.warned)
        return;
    G.warned = true;
    char line[PATH_MAX + 200];
    int n = snprintf(line, sizeof line, "mallocbench record: %s '%s': %s; recording stops\n",
                     what, G.path, strerror(err));
    if (n > 0 && write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1) < 0)
        return;
}

/* The trace's descriptor, reopened if the program closed or replaced it. */
static int out_fd(void)
{
    struct stat st;
    if (G.fd >= 0 && fstat(G.fd, &st) == 0 && st.st_dev == G.dev && st.st_ino == G.ino)
        return G.fd;
    int fd = open(G.path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        warn_once("cannot open", errno);
        G.on = false;
        return -1;
    }
    struct rlimit rl;
    int lo = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 1024 ? 1000 : 0;
    if (lo) { /* out of the way of descriptors the program expects to get */
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, lo);
        if (hi >= 0) {
            close(fd);
            fd = hi;
        }
    }
    if (fstat(fd, &st)) {
        close(fd);
        return -1;
    }
    G.fd = fd;
    G.dev = st.st_dev;
    G.ino = st.st_ino;
    return fd;
}

static void write_chunk(uint32_t kind, uint32_t pid, uint32_t tid, uint32_t seq,
                        const void *a, size_t alen, const void *b, size_t blen)
{
    int fd = out_fd();
    if (fd < 0)
        return;
    mbt_chunk_t c = {MBT_CHUNK_MAGIC, kind, pid, tid, seq, (uint32_t)(alen + blen)};
    struct iovec iov[3] = {{&c, sizeof c}, {(void *)a, alen}, {(void *)b, blen}};
    ssize_t n = writev(fd, iov, blen ? 3 : 2);
    if (n != (ssize_t)(sizeof c + alen + blen))
        warn_once("short write to", n < 0 ? errno : EIO);
}

/* The PROCESS chunk, once per process, before any events of it. */
static void ensure_process(void)
{
    if (G.proc_written)
        return;
    int unlocked = 0;
    while (!atomic_compare_exchange_weak(&G.proc_lock, &unlocked, 1)) {
        unlocked = 0;
        sched_yield();
    }
    if (!G.proc_written && G.on) {
        /* read once per image: a fork child keeps it though the program cleared its environment */
        const char *path = G.path[0] ? G.path : getenv("MB_RECORD_PATH");
        if (!path || !*path || strlen(path) >= sizeof G.path) {
            G.on = false;
        } else {
            if (path != G.path)
                snprintf(G.path, sizeof G.path, "%s", path);
            char exe[PATH_MAX];
            ssize_t n = readlink("/proc/self/exe", exe, sizeof exe);
            n = n < 0 ? 0 : n;
            mbt_process_t p = {.pid = G.pid, .ppid = G.ppid, .start_ns = G.self_start_ns,
                               .forked = G.forked, .exe_len = (uint32_t)n};
            write_chunk(MBT_CHUNK_PROCESS, G.pid, gettid_(), 0, &p, sizeof p, exe, (size_t)n);
        }
        G.proc_written = true;
    }
    atomic_store(&G.proc_lock, 0);
}

/* ---- chunks ------------------------------------------------------------------ */

static void buf_lock(buf_t *b)
{
    int unlocked = 0;
    while (!atomic_compare_exchange_weak_explicit(&b->lock, &unlocked, 1, memory_order_acquire,
                                                  memory_order_relaxed)) {
        unlocked = 0;
        sched_yield();
    }
}

static void buf_unlock(buf_t *b)
{
    atomic_store_explicit(&b->lock, 0, memory_order_release);
}

/* Write events [flushed, count) of b as its next chunk; caller holds b->lock. */
static void buf_write(buf_t *b)
{
    size_t n = atomic_load_explicit(&b->count, memory_order_acquire);
    if (n <= b->flushed)
        return;
    ensure_process();
    for (size_t i = b->flushed; i < n; i++) {
        mbt_event_t *e = &b->ev[i];
        uint64_t d56 = ((e->t_op >> 8) - (G.stamp0 & STAMP_MASK)) & STAMP_MASK;
        int64_t d = (int64_t)(d56 << 8) >> 8; /* stamps before the base pair: negative */
        double ns = (double)G.ns0 + (double)d * G.ratio - (double)G.start_ns;
        uint64_t t = ns <= 0 ? 0 : (uint64_t)ns;
        if (t < b->last_t) /* rounding never reorders a thread's events */
            t = b->last_t;
        b->last_t = t;
        e->t_op = MBT_T_OP(t & STAMP_MASK, e->t_op & 0xff);
    }
    if (G.on)
        write_chunk(MBT_CHUNK_EVENTS, b->pid, b->tid, b->seq++, &b->ev[b->flushed],
                    (n - b->flushed) * sizeof(mbt_event_t), NULL, 0);
    b->flushed = n;
}

/* The owner's flush of a full buffer: written, then emptied. */
static void buf_flush_own(buf_t *b)
{
    tls.guard++;
    buf_lock(b);
    buf_write(b);
    b->flushed = 0;
    atomic_store_explicit(&b->count, 0, memory_order_relaxed);
    buf_unlock(b);
    tls.guard--;
}

/* Every buffer's pending events (exit, exec, _exit). */
static void flush_all(void)
{
    tls.guard++;
    for (buf_t *b = atomic_load(&g_bufs); b; b = b->next) {
        buf_lock(b);
        if (atomic_load(&b->state) == BUF_OWNED)
            buf_write(b);
        buf_unlock(b);
    }
    tls.guard--;
}

static void ev_append(buf_t *b, unsigned op, uint64_t st, uint64_t ptr, uint64_t size,
                      uint64_t arg)
{
    size_t i = atomic_load_explicit(&b->count, memory_order_relaxed);
    if (UNLIKELY(i == EV_PER_BUF)) {
        buf_flush_own(b);
        i = 0;
    }
    mbt_event_t *e = &b->ev[i];
    e->t_op = (st << 8) | op;
    e->ptr = ptr;
    e->size = size;
    e->arg = arg;
    atomic_store_explicit(&b->count, i + 1, memory_order_release);
}

/* b becomes the calling thread's, empty, its chunks counted from 0 (a new
 * thread, or the thread that goes on in a fork child). */
static void buf_start_thread(buf_t *b)
{
    tls.tid = gettid_();
    b->pid = G.pid;
    b->tid = tls.tid;
    b->seq = 0;
    b->flushed = 0;
    b->last_t = 0;
    atomic_store(&b->count, 0);
}

/* This thread's buffer, taken (a free one, else a new mapping) on its first
 * event, THREAD_START logged; NULL when not recording in this thread. */
static buf_t *buf_acquire(uint64_t st)
{
    if (tls.state == T_ENDED || !G.on || G.init != 2)
        return NULL;
    tls.guard++;
    buf_t *b = NULL;
    for (buf_t *x = atomic_load(&g_bufs); x && !b; x = x->next) {
        int f = BUF_FREE;
        if (atomic_compare_exchange_strong(&x->state, &f, BUF_OWNED))
            b = x;
    }
    if (!b) {
        void *m = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            tls.guard--;
            return NULL;
        }
        b = m;
        atomic_store(&b->state, BUF_OWNED);
        b->next = atomic_load(&g_bufs);
        while (!atomic_compare_exchange_weak(&g_bufs, &b->next, b))
            ;
    }
    buf_lock(b);
    buf_start_thread(b);
    buf_unlock(b);
    tls.buf = b;
    tls.state = T_ACTIVE;
    pthread_setspecific(G.key, b);
    tls.guard--;
    ev_append(b, MBT_THREAD_START, st, 0, 0, tls.parent_tid); /* at the first event's time */
    return b;
}

static inline void record(unsigned op, uint64_t st, const void *ptr, uint64_t size, uint64_t arg)
{
    buf_t *b = tls.buf;
    if (UNLIKELY(!b) && !(b = buf_acquire(st)))
        return;
    ev_append(b, op, st, (uint64_t)(uintptr_t)ptr, size, arg);
}

/* Thread end (key destructor): deferred to the last destructor round so that
 * other keys' destructors are still recorded, then THREAD_END and the rest
 * written; the buffer is free for the next thread. */
static void thread_end(void *v)
{
    buf_t *b = v;
    if (tls.dtor_rounds++ < PTHREAD_DESTRUCTOR_ITERATIONS - 2) {
        tls.guard++;
        pthread_setspecific(G.key, b);
        tls.guard--;
        return;
    }
    ev_append(b, MBT_THREAD_END, stamp(), 0, 0, 0);
    tls.guard++;
    buf_lock(b);
    buf_write(b);
    b->flushed = 0;
    atomic_store(&b->count, 0);
    atomic_store(&b->state, BUF_FREE);
    buf_unlock(b);
    tls.guard--;
    tls.buf = NULL;
    tls.state = T_ENDED;
}

/* The process ends (exit's destructors, _exit): this thread's end, every
 * buffer written; nothing later in this thread is recorded. */
static void process_end(void)
{
    if (G.init != 2)
        return;
    if (tls.buf)
        ev_append(tls.buf, MBT_THREAD_END, stamp(), 0, 0, 0);
    flush_all();
    tls.state = T_ENDED;
    tls.buf = NULL;
}

/* ---- large blocks: resident pages at free --------------------------------- */

static struct {
    _Atomic uint64_t key;   /* 0 empty, 1 deleted */
    uint64_t size;
} big[BIG_SLOTS];
static _Atomic long big_live;

static size_t big_hash(uint64_t p)
{
    return (size_t)((p >> 12) * 0x9e3779b97f4a7c15ull >> 52) & (BIG_SLOTS - 1);
}

static void big_add(const void *ptr, size_t size)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (!p)
        return;
    for (size_t k = 0, h = big_hash(p); k < BIG_PROBE; k++) {
        size_t i = (h + k) & (BIG_SLOTS - 1);
        uint64_t cur = atomic_load_explicit(&big[i].key, memory_order_relaxed);
        if (cur > 1)
            continue;
        big[i].size = size;
        if (atomic_compare_exchange_strong(&big[i].key, &cur, p)) {
            atomic_fetch_add(&big_live, 1);
            return;
        }
    }
}

/* The size of a large block being freed (removed), or 0. */
static size_t big_take(const void *ptr)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (!p || !atomic_load_explicit(&big_live, memory_order_relaxed))
        return 0;
    for (size_t k = 0, h = big_hash(p); k < BIG_PROBE; k++) {
        size_t i = (h + k) & (BIG_SLOTS - 1);
        uint64_t cur = atomic_load_explicit(&big[i].key, memory_order_acquire);
        if (cur == 0)
            return 0;
        if (cur != p)
            continue;
        size_t size = big[i].size;
        if (!atomic_compare_exchange_strong(&big[i].key, &cur, 1))
            return 0;
        atomic_fetch_sub(&big_live, 1);
        return size;
    }
    return 0;
}

/* Pages of [p, p + size) resident now: what the program touched of it. */
static uint64_t resident_pages(const void *ptr, size_t size)
{
    uintptr_t page = G.page;
    uintptr_t lo = (uintptr_t)ptr & ~(page - 1), hi = ((uintptr_t)ptr + size + page - 1) & ~(page - 1);
    unsigned char vec[1024];
    uint64_t n = 0;
    for (uintptr_t a = lo; a < hi; a += sizeof vec * page) {
        size_t len = hi - a < sizeof vec * page ? hi - a : sizeof vec * page;
        if (mincore((void *)a, len, vec))
            return 0;
        for (size_t i = 0; i < len / page; i++)
            n += vec[i] & 1;
    }
    return n;
}

/* ---- initialisation ----------------------------------------------------------- */

static void *sym(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* Resolve the real functions (dlsym's own calloc served from the arena meanwhile),
 * then the clock, the key and the fork handlers. */
static void init(void)
{
    int zero = 0;
    if (!atomic_compare_exchange_strong(&G.init, &zero, 1)) {
        while (atomic_load(&G.init) != 2)
            sched_yield();
        return;
    }
    tls.guard++;
    typeof(R) r;
    r.malloc = sym("malloc");
    r.calloc = sym("calloc");
    r.realloc = sym("realloc");
    r.free = sym("free");
    r.posix_memalign = sym("posix_memalign");
    r.aligned_alloc = sym("aligned_alloc");
    r.memalign = sym("memalign");
    r.valloc = sym("valloc");
    r.pvalloc = sym("pvalloc");
    r.pthread_create = sym("pthread_create");
    r.exit_ = sym("_exit");
    r.Exit_ = sym("_Exit");
    r.execve = sym("execve");
    r.execv = sym("execv");
    r.execvp = sym("execvp");
    r.execvpe = sym("execvpe");
    r.madvise = sym("madvise");
    R = r;
    G.use_tsc = tsc_invariant();
    clock_calibrate();
    G.self_start_ns = G.ns0;
    const char *s = getenv("MB_RECORD_START_NS");
    char *end;
    G.start_ns = s ? strtoull(s, &end, 10) : 0;
    if (!s || *end || G.start_ns > G.ns0)
        G.start_ns = G.ns0;
    G.pid = (uint32_t)getpid();
    G.ppid = (uint32_t)getppid();
    G.page = (size_t)sysconf(_SC_PAGESIZE);
    if (pthread_key_create(&G.key, thread_end))
        G.on = false;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    tls.guard--;
    atomic_store(&G.init, 2);
}

__attribute__((constructor)) static void recorder_start(void)
{
    if (G.init != 2)
        init();
    tls.guard++;
    ensure_process();
    tls.guard--;
}

__attribute__((destructor)) static void recorder_stop(void)
{
    process_end();
}

/* ---- fork: the child is a new process with one thread --------------------- */

static void fork_prepare(void)
{
    if (tls.buf)
        buf_flush_own(tls.buf);
}

static void fork_parent(void)
{
}

static void fork_child(void)
{
    uint32_t parent_tid = tls.tid;
    G.pid = (uint32_t)getpid();
    G.ppid = (uint32_t)getppid();
    G.forked = 1;
    G.proc_written = false;
    atomic_store(&G.proc_lock, 0);
    G.self_start_ns = clock_ns(); /* the parent's base pair and rate stay */
    for (buf_t *b = atomic_load(&g_bufs); b; b = b->next) {
        atomic_store(&b->lock, 0);
        if (b != tls.buf) {
            atomic_store(&b->count, 0);
            b->flushed = 0;
            atomic_store(&b->state, BUF_FREE);
        }
    }
    tls.guard++;
    ensure_process();
    tls.guard--;
    if (tls.buf) { /* this thread goes on as the child's first thread */
        buf_t *b = tls.buf;
        buf_start_thread(b);
            ev_append(b, MBT_THREAD_START, stamp(), 0, 0, parent_tid);
    } else {
        tls.parent_tid = parent_tid;
    }
}

/* ---- the interposed functions ------------------------------------------------- */

#define ENTER_OR(fallback)                 \
    do {                                   \
        if (UNLIKELY(G.init != 2)) {       \
            if (tls.guard)                 \
                return fallback;           \
            init();                        \
        }                                  \
    } while (0)

static inline bool recording(void)
{
    return LIKELY(!tls.guard) && LIKELY(tls.state != T_ENDED);
}

EXPORT void *malloc(size_t n)
{
    ENTER_OR(arena_alloc(n));
    if (!recording())
        return R.malloc(n);
    void *p = R.malloc(n);
    uint64_t st = stamp();
    if (UNLIKELY(n >= BIG_MIN))
        big_add(p, n);
    record(MBT_MALLOC, st, p, n, 0);
    return p;
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n))
        n = SIZE_MAX;
    if (UNLIKELY(G.init != 2) && tls.guard) {
        void *p = n == SIZE_MAX ? NULL : arena_alloc(n);
        return p; /* static, never reused: already zero */
    }
    ENTER_OR(NULL);
    if (!recording())
        return R.calloc(nmemb, size);
    void *p = R.calloc(nmemb, size);
    uint64_t st = stamp();
    if (UNLIKELY(n >= BIG_MIN))
        big_add(p, n);
    record(MBT_CALLOC, st, p, n, nmemb);
    return p;
}

EXPORT void free(void *p)
{
    if (UNLIKELY(in_arena(p)))
        return;
    if (UNLIKELY(G.init != 2)) {
        if (tls.guard)
            return; /* before malloc is known nothing else can have been allocated */
        init();
    }
    if (!recording()) {
        R.free(p);
        return;
    }
    uint64_t st = stamp();
    size_t big_size = big_take(p);
    uint64_t touched = big_size ? resident_pages(p, big_size) : 0;
    R.free(p);
    record(MBT_FREE, st, p, 0, touched);
}

static void *realloc_as(void *old, size_t n)
{
    if (UNLIKELY(in_arena(old))) { /* a bootstrap block moves to the real heap */
        void *p = malloc(n);
        size_t was = arena_size(old);
        if (p)
            memcpy(p, old, was < n ? was : n);
        return p;
    }
    ENTER_OR(NULL);
    if (!recording())
        return R.realloc(old, n);
    size_t big_size = big_take(old);
    void *p = R.realloc(old, n);
    uint64_t st = stamp();
    if (!p && n && big_size)
        big_add(old, big_size); /* failed: the old block stays */
    if (UNLIKELY(n >= BIG_MIN))
        big_add(p, n);
    record(MBT_REALLOC, st, p, n, (uint64_t)(uintptr_t)old);
    return p;
}

EXPORT void *realloc(void *old, size_t n)
{
    return realloc_as(old, n);
}

EXPORT void *reallocarray(void *old, size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc_as(old, n);
}

/* The aligned family; a real function the allocator lacks is built from memalign. */
static void *aligned_as(unsigned op, size_t align, size_t n)
{
    ENTER_OR(NULL);
    size_t page = G.page;
    void *p;
    switch (op) {
    case MBT_ALIGNED_ALLOC:
        p = R.aligned_alloc ? R.aligned_alloc(align, n) : R.memalign(align, n);
        break;
    case MBT_VALLOC:
        p = R.valloc ? R.valloc(n) : R.memalign(page, n);
        break;
    case MBT_PVALLOC:
        p = R.pvalloc ? R.pvalloc(n) : R.memalign(page, (n + page - 1) & ~(page - 1));
        break;
    default:
        p = R.memalign(align, n);
    }
    if (!recording())
        return p;
    uint64_t st = stamp();
    if (UNLIKELY(n >= BIG_MIN))
        big_add(p, n);
    record(op, st, p, n, op == MBT_VALLOC || op == MBT_PVALLOC ? 0 : align);
    return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
    return aligned_as(MBT_MEMALIGN, align, n);
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    return aligned_as(MBT_ALIGNED_ALLOC, align, n);
}

EXPORT void *valloc(size_t n)
{
    return aligned_as(MBT_VALLOC, 0, n);
}

EXPORT void *pvalloc(size_t n)
{
    return aligned_as(MBT_PVALLOC, 0, n);
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    ENTER_OR(ENOMEM);
    int rc = R.posix_memalign(out, align, n);
    if (!recording())
        return rc;
    uint64_t st = stamp();
    void *p = rc ? NULL : *out;
    if (UNLIKELY(n >= BIG_MIN))
        big_add(p, n);
    record(MBT_POSIX_MEMALIGN, st, p, n, align);
    return rc;
}

/* The program's own madvise (glibc's malloc calls its internal one, never
 * this): numpy asks for huge pages on its large buffers so, and a replay
 * gives the replayed block the same advice. */
EXPORT int madvise(void *addr, size_t len, int advice)
{
    if (UNLIKELY(G.init != 2) && !tls.guard)
        init();
    if (UNLIKELY(!R.madvise)) /* inside the recorder's own start: the kernel's, unrecorded */
        return (int)syscall(SYS_madvise, addr, len, advice);
    if (!recording())
        return R.madvise(addr, len, advice);
    int rc = R.madvise(addr, len, advice);
    uint64_t st = stamp();
    if (!rc)
        record(MBT_MADVISE, st, addr, len, (uint64_t)(unsigned)advice);
    return rc;
}

/* ---- threads, exec, _exit ----------------------------------------------------- */

typedef struct {
    void *(*start)(void *);
    void *arg;
    uint32_t parent;
} start_t;

static void *thread_start(void *v)
{
    start_t s = *(start_t *)v;
    tls.guard++;
    R.free(v);
    tls.guard--;
    tls.parent_tid = s.parent;
    if (!tls.buf)
        buf_acquire(stamp());
    return s.start(s.arg);
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*start)(void *),
                          void *arg)
{
    ENTER_OR(EAGAIN);
    if (!R.pthread_create)
        return EAGAIN;
    tls.guard++;
    start_t *s = R.malloc(sizeof *s);
    tls.guard--;
    if (!s)
        return R.pthread_create(t, attr, start, arg);
    *s = (start_t){start, arg, tls.tid ? tls.tid : gettid_()};
    int rc = R.pthread_create(t, attr, thread_start, s);
    if (rc) {
        tls.guard++;
        R.free(s);
        tls.guard--;
    }
    return rc;
}

/* Not in a vfork child: it shares the parent's buffers and TLS. */
static void exit_now(void)
{
    if (G.init != 2)
        init();
    if ((uint32_t)getpid() == G.pid)
        process_end();
}

EXPORT void _exit(int status)
{
    exit_now();
    R.exit_(status);
}

EXPORT void _Exit(int status)
{
    exit_now();
    R.Exit_(status);
}

/* Before an exec replaces this image, everything recorded so far is written. */
#define BEFORE_EXEC()          \
    do {                       \
        if (G.init != 2)       \
            init();            \
        if (G.init == 2)       \
            flush_all();       \
    } while (0)

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    BEFORE_EXEC();
    return R.execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
    BEFORE_EXEC();
    return R.execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
    BEFORE_EXEC();
    return R.execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    BEFORE_EXEC();
    return R.execvpe(file, argv, envp);
}
