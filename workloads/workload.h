/* workload.h - the one table of workloads.  Each workload is one file that
 * ends in a self-describing descriptor (name, help, parameters with type,
 * default, range and unit, its figure, smoke-test specs) registered by one
 * X(name) line in workloads.c.  The harness uses the table to check a spec
 * before any run; the worker uses it to run one. */
#ifndef MB_WORKLOAD_H
#define MB_WORKLOAD_H
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* WLP_SIZES: a size distribution (dist.h): "16M", "1M/4M/16M",
 * "64K..64M" (log-uniform) or "@shapes.txt"; WLP_STRING: a word (no spaces,
 * commas or quotes); WLP_TEXT: any text on one line (a command, a regular
 * expression): in a spec its value runs to the next ",NAME=" of one of the
 * workload's parameters, or to the end. */
typedef enum { WLP_SIZE, WLP_UINT, WLP_ENUM, WLP_STRING, WLP_SIZES, WLP_TEXT } wl_ptype_t;

typedef struct {
    const char *name;
    wl_ptype_t type;
    const char *def;       /* default, as the user would write it */
    uint64_t min, max;     /* inclusive range (WLP_ENUM: unused) */
    const char *choices;   /* WLP_ENUM: "a|b|c"; the value is the index */
    const char *unit;      /* "bytes", "steps", ... */
    const char *help;
} wl_param_t;

#define WL_MAX_PARAMS 16
#define WL_STR_MAX 256

typedef struct wl wl_t;

/* A workload with every parameter resolved (defaults filled in). */
typedef struct {
    const wl_t *wl;
    uint64_t v[WL_MAX_PARAMS];     /* value of params[i] (numbers, enum index) */
    char str[WL_MAX_PARAMS][WL_STR_MAX]; /* WLP_STRING / WLP_SIZES: the text */
} wl_args_t;

/* What a workload reports, each field once:
 *   X(name, kind, wire format, sent, CSV column)
 * kind  F64: double, NAN until set; U64: uint64_t; HEX64: uint64_t, hex on
 *       the wire; LIT: const char *, a string literal ("B/s"), NULL until
 *       set; TEXT: char[WL_RESULT_TEXT_MAX], filled with snprintf, "" until
 *       set.  Strings hold no spaces (they travel as name=value words).
 * sent  always: the workload must set it; optional: sent when set; or the
 *       name of an earlier field it goes with (then required with it).
 * The worker writes "result workload=W params=P name=value ..." in this
 * order (result.h); the harness parses it back and copies each field into
 * its CSV column (csv.h, where its unit and meaning are), as it came.  A new
 * figure: one line here, its column in csv.h, the workload setting it. */
#define WL_RESULT_FIELDS(X) \
    X(throughput,  F64,   "%.6g",        always,   throughput) \
    X(unit,        LIT,   "%s",          always,   throughput_unit) \
    X(region_s,    F64,   "%.6f",        always,   region_wall_s) \
    X(bytes,       U64,   "%" PRIu64,    always,   region_bytes) \
    X(ops,         U64,   "%" PRIu64,    always,   region_ops) \
    X(checksum,    HEX64, "%016" PRIx64, always,   checksum) \
    X(lat_what,    LIT,   "%s",          optional, latency_what) \
    X(lat_p50_us,  F64,   "%.3f",        lat_what, latency_p50_us) \
    X(lat_p99_us,  F64,   "%.3f",        lat_what, latency_p99_us) \
    X(lat_p999_us, F64,   "%.3f",        lat_what, latency_p999_us) \
    X(lat_max_us,  F64,   "%.3f",        lat_what, latency_max_us) \
    X(lat_count,   U64,   "%" PRIu64,    lat_what, latency_count) \
    X(extra,       TEXT,  "%s",          optional, workload_metrics)

#define WL_RESULT_TEXT_MAX 512

/* The C type of each kind, in the workload's struct. */
#define WL_RESULT_CTYPE_F64 double
#define WL_RESULT_CTYPE_U64 uint64_t
#define WL_RESULT_CTYPE_HEX64 uint64_t
#define WL_RESULT_CTYPE_LIT const char *
#define WL_RESULT_CTYPE_TEXT char
#define WL_RESULT_DIM_F64
#define WL_RESULT_DIM_U64
#define WL_RESULT_DIM_HEX64
#define WL_RESULT_DIM_LIT
#define WL_RESULT_DIM_TEXT [WL_RESULT_TEXT_MAX]

#define WL_RESULT_MEMBER(name, kind, fmt, sent, col) \
    WL_RESULT_CTYPE_##kind name WL_RESULT_DIM_##kind;
