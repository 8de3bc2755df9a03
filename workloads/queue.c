/* queue.c - the SPSC ring of queue.h.  head and tail count pushes and pops
 * without wrapping at the capacity (slot = counter & mask); each side owns
 * one counter, publishes it with a release store and reads the other's
 * with an acquire load, so a popped pointer's pointee is visible to the
 * consumer as the producer left it.  Each side keeps its last look at the
 * other's counter on its own cache line and reads the shared one again only
 * when that look says full (or empty): one cache miss per batch, not per op. */
#include "queue.h"

#include <errno.h>

int spsc_init(spsc_t *q, void **slots, size_t capacity)
{
    if (!q || !slots || capacity == 0 || (capacity & (capacity - 1)) != 0)
        return -EINVAL;
    atomic_init(&q->head, 0);
    atomic_init(&q->tail, 0);
    q->tail_seen = q->head_seen = 0;
    q->mask = capacity - 1;
    q->slot = slots;
    return 0;
}

bool spsc_push(spsc_t *q, void *p)
{
    size_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);
    if (tail - q->head_seen > q->mask) {
        q->head_seen = atomic_load_explicit(&q->head, memory_order_acquire);
        if (tail - q->head_seen > q->mask)
            return false;
    }
    q->slot[tail & q->mask] = p;
    atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
    return true;
}

bool spsc_pop(spsc_t *q, void **p)
{
    size_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
    if (head == q->tail_seen) {
        q->tail_seen = atomic_load_explicit(&q->tail, memory_order_acquire);
        if (head == q->tail_seen)
            return false;
    }
    *p = q->slot[head & q->mask];
    atomic_store_explicit(&q->head, head + 1, memory_order_release);
    return true;
}

/* Either side may ask; head is read first, so the answer is never negative;
 * clamped because a stale head can make it look over capacity. */
size_t spsc_size(spsc_t *q)
{
    size_t head = atomic_load_explicit(&q->head, memory_order_acquire);
    size_t tail = atomic_load_explicit(&q->tail, memory_order_acquire);
    size_t n = tail - head;
    return n > q->mask + 1 ? q->mask + 1 : n;
}
