/* own_malloc.c - a program that links an allocator of its own (built
 * twice by tests/meson.build: against libjemalloc.so.2, and defining and
 * exporting malloc itself), which `mallocbench exec` must refuse: a
 * preloaded allocator would not replace its malloc. */
#include <stdio.h>
#include <stdlib.h>

#ifdef OWN_MALLOC
/* a bump allocator over a static arena, exported (-rdynamic) */
static char arena[1 << 24];
static size_t used;
void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof arena)
        return NULL;
    used += n;
    return arena + used - n;
}
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { return malloc(a * b); }
void *realloc(void *p, size_t n) { (void)p; return malloc(n); }
#endif

int main(void)
{
    void *p = malloc(100);
    printf("%s\n", p ? "allocated" : "failed");
    free(p);
    return 0;
}
