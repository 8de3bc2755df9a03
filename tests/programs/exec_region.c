/* exec_region.c - a program for tests/integration/test_exec.py: faults PAGES pages
 * before its marked region and REGION_PAGES inside it, so the region's
 * counts must be the second figure, not the whole process's. */
#include <mallocbench.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void touch(size_t pages)
{
    char *p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        exit(1);
    for (size_t i = 0; i < pages; i++)
        p[i * 4096] = 1;
}

int main(int argc, char **argv)
{
    size_t before = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
    size_t inside = argc > 2 ? strtoul(argv[2], NULL, 10) : 5000;
    touch(before);
    mb_region_begin();
    touch(inside);
    mb_region_end();
    printf("done: %zu pages before, %zu inside\n", before, inside);
    return 0;
}
