/* strpool.c - the string pool of strpool.h: one growing buffer, an index
 * from a string's FNV-1a hash to its handle (two strings of one hash: the
 * second is kept apart, unindexed, so a collision costs space, not truth). */
#include "strpool.h"

#include <stdlib.h>
#include <string.h>

void strpool_init(strpool_t *p)
{
    memset(p, 0, sizeof *p);
    hmap_init(&p->index, NULL);
}

void strpool_free(strpool_t *p)
{
    free(p->s);
    hmap_free(&p->index);
    memset(p, 0, sizeof *p);
}

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

uint32_t strpool_add(strpool_t *p, const char *s, size_t maxlen)
{
    size_t n = strnlen(s, maxlen);
    if (!n)
        return 0;
    uint64_t h = fnv1a(s, n), *at = hmap_get(&p->index, h);
    if (at && !strncmp(p->s + *at, s, n) && p->s[*at + n] == '\0')
        return (uint32_t)*at;
    if (!p->s && !(p->s = calloc(1, p->cap = 64)))
        return 0;
    if (!p->n)
        p->n = 1; /* handle 0: "" */
    if (p->n + n + 1 > UINT32_MAX)
        return 0;
    if (p->n + n + 1 > p->cap) {
        size_t off = s >= p->s && s < p->s + p->cap ? (size_t)(s - p->s) : SIZE_MAX;
        size_t cap = (p->cap + n + 1) * 2;
        char *g = realloc(p->s, cap);
        if (!g)
            return 0;
        p->s = g, p->cap = cap;
        if (off != SIZE_MAX)
            s = p->s + off; /* it was ours: it moved with the buffer */
    }
    uint32_t handle = (uint32_t)p->n;
    memmove(p->s + handle, s, n);
    p->s[handle + n] = '\0';
    p->n += n + 1;
    if (!at)
        (void)hmap_put(&p->index, h, handle); /* out of memory: kept, only not found again */
    return handle;
}

const char *strpool_get(const strpool_t *p, uint32_t h)
{
    return h && h < p->n ? p->s + h : "";
}
