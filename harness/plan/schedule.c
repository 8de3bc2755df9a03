/* schedule.c - running the plan of one invocation (contract: schedule.h):
 * one fresh child per sample through sample.c, judged by judge.c, its RSS
 * lines and row written by output.c whole or not at all, each workload's
 * limit measured at the start of every K-th block that uses it, adaptive runs
 * stopped once every cell has converged, a sequential plan's comparisons by
 * the looks of seqstop.h (each stop on stderr, in the sidecar through cmd_run.c); the hooks (--prepare, --conclude,
 * --cleanup) run here, between samples, outside every measured window. */
#include "error.h"
#include "judge.h"
#include "launch.h"
#include "schedule.h"
#include "sample.h"
#include "spawn.h"
#include "verify.h"
#include "plan.h"
#include "registry.h"
#include "units.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The workload's own upper bound (wl_t.limit): one sample of the same spec
 * with the allocator taken out of the loop, run under the plan's system
 * allocator without counters; its throughput, or NAN. */
static double measure_limit(const run_opts_t *o, const run_config_t *system, const wl_args_t *a)
{
    if (!a->wl->limit)
        return NAN;
    wl_args_t lim = *a;
    char buf[256], err[512];
    snprintf(buf, sizeof buf, "%s", a->wl->limit);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save))
        if (wl_set(&lim, kv, err, sizeof err))
            return NAN;
    run_sample_t *s = calloc(1, sizeof *s);
    if (!s)
        return NAN;
    double v = NAN;
    if (sample_run(o, system, &lim, NULL, s) == 0) {
        judge_status(o, system, s);
        if (s->status == RUN_OK && s->have_result)
            v = s->res.throughput;
    }
    sample_free(s);
    return v;
}

double schedule_cell_ci(const double *v, size_t n)
{
    double *s = malloc(n * sizeof *s);
    if (!s || n < 6) {
        free(s);
        return INFINITY;
    }
    memcpy(s, v, n * sizeof *s);
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && s[k] < s[k - 1]; k--) {
            double t = s[k];
            s[k] = s[k - 1];
            s[k - 1] = t;
        }
    double lo, hi, med = plan_median(s, n);
    bool ok = plan_median_ci(s, n, &lo, &hi);
    free(s);
    return ok && med > 0 ? (hi - lo) / 2 / med : INFINITY;
}

double schedule_target(const run_spec_t *sp)
{
    return sp->resolution > 0 ? sp->resolution : sp->adaptive;
}

double schedule_cell_halfwidth(const run_ctx_t *c, size_t i)
{
    const resolved_t *r = &c->r;
    size_t base = i - i % r->ncfg;
    if (c->sp.resolution <= 0 || r->ncfg < 2)
        return schedule_cell_ci(&c->tput[i * c->blocks], c->ntput[i]);
    if (i == base)
        return 0;
    double *d = malloc((c->ntput[i] + 1) * sizeof *d);
    size_t n = 0;
    for (size_t j = 0; d && j < c->ntput[i]; j++)
        for (size_t k = 0; k < c->ntput[base]; k++)
            if (c->tblock[base * c->blocks + k] == c->tblock[i * c->blocks + j] &&
                c->tput[base * c->blocks + k] > 0 && c->tput[i * c->blocks + j] > 0) {
                d[n++] = log(c->tput[i * c->blocks + j] / c->tput[base * c->blocks + k]);
                break;
            }
    /* the paired Hodges-Lehmann CI of the log ratios: the resolution compare and the
     * reports state for the same pairs (mbdata.resolution) */
    double est, lo, hi, half = INFINITY;
    if (d && n >= 6 && plan_hl_ci(d, n, &est, &lo, &hi))
        half = (exp(hi) - exp(lo)) / 2 / exp(est);
    free(d);
    return half;
}

/* --resolution: a comparison no block can bring to a ratio, so adding blocks is
 * waste: its baseline stopped, or none of the baseline's samples was ok after
 * the fewest blocks, or a figure of either is <= 0 (the change is then a
 * difference, as compare reports it: 0% released against 98%). */
bool schedule_no_ratio(const run_ctx_t *c, size_t i, unsigned blocks_done)
{
    const resolved_t *r = &c->r;
    size_t base = i - i % r->ncfg;
    if (c->sp.resolution <= 0 || r->ncfg < 2 || i == base)
        return false;
    if (c->stopped[base] || (blocks_done >= VERDICT_MIN_BLOCKS && !c->ntput[base]))
        return true;
    const size_t pair[2] = {base, i};
    for (int s = 0; s < 2; s++)
        for (size_t j = 0; j < c->ntput[pair[s]]; j++)
            if (!(c->tput[pair[s] * c->blocks + j] > 0))
                return blocks_done >= VERDICT_MIN_BLOCKS;
    return false;
}

