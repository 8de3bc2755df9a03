/* serve.c - the descriptor of the `serve` pseudo-workload (contract:
 * serve.h).  The worker never runs it: the harness starts the server
 * (cmd) preloaded like the worker, waits until it is ready, runs the client
 * unpreloaded, counts the server over the client's run (the region), then
 * stops the server (harness/sample/server.c, harness/sample/sample.c). */
#include "serve.h"

#define LATENCY_HELP(p)                                                                        \
    "extended regex for the client's " p " latency (its first group, or the first number from " \
    "the match on), in latency_unit; empty: not reported"

static const wl_param_t serve_params[] = {
    {"ready", WLP_TEXT, "", 0, 0, NULL, "tcp:PORT|tcp:auto|file:PATH",
     "when the server is ready: a connection to 127.0.0.1:PORT is accepted (tcp:auto: a free port "
     "the harness picks for each sample, {port} in cmd and client), or PATH appears or changes"},
    {"ready_timeout", WLP_UINT, "30", 1, 3600, NULL, "s", "seconds the server has to become ready"},
    {"grace", WLP_UINT, "5", 0, 600, NULL, "s",
     "seconds between SIGTERM and SIGKILL when the server is stopped after the client"},
    {"metric", WLP_TEXT, "", 0, 0, NULL, "regex",
     "extended regex for the figure the client prints (its first group, or the first number "
     "from the match on; the last matching line wins); empty: throughput is 1 / the client's wall time"},
    {"unit", WLP_STRING, "", 0, 0, NULL, "text", "unit of the printed figure, e.g. req/s"},
    {"better", WLP_ENUM, "higher", 0, 0, "higher|lower", "", "which way the printed figure is better"},
    {"p50", WLP_TEXT, "", 0, 0, NULL, "regex", LATENCY_HELP("median")},
    {"p99", WLP_TEXT, "", 0, 0, NULL, "regex", LATENCY_HELP("99th percentile")},
    {"p999", WLP_TEXT, "", 0, 0, NULL, "regex", LATENCY_HELP("99.9th percentile")},
    {"latency_max", WLP_TEXT, "", 0, 0, NULL, "regex", LATENCY_HELP("largest")},
    {"latency_unit", WLP_ENUM, "ms", 0, 0, "us|ms|s", "", "unit of the latencies the client prints"},
    {"client", WLP_TEXT, "", 0, 0, NULL, "words",
     "the load client, as shell words (quotes, no expansion): run without the allocator; its "
     "output gives the figure and the latencies"},
    {"cmd", WLP_TEXT, "", 0, 0, NULL, "words",
     "the server, as shell words (quotes, no expansion); one line of at most 255 characters"},
};

const wl_t wl_serve = {
    .name = "serve",
    .help = "a user's server under load (mallocbench serve --ready ... --client CLIENT -- SERVER): the "
            "server's process tree over the client's run, the client unpreloaded and not counted",
    .params = serve_params,
    .nparams = sizeof serve_params / sizeof *serve_params,
    .metric = "runs per second (1 / wall time of the client)",
    .smoke = "serve:ready=tcp:auto,cmd=/usr/bin/python3 -m http.server --bind 127.0.0.1 {port},"
             "client=/usr/bin/python3 -c \"[__import__('urllib.request').request.urlopen("
             "'http://127.0.0.1:{port}/').read() for _ in range(20)]\"",
    .launcher = "server",
};
