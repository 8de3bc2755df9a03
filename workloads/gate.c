/* gate.c - the start gate of gate.h. */
#include "gate.h"

void gate_init(gate_t *g)
{
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    g->open = false;
}

void gate_open(gate_t *g, unsigned started)
{
    pthread_barrier_init(&g->bar, NULL, started + 1);
    pthread_mutex_lock(&g->lock);
    g->open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

void gate_enter(gate_t *g)
{
    pthread_mutex_lock(&g->lock);
    while (!g->open)
        pthread_cond_wait(&g->cond, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

void gate_sync(gate_t *g) { pthread_barrier_wait(&g->bar); }

void gate_destroy(gate_t *g)
{
    if (g->open)
        pthread_barrier_destroy(&g->bar);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cond);
}
