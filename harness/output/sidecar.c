/* sidecar.c - FILE.meta.json, written beside a run's CSV (contract:
 * sidecar.h): what the rows do not say about how they were measured, and
 * how the registry's workloads are presented. */
#include "counters.h"
#include "csv.h"
#include "mb_config.h"
#include "output.h"
#include "sidecar.h"
#include "text.h"
#include "fileio.h"
#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sidecar_workload_facts(FILE *f, const wl_t *w)
{
    fputs("\"name\": ", f);
    text_json_write(f, w->name);
    fputs(", \"metric\": ", f);
    text_json_write(f, w->metric ? w->metric : "");
    fprintf(f, ", \"lower_is_better\": %s, \"traits\": [", w->lower_is_better ? "true" : "false");
    const char *t = w->traits ? w->traits : "";
    for (bool first = true; *t; first = false) {
        size_t n = strcspn(t, ",");
        fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)n, t); /* words of WL_TRAITS */
        t += n + (t[n] == ',');
    }
    fputs("]", f);
}

int sidecar_write(const char *path, bool keep_previous, const char *run_id, int argc, char **argv,
                  const run_config_t *cfg, size_t ncfg, char versions[][128],
                  const run_opts_t *o, const wl_args_t *wl, const double *limits, size_t nw,
                  const sidecar_machine_t *m)
{
    char *text = NULL;
    size_t tlen = 0;
    FILE *f = open_memstream(&text, &tlen);
    if (!f)
        return -errno;
    char cnt[512], ts[64];
    cnt_describe(cnt, sizeof cnt);
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fputs("{\n  \"schema_version\": " CSV_SCHEMA_VERSION ",\n  \"run_id\": ", f);
    text_json_write(f, run_id);
    fputs(",\n  \"started\": ", f);
    text_json_write(f, ts);
    fputs(",\n  \"mallocbench_version\": ", f);
    text_json_write(f, MB_VERSION);
    fputs(",\n  \"git_commit\": ", f);
    text_json_write(f, m->commit[0] ? m->commit : NULL);
    fputs(",\n  \"command\": [", f);
    for (int i = 0; i < argc; i++) {
        if (i)
            fputs(", ", f);
        text_json_write(f, argv[i]);
    }
    fputs("],\n  \"figure\": ", f);
    text_json_write(f, m->figure ? m->figure : "throughput");
    fputs(",\n  \"counting\": ", f);
    text_json_write(f, cnt);
    fprintf(f, ",\n  \"timeout_s\": %g,\n  \"rss_sample_interval_s\": %g,\n  \"tree_pss_interval_s\": %g,\n",
            o->timeout_s, o->sample_interval_s, o->tree_interval_s);
    if (m->quiet_checked) {
        fprintf(f, "  \"quiet\": {\"quiet\": %s, \"why\": ", m->quiet ? "true" : "false");
        text_json_write(f, m->quiet_why);
        fputs("},\n", f);
    }
    fputs("  \"machine\": {\n", f);
    fputs(m->machine, f);
    fputs("  },\n  \"configs\": [\n", f);
    for (size_t i = 0; i < ncfg; i++) {
        fputs("    {\"config\": ", f);
        text_json_write(f, cfg[i].label);
        fputs(", \"allocator\": ", f);
        text_json_write(f, cfg[i].alloc->name);
        fputs(", \"colour\": ", f);
        text_json_write(f, cfg[i].alloc->colour);
        fputs(", \"lib_path\": ", f);
        text_json_write(f, cfg[i].lib);
        fputs(", \"version\": ", f);
        text_json_write(f, versions[i]);
        fputs(", \"environment\": [", f);
        for (size_t k = 0; k < cfg[i].env.n; k++) {
            if (k)
                fputs(", ", f);
            text_json_write(f, cfg[i].env.var[k]);
        }
        fprintf(f, "]}%s\n", i + 1 < ncfg ? "," : "");
    }
    fputs("  ],\n  \"limits\": [\n", f);
    for (size_t w = 0; w < nw; w++) {
        char params[1024];
        wl_format_args(&wl[w], ',', params, sizeof params);
        fputs("    {\"workload\": ", f);
        text_json_write(f, wl[w].wl->name);
        fputs(", \"params\": ", f);
        text_json_write(f, params);
        fputs(", \"limit_params\": ", f);
        text_json_write(f, wl[w].wl->limit);
        fputs(", \"measured\": ", f);
        text_json_write(f, !wl[w].wl->limit ? NULL : limits ? "per block, under glibc, in limit_throughput"
                                                                : "not measured (--no-limit)");
        fprintf(f, "}%s\n", w + 1 < nw ? "," : "");
    }
    fputs("  ],\n  \"workloads\": [", f);
    for (size_t i = 0, n = 0; i < wl_count(); i++) {
        if (wl_at(i)->hidden)
            continue;
        fputs(n++ ? ",\n    {" : "\n    {", f);
        sidecar_workload_facts(f, wl_at(i));
        fputs("}", f);
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f)) {
        free(text);
        return -ENOMEM;
    }
    int rc = out_write_sidecar(path, text, keep_previous);
    free(text);
    return rc;
}