bool schedule_sequential(const run_ctx_t *c)
{
    return c->sp.resolution > 0 && c->r.ncfg > 1 && c->cli.shard_n <= 1;
}

/* A field of the row being written, by column name. */
static const char *row_field(const void *row, const char *col)
{
    for (size_t k = 0; k < COL_COUNT; k++)
        if (!strcmp(csv_columns[k].name, col))
            return ((const csv_row_t *)row)->field[k];
    return NULL;
}

typedef struct {
    const csv_table_t *t;
    size_t i;
} table_row_t;

/* A field of a row read back, by column name. */
static const char *table_field(const void *row, const char *col)
{
    const table_row_t *x = row;
    int k = csv_col(x->t, col);
    return k < 0 ? NULL : x->t->rows[x->i][k];
}

/* Is the workload's region an idle period (trait idle_region): its CPU is the whole process's. */
static bool idle_region(const char *name)
{
    const wl_t *wl = name ? wl_find(name) : NULL;
    const char *t = wl && wl->traits ? wl->traits : "";
    for (size_t n; *t; t += n + (t[n] == ','))
        if ((n = strcspn(t, ",")) == 11 && !strncmp(t, "idle_region", 11))
            return true;
    return false;
}

double schedule_primary(const run_ctx_t *c, const csv_row_t *row)
{
    bool cpu = !strcmp(c->sp.figure, "cpu");
    return seq_figure_value(cpu, cpu && idle_region(row->field[COL_workload]), row_field, row);
}

double schedule_primary_prev(const run_ctx_t *c, const csv_table_t *t, size_t i)
{
    bool cpu = !strcmp(c->sp.figure, "cpu");
    table_row_t x = {t, i};
    return seq_figure_value(cpu, cpu && idle_region(table_field(&x, "workload")), table_field, &x);
}

/* The per-block log ratios of cell i to its workload's first configuration over
 * blocks 0 .. blocks-1, paired by block, both figures > 0: how many, into d. */
static size_t seq_pairs(const run_ctx_t *c, size_t i, unsigned blocks, double *d)
{
    size_t base = i - i % c->r.ncfg, n = 0;
    for (size_t j = 0; j < c->ntput[i]; j++) {
        unsigned b = c->tblock[i * c->blocks + j];
        double o = c->tput[i * c->blocks + j];
        for (size_t k = 0; b < blocks && o > 0 && k < c->ntput[base]; k++)
            if (c->tblock[base * c->blocks + k] == b) {
                if (c->tput[base * c->blocks + k] > 0)
                    d[n++] = log(o / c->tput[base * c->blocks + k]);
                break;
            }
    }
    return n;
}

/* 7.95, 1.012, 0.918, 0.0114: a ratio as the stop lines print it. */
static void fmt_ratio(double x, char *buf, size_t len)
{
    snprintf(buf, len, isnan(x) ? "?" : fabs(x - 1) < 0.1 ? "%.3f" : "%.3g", x);
}

/* One line on stderr as comparison i stops: "tensor_copy jk vs glibc: settled at
 * block 8: 7.95x improved [7.02, 8.73] (99.2% CI, look 1 of 4)". */
