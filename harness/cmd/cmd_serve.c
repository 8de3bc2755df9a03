/* cmd_serve.c - `mallocbench serve [RUN OPTIONS] --ready R [--metric RE ...]
 * [--latency pNN=RE ...] --client 'CLIENT ARGS' -- SERVER ARGS`: a `run` of
 * the pseudo-workload serve (workloads/serve.h).  Everything of `run`
 * applies; this file only turns the command line into
 * `run -w serve:...,client=...,cmd=...`. */
#include "cli.h"
#include "launch.h"
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void serve_usage(FILE *out)
{
    fprintf(out,
            "usage: mallocbench serve [RUN OPTIONS] --ready tcp:PORT|tcp:auto|file:PATH\n"
            "                         [--ready-timeout S] [--grace S]\n"
            "                         [--metric REGEX [--unit UNIT] [--lower-is-better]]\n"
            "                         [--latency p50|p99|p999|max=REGEX ...] [--latency-unit us|ms|s]\n"
            "                         --client 'CLIENT ARGS' -- SERVER [ARGS...]\n"
            "Starts SERVER under each allocator configuration (-a, -t) as exec does a command (preload,\n"
            "tunables, proof of the allocator in every process, refusal of a server that links its\n"
            "own), waits until it is ready (--ready: it accepts a connection on 127.0.0.1:PORT, or\n"
            "PATH appears or changes; tcp:auto picks a free port for each sample and puts it in place\n"
            "of {port} in SERVER and CLIENT), then runs CLIENT without the allocator and counts the\n"
            "server's process tree while CLIENT runs (the region).  Then SIGTERM to the server's\n"
            "group, SIGKILL after --grace seconds (default 5), and nothing of either is left.\n"
            "Throughput is the number --metric finds in CLIENT's output (else 1 / its wall time);\n"
            "--latency NAME=REGEX fills latency_NAME_us from CLIENT's output, read in --latency-unit\n"
            "(default ms).  The server has --ready-timeout seconds (default 30) to become ready.\n"
            "RUN OPTIONS: see `mallocbench run --help` (-w is not one of them).  Example (the README's):\n"
            "  mallocbench serve --ready tcp:auto --metric 'TPS: ([0-9]+)' --unit ops/s \\\n"
            "      --client 'memcaslap -s 127.0.0.1:{port} -T 1 -c 4 -x 40000 -X 16384' \\\n"
            "      -- memcached -p {port} -U 0 -t 1 -u root -m 256\n");
}

typedef struct {
    const char *ready, *ready_timeout, *grace, *metric, *unit, *client, *latency_unit;
    const char *lat[4]; /* p50, p99, p999, max */
    bool lower;
} serve_cli_t;

/* --latency NAME=RE into its slot: 0, or 2 after the error. */
static int latency_arg(serve_cli_t *s, const char *v)
{
    static const char *const names[] = {"p50", "p99", "p999", "max"};
    for (size_t i = 0; i < 4; i++) {
        size_t n = strlen(names[i]);
        if (!strncmp(v, names[i], n) && v[n] == '=') {
            s->lat[i] = v + n + 1;
            return 0;
        }
    }
    return die_usage("serve: --latency '%s': give p50=REGEX, p99=REGEX, p999=REGEX or max=REGEX", v);
}

/* One option of serve's own at argv[*i]: 1 taken, 0 not serve's, 2 error. */
static int serve_option(serve_cli_t *s, int argc, char **argv, int *i)
{
    const char *v;
    if ((v = cli_take("--ready-timeout", argc, argv, i)))
        s->ready_timeout = v;
    else if ((v = cli_take("--ready", argc, argv, i)))
        s->ready = v;
    else if ((v = cli_take("--grace", argc, argv, i)))
        s->grace = v;
    else if ((v = cli_take("--metric", argc, argv, i)))
        s->metric = v;
    else if ((v = cli_take("--unit", argc, argv, i)))
        s->unit = v;
    else if ((v = cli_take("--latency-unit", argc, argv, i)))
        s->latency_unit = v;
    else if ((v = cli_take("--latency", argc, argv, i)))
        return latency_arg(s, v) ? 2 : 1;
    else if ((v = cli_take("--client", argc, argv, i)))
        s->client = v;
    else if (!strcmp(argv[*i], "--lower-is-better"))
        s->lower = true;
    else
        return 0;
    return 1;
}

/* The spec "serve:ready=...,cmd=QUOTED" into spec: 0, or 2 after the error. */
static int serve_spec(char **cmd, const serve_cli_t *s, char *spec, size_t len)
{
    char quoted[WL_STR_MAX + 1];
    if (launch_quote(cmd, quoted, sizeof quoted) || strlen(quoted) >= WL_STR_MAX)
        return die_usage("serve: the server's command is longer than %d characters once quoted; put it in a "
                         "script", WL_STR_MAX - 1);
    int n = snprintf(spec, len, "serve:ready=%s,ready_timeout=%s,grace=%s,metric=%s,unit=%s,better=%s,"
                     "p50=%s,p99=%s,p999=%s,latency_max=%s,latency_unit=%s,client=%s,cmd=%s",
                     s->ready, s->ready_timeout, s->grace, s->metric, s->unit, s->lower ? "lower" : "higher",
                     s->lat[0], s->lat[1], s->lat[2], s->lat[3], s->latency_unit, s->client, quoted);
    if (n < 0 || (size_t)n >= len)
        return die_usage("serve: the commands, --metric and --latency are too long together (%zu characters "
                         "at most)", len - 1);
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    serve_cli_t s = {"", "30", "5", "", "", "", "ms", {"", "", "", ""}, false};
    int dash = -1, n = 0;
    char **rargv = calloc((size_t)argc + 3, sizeof *rargv);
    if (!rargv)
        return die_io("out of memory");
    rargv[n++] = "run";
    for (int i = 1; i < argc && dash < 0; i++) {
        int took = 0;
        if (!strcmp(argv[i], "--"))
            dash = i;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return free(rargv), serve_usage(stdout), 0;
        else if (!strcmp(argv[i], "-w") || !strncmp(argv[i], "--workload", 10))
            return free(rargv), die_usage("serve: -w is not an option of serve (the workload is the server)");
        else if ((took = serve_option(&s, argc, argv, &i)) == 2)
            return free(rargv), 2;
        else if (!took)
            rargv[n++] = argv[i];
    }
    if (dash < 0 || dash + 1 >= argc)
        return free(rargv), die_usage("serve: no server: give its command after -- (`mallocbench serve --help`)");
    if (!*s.ready)
        return free(rargv), die_usage("serve: --ready is missing: tcp:PORT, tcp:auto or file:PATH says when the "
                                      "server is ready");
    if (!*s.client)
        return free(rargv), die_usage("serve: --client is missing: the load generator, as one quoted command");
    if ((*s.unit || s.lower) && !*s.metric)
        return free(rargv), die_usage("serve: --unit and --lower-is-better need --metric");
    static char spec[2048];
    if (serve_spec(argv + dash + 1, &s, spec, sizeof spec))
        return free(rargv), 2;
    rargv[n++] = "-w";
    rargv[n++] = spec;
    int rc = cmd_run(n, rargv);
    free(rargv);
    return rc;
}
