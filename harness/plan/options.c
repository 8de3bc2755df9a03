/* options.c - the options of `run` in one table (contract: options.h).  A
 * row says how an option is spelled on the command line and in a matrix,
 * what it holds and where it goes; the validators below, one per type, are
 * the only code that reads a value, whichever way it came. */
#include "options.h"
#include "plan.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    OPT_FLAG,     /* no value on the command line: stores flag_value; as a matrix key, yes|no */
    OPT_COUNT,    /* a whole number in [min, max] */
    OPT_DURATION, /* seconds in [min, max]: 90, 1.5s, 500ms, 2m, 1h */
    OPT_PERCENT,  /* "1%" or "1", percent in [min, max]; stored as a fraction */
    OPT_STRING,   /* text, stored whole or refused as too long */
    OPT_CPUS,     /* a CPU list, checked and stored as written */
    OPT_SHARD,    /* K/N */
    OPT_LIST,     /* repeatable; its setter appends (-w, -t) */
    OPT_MATRIX,   /* -m: read before every other option */
} opt_type_t;

typedef struct opt opt_t;
/* Stores a value where off/size cannot say (lists, side effects): 0, or
 * -EINVAL with the reason in why. */
typedef int opt_setter_t(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len);

struct opt {
    const char *flag;    /* long flag, without "--" */
    char short_flag;     /* 0: none */
    const char *key;     /* [run] key of a matrix; NULL: command line only */
    opt_type_t type;
    double min, max;     /* range in the stored unit (count, seconds, percent) */
    bool above_min;      /* min itself is out of range */
    bool flag_value;     /* OPT_FLAG: what the bare flag stores */
    const char *def;     /* default, as a user writes it; NULL: zero */
    const char *metavar; /* the value, in --help */
    const char *help;    /* '\n' starts a continuation line */
    bool in_cli;         /* stored in run_cli_t, else in run_spec_t */
    size_t off, size;    /* the field */
    size_t line_off;     /* run_spec_t's matrix line of this entry (later errors); 0: none */
    size_t given_off;    /* run_spec_t's bool set when a user gives it (not its default); 0: none */
    opt_setter_t *set;   /* stores instead of off/size */
};

static opt_setter_t set_workload, set_tunable, set_seed, set_shard, set_nothing, set_hook, set_figure;

#define SPEC(f) .off = offsetof(run_spec_t, f), .size = sizeof(((run_spec_t *)0)->f)
#define CLI(f) .in_cli = true, .off = offsetof(run_cli_t, f), .size = sizeof(((run_cli_t *)0)->f)
#define LINE(f) .line_off = offsetof(run_spec_t, f)
#define GIVEN(f) .given_off = offsetof(run_spec_t, f)
#define NO_MAX HUGE_VAL

