/* cmd_run.c - `mallocbench run` as a short sequence: resolve the spec (the
 * command line, the matrix, the registries, the outputs, the seed), prove
 * every configuration, open the outputs, execute the plan (schedule.c) with
 * a progress report after each sample, summarize.  One cleanup path. */
#include "calibrate.h"
#include "cli.h"
#include "counters.h"
#include "csv.h"
#include "judge.h"
#include "schedule.h"
#include "output.h"
#include "plan.h"
#include "profile.h"
#include "prepare.h"
#include "sample.h"
#include "quiet.h"
#include "remeasure.h"
#include "resolve.h"
#include "sidecar.h"
#include "sysinfo.h"
#include "tools.h"
#include "units.h"
#include "workload.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Static_assert(SPEC_MAX_EVENTS * 3 <= CSV_EXTRA_MAX, "three CSV columns per extra event");

/* ---- signals, resume ---------------------------------------------------------- */

/* SIGINT, SIGTERM and SIGHUP: stop after killing the running sample; the
 * sample cut short is not written, so --resume runs it again.  One the
 * caller left ignored stays ignored (docs/output.md, *Signals*): a background
 * job of a script starts with SIGINT ignored, nohup's with SIGHUP. */
static void on_signal(int sig)
{
    (void)sig;
    sample_interrupt();
}

