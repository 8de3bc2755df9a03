/* cmd_tune.c - `mallocbench tune`: searches the allocator families' tunables
 * (their search domains, allocators/family.h) for the configuration that
 * serves one workload best.  This file checks every input first (one line,
 * exit 2, before any work) and hands a canonical command line to
 * scripts/tune.py, which races the candidates through `mallocbench run`. */
#include "cli.h"
#include "huge.h"
#include "registry.h"
#include "tools.h"
#include "units.h"
#include "workload.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

/* The longest search: 30 days (a deadline every timer can hold; a week is already long). */
#define TUNE_BUDGET_MAX_S (30 * 86400)

#define TUNE_MAX_ARGS 128

static void tune_usage(FILE *f)
{
    fprintf(f,
            "usage: mallocbench tune [-w SPEC | -m MATRIX | -- CMD ARGS] [-a FAMILIES]\n"
            "                        [--objective throughput|cpu|rss|pareto] [--budget 10m]\n"
            "                        [--max-rss SIZE] [--seed N] [--points N]\n"
            "                        [-d FAMILY:NAME=V|V|V or FAMILY:NAME=LO..HI] [-o FILE.md]\n"
            "                        [--resume | --force] [exec's or serve's options: --metric RE,\n"
            "                        --unit U, --lower-is-better, --ready R --client 'CMD', ...]\n"
            "Races each family's default, the hand-picked settings (jemalloc's PyTorch/Intel\n"
            "MALLOC_CONF) and points sampled over the families' search domains (`mallocbench\n"
            "list tunables`) in randomized paired blocks through `mallocbench run` (exec for a\n"
            "command, serve with --ready/--client), drops what a paired test shows worse than\n"
            "the leader and halves the rest each round down to two finalists, then confirms\n"
            "them against their families' defaults, glibc's default and the hand-picked\n"
            "setting in fresh blocks; every reported figure comes from that confirmation.\n"
            "  -w SPEC        a workload (as run's -w); -m MATRIX its first workload; -- CMD a command\n"
            "  -a FAMILIES    families to search (default glibc,jemalloc,tcmalloc,mimalloc)\n"
            "  --objective    throughput (default), cpu (user+sys), rss (peak), pareto (throughput,\n"
            "                 the fronts against peak RSS and kernel CPU in the report)\n"
            "  --budget D     wall time for the whole search and the confirmation (default 10m)\n"
            "  --max-rss SIZE only configurations whose median peak RSS stays within SIZE win\n"
            "  --seed N       the sampled points and every block order (default: random, printed)\n"
            "  --points N     points sampled per family (Latin hypercube; default 4)\n"
            "  -d, --domain   replace a family's search domain (repeatable); naming a family's\n"
            "                 domains this way searches only those of that family\n"
            "  -o FILE        the report (default results/tune-<seed>.md); beside it FILE's CSVs\n"
            "                 (BASE.roundN.csv, BASE.confirm.csv, BASE.tune.json) and plots\n"
            "  --resume       continue the search saved in BASE.tune.json (same options; its seed\n"
            "                 unless --seed is given; a longer --budget may be given)\n"
            "  --force        start again over an existing search\n"
            "  exec's --metric/--unit/--lower-is-better and serve's --ready, --ready-timeout,\n"
            "  --grace, --client, --latency, --latency-unit go to every round as given\n");
}

/* FAMILY:NAME=DOMAIN checked against the family's tunable: 0, or 2 after the line. */
/* --domain FAMILY:huge=V|V: each value one huge_parse accepts (advise only
 * for a family with a huge-page setting, on a kernel that gives them). */
static int huge_domain(const alloc_info_t *a, const char *values)
{
    char buf[128], why[512];
    if (strstr(values, "..") || !*values)
        return die_usage("tune: bad domain '%s:huge=%s': a list of never|advise|system", a->name, values);
    snprintf(buf, sizeof buf, "%s", values);
    for (char *save = NULL, *v = strtok_r(buf, "|", &save); v; v = strtok_r(NULL, "|", &save)) {
        run_huge_t h;
        if (huge_value(a, v, &h, why, sizeof why))
            return die_usage("tune: bad domain '%s:huge=%s': %s", a->name, values, why);
    }
    return 0;
}