static const opt_t opts[] = {
    {.flag = "matrix", .short_flag = 'm', .type = OPT_MATRIX, .metavar = "FILE", .set = set_nothing,
     .help = "an experiment file (matrices/*.ini); the other options override it"},
    {.flag = "workload", .short_flag = 'w', .type = OPT_LIST, .def = "tensor_copy", .metavar = "SPEC",
     .help = "NAME[:PARAM=VALUE,...]  (repeatable)", .set = set_workload},
    {.flag = "allocators", .short_flag = 'a', .key = "allocators", .type = OPT_STRING, .metavar = "LIST",
     .help = "NAME[=LIBRARY],...      (default: every installed one);\n"
             "LABEL=NAME[:LIBRARY] runs a configuration under its own name",
     SPEC(allocators), LINE(allocators_line)},
    {.flag = "tunable", .short_flag = 't', .type = OPT_LIST, .metavar = "SPEC", .set = set_tunable,
     .help = "ALLOC:NAME=V1[,V2...]   a list sweeps (\"default\": leave unset);\n"
             "several -t: the cross product; ALLOC may be a label of -a;\n"
             "ALLOC:huge=never|advise|system: the huge-page condition (docs/thp.md)"},
    {.flag = "repetitions", .short_flag = 'r', .key = "repetitions", .type = OPT_COUNT, .min = 1, .max = 100000,
     .metavar = "N",
     .help = "blocks: samples per configuration, a fixed plan (default: sequential, each\n"
             "comparison until its verdict is settled: --resolution 2% --budget 10m --max-blocks 30)",
     SPEC(reps), GIVEN(reps_given)},
    {.flag = "output", .short_flag = 'o', .key = "output", .type = OPT_STRING, .metavar = "FILE",
     .help = "CSV to write (default results/run-<UTC time>.csv); beside it\n"
             "FILE.meta.json (machine, commit) and FILE.rss.csv (RSS series).\n"
             "An existing FILE is never overwritten: add --resume or --force.\n"
             "`-o -` streams the CSV to stdout, and a device (/dev/null) gets\n"
             "the CSV only",
     SPEC(output), LINE(output_line)},
    {.flag = "sidecars", .type = OPT_STRING, .metavar = "BASE",
     .help = "write BASE.meta.json and BASE.rss.csv (for -o - or a device)", CLI(sidecars)},
    {.flag = "force", .type = OPT_FLAG, .flag_value = true,
     .help = "replace an existing output, once every configuration is proven", CLI(force)},
    {.flag = "events", .short_flag = 'e', .key = "events", .type = OPT_STRING, .metavar = "LIST",
     .help = "extra perf events: libpfm4 names (cycles, instructions,\n"
             "dTLB-load-misses, ...) or syscalls:sys_enter_* tracepoints",
     SPEC(events), LINE(events_line)},
    {.flag = "sweep", .key = "sweep", .type = OPT_STRING, .metavar = "NAME=LO..HI",
     .help = "one workload per value of a parameter, doubling from LO to HI\n"
             "(or NAME=A/B/C), e.g. --sweep size=64K..256M",
     SPEC(sweep), LINE(sweep_line)},
    {.flag = "seed", .key = "seed", .type = OPT_COUNT, .min = 0, .max = NO_MAX, .metavar = "N",
     .help = "seed of the block order (default: random, recorded in the CSV)", SPEC(seed), .set = set_seed},
    {.flag = "warmup-runs", .key = "warmup_runs", .type = OPT_COUNT, .min = 0, .max = 100, .def = "1",
     .metavar = "N", .help = "discarded samples per configuration before the first block", SPEC(warmup_runs)},
    {.flag = "min-time", .key = "min_time", .type = OPT_DURATION, .min = 0, .max = 3600, .def = "0",
     .metavar = "DURATION",
     .help = "lengthen each configuration's measured region to at least this\n"
             "(e.g. 300ms): its work (steps, ops, bytes) is multiplied by a factor\n"
             "calibrated once, before the first block, and kept for every block\n"
             "(work_scale column); fixed schedules (idle_release) are not\n"
             "scaled (0 = off)",
     SPEC(min_time_s)},
    {.flag = "adaptive", .key = "adaptive", .type = OPT_PERCENT, .min = 0, .above_min = true, .max = 100,
     .metavar = "PCT",
     .help = "add blocks until every configuration's median throughput has a\n"
             "95% confidence interval within +-PCT (e.g. 1%), or --budget runs out",
     SPEC(adaptive)},
    {.flag = "resolution", .key = "resolution", .type = OPT_PERCENT, .min = 0, .above_min = true, .max = 100,
     .metavar = "PCT",
     .help = "a sequential plan: each configuration's ratio to the first one (per block, paired)\n"
             "is looked at after blocks 8, 12, 18 and the cap, and stops once its CI at that look's\n"
             "level lies beyond or inside +-1%, or is within +-PCT; the run ends when all have\n"
             "stopped, at --max-blocks or at --budget",
     SPEC(resolution)},
    {.flag = "budget", .key = "budget", .type = OPT_DURATION, .min = 0, .above_min = true, .max = NO_MAX,
     .def = "30m", .metavar = "DURATION",
     .help = "time budget for --adaptive and --resolution (10m for the default plan)", SPEC(budget_s),
     GIVEN(budget_given)},
    {.flag = "max-blocks", .key = "max_blocks", .type = OPT_COUNT, .min = 1, .max = 100000, .def = "100",
     .metavar = "N", .help = "the most blocks --adaptive or --resolution runs (30 for the default plan)",
     SPEC(max_blocks), GIVEN(max_blocks_given)},
    {.flag = "figure", .key = "figure", .type = OPT_STRING, .def = "throughput", .metavar = "FIGURE",
     .help = "the primary figure, the one a sequential plan stops on and the views lead with:\n"
             "throughput (the workload's own) or cpu (user + sys CPU per unit of work, lower is better)",
     SPEC(figure), .set = set_figure},
    {.flag = "shard", .type = OPT_SHARD, .def = "1/1", .metavar = "K/N", .set = set_shard,
     .help = "run every N-th block of the plan, from block K-1 (whole blocks: a\n"
             "block's pairs on one machine; merge with `mallocbench merge`);\n"
             "without --seed every shard derives the same seed from the plan\n"
             "(1/1: all of them)"},
    {.flag = "resume", .type = OPT_FLAG, .flag_value = true,
     .help = "continue the plan in --output, skipping the samples it has\n"
             "(its seed is read back from the file)",
     CLI(resume)},
    {.flag = "pin", .key = "pin", .type = OPT_CPUS, .metavar = "CPUS",
     .help = "pin every child to these CPUs (e.g. 1 or 0-1); the harness itself then runs on\n"
             "the others, when there are any",
     SPEC(pin), LINE(pin_line)},
    {.flag = "pin-threads", .key = "pin_threads", .type = OPT_FLAG, .flag_value = true, .def = "no",
     .help = "each thread a workload starts pins itself to one CPU of the child's set\n"
             "(thread i to the (i mod n)-th): no two share one while there are enough",
     SPEC(pin_threads)},
    {.flag = "timeout", .key = "timeout", .type = OPT_DURATION, .min = 0, .max = NO_MAX, .def = "10m",
     .metavar = "DURATION", .help = "kill a sample after this long (0 = none)", SPEC(timeout_s)},
    {.flag = "sample-interval", .key = "sample_interval", .type = OPT_DURATION, .min = 0.001, .max = NO_MAX,
     .def = "10ms", .metavar = "DURATION", .help = "RSS sampling period", SPEC(sample_interval_s)},
    {.flag = "tree-interval", .key = "tree_interval", .type = OPT_DURATION, .min = 0, .max = NO_MAX,
     .def = "50ms", .metavar = "DURATION",
     .help = "read the process tree this often: commands' and servers' PSS (tree_pss_peak_kib),\n"
             "every sample's huge-page share (a workload alone; also at its region's end); 0 = not read",
     SPEC(tree_interval_s)},
    {.flag = "no-limit", .key = "limit", .type = OPT_FLAG, .flag_value = false, .def = "yes",
     .help = "skip measuring each workload's limit (fraction_of_limit)", SPEC(limit)},
    {.flag = "limit-every", .key = "limit_every", .type = OPT_COUNT, .min = 1, .max = 100000, .def = "5",
     .metavar = "K", .help = "measure each workload's limit in blocks 0, K, 2K...; the blocks between\n"
                             "reuse the last (1: every block)", SPEC(limit_every)},
    {.flag = "profile", .type = OPT_FLAG, .flag_value = true,
     .help = "then one more, unmeasured sample per cell under perf record: where the page faults\n"
             "and madvise/munmap/brk calls come from, as OUTPUT.profile/*.svg flame graphs",
     CLI(profile)},
    {.flag = "prepare", .type = OPT_STRING, .metavar = "CMD", .set = set_hook,
     .help = "run CMD (/bin/sh -c) before each sample, outside its measurement; a\n"
             "failing CMD makes that sample an error row (hyperfine's --prepare)", CLI(prepare)},
    {.flag = "conclude", .type = OPT_STRING, .metavar = "CMD", .set = set_hook,
     .help = "run CMD after each sample, outside its measurement; a failing CMD\n"
             "makes that sample an error row (hyperfine's --conclude)", CLI(conclude)},
    {.flag = "cleanup", .type = OPT_STRING, .metavar = "CMD", .set = set_hook,
     .help = "run CMD once per configuration, after its last sample (hyperfine's --cleanup)",
     CLI(cleanup)},
    {.flag = "print-commands", .type = OPT_FLAG, .flag_value = true,
     .help = "print each sample's environment and command line; run nothing", CLI(print_only)},
    {.flag = "worker", .type = OPT_STRING, .metavar = "PATH", .help = "use another mallocbench-worker",
     CLI(worker)},
    {.flag = "probe", .type = OPT_STRING, .metavar = "PATH", .help = "use another libmbprobe.so", CLI(probe)},
    {.flag = "require-quiet", .type = OPT_FLAG, .flag_value = true,
     .help = "refuse to start when the machine is busy (load, other runnable tasks, steal,\n"
             "a CPU governor that is not performance); without it, a warning with the figures",
     CLI(require_quiet)},
    {.flag = "quiet", .short_flag = 'q', .type = OPT_FLAG, .flag_value = true, .help = "no progress output",
     CLI(quiet)},
    {.flag = "keep-going", .type = OPT_FLAG, .flag_value = true,
     .help = "exit 0 when a configuration has no ok sample (else exit 4, each named)", CLI(keep_going)},
    {.flag = "help", .short_flag = 'h', .type = OPT_FLAG, .flag_value = true, .help = "this text", CLI(help)},
};

