/* queue.h - a bounded single-producer single-consumer ring of pointers,
 * lock-free (C11 atomics), for handing objects from the thread that
 * allocated them to the thread that frees them.  Fixed capacity chosen at
 * init (a power of two); push fails when full, pop when empty. */
#ifndef MB_QUEUE_H
#define MB_QUEUE_H
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    _Atomic size_t head;   /* next slot to pop (consumer) */
    size_t tail_seen;      /* consumer's last look at tail */
    char pad1[64 - 2 * sizeof(size_t)];
    _Atomic size_t tail;   /* next slot to push (producer) */
    size_t head_seen;      /* producer's last look at head */
    char pad2[64 - 2 * sizeof(size_t)];
    size_t mask;
    void **slot;
} spsc_t;

/* capacity: a power of two; slots: caller memory for capacity pointers */
int spsc_init(spsc_t *q, void **slots, size_t capacity);
bool spsc_push(spsc_t *q, void *p);
bool spsc_pop(spsc_t *q, void **p);
size_t spsc_size(spsc_t *q);

#endif
