/* server.c - the serve workload's server readiness and client (contract:
 * server.h).  The client runs as a clean shell would run it: env(1), our
 * environment without LD_PRELOAD or any allocator's variable (sample.c
 * gives it, from prepare_env), so
 * what it allocates is glibc's and is never counted (the counters follow
 * the server's process tree only). */
#include "server.h"
#include "elfinfo.h"
#include "spawn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ENV_PATH "/usr/bin/env"

/* ready=...: 0, or -EINVAL with one line in err. */
static int server_parse_ready(const char *spec, serve_ready_t *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    if (!strncmp(spec, "tcp:", 4)) {
        r->kind = SERVE_TCP;
        if (!strcmp(spec + 4, "auto"))
            return 0;
        char *end;
        errno = 0;
        long port = strtol(spec + 4, &end, 10);
        if (!errno && end != spec + 4 && !*end && port >= 1 && port <= 65535) {
            r->port = (int)port;
            return 0;
        }
        snprintf(err, errlen, "serve: ready '%s': the port must be a number from 1 to 65535, or auto", spec);
        return -EINVAL;
    }
    if (!strncmp(spec, "file:", 5) && spec[5]) {
        r->kind = SERVE_FILE;
        if (strlen(spec + 5) < sizeof r->path) {
            snprintf(r->path, sizeof r->path, "%s", spec + 5);
            return 0;
        }
    }
    snprintf(err, errlen, "serve: ready '%s' is not tcp:PORT, tcp:auto or file:PATH (when the server "
             "is ready: it accepts a connection on 127.0.0.1:PORT, or it creates or touches PATH)", spec);
    return -EINVAL;
}

/* The client: its words split, its program found and executable.  It is
 * not preloaded, so what it links is its own business. */
static int check_client(const char *client, char *err, size_t errlen)
{
    char **argv, path[PATH_MAX];
    if (!*client) {
        snprintf(err, errlen, "serve: no client: give the load generator with --client 'CMD ARGS' "
                 "(client=... in a matrix)");
        return -EINVAL;
    }
    int rc = launch_split(client, &argv, err, errlen);
    if (rc)
        return rc;
    rc = elf_which(argv[0], path, sizeof path);
    if (rc)
        snprintf(err, errlen, "serve: the client '%s' is not %s", argv[0],
                 rc == -ENOENT ? (strchr(argv[0], '/') ? "there" : "on PATH") : "an executable file");
    launch_free_words(argv);
    return rc ? -EINVAL : 0;
}

int server_check(const wl_args_t *a, char *err, size_t errlen)
{
    serve_ready_t r;
    const char *cmd = wl_get_str(a, "cmd");
    static const char *const res[] = {"metric", "p50", "p99", "p999", "latency_max"};
    if (!*cmd) {
        snprintf(err, errlen, "serve: no server: give it after -- (cmd=... in a matrix)");
        return -EINVAL;
    }
    if (!*wl_get_str(a, "ready")) {
        snprintf(err, errlen, "serve: say when the server is ready: --ready tcp:PORT, tcp:auto or file:PATH");
        return -EINVAL;
    }
    int rc = server_parse_ready(wl_get_str(a, "ready"), &r, err, errlen);
    if (!rc && r.kind == SERVE_TCP && !r.port && !strstr(cmd, "{port}")) {
        snprintf(err, errlen, "serve: ready tcp:auto picks a port for each sample: the server's command "
                 "must take it as {port} (and the client's too, to find it)");
        rc = -EINVAL;
    }
    if (!rc)
        rc = launch_check_command(cmd, "", err, errlen);
    if (!rc)
        rc = check_client(wl_get_str(a, "client"), err, errlen);
    for (size_t i = 0; !rc && i < sizeof res / sizeof *res; i++) {
        char what[32];
        snprintf(what, sizeof what, "serve:%s", res[i]);
        rc = launch_check_regex(what, wl_get_str(a, res[i]), err, errlen);
    }
    return rc;
}

/* A port nobody listens on now: the kernel's pick for a bound socket. */
static int free_port(int *port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) || getsockname(fd, (struct sockaddr *)&sa, &len))
        rc = -errno;
    close(fd);
    *port = ntohs(sa.sin_port);
    return rc;
}