#define NOPTS (sizeof opts / sizeof *opts)
_Static_assert(NOPTS < OPT_GETOPT_MAX, "OPT_GETOPT_MAX too small for the option table");

/* ---- validators: one per type -------------------------------------------- */

/* 3600 -> "1h", 0.01 -> "10ms": the largest unit that divides it. */
static void fmt_seconds(double s, char *buf, size_t len)
{
    static const struct { const char *unit; double scale; } u[] = {
        {"h", 3600}, {"m", 60}, {"s", 1}, {"ms", 1e-3}};
    for (size_t i = 0; s > 0 && i < sizeof u / sizeof *u; i++) {
        double q = s / u[i].scale;
        if (q >= 1 && fabs(q - round(q)) < 1e-9) {
            snprintf(buf, len, "%.0f%s", q, u[i].unit);
            return;
        }
    }
    snprintf(buf, len, "%g", s);
}

/* What a value of o must look like, for errors: "a whole number from 1 to 100000". */
static void expectation(const opt_t *o, char *buf, size_t len)
{
    char lo[32], hi[32];
    const char *pct = o->type == OPT_PERCENT ? "%" : "";
    if (o->type == OPT_DURATION) {
        fmt_seconds(o->min, lo, sizeof lo);
        fmt_seconds(o->max, hi, sizeof hi);
    } else {
        snprintf(lo, sizeof lo, "%g%s", o->min, pct);
        snprintf(hi, sizeof hi, "%g%s", o->max, pct);
    }
    size_t n = 0;
    switch (o->type) {
    case OPT_COUNT: n = (size_t)snprintf(buf, len, "a whole number"); break;
    case OPT_DURATION: n = (size_t)snprintf(buf, len, "a duration such as 90s, 500ms or 10m"); break;
    case OPT_PERCENT: n = (size_t)snprintf(buf, len, "a percentage such as 1%%"); break;
    case OPT_FLAG: snprintf(buf, len, "yes or no"); return;
    case OPT_CPUS: snprintf(buf, len, "CPUs such as 1, 0-1 or 0,2-3"); return;
    case OPT_SHARD: snprintf(buf, len, "K/N with 1 <= K <= N"); return;
    default: snprintf(buf, len, "text"); return;
    }
    bool low = o->above_min || o->min > 0;
    if (n < len && o->type == OPT_COUNT && !o->above_min && o->max < NO_MAX)
        snprintf(buf + n, len - n, " from %s to %s", lo, hi);
    else if (n < len && low)
        n += (size_t)snprintf(buf + n, len - n, ", %s %s", o->above_min ? "above" : "at least", lo);
    if (n < len && o->max < NO_MAX && !(o->type == OPT_COUNT && !o->above_min))
        snprintf(buf + n, len - n, "%s at most %s", low ? " and" : ",", hi);
}

