/* region_prog.c - a program for tests/integration/test_replay.py region: 100
 * malloc/free pairs of 64 KiB before its marked region (include/mallocbench.h),
 * INSIDE pairs of 1 MiB in it, 50 pairs after it, so that a replay of its
 * recorded region must replay 2 x INSIDE calls measured and the others not.
 * region_prog INSIDE SMALL adds SMALL pairs of 64 B first: a long trace that
 * holds nothing, whose reading must leave the measured allocator as it was. */
#include <mallocbench.h>

#include <stdio.h>
#include <stdlib.h>

static unsigned long sum; /* read back, so that no write is dead (a compiler drops a memset before free) */

static void pairs(unsigned n, size_t size)
{
    for (unsigned i = 0; i < n; i++) {
        volatile char *p = malloc(size);
        if (!p)
            exit(1);
        for (size_t k = 0; k < size; k += 4096)
            p[k] = (char)k;
        sum += (unsigned char)p[size / 2 & ~(size_t)4095];
        free((void *)p);
    }
}

int main(int argc, char **argv)
{
    unsigned inside = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 300;
    unsigned small = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 0;
    pairs(small, 64);
    pairs(100, 64 << 10);
    mb_region_begin();
    pairs(inside, 1 << 20);
    mb_region_end();
    pairs(50, 64 << 10);
    printf("done %lu\n", sum);
    return 0;
}