/* text with every {port} replaced: 0, or -ENAMETOOLONG. */
static int put_port(const char *text, int port, char *out, size_t len)
{
    size_t n = 0;
    char num[16];
    int nl = snprintf(num, sizeof num, "%d", port);
    for (const char *p = text; *p;) {
        bool tag = !strncmp(p, "{port}", 6);
        const char *piece = tag ? num : p;
        size_t plen = tag ? (size_t)nl : 1;
        if (n + plen >= len)
            return -ENAMETOOLONG;
        memcpy(out + n, piece, plen);
        n += plen;
        p += tag ? 6 : 1;
    }
    out[n] = '\0';
    return 0;
}

static int param_index(const wl_t *wl, const char *name)
{
    for (size_t i = 0; i < wl->nparams; i++)
        if (!strcmp(wl->params[i].name, name))
            return (int)i;
    return -1;
}

int server_args(const wl_args_t *a, wl_args_t *out, int *port, char *err, size_t errlen)
{
    serve_ready_t r;
    *out = *a;
    *port = 0;
    int rc = server_parse_ready(wl_get_str(a, "ready"), &r, err, errlen);
    if (rc || r.kind != SERVE_TCP || r.port)
        return rc;
    if ((rc = free_port(port))) {
        snprintf(err, errlen, "serve: no free port for tcp:auto: %s", strerror(-rc));
        return rc;
    }
    static const char *const words[] = {"cmd", "client"};
    for (size_t i = 0; i < 2; i++) {
        int k = param_index(a->wl, words[i]);
        if (k >= 0 && put_port(a->str[k], *port, out->str[k], sizeof out->str[k])) {
            snprintf(err, errlen, "serve: the %s with its port in place of {port} is longer than %zu "
                     "characters", words[i], sizeof out->str[k] - 1);
            return -ENAMETOOLONG;
        }
    }
    return 0;
}

/* Does something accept a connection on 127.0.0.1:port now? */
static bool accepts(int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0;
    close(fd);
    return ok;
}

int server_before(serve_t *sv, const wl_args_t *a, int port, double now, char *err, size_t errlen)
{
    memset(sv, 0, sizeof *sv);
    sv->client = -1;
    sv->client_pidfd = sv->client_out = sv->client_fail_fd = -1;
    sv->out = (launch_window_t){.head = sv->head, .tail = sv->tail, .cap = SERVE_OUTPUT_KEEP};
    sv->ready_by = now + (double)wl_get(a, "ready_timeout");
    int rc = server_parse_ready(wl_get_str(a, "ready"), &sv->ready, err, errlen);
    if (rc)
        return rc;
    if (sv->ready.kind == SERVE_FILE) {
        sv->existed = stat(sv->ready.path, &sv->before) == 0;
        return 0;
    }
    if (!sv->ready.port)
        sv->ready.port = port; /* tcp:auto: the one server_args wrote into the commands */
    if (accepts(sv->ready.port)) {
        snprintf(err, errlen, "serve: something already accepts connections on 127.0.0.1:%d before the "
                 "server starts: it would be taken for the server (stop it, or use another port)",
                 sv->ready.port);
        return -EADDRINUSE;
    }
    return 0;
}

/* Is the server ready: a connection to 127.0.0.1:PORT accepted, or PATH
 * there and not what was there before it started. */
static bool server_is_ready(const serve_t *sv)
{
    if (sv->ready.kind == SERVE_TCP)
        return accepts(sv->ready.port);
    struct stat st;
    if (stat(sv->ready.path, &st) != 0)
        return false;
    return !sv->existed || st.st_ino != sv->before.st_ino || st.st_dev != sv->before.st_dev ||
           st.st_mtim.tv_sec != sv->before.st_mtim.tv_sec || st.st_mtim.tv_nsec != sv->before.st_mtim.tv_nsec;
}

/* Starts the client (client=, through env(1), with envp: our environment
 * without any allocator variable, prepare_env's; its own process group, killed
 * if the harness dies): 0, or -errno. */