static int bad_value(const opt_t *o, const char *v, char *why, size_t len)
{
    char want[160];
    expectation(o, want, sizeof want);
    snprintf(why, len, "bad value '%.80s%s': expected %s", v, strlen(v) > 80 ? "..." : "", want);
    return -EINVAL;
}

static bool in_range(const opt_t *o, double x)
{
    return (o->above_min ? x > o->min : x >= o->min) && x <= o->max;
}

static int check_count(const opt_t *o, const char *v, uint64_t *out, char *why, size_t len)
{
    if (units_parse_u64(v, out) || !in_range(o, (double)*out))
        return bad_value(o, v, why, len);
    return 0;
}

static int check_duration(const opt_t *o, const char *v, double *out, char *why, size_t len)
{
    if (units_parse_duration(v, out) || !in_range(o, *out))
        return bad_value(o, v, why, len);
    return 0;
}

/* "1%" or "1": a fraction (0.01). */
static int check_percent(const opt_t *o, const char *v, double *out, char *why, size_t len)
{
    char num[64];
    size_t n = strlen(v);
    double pct;
    if (n >= sizeof num)
        return bad_value(o, v, why, len);
    memcpy(num, v, n + 1);
    if (n && num[n - 1] == '%')
        num[n - 1] = '\0';
    if (units_parse_double(num, &pct) || !in_range(o, pct))
        return bad_value(o, v, why, len);
    *out = pct / 100;
    return 0;
}

