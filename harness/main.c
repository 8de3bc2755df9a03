/* main.c - the mallocbench command line: `run` measures workloads under
 * allocators into CSV, `list` shows what is installed and accepted,
 * `schema` prints the CSV schema.  Every input is checked before any run;
 * exit codes: 0 ok, 1 a run failed to start, a check or a read/write failed,
 * 2 bad usage or input, 130 interrupted (everything measured so far is in the CSV). */
#include "cli.h"
#include "counters.h"
#include "csv.h"
#include "judge.h"
#include "mb_config.h"
#include "record.h"
#include "registry.h"
#include "run.h"
#include "sidecar.h"
#include "sysinfo.h"
#include "text.h"
#include "tools.h"
#include "units.h"
#include "workload.h"

#include <errno.h>
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
    run_config_t *glibc = calloc(1, sizeof *glibc); /* the system allocator: none in the way */
    run_sample_t *s = calloc(1, sizeof *s);
    if (!glibc || !s) {
        free(glibc);
        free(s);
        return 1;
    }
    glibc->alloc = alloc_system();
    snprintf(glibc->label, sizeof glibc->label, "%s", glibc->alloc->name);
    double bw[5], fault[5];
    int n = 0;
    for (int r = 0; r < 5; r++) {
        int rc = run_sample(&o, glibc, &a, NULL, s);
        if (!rc)
            judge_status(&o, glibc, s);
        if (rc || s->status != RUN_OK) {
            fprintf(stderr, "%s: calibrate: %s\n", prog, s->message);
            run_sample_free(s);
            free(glibc);
            return 1;
        }
        bw[n] = s->res.throughput;
        fault[n++] = extra_value(s->res.extra, "fault_ns");
    }
    run_sample_free(s);
    free(glibc);
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

/* ---- compare ---------------------------------------------------------------- */

/* The statistics live in scripts/compare.py (it reads only CSV); run it with
 * an interpreter that has what it needs. */
static int cmd_compare(int argc, char **argv)
{
    char script[PATH_MAX];
    if (tools_find_script("compare.py", script, sizeof script))
        return 2;
    /* the scripts read the CSV schema from `MB_HARNESS schema --json` where no
     * schema.json lies beside them or in build/ (scripts/mbcsv.py) */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        setenv("MB_HARNESS", self, 0);
    }
    static const char *const pythons[] = {"/usr/bin/python3", "/usr/local/bin/python3", "python3"};
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args)
        return 1;
    args[1] = script;
    for (int i = 1; i < argc; i++)
        args[i + 1] = argv[i];
    for (size_t i = 0; i < sizeof pythons / sizeof *pythons; i++) {
        args[0] = (char *)pythons[i];
        execvp(pythons[i], args);
    }
    free(args);
    return die_usage("compare: cannot run python3: %s", strerror(errno));
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
                snprintf(range, sizeof range, "word");
            else if (p->type == WLP_TEXT)
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

/* One parameter of `list workloads --json`: min and max for numbers and
 * sizes, the list of choices for an enum, null where they do not apply. */
static void param_json(const wl_param_t *p)
{
    static const char *const types[] = {"size", "uint", "enum", "string", "sizes", "text"};
    bool numeric = p->type == WLP_SIZE || p->type == WLP_UINT || p->type == WLP_SIZES;
    printf("{\"name\": ");
    sysinfo_json_string(stdout, p->name);
    printf(", \"type\": \"%s\", \"default\": ", types[p->type]);
    sysinfo_json_string(stdout, p->def);
    if (numeric)
        printf(", \"min\": %llu, \"max\": %llu", (unsigned long long)p->min, (unsigned long long)p->max);
    else
        printf(", \"min\": null, \"max\": null");
    printf(", \"choices\": %s", p->type == WLP_ENUM ? "[" : "null");
    for (const char *c = p->type == WLP_ENUM ? p->choices : ""; *c;) {
        size_t n = strcspn(c, "|");
        printf("%s\"%.*s\"", c == p->choices ? "" : ", ", (int)n, c); /* words, as in a spec */
        c += n + (c[n] == '|');
    }
    printf("%s", p->type == WLP_ENUM ? "]" : "");
    printf(", \"unit\": ");
    sysinfo_json_string(stdout, p->unit);
    printf(", \"help\": ");
    sysinfo_json_string(stdout, p->help);
    printf("}");
}

/* `list workloads --json`: what `list workloads` says, for programs, plus
 * the presentation facts (as in the sidecar) and the smoke-test specs. */
static int list_workloads_json(void)
{
    printf("{\"workloads\": [");
    for (size_t i = 0, n = 0; i < wl_count(); i++) {
        const wl_t *w = wl_at(i);
        if (w->hidden)
            continue;
        printf(n++ ? ",\n  {" : "\n  {");
        sidecar_workload_facts(stdout, w);
        printf(", \"help\": ");
        sysinfo_json_string(stdout, w->help);
        printf(",\n   \"params\": [");
        for (size_t k = 0; k < w->nparams; k++) {
            printf(k ? ",\n     " : "\n     ");
            param_json(&w->params[k]);
        }
        printf("],\n   \"smoke\": [");
        char spec[1024];
        for (const char *s = w->smoke ? w->smoke : ""; *s;) {
            size_t len = strcspn(s, ";");
            snprintf(spec, sizeof spec, "%.*s", (int)len, s);
            printf("%s", s == w->smoke ? "" : ", ");
            sysinfo_json_string(stdout, spec);
            s += len + (s[len] == ';');
        }
        printf("]}");
    }
    printf("\n]}\n");
    return 0;
}

