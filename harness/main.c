/* main.c - the mallocbench command line: `run` measures workloads under
 * allocators into CSV, `list` shows what is installed and accepted,
 * `schema` prints the CSV schema.  Every input is checked before any run;
 * exit codes: 0 ok, 1 a run failed to start or a check failed, 2 bad usage,
 * 130 interrupted (everything measured so far is in the CSV). */
#include "counters.h"
#include "csv.h"
#include "mb_config.h"
#include "registry.h"
#include "run.h"
#include "sysinfo.h"
#include "units.h"
#include "verify.h"
#include "workload.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
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

#define MAX_WORKLOADS 256
#define MAX_CONFIGS 256
#define MAX_SWEEPS 32
#define MAX_VALUES 32
#define MAX_EVENTS 16

static const char *prog = "mallocbench";

static int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

/* ---- locating our own worker and probe ---------------------------------- */

static int find_beside_self(const char *name, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -errno;
    self[n] = '\0';
    snprintf(out, len, "%s/%s", dirname(self), name);
    if (access(out, R_OK) == 0)
        return 0;
#ifdef MB_LIBDIR
    snprintf(out, len, "%s/%s", MB_LIBDIR, name);
    if (access(out, R_OK) == 0)
        return 0;
#endif
    return -ENOENT;
}

static int find_tools(run_opts_t *o, char *worker, char *probe, size_t len)
{
    if (!o->worker) {
        if (find_beside_self("mallocbench-worker", worker, len))
            return die_usage("cannot find mallocbench-worker beside this program (use --worker PATH)");
        o->worker = worker;
    }
    if (!o->probe) {
        if (find_beside_self("libmbprobe.so", probe, len))
            return die_usage("cannot find libmbprobe.so beside this program (use --probe PATH)");
        o->probe = probe;
    }
    if (access(o->worker, X_OK))
        return die_usage("cannot execute worker '%s': %s", o->worker, strerror(errno));
    if (access(o->probe, R_OK))
        return die_usage("cannot read probe '%s': %s", o->probe, strerror(errno));
    return 0;
}

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
        if (alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_usage("%s", err);
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
        if (isnan(limits[w]))
            fputs(", \"limit_throughput\": null", f);
        else
            fprintf(f, ", \"limit_throughput\": %.6g", limits[w]);
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

static void fill_row(csv_row_t *row, const char *run_id, size_t sample, const char *host,
                     const wl_args_t *a, const run_config_t *c, const char *version, int rep,
                     const run_sample_t *s, const char *effective, const cnt_set_t *cnt,
                     const char *ts, double limit)
{
    char params[1024], buf[64];
    csv_row_clear(row);
    csv_set(row, COL_schema_version, "%s", CSV_SCHEMA_VERSION);
    csv_set(row, COL_run_id, "%s", run_id);
    csv_set(row, COL_sample, "%zu", sample);
    csv_set(row, COL_timestamp, "%s", ts);
    csv_set(row, COL_host, "%s", host);
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

/* The workload's own upper bound (wl_t.limit): the same spec with the
 * allocator taken out of the loop, run under glibc without counters;
 * median throughput of reps samples, or NAN. */
static double measure_limit(const run_opts_t *o, const wl_args_t *a, int reps, bool quiet)
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
    double v[16];
    int n = 0;
    run_sample_t *s = malloc(sizeof *s);
    if (!s)
        return NAN;
    for (int r = 0; r < reps && r < 16 && !run_interrupted(); r++)
        if (run_sample(o, &glibc, &lim, NULL, s, NULL, NULL) == 0 && s->status == RUN_OK && s->have_result)
            v[n++] = s->throughput;
    free(s);
    if (!n)
        return NAN;
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && v[k] < v[k - 1]; k--) {
            double t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    if (!quiet) {
        char params[512];
        wl_format_args(a, ',', params, sizeof params);
        fprintf(stderr, "%s: limit of %s (%s, %s): %.4g %s\n", prog, a->wl->name, params, a->wl->limit,
                med, "per second");
    }
    return med;
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
            "usage: mallocbench run [options]\n"
            "Runs each workload under each allocator configuration, one fresh process per\n"
            "sample, and writes one CSV row per sample (schema: `mallocbench schema`).\n\n"
            "  -w, --workload SPEC     NAME[:PARAM=VALUE,...]  (repeatable; default tensor_copy)\n"
            "  -a, --allocators LIST   NAME[=LIBRARY],...      (default: every installed one)\n"
            "  -t, --tunable SPEC      ALLOC:NAME=V1[,V2...]   a list sweeps; several -t: cross product\n"
            "  -r, --repetitions N     samples per configuration (default 5)\n"
            "  -o, --output FILE       CSV to write (default results/run-<UTC time>.csv); beside it\n"
            "                          FILE.meta.json (machine, commit) and FILE.rss.csv (RSS series)\n"
            "  -e, --events LIST       extra perf events: libpfm4 names (cycles, instructions,\n"
            "                          dTLB-load-misses, ...) or syscalls:sys_enter_* tracepoints\n"
            "      --timeout DURATION  kill a sample after this long (default 10m; 0 = none)\n"
            "      --sample-interval DURATION  RSS sampling period (default 10ms)\n"
            "      --sweep NAME=LO..HI one workload per value of a parameter, doubling from LO to HI\n"
            "                          (or NAME=A/B/C), e.g. --sweep size=64K..256M\n"
            "      --no-limit          skip measuring each workload's limit (fraction_of_limit)\n"
            "      --print-commands    print each sample's environment and command line; run nothing\n"
            "      --worker PATH, --probe PATH   use another mallocbench-worker / libmbprobe.so\n"
            "  -q, --quiet             no progress lines\n"
            "  -h, --help\n\n"
            "Samples run in blocks: every configuration once per block, blocks repeated -r times.\n"
            "Example: mallocbench run -w tensor_copy:size=16M,count=4 -a glibc,jemalloc -r 5 -o results/run.csv\n");
}