static int check_bool(const opt_t *o, const char *v, bool *out, char *why, size_t len)
{
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "on"))
        *out = true;
    else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "off"))
        *out = false;
    else
        return bad_value(o, v, why, len);
    return 0;
}

/* Text that fits its field whole (a CPU list also parses). */
static int check_text(const opt_t *o, const char *v, size_t room, char *why, size_t len)
{
    cpu_set_t set;
    if (strlen(v) >= room) {
        snprintf(why, len, "value too long (%zu bytes, at most %zu)", strlen(v), room - 1);
        return -EINVAL;
    }
    if (o->type == OPT_CPUS && opt_parse_cpus(v, &set))
        return bad_value(o, v, why, len);
    return 0;
}

int opt_parse_cpus(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -EINVAL;
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

/* ---- storing ------------------------------------------------------------------ */

/* Check v as o's type and store it in o's field: 0 or -EINVAL (reason in why). */
static int opt_store(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    if (o->set)
        return o->set(o, v, sp, cli, why, len);
    char *dst = (o->in_cli ? (char *)cli : (char *)sp) + o->off;
    uint64_t u = 0;
    double d = 0;
    bool b = false;
    switch (o->type) {
    case OPT_FLAG:
        if (check_bool(o, v, &b, why, len))
            return -EINVAL;
        *(bool *)dst = b;
        return 0;
    case OPT_COUNT:
        if (check_count(o, v, &u, why, len))
            return -EINVAL;
        if (o->size == sizeof(uint64_t))
            *(uint64_t *)dst = u;
        else
            *(unsigned *)dst = (unsigned)u; /* the range fits an unsigned */
        return 0;
    case OPT_DURATION:
    case OPT_PERCENT:
        if ((o->type == OPT_DURATION ? check_duration : check_percent)(o, v, &d, why, len))
            return -EINVAL;
        *(double *)dst = d;
        return 0;
    default:
        if (check_text(o, v, o->size, why, len))
            return -EINVAL;
        memcpy(dst, v, strlen(v) + 1);
        return 0;
    }
}

/* -w: the first one replaces the matrix's workloads (and the default). */
static int set_workload(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    if (cli && !cli->w_given)
        sp->nw = 0;
    if (cli)
        cli->w_given = true;
    if (sp->nw >= SPEC_MAX_WORKLOADS) {
        snprintf(why, len, "too many workloads (at most %d)", SPEC_MAX_WORKLOADS);
        return -EINVAL;
    }
    if (check_text(o, v, SPEC_TEXT, why, len))
        return -EINVAL;
    snprintf(sp->workload[sp->nw], SPEC_TEXT, "%s", v);
    sp->wline[sp->nw] = sp->wsweep_line[sp->nw] = 0;
    sp->wsweep[sp->nw++][0] = '\0';
    return 0;
}

/* -t: the first one replaces the matrix's tunables. */
static int set_tunable(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    if (cli && !cli->t_given)
        sp->nt = 0;
    if (cli)
        cli->t_given = true;
    if (sp->nt >= SPEC_MAX_TUNABLES) {
        snprintf(why, len, "too many tunable lists (at most %d)", SPEC_MAX_TUNABLES);
        return -EINVAL;
    }
    if (check_text(o, v, SPEC_TEXT, why, len))
        return -EINVAL;
    sp->tline[sp->nt] = 0;
    snprintf(sp->tunable[sp->nt++], SPEC_TEXT, "%s", v);
    return 0;
}

static int set_seed(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    (void)cli;
    if (check_count(o, v, &sp->seed, why, len))
        return -EINVAL;
    sp->seed_given = true;
    return 0;
}

static int set_shard(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    (void)sp;
    unsigned k, n;
    if (plan_parse_shard(v, &k, &n))
        return bad_value(o, v, why, len);
    if (cli) {
        cli->shard_k = k;
        cli->shard_n = n;
    }
    return 0;
}

/* --figure: throughput or cpu (tune's --objective cpu is the same word). */
static int set_figure(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    (void)o, (void)cli;
    if (strcmp(v, "throughput") && strcmp(v, "cpu")) {
        snprintf(why, len, "unknown figure '%.80s': expected throughput or cpu", v);
        return -EINVAL;
    }
    snprintf(sp->figure, sizeof sp->figure, "%s", v);
    return 0;
}

/* -m is read in a pass of its own, before the other options. */
/* --prepare, --conclude, --cleanup: one line of shell for /bin/sh -c, not blank, no
 * control character but a tab (a newline would hide a second command in one option). */
static int set_hook(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    (void)sp;
    if (check_text(o, v, o->size, why, len))
        return -EINVAL;
    if (!v[strspn(v, " \t")]) {
        snprintf(why, len, "an empty command (give a shell command, e.g. 'sync')");
        return -EINVAL;
    }
    for (const unsigned char *q = (const unsigned char *)v; *q; q++)
        if ((*q < 0x20 && *q != '\t') || *q == 0x7f) {
            snprintf(why, len, "a control character (0x%02x) at byte %zu: the command must be one line", *q,
                     (size_t)(q - (const unsigned char *)v));
            return -EINVAL;
        }
    if (cli)
        memcpy((char *)cli + o->off, v, strlen(v) + 1);
    return 0;
}

static int set_nothing(const opt_t *o, const char *v, run_spec_t *sp, run_cli_t *cli, char *why, size_t len)
{
    (void)o, (void)v, (void)sp, (void)cli, (void)why, (void)len;
    return 0;
}

/* ---- the two parsers ------------------------------------------------------------ */

void opt_defaults(run_spec_t *sp, run_cli_t *cli)
{
    char why[256];
    memset(sp, 0, sizeof *sp);
    if (cli)
        memset(cli, 0, sizeof *cli);
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].def && (cli || !opts[i].in_cli) && opt_store(&opts[i], opts[i].def, sp, cli, why, sizeof why)) {
            fprintf(stderr, "mallocbench: bug: the default of --%s: %s\n", opts[i].flag, why);
            abort();
        }
    if (cli)
        cli->w_given = cli->t_given = false; /* the default workload is replaced by the first -w */
}

