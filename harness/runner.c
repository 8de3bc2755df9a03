/* runner.c - `mallocbench run`: turns a run specification (command line
 * or matrix file) into allocator configurations and a plan of samples,
 * proves every configuration, runs the plan in shuffled blocks and writes
 * one CSV row per sample; resumes, shards and adapts its repetitions. */
#include "cli.h"
#include "counters.h"
#include "csv.h"
#include "matrix.h"
#include "output.h"
#include "mb_config.h"
#include "plan.h"
#include "registry.h"
#include "run.h"
#include "sysinfo.h"
#include "units.h"
#include "verify.h"
#include "workload.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

/* ---- where a spec entry came from ----------------------------------------- */

/* "file:line: " of the matrix entry being resolved, or "" (command line), so
 * that errors found after parsing still point at their line. */
static char spec_where[PATH_MAX + 32];

static void spec_at(const run_spec_t *sp, unsigned line)
{
    if (sp->matrix[0] && line)
        snprintf(spec_where, sizeof spec_where, "%s:%u: ", sp->matrix, line);
    else
        spec_where[0] = '\0';
}

/* die_usage with the entry's place in front. */
__attribute__((format(printf, 1, 2))) static int die_spec(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return die_usage("%s%s", spec_where, msg);
}

/* ---- allocator configurations -------------------------------------------- */

typedef struct {
    const alloc_info_t *alloc;
    char label[64];                    /* -t LABEL:...: only that configuration; "" = the family */
    char name[64];                     /* tunable name */
    size_t nvalues;
    char values[MAX_VALUES][64];
} sweep_t;

typedef struct {
    const alloc_info_t *alloc;
    char lib[PATH_MAX];
    bool user_lib;
    char label[64];                    /* -a LABEL=FAMILY[:PATH]; "" = none given */
} alloc_choice_t;

/* The configuration's name in the CSV: the user's label, else the family
 * (@library when one was given), then the tunables asked for. */
static void config_label(run_config_t *c, const char *label)
{
    size_t off = (size_t)snprintf(c->label, sizeof c->label, "%s", label[0] ? label : c->alloc->name);
    if (c->user_lib && !label[0])
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
        if (sw[i].label[0] ? !strcmp(sw[i].label, ch->label) : sw[i].alloc == ch->alloc)
            mine[nmine++] = &sw[i];
    size_t idx[MAX_SWEEPS] = {0};
    for (;;) {
        if (*nout >= MAX_CONFIGS)
            return die_spec("too many configurations (at most %d)", MAX_CONFIGS);
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
                return die_spec("%s", err);
        }
        if (alloc_build_env(c->alloc, c->settings, c->nsettings, &c->env))
            return die_spec("%s: settings too long for the environment", c->alloc->name);
        config_label(c, ch->label);
        /* next combination */
        size_t k = 0;
        while (k < nmine && ++idx[k] == mine[k]->nvalues)
            idx[k++] = 0;
        if (k == nmine)
            break;
    }
    return 0;
}

