/* gate.h - starting a team of threads whose size is known only after the
 * last pthread_create: each thread waits at the gate; the main thread, once
 * it has created what it could, sizes the barrier to the threads that really
 * started plus itself and opens the gate.  From then on gate_sync is a
 * barrier of that team, so a failed pthread_create cannot leave anyone
 * waiting for a thread that never came. */
#ifndef MB_GATE_H
#define MB_GATE_H
#include <pthread.h>
#include <stdbool.h>

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool open;
    pthread_barrier_t bar; /* initialized by gate_open */
} gate_t;

void gate_init(gate_t *g);
/* Main thread: a barrier of started + 1, then the gate opens. */
void gate_open(gate_t *g, unsigned started);
/* A started thread, first thing: waits until the gate is open. */
void gate_enter(gate_t *g);
/* Everyone in the team, after the gate opened. */
void gate_sync(gate_t *g);
void gate_destroy(gate_t *g);

#endif
