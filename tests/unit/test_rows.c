/* test_rows.c - harness/output/rows.c on a sample built by hand: each fixed counter
 * lands in the columns its name says (total_<name>, _calls for a syscall,
 * _s for nanoseconds, which become seconds), with a value no other counter
 * has; an unsupported one is empty with its reason in counter_notes; each
 * field of the worker's result line lands in its column as it came on the
 * wire; a failed sample reports no result and an untrusted one no figure. */
#include "../check.h"
#include "rows.h"

#include <errno.h>
#include <math.h>

static csv_row_t row;
static run_sample_t s;

/* The column for counter `name`: <where>_<stem>[_calls|_s], -1 if none. */
static int counter_col(const char *where, const char *name, bool *ns)
{
    size_t len = strlen(name);
    *ns = len > 3 && strcmp(name + len - 3, "_ns") == 0;
    char stem[64], want[96];
    snprintf(stem, sizeof stem, "%.*s", (int)(*ns ? len - 3 : len), name);
    for (int c = 0; c < COL_COUNT; c++) {
        static const char *const suffix[] = {"", "_calls"};
        for (size_t k = 0; k < 2; k++) {
            snprintf(want, sizeof want, "%s_%s%s", where, stem, *ns ? "_s" : suffix[k]);
            if (strcmp(csv_columns[c].name, want) == 0)
                return c;
        }
    }
    return -1;
}

static void fill(const wl_args_t *a, const run_config_t *c, const cnt_set_t *cnt)
{
    row_ctx_t x = {.run_id = "r1", .host = "h", .shard = "", .matrix_id = "m", .seed = 1};
    row_fill(&row, &x, 0, 0, 0, a, c, "1.0", 0, &s, "", cnt, "t", NAN, 1);
}

static void test_counters(const wl_args_t *a, const run_config_t *c, const cnt_set_t *cnt)
{
    for (size_t i = 0; i < CNT_NFIXED; i++) {
        uint64_t v = 1000003 * (i + 1);
        s.total[i] = (cnt_value_t){.name = cnt_name(cnt, i), .supported = true, .value = v,
                                   .enabled = 10, .running = 10};
        s.begin[i] = (cnt_value_t){.supported = true, .value = 0, .enabled = 0, .running = 0};
        s.end[i] = (cnt_value_t){.supported = true, .value = v / 2, .enabled = 10, .running = 10};
    }
    s.total[CNT_EV_brk].supported = false;
    snprintf(s.total[CNT_EV_brk].reason, CNT_REASON_MAX, "not supported: test");
    fill(a, c, cnt);
    for (size_t i = 0; i < CNT_NFIXED; i++) {
        const char *name = cnt_name(cnt, i);
        bool ns;
        int tc = counter_col("total", name, &ns), rc = counter_col("region", name, &ns);
        if (tc < 0 || rc < 0)
            fprintf(stderr, "no total_/region_ column for counter %s\n", name);
        CHECK(tc >= 0 && rc >= 0);
        if (tc < 0 || rc < 0)
            continue;
        char total[64], region[64];
        double v = (double)s.total[i].value, r = (double)s.end[i].value;
        snprintf(total, sizeof total, ns ? "%.6f" : "%.0f", ns ? v / 1e9 : v);
        snprintf(region, sizeof region, ns ? "%.6f" : "%.0f", ns ? r / 1e9 : r);
        if (i == CNT_EV_brk)
            total[0] = '\0';
        CHECK_STR(row.field[tc], total);
        CHECK_STR(row.field[rc], region);
    }
    CHECK_STR(row.field[COL_counter_notes], "brk: not supported: test");
}