/* getopt_long's value for option i: its short flag, else 256 + i. */
static int opt_val(size_t i)
{
    return opts[i].short_flag ? opts[i].short_flag : 256 + (int)i;
}

void opt_getopt_tables(struct option *longopts, char *shortopts, size_t len)
{
    size_t n = (size_t)snprintf(shortopts, len, ":");
    for (size_t i = 0; i < NOPTS; i++) {
        int arg = opts[i].type == OPT_FLAG ? no_argument : required_argument;
        longopts[i] = (struct option){opts[i].flag, arg, NULL, opt_val(i)};
        if (opts[i].short_flag && n < len)
            n += (size_t)snprintf(shortopts + n, len - n, "%c%s", opts[i].short_flag, arg ? ":" : "");
    }
    longopts[NOPTS] = (struct option){NULL, 0, NULL, 0};
}

bool opt_is_matrix(int c)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (opt_val(i) == c)
            return opts[i].type == OPT_MATRIX;
    return false;
}

int opt_set_arg(int c, const char *arg, run_spec_t *sp, run_cli_t *cli, char *err, size_t errlen)
{
    char why[1024];
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        if (opt_val(i) != c)
            continue;
        if (o->type == OPT_FLAG)
            arg = o->flag_value ? "yes" : "no";
        if (opt_store(o, arg, sp, cli, why, sizeof why)) {
            snprintf(err, errlen, "--%s: %s", o->flag, why);
            return -EINVAL;
        }
        if (o->line_off)
            *(unsigned *)((char *)sp + o->line_off) = 0;
        if (o->given_off)
            *(bool *)((char *)sp + o->given_off) = true;
        return 0;
    }
    snprintf(err, errlen, "unknown option (see mallocbench run --help)");
    return -EINVAL;
}

