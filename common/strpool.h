/* strpool.h - strings kept once each, named by a 32-bit handle: the names a
 * watch meets again and again (a library in every process's mappings, a comm
 * per exec).  Handle 0 is "" (and what a failed add returns).  Handles stay
 * valid as the pool grows; the pointers strpool_get returns do not. */
#ifndef MB_STRPOOL_H
#define MB_STRPOOL_H
#include "hashmap.h"

#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *s;            /* "\0name\0name\0..." */
    size_t n, cap;
    hmap_t index;       /* hash of a string -> its handle (the first string of that hash) */
} strpool_t;

void strpool_init(strpool_t *p);
void strpool_free(strpool_t *p);
/* s, at most maxlen bytes of it: the handle it had if added before, else a new one;
 * 0 for "" or when out of memory (or past 4 GiB).  s may lie in the pool itself. */
uint32_t strpool_add(strpool_t *p, const char *s, size_t maxlen);
/* The string of handle h; "" for 0 or a handle the pool never gave. */
const char *strpool_get(const strpool_t *p, uint32_t h);

#endif
