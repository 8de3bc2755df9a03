/* test_queue.c - the SPSC ring (workloads/queue.c): FIFO order, full and
 * empty, capacities refused, wrap-around, and a producer and a consumer
 * thread passing a million sequence numbers that must arrive in order. */
#include "../check.h"
#include "queue.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#define N_SEQ 1000000

static void *slots[1024];

static void test_fifo(void)
{
    spsc_t q;
    CHECK_INT(spsc_init(&q, slots, 8), 0);
    void *p = (void *)1;
    CHECK(!spsc_pop(&q, &p));
    CHECK(p == (void *)1); /* untouched on failure */
    CHECK_U64(spsc_size(&q), 0);
    for (uintptr_t i = 1; i <= 8; i++)
        CHECK(spsc_push(&q, (void *)i));
    CHECK_U64(spsc_size(&q), 8);
    CHECK(!spsc_push(&q, (void *)99)); /* full */
    CHECK_U64(spsc_size(&q), 8);
    for (uintptr_t i = 1; i <= 8; i++) {
        CHECK(spsc_pop(&q, &p));
        CHECK_U64((uintptr_t)p, i);
    }
    CHECK(!spsc_pop(&q, &p)); /* empty again */
    CHECK_U64(spsc_size(&q), 0);

    /* wrap around many times, at every fill level */
    uintptr_t in = 1, out = 1;
    for (int round = 0; round < 1000; round++) {
        int k = round % 9;
        for (int i = 0; i < k; i++)
            CHECK(spsc_push(&q, (void *)in++));
        CHECK_U64(spsc_size(&q), (uint64_t)k);
        for (int i = 0; i < k; i++) {
            CHECK(spsc_pop(&q, &p));
            CHECK_U64((uintptr_t)p, out++);
        }
    }
    /* NULL is a value like any other */
    CHECK(spsc_push(&q, NULL));
    p = (void *)1;
    CHECK(spsc_pop(&q, &p));
    CHECK(p == NULL);
}

static void test_capacity(void)
{
    spsc_t q;
    CHECK_INT(spsc_init(&q, slots, 0), -EINVAL);
    CHECK_INT(spsc_init(&q, slots, 3), -EINVAL);
    CHECK_INT(spsc_init(&q, slots, 6), -EINVAL);
    CHECK_INT(spsc_init(&q, slots, 1000), -EINVAL);
    CHECK_INT(spsc_init(&q, slots, (SIZE_MAX >> 1) + 2), -EINVAL);
    CHECK_INT(spsc_init(&q, NULL, 8), -EINVAL);
    CHECK_INT(spsc_init(NULL, slots, 8), -EINVAL);
    /* capacity 1: one at a time */
    CHECK_INT(spsc_init(&q, slots, 1), 0);
    void *p;
    CHECK(spsc_push(&q, (void *)5));
    CHECK(!spsc_push(&q, (void *)6));
    CHECK(spsc_pop(&q, &p));
    CHECK_U64((uintptr_t)p, 5);
    CHECK(spsc_push(&q, (void *)6));
    CHECK(spsc_pop(&q, &p));
    CHECK_U64((uintptr_t)p, 6);
    CHECK_INT(spsc_init(&q, slots, 1024), 0);
    for (int i = 0; i < 1024; i++)
        CHECK(spsc_push(&q, (void *)(uintptr_t)i));
    CHECK(!spsc_push(&q, NULL));
}

/* A small ring, so both full and empty happen often. */
static spsc_t tq;
static void *tslots[64];
static uint64_t producer_full;

static void *producer(void *arg)
{
    (void)arg;
    for (uintptr_t i = 1; i <= N_SEQ; i++) {
        while (!spsc_push(&tq, (void *)i))
            producer_full++;
    }
    return NULL;
}

static void test_threads(void)
{
    CHECK_INT(spsc_init(&tq, tslots, 64), 0);
    pthread_t t;
    CHECK_INT(pthread_create(&t, NULL, producer, NULL), 0);
    uintptr_t want = 1;
    uint64_t bad = 0, empty = 0;
    while (want <= N_SEQ) {
        void *p;
        if (!spsc_pop(&tq, &p)) {
            empty++;
            continue;
        }
        if ((uintptr_t)p != want && bad++ < 5)
            fprintf(stderr, "consumer: got %zu, expected %zu\n", (size_t)(uintptr_t)p, (size_t)want);
        want++;
    }
    pthread_join(t, NULL);
    CHECK_U64(bad, 0);
    CHECK_U64(want, N_SEQ + 1);
    void *p;
    CHECK(!spsc_pop(&tq, &p));
    fprintf(stderr, "threads: %d values in order; producer found the ring full %" PRIu64
                    " times, consumer found it empty %" PRIu64 " times\n",
            N_SEQ, producer_full, empty);
}

int main(void)
{
    test_fifo();
    test_capacity();
    test_threads();
    CHECK_DONE();
}
