/* resolve.c - from `run`'s command line, and the matrix it names, to what
 * one invocation runs (contract: resolve.h): the options through the table
 * of options.c, then workloads (sweeps expanded), allocator configurations
 * and events checked against the registries before anything runs. */
#include "error.h"
#include "spec.h"
#include "configs.h"
#include "matrix.h"
#include "options.h"
#include "plan.h"
#include "resolve.h"
#include "prepare.h"
#include "sample.h"
#include "units.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- workloads and sweeps ------------------------------------------------------ */

/* Does the workload have the parameter a sweep "NAME=..." names? */
static bool wl_has_param(const wl_t *wl, const char *sweep)
{
    size_t n = strcspn(sweep, "=");
    for (size_t i = 0; i < wl->nparams; i++)
        if (strlen(wl->params[i].name) == n && !strncmp(wl->params[i].name, sweep, n))
            return true;
    return false;
}

/* --sweep NAME=LO..HI (doubling) or NAME=A/B/C: the workload in once per
 * value of its parameter NAME, into out (room for `room`), *nout of them. */
static int expand_sweep(const char *sweep, const wl_args_t *in, wl_args_t *out, size_t room, size_t *nout)
{
    const char *eq = strchr(sweep, '=');
    if (!eq || eq == sweep || !eq[1])
        return die_spec("bad --sweep '%s': expected NAME=LO..HI or NAME=A/B/C", sweep);
    char name[64], values[SPEC_MAX_WORKLOADS][64];
    size_t nv = 0;
    snprintf(name, sizeof name, "%.*s", (int)(eq - sweep), sweep);
    const char *dots = strstr(eq + 1, "..");
    if (dots) {
        char lo_s[64];
        uint64_t lo, hi;
        snprintf(lo_s, sizeof lo_s, "%.*s", (int)(dots - eq - 1), eq + 1);
        if (units_parse_size(lo_s, &lo) || units_parse_size(dots + 2, &hi) || lo == 0 || lo > hi)
            return die_spec("bad --sweep range '%s' (expected e.g. size=64K..256M, doubling)", eq + 1);
        /* a size parameter reads 64K, a count 1024: as each is written */
        bool size = false;
        for (size_t i = 0; i < in->wl->nparams; i++)
            if (!strcmp(in->wl->params[i].name, name))
                size |= in->wl->params[i].type == WLP_SIZE || in->wl->params[i].type == WLP_SIZES;
        for (uint64_t v = lo; v <= hi && nv < SPEC_MAX_WORKLOADS; v *= 2) {
            if (size)
                units_format_size(v, values[nv++], sizeof values[0]);
            else
                snprintf(values[nv++], sizeof values[0], "%llu", (unsigned long long)v);
            if (v > UINT64_MAX / 2)
                break;
        }
    } else {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", eq + 1);
        char *save = NULL;
        for (char *v = strtok_r(buf, "/", &save); v && nv < SPEC_MAX_WORKLOADS; v = strtok_r(NULL, "/", &save))
            snprintf(values[nv++], sizeof values[0], "%s", v);
    }
    if (!wl_has_param(in->wl, sweep))
        return die_spec("--sweep %s: no workload given has a parameter '%s'", sweep, name);
    for (*nout = 0; *nout < nv; (*nout)++) {
        char kv[160], err[512];
        if (*nout >= room)
            return die_spec("--sweep makes too many workloads (at most %d)", SPEC_MAX_WORKLOADS);
        out[*nout] = *in;
        snprintf(kv, sizeof kv, "%s=%s", name, values[*nout]);
        if (wl_set(&out[*nout], kv, err, sizeof err))
            return die_spec("--sweep: %s", err);
    }
    return 0;
}

/* ---- the spec against the registries --------------------------------------------- */

/* Workloads, allocators, tunables and events of a spec, checked against the
 * registries before anything runs. */
