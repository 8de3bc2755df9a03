/* rows.c - one CSV row per sample (see rows.h).  The fixed counters' columns
 * come from CNT_FIXED_EVENTS and the worker's figures' from
 * WL_RESULT_FIELDS, so neither is tied to the other by order; extra events
 * get three extra columns each (total, region, note). */
#include "rows.h"
#include "probe_report.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Where each fixed counter goes, and whether it counts nanoseconds. */
#define ROW_FIXED(name, src, what, total, region, unit) \
    [CNT_EV_##name] = {COL_##total, COL_##region, CNT_UNIT_IS_NS(unit)},
static const struct {
    csv_col_t total, region;
    bool ns;
} row_fixed[CNT_NFIXED] = {CNT_FIXED_EVENTS(ROW_FIXED)};
#undef ROW_FIXED

/* A count, or seconds from nanoseconds; "" when not counted. */
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

/* The counters of a sample: whole process and measured region, fixed
 * columns then the extra events' three columns each; what was not counted,
 * or scaled, in counter_notes. */
static void fill_counters(csv_row_t *row, const run_sample_t *s, const cnt_set_t *cnt)
{
    char notes[CSV_FIELD_MAX] = "";
    size_t n = cnt_count(cnt);
    for (size_t i = 0; i < n; i++) {
        const cnt_value_t *t = &s->total[i];
        bool fixed = i < CNT_NFIXED;
        double total = cnt_scaled(t);
        double region = s->have_region ? cnt_delta(&s->begin[i], &s->end[i]) : NAN;
        char tb[64], rb[64];
        fmt_count(tb, sizeof tb, total, fixed && row_fixed[i].ns);
        fmt_count(rb, sizeof rb, region, fixed && row_fixed[i].ns);
        char note[CNT_REASON_MAX + 32] = "";
        if (!t->supported)
            snprintf(note, sizeof note, "%s", t->reason);
        else if (t->running && t->running < t->enabled)
            snprintf(note, sizeof note, "scaled x%.3f", (double)t->enabled / (double)t->running);
        if (fixed) {
            csv_set(row, row_fixed[i].total, "%s", tb);
            csv_set(row, row_fixed[i].region, "%s", rb);
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

/* The worker's figures, each in its column as it came on the wire. */
static void fill_result(csv_row_t *row, const wl_report_t *r)
{
#define ROW_RESULT(name, kind, fmt, with, col) \
    if (r->present & WLR_BIT(WLR_##name)) \
        csv_set(row, COL_##col, fmt, r->name);
    WL_RESULT_FIELDS(ROW_RESULT)
#undef ROW_RESULT
}

/* The huge-page columns of a sample (types.h): the tree's share at its peak,
 * THP_enabled as read, the machine-wide counts. */
static void fill_huge(csv_row_t *row, const run_sample_t *s)
{
    if (s->anon_peak_kib >= 0) {
        csv_set(row, COL_anon_huge_peak_kib, "%ld", s->anon_huge_peak_kib);
        if (s->anon_peak_kib > 0)
            csv_set(row, COL_huge_share_peak, "%.4f", (double)s->anon_huge_peak_kib / (double)s->anon_peak_kib);
    }
    if (s->thp_read)
        csv_set(row, COL_huge_proof, "THP_enabled 0 in %u of %u process readings", s->thp_off, s->thp_read);
    const long counts[] = {s->thp_faults, s->thp_fallbacks, s->pmd_splits, s->page_splits};
    const csv_col_t cols[] = {COL_thp_faults, COL_thp_fallbacks, COL_thp_pmd_splits, COL_thp_page_splits};
    for (size_t i = 0; i < 4; i++)
        if (counts[i] >= 0)
            csv_set(row, cols[i], "%ld", counts[i]);
    if (!isnan(s->others_cpu_s))
        csv_set(row, COL_others_cpu_s, "%.2f", s->others_cpu_s);
}

/* The sample's measurements: rusage, counters, region, result, RSS and the
 * allocator's own statistics. */
static void fill_figures(csv_row_t *row, const wl_args_t *a, const run_sample_t *s,
                         const cnt_set_t *cnt, double limit)
{
    csv_set(row, COL_total_wall_s, "%.6f", s->wall_s);
    csv_set(row, COL_total_user_s, "%.6f", s->user_s);
    csv_set(row, COL_total_sys_s, "%.6f", s->sys_s);
    csv_set(row, COL_ru_maxrss_kib, "%ld", s->maxrss_kib);
    csv_set(row, COL_ru_minflt, "%ld", s->minflt);
    csv_set(row, COL_ru_majflt, "%ld", s->majflt);
    fill_counters(row, s, cnt);
    if (s->have_region) {
        if (!isnan(s->region_user_s)) {
            csv_set(row, COL_region_user_s, "%.2f", s->region_user_s);
            csv_set(row, COL_region_sys_s, "%.2f", s->region_sys_s);
        }
        if (s->rss_final_kib >= 0)
            csv_set(row, COL_rss_final_kib, "%ld", s->rss_final_kib);
    }
    if (s->have_result && s->status == RUN_OK) {
        fill_result(row, &s->res);
        bool lower;
        csv_set(row, COL_metric, "%s", wl_metric(a, &lower));
        csv_set(row, COL_metric_better, "%s", lower ? "lower" : "higher");
        if (!isnan(limit) && limit > 0) {
            csv_set(row, COL_limit_throughput, "%.6g", limit);
            csv_set(row, COL_fraction_of_limit, "%.4f", s->res.throughput / limit);
        }
    }
    if (s->rss_samples || s->rss_peak_kib > 0)
        csv_set(row, COL_rss_peak_kib, "%ld", s->rss_peak_kib);
    csv_set(row, COL_rss_samples, "%zu", s->rss_samples);
    if (s->tree_pss_peak_kib >= 0)
        csv_set(row, COL_tree_pss_peak_kib, "%ld", s->tree_pss_peak_kib);
    csv_set(row, COL_stragglers_killed, "%u", s->stragglers);
    if (s->have_region && !isnan(s->region_run_delay_s) && s->region_run_delay_s >= 0)
        csv_set(row, COL_region_run_delay_s, "%.6f", s->region_run_delay_s);
    if (s->have_region && s->region_nivcsw >= 0)
        csv_set(row, COL_region_involuntary_switches, "%ld", s->region_nivcsw);
    if (s->steal_s >= 0)
        csv_set(row, COL_steal_s, "%.2f", s->steal_s);
    if (s->collapses >= 0)
        csv_set(row, COL_khugepaged_collapses, "%ld", s->collapses);
    if (s->compactions >= 0)
        csv_set(row, COL_compactions, "%ld", s->compactions);
    fill_huge(row, s);
    /* allocator statistics the probe reported at exit */
    size_t off = 0;
    for (size_t i = 0; i < s->nprobe && off < CSV_FIELD_MAX; i++)
        if (!strncmp(s->probe_key[i], "stat:", 5))
            off += (size_t)snprintf(row->field[COL_alloc_stats] + off, CSV_FIELD_MAX - off, "%s%s=%s",
                                    off ? ";" : "", s->probe_key[i] + 5, s->probe_val[i]);
}

void row_fill(csv_row_t *row, const row_ctx_t *x, size_t sample, unsigned block, size_t position,
              const wl_args_t *a, const run_config_t *c, const char *version, int rep,
              const run_sample_t *s, const char *effective, const cnt_set_t *cnt, const char *ts,
              double limit, uint64_t scale)
{
    char params[1024];
    csv_row_clear(row);
    csv_set(row, COL_schema_version, "%s", CSV_SCHEMA_VERSION);
    csv_set(row, COL_run_id, "%s", x->run_id);
    csv_set(row, COL_sample, "%zu", sample);
    csv_set(row, COL_matrix_id, "%s", x->matrix_id);
    csv_set(row, COL_plan_seed, "%llu", (unsigned long long)x->seed);
    csv_set(row, COL_block, "%u", block);
    csv_set(row, COL_position, "%zu", position);
    csv_set(row, COL_attempt, "%u", x->attempt);
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
    const char *v = probe_report_get(s, "version");
    csv_set(row, COL_alloc_version, "%s", v ? v : version);
    v = probe_report_get(s, "malloc_so");
    csv_set(row, COL_malloc_so, "%s", v ? v : "");
    csv_set(row, COL_requested_tunables, "%s", c->requested);
    csv_set(row, COL_huge, "%s", run_huge_name(c->huge));
    csv_set(row, COL_effective_tunables, "%s", effective);
    csv_set(row, COL_repetition, "%d", rep);
    csv_set(row, COL_status, "%s", sample_status_name(s->status));
    csv_set(row, COL_message, "%s", s->message);
    /* A wrong allocator or setting measured nothing we may report. */
    if (!s->untrusted)
        fill_figures(row, a, s, cnt, limit);
}