static int server_client_start(serve_t *sv, const wl_args_t *a, char *const *envp)
{
    char **words, **argv = NULL, err[256];
    int out[2] = {-1, -1};
    int rc = launch_split(wl_get_str(a, "client"), &words, err, sizeof err);
    if (rc)
        return rc;
    size_t n = 0;
    while (words[n])
        n++;
    argv = calloc(n + 2, sizeof *argv);
    if (!argv || pipe2(out, O_CLOEXEC)) {
        rc = argv ? -errno : -ENOMEM;
        goto done;
    }
    argv[0] = "env";
    memcpy(argv + 1, words, (n + 1) * sizeof *argv);
    const spawn_fd_t fds[] = {{SPAWN_DEVNULL, 0}, {out[1], 1}, {out[1], 2}};
    spawn_t sp = {.path = ENV_PATH, .argv = argv, .envp = envp, .fds = fds, .nfds = 3, .group = true,
                  .death_signal = SIGKILL, .go_fd = -1, .exec_fail = "mallocbench: cannot execute " ENV_PATH,
                  .fail_fd = &sv->client_fail_fd};
    rc = spawn_start(&sp, &sv->client);
    if (rc) {
        sv->client = -1;
        goto done;
    }
    sv->client_out = out[0], out[0] = -1;
    fcntl(sv->client_out, F_SETFL, O_NONBLOCK);
    sv->client_pidfd = (int)syscall(SYS_pidfd_open, sv->client, 0);
done:
    if (out[0] >= 0)
        close(out[0]);
    if (out[1] >= 0)
        close(out[1]);
    free(argv);
    launch_free_words(words);
    return rc;
}

