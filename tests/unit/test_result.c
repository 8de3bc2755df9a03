/* test_result.c - the worker's result line (workloads/result.c): every field
 * of WL_RESULT_FIELDS goes through the writer and the parser and comes back
 * equal (a new field is covered by its X line alone); the line is byte for
 * byte what the worker wrote before the table; a result the worker must not
 * send and every malformed line are refused with the field named. */
#include "../check.h"
#include "result.h"

#include <errno.h>
#include <math.h>

static wl_args_t args;
static char lits[WLR_COUNT][16];

/* A value per field, distinct across fields, of each kind. */
#define SET_F64(x, i) ((x) = 0.5 * (double)((i) + 3))
#define SET_U64(x, i) ((x) = 1000000007ull * (uint64_t)((i) + 1))
#define SET_HEX64(x, i) ((x) = 0xfedcba9876543210ull ^ (uint64_t)(i))
#define SET_LIT(x, i) ((x) = lits[i])
#define SET_TEXT(x, i) snprintf((x), sizeof(x), "k%d=%d;m=x", (i), 7 * (i))
/* The value that came back equals the one sent. */
#define SAME_F64(got, want) CHECK((got) == (want))
#define SAME_U64(got, want) CHECK_U64(got, want)
#define SAME_HEX64(got, want) CHECK_U64(got, want)
#define SAME_LIT(got, want) CHECK_STR(got, want)
#define SAME_TEXT(got, want) CHECK_STR(got, want)
/* Not set yet. */
#define UNSET_F64(x) CHECK(isnan(x))
#define UNSET_U64(x) CHECK_U64(x, 0)
#define UNSET_HEX64(x) CHECK_U64(x, 0)
#define UNSET_LIT(x) CHECK((x) == NULL)
#define UNSET_TEXT(x) CHECK_STR(x, "")

static void set_all(wl_result_t *r)
{
    wl_result_init(r);
#define SET(name, kind, fmt, with, col) SET_##kind(r->name, WLR_##name);
    WL_RESULT_FIELDS(SET)
#undef SET
}

static int format(const wl_result_t *r, char *line, char *err)
{
    int rc = wl_result_format(&args, r, line, WL_RESULT_LINE_MAX, err, 256);
    if (rc)
        fprintf(stderr, "format: %s\n", err);
    return rc;
}

static void test_round_trip(void)
{
    wl_result_t r;
    wl_report_t got;
    char line[WL_RESULT_LINE_MAX], err[256];
    set_all(&r);
    CHECK_INT(format(&r, line, err), 0);
    line[strcspn(line, "\n")] = '\0';
    int rc = wl_result_parse(line, &got, err, sizeof err);
    if (rc)
        fprintf(stderr, "parse: %s\n  of %s\n", err, line);
    CHECK_INT(rc, 0);
    CHECK_U64(got.present, (1ull << WLR_COUNT) - 1);
#define SAME(name, kind, fmt, with, col) SAME_##kind(got.name, r.name);
    WL_RESULT_FIELDS(SAME)
#undef SAME
    for (int i = 0; i < WLR_COUNT; i++) {
        char word[64];
        snprintf(word, sizeof word, " %s=", wl_result_field_name(i));
        CHECK(strstr(line, word) != NULL);
    }
    CHECK(wl_result_field_name(WLR_COUNT) == NULL);
}

static void test_init(void)
{
    wl_result_t r;
    char line[WL_RESULT_LINE_MAX], err[256];
    memset(&r, 0x5a, sizeof r);
    wl_result_init(&r);
#define UNSET(name, kind, fmt, with, col) UNSET_##kind(r.name);
    WL_RESULT_FIELDS(UNSET)
#undef UNSET
    CHECK_INT(wl_result_format(&args, &r, line, sizeof line, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "'throughput' is not set") != NULL);
}

