/* planted_prog.c - a known change for tests/bench/bench_stopping.py (issue 45, "No bias"):
 * `planted_prog UNITS PCT WORD` does UNITS units of work (small mallocs written, summed and
 * freed, and arithmetic) in its marked region, or UNITS x (100 + PCT) / 100 when the
 * configuration's allocator settings (GLIBC_TUNABLES, as `-t LABEL:NAME=V` sets them) name
 * WORD: an A/A pair of one allocator whose second configuration does PCT% more work. */
#include <mallocbench.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One unit: 64 allocations of drawn sizes (16 B .. 4 KiB), each written and read back. */
static uint64_t unit(uint64_t *x)
{
    uint64_t sum = 0;
    for (int i = 0; i < 64; i++) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        size_t n = 16 + (size_t)(*x % 4081);
        unsigned char *p = malloc(n);
        if (!p)
            exit(1);
        memset(p, (int)(*x & 0xff), n);
        for (size_t k = 0; k < n; k += 64)
            sum += p[k] * (k + 1);
        free(p);
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: planted_prog UNITS PCT WORD\n");
        return 2;
    }
    unsigned long long units = strtoull(argv[1], NULL, 10), pct = strtoull(argv[2], NULL, 10);
    const char *settings = getenv("GLIBC_TUNABLES");
    int more = settings && strstr(settings, argv[3]) != NULL;
    if (more)
        units = units * (100 + pct) / 100;
    uint64_t x = 88172645463325252ULL, sum = 0;
    mb_region_begin();
    for (unsigned long long u = 0; u < units; u++)
        sum += unit(&x);
    mb_region_end();
    printf("units: %llu%s\nchecksum: %016llx\n", units, more ? " (planted)" : "", (unsigned long long)sum);
    return 0;
}
