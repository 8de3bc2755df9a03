/* count_malloc.c - a preload library that serves malloc from glibc's own
 * (__libc_malloc and friends) and counts every call, then writes
 * "count_malloc: N calls" to stderr at exit.  Preloaded before the probe,
 * it shows whether the probe itself allocates: the count with the probe
 * armed (MB_PROBE_FD set) must equal the count without (test_exec.py
 * probe_neutral).  Test-only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static unsigned long calls;

void *malloc(size_t n) { calls++; return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { calls++; return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { calls++; return __libc_realloc(p, n); }
void free(void *p) { if (p) calls++; __libc_free(p); }
void *memalign(size_t a, size_t n) { calls++; return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { calls++; return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n)
{
    calls++;
    *out = __libc_memalign(a, n);
    return *out ? 0 : 12;
}

__attribute__((destructor(101))) static void report(void)
{
    char line[64];
    int len = snprintf(line, sizeof line, "count_malloc: %lu calls\n", calls);
    if (write(2, line, (size_t)len) < 0)
        return;
}