static int cmd_run(int argc, char **argv, int full_argc, char **full_argv)
{
    static const struct option opts[] = {
        {"workload", required_argument, NULL, 'w'}, {"allocators", required_argument, NULL, 'a'},
        {"tunable", required_argument, NULL, 't'},  {"repetitions", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'},   {"events", required_argument, NULL, 'e'},
        {"timeout", required_argument, NULL, 'T'},  {"sample-interval", required_argument, NULL, 'S'},
        {"print-commands", no_argument, NULL, 'P'}, {"worker", required_argument, NULL, 'W'},
        {"probe", required_argument, NULL, 'R'},    {"quiet", no_argument, NULL, 'q'},
        {"sweep", required_argument, NULL, 'X'},    {"no-limit", no_argument, NULL, 'L'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    const char *wspecs[MAX_WORKLOADS];
    size_t nw = 0;
    const char *alist = NULL, *output = NULL, *events = NULL, *sweep = NULL;
    bool no_limit = false;
    static sweep_t sweeps[MAX_SWEEPS];
    size_t nsw = 0;
    uint64_t reps = 5;
    bool print_only = false, quiet = false;
    run_opts_t o = {.timeout_s = 600, .sample_interval_s = 0.010};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "w:a:t:r:o:e:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'w':
            if (nw >= MAX_WORKLOADS)
                return die_usage("too many -w options");
            wspecs[nw++] = optarg;
            break;
        case 'a': alist = optarg; break;
        case 't':
            if (parse_tunable(optarg, sweeps, &nsw))
                return 2;
            break;
        case 'r':
            if (units_parse_u64(optarg, &reps) || reps < 1 || reps > 100000)
                return die_usage("bad repetition count '%s' (expected 1 to 100000)", optarg);
            break;
        case 'o': output = optarg; break;
        case 'e': events = optarg; break;
        case 'T':
            if (units_parse_duration(optarg, &o.timeout_s))
                return die_usage("bad --timeout '%s' (expected a duration such as 90s or 10m)", optarg);
            break;
        case 'S':
            if (units_parse_duration(optarg, &o.sample_interval_s) || o.sample_interval_s < 0.001)
                return die_usage("bad --sample-interval '%s' (expected a duration of at least 1ms)", optarg);
            break;
        case 'P': print_only = true; break;
        case 'X': sweep = optarg; break;
        case 'L': no_limit = true; break;
        case 'W': o.worker = optarg; break;
        case 'R': o.probe = optarg; break;
        case 'q': quiet = true; break;
        case 'h': usage_run(stdout); return 0;
        default: usage_run(stderr); return 2;
        }
    }
    if (optind < argc)
        return die_usage("run: unexpected argument '%s' (see mallocbench run --help)", argv[optind]);

    /* workloads */
    static wl_args_t wl[MAX_WORKLOADS];
    if (nw == 0)
        wspecs[nw++] = "tensor_copy";
    for (size_t i = 0; i < nw; i++) {
        char err[512];
        if (wl_parse_spec(wspecs[i], &wl[i], err, sizeof err))
            return die_usage("%s", err);
    }
    if (sweep && expand_sweep(sweep, wl, &nw))
        return 2;
    /* allocators and configurations */
    static alloc_choice_t choices[MAX_CONFIGS];
    size_t nch = 0;
    if (alist) {
        if (parse_allocators(alist, choices, &nch, false))
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
            return die_usage("-t %s:%s given, but %s is not among the allocators to run",
                             sweeps[i].alloc->name, sweeps[i].name, sweeps[i].alloc->name);
    }
    static run_config_t cfg[MAX_CONFIGS];
    size_t ncfg = 0;
    for (size_t i = 0; i < nch; i++)
        if (expand_configs(&choices[i], sweeps, nsw, cfg, &ncfg))
            return 2;
    /* events */
    const char *extra[MAX_EVENTS];
    size_t nextra = 0;
    static char evbuf[1024];
    if (events) {
        snprintf(evbuf, sizeof evbuf, "%s", events);
        char *save = NULL;
        for (char *e = strtok_r(evbuf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
            if (nextra >= MAX_EVENTS)
                return die_usage("too many --events (at most %d)", MAX_EVENTS);
            extra[nextra++] = e;
        }
    }
    char worker[PATH_MAX], probe[PATH_MAX];
    if (find_tools(&o, worker, probe, sizeof worker))
        return 2;

    if (print_only) {
        for (uint64_t r = 0; r < reps; r++)
            for (size_t w = 0; w < nw; w++)
                for (size_t k = 0; k < ncfg; k++) {
                    printf("# %s %s repetition %llu\n", wl[w].wl->name, cfg[k].label, (unsigned long long)r);
                    run_print_command(stdout, &o, &cfg[k], &wl[w]);
                }
        return 0;
    }

    char err[1024];
    cnt_set_t *cnt = NULL;
    if (cnt_set_new(&cnt, extra, nextra, err, sizeof err))
        return die_usage("%s", err);

    /* output files: refuse an unwritable one before any run */
    char run_id[64], default_out[PATH_MAX];
    time_t now = time(NULL);
    unsigned short rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned short)getpid();
    strftime(run_id, sizeof run_id, "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(run_id + strlen(run_id), sizeof run_id - strlen(run_id), "-%04x", rnd);
    if (!output) {
        char ts[32];
        strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
        snprintf(default_out, sizeof default_out, "results/run-%s.csv", ts);
        output = default_out;
    }
    char meta_path[PATH_MAX], rss_path[PATH_MAX];
    path_with_suffix(output, ".meta.json", meta_path, sizeof meta_path);
    path_with_suffix(output, ".rss.csv", rss_path, sizeof rss_path);
    static char extra_names[CSV_EXTRA_MAX][96];
    const char *extra_ptrs[CSV_EXTRA_MAX];
    size_t nextra_cols = 0;
    for (size_t i = 0; i < nextra; i++) {
        snprintf(extra_names[nextra_cols], 96, "total_%s", extra[i]);
        extra_ptrs[nextra_cols] = extra_names[nextra_cols];
        nextra_cols++;
        snprintf(extra_names[nextra_cols], 96, "region_%s", extra[i]);
        extra_ptrs[nextra_cols] = extra_names[nextra_cols];
        nextra_cols++;
        snprintf(extra_names[nextra_cols], 96, "note_%s", extra[i]);
        extra_ptrs[nextra_cols] = extra_names[nextra_cols];
        nextra_cols++;
    }
    csv_writer_t csv;
    int rc = csv_open(&csv, output, extra_ptrs, nextra_cols);
    if (rc) {
        cnt_set_free(cnt);
        return die_usage("cannot write '%s': %s", output, strerror(-rc));
    }
    FILE *series = fopen(rss_path, "we");
    if (!series) {
        rc = errno;
        csv_close(&csv);
        cnt_set_free(cnt);
        return die_usage("cannot write '%s': %s", rss_path, strerror(rc));
    }
    fputs("run_id,sample,t_s,rss_kib\n", series);

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    /* pre-flight: every configuration proves itself before anything is measured */
    static char versions[MAX_CONFIGS][128];
    for (size_t k = 0; k < ncfg; k++) {
        if (verify_preflight(&o, &cfg[k], versions[k], sizeof versions[k], err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            csv_close(&csv);
            fclose(series);
            unlink(output);
            unlink(rss_path);
            cnt_set_free(cnt);
            return 1;
        }
        if (!quiet)
            fprintf(stderr, "%s: %-40s %s %s\n", prog, cfg[k].label, versions[k],
                    cfg[k].lib[0] ? cfg[k].lib : "(libc)");
    }
    static double limits[MAX_WORKLOADS];
    for (size_t w = 0; w < nw; w++)
        limits[w] = no_limit ? NAN : measure_limit(&o, &wl[w], 3, quiet);
    rc = write_sidecar(meta_path, run_id, full_argc, full_argv, cfg, ncfg, versions, &o, wl, limits, nw);
    if (rc)
        fprintf(stderr, "%s: warning: cannot write '%s': %s\n", prog, meta_path, strerror(-rc));

    char host[256];
    sysinfo_hostname(host, sizeof host);
    csv_row_t *row = malloc(sizeof *row);
    run_sample_t *s = malloc(sizeof *s);
    if (!row || !s)
        return die_usage("out of memory");
    size_t total = reps * nw * ncfg, done = 0, nok = 0, nbad = 0;
    int exit_code = 0;
    for (uint64_t r = 0; r < reps && !run_interrupted(); r++) {
        for (size_t w = 0; w < nw && !run_interrupted(); w++) {
            for (size_t k = 0; k < ncfg && !run_interrupted(); k++) {
                char ts[40], tag[96];
                struct timespec rt;
                clock_gettime(CLOCK_REALTIME, &rt);
                strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime(&rt.tv_sec));
                snprintf(ts + strlen(ts), sizeof ts - strlen(ts), ".%03ldZ", rt.tv_nsec / 1000000);
                snprintf(tag, sizeof tag, "%s,%zu", run_id, done);
                rc = run_sample(&o, &cfg[k], &wl[w], cnt, s, series, tag);
                if (rc) {
                    fprintf(stderr, "%s: cannot start a sample: %s\n", prog, strerror(-rc));
                    exit_code = 1;
                    goto out;
                }
                if (run_interrupted())
                    break; /* the sample cut short is dropped whole */
                char effective[CSV_FIELD_MAX];
                effective[0] = '\0';
                verify_sample(&cfg[k], s, effective, sizeof effective);
                fill_row(row, run_id, done, host, &wl[w], &cfg[k], versions[k], (int)r, s, effective,
                         cnt, ts, limits[w]);
                if (csv_write_row(&csv, row)) {
                    fprintf(stderr, "%s: cannot write '%s': %s\n", prog, output, strerror(errno));
                    exit_code = 1;
                    goto out;
                }
                fflush(series);
                done++;
                if (s->status == RUN_OK)
                    nok++;
                else
                    nbad++;
                if (!quiet) {
                    if (s->status == RUN_OK)
                        fprintf(stderr, "[%zu/%zu] %s %s #%llu: %.3g %s, %s faults, %.2fs\n", done, total,
                                wl[w].wl->name, cfg[k].label, (unsigned long long)r,
                                strcmp(s->unit, "B/s") ? s->throughput : s->throughput / 1e9,
                                strcmp(s->unit, "B/s") ? s->unit : "GB/s",
                                row->field[COL_region_minor_faults], s->wall_s);
                    else
                        fprintf(stderr, "[%zu/%zu] %s %s #%llu: %s: %s\n", done, total, wl[w].wl->name,
                                cfg[k].label, (unsigned long long)r, run_status_name(s->status),
                                s->message);
                }
            }
        }
    }
out:
    csv_close(&csv);
    fclose(series);
    cnt_set_free(cnt);
    free(row);
    free(s);
    if (!quiet || run_interrupted())
        fprintf(stderr, "%s: %zu samples (%zu ok, %zu not ok) written to %s%s\n", prog, done, nok, nbad,
                output, run_interrupted() ? " (interrupted)" : "");
    if (run_interrupted())
        return 130;
    return exit_code;
}

/* ---- calibrate -------------------------------------------------------------- */

static double extra_value(const char *extra, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = extra; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
        if (!strncmp(p, key, n) && p[n] == '=')
            return strtod(p + n + 1, NULL);
    return NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmd_calibrate(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: mallocbench calibrate [SIZE]\n"
               "the machine's limits with no allocator in the way (workload `calibrate`, glibc,\n"
               "5 samples, medians): memcpy bandwidth into a pre-faulted buffer of SIZE (64M),\n"
               "and the cost of one minor page fault (fresh mapping, one write per page).\n");
        return 0;
    }
    run_opts_t o = {.timeout_s = 300, .sample_interval_s = 0.05};
    char worker[PATH_MAX], probe[PATH_MAX], err[512];
    if (find_tools(&o, worker, probe, sizeof worker))
        return 2;
    wl_args_t a;
    wl_defaults(wl_find("calibrate"), &a);
    if (argc > 1) {
        char kv[128];
        snprintf(kv, sizeof kv, "size=%s", argv[1]);
        if (wl_set(&a, kv, err, sizeof err))
            return die_usage("%s", err);
    }
    static run_config_t glibc;
    glibc.alloc = alloc_find("glibc");
    snprintf(glibc.label, sizeof glibc.label, "glibc");
    run_sample_t *s = malloc(sizeof *s);
    if (!s)
        return 1;
    double bw[5], fault[5];
    int n = 0;
    for (int r = 0; r < 5; r++) {
        if (run_sample(&o, &glibc, &a, NULL, s, NULL, NULL) || s->status != RUN_OK) {
            fprintf(stderr, "%s: calibrate: %s\n", prog, s->message);
            free(s);
            return 1;
        }
        bw[n] = s->throughput;
        fault[n++] = extra_value(s->extra, "fault_ns");
    }
    free(s);
    qsort(bw, (size_t)n, sizeof *bw, cmp_double);
    qsort(fault, (size_t)n, sizeof *fault, cmp_double);
    char size[32];
    units_format_size(wl_get(&a, "size"), size, sizeof size);
    printf("memcpy bandwidth  %.2f GB/s  (median of %d; %s pre-faulted buffer; range %.2f..%.2f)\n",
           bw[n / 2] / 1e9, n, size, bw[0] / 1e9, bw[n - 1] / 1e9);
    printf("minor page fault  %.0f ns    (median of %d; first write to a fresh 4 KiB page, zeroing "
           "included; range %.0f..%.0f)\n", fault[n / 2], n, fault[0], fault[n - 1]);
    printf("so re-faulting a buffer costs ~%.1fx copying it once\n",
           fault[n / 2] * 1e-9 / (4096.0 / bw[n / 2]));
    return 0;
}

/* ---- list ------------------------------------------------------------------- */

static const char *type_name(tun_type_t t)
{
    static const char *const names[] = {"int", "uint", "size", "bool", "double", "enum"};
    return names[t];
}

static int list_tunables(const char *only)
{
    if (only && !alloc_find(only))
        return die_usage("unknown allocator '%s'", only);
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        if (only && strcmp(only, a->name))
            continue;
        printf("%s %s (%s):\n", a->name, a->tested_version, a->conf_how);
        for (size_t k = 0; k < a->ntunables; k++) {
            const alloc_tunable_t *t = &a->tunables[k];
            char range[96];
            if (t->type == TUN_ENUM)
                snprintf(range, sizeof range, "%s", t->choices);
            else if (t->type == TUN_BOOL)
                snprintf(range, sizeof range, "0|1");
            else
                snprintf(range, sizeof range, "%.15g..%.15g", t->min, t->max);
            printf("  %-30s %-6s default %-18s %-26s %s\n", t->name, type_name(t->type), t->def, range, t->help);
        }
    }
    return 0;
}