typedef struct {
    WL_RESULT_FIELDS(WL_RESULT_MEMBER)
} wl_result_t;
#undef WL_RESULT_MEMBER

void wl_result_init(wl_result_t *r);

struct wl {
    const char *name;
    const char *help;
    const wl_param_t *params;
    size_t nparams;
    /* Runs in the worker: warm-up, region_begin(), measured steps,
     * region_end(); 0 or -errno (e.g. -ENOMEM).  Called with res from
     * wl_result_init.  Threaded workloads call region_begin/region_end from
     * the main thread only, with the other threads parked at a barrier (or
     * accept that they run on while the harness reads its counters).
     * NULL: the harness runs it itself (exec: a user's command). */
    int (*run)(const wl_args_t *args, wl_result_t *res);
    bool hidden;                   /* test-only: not shown by `list` */
    /* Parameters added after rows were written ("align" or "a|b"): left out
     * of the params text (wl_format_args) while at their default, so that
     * earlier CSV rows, histories and plans name the same workload. */
    const char *quiet_defaults;
    /* Parameters that turn this workload into its own upper bound (the
     * same work with the allocator out of the loop), e.g. "reuse=yes"; the
     * harness measures it once per spec and reports fraction_of_limit. */
    const char *limit;
    /* The primary figure (wl_result_t.throughput): what it measures, and
     * whether lower is better (false: higher is better).  Carried into the
     * CSV (metric, metric_better) for compare, reports and plots. */
    const char *metric;
    bool lower_is_better;
    /* Parameters --min-time may multiply to lengthen the measured region:
     * the first one of this comma list whose value is not 0 ("bytes,steps").
     * NULL: a fixed schedule, never scaled. */
    const char *scale;
    /* Checks the harness makes before any run, beyond the parameters'
     * types and ranges (a trace file that parses, a command that can be
     * preloaded): 0, or -EINVAL with one line in err.  NULL: none. */
    int (*check)(const wl_args_t *args, char *err, size_t errlen);
    /* Who the harness starts for a sample (the launcher table of
     * harness/sample/sample.c): NULL, the worker running .run; "command", the user's
     * command in the parameter cmd, in place of the worker. */
    const char *launcher;
    /* How its rows are presented, a comma list from WL_TRAITS (NULL: none):
     *   idle_region  the measured region is an idle period: its CPU is the
     *                whole process's, and the RSS kept at the end is the figure;
     *   size_curve   specs differing only in one size= value form a curve
     *                over size;
     *   trade_off    the primary figure is a trade-off, not better or worse
     *                (memory given back costs faults later): the views show
     *                it and what it costs, with no improved/regressed verdict.
     * Exported, with metric and lower_is_better, by `list workloads --json`
     * and in the sidecar's "workloads", in table order (the plot order). */
    const char *traits;
    /* The smoke test's specs (tests/integration/test_run.py, read through `list
     * workloads --json`): one or more, separated by ';', each short and
     * run under every allocator; "{fixtures}" stands for tests/fixtures.
     * Every visible workload has one. */
    const char *smoke;
};

/* Every word a workload's traits may use. */
#define WL_TRAITS "idle_region,size_curve,trade_off"

size_t wl_count(void);
const wl_t *wl_at(size_t i);
const wl_t *wl_find(const char *name);

/* "tensor_copy:size=16M,count=4" (or name and separate "key=value" items
 * through wl_set).  Unknown workload or parameter, bad or out-of-range value:
 * -EINVAL and one line in err that names it. */
int wl_parse_spec(const char *spec, wl_args_t *out, char *err, size_t errlen);
int wl_defaults(const wl_t *wl, wl_args_t *out);
int wl_set(wl_args_t *a, const char *key_eq_value, char *err, size_t errlen);
/* Canonical text of every parameter: "size=16M,count=4,steps=50,..." (sep ","),
 * or space separated for a command line. */
void wl_format_args(const wl_args_t *a, char sep, char *buf, size_t len);
/* Multiply the workload's amount of work (wl_t.scale) by factor, within
 * the parameter's range; returns the factor applied (1 when the workload
 * cannot be scaled). */
uint64_t wl_scale(wl_args_t *a, uint64_t factor);
/* Value of a parameter by name (the workload's own code uses this). */
uint64_t wl_get(const wl_args_t *a, const char *name);
/* What the primary figure measures and which way is better: the
 * workload's own, or, for a workload whose figure its parameters choose
 * (exec with metric=REGEX), what they say. */
const char *wl_metric(const wl_args_t *a, bool *lower_is_better);
/* Is name a WLP_TEXT parameter of wl (its value may hold commas)? */
bool wl_param_is_text(const wl_t *wl, const char *name);
const char *wl_get_str(const wl_args_t *a, const char *name);

#endif