static void seq_print(const run_ctx_t *c, size_t i, unsigned nlooks)
{
    const resolved_t *r = &c->r;
    const seq_stop_t *st = &c->stop[i];
    size_t w = i / r->ncfg;
    char name[1200], params[1024], e[32], l[32], h[32], when[64];
    if (c->cli.quiet)
        return;
    snprintf(name, sizeof name, "%s", r->wl[w].wl->name);
    for (size_t v = 0; v < r->nw; v++)
        if (v != w && r->wl[v].wl == r->wl[w].wl) { /* a sweep: the parameters tell them apart */
            wl_format_args(&r->wl[w], ',', params, sizeof params);
            snprintf(name, sizeof name, "%s(%s)", r->wl[w].wl->name, params);
            break;
        }
    const char *pre = c->tty ? "\n" : "";
    if (st->why == SEQ_NO_RATIO) {
        fprintf(stderr, "%s%s: %s %s vs %s: no ratio at block %u (a figure <= 0, or no ok baseline: compare "
                "gives the difference)\n", pre, prog, name, r->cfg[i % r->ncfg].label, r->cfg[0].label, st->blocks);
        return;
    }
    snprintf(when, sizeof when, st->why == SEQ_CAP ? "stopped at the cap, block %u" : st->why == SEQ_BUDGET
             ? "stopped at the budget, block %u" : st->why == SEQ_INTERRUPTED ? "interrupted at block %u"
             : "settled at block %u", st->blocks);
    fmt_ratio(st->est, e, sizeof e);
    fmt_ratio(st->lo, l, sizeof l);
    fmt_ratio(st->hi, h, sizeof h);
    bool settled = st->why == SEQ_IMPROVED || st->why == SEQ_REGRESSED || st->why == SEQ_NEGLIGIBLE;
    const char *word = settled ? seq_why_name(st->why) : seq_words(st->lo, st->hi, SEQ_FLOOR, c->lower[w]);
    fprintf(stderr, "%s%s: %s %s vs %s: %s: %sx %s", pre, prog, name, r->cfg[i % r->ncfg].label, r->cfg[0].label,
            when, e, word);
    if (!isnan(st->lo))
        fprintf(stderr, " [%s, %s]", l, h);
    fprintf(stderr, " (%.1f%% CI, look %u of %u%s)\n", 100 * (1 - st->alpha), st->look, nlooks,
            st->why == SEQ_RESOLUTION ? ", resolution reached" : "");
}

/* A look at `blocks` spending alpha (look number `look` of nlooks): every open
 * comparison settles, or stops as `forced` (SEQ_OPEN: it goes on); a workload's first
 * configuration runs while any of its comparisons does.  True when every one has stopped. */
static bool seq_look(run_ctx_t *c, unsigned blocks, double alpha, unsigned look, unsigned nlooks, seq_why_t forced)
{
    const resolved_t *r = &c->r;
    double *d = malloc((c->blocks + 1) * sizeof *d);
    bool changed = false, all = true;
    for (size_t i = 0; d && i < r->ncells; i++) {
        seq_stop_t *st = &c->stop[i];
        if (i % r->ncfg == 0 || st->why != SEQ_OPEN)
            continue;
        size_t n = seq_pairs(c, i, blocks, d);
        bool none = c->stopped[i] || schedule_no_ratio(c, i, blocks);
        seq_why_t why = seq_settle(d, n, alpha, SEQ_FLOOR, c->sp.resolution, c->lower[i / r->ncfg], &st->est,
                                   &st->lo, &st->hi);
        if (none)
            why = SEQ_NO_RATIO;
        else if (why == SEQ_OPEN || forced == SEQ_INTERRUPTED) /* an interrupt is no look: it settles nothing */
            why = forced;
        if (why == SEQ_OPEN) {
            all = false;
            continue;
        }
        *st = (seq_stop_t){.why = why, .look = look, .blocks = blocks, .n = n, .alpha = alpha, .est = st->est,
                           .lo = st->lo, .hi = st->hi};
        if (why == SEQ_NO_RATIO)
            st->est = st->lo = st->hi = NAN;
        c->converged[i] = changed = true;
        seq_print(c, i, nlooks);
    }
    free(d);
    for (size_t i = 0; i < r->ncells; i += r->ncfg) {
        c->converged[i] = true;
        for (size_t k = 1; k < r->ncfg; k++)
            c->converged[i] &= c->stop[i + k].why != SEQ_OPEN;
    }
    if (changed && c->stops_changed)
        c->stops_changed(c);
    return all;
}

/* The look of the schedule at `blocks` complete blocks, if there is one.  True when
 * every comparison has stopped. */
static bool seq_planned_look(run_ctx_t *c, unsigned blocks)
{
    for (size_t k = 0; k < c->nlooks; k++)
        if (c->looks[k].blocks == blocks)
            return seq_look(c, blocks, c->looks[k].alpha, (unsigned)k + 1, (unsigned)c->nlooks,
                            k + 1 == c->nlooks ? SEQ_CAP : SEQ_OPEN);
    return false;
}

/* After `blocks` complete blocks: a look forced by the budget (below the cap), spending
 * the alpha left, or the look of the schedule at this block count.  True when every
 * comparison has stopped. */
static bool seq_after(run_ctx_t *c, unsigned blocks)
{
    c->seq_complete = blocks;
    unsigned taken;
    double left = seq_alpha_left(c->looks, c->nlooks, blocks, &taken);
    if (blocks < c->blocks && mono_now() - c->t_start > c->sp.budget_s)
        return seq_look(c, blocks, left, taken + 1, taken + 1, SEQ_BUDGET);
    return seq_planned_look(c, blocks);
}