static void test_result(const wl_args_t *a, const run_config_t *c, const cnt_set_t *cnt)
{
    static const struct {
        const char *field;
        int col;
    } cols[] = {
#define COLUMN(name, kind, fmt, with, col) {#name, COL_##col},
        WL_RESULT_FIELDS(COLUMN)
#undef COLUMN
    };
    wl_result_t r;
    char line[WL_RESULT_LINE_MAX], err[256];
    wl_result_init(&r);
    r.throughput = 123456789;
    r.unit = "B/s";
    r.region_s = 0.25;
    r.bytes = 1ull << 40;
    r.ops = 77;
    r.checksum = 0xfeed;
    r.lat_what = "op";
    r.lat_p50_us = 1.5;
    r.lat_p99_us = 2.25;
    r.lat_p999_us = 3.125;
    r.lat_max_us = 4;
    r.lat_count = 99;
    snprintf(r.extra, sizeof r.extra, "a=1;b=2");
    CHECK_INT(wl_result_format(a, &r, line, sizeof line, err, sizeof err), 0);
    line[strcspn(line, "\n")] = '\0';
    CHECK_INT(wl_result_parse(line, &s.res, err, sizeof err), 0);
    s.have_result = true;
    fill(a, c, cnt);
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++) {
        char word[64], value[1024];
        snprintf(word, sizeof word, " %s=", cols[i].field);
        const char *at = strstr(line, word);
        CHECK(at != NULL);
        if (!at)
            continue;
        at += strlen(word);
        snprintf(value, sizeof value, "%.*s", (int)strcspn(at, " "), at);
        CHECK_STR(row.field[cols[i].col], value);
    }
    CHECK_STR(row.field[COL_throughput], "1.23457e+08");
    CHECK_STR(row.field[COL_region_wall_s], "0.250000");
    CHECK_STR(row.field[COL_checksum], "000000000000feed");
    CHECK_STR(row.field[COL_latency_count], "99");
    CHECK_STR(row.field[COL_metric], a->wl->metric);

    /* no latency sent: its columns stay empty */
    r.lat_what = NULL;
    r.lat_p50_us = r.lat_p99_us = r.lat_p999_us = r.lat_max_us = NAN;
    r.lat_count = 0;
    CHECK_INT(wl_result_format(a, &r, line, sizeof line, err, sizeof err), 0);
    line[strcspn(line, "\n")] = '\0';
    CHECK_INT(wl_result_parse(line, &s.res, err, sizeof err), 0);
    fill(a, c, cnt);
    CHECK_STR(row.field[COL_latency_what], "");
    CHECK_STR(row.field[COL_latency_p50_us], "");
    CHECK_STR(row.field[COL_latency_count], "");
    CHECK_STR(row.field[COL_region_ops], "77");

    /* a failed sample: no result figures, the counters still */
    s.status = RUN_CRASHED;
    fill(a, c, cnt);
    for (size_t i = 0; i < sizeof cols / sizeof *cols; i++)
        CHECK_STR(row.field[cols[i].col], "");
    CHECK_STR(row.field[COL_status], "crashed");
    CHECK(row.field[COL_total_minor_faults][0] != '\0');
    /* an untrusted one: nothing measured at all */
    s.status = RUN_OK;
    s.untrusted = true;
    fill(a, c, cnt);
    CHECK_STR(row.field[COL_throughput], "");
    CHECK_STR(row.field[COL_total_minor_faults], "");
    CHECK_STR(row.field[COL_total_wall_s], "");
    s.untrusted = false;
}

/* The process's own figures from wait4's rusage, each in its column with a value no other has
 * (user and sys seconds, peak RSS, minor and major faults). */
static void test_rusage(const wl_args_t *a, const run_config_t *c, const cnt_set_t *cnt)
{
    s.wall_s = 3.25;
    s.user_s = 1.5;
    s.sys_s = 0.75;
    s.maxrss_kib = 4321;
    s.minflt = 765;
    s.majflt = 7;
    fill(a, c, cnt);
    CHECK_STR(row.field[COL_total_wall_s], "3.250000");
    CHECK_STR(row.field[COL_total_user_s], "1.500000");
    CHECK_STR(row.field[COL_total_sys_s], "0.750000");
    CHECK_STR(row.field[COL_ru_maxrss_kib], "4321");
    CHECK_STR(row.field[COL_ru_minflt], "765");
    CHECK_STR(row.field[COL_ru_majflt], "7");
}

int main(void)
{
    char err[256];
    wl_args_t a;
    cnt_set_t *cnt = NULL;
    static run_config_t c;
    if (wl_parse_spec("tensor_copy:size=1M", &a, err, sizeof err) ||
        cnt_set_new(&cnt, NULL, 0, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    c.alloc = alloc_system();
    snprintf(c.label, sizeof c.label, "%s", c.alloc->name);
    s.status = RUN_OK;
    s.have_region = true;
    s.region_user_s = NAN;
    s.rss_final_kib = -1;
    CHECK_INT(cnt_count(cnt), CNT_NFIXED);
    test_counters(&a, &c, cnt);
    test_result(&a, &c, cnt);
    test_rusage(&a, &c, cnt);
    cnt_set_free(cnt);
    CHECK_DONE();
}