static int check_domain_arg(const char *arg)
{
    char fam[64], name[64], err[512];
    const char *colon = strchr(arg, ':'), *eq = colon ? strchr(colon, '=') : NULL;
    if (!colon || !eq || colon == arg || (size_t)(colon - arg) >= sizeof fam ||
        (size_t)(eq - colon - 1) >= sizeof name || eq == colon + 1)
        return die_usage("tune: bad domain '%s' (expected FAMILY:NAME=V|V|V or FAMILY:NAME=LO..HI)", arg);
    snprintf(fam, sizeof fam, "%.*s", (int)(colon - arg), arg);
    snprintf(name, sizeof name, "%.*s", (int)(eq - colon - 1), colon + 1);
    const alloc_info_t *a = alloc_find(fam);
    if (!a)
        return die_usage("tune: bad domain '%s': unknown allocator '%s'", arg, fam);
    if (!strcmp(name, HUGE_NAME)) /* the harness's huge-page condition: each value as -t takes it */
        return huge_domain(a, eq + 1);
    if (alloc_check_domain(a, name, eq + 1, err, sizeof err))
        return die_usage("tune: bad domain '%s': %s", arg, err);
    return 0;
}

/* The comma-separated family list: 0 when non-empty and every name known. */
static int check_families(const char *list)
{
    if (!list || !*list || strspn(list, ", ") == strlen(list))
        return die_usage("tune: empty allocator family list (-a): name at least one, e.g. -a glibc,jemalloc");
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, ",");
        char name[64];
        if (n == 0 || n >= sizeof name)
            return die_usage("tune: bad allocator family list '%s' (expected NAME,NAME,...)", list);
        snprintf(name, sizeof name, "%.*s", (int)n, s);
        if (!alloc_find(name))
            return die_usage("tune: unknown allocator family '%s' (see mallocbench list allocators)", name);
        s += n + (s[n] == ',');
        if (s[-1] == ',' && !*s)
            return die_usage("tune: bad allocator family list '%s' (trailing comma)", list);
    }
    return 0;
}

typedef struct {
    const char *workload, *matrix, *families, *objective, *out;
    double budget_s;
    unsigned long long max_rss, seed, points;
    int have_seed, dash;
    const char *domains[16];
    int ndomains;
    int resume, force, serve;
    const char *pass[32]; /* exec's or serve's own options, word by word */
    int npass;
} tune_opts_t;

/* exec's and serve's options that tune hands to every round: with a value, then flags. */
static const char *const pass_valued[] = {"--metric", "--unit", "--ready", "--ready-timeout", "--grace",
                                          "--client", "--latency", "--latency-unit"};

/* argv[*i] when it is one of them: 1 taken into o->pass, 0 not, 2 after the error. */
static int take_passthrough(tune_opts_t *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = NULL;
    if (!strcmp(a, "--lower-is-better")) {
        if (o->npass + 1 > 32)
            return die_usage("tune: too many exec or serve options");
        o->pass[o->npass++] = a;
        return 1;
    }
    for (size_t k = 0; k < sizeof pass_valued / sizeof *pass_valued; k++)
        if ((v = cli_take(pass_valued[k], argc, argv, i))) {
            if (o->npass + 2 > 32)
                return die_usage("tune: too many exec or serve options");
            o->pass[o->npass++] = pass_valued[k];
            o->pass[o->npass++] = v;
            o->serve |= k >= 2; /* --ready and the rest are serve's alone */
            return 1;
        }
    return 0;
}

/* The value of option argv[*i] (--name=V or --name V or -x V), or NULL. */
static const char *opt_value(const char *s, const char *l, int argc, char **argv, int *i)
{
    const char *v = cli_take(l, argc, argv, i);
    return v || !s || strcmp(argv[*i], s) || *i + 1 >= argc ? v : argv[++*i];
}