/* NULL when path is an ELF shared object of this machine's class, else why not. */
static const char *elf_shared_object(const char *path)
{
    unsigned char h[20];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strerror(errno);
    ssize_t n = read(fd, h, sizeof h);
    close(fd);
    if (n < (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG))
        return "not an ELF file";
    if (h[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return "an ELF file of another word size";
    uint16_t type = (uint16_t)(h[EI_DATA] == ELFDATA2LSB ? h[16] | h[17] << 8 : h[16] << 8 | h[17]);
    if (type != ET_DYN)
        return type == ET_EXEC ? "an executable, not a library" : "an ELF file that is not a library";
    return NULL;
}

/* A label the user chose: letters, digits and "._+-", not a family's name
 * unless it is that family's. */
static bool label_ok(const char *l)
{
    if (!*l || strlen(l) >= 48)
        return false;
    for (const char *p = l; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._+-", *p))
            return false;
    return true;
}

static int unknown_allocator(const char *name)
{
    char names[256];
    size_t off = 0;
    for (size_t i = 0; i < alloc_count(); i++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", alloc_at(i)->name);
    return die_spec("unknown allocator '%s' (valid: %s; or LABEL=ALLOCATOR[:LIBRARY])", name, names);
}

/* One item of -a: FAMILY, FAMILY=LIBRARY, or LABEL=FAMILY[:LIBRARY] (a
 * configuration under the user's name, e.g. je-new=jemalloc:/opt/lib.so).
 * 1 when it is skipped (not installed, quiet_missing), else 0 or 2. */
static int parse_allocator(char *item, alloc_choice_t *c, bool quiet_missing)
{
    memset(c, 0, sizeof *c);
    char *eq = strchr(item, '='), *lib = NULL;
    if (eq)
        *eq = '\0';
    const char *family = item;
    if (eq) {
        /* LABEL=FAMILY or LABEL=FAMILY:PATH, when what follows '=' names a family */
        char *colon = strchr(eq + 1, ':');
        char fam[64];
        snprintf(fam, sizeof fam, "%.*s", (int)(colon ? colon - eq - 1 : (long)strlen(eq + 1)), eq + 1);
        if (alloc_find(fam)) {
            if (!label_ok(item))
                return die_spec("bad label '%s' (letters, digits and ._+- only, at most 47)", item);
            snprintf(c->label, sizeof c->label, "%s", item);
            family = eq + 1;
            if (colon) {
                *colon = '\0';
                lib = colon + 1;
            }
        } else {
            lib = eq + 1;
        }
    }
    const alloc_info_t *a = alloc_find(family);
    if (!a)
        return unknown_allocator(family);
    c->alloc = a;
    if (lib) {
        if (a->family == ALLOC_GLIBC)
            return die_spec("glibc's malloc is part of libc and cannot be given a library path");
        if (access(lib, R_OK) != 0)
            return die_spec("cannot read library '%s' for %s: %s", lib, a->name, strerror(errno));
        if (!realpath(lib, c->lib))
            return die_spec("cannot resolve '%s': %s", lib, strerror(errno));
        const char *why = elf_shared_object(c->lib);
        if (why)
            return die_spec("library '%s' for %s is not a shared object: %s", lib, a->name, why);
        c->user_lib = true;
    } else if (a->family != ALLOC_GLIBC && alloc_locate(a, c->lib, sizeof c->lib)) {
        if (quiet_missing) {
            fprintf(stderr, "%s: skipping %s: not installed (%s)\n", prog, a->name, a->sonames[0]);
            return 1;
        }
        return die_spec("%s is not installed: %s not found in the system library directories "
                        "(install its Debian package or use -a %s=PATH)", a->name, a->sonames[0], a->name);
    }
    return 0;
}

static int parse_allocators(const char *list, alloc_choice_t *out, size_t *n, bool quiet_missing)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (*n >= MAX_CONFIGS)
            return die_spec("too many allocators");
        alloc_choice_t *c = &out[*n];
        int rc = parse_allocator(item, c, quiet_missing);
        if (rc == 1)
            continue;
        if (rc)
            return rc;
        /* two configurations under one name could not be told apart */
        for (size_t i = 0; i < *n; i++) {
            const char *mine = c->label[0] ? c->label : c->alloc->name, *other = out[i].label[0] ? out[i].label
                                                                                                : out[i].alloc->name;
            bool same_plain = !c->label[0] && !out[i].label[0] && c->alloc == out[i].alloc &&
                              !strcmp(c->lib, out[i].lib);
            if (same_plain || ((c->label[0] || out[i].label[0]) && !strcmp(mine, other)))
                return die_spec("allocator '%s' given twice: give one of them a label, e.g. %s-b=%s",
                                mine, c->alloc->name, c->alloc->name);
        }
        (*n)++;
    }
    if (*n == 0)
        return die_spec("no allocator to run");
    return 0;
}

/* -t ALLOCATOR:NAME=V1,V2: ALLOCATOR is a family (all its configurations)
 * or a label given with -a (that configuration only). */
static int parse_tunable(const char *spec, sweep_t *sw, size_t *nsw, const alloc_choice_t *ch, size_t nch)
{
    const char *colon = strchr(spec, ':');
    const char *eq = colon ? strchr(colon, '=') : NULL;
    if (!colon || !eq || eq == colon + 1)
        return die_spec("bad tunable '%s': expected ALLOCATOR:NAME=VALUE[,VALUE...]", spec);
    char aname[64];
    snprintf(aname, sizeof aname, "%.*s", (int)(colon - spec), spec);
    const alloc_info_t *a = alloc_find(aname);
    const char *label = "";
    for (size_t i = 0; !a && i < nch; i++)
        if (!strcmp(ch[i].label, aname)) {
            a = ch[i].alloc;
            label = ch[i].label;
        }
    if (!a)
        return die_spec("bad tunable '%s': unknown allocator or label '%s'", spec, aname);
    if (*nsw >= MAX_SWEEPS)
        return die_spec("too many -t options");
    sweep_t *s = &sw[(*nsw)++];
    memset(s, 0, sizeof *s);
    s->alloc = a;
    snprintf(s->label, sizeof s->label, "%s", label);
    snprintf(s->name, sizeof s->name, "%.*s", (int)(eq - colon - 1), colon + 1);
    for (size_t i = 0; i + 1 < *nsw; i++)
        if (sw[i].alloc == a && !strcmp(sw[i].label, s->label) && !strcmp(sw[i].name, s->name))
            return die_spec("tunable %s:%s given twice (use one -t with a comma list)", aname, s->name);
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    char *save = NULL;
    for (char *v = strtok_r(buf, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (s->nvalues >= MAX_VALUES)
            return die_spec("too many values for %s:%s", a->name, s->name);
        char kv[160], err[1024];
        alloc_setting_t st;
        snprintf(kv, sizeof kv, "%s=%s", s->name, v);
        if (strcmp(v, "default") != 0 && alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_spec("%s", err);
        if (!strcmp(v, "default") && !alloc_find_tunable(a, s->name) &&
            alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_spec("%s", err); /* an unknown name still lists the valid ones */
        snprintf(s->values[s->nvalues++], sizeof s->values[0], "%s", v);
    }
    if (!s->nvalues)
        return die_spec("bad tunable '%s': no value", spec);
    return 0;
}

/* ---- output files ---------------------------------------------------------- */

/* The JSON sidecar, through a temporary file and a rename; a resumed run
 * keeps the first run's sidecar inside its own ("previous"). */
static int write_sidecar(const char *path, bool keep_previous, const char *run_id, int argc, char **argv,
                         const run_config_t *cfg, size_t ncfg, char versions[][128],
                         const run_opts_t *o, const wl_args_t *wl, const double *limits, size_t nw)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
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
    if (fclose(f)) {
        free(text);
        return -ENOMEM;
    }
    int rc = out_write_sidecar(path, text, keep_previous);
    free(text);
    return rc;
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

/* The counters of a sample: whole process and measured region, fixed
 * columns then the extra events' three columns each; what was not counted,
 * or scaled, in counter_notes. */
static void fill_counters(csv_row_t *row, const run_sample_t *s, const cnt_set_t *cnt)
{
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
}

static void fill_row(csv_row_t *row, const row_ctx_t *x, size_t sample, unsigned block, size_t position,
                     const wl_args_t *a, const run_config_t *c, const char *version, int rep,
                     const run_sample_t *s, const char *effective, const cnt_set_t *cnt,
                     const char *ts, double limit, uint64_t scale)
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
    csv_set(row, COL_work_scale, "%llu", (unsigned long long)scale);
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
    fill_counters(row, s, cnt);
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
        csv_set(row, COL_metric, "%s", a->wl->metric ? a->wl->metric : "");
        csv_set(row, COL_metric_better, "%s", a->wl->lower_is_better ? "lower" : "higher");
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
        return die_spec("bad --sweep '%s': expected NAME=LO..HI or NAME=A/B/C", sweep);
    char name[64], values[MAX_WORKLOADS][64];
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
        for (size_t w = 0; w < *nw; w++)
            for (size_t i = 0; i < wl[w].wl->nparams; i++)
                if (!strcmp(wl[w].wl->params[i].name, name))
                    size |= wl[w].wl->params[i].type == WLP_SIZE || wl[w].wl->params[i].type == WLP_SIZES;
        for (uint64_t v = lo; v <= hi && nv < MAX_WORKLOADS; v *= 2) {
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
                return die_spec("--sweep makes too many workloads (at most %d)", MAX_WORKLOADS);
            out[nout++] = wl[w];
            continue;
        }
        matched++;
        for (size_t k = 0; k < nv; k++) {
            char kv[160], err[512];
            if (nout >= MAX_WORKLOADS)
                return die_spec("--sweep makes too many workloads (at most %d)", MAX_WORKLOADS);
            out[nout] = wl[w];
            snprintf(kv, sizeof kv, "%s=%s", name, values[k]);
            if (wl_set(&out[nout], kv, err, sizeof err))
                return die_spec("--sweep: %s", err);
            nout++;
        }
    }
    if (!matched)
        return die_spec("--sweep %s: no workload given has a parameter '%s'", sweep, name);
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

/* SIGINT, SIGTERM and SIGHUP: stop after killing the running sample; the
 * sample cut short is not written, so --resume runs it again. */
static void on_signal(int sig)
{
    (void)sig;
    run_interrupt();
}

static void install_signals(void)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file size limit is a failed write, handled as one */
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
            "                          FILE.meta.json (machine, commit) and FILE.rss.csv (RSS series).\n"
            "                          An existing FILE is never overwritten: add --resume or --force.\n"
            "                          `-o -` streams the CSV to stdout, and a device (/dev/null) gets\n"
            "                          the CSV only; --sidecars BASE writes BASE.meta.json, BASE.rss.csv\n"
            "      --force             replace an existing output, once every configuration is proven\n"
            "  -e, --events LIST       extra perf events: libpfm4 names (cycles, instructions,\n"
            "                          dTLB-load-misses, ...) or syscalls:sys_enter_* tracepoints\n"
            "      --sweep NAME=LO..HI one workload per value of a parameter, doubling from LO to HI\n"
            "                          (or NAME=A/B/C), e.g. --sweep size=64K..256M\n"
            "      --seed N            seed of the block order (default: random, recorded in the CSV)\n"
            "      --warmup-runs N     discarded samples per configuration before the first block (default 1)\n"
            "      --min-time DURATION lengthen each configuration's measured region to at least this\n"
            "                          (e.g. 300ms): its work (steps, ops, bytes) is multiplied by a factor\n"
            "                          calibrated once, before the first block, and kept for every block\n"
            "                          (work_scale column); fixed schedules (idle_release) are not scaled\n"
            "      --adaptive PCT      add blocks until every configuration's median throughput has a\n"
            "                          95%% confidence interval within +-PCT (e.g. 1%%), or --budget runs out\n"
            "      --budget DURATION   time budget for --adaptive (default 30m); --max-blocks N (100)\n"
            "      --shard K/N         run a deterministic 1/N of the samples (merge with `mallocbench merge`);\n"
            "                          without --seed every shard derives the same seed from the plan\n"
            "      --resume            continue the plan in --output, skipping the samples it has\n"
            "                          (its seed is read back from the file)\n"
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
        spec_at(sp, sp->nw ? sp->wline[i] : 0);
        if (wl_parse_spec(sp->nw ? sp->workload[i] : "tensor_copy", &one[0], err, sizeof err))
            return die_spec("%s", err);
        bool own = sp->nw && sp->wsweep[i][0];
        const char *sweep = own ? sp->wsweep[i] : sp->sweep;
        /* the run-wide --sweep applies to the workloads that have its parameter */
        if (sweep[0] && (own || wl_has_param(one[0].wl, sweep))) {
            spec_at(sp, own ? sp->wsweep_line[i] : sp->sweep_line);
            if (expand_sweep(sweep, one, &n))
                return 2;
            swept = true;
        }
        if (r->nw + n > MAX_WORKLOADS)
            return die_spec("too many workloads (at most %d)", MAX_WORKLOADS);
        memcpy(&r->wl[r->nw], one, n * sizeof *one);
        r->nw += n;
    }
    spec_at(sp, sp->sweep_line);
    if (sp->sweep[0] && !swept)
        return die_spec("--sweep %s: no workload given has a parameter '%.*s'", sp->sweep,
                        (int)strcspn(sp->sweep, "="), sp->sweep);
    static alloc_choice_t choices[MAX_CONFIGS];
    size_t nch = 0;
    spec_at(sp, sp->allocators_line);
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
    static sweep_t sweeps[MAX_SWEEPS];
    size_t nsw = 0;
    for (size_t i = 0; i < sp->nt; i++) {
        spec_at(sp, sp->tline[i]);
        if (parse_tunable(sp->tunable[i], sweeps, &nsw, choices, nch))
            return 2;
    }
    for (size_t i = 0; i < nsw; i++) {
        bool found = false;
        for (size_t k = 0; k < nch; k++)
            found |= choices[k].alloc == sweeps[i].alloc;
        spec_at(sp, i < sp->nt ? sp->tline[i] : 0);
        if (!found)
            return die_spec("tunable %s:%s given, but %s is not among the allocators to run",
                            sweeps[i].alloc->name, sweeps[i].name, sweeps[i].alloc->name);
    }
    r->ncfg = 0;
    for (size_t i = 0; i < nch; i++)
        if (expand_configs(&choices[i], sweeps, nsw, r->cfg, &r->ncfg))
            return 2;
    r->ncells = r->nw * r->ncfg;
    r->nextra = 0;
    spec_at(sp, sp->events_line);
    snprintf(r->evbuf, sizeof r->evbuf, "%s", sp->events);
    char *save = NULL;
    for (char *e = strtok_r(r->evbuf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        if (r->nextra >= MAX_EVENTS)
            return die_spec("too many events (at most %d)", MAX_EVENTS);
        r->extra[r->nextra++] = e;
    }
    spec_at(sp, 0);
    return 0;
}

/* Hash of the plan's cells in order (workloads with every parameter, then
 * configuration labels). */
static uint64_t plan_cells_hash(const resolved_t *r)
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
static void plan_identity(const resolved_t *r, uint64_t seed, char *out, size_t len)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)seed);
    snprintf(out, len, "%016llx", (unsigned long long)plan_hash(plan_cells_hash(r), buf));
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

/* --resume: the (block, position) pairs the file already has for this plan. */
static int load_done(const csv_table_t *t, const char *path, const char *matrix_id, bool *done,
                     unsigned max_blocks, size_t ncells, size_t *ndone)
{
    *ndone = 0;
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
            else if (b < max_blocks && p < ncells && !done[b * ncells + p]) {
                done[b * ncells + p] = true;
                (*ndone)++;
            }
        }
    }
    return rc;
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

