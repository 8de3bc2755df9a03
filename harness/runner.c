/* runner.c - `mallocbench run`: turns a run specification (command line
 * or matrix file) into allocator configurations and a plan of samples,
 * proves every configuration, runs the plan in shuffled blocks and writes
 * one CSV row per sample; resumes, shards and adapts its repetitions. */
#include "cli.h"
#include "counters.h"
#include "csv.h"
#include "matrix.h"
#include "mb_config.h"
#include "plan.h"
#include "registry.h"
#include "run.h"
#include "sysinfo.h"
#include "units.h"
#include "verify.h"
#include "workload.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- allocator configurations -------------------------------------------- */

typedef struct {
    const alloc_info_t *alloc;
    char name[64];                     /* tunable name */
    size_t nvalues;
    char values[MAX_VALUES][64];
} sweep_t;

typedef struct {
    const alloc_info_t *alloc;
    char lib[PATH_MAX];
    bool user_lib;
} alloc_choice_t;

static void config_label(run_config_t *c)
{
    size_t off = (size_t)snprintf(c->label, sizeof c->label, "%s", c->alloc->name);
    if (c->user_lib)
        off += (size_t)snprintf(c->label + off, sizeof c->label - off, "@%s", c->lib);
    c->requested[0] = '\0';
    size_t roff = 0;
    for (size_t i = 0; i < c->nsettings; i++) {
        /* sizes read as the user writes them (32M), exactly */
        char shown[64];
        snprintf(shown, sizeof shown, "%s", c->settings[i].value);
        if (c->settings[i].t->type == TUN_SIZE)
            units_format_size(strtoull(shown, NULL, 10), shown, sizeof shown);
        off += (size_t)snprintf(c->label + off, sizeof c->label - off, "%s%s=%s", i ? "," : "[",
                                c->settings[i].t->name, shown);
        roff += (size_t)snprintf(c->requested + roff, sizeof c->requested - roff, "%s%s=%s",
                                 i ? ";" : "", c->settings[i].t->name, c->settings[i].value);
    }
    if (c->nsettings && off < sizeof c->label)
        snprintf(c->label + off, sizeof c->label - off, "]");
}

/* Cross product of one allocator's sweeps. */
static int expand_configs(const alloc_choice_t *ch, const sweep_t *sw, size_t nsw, run_config_t *out,
                          size_t *nout)
{
    const sweep_t *mine[MAX_SWEEPS];
    size_t nmine = 0;
    for (size_t i = 0; i < nsw; i++)
        if (sw[i].alloc == ch->alloc)
            mine[nmine++] = &sw[i];
    size_t idx[MAX_SWEEPS] = {0};
    for (;;) {
        if (*nout >= MAX_CONFIGS)
            return die_usage("too many configurations (at most %d)", MAX_CONFIGS);
        run_config_t *c = &out[(*nout)++];
        memset(c, 0, sizeof *c);
        c->alloc = ch->alloc;
        snprintf(c->lib, sizeof c->lib, "%s", ch->lib);
        c->user_lib = ch->user_lib;
        for (size_t i = 0; i < nmine; i++) {
            char kv[160], err[1024];
            if (!strcmp(mine[i]->values[idx[i]], "default"))
                continue; /* the allocator's own default: nothing set */
            snprintf(kv, sizeof kv, "%s=%s", mine[i]->name, mine[i]->values[idx[i]]);
            if (alloc_parse_setting(c->alloc, kv, &c->settings[c->nsettings++], err, sizeof err))
                return die_usage("%s", err);
        }
        if (alloc_build_env(c->alloc, c->settings, c->nsettings, &c->env))
            return die_usage("%s: settings too long for the environment", c->alloc->name);
        config_label(c);
        /* next combination */
        size_t k = 0;
        while (k < nmine && ++idx[k] == mine[k]->nvalues)
            idx[k++] = 0;
        if (k == nmine)
            break;
    }
    return 0;
}

static int parse_allocators(const char *list, alloc_choice_t *out, size_t *n, bool quiet_missing)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (eq)
            *eq = '\0';
        const alloc_info_t *a = alloc_find(item);
        if (!a) {
            char names[256];
            size_t off = 0;
            for (size_t i = 0; i < alloc_count(); i++)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "",
                                        alloc_at(i)->name);
            return die_usage("unknown allocator '%s' (valid: %s)", item, names);
        }
        if (*n >= MAX_CONFIGS)
            return die_usage("too many allocators");
        alloc_choice_t *c = &out[*n];
        memset(c, 0, sizeof *c);
        c->alloc = a;
        if (eq) {
            if (a->family == ALLOC_GLIBC)
                return die_usage("glibc's malloc is part of libc and cannot be given a library path");
            if (access(eq + 1, R_OK) != 0)
                return die_usage("cannot read library '%s' for %s: %s", eq + 1, a->name, strerror(errno));
            if (!realpath(eq + 1, c->lib))
                return die_usage("cannot resolve '%s': %s", eq + 1, strerror(errno));
            c->user_lib = true;
        } else if (a->family != ALLOC_GLIBC && alloc_locate(a, c->lib, sizeof c->lib)) {
            if (quiet_missing) {
                fprintf(stderr, "%s: skipping %s: not installed (%s)\n", prog, a->name, a->sonames[0]);
                continue;
            }
            return die_usage("%s is not installed: %s not found in the system library directories "
                             "(install its Debian package or use -a %s=PATH)", a->name, a->sonames[0], a->name);
        }
        (*n)++;
    }
    if (*n == 0)
        return die_usage("no allocator to run");
    return 0;
}