/* --resume, interrupted before this invocation's first look (while loading,
 * calibrating or warming up): the looks the file's complete blocks reach, as
 * run_blocks replays them, so that the interrupt stops at the blocks the file holds. */
static void seq_replay(run_ctx_t *c)
{
    const resolved_t *r = &c->r;
    for (unsigned b = 0; b <= c->blocks; b++) {
        if (b > 0) {
            c->seq_complete = b;
            if (seq_planned_look(c, b))
                return;
        }
        if (b == c->blocks)
            return;
        plan_block_order(remeasure_seed(c->sp.seed, c->rm.attempt[b]), b, r->ncells, c->order);
        for (size_t p = 0; p < r->ncells; p++)
            if (!c->done[b * r->ncells + p] && !c->converged[c->order[p]] && !c->stopped[c->order[p]])
                return; /* block b is not complete in the file */
    }
}

void schedule_seq_interrupted(run_ctx_t *c)
{
    if (!schedule_sequential(c) || !c->stop)
        return;
    if (c->seq_complete == 0 && c->cli.resume)
        seq_replay(c);
    unsigned taken;
    double left = seq_alpha_left(c->looks, c->nlooks, c->seq_complete + 1, &taken);
    seq_look(c, c->seq_complete, left, taken + 1, taken + 1, SEQ_INTERRUPTED);
}

/* Which cells have converged now; true when all have.  Under --resolution a
 * workload's first configuration runs as long as any other of it does. */
static bool cells_converged(run_ctx_t *c, unsigned blocks_done)
{
    const resolved_t *r = &c->r;
    double target = schedule_target(&c->sp);
    bool all = true;
    for (size_t i = 0; i < r->ncells; i++) {
        /* a stopped cell adds no blocks: the others need not wait for it */
        c->converged[i] = c->stopped[i] || schedule_no_ratio(c, i, blocks_done) || schedule_cell_halfwidth(c, i) <= target;
        all &= c->converged[i];
    }
    for (size_t i = 0; c->sp.resolution > 0 && r->ncfg > 1 && i < r->ncells; i += r->ncfg)
        for (size_t k = 1; k < r->ncfg; k++)
            c->converged[i] &= c->converged[i + k];
    return all;
}

/* A hook (--prepare, --conclude, --cleanup: flag without "--"): CMD through
 * /bin/sh -c in the harness's own environment (no probe, no allocator
 * variables), stdin /dev/null, its output kept for the message and never on
 * the harness's stdout (the CSV may stream there), in its own process group
 * (killed whole at --timeout or when the run is interrupted).  0 when it
 * exited 0; else -1 with why: "the --prepare command 'CMD' exited with status 3: LINE". */