/* The line as region_report wrote it before WL_RESULT_FIELDS. */
static void old_line(const wl_result_t *r, char *line, size_t len)
{
    char params[1024];
    wl_format_args(&args, ',', params, sizeof params);
    int n = snprintf(line, len, "result workload=%s params=%s throughput=%.6g unit=%s region_s=%.6f bytes=%"
                     PRIu64 " ops=%" PRIu64 " checksum=%016" PRIx64, args.wl->name, params,
                     r->throughput, r->unit, r->region_s, r->bytes, r->ops, r->checksum);
    if (r->lat_what)
        n += snprintf(line + n, len - (size_t)n, " lat_what=%s lat_p50_us=%.3f lat_p99_us=%.3f "
                      "lat_p999_us=%.3f lat_max_us=%.3f lat_count=%" PRIu64, r->lat_what,
                      r->lat_p50_us, r->lat_p99_us, r->lat_p999_us, r->lat_max_us, r->lat_count);
    if (r->extra[0])
        n += snprintf(line + n, len - (size_t)n, " extra=%s", r->extra);
    snprintf(line + n, len - (size_t)n, "\n");
}

static void test_compatible(void)
{
    wl_result_t r;
    char line[WL_RESULT_LINE_MAX], old[WL_RESULT_LINE_MAX], err[256];
    wl_result_init(&r);
    r.throughput = 1.234567e9;
    r.unit = "B/s";
    r.region_s = 0.0123456;
    r.bytes = 16777216;
    r.ops = 0;
    r.checksum = 0xabc;
    CHECK_INT(format(&r, line, err), 0);
    old_line(&r, old, sizeof old);
    CHECK_STR(line, old);
    CHECK(strstr(line, "lat_") == NULL && strstr(line, "extra=") == NULL);
    r.lat_what = "op";
    r.lat_p50_us = 0.25;
    r.lat_p99_us = 12.5;
    r.lat_p999_us = 100.125;
    r.lat_max_us = 2000;
    r.lat_count = 4096;
    snprintf(r.extra, sizeof r.extra, "steps=50;rss_mib=12.5");
    CHECK_INT(format(&r, line, err), 0);
    old_line(&r, old, sizeof old);
    CHECK_STR(line, old);
}

/* The worker refuses to send what the harness could not take. */
static void refused_out(wl_result_t *r, const char *want)
{
    char line[WL_RESULT_LINE_MAX], err[256] = "";
    CHECK_INT(wl_result_format(&args, r, line, sizeof line, err, sizeof err), -EINVAL);
    if (!strstr(err, want))
        fprintf(stderr, "format error '%s' lacks '%s'\n", err, want);
    CHECK(strstr(err, want) != NULL);
    CHECK(strchr(err, '\n') == NULL);
    set_all(r);
}

static void test_writer_refuses(void)
{
    wl_result_t r;
    char small[64], err[256];
    set_all(&r);
    r.unit = NULL;
    refused_out(&r, "'unit' is not set");
    r.lat_p99_us = NAN;
    refused_out(&r, "'lat_p99_us' is not set (it goes with 'lat_what')");
    r.unit = "B /s";
    refused_out(&r, "'unit' holds a space");
    r.unit = "a-unit-longer-than-the-harness-keeps";
    refused_out(&r, "'unit' is too long");
    r.throughput = INFINITY;
    refused_out(&r, "'throughput' is not a finite number");
    snprintf(r.extra, sizeof r.extra, "a=1\nb=2");
    refused_out(&r, "'extra' holds a space");
    CHECK_INT(wl_result_format(&args, &r, small, sizeof small, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "longer than 63 bytes") != NULL);
    r.lat_what = NULL;
    refused_out(&r, "'lat_p50_us' is set without 'lat_what'");
    /* not set and optional: left out, and the parser takes the line */
    wl_result_init(&r);
    r.throughput = r.region_s = 1;
    r.unit = "B/s";
    char line[WL_RESULT_LINE_MAX];
    wl_report_t got;
    CHECK_INT(format(&r, line, err), 0);
    CHECK(strstr(line, " lat_") == NULL && strstr(line, " extra=") == NULL);
    line[strcspn(line, "\n")] = '\0';
    CHECK_INT(wl_result_parse(line, &got, err, sizeof err), 0);
    CHECK(!(got.present & WLR_BIT(WLR_lat_what)) && !(got.present & WLR_BIT(WLR_extra)));
    CHECK(isnan(got.lat_p50_us));
    CHECK_STR(got.extra, "");
}