/* --pin: every CPU asked for must be one this process may run on. */
static int check_pin(const char *spec, const cpu_set_t *want)
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
        return die_usage("bad --pin '%s': CPU %d is not available here (CPUs: %s)", spec, c, list);
    }
    return 0;
}

/* Options of `run` that are not part of the spec. */
typedef struct {
    bool print_only, quiet, resume, force;
    unsigned shard_k, shard_n;
    char sidecars[PATH_MAX];
    run_opts_t o;
} run_cli_t;

/* The command line on top of the matrix (read first, wherever -m is).
 * -1 to go on, else the exit code. */
/* One option of `run` on top of the spec; -1 to go on, else the exit code.
 * w_given/t_given: -w and -t replace the matrix's lists on their first use. */
static int set_run_option(int c, const char *arg, run_spec_t *sp, run_cli_t *cli, bool *w_given,
                          bool *t_given)
{
    uint64_t u;
    switch (c) {
    case 'm': break;
    case 'w':
        if (!*w_given)
            sp->nw = 0; /* -w replaces the matrix's workloads */
        *w_given = true;
        if (sp->nw >= SPEC_MAX_WORKLOADS)
            return die_usage("too many -w options");
        snprintf(sp->workload[sp->nw], SPEC_TEXT, "%s", arg);
        sp->wline[sp->nw] = sp->wsweep_line[sp->nw] = 0;
        sp->wsweep[sp->nw++][0] = '\0';
        break;
    case 'a':
        snprintf(sp->allocators, sizeof sp->allocators, "%s", arg);
        sp->allocators_line = 0;
        break;
    case 't':
        if (!*t_given)
            sp->nt = 0;
        *t_given = true;
        if (sp->nt >= SPEC_MAX_TUNABLES)
            return die_usage("too many -t options");
        sp->tline[sp->nt] = 0;
        snprintf(sp->tunable[sp->nt++], SPEC_TEXT, "%s", arg);
        break;
    case 'r':
        if (units_parse_u64(arg, &sp->reps) || sp->reps < 1 || sp->reps > 100000)
            return die_usage("bad repetition count '%s' (expected 1 to 100000)", arg);
        break;
    case 'o': snprintf(sp->output, sizeof sp->output, "%s", arg); break;
    case 'e':
        snprintf(sp->events, sizeof sp->events, "%s", arg);
        sp->events_line = 0;
        break;
    case 'T':
        if (units_parse_duration(arg, &sp->timeout_s))
            return die_usage("bad --timeout '%s' (expected a duration such as 90s or 10m)", arg);
        break;
    case 'S':
        if (units_parse_duration(arg, &sp->sample_interval_s) || sp->sample_interval_s < 0.001)
            return die_usage("bad --sample-interval '%s' (expected a duration of at least 1ms)", arg);
        break;
    case 'P': cli->print_only = true; break;
    case 'X':
        snprintf(sp->sweep, sizeof sp->sweep, "%s", arg);
        sp->sweep_line = 0;
        break;
    case 'L': sp->limit = false; break;
    case 's':
        if (units_parse_u64(arg, &sp->seed))
            return die_usage("bad --seed '%s' (expected a non-negative integer)", arg);
        sp->seed_given = true;
        break;
    case 'U':
        if (units_parse_u64(arg, &u) || u > 100)
            return die_usage("bad --warmup-runs '%s' (expected 0 to 100)", arg);
        sp->warmup_runs = (unsigned)u;
        break;
    case 'N':
        if (units_parse_duration(arg, &sp->min_time_s) || sp->min_time_s > 3600)
            return die_usage("bad --min-time '%s' (expected a duration such as 300ms, at most 1h; 0 = off)",
                             arg);
        break;
    case 'A': {
        char num[64];
        double pct;
        snprintf(num, sizeof num, "%s", arg);
        size_t n = strlen(num);
        if (n && num[n - 1] == '%')
            num[n - 1] = '\0';
        if (units_parse_double(num, &pct) || pct <= 0 || pct > 100)
            return die_usage("bad --adaptive '%s' (expected a target such as 1%%)", arg);
        sp->adaptive = pct / 100;
        break;
    }
    case 'B':
        if (units_parse_duration(arg, &sp->budget_s) || sp->budget_s <= 0)
            return die_usage("bad --budget '%s' (expected a duration such as 30m)", arg);
        break;
    case 'M':
        if (units_parse_u64(arg, &u) || u < 1 || u > 100000)
            return die_usage("bad --max-blocks '%s' (expected 1 to 100000)", arg);
        sp->max_blocks = (unsigned)u;
        break;
    case 'K':
        if (plan_parse_shard(arg, &cli->shard_k, &cli->shard_n))
            return die_usage("bad --shard '%s' (expected K/N with 1 <= K <= N)", arg);
        break;
    case 'Z': cli->resume = true; break;
    case 'F': cli->force = true; break;
    case 'D': snprintf(cli->sidecars, sizeof cli->sidecars, "%s", arg); break;
    case 'p':
        snprintf(sp->pin, sizeof sp->pin, "%s", arg);
        sp->pin_line = 0;
        break;
    case 'W': cli->o.worker = arg; break;
    case 'R': cli->o.probe = arg; break;
    case 'q': cli->quiet = true; break;
    case 'h': usage_run(stdout); return 0;
    default: usage_run(stderr); return 2;
    }
    return -1;
}

