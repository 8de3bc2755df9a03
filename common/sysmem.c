/* sysmem.c - libc's malloc, or blocks mapped from the kernel (sysmem.h).
 * A kernel block is one private anonymous mapping: a 64-byte header holding
 * the mapping's length, then the caller's bytes (so every block is 64-byte
 * aligned, as the replay's plan wants).  realloc is mremap, which moves
 * pages instead of copying them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sysmem.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HDR 64

static int use_kernel;

void sysmem_use_kernel(void) { use_kernel = 1; }

static size_t page_size(void)
{
    static size_t ps;
    if (!ps)
        ps = (size_t)sysconf(_SC_PAGESIZE);
    return ps;
}

/* The mapping's length for n bytes, or 0 when it overflows. */
static size_t map_len(size_t n)
{
    size_t ps = page_size();
    if (n > SIZE_MAX - HDR - ps)
        return 0;
    return (n + HDR + ps - 1) / ps * ps;
}

void *sysmem_malloc(size_t n)
{
    if (!use_kernel)
        return malloc(n);
    size_t len = map_len(n);
    if (!len) {
        errno = ENOMEM;
        return NULL;
    }
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    memcpy(m, &len, sizeof len);
    return m + HDR;
}

void *sysmem_calloc(size_t nmemb, size_t size)
{
    if (!use_kernel)
        return calloc(nmemb, size);
    if (size && nmemb > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return sysmem_malloc(nmemb * size); /* a fresh mapping reads as zeros */
}

void *sysmem_realloc(void *p, size_t n)
{
    if (!use_kernel)
        return realloc(p, n);
    if (!p)
        return sysmem_malloc(n);
    char *m = (char *)p - HDR;
    size_t old, len = map_len(n);
    memcpy(&old, m, sizeof old);
    if (!len) {
        errno = ENOMEM;
        return NULL;
    }
    if (len == old)
        return p;
    char *q = mremap(m, old, len, MREMAP_MAYMOVE);
    if (q == MAP_FAILED)
        return NULL;
    memcpy(q, &len, sizeof len);
    return q + HDR;
}

void *sysmem_aligned64(size_t n)
{
    if (!use_kernel)
        return n > SIZE_MAX - 63 ? NULL : aligned_alloc(64, (n + 63) / 64 * 64);
    return sysmem_malloc(n);
}

void sysmem_free(void *p)
{
    if (!use_kernel) {
        free(p);
        return;
    }
    if (!p)
        return;
    char *m = (char *)p - HDR;
    size_t len;
    memcpy(&len, m, sizeof len);
    munmap(m, len);
}

void sysmem_prefault(void *p, size_t n)
{
    if (!p || !n)
        return;
    size_t ps = page_size();
    volatile char *c = p;
    uintptr_t first = (uintptr_t)p / ps * ps;
    for (uintptr_t a = first; a < (uintptr_t)p + n; a += ps) {
        size_t i = a < (uintptr_t)p ? 0 : a - (uintptr_t)p;
        c[i] = c[i];
    }
}