/* The valid line with the word "name=..." replaced by word ("": removed),
 * or word appended when name is NULL. */
static void edit(const char *good, const char *name, const char *word, char *out, size_t len)
{
    char key[64];
    snprintf(key, sizeof key, " %s=", name ? name : "");
    const char *at = name ? strstr(good, key) : NULL;
    if (!name) {
        snprintf(out, len, "%s %s", good, word);
        return;
    }
    const char *end = strchr(at + 1, ' ');
    snprintf(out, len, "%.*s%s%s%s", (int)(at - good), good, *word ? " " : "", word, end ? end : "");
}

static void refused_in(const char *line, const char *want)
{
    wl_report_t got;
    char err[256] = "";
    CHECK_INT(wl_result_parse(line, &got, err, sizeof err), -EINVAL);
    if (!strstr(err, want))
        fprintf(stderr, "parse error '%s' lacks '%s'\n  for %.200s\n", err, want, line);
    CHECK(strstr(err, want) != NULL);
    CHECK(strchr(err, '\n') == NULL);
}

static void test_parser_refuses(void)
{
    static const struct {
        const char *name, *word, *why;
    } cases[] = {
        {NULL, "foo=1", "unknown field 'foo'"},
        {NULL, "bytes=5", "field 'bytes' given twice"},
        {NULL, "junk", "'junk' is not name=value"},
        {"bytes", "bytes=12a", "field 'bytes': value '12a' is not a non-negative integer"},
        {"bytes", "bytes=-1", "field 'bytes': value '-1'"},
        {"bytes", "bytes=", "field 'bytes': value '' is empty"},
        {"ops", "ops=99999999999999999999999", "field 'ops': value '99999999999999999999999' is out of range"},
        {"throughput", "throughput=nan", "field 'throughput': value 'nan' is not a finite"},
        {"throughput", "throughput=inf", "'throughput'"},
        {"throughput", "throughput=1x", "'throughput'"},
        {"throughput", "throughput=0x10", "'throughput'"},
        {"lat_p50_us", "lat_p50_us=1e999", "'lat_p50_us'"},
        {"checksum", "checksum=12345678901234567", "hex number of up to 16 digits"},
        {"checksum", "checksum=xyz", "'checksum'"},
        {"unit", "unit=0123456789012345678901234567890123", "field 'unit': value '0123456789012345678901234567890123' is too long"},
        {"unit", "", "field 'unit' is missing"},
        {"lat_count", "", "field 'lat_count' is missing (it goes with 'lat_what')"},
        {"lat_what", "", "field 'lat_p50_us' without 'lat_what'"},
        {"params", "", "expected params= as word 2"},
        {"workload", "workload=", "expected workload= as word 1"},
    };
    wl_result_t r;
    char good[WL_RESULT_LINE_MAX], bad[WL_RESULT_LINE_MAX + 64], err[256];
    set_all(&r);
    CHECK_INT(format(&r, good, err), 0);
    good[strcspn(good, "\n")] = '\0';
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        edit(good, cases[i].name, cases[i].word, bad, sizeof bad);
        refused_in(bad, cases[i].why);
    }
    snprintf(bad, sizeof bad, "result  %s", good + 7);
    refused_in(bad, "empty word 1");
    snprintf(bad, sizeof bad, "%s ", good);
    refused_in(bad, "empty word");
    snprintf(bad, sizeof bad, "resul %s", good + 7);
    refused_in(bad, "does not start with 'result '");
    snprintf(bad, sizeof bad, "%s\textra2=1", good);
    refused_in(bad, "control character");
    refused_in("result workload=x", "no params= after workload=");
    memset(bad, 'a', sizeof bad - 1);
    bad[sizeof bad - 1] = '\0';
    memcpy(bad, "result ", 7);
    refused_in(bad, "longer than 4095 bytes");
}

int main(void)
{
    char err[256];
    for (int i = 0; i < WLR_COUNT; i++)
        snprintf(lits[i], sizeof lits[i], "lit%d", i);
    if (wl_parse_spec("tensor_copy:size=1M", &args, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    test_round_trip();
    test_init();
    test_compatible();
    test_writer_refuses();
    test_parser_refuses();
    CHECK_DONE();
}