static void install_signals(void)
{
    static const int stop[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction sa = {.sa_handler = on_signal}, old;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop / sizeof *stop; i++)
        if (sigaction(stop[i], NULL, &old) || old.sa_handler != SIG_IGN)
            sigaction(stop[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file size limit is a failed write, handled as one */
}

/* --resume: the seed the file's rows (t, read from path) were planned with
 * (every row has it). */
static int read_seed(const csv_table_t *t, const char *path, uint64_t *seed, bool *found)
{
    *found = false;
    int cs = csv_col(t, "plan_seed");
    if (cs < 0)
        return die_usage("cannot resume '%s': it has no plan_seed column (not a mallocbench run CSV)", path);
    if (t->nrows) {
        if (units_parse_u64(t->rows[0][cs], seed))
            return die_usage("cannot resume '%s': row 1 has plan_seed '%s', not a number", path, t->rows[0][cs]);
        *found = true;
    }
    return 0;
}

/* --resume: the (block, position) pairs the file already has for this plan, of
 * each block's last attempt (rm: read from the file here). */
static int load_done(const csv_table_t *t, const char *path, const char *matrix_id, remeasure_t *rm, bool *done,
                     unsigned max_blocks, size_t ncells, size_t *ndone)
{
    *ndone = 0;
    remeasure_resume(rm, t, max_blocks);
    int cm = csv_col(t, "matrix_id"), cb = csv_col(t, "block"), cp = csv_col(t, "position");
    int cv = csv_col(t, "schema_version");
    if (cm < 0 || cb < 0 || cp < 0 || cv < 0)
        return die_usage("cannot resume '%s': it has no matrix_id/block/position columns", path);
    int rc = 0;
    for (size_t i = 0; i < t->nrows && !rc; i++) {
        if (strcmp(t->rows[i][cv], CSV_SCHEMA_VERSION)) {
            rc = die_usage("cannot resume '%s': row %zu has schema_version %s, this program writes %s", path,
                           i + 1, t->rows[i][cv], CSV_SCHEMA_VERSION);
        } else if (strcmp(t->rows[i][cm], matrix_id)) {
            rc = die_usage("cannot resume '%s': it holds another plan (matrix_id %s, this command's %s with "
                           "the seed read back from it); use the same workloads, allocators and tunables",
                           path, t->rows[i][cm], matrix_id);
        } else {
            uint64_t b, p;
            if (units_parse_u64(t->rows[i][cb], &b) || units_parse_u64(t->rows[i][cp], &p))
                rc = die_usage("cannot resume '%s': row %zu has block '%s', position '%s'", path, i + 1,
                               t->rows[i][cb], t->rows[i][cp]);
            else if (b < max_blocks && p < ncells && !done[b * ncells + p] &&
                     remeasure_row_attempt(t, i) == rm->attempt[b]) {
                done[b * ncells + p] = true;
                (*ndone)++;
            }
        }
    }
    return rc;
}

/* --resume: what the file's rows already say of each cell, so that an open-ended
 * plan counts them towards its target (their throughput, by block) and the exit
 * status covers the whole file (a configuration with an ok row there has one). */
static void load_prev_samples(run_ctx_t *c)
{
    const csv_table_t *t = &c->prev;
    int cb = csv_col(t, "block"), cp = csv_col(t, "position"), cs = csv_col(t, "status"),
        ct = csv_col(t, "throughput");
    size_t n = c->r.ncells;
    size_t *order = calloc(n ? n : 1, sizeof *order);
    if (!order || cb < 0 || cp < 0 || cs < 0 || ct < 0) {
        free(order);
        return;
    }
    uint64_t shuffled = UINT64_MAX; /* the block whose order is in `order` (rows come block by block) */
    /* c->rm.attempt: each block's last attempt, read by load_done */
    for (size_t i = 0; i < t->nrows; i++) {
        uint64_t b, p;
        if (units_parse_u64(t->rows[i][cb], &b) || b >= c->blocks || units_parse_u64(t->rows[i][cp], &p) || p >= n)
            continue;
        if (remeasure_row_attempt(t, i) != c->rm.attempt[b])
            continue; /* an earlier attempt of a block measured again: its values are not the block's */
        if (b != shuffled)
            plan_block_order(remeasure_seed(c->sp.seed, c->rm.attempt[b]), (unsigned)(shuffled = b), n, order);
        size_t cell = order[p];
        c->cell_prev[cell]++;
        if (strcmp(t->rows[i][cs], "ok"))
            continue;
        c->cell_prev_ok[cell]++;
        double v = schedule_primary_prev(c, t, i); /* the primary figure, as one_sample stores it */
        if (!isnan(v) && c->ntput[cell] < c->blocks) {
            c->tblock[cell * c->blocks + c->ntput[cell]] = (unsigned)b;
            c->tput[cell * c->blocks + c->ntput[cell]++] = v;
        }
    }
    free(order);
}

static void fmt_duration(double s, char *buf, size_t len)
{
    if (s < 0 || isnan(s))
        snprintf(buf, len, "?");
    else if (s < 120)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 7200) {
        long whole = lround(s); /* rounded once: 479.6 s is 8m00s, never 7m60s */
        snprintf(buf, len, "%ldm%02lds", whole / 60, whole % 60);
    }
    else
        snprintf(buf, len, "%.1fh", s / 3600);
}

/* The output's lock goes last: closing the counters' perf events takes ~35 ms
 * each here, and a writer waiting on the lock must not find it free while this
 * process still runs. */
static void ctx_free(run_ctx_t *c)
{
    csv_table_free(&c->prev);
    cnt_set_free(c->cnt);
    free(c->order);
    free(c->done);
    free(c->tput);
    free(c->tblock);
    free(c->ntput);
    free(c->converged);
    free(c->stopped);
    free(c->warm_failed);
    free(c->cell_run);
    free(c->cell_ok);
    free(c->cell_prev);
    free(c->cell_prev_ok);
    free(c->cell_args);
    free(c->cell_scale);
    free(c->stop);
    free(c->lower);
    free(c->seq_base);
    remeasure_free(&c->rm);
    free(c->row);
    sample_free(c->s);
    out_close(&c->out);
    free(c);
}

/* The plan seed: given, read back from the file being resumed, derived
 * from the plan for shards (so every shard plans alike), else random. */
static int choose_seed(run_ctx_t *c)
{
    run_spec_t *sp = &c->sp;
    if (sp->seed_given)
        return 0;
    if (c->cli.resume && c->out.exists) {
        bool found;
        if (read_seed(&c->prev, c->out.csv, &sp->seed, &found))
            return 2;
        if (found)
            return 0;
    }
    if (c->cli.shard_n > 1) {
        sp->seed = resolve_cells_hash(&c->r) & 0xffffffffu;
        return 0;
    }
    uint32_t rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (uint32_t)getpid() ^ (uint32_t)time(NULL);
    sp->seed = rnd;
    return 0;
}

static void print_plan(run_ctx_t *c)
{
    const resolved_t *r = &c->r;
    for (unsigned b = 0; b < (unsigned)c->sp.reps; b++) {
        plan_block_order(c->sp.seed, b, r->ncells, c->order);
        for (size_t p = 0; p < r->ncells; p++) {
            if (!plan_in_shard(b, c->cli.shard_k, c->cli.shard_n))
                continue;
            size_t w = c->order[p] / r->ncfg, k = c->order[p] % r->ncfg;
            char params[1024];
            wl_format_args(&r->wl[w], ',', params, sizeof params);
            printf("# block %u position %zu: %s(%s) %s\n", b, p, r->wl[w].wl->name, params, r->cfg[k].label);
            prepare_print_command(stdout, &c->cli.o, &r->cfg[k], &r->wl[w]);
        }
    }
}

/* Column names of the extra events: total_E, region_E, note_E. */
static size_t extra_columns(const resolved_t *r, char names[][96], const char **ptrs)
{
    static const char *const pre[] = {"total_", "region_", "note_"};
    size_t n = 0;
    for (size_t i = 0; i < r->nextra; i++)
        for (int k = 0; k < 3; k++) {
            snprintf(names[n], 96, "%s%s", pre[k], r->extra[i]);
            ptrs[n] = names[n];
            n++;
        }
    return n;
}

/* Every configuration proves itself before anything is measured or any
 * file is touched; 0, or the exit code. */
static int preflight(run_ctx_t *c)
{
    char err[1024];
    for (size_t k = 0; k < c->r.ncfg; k++) {
        if (schedule_preflight(&c->cli.o, &c->r.cfg[k], c->st.versions[k], sizeof c->st.versions[k], err,
                             sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return sample_interrupted() ? 130 : 1;
        }
        if (!c->cli.quiet)
            fprintf(stderr, "%s: %-40s %s %s\n", prog, c->r.cfg[k].label, c->st.versions[k],
                    c->r.cfg[k].lib[0] ? c->r.cfg[k].lib : "(libc)");
    }
    return 0;
}

/* A sequential plan's schedule and the stops so far into the sidecar ("sequential"). */
static void record_stops(run_ctx_t *c)
{
    const resolved_t *r = &c->r;
    sidecar_look_t looks[SEQ_MAX_LOOKS];
    sidecar_stop_t *stops = calloc(r->ncells ? r->ncells : 1, sizeof *stops);
    char (*params)[1024] = calloc(r->nw ? r->nw : 1, sizeof *params);
    size_t n = 0;
    for (size_t k = 0; k < c->nlooks; k++)
        looks[k] = (sidecar_look_t){c->looks[k].blocks, c->looks[k].alpha};
    for (size_t w = 0; params && w < r->nw; w++)
        wl_format_args(&r->wl[w], ',', params[w], sizeof params[w]); /* as the rows have them */
    for (size_t i = 0; stops && params && i < r->ncells; i++) {
        const seq_stop_t *st = &c->stop[i];
        if (i % r->ncfg == 0 || st->why == SEQ_OPEN)
            continue;
        stops[n++] = (sidecar_stop_t){.workload = r->wl[i / r->ncfg].wl->name, .params = params[i / r->ncfg],
                                      .config = r->cfg[i % r->ncfg].label, .baseline = r->cfg[0].label,
                                      .why = seq_why_name(st->why), .look = st->look, .blocks = st->blocks,
                                      .n = st->n, .alpha = st->alpha, .estimate = st->est, .lo = st->lo,
                                      .hi = st->hi};
    }
    sidecar_seq_t s = {.figure = c->sp.figure, .floor = SEQ_FLOOR, .resolution = c->sp.resolution,
                       .budget_s = c->sp.budget_s, .cap = c->blocks, .looks = looks, .nlooks = c->nlooks,
                       .stops = stops, .nstops = n};
    int rc = stops && params ? sidecar_sequential(c->out.meta, &c->seq_base, &s) : -ENOMEM;
    if (rc && !c->seq_warned) {
        c->seq_warned = true;
        fprintf(stderr, "%s%s: warning: cannot record the stops in '%s': %s\n", c->tty ? "\n" : "", prog,
                c->out.meta, strerror(-rc));
    }
    free(stops);
    free(params);
}

/* Open the outputs and write the sidecar; 0 or the exit code. */
static int open_outputs(run_ctx_t *c, const quiet_t *quiet)
{
    int full_argc;
    char **full_argv;
    cli_whole(&full_argc, &full_argv);
    char names[CSV_EXTRA_MAX][96];
    const char *ptrs[CSV_EXTRA_MAX];
    char err[1024];
    size_t n = extra_columns(&c->r, names, ptrs);
    int rc = out_open(&c->out, ptrs, n, err, sizeof err);
    if (rc)
        return die_for(rc, "%s", err);
    /* --resume: the samples done, read again now that the lock is ours; a writer that held
     * it when this run first read the file may have added rows since, which would run twice */
    if (c->cli.resume && c->out.exists) {
        csv_table_free(&c->prev);
        memset(c->done, 0, (size_t)c->blocks * c->r.ncells * sizeof *c->done);
        c->ndone = 0;
        if ((rc = csv_read_torn(c->out.csv, &c->prev, err, sizeof err)))
            return die_for(rc, "cannot resume: %s", err);
        if (load_done(&c->prev, c->out.csv, c->x.matrix_id, &c->rm, c->done, c->blocks, c->r.ncells, &c->ndone))
            return 2;
        load_prev_samples(c);
    }
    for (size_t w = 0; w < c->r.nw; w++)
        c->st.limits[w] = NAN; /* measured block by block, beside the samples they bound */
    if (!c->out.sidecars)
        return 0;
    machine_calib_t cal; /* the machine's costs, cached per boot: what tells machines apart */
    calibrate_machine(&cal);
    char commit[160];
    sysinfo_git_commit(commit, sizeof commit);
    char *machine = sysinfo_machine_json(&cal);
    sidecar_machine_t m = {.commit = commit, .quiet_checked = quiet != NULL, .quiet = quiet && quiet->quiet,
                           .quiet_why = quiet ? quiet->why : "", .machine = machine, .figure = c->sp.figure};
    rc = machine ? sidecar_write(c->out.meta, c->cli.resume && c->out.exists, c->run_id, full_argc, full_argv,
                                 c->r.cfg, c->r.ncfg, c->st.versions, &c->cli.o, c->r.wl,
                                 c->sp.limit ? c->st.limits : NULL, c->r.nw, &m)
                 : -ENOMEM;
    free(machine);
    if (rc)
        fprintf(stderr, "%s: warning: cannot write '%s': %s\n", prog, c->out.meta, strerror(-rc));
    else if (schedule_sequential(c)) { /* the schedule planned; the stops as they come */
        c->stops_changed = record_stops;
        record_stops(c);
    }
    return 0;
}

/* The progress callback: one line per sample, rewritten on a terminal. */
/* The time the rest of the plan should take, from the mean time of the samples
 * run so far: a fixed plan's remaining samples; an open-ended one's at most
 * (its --max-blocks, or its --budget, whichever ends first: "<= 4m"). */
static void run_eta(const run_ctx_t *c, char *out, size_t len)
{
    snprintf(out, len, "?");
    if (!c->nrun)
        return;
    double per = c->spent / (double)c->nrun;
    if (schedule_target(&c->sp) <= 0) {
        fmt_duration(per * (double)(c->planned > c->nrun ? c->planned - c->nrun : 0), out, len);
        return;
    }
    size_t most = (size_t)c->blocks * c->r.ncells;
    double by_blocks = per * (double)(most > c->nrun ? most - c->nrun : 0);
    double by_budget = c->sp.budget_s - (mono_now() - c->t_start);
    char d[32];
    fmt_duration(by_blocks < by_budget ? by_blocks : (by_budget > 0 ? by_budget : 0), d, sizeof d);
    snprintf(out, len, "<= %s", d);
}

static void report_progress(const run_ctx_t *c, unsigned b, size_t w, size_t k)
{
    bool tty = c->tty;
    const run_sample_t *s = c->s;
    char figure[160];
    /* the time beside the figure is the one it is of: the measured region's */
    double t = s->res.present & WLR_BIT(WLR_region_s) ? s->res.region_s : s->wall_s;
    if (s->status == RUN_OK) {
        /* never an exponent: 777k ops/s, 1.2 GB/s (bytes as the tables print them) */
        static const char *const pre[] = {"", "k", "M", "G", "T"};
        double x = s->res.throughput;
        int k = 0;
        while (k < 4 && fabs(x) >= 999.5) {
            x /= 1e3;
            k++;
        }
        snprintf(figure, sizeof figure, fabs(x) >= 99.95 || x == 0 ? "%.0f %s%s, %s faults, %.2fs"
                 : fabs(x) >= 0.01 ? "%.3g %s%s, %s faults, %.2fs" : "%.2e %s%s, %s faults, %.2fs", x, pre[k],
                 s->res.unit, c->row->field[COL_region_minor_faults], t);
    }
    else
        snprintf(figure, sizeof figure, "%s: %s", sample_status_name(s->status), s->message);
    size_t of = schedule_target(&c->sp) > 0 ? c->nrun : c->planned;
    char eta[48];
    run_eta(c, eta, sizeof eta);
    if (tty) {
        fprintf(stderr, "\r\033[K[%zu/%zu] block %u, ETA %s | %s %s: %s", c->nrun, of, b, eta,
                c->r.wl[w].wl->name, c->r.cfg[k].label, figure);
        if (s->status != RUN_OK)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "[%zu/%zu] block %u, ETA %s: %s %s: %s\n", c->nrun, of, b, eta, c->r.wl[w].wl->name,
                c->r.cfg[k].label, figure);
    }
}

/* How a sequential plan ended, in one line: the comparisons settled, at which
 * blocks, the others' stops, the blocks run and the time taken. */
static void sequential_summary(const run_ctx_t *c, unsigned b)
{
    const resolved_t *r = &c->r;
    size_t n = 0, settled = 0, forced[SEQ_NO_RATIO + 1] = {0};
    char at[256] = "", took[32], rest[256] = "";
    for (unsigned bl = 1; bl <= c->blocks; bl++) { /* a planned look's blocks, or the budget's */
        size_t m = 0;
        for (size_t i = 0; i < r->ncells; i++)
            m += i % r->ncfg && c->stop[i].why >= SEQ_IMPROVED && c->stop[i].why <= SEQ_RESOLUTION &&
                 c->stop[i].blocks == bl;
        if (m)
            snprintf(at + strlen(at), sizeof at - strlen(at), "%s%zu at block %u", at[0] ? ", " : "", m, bl);
        settled += m;
    }
    for (size_t i = 0; i < r->ncells; i++)
        if (i % r->ncfg) {
            n++;
            forced[c->stop[i].why >= SEQ_CAP ? c->stop[i].why : SEQ_OPEN]++;
        }
    for (int w = SEQ_CAP; w <= SEQ_NO_RATIO; w++)
        if (forced[w])
            snprintf(rest + strlen(rest), sizeof rest - strlen(rest), "; %zu %s", forced[w],
                     w == SEQ_CAP ? "stopped at the cap" : w == SEQ_BUDGET ? "stopped by the budget"
                     : w == SEQ_NO_RATIO ? "with no ratio" : "interrupted");
    fmt_duration(mono_now() - c->t_start, took, sizeof took);
    fprintf(stderr, "%s: sequential: %zu of %zu comparison%s settled%s%s%s%s; %u blocks in %s\n", prog, settled, n,
            n == 1 ? "" : "s", at[0] ? " (" : "", at, at[0] ? ")" : "", rest, b, took);
}

/* How an open-ended plan ended: each cell's half-width against the target
 * (--resolution: the paired ratio's, the resolution it reached). */
static void adaptive_summary(const run_ctx_t *c, unsigned b)
{
    const resolved_t *r = &c->r;
    if (schedule_sequential(c)) {
        sequential_summary(c, b);
        return;
    }
    size_t bad = 0, differences = 0;
    double target = schedule_target(&c->sp);
    bool paired = c->sp.resolution > 0 && r->ncfg > 1;
    for (size_t i = 0; i < r->ncells; i++) {
        double ci = schedule_cell_halfwidth(c, i);
        if (paired && i % r->ncfg == 0)
            continue;
        if (paired && schedule_no_ratio(c, i, b)) { /* a difference, as compare reports it */
            fprintf(stderr, "%s: resolution %s %s vs %s: no ratio after %zu samples (a figure <= 0, or no ok "
                    "baseline: compare gives the difference)\n", prog, r->wl[i / r->ncfg].wl->name,
                    r->cfg[i % r->ncfg].label, r->cfg[0].label, c->ntput[i]);
            differences++;
            continue;
        }
        if (paired)
            fprintf(stderr, "%s: resolution %s %s vs %s: +-%.2f%% after %zu samples%s\n", prog,
                    r->wl[i / r->ncfg].wl->name, r->cfg[i % r->ncfg].label, r->cfg[0].label,
                    isinf(ci) ? 100.0 : ci * 100, c->ntput[i], ci <= target ? "" : " (not reached)");
        if (ci <= target)
            continue;
        bad++;
        if (!paired)
            fprintf(stderr, "%s: not converged: %s %s: +-%.2f%% after %zu samples (target +-%.2f%%)\n", prog,
                    r->wl[i / r->ncfg].wl->name, r->cfg[i % r->ncfg].label, isinf(ci) ? 100.0 : ci * 100,
                    c->ntput[i], target * 100);
    }
    char took[32];
    fmt_duration(mono_now() - c->t_start, took, sizeof took);
    size_t n = (paired ? r->ncells - r->nw : r->ncells) - differences;
    fprintf(stderr, "%s: %s: %u blocks, %zu of %zu %s converged to +-%.2f%%%s in %s\n", prog,
            paired ? "resolution" : "adaptive", b, n - bad, n, paired ? "paired comparisons" : "configurations",
            target * 100, differences ? " (the others are differences)" : "", took);
}

/* Buffers sized by the plan; 0 or -ENOMEM. */
static int ctx_alloc(run_ctx_t *c)
{
    size_t cells = c->r.ncells ? c->r.ncells : 1;
    c->order = calloc(cells, sizeof *c->order);
    c->done = calloc((size_t)c->blocks * cells, sizeof *c->done);
    c->tput = calloc((size_t)c->blocks * cells, sizeof *c->tput);
    c->tblock = calloc((size_t)c->blocks * cells, sizeof *c->tblock);
    c->ntput = calloc(cells, sizeof *c->ntput);
    c->converged = calloc(cells, sizeof *c->converged);
    c->stopped = calloc(cells, sizeof *c->stopped);
    c->warm_failed = calloc(cells, sizeof *c->warm_failed);
    c->cell_run = calloc(cells, sizeof *c->cell_run);
    c->cell_ok = calloc(cells, sizeof *c->cell_ok);
    c->cell_prev = calloc(cells, sizeof *c->cell_prev);
    c->cell_prev_ok = calloc(cells, sizeof *c->cell_prev_ok);
    c->cell_args = calloc(cells, sizeof *c->cell_args);
    c->cell_scale = calloc(cells, sizeof *c->cell_scale);
    c->row = malloc(sizeof *c->row);
    c->s = calloc(1, sizeof *c->s);
    if (!c->order || !c->done || !c->tput || !c->tblock || !c->ntput || !c->converged || !c->stopped ||
        !c->warm_failed || !c->cell_run || !c->cell_ok || !c->cell_prev || !c->cell_prev_ok || !c->cell_args || !c->cell_scale || !c->row || !c->s)
        return -ENOMEM;
    remeasure_plan_t rp = {c->tput, c->tblock, c->ntput, c->done, c->converged, c->stopped, &c->planned,
                           c->r.ncells, c->blocks, c->cli.quiet};
    if (remeasure_alloc(&c->rm, &rp, c->cli.shard_k, c->cli.shard_n))
        return -ENOMEM;
    c->stop = calloc(cells, sizeof *c->stop);     /* SEQ_OPEN: every comparison runs */
    c->lower = calloc(c->r.nw ? c->r.nw : 1, sizeof *c->lower);
    if (!c->stop || !c->lower)
        return -ENOMEM;
    if (schedule_sequential(c))
        c->nlooks = seq_looks(c->blocks, c->looks);
    for (size_t i = 0; i < c->r.ncells; i++) {
        c->cell_args[i] = c->r.wl[i / c->r.ncfg];
        c->cell_scale[i] = 0; /* set by load_scales or calibrate_cells */
    }
    return 0;
}

/* ---- the sequence --------------------------------------------------------------- */

/* The plan's identity, the samples a resumed file has, a fresh run id:
 * 0 or the exit code. */
static int run_identify(run_ctx_t *c)
{
    if (c->cli.shard_n > 1)
        snprintf(c->shard_txt, sizeof c->shard_txt, "%u/%u", c->cli.shard_k, c->cli.shard_n);
    c->x.shard = c->shard_txt;
    c->x.seed = c->sp.seed;
    resolve_plan_id(&c->r, c->sp.seed, c->x.matrix_id, sizeof c->x.matrix_id);
    if (c->cli.resume && c->out.exists &&
        load_done(&c->prev, c->out.csv, c->x.matrix_id, &c->rm, c->done, c->blocks, c->r.ncells, &c->ndone))
        return 2;
    time_t now = time(NULL);
    unsigned short rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned short)getpid();
    strftime(c->run_id, sizeof c->run_id, "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(c->run_id + strlen(c->run_id), sizeof c->run_id - strlen(c->run_id), "-%04x", rnd);
    c->x.run_id = c->run_id;
    return 0;
}

/* --profile's folder: OUTPUT.profile beside the CSV. */
static void profile_dir(const run_ctx_t *c, char *dir, size_t n)
{
    size_t len = strlen(c->out.csv);
    if (len > 4 && !strcmp(c->out.csv + len - 4, ".csv"))
        len -= 4;
    snprintf(dir, n, "%.*s.profile", (int)len, c->out.csv);
}

/* Before any work: an existing OUTPUT.profile is another run's or the user's
 * (its perf.data, logs and graphs would be replaced): refused unless --force or
 * --resume, as the CSV is.  -1 to go on, else the exit code. */
static int profile_dir_check(const run_ctx_t *c)
{
    char dir[PATH_MAX];
    struct stat st;
    profile_dir(c, dir, sizeof dir);
    if (lstat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return die_usage("--profile: '%s' exists and is not a folder", dir);
    if (!c->cli.force && !c->cli.resume)
        return die_usage("--profile: '%s' exists: add --force to replace the profiles in it", dir);
    return -1;
}

/* Step 1: the spec from the command line and the matrix, checked against
 * the registries; the outputs checked (not touched); the seed, the plan's
 * buffers and identity.  -1 to go on, else the exit code (0 after --help
 * and --print-commands). */
static int run_resolve(run_ctx_t *c, int argc, char **argv)
{
    run_spec_t *sp = &c->sp;
    char err[1024];
    int rc = resolve_args(argc, argv, sp, &c->cli);
    if (rc >= 0)
        return rc;
    if (resolve_spec(sp, &c->r) || tools_find(&c->cli.o, c->worker, c->probe, sizeof c->worker))
        return 2;
    for (size_t w = 0; c->cli.profile && w < c->r.nw; w++)
        if (c->r.wl[w].wl->launcher && !strcmp(c->r.wl[w].wl->launcher, "server"))
            return die_usage("--profile does not run %s: a server needs its client beside it (record the "
                             "server with `perf record -p PID` while serve runs)", c->r.wl[w].wl->name);
    if (!c->cli.print_only &&
        out_check(&c->out, sp->output, c->cli.sidecars, c->cli.resume, c->cli.force, err, sizeof err)) {
        spec_at(sp, sp->output_line);
        return die_spec("%s", err);
    }
    if (!c->cli.print_only && c->cli.profile && (rc = profile_dir_check(c)) >= 0)
        return rc;
    /* the rows a resumed file already has: its seed, its samples, its work scales */
    if (c->cli.resume && c->out.exists && (rc = csv_read_torn(c->out.csv, &c->prev, err, sizeof err)))
        return die_for(rc, "cannot resume: %s", err);
    if (choose_seed(c))
        return 2;
    c->blocks = schedule_target(sp) > 0 ? sp->max_blocks : (unsigned)sp->reps;
    if (c->cli.shard_n > c->blocks)
        return die_usage("--shard %u/%u: the plan has %u blocks and a shard keeps whole blocks, so %u of %u "
                         "shards would run nothing (give -r %u or more, or fewer shards)", c->cli.shard_k,
                         c->cli.shard_n, c->blocks, c->cli.shard_n - c->blocks, c->cli.shard_n, c->cli.shard_n);
    if (ctx_alloc(c))
        return die_io("out of memory");
    if (cnt_set_new(&c->cnt, c->r.extra, c->r.nextra, err, sizeof err)) {
        spec_at(sp, sp->events_line);
        return die_spec("%s", err);
    }
    if (c->cli.print_only) {
        print_plan(c);
        return 0;
    }
    return run_identify(c) ? 2 : -1;
}

/* Step 2: every configuration proves itself before any file is touched. */
static int run_prove(run_ctx_t *c)
{
    install_signals();
    int rc = preflight(c);
    return rc ? rc : -1;
}

/* Step 3: the outputs opened, the sidecar written, the plan announced. */
static int run_open(run_ctx_t *c)
{
    const run_spec_t *sp = &c->sp;
    /* after the proof (its errors come first), before any output is touched */
    quiet_t q;
    quiet_check(&q);
    if (!q.quiet && c->cli.require_quiet)
        return die_io("the machine is not quiet: %s (--require-quiet)", q.why);
    if (!q.quiet && !c->cli.quiet)
        fprintf(stderr, "%s: warning: the machine is not quiet: %s; figures will be noisier "
                "(--require-quiet refuses to start)\n", prog, q.why);
    int rc = open_outputs(c, &q);
    if (rc)
        return rc;
    c->tty = isatty(2) && !c->cli.quiet;
    sysinfo_hostname(c->host, sizeof c->host);
    c->x.host = c->host;
    if (c->cli.quiet)
        return -1;
    char nblocks[192];
    if (schedule_sequential(c)) {
        char at[64] = "";
        for (size_t k = 0; k < c->nlooks; k++)
            snprintf(at + strlen(at), sizeof at - strlen(at), "%s%u", k ? ", " : "", c->looks[k].blocks);
        snprintf(nblocks, sizeof nblocks, "up to %u blocks (sequential: looks at blocks %s, each comparison until "
                 "settled or +-%.3g%%%s)", c->blocks, at, sp->resolution * 100,
                 sp->default_plan ? ", the default without -r" : "");
    } else if (schedule_target(sp) > 0)
        snprintf(nblocks, sizeof nblocks, "%llu..%u blocks (%s +-%.3g%%%s)",
                 (unsigned long long)(sp->reps > VERDICT_MIN_BLOCKS ? sp->reps : VERDICT_MIN_BLOCKS) < sp->max_blocks
                     ? (unsigned long long)(sp->reps > VERDICT_MIN_BLOCKS ? sp->reps : VERDICT_MIN_BLOCKS)
                     : sp->max_blocks, sp->max_blocks,
                 sp->resolution > 0 ? "to a paired resolution of" : "adaptive,", schedule_target(sp) * 100,
                 sp->default_plan ? ", the default without -r" : "");
    else
        snprintf(nblocks, sizeof nblocks, "%llu blocks", (unsigned long long)sp->reps);
    fprintf(stderr, "%s: plan %s, seed %llu: %zu configurations x %s%s%s%s -> %s\n", prog,
            c->x.matrix_id, (unsigned long long)sp->seed, c->r.ncells, nblocks, c->cli.shard_n > 1 ? ", shard " : "",
            c->shard_txt, c->ndone ? ", resuming" : "", c->out.csv);
    return -1;
}

/* Step 4b (--profile): one unmeasured sample of each cell under perf
 * record, its flame graph beside the CSV in OUTPUT.profile/. */
static int run_profiles(run_ctx_t *c, int rc)
{
    if (rc || !c->cli.profile || sample_interrupted())
        return rc;
    char dir[PATH_MAX];
    profile_dir(c, dir, sizeof dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return die_io("cannot create '%s': %s", dir, strerror(errno));
    for (size_t w = 0; w < c->r.nw && !sample_interrupted(); w++)
        for (size_t k = 0; k < c->r.ncfg && !sample_interrupted(); k++) {
            char name[512], prefix[PATH_MAX + 600], summary[1024];
            snprintf(name, sizeof name, "%s-%s", c->r.wl[w].wl->name, c->r.cfg[k].label);
            for (char *p = name; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._=-", *p))
                    *p = '_';
            snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
            int prc = profile_cell(&c->cli.o, &c->r.cfg[k], &c->r.wl[w], prefix, summary, sizeof summary);
            fprintf(stderr, "%s: profile %s: %s%s%s%s\n", prog, name, summary, prc ? "" : " -> ",
                    prc ? "" : prefix, prc ? "" : ".svg");
            if (prc)
                rc = 1;
        }
    return rc;
}

/* Exit 4 (unless --keep-going) when a configuration had samples in this
 * invocation and none of them was ok, each named in one line. */
static int run_failed_cells(const run_ctx_t *c)
{
    size_t nfailed = 0;
    for (size_t i = 0; i < c->r.ncells; i++) {
        /* the whole file: a resumed configuration counts the rows it already had */
        if (!c->cell_run[i] || c->cell_ok[i] || c->cell_prev_ok[i])
            continue;
        nfailed++;
        fprintf(stderr, "%s: no ok sample: %s on %s (%zu run)%s\n", prog, c->r.cfg[i % c->r.ncfg].label,
                c->r.wl[i / c->r.ncfg].wl->name, c->cell_run[i] + c->cell_prev[i],
                c->stopped[i] ? ", stopped after its warm-up" : "");
    }
    if (!nfailed || c->cli.keep_going)
        return 0;
    fprintf(stderr, "%s: exit %d: %zu configuration%s without an ok sample (--keep-going exits 0)\n", prog,
            EXIT_NO_OK_SAMPLE, nfailed, nfailed == 1 ? "" : "s");
    return EXIT_NO_OK_SAMPLE;
}

/* Step 5: what was written, how adaptive blocks ended, how to continue an
 * interrupted run; the exit code. */
static int run_summarize(run_ctx_t *c, int rc, unsigned blocks)
{
    if (c->tty)
        fputc('\n', stderr);
    if (sample_interrupted()) /* the open comparisons' stops, at the blocks done */
        schedule_seq_interrupted(c);
    else if (c->stops_changed)
        c->stops_changed(c); /* and once more at the end */
    if (!rc && schedule_target(&c->sp) > 0 && !sample_interrupted() && !c->cli.quiet)
        adaptive_summary(c, blocks);
    if (!c->cli.quiet || sample_interrupted() || rc)
        fprintf(stderr, "%s: %zu samples (%zu ok, %zu not ok) written to %s%s%s\n", prog, c->nrun, c->nok,
                c->nbad, c->out.csv, sample_interrupted() ? "; interrupted: continue with the same command and "
                "--resume" : "", sample_interrupted() && c->out.chosen ? " -o <that file>" : "");
    if (sample_interrupted())
        return 130;
    if (!rc && c->sp.reps_given && c->sp.reps < VERDICT_MIN_BLOCKS && schedule_target(&c->sp) <= 0 &&
        c->r.ncfg > 1 && !c->cli.quiet)
        fprintf(stderr, "%s: note: -r %llu: %llu blocks give no verdict (the paired test needs %d pairs to flag a "
                "change at 95%%); leave out -r for a run sized for one (--resolution 2%%, at most 10 minutes), "
                "or give -r %d or more\n", prog, (unsigned long long)c->sp.reps, (unsigned long long)c->sp.reps,
                VERDICT_MIN_BLOCKS, VERDICT_MIN_BLOCKS);
    return rc ? rc : run_failed_cells(c);
}

int cmd_run(int argc, char **argv)
{
    run_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        return die_io("out of memory");
    c->out.w.fd = -1;
    unsigned blocks = 0;
    int rc = run_resolve(c, argc, argv);
    if (rc < 0)
        rc = run_prove(c);
    if (rc < 0)
        rc = run_open(c);
    if (rc < 0) { /* step 4: the plan, a progress line after each sample (blocks is known after it) */
        rc = run_profiles(c, schedule_plan(c, c->cli.quiet ? NULL : report_progress, &blocks));
        rc = run_summarize(c, rc, blocks);
    }
    ctx_free(c);
    return rc;
}