static int parse_run_args(int argc, char **argv, run_spec_t *sp, run_cli_t *cli)
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
        {"force", no_argument, NULL, 'F'},            {"sidecars", required_argument, NULL, 'D'},
        {"pin", required_argument, NULL, 'p'},        {"help", no_argument, NULL, 'h'},
        {"min-time", required_argument, NULL, 'N'},
        {NULL, 0, NULL, 0}};
    static const char *short_opts = "w:a:t:r:o:e:m:qh";
    char err[1024];
    int c;
    spec_defaults(sp);
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, short_opts, opts, NULL)) != -1)
        if (c == 'm' && matrix_load(optarg, sp, err, sizeof err))
            return die_usage("%s", err);
    opterr = 1;
    bool w_given = false, t_given = false;
    cli->shard_k = cli->shard_n = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, short_opts, opts, NULL)) != -1) {
        int rc = set_run_option(c, optarg, sp, cli, &w_given, &t_given);
        if (rc >= 0)
            return rc;
    }
    if (optind < argc)
        return die_usage("run: unexpected argument '%s' (see mallocbench run --help)", argv[optind]);
    if (sp->adaptive > 0 && cli->shard_n > 1)
        return die_usage("--adaptive and --shard do not mix: an adaptive plan is not known in advance");
    if (sp->adaptive > 0 && sp->budget_s <= 0)
        sp->budget_s = 1800;
    cli->o.timeout_s = sp->timeout_s;
    cli->o.sample_interval_s = sp->sample_interval_s;
    if (sp->pin[0]) {
        spec_at(sp, sp->pin_line);
        if (parse_pin(sp->pin, &cli->o.cpus))
            return die_spec("bad --pin '%s' (expected CPUs such as 1 or 0-1)", sp->pin);
        if (check_pin(sp->pin, &cli->o.cpus))
            return 2;
        cli->o.pin = true;
    }
    return -1;
}