/* Every option into o: 0, 1 for --help (printed), or 2 after the line. */
static int tune_parse(int argc, char **argv, tune_opts_t *o)
{
    static const char *const objectives[] = {"throughput", "cpu", "rss", "pareto"};
    for (int i = 1; i < argc; i++) {
        const char *v = NULL, *a = argv[i];
        int took;
        if (!strcmp(a, "--")) {
            o->dash = i;
            break;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            return tune_usage(stdout), 1;
        } else if ((v = opt_value("-w", "--workload", argc, argv, &i))) {
            o->workload = v;
        } else if ((v = opt_value("-m", "--matrix", argc, argv, &i))) {
            o->matrix = v;
        } else if ((v = opt_value("-a", "--allocators", argc, argv, &i))) {
            o->families = v;
        } else if ((v = opt_value(NULL, "--objective", argc, argv, &i))) {
            o->objective = v;
            size_t k = 0;
            while (k < 4 && strcmp(v, objectives[k]))
                k++;
            if (k == 4)
                return die_usage("tune: unknown objective '%s' (throughput, cpu, rss, pareto)", v);
        } else if ((v = opt_value(NULL, "--budget", argc, argv, &i))) {
            if (units_parse_duration(v, &o->budget_s) || o->budget_s <= 0)
                return die_usage("tune: bad --budget '%s' (a duration such as 90s or 10m)", v);
            if (o->budget_s > TUNE_BUDGET_MAX_S) /* a deadline past what timers and the journal can hold */
                return die_usage("tune: --budget '%s' is longer than %d days", v, TUNE_BUDGET_MAX_S / 86400);
        } else if ((v = opt_value(NULL, "--max-rss", argc, argv, &i))) {
            uint64_t z;
            if (units_parse_size(v, &z) || z == 0)
                return die_usage("tune: bad --max-rss '%s' (a size such as 512M)", v);
            o->max_rss = z;
        } else if ((v = opt_value(NULL, "--seed", argc, argv, &i))) {
            uint64_t z;
            if (units_parse_u64(v, &z))
                return die_usage("tune: bad --seed '%s' (a non-negative integer)", v);
            o->seed = z, o->have_seed = 1;
        } else if ((v = opt_value(NULL, "--points", argc, argv, &i))) {
            uint64_t z;
            if (units_parse_u64(v, &z) || z > 64)
                return die_usage("tune: bad --points '%s' (0..64)", v);
            o->points = z;
        } else if ((v = opt_value("-d", "--domain", argc, argv, &i))) {
            if (o->ndomains == 16)
                return die_usage("tune: at most 16 --domain options");
            if (check_domain_arg(v))
                return 2;
            o->domains[o->ndomains++] = v;
        } else if ((v = opt_value("-o", "--output", argc, argv, &i))) {
            o->out = v;
        } else if (!strcmp(a, "--resume")) {
            o->resume = 1;
        } else if (!strcmp(a, "--force")) {
            o->force = 1;
        } else if ((took = take_passthrough(o, argc, argv, &i))) {
            if (took == 2)
                return 2;
        } else {
            return die_usage("tune: unknown or incomplete option '%s' (see mallocbench tune --help)", a);
        }
    }
    return 0;
}

/* A huge domain beside a domain of one of the family's huge-page tunables
 * would draw points the run refuses (huge=never with thp=always): refused
 * here, before the search, in one line. */
static int check_huge_domains(const tune_opts_t *o)
{
    for (int i = 0; i < o->ndomains; i++) {
        const char *d = o->domains[i], *colon = strchr(d, ':');
        if (strncmp(colon + 1, HUGE_NAME "=", strlen(HUGE_NAME) + 1))
            continue;
        for (int k = 0; k < o->ndomains; k++) {
            const char *e = o->domains[k], *c2 = strchr(e, ':');
            char fam[64], name[64];
            snprintf(fam, sizeof fam, "%.*s", (int)(c2 - e), e);
            snprintf(name, sizeof name, "%.*s", (int)strcspn(c2 + 1, "="), c2 + 1);
            const alloc_info_t *a = alloc_find(fam);
            if (k != i && (size_t)(c2 - e) == (size_t)(colon - d) && !strncmp(e, d, (size_t)(colon - d)) && a &&
                huge_tunable(a, name))
                return die_usage("tune: domains '%s' and '%s' would draw settings that contradict each other "
                                 "(huge=never with the family's own huge-page setting on): search one of them", d, e);
        }
    }
    return 0;
}

