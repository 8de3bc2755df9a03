/* rr_prog.c - a small multi-threaded program to record and replay
 * (tests/integration/test_replay.py).  Usage: rr_prog [ITERATIONS]
 * Two producers allocate with every kind of call (malloc, calloc,
 * posix_memalign, aligned_alloc, memalign, valloc, pvalloc, and realloc
 * to grow some), keep a ring of live blocks each, and hand every other block
 * through a queue to two consumers, which realloc some and free them: blocks
 * cross threads.  It counts its own calls and its live bytes (requested
 * sizes, kept beside each pointer) and prints them on one line:
 *   rr_prog malloc=N calloc=N ... pvalloc=N peak_live=BYTES
 * Nothing else is allocated by its own code after the threads start. */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_MALLOC, C_CALLOC, C_REALLOC, C_FREE, C_POSIX_MEMALIGN, C_ALIGNED_ALLOC, C_MEMALIGN,
       C_VALLOC, C_PVALLOC, C_N };
static const char *const names[C_N] = {"malloc", "calloc", "realloc", "free", "posix_memalign",
                                       "aligned_alloc", "memalign", "valloc", "pvalloc"};

#define PRODUCERS 2
#define CONSUMERS 2
#define RING 1024
#define QCAP 1024

typedef struct {
    void *p;
    size_t size;
} blk_t;

static atomic_uint_fast64_t calls[C_N];
static atomic_int_fast64_t live, peak;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    blk_t item[QCAP];
    size_t head, n;
    int producers_left;
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0}}, 0, 0,
       PRODUCERS};

static long iterations = 1000;

static void count(int op, int64_t delta)
{
    atomic_fetch_add(&calls[op], 1);
    int_fast64_t now = atomic_fetch_add(&live, delta) + delta, old = atomic_load(&peak);
    while (now > old && !atomic_compare_exchange_weak(&peak, &old, now))
        ;
}

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* A block of kind i % 7 and a size of 16 B..16 KiB; every page written. */
static blk_t blk_new(uint64_t *rng, long i)
{
    size_t size = 16 + lcg(rng) % (16 << 10);
    void *p = NULL;
    int op;
    switch (i % 7) {
    case 0: op = C_MALLOC; p = malloc(size); break;
    case 1: op = C_CALLOC; p = calloc(size / 8 + 1, 8); size = (size / 8 + 1) * 8; break;
    case 2: op = C_POSIX_MEMALIGN; if (posix_memalign(&p, 64, size)) p = NULL; break;
    case 3: op = C_ALIGNED_ALLOC; size = (size + 255) & ~(size_t)255; p = aligned_alloc(256, size); break;
    case 4: op = C_MEMALIGN; p = memalign(128, size); break;
    case 5: op = C_VALLOC; p = valloc(size); break;
    default: op = C_PVALLOC; p = pvalloc(size); break; /* counted as asked, not rounded */
    }
    if (!p) {
        fprintf(stderr, "rr_prog: %s(%zu) failed\n", names[op], size);
        exit(1);
    }
    count(op, (int64_t)size);
    memset(p, (int)(i & 0xff), size); /* pvalloc's rounded-up tail is left alone */
    return (blk_t){p, size};
}

static void blk_free(blk_t b)
{
    count(C_FREE, -(int64_t)b.size);
    free(b.p);
}

static void blk_grow(blk_t *b, size_t size)
{
    void *p = realloc(b->p, size);
    if (!p) {
        fprintf(stderr, "rr_prog: realloc(%zu) failed\n", size);
        exit(1);
    }
    count(C_REALLOC, (int64_t)size - (int64_t)b->size);
    memset((char *)p + b->size, 1, size - b->size);
    *b = (blk_t){p, size};
}

static void *producer(void *arg)
{
    uint64_t rng = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ULL + 1;
    blk_t ring[RING] = {{0}};
    for (long i = 0; i < iterations; i++) {
        blk_t b = blk_new(&rng, i);
        if (i % 3 == 0)
            blk_grow(&b, b.size + 1000);
        if (i % 2) { /* to a consumer */
            pthread_mutex_lock(&q.lock);
            while (q.n == QCAP)
                pthread_cond_wait(&q.not_full, &q.lock);
            q.item[(q.head + q.n++) % QCAP] = b;
            pthread_cond_signal(&q.not_empty);
            pthread_mutex_unlock(&q.lock);
        } else { /* into the ring, freeing the block it replaces */
            blk_t *slot = &ring[lcg(&rng) % RING];
            if (slot->p)
                blk_free(*slot);
            *slot = b;
        }
        if (i % 100 == 0) { /* free(NULL), which the compiler may not drop */
            void *volatile nil = NULL;
            count(C_FREE, 0);
            free(nil);
        }
    }
    for (int k = 0; k < RING; k++)
        if (ring[k].p)
            blk_free(ring[k]);
    pthread_mutex_lock(&q.lock);
    q.producers_left--;
    pthread_cond_broadcast(&q.not_empty);
    pthread_mutex_unlock(&q.lock);
    return NULL;
}

static void *consumer(void *arg)
{
    long k = (long)(uintptr_t)arg;
    for (long n = 0;; n++) {
        pthread_mutex_lock(&q.lock);
        while (!q.n && q.producers_left)
            pthread_cond_wait(&q.not_empty, &q.lock);
        if (!q.n) {
            pthread_mutex_unlock(&q.lock);
            return NULL;
        }
        blk_t b = q.item[q.head];
        q.head = (q.head + 1) % QCAP;
        q.n--;
        pthread_cond_signal(&q.not_full);
        pthread_mutex_unlock(&q.lock);
        if ((n + k) % 4 == 0)
            blk_grow(&b, b.size * 2);
        blk_free(b);
    }
}

int main(int argc, char **argv)
{
    if (argc > 1)
        iterations = strtol(argv[1], NULL, 10);
    if (iterations < 1) {
        fprintf(stderr, "usage: rr_prog [ITERATIONS >= 1]\n");
        return 2;
    }
    pthread_t t[PRODUCERS + CONSUMERS];
    for (long i = 0; i < PRODUCERS + CONSUMERS; i++)
        if (pthread_create(&t[i], NULL, i < PRODUCERS ? producer : consumer, (void *)(uintptr_t)i)) {
            fprintf(stderr, "rr_prog: cannot start a thread\n");
            return 1;
        }
    for (int i = 0; i < PRODUCERS + CONSUMERS; i++)
        pthread_join(t[i], NULL);
    printf("rr_prog");
    for (int op = 0; op < C_N; op++)
        printf(" %s=%llu", names[op], (unsigned long long)atomic_load(&calls[op]));
    printf(" peak_live=%lld\n", (long long)atomic_load(&peak));
    return 0;
}