/* Everything one invocation holds; freed in one place. */
typedef struct {
    run_spec_t sp;
    run_cli_t cli;
    resolved_t r;
    char worker[PATH_MAX], probe[PATH_MAX];
    unsigned blocks;
    out_t out;
    row_ctx_t x;
    csv_table_t prev;              /* --resume: the rows the output already has (read once) */
    char run_id[64], shard_txt[32], host[256];
    cnt_set_t *cnt;
    size_t *order, *ntput, ndone;
    bool *done, *converged;
    double *tput;
    wl_args_t *cell_args;          /* per cell: the workload as run, --min-time scaling applied */
    uint64_t *cell_scale;          /* its work_scale; 0: not calibrated yet */
    csv_row_t *row;
    run_sample_t *s;
    /* progress */
    size_t planned, nrun, nok, nbad;
    double t_start, spent;
} run_ctx_t;

static void ctx_free(run_ctx_t *c)
{
    out_close(&c->out);
    csv_table_free(&c->prev);
    cnt_set_free(c->cnt);
    free(c->order);
    free(c->done);
    free(c->tput);
    free(c->ntput);
    free(c->converged);
    free(c->cell_args);
    free(c->cell_scale);
    free(c->row);
    free(c->s);
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
        sp->seed = plan_cells_hash(&c->r) & 0xffffffffu;
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
    resolved_t *r = &c->r;
    for (unsigned b = 0; b < (unsigned)c->sp.reps; b++) {
        plan_block_order(c->sp.seed, b, r->ncells, c->order);
        for (size_t p = 0; p < r->ncells; p++) {
            if (!plan_in_shard(b, p, r->ncells, c->cli.shard_k, c->cli.shard_n))
                continue;
            size_t w = c->order[p] / r->ncfg, k = c->order[p] % r->ncfg;
            char params[1024];
            wl_format_args(&r->wl[w], ',', params, sizeof params);
            printf("# block %u position %zu: %s(%s) %s\n", b, p, r->wl[w].wl->name, params, r->cfg[k].label);
            run_print_command(stdout, &c->cli.o, &r->cfg[k], &r->wl[w]);
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
        if (verify_preflight(&c->cli.o, &c->r.cfg[k], c->r.versions[k], sizeof c->r.versions[k], err,
                             sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return run_interrupted() ? 130 : 1;
        }
        if (!c->cli.quiet)
            fprintf(stderr, "%s: %-40s %s %s\n", prog, c->r.cfg[k].label, c->r.versions[k],
                    c->r.cfg[k].lib[0] ? c->r.cfg[k].lib : "(libc)");
    }
    return 0;
}

/* Open the outputs and write the sidecar; 0 or the exit code. */
static int open_outputs(run_ctx_t *c, int full_argc, char **full_argv)
{
    static char names[CSV_EXTRA_MAX][96];
    const char *ptrs[CSV_EXTRA_MAX];
    char err[1024];
    size_t n = extra_columns(&c->r, names, ptrs);
    if (out_open(&c->out, ptrs, n, err, sizeof err))
        return die_usage("%s", err);
    for (size_t w = 0; w < c->r.nw; w++)
        c->r.limits[w] = NAN; /* measured block by block, beside the samples they bound */
    if (!c->out.sidecars)
        return 0;
    int rc = write_sidecar(c->out.meta, c->cli.resume && c->out.exists, c->run_id, full_argc, full_argv,
                           c->r.cfg, c->r.ncfg, c->r.versions, &c->cli.o, c->r.wl,
                           c->sp.limit ? c->r.limits : NULL, c->r.nw);
    if (rc)
        fprintf(stderr, "%s: warning: cannot write '%s': %s\n", prog, c->out.meta, strerror(-rc));
    return 0;
}

static void report_progress(run_ctx_t *c, unsigned b, size_t w, size_t k, bool tty)
{
    const run_sample_t *s = c->s;
    char figure[160];
    if (s->status == RUN_OK)
        snprintf(figure, sizeof figure, "%.3g %s, %s faults, %.2fs",
                 strcmp(s->unit, "B/s") ? s->throughput : s->throughput / 1e9,
                 strcmp(s->unit, "B/s") ? s->unit : "GB/s", c->row->field[COL_region_minor_faults], s->wall_s);
    else
        snprintf(figure, sizeof figure, "%s: %s", run_status_name(s->status), s->message);
    size_t of = c->sp.adaptive > 0 ? c->nrun : c->planned;
    if (tty) {
        char eta[32] = "?";
        if (c->sp.adaptive <= 0 && c->nrun)
            fmt_duration(c->spent / (double)c->nrun * (double)(c->planned > c->nrun ? c->planned - c->nrun : 0),
                         eta, sizeof eta);
        fprintf(stderr, "\r\033[K[%zu/%zu] block %u, ETA %s | %s %s: %s", c->nrun, of, b, eta,
                c->r.wl[w].wl->name, c->r.cfg[k].label, figure);
        if (s->status != RUN_OK)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "[%zu/%zu] block %u: %s %s: %s\n", c->nrun, of, b, c->r.wl[w].wl->name,
                c->r.cfg[k].label, figure);
    }
}

/* One sample of the plan, its row written whole or not at all.  0 to go
 * on, 1 when the run must stop (the harness could not start a child, or
 * the output cannot take another row). */
static int one_sample(run_ctx_t *c, unsigned b, size_t p, bool tty)
{
    resolved_t *r = &c->r;
    size_t cell = c->order[p], w = cell / r->ncfg, k = cell % r->ncfg;
    char ts[40], tag[96];
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime(&rt.tv_sec));
    snprintf(ts + strlen(ts), sizeof ts - strlen(ts), ".%03ldZ", rt.tv_nsec / 1000000);
    snprintf(tag, sizeof tag, "%s,%zu", c->run_id, c->nrun);
    double t0 = mono_now();
    int rc = run_sample(&c->cli.o, &r->cfg[k], &c->cell_args[cell], c->cnt, c->s, c->out.series, tag);
    if (rc) {
        fprintf(stderr, "%s%s: cannot start a sample: %s\n", tty ? "\n" : "", prog, strerror(-rc));
        return 1;
    }
    if (run_interrupted()) {
        out_series_rollback(&c->out); /* the sample cut short is dropped whole */
        return 0;
    }
    c->spent += mono_now() - t0;
    char effective[CSV_FIELD_MAX];
    effective[0] = '\0';
    verify_sample(&r->cfg[k], c->s, effective, sizeof effective);
    fill_row(c->row, &c->x, c->nrun, b, p, &r->wl[w], &r->cfg[k], r->versions[k], (int)b, c->s, effective,
             c->cnt, ts, r->limits[w], c->cell_scale[cell]);
    /* the RSS lines first, then the row: a row is there only when all of
     * its sample is; a failed write leaves both files ending whole */
    const char *failed = NULL;
    if ((rc = out_series_flush(&c->out)))
        failed = c->out.rss;
    else if ((rc = csv_write_row(&c->out.w, c->row))) {
        out_series_rollback(&c->out);
        failed = c->out.csv;
    }
    if (failed) {
        fprintf(stderr, "%s%s: cannot write '%s': %s; stopped, the files end at the last whole sample: "
                "make room and continue with the same command and --resume\n", tty ? "\n" : "", prog, failed,
                strerror(-rc));
        return 1;
    }
    out_series_mark(&c->out);
    c->nrun++;
    if (c->s->status == RUN_OK) {
        c->nok++;
        if (c->s->have_result)
            c->tput[cell * c->blocks + c->ntput[cell]++] = c->s->throughput;
    } else {
        c->nbad++;
    }
    if (!c->cli.quiet)
        report_progress(c, b, w, k, tty);
    return 0;
}

