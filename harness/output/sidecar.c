/* sidecar.c - FILE.meta.json, written beside a run's CSV (contract:
 * sidecar.h): what the rows do not say about how they were measured, and
 * how the registry's workloads are presented. */
#include "counters.h"
#include "csv.h"
#include "mb_config.h"
#include "output.h"
#include "sidecar.h"
#include "sysinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void sidecar_workload_facts(FILE *f, const wl_t *w)
{
    fputs("\"name\": ", f);
    sysinfo_json_string(f, w->name);
    fputs(", \"metric\": ", f);
    sysinfo_json_string(f, w->metric ? w->metric : "");
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
                  const quiet_t *quiet, const machine_calib_t *cal)
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
    fprintf(f, ",\n  \"timeout_s\": %g,\n  \"rss_sample_interval_s\": %g,\n  \"tree_pss_interval_s\": %g,\n",
            o->timeout_s, o->sample_interval_s, o->tree_interval_s);
    if (quiet) {
        fprintf(f, "  \"quiet\": {\"quiet\": %s, \"why\": ", quiet->quiet ? "true" : "false");
        sysinfo_json_string(f, quiet->why);
        fputs("},\n", f);
    }
    fputs("  \"machine\": {\n", f);
    sysinfo_write_machine(f, cal);
    fputs("  },\n  \"configs\": [\n", f);
    for (size_t i = 0; i < ncfg; i++) {
        fputs("    {\"config\": ", f);
        sysinfo_json_string(f, cfg[i].label);
        fputs(", \"allocator\": ", f);
        sysinfo_json_string(f, cfg[i].alloc->name);
        fputs(", \"colour\": ", f);
        sysinfo_json_string(f, cfg[i].alloc->colour);
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