static int hook_run(const char *flag, const char *cmd, double timeout_s, char *why, size_t len)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC)) {
        snprintf(why, len, "the --%s command '%.200s' could not start: %s", flag, cmd, strerror(errno));
        return -1;
    }
    char *argv[] = {"sh", "-c", (char *)cmd, NULL};
    const spawn_fd_t fds[] = {{SPAWN_DEVNULL, 0}, {p[1], 1}, {p[1], 2}};
    spawn_t sp = {.path = "/bin/sh", .argv = argv, .envp = environ, .fds = fds, .nfds = 3, .group = true,
                  .death_signal = SIGKILL, .go_fd = -1};
    pid_t pid;
    int rc = spawn_start(&sp, &pid);
    close(p[1]);
    if (rc) {
        close(p[0]);
        snprintf(why, len, "the --%s command '%.200s' could not start: %s", flag, cmd, strerror(-rc));
        return -1;
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    char tail[512] = "";         /* the last bytes of its output */
    size_t nt = 0;
    int st = 0;
    bool ended = false, timed_out = false, open_ = true;
    double t0 = mono_now();
    while (!ended) {
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        if (open_ && poll(&pf, 1, 50) > 0) {
            char buf[4096];
            ssize_t n = read(p[0], buf, sizeof buf);
            if (n == 0)
                open_ = false;
            for (ssize_t i = 0; i < n; i++) {
                if (nt + 1 >= sizeof tail) {
                    memmove(tail, tail + sizeof tail / 2, nt - sizeof tail / 2);
                    nt -= sizeof tail / 2;
                }
                tail[nt++] = buf[i];
            }
        } else if (!open_) {
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        /* its end, not its output's: a process it left behind may hold the pipe */
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            ended = true;
        else if (w < 0 && errno != EINTR)
            break;
        else if (!timed_out && (sample_interrupted() || (timeout_s > 0 && mono_now() - t0 > timeout_s))) {
            timed_out = !sample_interrupted();
            kill(-pid, SIGKILL);
            while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
                ;
            ended = true;
        }
    }
    char buf[4096];
    ssize_t n;
    while (nt + 1 < sizeof tail && (n = read(p[0], buf, sizeof tail - 1 - nt)) > 0) {
        memcpy(tail + nt, buf, (size_t)n);
        nt += (size_t)n;
    }
    close(p[0]);
    tail[nt] = '\0';
    if (ended && !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    /* the last line of its output (launch_last_line, as a sample's), printable */
    char *last = (char *)launch_last_line(tail);
    for (char *q = last; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = ' ';
    char how[96];
    if (timed_out)
        snprintf(how, sizeof how, "was killed after %.3g s (--timeout)", timeout_s);
    else if (!ended)
        snprintf(how, sizeof how, "could not be waited for: %s", strerror(errno));
    else if (WIFSIGNALED(st))
        snprintf(how, sizeof how, "was killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(st));
    snprintf(why, len, "the --%s command '%.200s' %s%s%.200s", flag, cmd, how, *last ? ": " : "", last);
    return -1;
}

/* A sample that was never started (its --prepare failed): an error row that
 * says why, with no figures and nothing left from the sample before. */
static void hook_not_run(run_sample_t *s, const char *why)
{
    run_rss_point_t *rss = s->rss; /* the readings' room is kept, as sample_run keeps it */
    size_t cap = s->rss_cap;
    memset(s, 0, sizeof *s);
    s->rss = rss;
    s->rss_cap = cap;
    s->status = RUN_ERROR;
    s->untrusted = true; /* nothing was measured: no figures */
    snprintf(s->message, sizeof s->message, "%s", why);
}

/* One sample between the hooks: --prepare, the sample, its verdict, then
 * --conclude.  A failing --prepare leaves the sample not run, an error that
 * names it; a failing --conclude makes the sample an error that names it (its
 * own failure, if any, first).  effective NULL: judged without the proof (a
 * warm-up).  0, or sample_run's -errno. */
static int hooked_sample(run_ctx_t *c, const run_config_t *cfg, const wl_args_t *a, char *effective,
                         size_t efflen)
{
    char why[640];
    if (c->cli.prepare[0] && hook_run("prepare", c->cli.prepare, c->cli.o.timeout_s, why, sizeof why)) {
        hook_not_run(c->s, why);
        if (effective)
            effective[0] = '\0';
        return 0;
    }
    int rc = sample_run(&c->cli.o, cfg, a, c->cnt, c->s);
    if (rc || sample_interrupted())
        return rc;
    if (effective)
        judge_sample(&c->cli.o, cfg, c->s, effective, efflen);
    else
        judge_status(&c->cli.o, cfg, c->s);
    if (c->cli.conclude[0] && hook_run("conclude", c->cli.conclude, c->cli.o.timeout_s, why, sizeof why)) {
        run_sample_t *s = c->s;
        if (s->status == RUN_OK)
            snprintf(s->message, sizeof s->message, "%s", why);
        else {
            size_t n = strlen(s->message);
            snprintf(s->message + n, sizeof s->message - n, "; %s", why);
        }
        s->status = RUN_ERROR;
    }
    return 0;
}

/* --cleanup: once for every cell this invocation ran a sample of, after the
 * last block (the blocks interleave the configurations, so a configuration's
 * last sample is in the run's last block); a failure is a warning, since the
 * rows are written. */
static void cleanup_cells(run_ctx_t *c)
{
    const resolved_t *r = &c->r;
    char why[640];
    for (size_t i = 0; c->cli.cleanup[0] && i < r->ncells && !sample_interrupted(); i++)
        if (c->cell_run[i] &&
            hook_run("cleanup", c->cli.cleanup, c->cli.o.timeout_s, why, sizeof why) && !sample_interrupted())
            fprintf(stderr, "%s%s: warning: %s on %s: %s\n", c->tty ? "\n" : "", prog, r->cfg[i % r->ncfg].label,
                    r->wl[i / r->ncfg].wl->name, why);
}

/* One sample of the plan, its row written whole or not at all.  0 to go
 * on, 1 when the run must stop (the harness could not start a child, or
 * the output cannot take another row). */
static int one_sample(run_ctx_t *c, unsigned b, size_t p, run_progress_fn *progress)
{
    const resolved_t *r = &c->r;
    bool tty = c->tty;
    size_t cell = c->order[p], w = cell / r->ncfg, k = cell % r->ncfg;
    char ts[40];
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime(&rt.tv_sec));
    snprintf(ts + strlen(ts), sizeof ts - strlen(ts), ".%03ldZ", rt.tv_nsec / 1000000);
    double t0 = mono_now();
    char effective[CSV_FIELD_MAX];
    int rc = hooked_sample(c, &r->cfg[k], &c->cell_args[cell], effective, sizeof effective);
    if (rc) {
        fprintf(stderr, "%s%s: cannot start a sample: %s\n", tty ? "\n" : "", prog, strerror(-rc));
        return 1;
    }
    if (sample_interrupted())
        return 0; /* the sample cut short is dropped whole */
    c->spent += mono_now() - t0;
    row_fill(c->row, &c->x, c->nrun, b, p, &r->wl[w], &r->cfg[k], c->st.versions[k], (int)b, c->s, effective,
             c->cnt, ts, c->st.limits[w], c->cell_scale[cell]);
    /* the RSS lines first, then the row: a row is there only when all of
     * its sample is; a failed write leaves both files ending whole */
    const char *failed;
    if ((rc = out_write_sample(&c->out, c->run_id, c->nrun, c->s, c->row, &failed))) {
        fprintf(stderr, "%s%s: cannot write '%s': %s; stopped, the files end at the last whole sample: "
                "make room and continue with the same command and --resume\n", tty ? "\n" : "", prog, failed,
                strerror(-rc));
        return 1;
    }
    c->nrun++;
    c->cell_run[cell]++;
    /* its first measured sample failing as its warm-up did: no later one, which may fail by chance */
    if (c->s->status != RUN_OK && c->warm_failed[cell] == (int)c->s->status + 1 && c->cell_run[cell] == 1 &&
        !c->stopped[cell]) {
        c->stopped[cell] = true;
        fprintf(stderr, "%s%s: %s on %s stopped: its warm-up and its sample of block %u both ended %s (%s); "
                "its other samples are not run, this one's row is in the CSV\n", tty ? "\n" : "", prog,
                r->cfg[k].label, r->wl[w].wl->name, b, sample_status_name(c->s->status), c->s->message);
    }
    if (c->s->status == RUN_OK) {
        c->nok++;
        c->cell_ok[cell]++;
        double v = schedule_primary(c, c->row); /* as the CSV has it: --resume reads the same */
        if (c->s->have_result && !isnan(v)) {
            c->tblock[cell * c->blocks + c->ntput[cell]] = b;
            c->tput[cell * c->blocks + c->ntput[cell]++] = v;
        }
    } else {
        c->nbad++;
    }
    if (progress)
        progress(c, b, w, k);
    return 0;
}

/* --resume: the work_scale factors the file's rows were run with (from
 * --min-time), so a configuration's samples stay comparable across
 * invocations, whatever this one's --min-time. */
static void load_scales(run_ctx_t *c)
{
    const resolved_t *r = &c->r;
    const csv_table_t *t = &c->prev;
    int cw = csv_col(t, "workload"), cp = csv_col(t, "workload_params"), cc = csv_col(t, "config"),
        cs = csv_col(t, "work_scale");
    char (*params)[1024] = calloc(r->nw ? r->nw : 1, sizeof *params);
    if (!params)
        return; /* the factors are calibrated again, or 1 */
    for (size_t w = 0; w < r->nw; w++)
        wl_format_args(&r->wl[w], ',', params[w], sizeof params[w]);
    for (size_t i = 0; i < t->nrows && cw >= 0 && cp >= 0 && cc >= 0 && cs >= 0; i++) {
        uint64_t scale;
        if (units_parse_u64(t->rows[i][cs], &scale) || scale < 1)
            continue;
        for (size_t w = 0; w < r->nw; w++) {
            if (strcmp(r->wl[w].wl->name, t->rows[i][cw]) || strcmp(params[w], t->rows[i][cp]))
                continue;
            for (size_t k = 0; k < r->ncfg; k++) {
                size_t cell = w * r->ncfg + k;
                if (strcmp(r->cfg[k].label, t->rows[i][cc]) || c->cell_scale[cell])
                    continue;
                c->cell_scale[cell] = wl_scale(&c->cell_args[cell], scale);
            }
        }
    }
    free(params);
}

/* --min-time: every cell this invocation runs gets a factor on its work so
 * that its measured region lasts at least that long, measured on discarded
 * samples (at most three per cell) and kept for all its blocks.  A
 * workload with a fixed schedule keeps factor 1. */
static void calibrate_cells(run_ctx_t *c)
{
    bool tty = c->tty;
    const resolved_t *r = &c->r;
    double want = c->sp.min_time_s;
    if (want <= 0) { /* the work as given, unless a resumed file said otherwise */
        for (size_t i = 0; i < r->ncells; i++)
            c->cell_scale[i] = c->cell_scale[i] ? c->cell_scale[i] : 1;
        return;
    }
    bool *needed = calloc(r->ncells ? r->ncells : 1, sizeof *needed);
    size_t nneeded = 0, ndone = 0;
    for (unsigned b = 0; needed && b < c->blocks; b++) {
        plan_block_order(remeasure_seed(c->sp.seed, c->rm.attempt[b]), b, r->ncells, c->order);
        for (size_t p = 0; p < r->ncells; p++)
            if (plan_in_shard(b, c->cli.shard_k, c->cli.shard_n) && !c->done[b * r->ncells + p] &&
                !needed[c->order[p]]) {
                needed[c->order[p]] = true;
                nneeded++;
            }
    }
    for (size_t i = 0; i < r->ncells; i++) {
        if (c->cell_scale[i])
            continue;
        c->cell_scale[i] = 1;
        if (sample_interrupted() || !needed || !needed[i] || !r->wl[i / r->ncfg].wl->scale)
            continue;
        if (tty)
            fprintf(stderr, "\r\033[Kcalibrating --min-time %zu/%zu: %s %s", ++ndone, nneeded,
                    r->wl[i / r->ncfg].wl->name, r->cfg[i % r->ncfg].label);
        for (int round = 0; round < 3 && !sample_interrupted(); round++) {
            const run_sample_t *s = c->s;
            const run_config_t *cfg = &r->cfg[i % r->ncfg];
            if (sample_run(&c->cli.o, cfg, &c->cell_args[i], c->cnt, c->s))
                break;
            judge_status(&c->cli.o, cfg, c->s);
            if (s->status != RUN_OK || !s->have_result || !(s->res.region_s > 0) || s->res.region_s >= want)
                break;
            /* 10% over the target, so that a sample a little faster than
             * this one still lasts long enough */
            double f = (double)c->cell_scale[i] * want * 1.1 / s->res.region_s;
            uint64_t scale = f > 1e12 ? (uint64_t)1e12 : (uint64_t)ceil(f);
            if (scale <= c->cell_scale[i])
                break;
            c->cell_args[i] = r->wl[i / r->ncfg];
            uint64_t got = wl_scale(&c->cell_args[i], scale);
            if (got <= c->cell_scale[i])
                break; /* at the parameter's limit */
            c->cell_scale[i] = got;
        }
    }
    free(needed);
}

/* Discarded samples, one cell at a time in block-0 order: every cell, in
 * every shard (each machine warms up what it measures). */
static void warm_up(run_ctx_t *c)
{
    bool tty = c->tty;
    const resolved_t *r = &c->r;
    plan_block_order(c->sp.seed, 0, r->ncells, c->order);
    for (unsigned wu = 0; wu < c->sp.warmup_runs && !sample_interrupted(); wu++)
        for (size_t p = 0; p < r->ncells && !sample_interrupted(); p++) {
            size_t w = c->order[p] / r->ncfg, k = c->order[p] % r->ncfg;
            if (hooked_sample(c, &r->cfg[k], &c->cell_args[c->order[p]], NULL, 0))
                break;
            if (sample_interrupted())
                break;
            if (c->s->status != RUN_OK && !c->warm_failed[c->order[p]]) {
                /* its first block runs (a row with its status); failing the same way, it stops */
                c->warm_failed[c->order[p]] = (int)c->s->status + 1;
                fprintf(stderr, "%s%s: warning: %s on %s: its warm-up ended %s (%s)\n", tty ? "\n" : "", prog,
                        r->cfg[k].label, r->wl[w].wl->name, sample_status_name(c->s->status), c->s->message);
            }
            if (tty)
                fprintf(stderr, "\r\033[Kwarm-up %zu/%zu: %s %s", p + 1, r->ncells, r->wl[w].wl->name,
                        r->cfg[k].label);
        }
}

/* The blocks: each in its shuffled order, each workload's limit measured at
 * the start of every --limit-every-th block that uses it (the blocks between
 * keep the last); adaptive runs stop once every cell
 * has converged.  Returns the exit code and the blocks run in *nblocks. */
static int run_blocks(run_ctx_t *c, run_progress_fn *progress, unsigned *nblocks)
{
    const resolved_t *r = &c->r;
    const run_spec_t *sp = &c->sp;
    unsigned k = c->cli.shard_k, n = c->cli.shard_n;
    unsigned b;
    for (b = 0; b < c->blocks && !sample_interrupted(); b++) {
        if (schedule_sequential(c) ? b > 0 && seq_after(c, b)
            : schedule_target(sp) > 0 && b >= (sp->reps > VERDICT_MIN_BLOCKS ? sp->reps : VERDICT_MIN_BLOCKS) &&
              (cells_converged(c, b) || mono_now() - c->t_start > sp->budget_s))
            break;
    again: /* the block measured again whole (remeasure_block), in a new order */
        plan_block_order(remeasure_seed(sp->seed, c->rm.attempt[b]), b, r->ncells, c->order);
        c->x.attempt = c->rm.attempt[b];
        for (size_t w = 0; w < r->nw && sp->limit && !sample_interrupted(); w++) {
            bool used = false;
            for (size_t p = 0; p < r->ncells && !used; p++)
                used = c->order[p] / r->ncfg == w && plan_in_shard(b, k, n) &&
                       !c->done[b * r->ncells + p] && !c->converged[c->order[p]];
            /* every K-th block, or when none is known yet (a resumed or sharded run) */
            if (used && (b % sp->limit_every == 0 || isnan(c->st.limits[w])))
                c->st.limits[w] = measure_limit(&c->cli.o, &r->system, &r->wl[w]);
        }
        for (size_t p = 0; p < r->ncells && !sample_interrupted(); p++) {
            if (!plan_in_shard(b, k, n) || c->done[b * r->ncells + p] ||
                c->converged[c->order[p]] || c->stopped[c->order[p]])
                continue;
            if (one_sample(c, b, p, progress)) {
                *nblocks = b;
                return 1;
            }
            remeasure_note(&c->rm, c->row);
        }
        if (!sample_interrupted() && remeasure_block(&c->rm, b, c->tty))
            goto again;
    }
    if (schedule_sequential(c) && b == c->blocks && !sample_interrupted())
        seq_after(c, b); /* the cap's look */
    *nblocks = b;
    return 0;
}

int schedule_plan(run_ctx_t *c, run_progress_fn *progress, unsigned *nblocks)
{
    const resolved_t *r = &c->r;
    for (size_t w = 0; c->lower && w < r->nw; w++) { /* each workload's better direction */
        wl_metric(&r->wl[w], &c->lower[w]);
        c->lower[w] |= !strcmp(c->sp.figure, "cpu"); /* CPU per unit of work: lower */
    }
    if (c->cli.resume && c->out.exists)
        load_scales(c);
    calibrate_cells(c);
    warm_up(c);
    for (unsigned b = 0; b < (unsigned)c->sp.reps && b < c->blocks; b++)
        for (size_t p = 0; p < r->ncells; p++)
            c->planned += plan_in_shard(b, c->cli.shard_k, c->cli.shard_n) &&
                          !c->done[b * r->ncells + p];
    c->t_start = mono_now();
    int rc = run_blocks(c, progress, nblocks);
    cleanup_cells(c);
    return rc;
}

int schedule_preflight(const run_opts_t *o, const run_config_t *c, char *version, size_t vlen, char *err,
                       size_t errlen)
{
    version[0] = '\0';
    int rc = judge_library(c, err, errlen);
    if (!rc && c->alloc->check == ALLOC_CHECK_LOADER && c->nsettings) {
        char *listing = malloc(16384);
        if (!listing) {
            snprintf(err, errlen, "%s: out of memory", c->label);
            return -ENOMEM;
        }
        rc = sample_loader_listing(c, listing, 16384, err, errlen);
        if (!rc)
            rc = verify_loader_tunables(c, listing, err, errlen);
        free(listing);
    }
    if (rc)
        return rc;
    wl_args_t a;
    wl_defaults(wl_find("selftest"), &a);
    run_opts_t quick = *o;
    quick.timeout_s = 30;
    run_sample_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", c->label);
        return -ENOMEM;
    }
    rc = sample_run(&quick, c, &a, NULL, s);
    if (rc)
        snprintf(err, errlen, "%s: cannot start the worker: %s", c->label, strerror(-rc));
    else
        rc = judge_preflight(&quick, c, s, version, vlen, err, errlen);
    sample_free(s);
    return rc;
}