/* --resume: the work_scale factors the file's rows were run with (from
 * --min-time), so a configuration's samples stay comparable across
 * invocations, whatever this one's --min-time. */
static void load_scales(run_ctx_t *c)
{
    resolved_t *r = &c->r;
    const csv_table_t *t = &c->prev;
    int cw = csv_col(t, "workload"), cp = csv_col(t, "workload_params"), cc = csv_col(t, "config"),
        cs = csv_col(t, "work_scale");
    static char params[MAX_WORKLOADS][1024];
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
}

/* --min-time: every cell this invocation runs gets a factor on its work so
 * that its measured region lasts at least that long, measured on discarded
 * samples (at most three per cell) and kept for all its blocks.  A
 * workload with a fixed schedule keeps factor 1. */
static void calibrate_cells(run_ctx_t *c, bool tty)
{
    resolved_t *r = &c->r;
    double want = c->sp.min_time_s;
    if (want <= 0) { /* the work as given, unless a resumed file said otherwise */
        for (size_t i = 0; i < r->ncells; i++)
            c->cell_scale[i] = c->cell_scale[i] ? c->cell_scale[i] : 1;
        return;
    }
    bool *needed = calloc(r->ncells ? r->ncells : 1, sizeof *needed);
    size_t nneeded = 0, ndone = 0;
    for (unsigned b = 0; needed && b < c->blocks; b++) {
        plan_block_order(c->sp.seed, b, r->ncells, c->order);
        for (size_t p = 0; p < r->ncells; p++)
            if (plan_in_shard(b, p, r->ncells, c->cli.shard_k, c->cli.shard_n) && !c->done[b * r->ncells + p] &&
                !needed[c->order[p]]) {
                needed[c->order[p]] = true;
                nneeded++;
            }
    }
    for (size_t i = 0; i < r->ncells; i++) {
        if (c->cell_scale[i])
            continue;
        c->cell_scale[i] = 1;
        if (run_interrupted() || !needed || !needed[i] || !r->wl[i / r->ncfg].wl->scale)
            continue;
        if (tty)
            fprintf(stderr, "\r\033[Kcalibrating --min-time %zu/%zu: %s %s", ++ndone, nneeded,
                    r->wl[i / r->ncfg].wl->name, r->cfg[i % r->ncfg].label);
        for (int round = 0; round < 3 && !run_interrupted(); round++) {
            const run_sample_t *s = c->s;
            if (run_sample(&c->cli.o, &r->cfg[i % r->ncfg], &c->cell_args[i], c->cnt, c->s, NULL, NULL) ||
                s->status != RUN_OK || !s->have_result || !(s->region_s > 0) || s->region_s >= want)
                break;
            /* 10% over the target, so that a sample a little faster than
             * this one still lasts long enough */
            double f = (double)c->cell_scale[i] * want * 1.1 / s->region_s;
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

/* Discarded samples, one cell at a time in block-0 order. */
static void warm_up(run_ctx_t *c, bool tty)
{
    resolved_t *r = &c->r;
    plan_block_order(c->sp.seed, 0, r->ncells, c->order);
    for (unsigned wu = 0; wu < c->sp.warmup_runs && !run_interrupted(); wu++)
        for (size_t p = 0; p < r->ncells && !run_interrupted(); p++) {
            if (!plan_in_shard(0, p, r->ncells, c->cli.shard_k, c->cli.shard_n))
                continue;
            size_t w = c->order[p] / r->ncfg, k = c->order[p] % r->ncfg;
            if (run_sample(&c->cli.o, &r->cfg[k], &c->cell_args[c->order[p]], c->cnt, c->s, NULL, NULL))
                break;
            if (tty)
                fprintf(stderr, "\r\033[Kwarm-up %zu/%zu: %s %s", p + 1, r->ncells, r->wl[w].wl->name,
                        r->cfg[k].label);
        }
}

/* The blocks: each in its shuffled order, each workload's limit measured at
 * the start of the block that uses it; adaptive runs stop once every cell
 * has converged.  Returns the exit code and the blocks run in *nblocks. */
static int run_blocks(run_ctx_t *c, bool tty, unsigned *nblocks)
{
    resolved_t *r = &c->r;
    run_spec_t *sp = &c->sp;
    unsigned k = c->cli.shard_k, n = c->cli.shard_n;
    unsigned b;
    for (b = 0; b < c->blocks && !run_interrupted(); b++) {
        if (sp->adaptive > 0 && b >= (sp->reps > 6 ? sp->reps : 6)) {
            bool all = true;
            for (size_t i = 0; i < r->ncells; i++) {
                c->converged[i] = cell_ci(&c->tput[i * c->blocks], c->ntput[i]) <= sp->adaptive;
                all &= c->converged[i];
            }
            if (all || mono_now() - c->t_start > sp->budget_s)
                break;
        }
        plan_block_order(sp->seed, b, r->ncells, c->order);
        for (size_t w = 0; w < r->nw && sp->limit && !run_interrupted(); w++) {
            bool used = false;
            for (size_t p = 0; p < r->ncells && !used; p++)
                used = c->order[p] / r->ncfg == w && plan_in_shard(b, p, r->ncells, k, n) &&
                       !c->done[b * r->ncells + p] && !c->converged[c->order[p]];
            r->limits[w] = used ? measure_limit(&c->cli.o, &r->wl[w]) : NAN;
        }
        for (size_t p = 0; p < r->ncells && !run_interrupted(); p++) {
            if (!plan_in_shard(b, p, r->ncells, k, n) || c->done[b * r->ncells + p] ||
                c->converged[c->order[p]])
                continue;
            if (one_sample(c, b, p, tty)) {
                *nblocks = b;
                return 1;
            }
        }
    }
    *nblocks = b;
    return 0;
}

static void adaptive_summary(run_ctx_t *c, unsigned b)
{
    resolved_t *r = &c->r;
    size_t bad = 0;
    for (size_t i = 0; i < r->ncells; i++) {
        double ci = cell_ci(&c->tput[i * c->blocks], c->ntput[i]);
        if (ci <= c->sp.adaptive)
            continue;
        bad++;
        fprintf(stderr, "%s: not converged: %s %s: +-%.2f%% after %zu samples (target +-%.2f%%)\n", prog,
                r->wl[i / r->ncfg].wl->name, r->cfg[i % r->ncfg].label, isinf(ci) ? 100.0 : ci * 100,
                c->ntput[i], c->sp.adaptive * 100);
    }
    char took[32];
    fmt_duration(mono_now() - c->t_start, took, sizeof took);
    fprintf(stderr, "%s: adaptive: %u blocks, %zu of %zu configurations converged to +-%.2f%% in %s\n", prog, b,
            r->ncells - bad, r->ncells, c->sp.adaptive * 100, took);
}

/* Buffers sized by the plan; 0 or -ENOMEM. */
static int ctx_alloc(run_ctx_t *c)
{
    size_t cells = c->r.ncells ? c->r.ncells : 1;
    c->order = calloc(cells, sizeof *c->order);
    c->done = calloc((size_t)c->blocks * cells, sizeof *c->done);
    c->tput = calloc((size_t)c->blocks * cells, sizeof *c->tput);
    c->ntput = calloc(cells, sizeof *c->ntput);
    c->converged = calloc(cells, sizeof *c->converged);
    c->cell_args = calloc(cells, sizeof *c->cell_args);
    c->cell_scale = calloc(cells, sizeof *c->cell_scale);
    c->row = malloc(sizeof *c->row);
    c->s = malloc(sizeof *c->s);
    if (!c->order || !c->done || !c->tput || !c->ntput || !c->converged || !c->cell_args || !c->cell_scale ||
        !c->row || !c->s)
        return -ENOMEM;
    for (size_t i = 0; i < c->r.ncells; i++) {
        c->cell_args[i] = c->r.wl[i / c->r.ncfg];
        c->cell_scale[i] = 0; /* set by load_scales or calibrate_cells */
    }
    return 0;
}

/* Resolve, check the outputs, prove, open, run, summarize. */
static int run_main(run_ctx_t *c, int full_argc, char **full_argv)
{
    run_spec_t *sp = &c->sp;
    resolved_t *r = &c->r;
    char err[1024];
    if (resolve(sp, r) || find_tools(&c->cli.o, c->worker, c->probe, sizeof c->worker))
        return 2;
    if (!c->cli.print_only &&
        out_check(&c->out, sp->output, c->cli.sidecars, c->cli.resume, c->cli.force, err, sizeof err)) {
        spec_at(sp, sp->output_line);
        return die_spec("%s", err);
    }
    /* the rows a resumed file already has: its seed, its samples, its work scales */
    if (c->cli.resume && c->out.exists && csv_read_torn(c->out.csv, &c->prev, err, sizeof err))
        return die_usage("cannot resume: %s", err);
    if (choose_seed(c))
        return 2;
    c->blocks = sp->adaptive > 0 ? sp->max_blocks : (unsigned)sp->reps;
    if (ctx_alloc(c))
        return die_usage("out of memory");
    if (cnt_set_new(&c->cnt, r->extra, r->nextra, err, sizeof err)) {
        spec_at(sp, sp->events_line);
        return die_spec("%s", err);
    }
    if (c->cli.print_only) {
        print_plan(c);
        return 0;
    }
    if (c->cli.shard_n > 1)
        snprintf(c->shard_txt, sizeof c->shard_txt, "%u/%u", c->cli.shard_k, c->cli.shard_n);
    c->x.shard = c->shard_txt;
    c->x.seed = sp->seed;
    plan_identity(r, sp->seed, c->x.matrix_id, sizeof c->x.matrix_id);
    if (c->cli.resume && c->out.exists &&
        load_done(&c->prev, c->out.csv, c->x.matrix_id, c->done, c->blocks, r->ncells, &c->ndone))
        return 2;
    time_t now = time(NULL);
    unsigned short rnd = 0;
    if (getrandom(&rnd, sizeof rnd, 0) != sizeof rnd)
        rnd = (unsigned short)getpid();
    strftime(c->run_id, sizeof c->run_id, "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(c->run_id + strlen(c->run_id), sizeof c->run_id - strlen(c->run_id), "-%04x", rnd);
    c->x.run_id = c->run_id;
    install_signals();
    int rc = preflight(c);
    if (rc || (rc = open_outputs(c, full_argc, full_argv)))
        return rc;
    bool quiet = c->cli.quiet, tty = isatty(2) && !quiet;
    if (!quiet) {
        char nblocks[32];
        if (sp->adaptive > 0)
            snprintf(nblocks, sizeof nblocks, "adaptive (+-%.3g%%)", sp->adaptive * 100);
        else
            snprintf(nblocks, sizeof nblocks, "%llu", (unsigned long long)sp->reps);
        fprintf(stderr, "%s: plan %s, seed %llu: %zu configurations x %s blocks%s%s%s -> %s\n", prog,
                c->x.matrix_id, (unsigned long long)sp->seed, r->ncells, nblocks, c->cli.shard_n > 1 ? ", shard " : "",
                c->shard_txt, c->ndone ? ", resuming" : "", c->out.csv);
    }
    sysinfo_hostname(c->host, sizeof c->host);
    c->x.host = c->host;
    if (c->cli.resume && c->out.exists)
        load_scales(c);
    calibrate_cells(c, tty);
    warm_up(c, tty);
    for (unsigned b = 0; b < (unsigned)sp->reps && b < c->blocks; b++)
        for (size_t p = 0; p < r->ncells; p++)
            c->planned += plan_in_shard(b, p, r->ncells, c->cli.shard_k, c->cli.shard_n) &&
                          !c->done[b * r->ncells + p];
    c->t_start = mono_now();
    unsigned b;
    rc = run_blocks(c, tty, &b);
    if (tty)
        fputc('\n', stderr);
    if (!rc && sp->adaptive > 0 && !run_interrupted())
        adaptive_summary(c, b);
    if (!quiet || run_interrupted() || rc)
        fprintf(stderr, "%s: %zu samples (%zu ok, %zu not ok) written to %s%s%s\n", prog, c->nrun, c->nok,
                c->nbad, c->out.csv, run_interrupted() ? "; interrupted: continue with the same command and "
                "--resume" : "", run_interrupted() && c->out.chosen ? " -o <that file>" : "");
    return run_interrupted() ? 130 : rc;
}

int cmd_run(int argc, char **argv, int full_argc, char **full_argv)
{
    run_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        return die_usage("out of memory");
    c->out.w.fd = -1;
    int rc = parse_run_args(argc, argv, &c->sp, &c->cli);
    if (rc < 0)
        rc = run_main(c, full_argc, full_argv);
    ctx_free(c);
    return rc;
}
