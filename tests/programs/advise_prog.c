/* advise_prog.c - a program for tests/integration/test_replay.py advice: in
 * its marked region (include/mallocbench.h), N blocks of 8 MiB, each asked
 * for huge pages the way numpy asks for them (madvise(MADV_HUGEPAGE) from the
 * first page boundary after the block's start to its end), then written page
 * by page and freed.  With transparent huge pages on "madvise" or "always",
 * each block faults a few huge pages instead of 2048 small ones.
 * Usage: advise_prog [N] [none|aligned]: "none" makes the same blocks without
 * advice; "aligned" makes them with posix_memalign(2 MiB), so that the advice,
 * a page in from the start, leaves the first 2 MiB range in small pages under
 * every allocator (3 huge pages and 512 small ones a block). */
#include <mallocbench.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SIZE (8u << 20)
#define PAGE 4096u

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 16;
    int advise = !(argc > 2 && !strcmp(argv[2], "none"));
    int aligned = argc > 2 && !strcmp(argv[2], "aligned");
    unsigned long sum = 0;
    mb_region_begin();
    for (unsigned i = 0; i < n; i++) {
        void *v = NULL;
        if (aligned ? posix_memalign(&v, 2u << 20, SIZE) : !(v = malloc(SIZE)))
            return 1;
        volatile char *p = v;
        uintptr_t off = PAGE - (uintptr_t)p % PAGE;
        if (advise && madvise((char *)p + off, SIZE - off, MADV_HUGEPAGE))
            perror("madvise");
        for (size_t k = 0; k < SIZE; k += PAGE)
            p[k] = (char)k;
        sum += (unsigned char)p[SIZE / 2];
        free((void *)p);
    }
    mb_region_end();
    printf("done %lu\n", sum);
    return 0;
}