/* "repetitions, timeout, ..., limit (--no-limit)": a key, and its flag
 * where that is not the key spelled with '-'. */
static size_t key_list(char *buf, size_t len, const char *sep)
{
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < NOPTS && n < len; i++) {
        const opt_t *o = &opts[i];
        if (!o->key)
            continue;
        bool same = strlen(o->key) == strlen(o->flag);
        for (size_t k = 0; same && o->key[k]; k++)
            same = o->key[k] == o->flag[k] || (o->key[k] == '_' && o->flag[k] == '-');
        n += (size_t)snprintf(buf + n, len - n, "%s%s%s%s%s", n ? sep : "", o->key, same ? "" : " (--",
                              same ? "" : o->flag, same ? "" : ")");
    }
    return n;
}

int opt_set_key(run_spec_t *sp, const char *key, const char *value, unsigned line, char *err, size_t errlen)
{
    char why[1024];
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *o = &opts[i];
        if (!o->key || strcmp(o->key, key))
            continue;
        if (opt_store(o, value, sp, NULL, why, sizeof why)) {
            snprintf(err, errlen, "%s: %s", key, why);
            return -EINVAL;
        }
        if (o->line_off)
            *(unsigned *)((char *)sp + o->line_off) = line;
        if (o->given_off)
            *(bool *)((char *)sp + o->given_off) = true;
        return 0;
    }
    char keys[512];
    key_list(keys, sizeof keys, ", ");
    snprintf(err, errlen, "unknown key '%s' in [run] (valid: %s)", key, keys);
    return -ENOENT;
}

/* ---- help ------------------------------------------------------------------------- */

#define HELP_COLUMN 26

static void print_option(FILE *out, const opt_t *o)
{
    int n = fprintf(out, "  %c%c%s--%s%s%s", o->short_flag ? '-' : ' ', o->short_flag ? o->short_flag : ' ',
                    o->short_flag ? ", " : "  ", o->flag, o->metavar ? " " : "", o->metavar ? o->metavar : "");
    fprintf(out, "%*s", n < HELP_COLUMN ? HELP_COLUMN - n : 2, "");
    /* the default inside a closing parenthesis, else in its own */
    size_t len = strlen(o->help);
    bool paren = len && o->help[len - 1] == ')';
    bool def = o->def && o->type != OPT_FLAG;
    for (const char *p = o->help; *p; p++) {
        if (def && paren && p == o->help + len - 1)
            fprintf(out, "; default %s", o->def);
        fputc(*p, out);
        if (*p == '\n')
            fprintf(out, "%*s", HELP_COLUMN, "");
    }
    if (def && !paren)
        fprintf(out, " (default %s)", o->def);
    fputc('\n', out);
}

void opt_usage(FILE *out)
{
    fputs("usage: mallocbench run [-m MATRIX] [options]\n"
          "Runs each workload under each allocator configuration, one fresh process per\n"
          "sample, and writes one CSV row per sample (schema: `mallocbench schema`).\n\n", out);
    for (size_t i = 0; i < NOPTS; i++)
        print_option(out, &opts[i]);
    char keys[512];
    key_list(keys, sizeof keys, ", ");
    fputs("\nA matrix file's [run] section takes these keys, each checked as its flag is:\n  ", out);
    /* wrapped at 78 columns */
    size_t col = 2;
    for (char *k = strtok(keys, ","); k; k = strtok(NULL, ",")) {
        k += *k == ' ';
        size_t w = strlen(k) + 1;
        if (col > 2 && col + w + 1 > 78) {
            fputs(",\n  ", out);
            col = 2;
        } else if (col > 2) {
            fputs(", ", out);
            col++;
        }
        fputs(k, out);
        col += w;
    }
    fputs("\n\nSamples run in randomized blocks: every configuration once per block, in an order\n"
          "shuffled from the seed, so drift hits every configuration alike.\n"
          "Example: mallocbench run -w tensor_copy:size=16M,count=4 -a glibc,jemalloc -r 5 -o results/run.csv\n",
          out);
}