static int list_workloads(void)
{
    for (size_t i = 0; i < wl_count(); i++) {
        const wl_t *w = wl_at(i);
        if (w->hidden)
            continue;
        printf("%s: %s\n", w->name, w->help);
        for (size_t k = 0; k < w->nparams; k++) {
            const wl_param_t *p = &w->params[k];
            char lo[32], hi[32], range[96];
            if (p->type == WLP_SIZE || p->type == WLP_SIZES) {
                units_format_size(p->min, lo, sizeof lo);
                units_format_size(p->max, hi, sizeof hi);
            } else {
                snprintf(lo, sizeof lo, "%llu", (unsigned long long)p->min);
                snprintf(hi, sizeof hi, "%llu", (unsigned long long)p->max);
            }
            if (p->type == WLP_ENUM)
                snprintf(range, sizeof range, "%s", p->choices);
            else if (p->type == WLP_STRING)
                snprintf(range, sizeof range, "text");
            else if (p->type == WLP_SIZES)
                snprintf(range, sizeof range, "sizes %s..%s", lo, hi);
            else
                snprintf(range, sizeof range, "%s..%s", lo, hi);
            printf("  %-10s %-8s default %-12s %-22s %s\n", p->name, p->unit, p->def, range, p->help);
        }
    }
    return 0;
}