/* What the client wrote since the last read; false at its end of file. */
static bool client_read(serve_t *sv)
{
    char buf[4096];
    for (;;) {
        ssize_t n = sv->client_out >= 0 ? read(sv->client_out, buf, sizeof buf) : 0;
        if (n > 0) {
            launch_window_add(&sv->out, buf, (size_t)n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return true;
        if (sv->client_out >= 0)
            close(sv->client_out);
        sv->client_out = -1;
        return false;
    }
}

/* Reaped once it has ended; its set-up failure read then. */
static void client_reaped(serve_t *sv, int wstatus)
{
    sv->client_wstatus = wstatus;
    sv->client_ended = true;
    sv->client = -1;
    if (sv->client_pidfd >= 0)
        close(sv->client_pidfd);
    sv->client_pidfd = -1;
    if (sv->client_fail_fd >= 0) {
        if (spawn_failure(sv->client_fail_fd, sv->client_setup, sizeof sv->client_setup,
                          &sv->client_setup_errno))
            sv->client_setup[0] = '\0', sv->client_setup_errno = 0;
        close(sv->client_fail_fd);
        sv->client_fail_fd = -1;
    }
}

/* Reads what the client wrote (non-blocking), reaps it if it has ended:
 * true once it has. */
static bool server_client_poll(serve_t *sv)
{
    if (sv->client_ended)
        return true;
    client_read(sv);
    int ws;
    if (sv->client > 0 && waitpid(sv->client, &ws, WNOHANG) == sv->client) {
        while (client_read(sv) && sv->client_out >= 0)
            usleep(1000); /* what it wrote last; a grandchild holding the pipe is cut at the end */
        client_reaped(sv, ws);
    }
    return sv->client_ended;
}

void server_client_end(serve_t *sv)
{
    if (sv->client > 0) {
        int ws = 0;
        if (kill(-sv->client, SIGKILL) != 0)
            kill(sv->client, SIGKILL);
        waitpid(sv->client, &ws, 0);
        client_reaped(sv, ws);
    }
    for (int i = 0; i < 64 && sv->client_out >= 0 && client_read(sv); i++)
        ;
    if (sv->client_out >= 0)
        close(sv->client_out);
    sv->client_out = -1;
}

void server_client_failure(const serve_t *sv, char *out, size_t len)
{
    char tail[SERVE_OUTPUT_KEEP];
    snprintf(tail, sizeof tail, "%s", sv->tail);
    const char *last = launch_last_line(tail);
    int ws = sv->client_wstatus;
    if (!sv->client_ended)
        snprintf(out, len, "the client did not finish");
    else if (sv->client_setup_errno)
        snprintf(out, len, "the client could not %s: %s", sv->client_setup, strerror(sv->client_setup_errno));
    else if (WIFSIGNALED(ws))
        snprintf(out, len, "the client was killed by signal %d (%s)%s%s", WTERMSIG(ws), strsignal(WTERMSIG(ws)),
                 *last ? ": " : "", last);
    else if (WIFEXITED(ws) && WEXITSTATUS(ws))
        snprintf(out, len, "the client exited with code %d: %s", WEXITSTATUS(ws), *last ? last : "(no output)");
    else
        out[0] = '\0';
}

int server_latencies(const serve_t *sv, const wl_args_t *a, double us[4], char *fail, size_t len)
{
    static const char *const names[] = {"p50", "p99", "p999", "latency_max"};
    static const double scale[] = {1.0, 1e3, 1e6}; /* us|ms|s, the enum's order */
    uint64_t unit = wl_get(a, "latency_unit");
    for (size_t i = 0; i < 4; i++) {
        const char *re = wl_get_str(a, names[i]);
        us[i] = NAN;
        if (!*re)
            continue;
        char text[64];
        int rc = launch_window_metric(&sv->out, re, &us[i], text, sizeof text);
        if (rc == -EDOM || rc == -ERANGE) {
            snprintf(fail, len, "latency %s '%s' matched '%s' in the client's output: %s", names[i], re, text,
                     rc == -EDOM ? "not one whole number" : "not finite, or of a magnitude out of range");
            return rc;
        }
        if (rc) {
            snprintf(fail, len, "latency %s '%s' %s in the client's output", names[i], re,
                     rc == -ENOENT    ? "matched no number"
                     : rc == -ENODATA ? "matched only before output that was not kept (the last figure is unknown)"
                                      : "matched a line cut by the window kept");
            return rc;
        }
        us[i] *= scale[unit < 3 ? unit : 0];
    }
    return 0;
}

/* The harness ends a server's sample itself, for the reason why. */
static void server_abort(run_sample_t *s, const server_hooks_t *h, bool *killed, const char *why)
{
    snprintf(s->harness_why, sizeof s->harness_why, "%s", why);
    h->kill(h->ctx);
    *killed = true;
}

int server_step(serve_t *sv, const wl_args_t *a, pid_t pid, double t, run_sample_t *s, const server_hooks_t *h,
                bool *killed)
{
    char why[600];
    if (*killed)
        return -1;
    if (sv->phase == SERVE_WAITING) {
        if (!server_is_ready(sv)) {
            if (t < sv->ready_by)
                return 20;
            snprintf(why, sizeof why, "serve: the server was not ready after %llu s (ready=%s): killed",
                     (unsigned long long)wl_get(a, "ready_timeout"), wl_get_str(a, "ready"));
            server_abort(s, h, killed, why);
            return -1;
        }
        h->mark(h->ctx, true);
        int rc = h->client_env ? server_client_start(sv, a, h->client_env) : -ENOMEM;
        if (rc) {
            snprintf(why, sizeof why, "serve: cannot start the client: %s", strerror(-rc));
            server_abort(s, h, killed, why);
            return -1;
        }
        sv->phase = SERVE_LOADING;
    }
    if (sv->phase == SERVE_LOADING) {
        if (!server_client_poll(sv))
            return -1;
        /* the server ended first: its end is the cause, not the stop's.  A client that failed
         * because the server was going (its socket closed while it exits) can end before the
         * server is waitable: such a client's end gives the server 100 ms to show it. */
        int ws = sv->client_wstatus;
        bool failed = !WIFEXITED(ws) || WEXITSTATUS(ws) != 0;
        for (int i = 0; i < (failed ? 20 : 1); i++) {
            siginfo_t si = {0};
            if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
                return -1;
            if (failed)
                usleep(5000);
        }
        h->mark(h->ctx, false);
        s->stopped = true;
        if (kill(-pid, SIGTERM) != 0)
            kill(pid, SIGTERM);
        sv->stop_by = t + (double)wl_get(a, "grace");
        sv->phase = SERVE_STOPPING;
    }
    if (t < sv->stop_by)
        return (int)ceil((sv->stop_by - t) * 1000.0);
    s->stop_killed = true;
    h->kill(h->ctx);
    *killed = true;
    return -1;
}