static int list_allocators(void)
{
    run_opts_t o = {.timeout_s = 30, .sample_interval_s = 0.01};
    char worker[PATH_MAX], probe[PATH_MAX];
    if (find_tools(&o, worker, probe, sizeof worker))
        return 2;
    run_config_t *c = malloc(sizeof *c);
    if (!c)
        return 1;
    printf("%-10s %-10s %-48s %s\n", "allocator", "installed", "library", "version (read from inside a child)");
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        memset(c, 0, sizeof *c);
        c->alloc = a;
        snprintf(c->label, sizeof c->label, "%s", a->name);
        (void)alloc_build_env(a, NULL, 0, &c->env); /* what the family always sets */
        if (!alloc_is_system(a) && alloc_locate(a, c->lib, sizeof c->lib)) {
            char want[256];
            size_t off = 0;
            for (const char *const *so = a->sonames; *so; so++)
                off += (size_t)snprintf(want + off, sizeof want - off, "%s%s", off ? " or " : "", *so);
            printf("%-10s %-10s %-48s %s\n", a->name, "no", want, "-");
            continue;
        }
        char version[128], err[1024];
        if (judge_preflight(&o, c, version, sizeof version, err, sizeof err))
            printf("%-10s %-10s %-48s error: %s\n", a->name, "broken", c->lib[0] ? c->lib : "(libc)", err);
        else
            printf("%-10s %-10s %-48s %s\n", a->name, "yes", c->lib[0] ? c->lib : "(libc)", version);
    }
    free(c);
    return 0;
}

static int cmd_list(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: mallocbench list allocators|workloads|events|tunables [ALLOCATOR]\n");
        if (argc >= 2)
            printf("       mallocbench list workloads --json: the same, with each workload's figure,\n"
                   "       traits and smoke-test specs, as JSON\n");
        return argc < 2 ? 2 : 0;
    }
    bool json = !strcmp(argv[1], "workloads") && argc == 3 && !strcmp(argv[2], "--json");
    if (argc > (strcmp(argv[1], "tunables") ? 2 + json : 3))
        return die_usage("list %s: unexpected argument '%s'", argv[1], argv[argc - 1]);
    if (!strcmp(argv[1], "allocators"))
        return list_allocators();
    if (!strcmp(argv[1], "workloads"))
        return json ? list_workloads_json() : list_workloads();
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
            "  exec     measure your own command under allocators, as `run` does a workload\n"
            "  list     allocators | workloads | events | tunables [ALLOCATOR]\n"
            "  compare  statistics of one run against a baseline, or of two runs (scripts/compare.py)\n"
            "  merge    join the CSVs of the shards of one plan\n"
            "  record   a command's every allocation call into a trace (-o FILE -- CMD ARGS...)\n"
            "  trace    what a trace of `record` holds: processes, threads, calls, peak bytes\n"
            "  calibrate  the machine's memcpy bandwidth and the cost of one page fault\n"
            "  schema   print the CSV schema (Markdown)\n"
            "  version  print the version\n"
            "`mallocbench COMMAND --help` for each command's options.\n");
}

/* Every argument must be UTF-8: labels, tunables, workload parameters, the
 * command of exec and every path reach the CSV and its JSON sidecar, which
 * scripts read as UTF-8 (issue 18).  0, or 2 after naming the first that is
 * not, what it belongs to and the offset of its first bad byte. */
static int check_arguments(int argc, char **argv)
{
    int dash = 0;
    for (int i = 1; i < argc; i++) {
        size_t bad;
        if (!dash && !strcmp(argv[i], "--"))
            dash = i;
        if (!text_utf8_check(argv[i], &bad))
            continue;
        char what[96] = "";
        if (dash && i > dash)
            snprintf(what, sizeof what, " (word %d of the command after --)", i - dash);
        else if (i > 1 && argv[i - 1][0] == '-' && argv[i - 1][1] && !strchr(argv[i - 1], '='))
            snprintf(what, sizeof what, " (the value of %.40s)", argv[i - 1]);
        return die_usage("argument %d%s '%s': not UTF-8 at byte %zu (arguments must be UTF-8)", i, what,
                         argv[i], bad);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (check_arguments(argc, argv))
        return 2;
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
    if (!strcmp(cmd, "exec"))
        return cmd_exec(argc - 1, argv + 1, argc, argv);
    if (!strcmp(cmd, "list"))
        return cmd_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "calibrate"))
        return cmd_calibrate(argc - 1, argv + 1);
    if (!strcmp(cmd, "merge"))
        return cmd_merge(argc - 1, argv + 1);
    if (!strcmp(cmd, "record"))
        return cmd_record(argc - 1, argv + 1);
    if (!strcmp(cmd, "trace"))
        return cmd_trace(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return cmd_compare(argc - 1, argv + 1);
    if (!strcmp(cmd, "schema")) {
        if (argc > 2 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
            printf("usage: mallocbench schema [--json]\nprints results/SCHEMA.md: every CSV column with its unit;\n"
                   "--json: the same table for the scripts (name, type, unit, meaning, schema_version)\n");
            return 0;
        }
        if (argc > 2 && strcmp(argv[2], "--json"))
            return die_usage("schema: unexpected argument '%s'", argv[2]);
        if (argc > 2)
            csv_print_schema_json(stdout);
        else
            csv_print_schema(stdout);
        return 0;
    }
    return die_usage("unknown command '%s' (run, exec, record, trace, list, compare, merge, calibrate, schema, version; "
                     "see --help)", cmd);
}