static int list_allocators(void)
{
    run_opts_t o = {.timeout_s = 30, .sample_interval_s = 0.01};
    char worker[PATH_MAX], probe[PATH_MAX];
    if (find_tools(&o, worker, probe, sizeof worker))
        return 2;
    printf("%-10s %-10s %-48s %s\n", "allocator", "installed", "library", "version (read from inside a child)");
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        static run_config_t c;
        memset(&c, 0, sizeof c);
        c.alloc = a;
        snprintf(c.label, sizeof c.label, "%s", a->name);
        if (a->family != ALLOC_GLIBC && alloc_locate(a, c.lib, sizeof c.lib)) {
            char want[256];
            size_t off = 0;
            for (const char *const *so = a->sonames; *so; so++)
                off += (size_t)snprintf(want + off, sizeof want - off, "%s%s", off ? " or " : "", *so);
            printf("%-10s %-10s %-48s %s\n", a->name, "no", want, "-");
            continue;
        }
        char version[128], err[1024];
        if (verify_preflight(&o, &c, version, sizeof version, err, sizeof err))
            printf("%-10s %-10s %-48s error: %s\n", a->name, "broken", c.lib[0] ? c.lib : "(libc)", err);
        else
            printf("%-10s %-10s %-48s %s\n", a->name, "yes", c.lib[0] ? c.lib : "(libc)", version);
    }
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: mallocbench list allocators|workloads|events|tunables [ALLOCATOR]\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "allocators"))
        return list_allocators();
    if (!strcmp(argv[1], "workloads"))
        return list_workloads();
    if (!strcmp(argv[1], "events"))
        return cnt_list_events(stdout) ? 1 : 0;
    if (!strcmp(argv[1], "tunables"))
        return list_tunables(argc > 2 ? argv[2] : NULL);
    return die_usage("list: unknown topic '%s' (allocators, workloads, events, tunables)", argv[1]);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mallocbench COMMAND [options]\n"
            "Shows what a memory allocator costs a program: throughput, and the kernel work it\n"
            "causes (page faults, madvise/munmap/brk calls, system time, RSS).\n\n"
            "commands:\n"
            "  run      measure workloads under allocators, one CSV row per process run\n"
            "  list     allocators | workloads | events | tunables [ALLOCATOR]\n"
            "  calibrate  the machine's memcpy bandwidth and the cost of one page fault\n"
            "  schema   print the CSV schema (Markdown)\n"
            "  version  print the version\n"
            "`mallocbench COMMAND --help` for each command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("mallocbench %s\n", MB_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1, argc, argv);
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate"))
        return cmd_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "schema")) {
        if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
            printf("usage: mallocbench schema\nprints results/SCHEMA.md: every CSV column with its unit\n");
            return 0;
        }
        csv_print_schema(stdout);
        return 0;
    }
    return die_usage("unknown command '%s' (run, list, schema, version; see --help)", cmd);
}
