/* server.h - what the harness does for the `serve` workload (workloads/serve.h)
 * beside starting the server like any command: its checks before any run,
 * the port of tcp:auto written into both commands, the server's readiness,
 * and the client, started unpreloaded through spawn.h, read and reaped.
 * The order of a sample (ready, region begin, client, region end, SIGTERM,
 * SIGKILL after the grace) is sample.c's watch loop. */
#ifndef MB_SERVER_H
#define MB_SERVER_H

#include "launch.h"
#include "types.h"
#include "workload.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#define SERVE_OUTPUT_KEEP 4096

typedef enum { SERVE_TCP, SERVE_FILE } serve_ready_kind_t;

/* ready=tcp:PORT | tcp:auto | file:PATH */
typedef struct {
    serve_ready_kind_t kind;
    int port;                   /* tcp: 1..65535; 0: auto */
    char path[PATH_MAX];        /* file */
} serve_ready_t;

/* Where a sample's server and client are. */
typedef enum { SERVE_WAITING, SERVE_LOADING, SERVE_STOPPING } serve_phase_t;

typedef struct {
    serve_ready_t ready;
    serve_phase_t phase;
    bool existed;               /* file: PATH was there before the server started ... */
    struct stat before;         /* ... as this */
    double ready_by;            /* the server's time to be ready runs out */
    double stop_by;             /* SIGKILL then, unless it has ended after SIGTERM */
    pid_t client;               /* > 0 while it runs */
    int client_pidfd, client_out, client_fail_fd;
    int client_wstatus;
    bool client_ended;
    char client_setup[128];     /* the client never ran its program: at this step ... */
    int client_setup_errno;     /* ... with this errno */
    char head[SERVE_OUTPUT_KEEP], tail[SERVE_OUTPUT_KEEP];
    launch_window_t out;        /* the client's output */
} serve_t;

/* The checks of a serve workload before any run: the server can take a
 * preloaded allocator (launch_check_command), the client splits and is a
 * program on PATH, ready parses (tcp:auto wants {port} in the server's
 * command), every regex compiles.  0, or -EINVAL with one line in err. */
int server_check(const wl_args_t *a, char *err, size_t errlen);

/* tcp:auto: a copy of a whose cmd and client have {port} replaced by a
 * port free now (*port); any other ready: a plain copy, *port 0.  0, or
 * -errno with one line in err. */
int server_args(const wl_args_t *a, wl_args_t *out, int *port, char *err, size_t errlen);

/* Before the server starts (now, on mono_now's clock): sv set up for the
 * sample; nothing may already answer on its port (port: tcp:auto's, from
 * server_args), since that process would be taken for the server; file:
 * what is at PATH now.  0, or -EADDRINUSE with one line in err. */
int server_before(serve_t *sv, const wl_args_t *a, int port, double now, char *err, size_t errlen);

/* Kills the client's group (if it still runs) and reaps it, then drains
 * its output. */
void server_client_end(serve_t *sv);

/* One line on how the client ended badly, or "" when it exited 0. */
void server_client_failure(const serve_t *sv, char *out, size_t len);

/* Latency regexes p50, p99, p999, latency_max: each found in the client's
 * output, in microseconds (latency_unit converted); NAN when the regex is
 * empty.  0, or -errno with the reason in fail. */
int server_latencies(const serve_t *sv, const wl_args_t *a, double us[4], char *fail, size_t len);

/* What server_step asks of the sampler that watches the server: the
 * region's markers at the moment they are due, and SIGKILL to the server's
 * whole group; and the client's environment (prepare_env's). */
typedef struct {
    void *ctx;
    void (*mark)(void *ctx, bool begin);
    void (*kill)(void *ctx);
    char *const *client_env;
} server_hooks_t;

/* A server's sample, from the sampler's watch loop at time t (mono_now):
 * ready, the region begins and the client starts; the client has ended,
 * the region ends and the server (pid, its group) gets SIGTERM; the grace
 * is over, SIGKILL.  A server not ready in time, or a client that cannot
 * start, ends the sample with s->harness_why.  Sets s->stopped and
 * s->stop_killed; *killed once it has been killed.  Returns the ms until it
 * wants to look again (-1: only when a descriptor wakes it). */
int server_step(serve_t *sv, const wl_args_t *a, pid_t pid, double t, run_sample_t *s, const server_hooks_t *h,
                bool *killed);

#endif
