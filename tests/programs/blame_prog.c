/* blame_prog.c - whose code faulted, for tests/integration/test_diagnose.py: loads each
 * LIBRARY given (dlopen, as a framework's import loads its libraries: tests/programs/blame_lib.c
 * faults in pages from its constructor; a large library mapped and never called), prints
 * "ready PID", then faults in pages from its own code, ROUNDS times:
 *   own     a 4 MiB anonymous mapping (MADV_NOHUGEPAGE) written page by page, then given
 *           back with madvise(MADV_DONTNEED): 1024 faults a round, every one at an
 *           address this file's loop writes
 *   malloc  a 16 MiB block from malloc, written page by page, freed: the re-faults are the
 *           allocator's (under jemalloc it gives the block back on free)
 * ROUNDS 0: until killed.  Prints "sum N" at the end (the writes are not optimised away).
 * Usage: blame_prog own|malloc ROUNDS [LIBRARY...] */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096ul

/* Writes every page of [p, p + len): the faults are taken here, in this program's own code. */
static unsigned long touch(volatile char *p, size_t len, unsigned long round)
{
    unsigned long sum = 0;
    for (size_t off = 0; off < len; off += PAGE) {
        p[off] = (char)(round + off / PAGE);
        sum += (unsigned char)p[off];
    }
    return sum;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "own") && strcmp(argv[1], "malloc"))) {
        fprintf(stderr, "usage: blame_prog own|malloc ROUNDS [LIBRARY...]\n");
        return 2;
    }
    long rounds = strtol(argv[2], NULL, 10);
    for (int i = 3; i < argc; i++)
        if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
            fprintf(stderr, "blame_prog: %s\n", dlerror());
            return 1;
        }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    bool own = !strcmp(argv[1], "own");
    size_t len = own ? 4ul << 20 : 16ul << 20;
    char *buf = NULL;
    if (own) {
        buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED || madvise(buf, len, MADV_NOHUGEPAGE)) {
            perror("blame_prog: mmap");
            return 1;
        }
    }
    unsigned long sum = 0;
    for (long r = 0; rounds <= 0 || r < rounds; r++) {
        char *p = own ? buf : malloc(len);
        if (!p) {
            perror("blame_prog: malloc");
            return 1;
        }
        sum += touch(p, len, (unsigned long)r);
        if (own)
            madvise(p, len, MADV_DONTNEED);
        else
            free(p);
    }
    printf("sum %lu\n", sum);
    return 0;
}