/* A number, or null when not one. */
static void json_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
    else
        fputs("null", f);
}

/* "sequential": {...} (no leading comma). */
static void write_sequential(FILE *f, const sidecar_seq_t *s)
{
    fputs("\"sequential\": {\"figure\": ", f);
    text_json_write(f, s->figure);
    fputs(", \"floor\": ", f);
    json_num(f, s->floor);
    fputs(", \"resolution\": ", f);
    json_num(f, s->resolution);
    fprintf(f, ", \"cap\": %u, \"budget_s\": ", s->cap);
    json_num(f, s->budget_s);
    fputs(",\n    \"looks\": [", f);
    for (size_t i = 0; i < s->nlooks; i++) {
        fprintf(f, "%s{\"blocks\": %u, \"alpha\": ", i ? ", " : "", s->looks[i].blocks);
        json_num(f, s->looks[i].alpha);
        fputs("}", f);
    }
    fputs("],\n    \"stops\": [", f);
    for (size_t i = 0; i < s->nstops; i++) {
        const sidecar_stop_t *t = &s->stops[i];
        fputs(i ? ",\n      {\"workload\": " : "\n      {\"workload\": ", f);
        text_json_write(f, t->workload);
        fputs(", \"params\": ", f);
        text_json_write(f, t->params);
        fputs(", \"config\": ", f);
        text_json_write(f, t->config);
        fputs(", \"baseline\": ", f);
        text_json_write(f, t->baseline);
        fprintf(f, ", \"look\": %u, \"blocks\": %u, \"n\": %zu, \"alpha\": ", t->look, t->blocks, t->n);
        json_num(f, t->alpha);
        fputs(", \"why\": ", f);
        text_json_write(f, t->why);
        fputs(", \"estimate\": ", f);
        json_num(f, t->estimate);
        fputs(", \"lo\": ", f);
        json_num(f, t->lo);
        fputs(", \"hi\": ", f);
        json_num(f, t->hi);
        fputs("}", f);
    }
    fputs(s->nstops ? "\n    ]}" : "]}", f);
}

int sidecar_sequential(const char *path, char **base, const sidecar_seq_t *s)
{
    if (!*base) { /* the object as written, less its closing brace */
        size_t len = 0;
        int rc = file_read_all(path, 64u << 20, base, &len);
        if (rc)
            return rc;
        while (len && (*base)[len - 1] != '}')
            len--;
        if (!len) {
            free(*base);
            *base = NULL;
            return -EPROTO;
        }
        len--;
        while (len && strchr(" \t\r\n", (*base)[len - 1]))
            len--;
        (*base)[len] = '\0';
    }
    outfile_t of;
    char err[PATH_MAX + 128];
    FILE *f = NULL;
    int rc = outfile_fopen(&of, path, &f, err, sizeof err);
    if (rc)
        return rc;
    fputs(*base, f);
    fputs(",\n  ", f);
    write_sequential(f, s);
    fputs("\n}\n", f);
    return outfile_fclose(&of, f, err, sizeof err);
}
