/* serve_prog.c - a small TCP server and its client for tests of `mallocbench
 * serve` (tests/integration/test_serve.py).
 *
 *   serve_prog server PORT [--alloc BYTES] [--ignore-term] [--never-ready]
 *                          [--ready-file PATH] [--exit-after N]
 *   serve_prog client PORT [--requests N] [--hog BYTES]
 *
 * The server listens on 127.0.0.1:PORT (--never-ready: never), and for each
 * connection reads a line, allocates BYTES (default 1 MiB) and writes every
 * page of it, frees it and answers "ok".  --ready-file: creates PATH once it
 * listens.  --ignore-term: SIGTERM is ignored.  --exit-after N: exits 3
 * after N connections (a server that dies under load).
 * The client makes N requests (default 200), one connection each, and
 * prints "requests/s: R" and "p50_us: A p99_us: B"; --hog: before each
 * request it allocates BYTES and writes every page (a client that
 * allocates heavily, which must not count as the server's). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void touch(size_t bytes)
{
    volatile char *p = malloc(bytes);
    if (!p)
        exit(4);
    for (size_t i = 0; i < bytes; i += 4096)
        p[i] = (char)i;
    free((void *)p);
}

static struct sockaddr_in addr(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    return sa;
}

static int server(int port, int argc, char **argv)
{
    size_t bytes = 1 << 20;
    long exit_after = -1;
    const char *ready_file = NULL;
    int never = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--alloc") && i + 1 < argc)
            bytes = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--ignore-term"))
            signal(SIGTERM, SIG_IGN);
        else if (!strcmp(argv[i], "--never-ready"))
            never = 1;
        else if (!strcmp(argv[i], "--ready-file") && i + 1 < argc)
            ready_file = argv[++i];
        else if (!strcmp(argv[i], "--exit-after") && i + 1 < argc)
            exit_after = strtol(argv[++i], NULL, 10);
    }
    if (never)
        for (;;)
            pause();
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = addr(port);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || listen(fd, 64)) {
        perror("serve_prog server: bind");
        return 1;
    }
    if (ready_file)
        fclose(fopen(ready_file, "w"));
    for (long n = 0;; n++) {
        if (n == exit_after) {
            fprintf(stderr, "serve_prog server: exiting after %ld connections\n", n);
            return 3;
        }
        int c = accept(fd, NULL, NULL);
        if (c < 0)
            continue;
        char buf[64];
        if (read(c, buf, sizeof buf) > 0) {
            touch(bytes);
            if (write(c, "ok\n", 3) != 3)
                perror("serve_prog server: write");
        }
        close(c);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int client(int port, int argc, char **argv)
{
    long n = 200;
    size_t hog = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--requests") && i + 1 < argc)
            n = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--hog") && i + 1 < argc)
            hog = strtoull(argv[++i], NULL, 10);
    }
    double *lat = calloc((size_t)n, sizeof *lat), t0 = now();
    for (long i = 0; i < n; i++) {
        if (hog)
            touch(hog);
        double t = now();
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = addr(port);
        char buf[8];
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) || write(fd, "get\n", 4) != 4 ||
            read(fd, buf, sizeof buf) != 3) {
            fprintf(stderr, "serve_prog client: request %ld failed\n", i);
            return 1;
        }
        close(fd);
        lat[i] = (now() - t) * 1e6;
    }
    double wall = now() - t0;
    qsort(lat, (size_t)n, sizeof *lat, cmp);
    printf("requests/s: %.1f\np50_us: %.1f p99_us: %.1f\n", (double)n / wall, lat[n / 2], lat[n * 99 / 100]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: serve_prog server|client PORT [OPTIONS]\n");
        return 2;
    }
    int port = atoi(argv[2]);
    return !strcmp(argv[1], "server") ? server(port, argc - 3, argv + 3) : client(port, argc - 3, argv + 3);
}
