/* sidecar.c - FILE.meta.json, written beside a run's CSV (contract:
 * sidecar.h): what the rows do not say about how they were measured, and
 * how the registry's workloads are presented. */
#include "counters.h"
#include "csv.h"
#include "mb_config.h"
#include "output.h"
#include "sidecar.h"
#include "text.h"

#include <errno.h>
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
    fputs("],\n  \"counting\": ", f);
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