/* The workload source: exactly one of -w, -m, -- CMD; -w parsed as run would. */
static int tune_check_source(const tune_opts_t *o, int argc)
{
    int n = (o->workload != NULL) + (o->matrix != NULL) + (o->dash > 0);
    if (n != 1)
        return die_usage("tune: give exactly one of -w SPEC, -m MATRIX or -- CMD ARGS");
    if (o->dash > 0 && o->dash + 1 >= argc)
        return die_usage("tune: no command after --");
    if (o->npass && o->dash <= 0)
        return die_usage("tune: %s is an option of exec and serve: give the program after --", o->pass[0]);
    if (o->resume && o->force)
        return die_usage("tune: --resume and --force: give one");
    if (o->resume && !o->out && !o->have_seed) /* its journal's name comes from -o or the seed */
        return die_usage("tune: --resume: which search? give its -o FILE.md (or its --seed N)");
    if (o->matrix && access(o->matrix, R_OK))
        return die_usage("tune: cannot read '%s': %s", o->matrix, strerror(errno));
    if (o->workload) {
        wl_args_t *w = calloc(1, sizeof *w);
        char err[1024];
        if (!w)
            return die_io("out of memory");
        int rc = wl_parse_spec(o->workload, w, err, sizeof err);
        free(w);
        if (rc)
            return die_usage("tune: %s", err);
    }
    return 0;
}

/* A search already saved at the report's base: refused unless --resume or --force. */
static int tune_check_existing(const tune_opts_t *o)
{
    char base[PATH_MAX], json[PATH_MAX + 16];
    if (o->out) {
        size_t n = strlen(o->out);
        if (n >= sizeof base)
            return die_usage("tune: -o '%s': the path is too long", o->out);
        snprintf(base, sizeof base, "%.*s", (int)(n > 3 && !strcmp(o->out + n - 3, ".md") ? n - 3 : n), o->out);
    } else {
        snprintf(base, sizeof base, "results/tune-%llu", o->seed);
    }
    snprintf(json, sizeof json, "%s.tune.json", base);
    if (!o->resume && !o->force && access(json, F_OK) == 0)
        return die_usage("tune: '%s' exists: add --resume to continue that search, or --force to start again",
                         json);
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    tune_opts_t o = {.families = "glibc,jemalloc,tcmalloc,mimalloc", .objective = "throughput",
                     .budget_s = 600, .points = 4};
    int rc = tune_parse(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : rc;
    if (check_families(o.families) || tune_check_source(&o, argc) || check_huge_domains(&o))
        return 2;
    if (!o.have_seed && getrandom(&o.seed, sizeof o.seed, 0) != sizeof o.seed)
        o.seed = (unsigned long long)getpid();
    o.seed %= 1000000007ULL;
    char budget[32], seed[32], rss[32], points[32];
    if (tune_check_existing(&o))
        return 2;
    snprintf(budget, sizeof budget, "%.3f", o.budget_s);
    snprintf(seed, sizeof seed, "%llu", o.seed);
    snprintf(rss, sizeof rss, "%llu", o.max_rss);
    snprintf(points, sizeof points, "%llu", o.points);
    char **args = calloc((size_t)argc + TUNE_MAX_ARGS, sizeof *args);
    if (!args)
        return die_io("out of memory");
    int k = 0;
    const char *fixed[] = {"--families", o.families, "--objective", o.objective, "--budget-s", budget,
                           "--seed", seed, "--max-rss-bytes", rss, "--points", points};
    for (size_t j = 0; j < sizeof fixed / sizeof *fixed; j++)
        args[k++] = (char *)fixed[j];
    args[k++] = "--via", args[k++] = o.serve ? "serve" : o.dash > 0 ? "exec" : "run"; /* a command: exec */
    if (!o.have_seed)
        args[k++] = "--seed-drawn"; /* --resume takes the journal's */
    for (int j = 0; j < o.npass; j++) {
        char *w = malloc(strlen(o.pass[j]) + 8);
        if (!w)
            return die_io("out of memory");
        sprintf(w, "--pass=%s", o.pass[j]);
        args[k++] = w;
    }
    if (o.resume)
        args[k++] = "--resume";
    if (o.force)
        args[k++] = "--force";
    if (o.out)
        args[k++] = "-o", args[k++] = (char *)o.out;
    if (o.workload)
        args[k++] = "-w", args[k++] = (char *)o.workload;
    if (o.matrix)
        args[k++] = "-m", args[k++] = (char *)o.matrix;
    for (int j = 0; j < o.ndomains; j++)
        args[k++] = "--domain", args[k++] = (char *)o.domains[j];
    for (int j = o.dash > 0 ? o.dash : argc; j < argc; j++)
        args[k++] = argv[j];
    /* SIGINT, SIGTERM and SIGHUP wait, blocked across the exec, until tune.py has its handlers
     * (catch_signals): one sent while python starts ends as at any other moment, with the line
     * that says how to continue, never a traceback.  An ignored one stays ignored. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    return tools_exec_python("tune", k, args);
}
