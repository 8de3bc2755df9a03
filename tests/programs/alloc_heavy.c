/* alloc_heavy.c - an allocation-heavy program for tests/bench/bench_record.py:
 * each of T threads makes N malloc/free pairs of mixed sizes (16 B to 4 KiB,
 * mostly small) through a ring of 256 live blocks, writing one byte of each.
 * Prints "loop_ns=<slowest thread's loop time> events_per_thread=<2N>".
 * `alloc_heavy clock` prints what one clock_gettime(CLOCK_MONOTONIC) and one
 * rdtsc cost here (the recorder's choice of time stamp).
 * Usage: alloc_heavy N [T] | alloc_heavy clock. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define RING 256

static long n;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *loop(void *arg)
{
    uint64_t *took = arg, x = 88172645463325252ull;
    char *ring[RING] = {0};
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t size = (x & 3) ? 16 + (x >> 8) % 240 : 256 + (x >> 8) % 3841;
        size_t k = (x >> 40) % RING;
        free(ring[k]);
        ring[k] = malloc(size);
        ring[k][0] = (char)i;
    }
    *took = now_ns() - t0;
    for (int k = 0; k < RING; k++)
        free(ring[k]);
    return NULL;
}

/* ns per call of each time source, over 10M calls. */
static int clock_costs(void)
{
    enum { CALLS = 10000000 };
    volatile uint64_t sink = 0;
    uint64_t t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        sink += now_ns();
    uint64_t t1 = now_ns();
#if defined(__x86_64__) || defined(__i386__)
    for (int i = 0; i < CALLS; i++)
        sink += __rdtsc();
#endif
    uint64_t t2 = now_ns();
    printf("clock_gettime_ns=%.1f rdtsc_ns=%.1f\n", (double)(t1 - t0) / CALLS,
           (double)(t2 - t1) / CALLS + 0 * (double)sink);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "clock"))
        return clock_costs();
    n = argc > 1 ? atol(argv[1]) : 1000000;
    int nt = argc > 2 ? atoi(argv[2]) : 1;
    if (n <= 0 || nt < 1 || nt > 64)
        return 2;
    pthread_t t[64];
    uint64_t took[64] = {0}, worst = 0;
    for (int i = 0; i < nt; i++)
        if (pthread_create(&t[i], NULL, loop, &took[i]))
            return 1;
    for (int i = 0; i < nt; i++) {
        pthread_join(t[i], NULL);
        worst = took[i] > worst ? took[i] : worst;
    }
    printf("loop_ns=%llu events_per_thread=%ld\n", (unsigned long long)worst, 2 * n);
    return 0;
}
