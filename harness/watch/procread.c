/* procread.c - the reader of procread.h.  One request at a time over a
 * socket pair: {pid, what, full} in; for a capture the ident_capture_t (its
 * env pointer cleared) and the environment block's bytes out, for a /proc
 * file its length and bytes. */
#include "procread.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ENV_MAX (1u << 20)  /* the most of an environment block taken back (ident keeps far less) */
#define FILE_MAX (64u << 20) /* the most of a /proc file taken back */
#define KILL_WAIT_MS 100     /* how long a killed reader is waited for before it is left behind */

static const char *const proc_files[] = {"maps", "smaps_rollup"};

typedef struct {
    int32_t pid, what, full; /* what: -1 a capture, else an index of proc_files */
} request_t;

static int sock = -1;
static pid_t reader = -1;

static int write_all(int fd, const void *p, size_t n)
{
    for (const char *c = p; n;) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}

/* The reader: ctx is the socket pair, [1] its end. */
static void serve(void *ctx)
{
    const int *sv = ctx;
    int fd = sv[1];
    close(sv[0]); /* diagnose's end: its closing is our end of file */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    for (;;) {
        request_t rq;
        ssize_t n = recv(fd, &rq, sizeof rq, MSG_WAITALL);
        if (n != (ssize_t)sizeof rq)
            _exit(0);
        if (rq.what >= 0) { /* a /proc file: its length, then its bytes */
            char path[64], *buf = NULL;
            uint64_t len = 0;
            snprintf(path, sizeof path, "/proc/%d/%s", (int)rq.pid,
                     proc_files[(size_t)rq.what < sizeof proc_files / sizeof *proc_files ? rq.what : 0]);
            int f = open(path, O_RDONLY | O_CLOEXEC);
            size_t cap = 1u << 16;
            buf = f >= 0 ? malloc(cap) : NULL;
            for (ssize_t r; buf && (r = read(f, buf + len, cap - len)) > 0;) {
                len += (uint64_t)r;
                if (len == cap) {
                    char *g = cap < FILE_MAX ? realloc(buf, cap * 2) : NULL;
                    if (!g)
                        break; /* the first FILE_MAX bytes */
                    buf = g, cap *= 2;
                }
            }
            if (f >= 0)
                close(f);
            if (write_all(fd, &len, sizeof len) || (len && write_all(fd, buf, len)))
                _exit(0);
            free(buf);
            continue;
        }
        ident_capture_t c;
        ident_capture(rq.pid, rq.full != 0, &c);
        char *env = c.env;
        if (c.env_len > ENV_MAX)
            c.env_len = 0;
        c.env = NULL;
        if (write_all(fd, &c, sizeof c) || (c.env_len && write_all(fd, env, c.env_len)))
            _exit(0);
        c.env = env;
        ident_capture_free(&c);
    }
}

int procread_start(void)
{
    if (reader > 0)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        return -errno;
    pid_t p = -1;
    int rc = spawn_call(serve, sv, SIGKILL, &p);
    if (rc) {
        close(sv[0]), close(sv[1]);
        return rc;
    }
    close(sv[1]);
    sock = sv[0], reader = p;
    return 0;
}

pid_t procread_pid(void)
{
    return reader;
}

void procread_stop(void)
{
    if (reader <= 0)
        return;
    close(sock);
    kill(reader, SIGKILL);
    /* a reader stuck in a request its target never answers (a FUSE file the target serves) dies
     * only when that request ends: it is waited for a little, then left behind, never blocked on */
    struct timespec ts = {0, 5000000};
    for (int i = 0; i < KILL_WAIT_MS / 5 && waitpid(reader, NULL, WNOHANG) == 0; i++)
        nanosleep(&ts, NULL);
    sock = -1, reader = -1;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* n bytes into p before the deadline: 0, or -ETIMEDOUT / -EPIPE. */
static int read_until(void *p, size_t n, uint64_t deadline)
{
    for (char *c = p; n;) {
        uint64_t now = now_ms();
        if (now >= deadline)
            return -ETIMEDOUT;
        struct pollfd pf = {sock, POLLIN, 0};
        int r = poll(&pf, 1, (int)(deadline - now));
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            return -ETIMEDOUT;
        ssize_t got = r > 0 ? recv(sock, c, n, MSG_DONTWAIT) : -1;
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            return -EPIPE;
        c += got, n -= (size_t)got;
    }
    return 0;
}

int procread_capture(int pid, bool full_cmdline, unsigned timeout_ms, ident_capture_t *out)
{
    memset(out, 0, sizeof *out);
    out->exe_rc = out->env_rc = -ETIMEDOUT;
    int rc = procread_start();
    if (rc)
        return rc;
    uint64_t deadline = now_ms() + timeout_ms;
    request_t rq = {pid, -1, full_cmdline};
    ident_capture_t c;
    if (write_all(sock, &rq, sizeof rq))
        rc = -EPIPE;
    else
        rc = read_until(&c, sizeof c, deadline);
    if (!rc && c.env_len > ENV_MAX)
        rc = -EPROTO;
    char *env = NULL;
    if (!rc && c.env_len && !(env = malloc(c.env_len + 1)))
        rc = -ENOMEM;
    if (!rc && c.env_len && (rc = read_until(env, c.env_len, deadline)) == 0)
        env[c.env_len] = '\0';
    if (rc) { /* slow, gone or out of step: a fresh reader for the next request */
        free(env);
        procread_stop();
        return rc;
    }
    *out = c;
    out->env = env;
    out->exe.name[sizeof out->exe.name - 1] = '\0';
    out->conf[sizeof out->conf - 1] = '\0';
    if (out->cmdline_len > sizeof out->cmdline)
        out->cmdline_len = 0;
    if (!out->env)
        out->env_len = 0;
    return 0;
}

int procread_file(int pid, const char *name, unsigned timeout_ms, char **buf, size_t *len)
{
    *buf = NULL, *len = 0;
    int32_t what = -1;
    for (size_t i = 0; i < sizeof proc_files / sizeof *proc_files; i++)
        if (!strcmp(name, proc_files[i]))
            what = (int32_t)i;
    if (what < 0)
        return -EINVAL;
    int rc = procread_start();
    if (rc)
        return rc;
    uint64_t deadline = now_ms() + timeout_ms, n = 0;
    request_t rq = {pid, what, 0};
    char *b = NULL;
    if (write_all(sock, &rq, sizeof rq))
        rc = -EPIPE;
    else if (!(rc = read_until(&n, sizeof n, deadline)) && n > FILE_MAX)
        rc = -EPROTO;
    if (!rc && !(b = malloc(n + 1)))
        rc = -ENOMEM;
    if (!rc && n && (rc = read_until(b, n, deadline)) == 0)
        b[n] = '\0';
    if (rc) {
        free(b);
        procread_stop();
        return rc;
    }
    b[n] = '\0';
    *buf = b, *len = n;
    return 0;
}
