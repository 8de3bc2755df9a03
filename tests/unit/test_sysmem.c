/* test_sysmem.c - common/sysmem.c: libc's malloc before the switch, then
 * blocks that are mappings of their own (64-byte aligned, zeroed by calloc,
 * no page resident but the header's until written), realloc keeping the
 * bytes as it grows and shrinks, sizes that overflow failing with ENOMEM,
 * and prefault making the pages resident without changing a byte. */
#include "../check.h"
#include "sysmem.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t resident(void *p, size_t n)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE), pages = (n + ps - 1) / ps, r = 0;
    unsigned char v[64];
    CHECK(pages <= sizeof v);
    if (mincore((void *)((uintptr_t)p / ps * ps), n, v))
        return 0;
    for (size_t i = 0; i < pages; i++)
        r += v[i] & 1;
    return r;
}

int main(void)
{
    /* libc until the switch: free() takes what sysmem_malloc gave */
    char *l = sysmem_malloc(100);
    CHECK(l != NULL);
    free(l);
    sysmem_use_kernel();
    unsigned char *p = sysmem_calloc(1000, 8);
    CHECK(p != NULL);
    CHECK((uintptr_t)p % 64 == 0);
    size_t zero = 0;
    for (size_t i = 0; i < 8000; i++)
        zero += p[i] == 0;
    CHECK_U64(zero, 8000);
    for (size_t i = 0; i < 8000; i++)
        p[i] = (unsigned char)(i * 7);
    p = sysmem_realloc(p, 1 << 20); /* grown: moved or not, the bytes kept */
    CHECK(p != NULL);
    size_t same = 0;
    for (size_t i = 0; i < 8000; i++)
        same += p[i] == (unsigned char)(i * 7);
    CHECK_U64(same, 8000);
    p[(1 << 20) - 1] = 1;
    p = sysmem_realloc(p, 100); /* shrunk */
    CHECK(p != NULL && p[99] == (unsigned char)(99 * 7));
    sysmem_free(p);
    sysmem_free(NULL);
    errno = 0;
    CHECK(sysmem_malloc(SIZE_MAX - 10) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(sysmem_calloc(SIZE_MAX / 2, 4) == NULL && errno == ENOMEM);
    unsigned char *a = sysmem_aligned64(40 * 4096);
    CHECK(a != NULL && (uintptr_t)a % 64 == 0);
    CHECK_U64(resident(a, 40 * 4096), 1); /* only the page of the mapping's header */
    a[5] = 9;
    sysmem_prefault(a, 40 * 4096);
    CHECK_U64(resident(a, 40 * 4096), 40);
    CHECK_INT(a[5], 9);
    CHECK_INT(a[40 * 4096 - 1], 0);
    sysmem_free(a);
    CHECK_DONE();
}