int resolve_spec(const run_spec_t *sp, resolved_t *r)
{
    char err[1024];
    bool swept = false;
    r->nw = 0;
    for (size_t i = 0; i < sp->nw; i++) {
        wl_args_t *at = &r->wl[r->nw];
        size_t n = 1;
        spec_at(sp, sp->wline[i]);
        if (r->nw >= SPEC_MAX_WORKLOADS)
            return die_spec("too many workloads (at most %d)", SPEC_MAX_WORKLOADS);
        if (wl_parse_spec(sp->workload[i], at, err, sizeof err) ||
            prepare_check(at, err, sizeof err))
            return die_spec("%s", err);
        bool own = sp->wsweep[i][0];
        const char *sweep = own ? sp->wsweep[i] : sp->sweep;
        /* the run-wide --sweep applies to the workloads that have its parameter */
        if (sweep[0] && (own || wl_has_param(at->wl, sweep))) {
            wl_args_t in = *at;
            spec_at(sp, own ? sp->wsweep_line[i] : sp->sweep_line);
            if (expand_sweep(sweep, &in, at, SPEC_MAX_WORKLOADS - r->nw, &n))
                return 2;
            swept = true;
        }
        r->nw += n;
    }
    spec_at(sp, sp->sweep_line);
    if (sp->sweep[0] && !swept)
        return die_spec("--sweep %s: no workload given has a parameter '%.*s'", sp->sweep,
                        (int)strcspn(sp->sweep, "="), sp->sweep);
    if (configs_resolve(sp, r->cfg, &r->ncfg))
        return 2;
    for (size_t k = 0; k < r->ncfg; k++)
        if (r->cfg[k].huge == HUGE_NEVER && !(sp->tree_interval_s > 0))
            return die_spec("%s: huge=never is proven at each reading of the process tree, and "
                            "--tree-interval 0 reads none", r->cfg[k].label);
    r->ncells = r->nw * r->ncfg;
    memset(&r->system, 0, sizeof r->system);
    r->system.alloc = alloc_system();
    snprintf(r->system.label, sizeof r->system.label, "%s", r->system.alloc->name);
    r->nextra = 0;
    spec_at(sp, sp->events_line);
    snprintf(r->evbuf, sizeof r->evbuf, "%s", sp->events);
    char *save = NULL;
    for (char *e = strtok_r(r->evbuf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (r->nextra >= SPEC_MAX_EVENTS)
            return die_spec("too many events (at most %d)", SPEC_MAX_EVENTS);
        r->extra[r->nextra++] = e;
    }
    spec_at(sp, 0);
    return 0;
}

/* Hash of the plan's cells in order (workloads with every parameter, then
 * configuration labels). */
uint64_t resolve_cells_hash(const resolved_t *r)
{
    uint64_t h = PLAN_HASH_INIT;
    char buf[2048];
    for (size_t w = 0; w < r->nw; w++) {
        wl_format_args(&r->wl[w], ',', buf, sizeof buf);
        h = plan_hash(plan_hash(h, r->wl[w].wl->name), buf);
    }
    for (size_t k = 0; k < r->ncfg; k++)
        h = plan_hash(h, r->cfg[k].label);
    return h;
}

/* The plan's identity: its cells in order and its seed (not the number of
 * blocks, so a resumed or adaptive run keeps it; not the shard). */
void resolve_plan_id(const resolved_t *r, uint64_t seed, char *out, size_t len)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    snprintf(out, len, "%016llx", (unsigned long long)plan_hash(resolve_cells_hash(r), buf));
}

/* --pin: every CPU asked for must be one this process may run on; name is
 * the option as the user gave it. */
static int check_pin(const char *name, const cpu_set_t *want)
{
    cpu_set_t have;
    if (sched_getaffinity(0, sizeof have, &have))
        return 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, want) || CPU_ISSET(c, &have))
            continue;
        char list[256];
        size_t off = 0;
        for (int a = 0; a < CPU_SETSIZE && off < sizeof list; a++) {
            if (!CPU_ISSET(a, &have) || (a && CPU_ISSET(a - 1, &have)))
                continue;
            int b = a;
            while (b + 1 < CPU_SETSIZE && CPU_ISSET(b + 1, &have))
                b++;
            off += (size_t)snprintf(list + off, sizeof list - off, b > a ? "%s%d-%d" : "%s%d", off ? "," : "",
                                    a, b);
        }
        return die_spec("%s: CPU %d is not available here (CPUs: %s)", name, c, list);
    }
    return 0;
}

/* ---- the command line -------------------------------------------------------- */

