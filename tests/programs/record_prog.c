/* record_prog.c - a program for tests/integration/test_record.py to record: it allocates
 * in a constructor, runs N rounds of every interposed call in main, N
 * malloc/free pairs in each of 3 threads and in a forked child (which ends
 * with _exit), frees N blocks the recorder never saw allocated, and frees a
 * 4 MiB block of which it touched 2 MiB.  Between N=0 and N=1000 the counts
 * differ by exactly the calls made here. */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern void *__libc_malloc(size_t); /* glibc's own, under the recorder's nose */

#define NTHREADS 3
#define CTOR_SIZE 12345
#define BIG (4u << 20)

static long n;
static void *kept;

__attribute__((constructor)) static void early(void)
{
    kept = malloc(CTOR_SIZE);
    free(malloc(77));
}

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < n; i++) {
        char *p = malloc((size_t)(i % 512) + 1);
        p[0] = 1;
        free(p);
    }
    return NULL;
}

static void rounds(void)
{
    for (long i = 0; i < n; i++) {
        void *p = malloc((size_t)(i % 1000) + 1), *q;
        p = realloc(p, 64);
        free(p);
        free(calloc(2, 8));
        if (posix_memalign(&q, 64, 100) == 0)
            free(q);
        free(aligned_alloc(64, 128));
        free(memalign(32, 48));
        free(valloc(100));
        free(pvalloc(100));
        free(__libc_malloc(40)); /* a free of a block the trace never saw */
    }
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atol(argv[1]) : 0;
    rounds();
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, worker, NULL))
            return 1;
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);
    char *big = malloc(BIG);
    if (!big)
        return 1;
    memset(big, 1, BIG / 2);
    free(big);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        worker(NULL);
        _exit(0);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        return 1;
    free(kept);
    return 0;
}
