/* refault_prog.c - known page faults for tests/integration/test_diagnose.py:
 * PAGES pages of an anonymous mapping (MADV_NOHUGEPAGE: one fault per 4 KiB
 * page) written once, then ROUNDS times given back and, GAP_MS later,
 * written again, page by page.  MODE says how it is given back and touched:
 *   dontneed  madvise(MADV_DONTNEED), then a write per page: PAGES re-faults a round
 *   read      the same, but each page read first (the zero page), then
 *             written: 2 x PAGES re-faults of PAGES pages a round
 *   free      madvise(MADV_FREE): lazily freed, no re-fault while memory is ample
 *   munmap    munmap and mmap again at the same address: PAGES re-faults a round
 *   fork      nothing given back: a child is forked that writes every page and exits,
 *             then the parent writes every page: PAGES copy-on-write faults a round
 *             in each
 * WAIT_MS first (so that `diagnose -p` can attach; "ready PID" is printed on
 * stdout at the start), HOLD_MS after the last round before exiting; "elapsed S"
 * (the rounds' own time, WAIT_MS not included) is printed before the hold.
 * Usage: refault_prog PAGES ROUNDS GAP_MS [MODE [WAIT_MS [HOLD_MS]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ul

#ifdef MALLOC_CONF_TEXT
/* built linked to jemalloc with its settings compiled in (tests/meson.build: refault_je) */
const char *malloc_conf = MALLOC_CONF_TEXT;
#endif

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts))
        ;
}

static char *map_at(void *hint, size_t len)
{
    char *p = mmap(hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | (hint ? MAP_FIXED_NOREPLACE : 0),
                   -1, 0);
    if (p == MAP_FAILED || (hint && p != hint)) {
        perror("refault_prog: mmap");
        exit(1);
    }
    if (madvise(p, len, MADV_NOHUGEPAGE)) {
        perror("refault_prog: madvise(MADV_NOHUGEPAGE)");
        exit(1);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: refault_prog PAGES ROUNDS GAP_MS [dontneed|read|free|munmap [WAIT_MS [HOLD_MS]]]\n");
        return 2;
    }
    size_t pages = strtoul(argv[1], NULL, 10);
    unsigned rounds = (unsigned)strtoul(argv[2], NULL, 10);
    long gap = strtol(argv[3], NULL, 10);
    const char *mode = argc > 4 ? argv[4] : "dontneed";
    long wait = argc > 5 ? strtol(argv[5], NULL, 10) : 0, hold = argc > 6 ? strtol(argv[6], NULL, 10) : 0;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    sleep_ms(wait);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t len = pages * PAGE;
    char *p = map_at(NULL, len);
    volatile char sink = 0;
    for (size_t i = 0; i < pages; i++)
        p[i * PAGE] = 1;
    for (unsigned r = 0; r < rounds; r++) {
        if (!strcmp(mode, "fork")) {
            pid_t c = fork();
            if (c == 0) {
                for (size_t i = 0; i < pages; i++)
                    p[i * PAGE] = (char)(r + 2);
                _exit(0);
            }
            if (c < 0 || waitpid(c, NULL, 0) != c) {
                perror("refault_prog: fork");
                return 1;
            }
        } else if (!strcmp(mode, "munmap")) {
            munmap(p, len);
            p = map_at(p, len);
        } else if (madvise(p, len, !strcmp(mode, "free") ? MADV_FREE : MADV_DONTNEED)) {
            perror("refault_prog: madvise");
            return 1;
        }
        sleep_ms(gap);
        for (size_t i = 0; i < pages; i++) {
            if (!strcmp(mode, "read"))
                sink += p[i * PAGE];
            p[i * PAGE] = (char)(r + 2);
        }
    }
    (void)sink;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("elapsed %.6f\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    fflush(stdout);
    sleep_ms(hold);
    return 0;
}