/* getopt_long refused argv[optind - 1]: c is ':' (no value) or '?'. */
static int bad_option(int c, char **argv)
{
    char opt[3] = {'-', (char)optopt, '\0'};
    const char *what = !strncmp(argv[optind - 1], "--", 2) || !optopt ? argv[optind - 1] : opt;
    if (c == ':')
        return die_usage("run: option '%s' needs a value (see mallocbench run --help)", what);
    return die_usage("run: unknown option '%s' (see mallocbench run --help)", what);
}

/* The harness's own threads off the children's CPUs, when it may run on
 * others (its children are pinned explicitly, so they do not inherit it). */
static void harness_off(const cpu_set_t *pinned)
{
    cpu_set_t mine, rest;
    if (sched_getaffinity(0, sizeof mine, &mine))
        return;
    CPU_ZERO(&rest);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &mine) && !CPU_ISSET(cpu, pinned))
            CPU_SET(cpu, &rest);
    if (CPU_COUNT(&rest) > 0)
        sched_setaffinity(0, sizeof rest, &rest);
}

/* A run given no size (no -r, --adaptive or --resolution, on the command line
 * or in its matrix) is sized for a verdict: the existing --resolution machinery
 * at 2%, within 10 minutes and 30 blocks unless --budget or --max-blocks say
 * otherwise, and at least 6 blocks, the fewest pairs the exact signed-rank test
 * can flag a change from.  A shard runs a fixed plan (6 blocks): an adaptive
 * one is not known in advance. */
static void default_plan(run_spec_t *sp, const run_cli_t *cli)
{
    if (!sp->reps_given)
        sp->reps = VERDICT_MIN_BLOCKS; /* also the fewest blocks of --adaptive, --resolution */
    if (sp->reps_given || sp->adaptive > 0 || sp->resolution > 0 || cli->shard_n > 1)
        return;
    sp->default_plan = true;
    sp->resolution = DEFAULT_RESOLUTION;
    if (!sp->budget_given)
        sp->budget_s = DEFAULT_BUDGET_S;
    if (!sp->max_blocks_given)
        sp->max_blocks = DEFAULT_MAX_BLOCKS;
}

/* What no single option can check: combinations, and the CPUs of --pin
 * against the ones this process may use.  -1 to go on, else the exit code. */
static int check_args(run_spec_t *sp, run_cli_t *cli)
{
    if ((sp->adaptive > 0 || sp->resolution > 0) && cli->shard_n > 1)
        return die_usage("--adaptive/--resolution and --shard do not mix: such a plan is not known in advance");
    if (sp->adaptive > 0 && sp->resolution > 0)
        return die_usage("--adaptive and --resolution do not mix: one target, unpaired or paired");
    cli->o.timeout_s = sp->timeout_s;
    cli->o.sample_interval_s = sp->sample_interval_s;
    cli->o.tree_interval_s = sp->tree_interval_s;
    cli->o.worker = cli->worker[0] ? cli->worker : NULL;
    cli->o.probe = cli->probe[0] ? cli->probe : NULL;
    if (sp->pin[0]) {
        spec_at(sp, sp->pin_line);
        if (opt_parse_cpus(sp->pin, &cli->o.cpus) || check_pin(sp->pin_line ? "pin" : "--pin", &cli->o.cpus))
            return 2; /* the form was checked with the option: only the CPUs can fail here */
        cli->o.pin = true;
        harness_off(&cli->o.cpus);
    }
    cli->o.pin_threads = sp->pin_threads;
    spec_at(sp, 0);
    return -1;
}

int resolve_args(int argc, char **argv, run_spec_t *sp, run_cli_t *cli)
{
    struct option longopts[OPT_GETOPT_MAX];
    char shortopts[64], err[1024];
    int c, rc;
    opt_getopt_tables(longopts, shortopts, sizeof shortopts);
    opt_defaults(sp, cli);
    /* the matrix first, wherever -m is: the other options override it */
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
        if (opt_is_matrix(c) && (rc = matrix_load(optarg, sp, err, sizeof err)))
            return die_for(rc, "%s", err);
    optind = 1;
    while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
        if (c == '?' || c == ':')
            return bad_option(c, argv);
        if (opt_set_arg(c, optarg, sp, cli, err, sizeof err))
            return die_usage("%s", err);
        if (cli->help) {
            opt_usage(stdout);
            return 0;
        }
    }
    if (optind < argc)
        return die_usage("run: unexpected argument '%s' (see mallocbench run --help)", argv[optind]);
    default_plan(sp, cli);
    return check_args(sp, cli);
}