static int parse_tunable(const char *spec, sweep_t *sw, size_t *nsw)
{
    const char *colon = strchr(spec, ':');
    const char *eq = colon ? strchr(colon, '=') : NULL;
    if (!colon || !eq || eq == colon + 1)
        return die_usage("bad tunable '%s': expected ALLOCATOR:NAME=VALUE[,VALUE...]", spec);
    char aname[64];
    snprintf(aname, sizeof aname, "%.*s", (int)(colon - spec), spec);
    const alloc_info_t *a = alloc_find(aname);
    if (!a)
        return die_usage("bad tunable '%s': unknown allocator '%s'", spec, aname);
    if (*nsw >= MAX_SWEEPS)
        return die_usage("too many -t options");
    sweep_t *s = &sw[(*nsw)++];
    memset(s, 0, sizeof *s);
    s->alloc = a;
    snprintf(s->name, sizeof s->name, "%.*s", (int)(eq - colon - 1), colon + 1);
    for (size_t i = 0; i + 1 < *nsw; i++)
        if (sw[i].alloc == a && !strcmp(sw[i].name, s->name))
            return die_usage("tunable %s:%s given twice (use one -t with a comma list)", a->name, s->name);
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    char *save = NULL;
    for (char *v = strtok_r(buf, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (s->nvalues >= MAX_VALUES)
            return die_usage("too many values for %s:%s", a->name, s->name);
        char kv[160], err[1024];
        alloc_setting_t st;
        snprintf(kv, sizeof kv, "%s=%s", s->name, v);
        if (strcmp(v, "default") != 0 && alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_usage("%s", err);
        if (!strcmp(v, "default") && !alloc_find_tunable(a, s->name) &&
            alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_usage("%s", err); /* an unknown name still lists the valid ones */
        snprintf(s->values[s->nvalues++], sizeof s->values[0], "%s", v);
    }
    if (!s->nvalues)
        return die_usage("bad tunable '%s': no value", spec);
    return 0;
}

/* ---- output files ---------------------------------------------------------- */

static void path_with_suffix(const char *csv, const char *suffix, char *out, size_t len)
{
    size_t n = strlen(csv);
    if (n > 4 && !strcmp(csv + n - 4, ".csv"))
        n -= 4;
    snprintf(out, len, "%.*s%s", (int)n, csv, suffix);
}

static int write_sidecar(const char *path, const char *run_id, int argc, char **argv,
                         const run_config_t *cfg, size_t ncfg, char versions[][128],
                         const run_opts_t *o, const wl_args_t *wl, const double *limits, size_t nw)
{
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return -errno;
    char commit[160], cnt[512], ts[64];
    sysinfo_git_commit(commit, sizeof commit);
    cnt_describe(cnt, sizeof cnt);
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fputs("{\n  \"schema_version\": " CSV_SCHEMA_VERSION ",\n  \"run_id\": ", f);
    sysinfo_json_string(f, run_id);
    fputs(",\n  \"started\": ", f);
    sysinfo_json_string(f, ts);
    fputs(",\n  \"mallocbench_version\": ", f);
    sysinfo_json_string(f, MB_VERSION);
    fputs(",\n  \"git_commit\": ", f);
    sysinfo_json_string(f, commit[0] ? commit : NULL);
    fputs(",\n  \"command\": [", f);
    for (int i = 0; i < argc; i++) {
        if (i)
            fputs(", ", f);
        sysinfo_json_string(f, argv[i]);
    }
    fputs("],\n  \"counting\": ", f);
    sysinfo_json_string(f, cnt);
    fprintf(f, ",\n  \"timeout_s\": %g,\n  \"rss_sample_interval_s\": %g,\n", o->timeout_s,
            o->sample_interval_s);
    fputs("  \"machine\": {\n", f);
    sysinfo_write_machine(f);
    fputs("  },\n  \"configs\": [\n", f);
    for (size_t i = 0; i < ncfg; i++) {
        fputs("    {\"config\": ", f);
        sysinfo_json_string(f, cfg[i].label);
        fputs(", \"allocator\": ", f);
        sysinfo_json_string(f, cfg[i].alloc->name);
        fputs(", \"lib_path\": ", f);
        sysinfo_json_string(f, cfg[i].lib);
        fputs(", \"version\": ", f);
        sysinfo_json_string(f, versions[i]);
        fputs(", \"environment\": [", f);
        for (size_t k = 0; k < cfg[i].env.n; k++) {
            if (k)
                fputs(", ", f);
            sysinfo_json_string(f, cfg[i].env.var[k]);
        }
        fprintf(f, "]}%s\n", i + 1 < ncfg ? "," : "");
    }
    fputs("  ],\n  \"limits\": [\n", f);
    for (size_t w = 0; w < nw; w++) {
        char params[1024];
        wl_format_args(&wl[w], ',', params, sizeof params);
        fputs("    {\"workload\": ", f);
        sysinfo_json_string(f, wl[w].wl->name);
        fputs(", \"params\": ", f);
        sysinfo_json_string(f, params);
        fputs(", \"limit_params\": ", f);
        sysinfo_json_string(f, wl[w].wl->limit);
        fputs(", \"measured\": ", f);
        sysinfo_json_string(f, !wl[w].wl->limit ? NULL : limits ? "per block, under glibc, in limit_throughput"
                                                                : "not measured (--no-limit)");
        fprintf(f, "}%s\n", w + 1 < nw ? "," : "");
    }
    fputs("  ]\n}\n", f);
    if (fclose(f))
        return -errno;
    if (rename(tmp, path))
        return -errno;
    return 0;
}

/* ---- one row --------------------------------------------------------------- */

/* Fixed counter order, see counters.h. */
enum { EV_TASK_CLOCK, EV_CSW, EV_MIGR, EV_MINFLT, EV_MAJFLT, EV_MADVISE, EV_MMAP, EV_MUNMAP,
       EV_BRK, EV_MREMAP, EV_MPROTECT, EV_FIXED };
static const csv_col_t total_col[EV_FIXED] = {
    COL_total_task_clock_s, COL_total_context_switches, COL_total_cpu_migrations,
    COL_total_minor_faults, COL_total_major_faults, COL_total_madvise_calls, COL_total_mmap_calls,
    COL_total_munmap_calls, COL_total_brk_calls, COL_total_mremap_calls, COL_total_mprotect_calls};
static const csv_col_t region_col[EV_FIXED] = {
    COL_region_task_clock_s, COL_region_context_switches, COL_region_cpu_migrations,
    COL_region_minor_faults, COL_region_major_faults, COL_region_madvise_calls, COL_region_mmap_calls,
    COL_region_munmap_calls, COL_region_brk_calls, COL_region_mremap_calls, COL_region_mprotect_calls};

static void fmt_count(char *buf, size_t len, double v, bool seconds)
{
    if (isnan(v))
        buf[0] = '\0';
    else if (seconds)
        snprintf(buf, len, "%.6f", v / 1e9);
    else
        snprintf(buf, len, "%.0f", v);
}

static void note_add(char *notes, size_t len, const char *name, const char *why)
{
    size_t off = strlen(notes);
    snprintf(notes + off, len - off, "%s%s: %s", off ? "; " : "", name, why);
}

/* What every row of one invocation shares. */
typedef struct {
    const char *run_id, *host, *shard;
    char matrix_id[24];
    uint64_t seed;
} row_ctx_t;

static void fill_row(csv_row_t *row, const row_ctx_t *x, size_t sample, unsigned block, size_t position,
                     const wl_args_t *a, const run_config_t *c, const char *version, int rep,
                     const run_sample_t *s, const char *effective, const cnt_set_t *cnt,
                     const char *ts, double limit)
{
    char params[1024], buf[64];
    csv_row_clear(row);
    csv_set(row, COL_schema_version, "%s", CSV_SCHEMA_VERSION);
    csv_set(row, COL_run_id, "%s", x->run_id);
    csv_set(row, COL_sample, "%zu", sample);
    csv_set(row, COL_matrix_id, "%s", x->matrix_id);
    csv_set(row, COL_plan_seed, "%llu", (unsigned long long)x->seed);
    csv_set(row, COL_block, "%u", block);
    csv_set(row, COL_position, "%zu", position);
    csv_set(row, COL_shard, "%s", x->shard);
    csv_set(row, COL_timestamp, "%s", ts);
    csv_set(row, COL_host, "%s", x->host);
    csv_set(row, COL_workload, "%s", a->wl->name);
    wl_format_args(a, ',', params, sizeof params);
    csv_set(row, COL_workload_params, "%s", params);
    csv_set(row, COL_allocator, "%s", c->alloc->name);
    csv_set(row, COL_config, "%s", c->label);
    csv_set(row, COL_lib_path, "%s", c->lib);
    const char *v = run_probe_get(s, "version");
    csv_set(row, COL_alloc_version, "%s", v ? v : version);
    v = run_probe_get(s, "malloc_so");
    csv_set(row, COL_malloc_so, "%s", v ? v : "");
    csv_set(row, COL_requested_tunables, "%s", c->requested);
    csv_set(row, COL_effective_tunables, "%s", effective);
    csv_set(row, COL_repetition, "%d", rep);
    csv_set(row, COL_status, "%s", run_status_name(s->status));
    csv_set(row, COL_message, "%s", s->message);
    /* A wrong allocator or setting measured nothing we may report. */
    if (s->untrusted)
        return;
    csv_set(row, COL_total_wall_s, "%.6f", s->wall_s);
    csv_set(row, COL_total_user_s, "%.6f", s->user_s);
    csv_set(row, COL_total_sys_s, "%.6f", s->sys_s);
    csv_set(row, COL_ru_maxrss_kib, "%ld", s->maxrss_kib);
    csv_set(row, COL_ru_minflt, "%ld", s->minflt);
    csv_set(row, COL_ru_majflt, "%ld", s->majflt);
    char notes[CSV_FIELD_MAX] = "";
    size_t n = cnt_count(cnt);
    for (size_t i = 0; i < n; i++) {
        const cnt_value_t *t = &s->total[i];
        double total = cnt_scaled(t);
        double region = s->have_region ? cnt_delta(&s->begin[i], &s->end[i]) : NAN;
        char tb[64], rb[64];
        fmt_count(tb, sizeof tb, total, i == EV_TASK_CLOCK);
        fmt_count(rb, sizeof rb, region, i == EV_TASK_CLOCK);
        char note[CNT_REASON_MAX + 32] = "";
        if (!t->supported)
            snprintf(note, sizeof note, "%s", t->reason);
        else if (t->running && t->running < t->enabled)
            snprintf(note, sizeof note, "scaled x%.3f", (double)t->enabled / (double)t->running);
        if (i < EV_FIXED) {
            csv_set(row, total_col[i], "%s", tb);
            csv_set(row, region_col[i], "%s", rb);
            if (note[0])
                note_add(notes, sizeof notes, cnt_name(cnt, i), note);
        } else if (row->nextra + 3 <= CSV_EXTRA_MAX) {
            snprintf(row->extra[row->nextra++], sizeof row->extra[0], "%s", tb);
            snprintf(row->extra[row->nextra++], sizeof row->extra[0], "%s", rb);
            snprintf(row->extra[row->nextra++], sizeof row->extra[0], "%s", note);
        }
    }
    csv_set(row, COL_counter_notes, "%s", notes);
    if (s->have_region) {
        csv_set(row, COL_region_wall_s, "%.6f", s->region_s);
        if (!isnan(s->region_user_s)) {
            csv_set(row, COL_region_user_s, "%.2f", s->region_user_s);
            csv_set(row, COL_region_sys_s, "%.2f", s->region_sys_s);
        }
        if (s->rss_final_kib >= 0)
            csv_set(row, COL_rss_final_kib, "%ld", s->rss_final_kib);
    }
    if (s->have_result && s->status == RUN_OK) {
        csv_set(row, COL_throughput, "%.6g", s->throughput);
        csv_set(row, COL_throughput_unit, "%s", s->unit);
        csv_set(row, COL_region_bytes, "%llu", s->bytes);
        csv_set(row, COL_region_ops, "%llu", s->ops);
        csv_set(row, COL_checksum, "%s", s->checksum);
        if (!isnan(limit) && limit > 0) {
            csv_set(row, COL_limit_throughput, "%.6g", limit);
            csv_set(row, COL_fraction_of_limit, "%.4f", s->throughput / limit);
        }
        if (s->lat_what[0]) {
            csv_set(row, COL_latency_what, "%s", s->lat_what);
            csv_set(row, COL_latency_p50_us, "%.3f", s->lat_p50_us);
            csv_set(row, COL_latency_p99_us, "%.3f", s->lat_p99_us);
            csv_set(row, COL_latency_p999_us, "%.3f", s->lat_p999_us);
            csv_set(row, COL_latency_max_us, "%.3f", s->lat_max_us);
            csv_set(row, COL_latency_count, "%llu", s->lat_count);
        }
        csv_set(row, COL_workload_metrics, "%s", s->extra);
    }
    if (s->rss_samples || s->rss_peak_kib > 0)
        csv_set(row, COL_rss_peak_kib, "%ld", s->rss_peak_kib);
    csv_set(row, COL_rss_samples, "%zu", s->rss_samples);
    /* allocator statistics the probe reported at exit */
    size_t off = 0;
    for (size_t i = 0; i < s->nprobe && off < CSV_FIELD_MAX; i++)
        if (!strncmp(s->probe_key[i], "stat:", 5))
            off += (size_t)snprintf(row->field[COL_alloc_stats] + off, CSV_FIELD_MAX - off, "%s%s=%s",
                                    off ? ";" : "", s->probe_key[i] + 5, s->probe_val[i]);
    (void)buf;
}

/* ---- sweeps and limits ------------------------------------------------------ */

/* Does the workload have the parameter a sweep "NAME=..." names? */
static bool wl_has_param(const wl_t *wl, const char *sweep)
{
    size_t n = strcspn(sweep, "=");
    for (size_t i = 0; i < wl->nparams; i++)
        if (strlen(wl->params[i].name) == n && !strncmp(wl->params[i].name, sweep, n))
            return true;
    return false;
}

/* --sweep NAME=LO..HI (doubling) or NAME=A/B/C: one workload per value, for
 * every workload that has the parameter. */
static int expand_sweep(const char *sweep, wl_args_t *wl, size_t *nw)
{
    const char *eq = strchr(sweep, '=');
    if (!eq || eq == sweep || !eq[1])
        return die_usage("bad --sweep '%s': expected NAME=LO..HI or NAME=A/B/C", sweep);
    char name[64], values[MAX_WORKLOADS][64];
    size_t nv = 0;
    snprintf(name, sizeof name, "%.*s", (int)(eq - sweep), sweep);
    const char *dots = strstr(eq + 1, "..");
    if (dots) {
        char lo_s[64];
        uint64_t lo, hi;
        snprintf(lo_s, sizeof lo_s, "%.*s", (int)(dots - eq - 1), eq + 1);
        if (units_parse_size(lo_s, &lo) || units_parse_size(dots + 2, &hi) || lo == 0 || lo > hi)
            return die_usage("bad --sweep range '%s' (expected e.g. size=64K..256M, doubling)", eq + 1);
        for (uint64_t v = lo; v <= hi && nv < MAX_WORKLOADS; v *= 2) {
            units_format_size(v, values[nv++], sizeof values[0]);
            if (v > UINT64_MAX / 2)
                break;
        }
    } else {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", eq + 1);
        char *save = NULL;
        for (char *v = strtok_r(buf, "/", &save); v && nv < MAX_WORKLOADS; v = strtok_r(NULL, "/", &save))
            snprintf(values[nv++], sizeof values[0], "%s", v);
    }
    static wl_args_t out[MAX_WORKLOADS];
    size_t nout = 0, matched = 0;
    for (size_t w = 0; w < *nw; w++) {
        bool has = false;
        for (size_t i = 0; i < wl[w].wl->nparams; i++)
            has |= !strcmp(wl[w].wl->params[i].name, name);
        if (!has) {
            if (nout >= MAX_WORKLOADS)
                return die_usage("--sweep makes too many workloads (at most %d)", MAX_WORKLOADS);
            out[nout++] = wl[w];
            continue;
        }
        matched++;
        for (size_t k = 0; k < nv; k++) {
            char kv[160], err[512];
            if (nout >= MAX_WORKLOADS)
                return die_usage("--sweep makes too many workloads (at most %d)", MAX_WORKLOADS);
            out[nout] = wl[w];
            snprintf(kv, sizeof kv, "%s=%s", name, values[k]);
            if (wl_set(&out[nout], kv, err, sizeof err))
                return die_usage("--sweep: %s", err);
            nout++;
        }
    }
    if (!matched)
        return die_usage("--sweep %s: no workload given has a parameter '%s'", sweep, name);
    memcpy(wl, out, nout * sizeof *out);
    *nw = nout;
    return 0;
}

/* The workload's own upper bound (wl_t.limit): one sample of the same spec
 * with the allocator taken out of the loop, run under glibc without
 * counters; its throughput, or NAN. */
static double measure_limit(const run_opts_t *o, const wl_args_t *a)
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
    static run_config_t glibc;
    memset(&glibc, 0, sizeof glibc);
    glibc.alloc = alloc_find("glibc");
    snprintf(glibc.label, sizeof glibc.label, "glibc");
    run_sample_t *s = malloc(sizeof *s);
    if (!s)
        return NAN;
    double v = NAN;
    if (run_sample(o, &glibc, &lim, NULL, s, NULL, NULL) == 0 && s->status == RUN_OK && s->have_result)
        v = s->throughput;
    free(s);
    return v;
}

/* ---- run -------------------------------------------------------------------- */

static void on_signal(int sig)
{
    (void)sig;
    run_interrupt();
}

static void usage_run(FILE *out)
{
    fprintf(out,
            "usage: mallocbench run [-m MATRIX] [options]\n"
            "Runs each workload under each allocator configuration, one fresh process per\n"
            "sample, and writes one CSV row per sample (schema: `mallocbench schema`).\n\n"
            "  -m, --matrix FILE       an experiment file (matrices/*.ini); options given after it override\n"
            "  -w, --workload SPEC     NAME[:PARAM=VALUE,...]  (repeatable; default tensor_copy)\n"
            "  -a, --allocators LIST   NAME[=LIBRARY],...      (default: every installed one)\n"
            "  -t, --tunable SPEC      ALLOC:NAME=V1[,V2...]   a list sweeps (\"default\": leave unset);\n"
            "                          several -t: the cross product\n"
            "  -r, --repetitions N     blocks: samples per configuration (default 5)\n"
            "  -o, --output FILE       CSV to write (default results/run-<UTC time>.csv); beside it\n"
            "                          FILE.meta.json (machine, commit) and FILE.rss.csv (RSS series)\n"
            "  -e, --events LIST       extra perf events: libpfm4 names (cycles, instructions,\n"
            "                          dTLB-load-misses, ...) or syscalls:sys_enter_* tracepoints\n"
            "      --sweep NAME=LO..HI one workload per value of a parameter, doubling from LO to HI\n"
            "                          (or NAME=A/B/C), e.g. --sweep size=64K..256M\n"
            "      --seed N            seed of the block order (default: random, recorded in the CSV)\n"
            "      --warmup-runs N     discarded samples per configuration before the first block (default 1)\n"
            "      --adaptive PCT      add blocks until every configuration's median throughput has a\n"
            "                          95%% confidence interval within +-PCT (e.g. 1%%), or --budget runs out\n"
            "      --budget DURATION   time budget for --adaptive (default 30m); --max-blocks N (100)\n"
            "      --shard K/N         run a deterministic 1/N of the samples (merge with `mallocbench merge`)\n"
            "      --resume            continue the plan in --output, skipping the samples it has\n"
            "      --pin CPUS          pin every child to these CPUs (e.g. 1 or 0-1)\n"
            "      --timeout DURATION  kill a sample after this long (default 10m; 0 = none)\n"
            "      --sample-interval DURATION  RSS sampling period (default 10ms)\n"
            "      --no-limit          skip measuring each workload's limit (fraction_of_limit)\n"
            "      --print-commands    print each sample's environment and command line; run nothing\n"
            "      --worker PATH, --probe PATH   use another mallocbench-worker / libmbprobe.so\n"
            "  -q, --quiet             no progress output\n"
            "  -h, --help\n\n"
            "Samples run in randomized blocks: every configuration once per block, in an order\n"
            "shuffled from the seed, so drift hits every configuration alike.\n"
            "Example: mallocbench run -w tensor_copy:size=16M,count=4 -a glibc,jemalloc -r 5 -o results/run.csv\n");
}

/* Everything one invocation works with, resolved from the spec. */
typedef struct {
    size_t nw, ncfg, ncells;
    wl_args_t wl[MAX_WORKLOADS];
    run_config_t cfg[MAX_CONFIGS];
    char versions[MAX_CONFIGS][128];
    double limits[MAX_WORKLOADS];
    const char *extra[MAX_EVENTS];
    size_t nextra;
    char evbuf[SPEC_TEXT];
} resolved_t;

/* Workloads, allocators, tunables and events of a spec, checked against the
 * registries before anything runs. */
static int resolve(const run_spec_t *sp, resolved_t *r)
{
    char err[1024];
    bool swept = false;
    r->nw = 0;
    for (size_t i = 0; i < (sp->nw ? sp->nw : 1); i++) {
        wl_args_t one[MAX_WORKLOADS];
        size_t n = 1;
        if (wl_parse_spec(sp->nw ? sp->workload[i] : "tensor_copy", &one[0], err, sizeof err))
            return die_usage("%s%s%s", sp->matrix[0] ? sp->matrix : "", sp->matrix[0] ? ": " : "", err);
        bool own = sp->nw && sp->wsweep[i][0];
        const char *sweep = own ? sp->wsweep[i] : sp->sweep;
        /* the run-wide --sweep applies to the workloads that have its parameter */
        if (sweep[0] && (own || wl_has_param(one[0].wl, sweep))) {
            if (expand_sweep(sweep, one, &n))
                return 2;
            swept = true;
        }
        if (r->nw + n > MAX_WORKLOADS)
            return die_usage("too many workloads (at most %d)", MAX_WORKLOADS);
        memcpy(&r->wl[r->nw], one, n * sizeof *one);
        r->nw += n;
    }
    if (sp->sweep[0] && !swept)
        return die_usage("--sweep %s: no workload given has a parameter '%.*s'", sp->sweep,
                         (int)strcspn(sp->sweep, "="), sp->sweep);
    static sweep_t sweeps[MAX_SWEEPS];
    size_t nsw = 0;
    for (size_t i = 0; i < sp->nt; i++)
        if (parse_tunable(sp->tunable[i], sweeps, &nsw))
            return 2;
    static alloc_choice_t choices[MAX_CONFIGS];
    size_t nch = 0;
    if (sp->allocators[0]) {
        if (parse_allocators(sp->allocators, choices, &nch, false))
            return 2;
    } else {
        char all[256];
        size_t off = 0;
        for (size_t i = 0; i < alloc_count(); i++)
            off += (size_t)snprintf(all + off, sizeof all - off, "%s%s", i ? "," : "", alloc_at(i)->name);
        if (parse_allocators(all, choices, &nch, true))
            return 2;
    }
    for (size_t i = 0; i < nsw; i++) {
        bool found = false;
        for (size_t k = 0; k < nch; k++)
            found |= choices[k].alloc == sweeps[i].alloc;
        if (!found)
            return die_usage("tunable %s:%s given, but %s is not among the allocators to run",
                             sweeps[i].alloc->name, sweeps[i].name, sweeps[i].alloc->name);
    }
    r->ncfg = 0;
    for (size_t i = 0; i < nch; i++)
        if (expand_configs(&choices[i], sweeps, nsw, r->cfg, &r->ncfg))
            return 2;
    r->ncells = r->nw * r->ncfg;
    r->nextra = 0;
    snprintf(r->evbuf, sizeof r->evbuf, "%s", sp->events);
    char *save = NULL;
    for (char *e = strtok_r(r->evbuf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (r->nextra >= MAX_EVENTS)
            return die_usage("too many events (at most %d)", MAX_EVENTS);
        r->extra[r->nextra++] = e;
    }
    return 0;
}

/* The plan's identity: its cells in order and its seed (not the number of
 * blocks, so a resumed or adaptive run keeps it; not the shard). */
static void plan_identity(const resolved_t *r, uint64_t seed, char *out, size_t len)
{
    uint64_t h = PLAN_HASH_INIT;
    char buf[2048];
    for (size_t w = 0; w < r->nw; w++) {
        wl_format_args(&r->wl[w], ',', buf, sizeof buf);
        h = plan_hash(plan_hash(h, r->wl[w].wl->name), buf);
    }
    for (size_t k = 0; k < r->ncfg; k++)
        h = plan_hash(h, r->cfg[k].label);
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    h = plan_hash(h, buf);
    snprintf(out, len, "%016llx", (unsigned long long)h);
}

/* --resume: the (block, position) pairs the file already has for this plan. */
static int load_done(const char *path, const char *matrix_id, bool *done, unsigned max_blocks,
                     size_t ncells, size_t *ndone)
{
    csv_table_t t;
    char err[512];
    *ndone = 0;
    if (csv_read(path, &t, err, sizeof err))
        return die_usage("%s", err);
    int cm = csv_col(&t, "matrix_id"), cb = csv_col(&t, "block"), cp = csv_col(&t, "position");
    int cv = csv_col(&t, "schema_version");
    if (cm < 0 || cb < 0 || cp < 0 || cv < 0) {
        csv_table_free(&t);
        return die_usage("cannot resume '%s': it has no matrix_id/block/position columns", path);
    }
    for (size_t i = 0; i < t.nrows; i++) {
        if (strcmp(t.rows[i][cv], CSV_SCHEMA_VERSION) || strcmp(t.rows[i][cm], matrix_id)) {
            int rc = die_usage("cannot resume '%s': it holds another plan (matrix_id %s, this one %s); "
                               "use the same workloads, allocators, tunables and --seed", path,
                               t.rows[i][cm], matrix_id);
            csv_table_free(&t);
            return rc;
        }
        unsigned long b = strtoul(t.rows[i][cb], NULL, 10), p = strtoul(t.rows[i][cp], NULL, 10);
        if (b < max_blocks && p < ncells && !done[b * ncells + p]) {
            done[b * ncells + p] = true;
            (*ndone)++;
        }
    }
    csv_table_free(&t);
    return 0;
}

static int parse_pin(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    char buf[64];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long a = strtoul(t, &end, 10), b = a;
        if (end == t)
            return -EINVAL;
        if (*end == '-') {
            char *e2;
            b = strtoul(end + 1, &e2, 10);
            if (e2 == end + 1 || *e2)
                return -EINVAL;
        } else if (*end) {
            return -EINVAL;
        }
        if (a > b || b >= CPU_SETSIZE)
            return -EINVAL;
        for (unsigned long c = a; c <= b; c++)
            CPU_SET(c, set);
    }
    return CPU_COUNT(set) ? 0 : -EINVAL;
}

static void fmt_duration(double s, char *buf, size_t len)
{
    if (s < 0 || isnan(s))
        snprintf(buf, len, "?");
    else if (s < 120)
        snprintf(buf, len, "%.0fs", s);
    else if (s < 7200)
        snprintf(buf, len, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else
        snprintf(buf, len, "%.1fh", s / 3600);
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Relative half-width of the 95% CI of a cell's median throughput; INFINITY
 * when it has too few samples. */
static double cell_ci(const double *v, size_t n)
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

int cmd_run(int argc, char **argv, int full_argc, char **full_argv)
{
    static const struct option opts[] = {
        {"workload", required_argument, NULL, 'w'},   {"allocators", required_argument, NULL, 'a'},
        {"tunable", required_argument, NULL, 't'},    {"repetitions", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'},     {"events", required_argument, NULL, 'e'},
        {"matrix", required_argument, NULL, 'm'},     {"timeout", required_argument, NULL, 'T'},
        {"sample-interval", required_argument, NULL, 'S'}, {"print-commands", no_argument, NULL, 'P'},
        {"worker", required_argument, NULL, 'W'},     {"probe", required_argument, NULL, 'R'},
        {"quiet", no_argument, NULL, 'q'},            {"sweep", required_argument, NULL, 'X'},
        {"no-limit", no_argument, NULL, 'L'},         {"seed", required_argument, NULL, 's'},
        {"warmup-runs", required_argument, NULL, 'U'}, {"adaptive", required_argument, NULL, 'A'},
        {"budget", required_argument, NULL, 'B'},     {"max-blocks", required_argument, NULL, 'M'},
        {"shard", required_argument, NULL, 'K'},      {"resume", no_argument, NULL, 'Z'},
        {"pin", required_argument, NULL, 'p'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static const char *short_opts = "w:a:t:r:o:e:m:qh";
    static run_spec_t sp;
    spec_defaults(&sp);
    char err[1024];
    int c;
    /* a matrix first, whatever its place: the other options override it */
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, short_opts, opts, NULL)) != -1)
        if (c == 'm' && matrix_load(optarg, &sp, err, sizeof err))
            return die_usage("%s", err);
    opterr = 1;
    bool print_only = false, quiet = false, resume = false, w_given = false, t_given = false;
    unsigned shard_k = 1, shard_n = 1;
    run_opts_t o = {0};
    optind = 1;
    while ((c = getopt_long(argc, argv, short_opts, opts, NULL)) != -1) {
        uint64_t u;
        switch (c) {
        case 'm': break;
        case 'w':
            if (!w_given)
                sp.nw = 0; /* -w replaces the matrix's workloads */
            w_given = true;
            if (sp.nw >= SPEC_MAX_WORKLOADS)
                return die_usage("too many -w options");
            snprintf(sp.workload[sp.nw], SPEC_TEXT, "%s", optarg);
            sp.wsweep[sp.nw++][0] = '\0';
            break;
        case 'a': snprintf(sp.allocators, sizeof sp.allocators, "%s", optarg); break;
        case 't':
            if (!t_given)
                sp.nt = 0;
            t_given = true;
            if (sp.nt >= SPEC_MAX_TUNABLES)
                return die_usage("too many -t options");
            snprintf(sp.tunable[sp.nt++], SPEC_TEXT, "%s", optarg);
            break;
        case 'r':
            if (units_parse_u64(optarg, &sp.reps) || sp.reps < 1 || sp.reps > 100000)
                return die_usage("bad repetition count '%s' (expected 1 to 100000)", optarg);
            break;
        case 'o': snprintf(sp.output, sizeof sp.output, "%s", optarg); break;
        case 'e': snprintf(sp.events, sizeof sp.events, "%s", optarg); break;
        case 'T':
            if (units_parse_duration(optarg, &sp.timeout_s))
                return die_usage("bad --timeout '%s' (expected a duration such as 90s or 10m)", optarg);
            break;
        case 'S':
            if (units_parse_duration(optarg, &sp.sample_interval_s) || sp.sample_interval_s < 0.001)
                return die_usage("bad --sample-interval '%s' (expected a duration of at least 1ms)", optarg);
            break;
        case 'P': print_only = true; break;
        case 'X': snprintf(sp.sweep, sizeof sp.sweep, "%s", optarg); break;
        case 'L': sp.limit = false; break;
        case 's':
            if (units_parse_u64(optarg, &sp.seed))
                return die_usage("bad --seed '%s' (expected a non-negative integer)", optarg);
            sp.seed_given = true;
            break;
        case 'U':
            if (units_parse_u64(optarg, &u) || u > 100)
                return die_usage("bad --warmup-runs '%s' (expected 0 to 100)", optarg);
            sp.warmup_runs = (unsigned)u;
            break;
        case 'A': {
            char num[64];
            double pct;
            snprintf(num, sizeof num, "%s", optarg);
            size_t n = strlen(num);
            if (n && num[n - 1] == '%')
                num[n - 1] = '\0';
            if (units_parse_double(num, &pct) || pct <= 0 || pct > 100)
                return die_usage("bad --adaptive '%s' (expected a target such as 1%%)", optarg);
            sp.adaptive = pct / 100;
            break;
        }
        case 'B':
            if (units_parse_duration(optarg, &sp.budget_s) || sp.budget_s <= 0)
                return die_usage("bad --budget '%s' (expected a duration such as 30m)", optarg);
            break;
        case 'M':
            if (units_parse_u64(optarg, &u) || u < 1 || u > 100000)
                return die_usage("bad --max-blocks '%s' (expected 1 to 100000)", optarg);
            sp.max_blocks = (unsigned)u;
            break;
        case 'K':
            if (plan_parse_shard(optarg, &shard_k, &shard_n))
                return die_usage("bad --shard '%s' (expected K/N with 1 <= K <= N)", optarg);
            break;
        case 'Z': resume = true; break;
        case 'p': snprintf(sp.pin, sizeof sp.pin, "%s", optarg); break;
        case 'W': o.worker = optarg; break;
        case 'R': o.probe = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage_run(stdout); return 0;
        default: usage_run(stderr); return 2;
        }
    }
    if (optind < argc)
        return die_usage("run: unexpected argument '%s' (see mallocbench run --help)", argv[optind]);
    if (sp.adaptive > 0 && shard_n > 1)
        return die_usage("--adaptive and --shard do not mix: an adaptive plan is not known in advance");
    if (resume && !sp.output[0])
        return die_usage("--resume needs the output to continue (-o FILE)");
    if (sp.adaptive > 0 && sp.budget_s <= 0)
        sp.budget_s = 1800;
    o.timeout_s = sp.timeout_s;
    o.sample_interval_s = sp.sample_interval_s;
    if (sp.pin[0]) {
        if (parse_pin(sp.pin, &o.cpus))
            return die_usage("bad --pin '%s' (expected CPUs such as 1 or 0-1)", sp.pin);
        o.pin = true;
    }

    static resolved_t r;
    if (resolve(&sp, &r))
        return 2;
    char worker[PATH_MAX], probe[PATH_MAX];
    if (find_tools(&o, worker, probe, sizeof worker))
        return 2;
    if (!sp.seed_given) {
        uint32_t rnd = 0;
        if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
            rnd = (uint32_t)getpid() ^ (uint32_t)time(NULL);
        sp.seed = rnd;
    }
    unsigned blocks = sp.adaptive > 0 ? sp.max_blocks : (unsigned)sp.reps;
    size_t *order = calloc(r.ncells ? r.ncells : 1, sizeof *order);
    if (!order)
        return die_usage("out of memory");

    if (print_only) {
        for (unsigned b = 0; b < (unsigned)sp.reps; b++) {
            plan_block_order(sp.seed, b, r.ncells, order);
            for (size_t p = 0; p < r.ncells; p++) {
                if (!plan_in_shard(b, p, r.ncells, shard_k, shard_n))
                    continue;
                size_t w = order[p] / r.ncfg, k = order[p] % r.ncfg;
                char params[1024];
                wl_format_args(&r.wl[w], ',', params, sizeof params);
                printf("# block %u position %zu: %s(%s) %s\n", b, p, r.wl[w].wl->name, params, r.cfg[k].label);
                run_print_command(stdout, &o, &r.cfg[k], &r.wl[w]);
            }
        }
        free(order);
        return 0;
    }

    cnt_set_t *cnt = NULL;
    if (cnt_set_new(&cnt, r.extra, r.nextra, err, sizeof err)) {
        free(order);
        return die_usage("%s", err);
    }
    row_ctx_t x = {.shard = ""};
    char shard_txt[32] = "";
    if (shard_n > 1)
        snprintf(shard_txt, sizeof shard_txt, "%u/%u", shard_k, shard_n);
    x.shard = shard_txt;
    plan_identity(&r, sp.seed, x.matrix_id, sizeof x.matrix_id);
    x.seed = sp.seed;

    /* output files: refuse an unwritable one (or a resume of another plan) before any run */
    char run_id[64], output[PATH_MAX];
    time_t now = time(NULL);
    unsigned short rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned short)getpid();
    strftime(run_id, sizeof run_id, "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(run_id + strlen(run_id), sizeof run_id - strlen(run_id), "-%04x", rnd);
    x.run_id = run_id;
    if (sp.output[0]) {
        snprintf(output, sizeof output, "%s", sp.output);
    } else {
        char ts[32];
        strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
        snprintf(output, sizeof output, "results/run-%s.csv", ts);
    }
    char meta_path[PATH_MAX], rss_path[PATH_MAX];
    path_with_suffix(output, ".meta.json", meta_path, sizeof meta_path);
    path_with_suffix(output, ".rss.csv", rss_path, sizeof rss_path);
    static char extra_names[CSV_EXTRA_MAX][96];
    const char *extra_ptrs[CSV_EXTRA_MAX];
    size_t nextra_cols = 0;
    for (size_t i = 0; i < r.nextra; i++) {
        static const char *const pre[] = {"total_", "region_", "note_"};
        for (int k = 0; k < 3; k++) {
            snprintf(extra_names[nextra_cols], 96, "%s%s", pre[k], r.extra[i]);
            extra_ptrs[nextra_cols] = extra_names[nextra_cols];
            nextra_cols++;
        }
    }
    bool *done = calloc((size_t)blocks * (r.ncells ? r.ncells : 1), sizeof *done);
    if (!done)
        return die_usage("out of memory");
    size_t ndone = 0;
    csv_writer_t csv;
    int rc;
    if (resume && access(output, F_OK) == 0) {
        if (load_done(output, x.matrix_id, done, blocks, r.ncells, &ndone))
            return 2;
        rc = csv_open_append(&csv, output, extra_ptrs, nextra_cols, err, sizeof err);
        if (rc)
            return die_usage("%s", err);
    } else {
        rc = csv_open(&csv, output, extra_ptrs, nextra_cols);
        if (rc) {
            cnt_set_free(cnt);
            return die_usage("cannot write '%s': %s", output, strerror(-rc));
        }
    }
    FILE *series = fopen(rss_path, resume ? "ae" : "we");
    if (!series) {
        rc = errno;
        csv_close(&csv);
        cnt_set_free(cnt);
        return die_usage("cannot write '%s': %s", rss_path, strerror(rc));
    }
    if (!resume || ftell(series) == 0)
        fputs("run_id,sample,t_s,rss_kib\n", series);

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    bool tty = isatty(2) && !quiet;

    /* pre-flight: every configuration proves itself before anything is measured */
    for (size_t k = 0; k < r.ncfg; k++) {
        if (verify_preflight(&o, &r.cfg[k], r.versions[k], sizeof r.versions[k], err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            csv_close(&csv);
            fclose(series);
            if (!resume) {
                unlink(output);
                unlink(rss_path);
            }
            cnt_set_free(cnt);
            return run_interrupted() ? 130 : 1;
        }
        if (!quiet)
            fprintf(stderr, "%s: %-40s %s %s\n", prog, r.cfg[k].label, r.versions[k],
                    r.cfg[k].lib[0] ? r.cfg[k].lib : "(libc)");
    }
    /* limits are measured block by block, beside the samples they bound */
    for (size_t w = 0; w < r.nw; w++)
        r.limits[w] = NAN;
    rc = write_sidecar(meta_path, run_id, full_argc, full_argv, r.cfg, r.ncfg, r.versions, &o, r.wl,
                       sp.limit ? r.limits : NULL, r.nw);
    if (rc)
        fprintf(stderr, "%s: warning: cannot write '%s': %s\n", prog, meta_path, strerror(-rc));
    if (!quiet) {
        char nblocks[32];
        if (sp.adaptive > 0)
            snprintf(nblocks, sizeof nblocks, "adaptive (+-%.3g%%)", sp.adaptive * 100);
        else
            snprintf(nblocks, sizeof nblocks, "%llu", (unsigned long long)sp.reps);
        fprintf(stderr, "%s: plan %s, seed %llu: %zu configurations x %s blocks%s%s%s\n", prog, x.matrix_id,
                (unsigned long long)sp.seed, r.ncells, nblocks, shard_n > 1 ? ", shard " : "", shard_txt,
                ndone ? ", resuming" : "");
    }

    char host[256];
    sysinfo_hostname(host, sizeof host);
    x.host = host;
    csv_row_t *row = malloc(sizeof *row);
    run_sample_t *s = malloc(sizeof *s);
    double *tput = calloc((size_t)blocks * (r.ncells ? r.ncells : 1), sizeof *tput);
    size_t *ntput = calloc(r.ncells ? r.ncells : 1, sizeof *ntput);
    bool *converged = calloc(r.ncells ? r.ncells : 1, sizeof *converged);
    if (!row || !s || !tput || !ntput || !converged)
        return die_usage("out of memory");

    /* warm-up samples: discarded, one cell at a time in block-0 order */
    plan_block_order(sp.seed, 0, r.ncells, order);
    for (unsigned wu = 0; wu < sp.warmup_runs && !run_interrupted(); wu++)
        for (size_t p = 0; p < r.ncells && !run_interrupted(); p++) {
            if (!plan_in_shard(0, p, r.ncells, shard_k, shard_n))
                continue;
            size_t w = order[p] / r.ncfg, k = order[p] % r.ncfg;
            if (run_sample(&o, &r.cfg[k], &r.wl[w], cnt, s, NULL, NULL))
                break;
            if (tty)
                fprintf(stderr, "\r\033[Kwarm-up %zu/%zu: %s %s", p + 1, r.ncells, r.wl[w].wl->name,
                        r.cfg[k].label);
        }

    size_t planned = 0;
    for (unsigned b = 0; b < (unsigned)sp.reps && b < blocks; b++)
        for (size_t p = 0; p < r.ncells; p++)
            planned += plan_in_shard(b, p, r.ncells, shard_k, shard_n) && !done[b * r.ncells + p];
    size_t nrun = 0, nok = 0, nbad = 0;
    double t_start = mono_now(), spent = 0;
    int exit_code = 0;
    unsigned b;
    for (b = 0; b < blocks && !run_interrupted(); b++) {
        if (sp.adaptive > 0 && b >= (sp.reps > 6 ? sp.reps : 6)) {
            bool all = true;
            for (size_t i = 0; i < r.ncells; i++) {
                converged[i] = cell_ci(&tput[i * blocks], ntput[i]) <= sp.adaptive;
                all &= converged[i];
            }
            if (all || mono_now() - t_start > sp.budget_s)
                break;
        }
        plan_block_order(sp.seed, b, r.ncells, order);
        /* each workload's limit, measured at the start of the block that uses it,
         * so a row's fraction_of_limit compares samples taken side by side */
        for (size_t w = 0; w < r.nw && sp.limit && !run_interrupted(); w++) {
            bool used = false;
            for (size_t p = 0; p < r.ncells && !used; p++)
                used = order[p] / r.ncfg == w && plan_in_shard(b, p, r.ncells, shard_k, shard_n) &&
                       !done[b * r.ncells + p] && !converged[order[p]];
            r.limits[w] = used ? measure_limit(&o, &r.wl[w]) : NAN;
        }
        for (size_t p = 0; p < r.ncells && !run_interrupted(); p++) {
            size_t cell = order[p], w = cell / r.ncfg, k = cell % r.ncfg;
            if (!plan_in_shard(b, p, r.ncells, shard_k, shard_n) || done[b * r.ncells + p] ||
                converged[cell])
                continue;
            char ts[40], tag[96];
            struct timespec rt;
            clock_gettime(CLOCK_REALTIME, &rt);
            strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime(&rt.tv_sec));
            snprintf(ts + strlen(ts), sizeof ts - strlen(ts), ".%03ldZ", rt.tv_nsec / 1000000);
            snprintf(tag, sizeof tag, "%s,%zu", run_id, nrun);
            double t0 = mono_now();
            rc = run_sample(&o, &r.cfg[k], &r.wl[w], cnt, s, series, tag);
            if (rc) {
                fprintf(stderr, "%s%s: cannot start a sample: %s\n", tty ? "\n" : "", prog, strerror(-rc));
                exit_code = 1;
                goto out;
            }
            if (run_interrupted())
                break; /* the sample cut short is dropped whole */
            spent += mono_now() - t0;
            char effective[CSV_FIELD_MAX];
            effective[0] = '\0';
            verify_sample(&r.cfg[k], s, effective, sizeof effective);
            fill_row(row, &x, nrun, b, p, &r.wl[w], &r.cfg[k], r.versions[k], (int)b, s, effective, cnt, ts,
                     r.limits[w]);
            if (csv_write_row(&csv, row)) {
                fprintf(stderr, "%s: cannot write '%s': %s\n", prog, output, strerror(errno));
                exit_code = 1;
                goto out;
            }
            fflush(series);
            nrun++;
            if (s->status == RUN_OK) {
                nok++;
                if (s->have_result)
                    tput[cell * blocks + ntput[cell]++] = s->throughput;
            } else {
                nbad++;
            }
            if (quiet)
                continue;
            char figure[160];
            if (s->status == RUN_OK)
                snprintf(figure, sizeof figure, "%.3g %s, %s faults, %.2fs",
                         strcmp(s->unit, "B/s") ? s->throughput : s->throughput / 1e9,
                         strcmp(s->unit, "B/s") ? s->unit : "GB/s", row->field[COL_region_minor_faults],
                         s->wall_s);
            else
                snprintf(figure, sizeof figure, "%s: %s", run_status_name(s->status), s->message);
            if (tty) {
                char eta[32] = "?";
                if (sp.adaptive <= 0 && nrun)
                    fmt_duration(spent / (double)nrun * (double)(planned > nrun ? planned - nrun : 0), eta,
                                 sizeof eta);
                fprintf(stderr, "\r\033[K[%zu/%zu] block %u, ETA %s | %s %s: %s", nrun,
                        sp.adaptive > 0 ? nrun : planned, b, eta, r.wl[w].wl->name, r.cfg[k].label, figure);
                if (s->status != RUN_OK)
                    fputc('\n', stderr);
            } else {
                fprintf(stderr, "[%zu/%zu] block %u: %s %s: %s\n", nrun, sp.adaptive > 0 ? nrun : planned, b,
                        r.wl[w].wl->name, r.cfg[k].label, figure);
            }
        }
    }
    if (tty)
        fputc('\n', stderr);
    if (sp.adaptive > 0 && !run_interrupted()) {
        size_t bad = 0;
        for (size_t i = 0; i < r.ncells; i++) {
            double ci = cell_ci(&tput[i * blocks], ntput[i]);
            if (ci <= sp.adaptive)
                continue;
            bad++;
            fprintf(stderr, "%s: not converged: %s %s: +-%.2f%% after %zu samples (target +-%.2f%%)\n", prog,
                    r.wl[i / r.ncfg].wl->name, r.cfg[i % r.ncfg].label, isinf(ci) ? 100.0 : ci * 100,
                    ntput[i], sp.adaptive * 100);
        }
        fprintf(stderr, "%s: adaptive: %u blocks, %zu of %zu configurations converged to +-%.2f%% in %s\n", prog,
                b, r.ncells - bad, r.ncells, sp.adaptive * 100,
                (fmt_duration(mono_now() - t_start, err, sizeof err), err));
    }
out:
    csv_close(&csv);
    fclose(series);
    cnt_set_free(cnt);
    free(row);
    free(s);
    free(tput);
    free(ntput);
    free(converged);
    free(done);
    free(order);
    if (!quiet || run_interrupted())
        fprintf(stderr, "%s: %zu samples (%zu ok, %zu not ok) written to %s%s\n", prog, nrun, nok, nbad,
                output, run_interrupted() ? "; interrupted: continue with the same command and --resume" : "");
    if (run_interrupted())
        return 130;
    return exit_code;
}
