/* cmd_diagnose.c - `mallocbench diagnose -p PID | --all | -- CMD`: a process
 * that runs already (or a command run as it is) watched from outside for a
 * window: every fault and give-back call recorded by per-CPU system-wide
 * events (harness/watch/perfring.h), classified by the page model
 * (pagemodel.h), its allocator and start-up settings recognised (ident.h).
 * The measurements go out as one JSON document (schema
 * mallocbench-diagnose-raw/1) to mallocbench.diagnose, which predicts the
 * fix's saving and says it in words (or --json).  The watched process is
 * never stopped, signalled or waited on; diagnose only reads. */
#include "cli.h"
#include "configs.h"
#include "elfinfo.h"
#include "ident.h"
#include "launch.h"
#include "pagemodel.h"
#include "perfring.h"
#include "procread.h"
#include "prepare.h"
#include "registry.h"
#include "spawn.h"
#include "text.h"
#include "tools.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_WINDOW_S 10.0
#define POLL_NS 20000000ull     /* read the rings every 20 ms ... */
#define SETTLE_NS 50000000ull   /* ... handing on what is older than 50 ms (every CPU has written it) */
#define SERIES_OUT 200          /* replay points written per process */
#define ALL_OUT 200             /* processes written by --all (the busiest) */
#define DEFAULT_LIGHT 16        /* --light: one fault in this many recorded */
#define MAX_T 16                /* -t given to a command's family */
#define DEFAULT_MAX_MEMORY (256ull << 20) /* --max-memory: diagnose's own memory, at most */
#define STOP_GRACE_NS 500000000ull /* the window's end: what is left of its records gets this long */
#define SIGNAL_GRACE_NS 100000000ull /* ... and after SIGINT/SIGTERM, this long */

extern char **environ;

typedef enum { MODE_NONE, MODE_PID, MODE_ALL, MODE_CMD } mode_t_;

typedef struct {
    mode_t_ mode;
    pid_t pid;
    double window_s;
    bool window_given, children, json, calibrate;
    unsigned light;        /* --light: one fault record in this many (0: every one) */
    const char *stacks;    /* --stacks PREFIX: PREFIX.folded and PREFIX.svg, by perf record */
    bool force, show_args;
    uint64_t max_memory;   /* --max-memory: the page model's cap, bytes */
    char perf[PATH_MAX];
    const char *top;
    char **cmd;
    int ncmd;
    char path[PATH_MAX];   /* what the command runs */
    const char *family;    /* -a: the family (as exec -a takes one) to run the command under */
    const char *tun[MAX_T];/* -t FAMILY:NAME=VALUE, as exec takes them */
    size_t ntun;
    run_config_t *cfg;     /* -a resolved as exec resolves it (configs.h) */
    char **envp;           /* the command's environment: ours, or -a's (prepare_env) */
} dopts_t;

typedef struct {          /* what /proc says of a process at the window's ends */
    bool ok;
    double utime_s, stime_s;
    uint64_t rss_kib, anon_huge_kib;
} pstat_t;

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static int usage(FILE *out)
{
    fprintf(out,
            "usage: mallocbench diagnose -p PID [--duration 10s] [--children] [--json]\n"
            "       mallocbench diagnose --all [--duration 10s] [--top N] [--json]\n"
            "       mallocbench diagnose [-a FAMILY [-t FAMILY:NAME=VALUE]...] [--duration D] [--children] [--json]\n"
            "                            -- CMD [ARGS...]\n"
            "How much of a running process's CPU goes to pages its allocator gave back and\n"
            "touched again, what would stop it, and what that is predicted to save: every\n"
            "fault and every madvise/munmap/brk/mremap/mmap(MAP_FIXED) of the window recorded\n"
            "by per-CPU system-wide perf events (root), the faults split into first touch,\n"
            "re-faults on memory given back (by age), copy-on-write, file-backed and other;\n"
            "the allocator and the settings it started with (only the allocators' variables\n"
            "of its environment are read).  ^C ends the window early and reports it.\n"
            "  -p, --pid PID      the process to watch (all its threads)\n"
            "  --all              every process on the host, ranked by the CPU re-faults cost them\n"
            "  -- CMD ARGS        run CMD as it is (its own allocator) and watch it to its end\n"
            "  -a FAMILY          run CMD under this allocator, as `exec -a` takes it (FAMILY, FAMILY=LIBRARY),\n"
            "                     its variables set as exec sets them (no `env LD_PRELOAD=` to compose)\n"
            "  -t FAMILY:NAME=V   with -a: a tunable, as `exec -t` takes it (one value each)\n"
            "  --duration D       the window (default 10s; a command: until it exits)\n"
            "  --children         watch the processes it starts too\n"
            "  --calibrate        also measure what a re-fault costs whole on this machine (calibrate,\n"
            "                     ~1 s, after the window): the upper end of the predicted saving\n"
            "  --top N            --all: processes shown (default 10)\n"
            "  --light[=N]        record one fault in N (16): less overhead; the re-fault figures\n"
            "                     become estimates with a 95%% CI\n"
            "  --stacks PREFIX    also the call stacks (perf record --call-graph dwarf, faults 1 in 16,\n"
            "                     the give-back calls): PREFIX.folded and PREFIX.svg, a flame graph\n"
            "  --force            replace the --stacks outputs\n"
            "  --max-memory SIZE  diagnose's own memory, at most (default 256M): past it, pages given back\n"
            "                     are counted as untracked bytes and the counts are lower bounds\n"
            "  --show-args        keep the watched processes' arguments in the report (left out by\n"
            "                     default: they may carry secrets; the program's name is kept)\n"
            "  --json             the document (schema mallocbench-diagnose/1) instead of words\n"
            "docs/diagnose.md says what each figure measures and how the saving is predicted.\n");
    return out == stdout ? 0 : 2;
}

static int parse_pid(const char *s, pid_t *out)
{
    uint64_t v;
    if (units_parse_u64(s, &v) || v == 0 || v > 4194304)
        return die_usage("diagnose: -p '%s': not a process id", s);
    *out = (pid_t)v;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d", (int)v);
    if (access(path, F_OK))
        return die_usage("diagnose: -p %d: no such process", (int)v);
    if (*out == getpid())
        return die_usage("diagnose: -p %d: that is diagnose itself", (int)v);
    return 0;
}

/* --stacks PREFIX: perf on PATH, PREFIX's folder there, its outputs new (or --force). */
static int check_stacks(dopts_t *o)
{
    if (o->mode == MODE_ALL)
        return die_usage("diagnose: --stacks follows one process (-p or a command), not --all");
    if (elf_which("perf", o->perf, sizeof o->perf))
        return die_usage("diagnose: --stacks needs perf (Debian's linux-perf): not found on PATH");
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", o->stacks);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (slash && dir[0] && access(dir, W_OK))
        return die_usage("diagnose: --stacks '%s': the folder '%s' is not there or not writable", o->stacks, dir);
    static const char *const ext[] = {".folded", ".svg", ".perf.data", ".perf.log"};
    for (size_t i = 0; i < sizeof ext / sizeof *ext; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "%s%s", o->stacks, ext[i]);
        /* lstat: a link (dangling or not) is there too; perf's files are made new (O_EXCL) */
        if (!lstat(p, &st) && (i >= 2 || !o->force))
            return die_usage("diagnose: --stacks: '%s' exists%s", p, i >= 2 ? " (a perf record of another diagnose?)"
                                                                           : " (--force replaces it)");
    }
    return 0;
}

/* -a and -t resolved as exec resolves them (configs.h), to one configuration, and the command's
 * environment from it: ours without any allocator variable, then the family's library preloaded
 * and its settings (prepare_env, the one environment builder of every launch site). */
static int resolve_family(dopts_t *o)
{
    run_spec_t *sp = calloc(1, sizeof *sp);
    o->cfg = calloc(SPEC_MAX_CONFIGS, sizeof *o->cfg);
    if (!sp || !o->cfg) {
        free(sp);
        return die_io("diagnose: out of memory");
    }
    snprintf(sp->allocators, sizeof sp->allocators, "%s", o->family);
    for (size_t i = 0; i < o->ntun; i++)
        snprintf(sp->tunable[sp->nt++], sizeof sp->tunable[0], "%s", o->tun[i]);
    size_t n = 0;
    int rc = configs_resolve(sp, o->cfg, &n);
    free(sp);
    if (rc)
        return rc;
    if (n != 1)
        return die_usage("diagnose: -a %s%s: %zu configurations; a command is watched under one (one family, "
                         "one value a tunable)", o->family, o->ntun ? " -t ..." : "", n);
    const run_config_t *c = o->cfg;
    char pre[PATH_MAX + 16], *extra[ALLOC_ENV_MAX + 1];
    size_t ne = 0;
    if (c->lib[0]) {
        snprintf(pre, sizeof pre, "LD_PRELOAD=%s", c->lib);
        extra[ne++] = pre;
    }
    for (size_t i = 0; i < c->env.n && ne < sizeof extra / sizeof *extra; i++)
        extra[ne++] = (char *)c->env.var[i];
    if ((rc = prepare_env(extra, ne, &o->envp)))
        return die_io("diagnose: the command's environment: %s", strerror(-rc));
    return 0;
}

static int parse(int argc, char **argv, dopts_t *o)
{
    memset(o, 0, sizeof *o);
    o->window_s = DEFAULT_WINDOW_S;
    o->max_memory = DEFAULT_MAX_MEMORY;
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return usage(stdout), -1;
        if (!strcmp(argv[i], "--")) {
            if (i + 1 >= argc)
                return die_usage("diagnose: nothing after --: give the command to run");
            o->mode = o->mode ? MODE_NONE - 1 : MODE_CMD;
            o->cmd = argv + i + 1;
            o->ncmd = argc - i - 1;
            break;
        } else if ((v = cli_take("-p", argc, argv, &i)) || (v = cli_take("--pid", argc, argv, &i))) {
            o->mode = o->mode ? MODE_NONE - 1 : MODE_PID;
            if (parse_pid(v, &o->pid))
                return 2;
        } else if (!strcmp(argv[i], "--all")) {
            o->mode = o->mode ? MODE_NONE - 1 : MODE_ALL;
        } else if ((v = cli_take("--duration", argc, argv, &i))) {
            if (units_parse_duration(v, &o->window_s) || !(o->window_s > 0) || o->window_s > 86400)
                return die_usage("diagnose: --duration '%s': want a duration from 1ms to 24h (10s, 500ms, 2m)", v);
            o->window_given = true;
        } else if ((v = cli_take("--top", argc, argv, &i))) {
            uint64_t n;
            if (units_parse_u64(v, &n) || n == 0 || n > 10000)
                return die_usage("diagnose: --top '%s': want a count from 1 to 10000", v);
            o->top = v;
        } else if ((v = cli_take("-a", argc, argv, &i)) || (v = cli_take("--allocators", argc, argv, &i))) {
            if (o->family)
                return die_usage("diagnose: -a given twice: a command runs under one family");
            o->family = v;
        } else if ((v = cli_take("-t", argc, argv, &i)) || (v = cli_take("--tunable", argc, argv, &i))) {
            if (o->ntun == MAX_T)
                return die_usage("diagnose: more than %d -t", MAX_T);
            o->tun[o->ntun++] = v;
        } else if ((v = cli_take("--stacks", argc, argv, &i))) {
            o->stacks = v;
        } else if (!strcmp(argv[i], "--force")) {
            o->force = true;
        } else if (!strcmp(argv[i], "--show-args")) {
            o->show_args = true;
        } else if ((v = cli_take("--max-memory", argc, argv, &i))) {
            if (units_parse_size(v, &o->max_memory) || o->max_memory < (32ull << 20) || o->max_memory > (1ull << 40))
                return die_usage("diagnose: --max-memory '%s': want a size from 32M to 1T", v);
        } else if (!strcmp(argv[i], "--children")) {
            o->children = true;
        } else if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--calibrate")) {
            o->calibrate = true;
        } else if (!strcmp(argv[i], "--light") || !strncmp(argv[i], "--light=", 8)) {
            uint64_t n = DEFAULT_LIGHT;
            if (argv[i][7] == '=' && (units_parse_u64(argv[i] + 8, &n) || n < 2 || n > 65536))
                return die_usage("diagnose: --light=%s: want one fault in N recorded, N from 2 to 65536", argv[i] + 8);
            o->light = (unsigned)n;
        } else {
            return die_usage("diagnose: unknown option '%s' (see --help)", argv[i]);
        }
    }
    if ((int)o->mode < 0)
        return die_usage("diagnose: give one of -p PID, --all or -- CMD, not several");
    if (o->mode == MODE_NONE)
        return die_usage("diagnose: give -p PID, --all or -- CMD (see --help)");
    if (o->top && o->mode != MODE_ALL)
        return die_usage("diagnose: --top ranks the processes of --all only");
    if (o->children && o->mode == MODE_ALL)
        return die_usage("diagnose: --all watches every process already; --children adds nothing");
    if ((o->family || o->ntun) && o->mode != MODE_CMD)
        return die_usage("diagnose: -a and -t choose the allocator of a command (-- CMD); a running process "
                         "keeps its own");
    if (o->ntun && !o->family)
        return die_usage("diagnose: -t sets a tunable of the family -a names: give -a FAMILY too");
    if (o->stacks && check_stacks(o))
        return 2;
    if (o->mode == MODE_CMD) {
        int rc = elf_which(o->cmd[0], o->path, sizeof o->path);
        if (rc)
            return die_usage("diagnose: cannot run '%s': %s", o->cmd[0],
                             rc == -ENOENT ? "not found" : rc == -EISDIR ? "a directory" : "not executable");
        if (o->family && (rc = resolve_family(o)))
            return rc;
    }
    return 0;
}

static pstat_t proc_stat(pid_t pid)
{
    pstat_t s = {0};
    char buf[4096], *f;
    if (spawn_proc_stat(pid, buf, sizeof buf, &f))
        return s;
    unsigned long long ut, st;
    /* fields from 3 on: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
    if (sscanf(f, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return s;
    double tck = (double)sysconf(_SC_CLK_TCK);
    s.utime_s = (double)ut / tck, s.stime_s = (double)st / tck;
    char *roll = NULL; /* by the reader: smaps_rollup takes the memory-map lock the process can hold */
    size_t len = 0;
    if (procread_file(pid, "smaps_rollup", PROCREAD_TIMEOUT_MS, &roll, &len) || !roll)
        return s;
    for (char *line = strtok(roll, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long kib;
        if (sscanf(line, "Rss: %llu kB", &kib) == 1)
            s.rss_kib = kib;
        else if (sscanf(line, "AnonHugePages: %llu kB", &kib) == 1)
            s.anon_huge_kib = kib;
    }
    free(roll);
    s.ok = true;
    return s;
}

/* Our own CPU time so far, s. */
static double self_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Is pid gone (or a zombie nobody reaped yet)? */
static bool proc_gone(pid_t pid)
{
    char buf[4096], *f;
    return spawn_proc_stat(pid, buf, sizeof buf, &f) != 0 || f[1] == 'Z' || f[1] == 'X';
}

/* ---- the document ------------------------------------------------------ */

static const char *const sys_key[PR_NSYS] = {"madvise", "munmap", "brk", "mremap", "mmap_fixed"};
static const char *const class_key[PM_NCLASS] = {"first_touch", "refault", "lazy_reclaimed",
                                                 "cow", "file", "other"};
static const char *const by_key[PM_NBY] = {"madvise", "munmap", "brk"};
static const char *const at_key[PR_NAT] = {"user", "kernel", "fault", "giveback", "tlb"};

static const char *advice_name(unsigned a)
{
    static const char *const names[] = {
        [0] = "MADV_NORMAL", [1] = "MADV_RANDOM", [2] = "MADV_SEQUENTIAL", [3] = "MADV_WILLNEED",
        [4] = "MADV_DONTNEED", [8] = "MADV_FREE", [9] = "MADV_REMOVE", [10] = "MADV_DONTFORK",
        [11] = "MADV_DOFORK", [12] = "MADV_MERGEABLE", [13] = "MADV_UNMERGEABLE",
        [14] = "MADV_HUGEPAGE", [15] = "MADV_NOHUGEPAGE", [16] = "MADV_DONTDUMP", [17] = "MADV_DODUMP",
        [18] = "MADV_WIPEONFORK", [19] = "MADV_KEEPONFORK", [20] = "MADV_COLD", [21] = "MADV_PAGEOUT",
        [22] = "MADV_POPULATE_READ", [23] = "MADV_POPULATE_WRITE", [24] = "MADV_DONTNEED_LOCKED",
        [25] = "MADV_COLLAPSE",
    };
    return a < sizeof names / sizeof names[0] && names[a] ? names[a] : "other";
}

static void jstr(FILE *f, const char *key, const char *v)
{
    fprintf(f, "\"%s\": ", key);
    text_json_write(f, v ? v : "");
}

static void jnum(FILE *f, const char *key, double v)
{
    if (isfinite(v))
        fprintf(f, "\"%s\": %.17g", key, v);
    else
        fprintf(f, "\"%s\": null", key);
}

static int cmp_lib(const void *a, const void *b)
{
    const pm_lib_t *x = a, *y = b;
    return (x->samples < y->samples) - (x->samples > y->samples);
}

/* Every file that took a sample, the most first (each file its own count). */
static void write_libs(FILE *f, const pm_model_t *m, const char *key, const pm_libs_t *libs)
{
    pm_lib_t *v = libs->n ? malloc(libs->n * sizeof *v) : NULL;
    size_t n = v ? libs->n : 0;
    if (v) {
        memcpy(v, libs->v, n * sizeof *v);
        qsort(v, n, sizeof *v, cmp_lib);
    }
    fprintf(f, "\"%s\": [", key);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s{", i ? ", " : "");
        jstr(f, "lib", v[i].name ? pm_lib_name(m, v[i].name) : "(anonymous or unknown)");
        fprintf(f, ", \"samples\": %llu}", (unsigned long long)v[i].samples);
    }
    uint64_t unkept = libs->unkept;
    for (size_t i = 0; !v && i < libs->n; i++) /* no room to sort: the counts, not told apart */
        unkept += libs->v[i].samples;
    if (unkept)
        fprintf(f, "%s{\"lib\": \"(not told apart: out of memory)\", \"samples\": %llu}", n ? ", " : "",
                (unsigned long long)unkept);
    fprintf(f, "]");
    free(v);
}

typedef struct {
    const char *files[1024];
    size_t n;
} files_t;

static void add_file(void *ctx, const char *path)
{
    files_t *fl = ctx;
    for (size_t i = 0; i < fl->n; i++)
        if (!strcmp(fl->files[i], path))
            return;
    if (fl->n < sizeof fl->files / sizeof fl->files[0])
        fl->files[fl->n++] = path;
}

/* Each image's reading (ident_capture, by procread's reader): its program file, its
 * allocator variables, its compiled-in settings and its command line, taken while it ran so
 * that one which execs or exits later is still recognised.  The environment block never
 * leaves ident_read, which keeps only allocator variables. */
typedef struct {
    bool done;
    int rc;               /* procread_capture's: 0 read, -ETIMEDOUT the process held the reading up,
                           * -ENOMEM past diagnose's memory cap */
    ident_capture_t *c;   /* NULL: not read */
} envcap_t;

static envcap_t *caps;
static size_t ncaps;

/* Reads image i (p) by the reader, its memory counted in the model's cap (past it: not read). */
static int capture_one(pm_model_t *m, size_t i, const pm_proc_t *p, const dopts_t *o)
{
    caps[i].done = true;
    if (!pm_room(m, sizeof *caps[i].c + IDENT_ENV_KEEP) || !(caps[i].c = malloc(sizeof *caps[i].c)))
        return caps[i].rc = -ENOMEM;
    caps[i].rc = procread_capture(p->pid, o->show_args, PROCREAD_TIMEOUT_MS, caps[i].c);
    if (caps[i].rc) {
        free(caps[i].c);
        caps[i].c = NULL;
    } else {
        pm_account(m, (int64_t)(sizeof *caps[i].c + caps[i].c->env_len));
    }
    pm_ignore(m, procread_pid()); /* a reader killed for its slowness has a successor */
    return caps[i].rc;
}

/* Room in caps for every image (each entry small: a reading is allocated when made). */
static bool caps_grow(pm_model_t *m)
{
    size_t n = pm_count(m);
    if (n <= ncaps)
        return true;
    envcap_t *g = pm_room(m, (n - ncaps) * sizeof *g) ? realloc(caps, n * sizeof *g) : NULL;
    if (!g)
        return false;
    pm_account(m, (int64_t)((n - ncaps) * sizeof *g));
    memset(g + ncaps, 0, (n - ncaps) * sizeof *g);
    caps = g, ncaps = n;
    return true;
}

/* A few images a call (CAPTURE_PER_POLL), none past `until` (perfring's clock; 0: no limit),
 * and none more in a pass once one was slow (a process that held the reader up), so that
 * --all's hundreds, hostile ones among them, never hold up the reading of the rings. */
#define CAPTURE_PER_POLL 8
static void capture_envs(pm_model_t *m, const dopts_t *o, uint64_t until)
{
    unsigned budget = CAPTURE_PER_POLL;
    caps_grow(m);
    for (size_t i = 0; i < ncaps && budget && !stop_signal && !(until && pr_now() >= until); i++) {
        const pm_proc_t *p = pm_at(m, i);
        if (caps[i].done || p->ended || p->before_exec) /* before its exec it is still our copy */
            continue;
        budget = capture_one(m, i, p, o) == -ETIMEDOUT ? 0 : budget - 1;
    }
}

/* Images still running and not read yet (--all's many, or short windows): read now, within
 * CAPTURE_REST_NS in all, and not at all once a stop signal came. */
#define CAPTURE_REST_NS 2000000000ull
static void capture_rest(pm_model_t *m, const dopts_t *o)
{
    caps_grow(m);
    uint64_t end = pr_now() + CAPTURE_REST_NS;
    for (size_t i = 0; i < ncaps && !stop_signal && pr_now() < end; i++) {
        const pm_proc_t *p = pm_at(m, i);
        if (!caps[i].done && !p->ended && !p->before_exec)
            capture_one(m, i, p, o);
    }
}

static void free_caps(void)
{
    for (size_t i = 0; i < ncaps; i++)
        if (caps[i].c) {
            ident_capture_free(caps[i].c);
            free(caps[i].c);
        }
    free(caps);
    caps = NULL, ncaps = 0;
}

/* The model's reads of /proc/PID/maps, by the reader. */
static int read_by_reader(int pid, const char *name, char **buf, size_t *len)
{
    return procread_file(pid, name, PROCREAD_TIMEOUT_MS, buf, len);
}

/* The page model's share of --max-memory: less the rings (PR_RING_PAGES a CPU) and the
 * program's own (MODEL_BASE); 16 MiB at least. */
#define MODEL_BASE (24ull << 20)
static uint64_t model_limit(uint64_t max_memory)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF), page = sysconf(_SC_PAGESIZE);
    uint64_t rings = (uint64_t)(ncpu > 0 ? ncpu : 1) * (PR_RING_PAGES + 1) * (uint64_t)(page > 0 ? page : 4096);
    uint64_t fixed = rings + MODEL_BASE;
    return max_memory > fixed + (16ull << 20) ? max_memory - fixed : 16ull << 20;
}


/* How `mallocbench exec` would start this image's allocator as it started: the library where it
 * is not the family's own (exec -a FAMILY:PATH), the settings its variables gave, as -t takes
 * them, and what of those variables no tunable says (exec cannot set it). */
static void write_exec(FILE *f, const ident_t *id)
{
    const alloc_info_t *a = id->family;
    char own[PATH_MAX] = "", real[PATH_MAX] = "", set[IDENT_MAX_VARS * 4][160], left[IDENT_MAX_VARS * 4][512];
    size_t nset = 0, nleft = 0;
    if (a && !alloc_is_system(a) && id->path[0] &&
        (alloc_locate(a, own, sizeof own) || !realpath(own, real) || strcmp(real, id->path)))
        snprintf(real, sizeof real, "%s", id->path);
    else
        real[0] = '\0';
    ident_exec_settings(a, (const char (*)[512])id->vars, id->nvars, set, sizeof set / sizeof *set, &nset, left,
                        sizeof left / sizeof *left, &nleft);
    fprintf(f, ", \"as_exec\": {");
    jstr(f, "library", real);
    fprintf(f, ", \"settings\": [");
    for (size_t i = 0; i < nset; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, set[i]);
    fprintf(f, "], \"not_settable\": [");
    for (size_t i = 0; i < nleft; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, left[i]);
    fprintf(f, "]}");
}

static void write_allocator(FILE *f, const pm_model_t *m, const pm_proc_t *p, const dopts_t *o)
{
    files_t fl = {.n = 0};
    pm_files(m, p, add_file, &fl);
    const envcap_t *cap = p->idx < ncaps && caps[p->idx].c ? &caps[p->idx] : NULL;
    ident_exe_t *own = NULL; /* a command's first image that ended before it was read: the file the user named */
    const ident_exe_t *exe = cap && !cap->c->exe_rc ? &cap->c->exe : NULL;
    if (!exe && o->mode == MODE_CMD && p->pid == o->pid && !p->forked_child && (own = malloc(sizeof *own)) &&
        !ident_exe_path(o->path, own))
        exe = own;
    ident_input_t in = {fl.files, fl.n, exe, NULL, 0, cap && cap->c->conf[0] ? cap->c->conf : NULL};
    char *env = NULL;
    size_t envlen = 0;
    const char *env_from = "none";
    if (cap && cap->c->env)
        in.environ = cap->c->env, in.environ_len = cap->c->env_len, env_from = "process";
    /* an image of the command that ended: the environment diagnose gave it (an image that
     * changed its own before exec is not seen) */
    bool own_env = !in.environ && o->mode == MODE_CMD && p->pid == o->pid;
    char ownblock[1] = "";
    if (own_env) { /* the command got our environment (or -a's): hand it over as a block */
        char **given = o->envp ? o->envp : environ;
        size_t len = 0;
        for (char **e = given; *e; e++)
            len += strlen(*e) + 1;
        env = malloc(len ? len : 1);
        for (char **e = given; env && *e; e++)
            memcpy(env + envlen, *e, strlen(*e) + 1), envlen += strlen(*e) + 1;
        in.environ = env ? env : ownblock, in.environ_len = envlen;
        env_from = "command";
    }
    ident_t id;
    ident_read(&in, &id);
    if (env)
        memset(env, 0, envlen); /* no environment stays in memory */
    free(env);
    free(own);
    fprintf(f, "\"allocator\": {");
    jstr(f, "family", id.family ? id.family->name : "");
    fprintf(f, ", \"sure\": %s, ", id.sure ? "true" : "false");
    jstr(f, "how", id.how), fprintf(f, ", ");
    jstr(f, "evidence", id.evidence), fprintf(f, ", ");
    jstr(f, "path", id.path), fprintf(f, ", ");
    jstr(f, "version", id.version), fprintf(f, ", ");
    jstr(f, "version_how", id.version_how), fprintf(f, ", ");
    fprintf(f, "\"environment_read\": %s, \"environment_from\": \"%s\", \"vars\": [", in.environ ? "true" : "false",
            env_from);
    for (size_t i = 0; i < id.nvars; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, id.vars[i]);
    fprintf(f, "], ");
    jstr(f, "malloc_conf_file", id.malloc_conf_file);
    fprintf(f, ", ");
    jstr(f, "malloc_conf_compiled", id.malloc_conf_compiled);
    write_exec(f, &id);
    fprintf(f, ", \"keep\": ");
    const alloc_info_t *a = id.family;
    if (a && a->keep) {
        alloc_setting_t s[8];
        alloc_env_t envset;
        size_t ns = 0;
        char err[256], buf[256], *save = NULL;
        snprintf(buf, sizeof buf, "%s", a->keep);
        for (char *tok = strtok_r(buf, ",", &save); tok && ns < 8; tok = strtok_r(NULL, ",", &save))
            if (!alloc_parse_setting(a, tok, &s[ns], err, sizeof err))
                ns++;
        memset(&envset, 0, sizeof envset);
        alloc_build_env(a, s, ns, &envset);
        fprintf(f, "{");
        jstr(f, "setting", a->keep);
        fprintf(f, ", \"settings\": [");
        for (size_t i = 0; i < ns; i++)
            fprintf(f, "%s\"%s=%s\"", i ? ", " : "", s[i].t->name, s[i].value);
        fprintf(f, "]");
        fprintf(f, ", ");
        jstr(f, "joined_by", a->conf.var ? a->conf.sep : ""); /* a variable the process set already gains ours */
        fprintf(f, ", \"env\": [");
        for (size_t i = 0; i < envset.n; i++)
            fprintf(f, "%s", i ? ", " : ""), text_json_write(f, envset.var[i]);
        fprintf(f, "], \"stops\": [");
        for (int b = 0, k = 0; b < PM_NBY; b++)
            if (a->keep_stops & (1u << b))
                fprintf(f, "%s\"%s\"", k++ ? ", " : "", by_key[b]);
        fprintf(f, "]}");
    } else {
        fprintf(f, "null");
    }
    fprintf(f, "}");
}

static void write_counts(FILE *f, const pm_proc_t *p)
{
    fprintf(f, "\"faults\": {\"minor\": %llu, \"major\": %llu", (unsigned long long)(p->faults - p->majors),
            (unsigned long long)p->majors);
    for (int c = 0; c < PM_NCLASS; c++)
        fprintf(f, ", \"%s\": %llu", class_key[c], (unsigned long long)p->cls[c]);
    fprintf(f, ", \"refault_age\": [");
    for (int b = 0; b < PM_NAGES; b++)
        fprintf(f, "%s%llu", b ? ", " : "", (unsigned long long)p->age[b]);
    fprintf(f, "], \"refault_pages\": %llu, \"alloc_refault_pages\": %llu, \"first_after_unmap\": %llu, "
               "\"refault_by\": {",
            (unsigned long long)p->refault_pages, (unsigned long long)p->alloc_refault_pages,
            (unsigned long long)p->first_after_unmap);
    for (int b = 0; b < PM_NBY; b++)
        fprintf(f, "%s\"%s\": %llu", b ? ", " : "", by_key[b], (unsigned long long)p->refault_by[b]);
    fprintf(f, "}, \"alloc_refault_by\": {");
    for (int b = 0; b < PM_NBY; b++)
        fprintf(f, "%s\"%s\": %llu", b ? ", " : "", by_key[b], (unsigned long long)p->alloc_refault_by[b]);
    fprintf(f, "}}, \"calls\": {");
    for (int s = 0; s < PR_NSYS; s++)
        fprintf(f, "%s\"%s\": {\"calls\": %llu, \"bytes\": %llu, \"alloc_calls\": %llu, \"alloc_bytes\": %llu}",
                s ? ", " : "", sys_key[s], (unsigned long long)p->calls[s], (unsigned long long)p->bytes[s],
                (unsigned long long)p->alloc_calls[s], (unsigned long long)p->alloc_bytes[s]);
    fprintf(f, "}, \"advice\": [");
    for (unsigned a = 0, k = 0; a <= PM_NADVICE; a++)
        if (p->advice_calls[a])
            fprintf(f, "%s{\"advice\": \"%s\", \"calls\": %llu, \"bytes\": %llu}", k++ ? ", " : "",
                    a == PM_NADVICE ? "other" : advice_name(a), (unsigned long long)p->advice_calls[a],
                    (unsigned long long)p->advice_bytes[a]);
    fprintf(f, "], \"failed_calls\": %llu, \"lazy_bytes\": %llu, \"untracked_bytes\": %llu, ",
            (unsigned long long)p->failed, (unsigned long long)p->lazy_bytes, (unsigned long long)p->untracked_bytes);
    fprintf(f, "\"cpu_samples\": {\"all\": %llu", (unsigned long long)p->samples);
    for (int a = 0; a < PR_NAT; a++)
        fprintf(f, ", \"%s\": %llu", at_key[a], (unsigned long long)p->at[a]);
    fprintf(f, ", \"giveback_by\": {");
    for (int s = 0; s < PR_NSYS; s++)
        fprintf(f, "%s\"%s\": %llu", s ? ", " : "", sys_key[s], (unsigned long long)p->at_sys[s]);
    fprintf(f, "}}");
}

static void write_replay(FILE *f, const pm_proc_t *p)
{
    fprintf(f, "\"kept_memory\": {\"peak_bytes\": {\"madvise\": %llu, \"any\": %llu}, "
               "\"end_bytes\": {\"madvise\": %llu, \"any\": %llu}, \"series\": [",
            (unsigned long long)p->peak[0], (unsigned long long)p->peak[1], (unsigned long long)p->kept[0],
            (unsigned long long)p->kept[1]);
    size_t step = p->nseries > SERIES_OUT ? (p->nseries + SERIES_OUT - 1) / SERIES_OUT : 1;
    for (size_t i = 0, k = 0; i < p->nseries; i++)
        if (i % step == 0 || i + 1 == p->nseries)
            fprintf(f, "%s[%.6f, %llu, %llu]", k++ ? ", " : "", (double)p->series[i].t / 1e9,
                    (unsigned long long)p->series[i].kept[0], (unsigned long long)p->series[i].kept[1]);
    fprintf(f, "]}");
}

static void write_pstat(FILE *f, const char *key, const pstat_t *s)
{
    fprintf(f, "\"%s\": ", key);
    if (!s->ok) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "{\"utime_s\": %.3f, \"stime_s\": %.3f, \"rss_kib\": %llu, \"anon_huge_kib\": %llu}", s->utime_s,
            s->stime_s, (unsigned long long)s->rss_kib, (unsigned long long)s->anon_huge_kib);
}

static void write_proc(FILE *f, const pm_model_t *m, const pm_proc_t *p, const dopts_t *o, const pstat_t *st0,
                       const pstat_t *st1)
{
    fprintf(f, "{\"pid\": %d, \"image\": %u, ", (int)p->pid, p->idx);
    jstr(f, "comm", p->comm);
    fprintf(f, ", \"cmdline\": [");
    /* as the reader took it while the image ran: its program's name, the rest counted
     * (arguments may carry secrets; --show-args keeps them) */
    const envcap_t *cap = p->idx < ncaps && caps[p->idx].c ? &caps[p->idx] : NULL;
    const char *cl = cap ? cap->c->cmdline : "";
    size_t n = cap ? cap->c->cmdline_len : 0;
    for (size_t at = 0; at < n; at += strnlen(cl + at, n - at) + 1)
        fprintf(f, "%s", at ? ", " : ""), text_json_write(f, cl + at);
    fprintf(f, "], \"args_hidden\": %u", cap ? cap->c->hidden_args : 0u);
    fprintf(f, ", \"forked\": %s, \"parent_image\": %d, \"ended\": %s, \"seconds\": %.6f, ",
            p->forked_child ? "true" : "false", p->parent_idx, p->ended ? "true" : "false",
            (double)(p->end_t - p->start_t) / 1e9);
    write_counts(f, p);
    fprintf(f, ", ");
    write_libs(f, m, "fault_libs", &p->fault_libs);
    fprintf(f, ", ");
    write_libs(f, m, "giveback_libs", &p->giveback_libs);
    fprintf(f, ", ");
    write_replay(f, p);
    fprintf(f, ", ");
    write_allocator(f, m, p, o);
    if (st0 && st1) {
        fprintf(f, ", ");
        write_pstat(f, "proc_start", st0);
        fprintf(f, ", ");
        write_pstat(f, "proc_end", st1);
    }
    fprintf(f, "}");
}

/* The order --all writes processes in: most cpu samples under faults and give-backs first. */
static const pm_model_t *sort_model;
static int cmp_loss(const void *a, const void *b)
{
    const pm_proc_t *x = pm_at(sort_model, *(const size_t *)a), *y = pm_at(sort_model, *(const size_t *)b);
    uint64_t lx = x->at[PR_AT_FAULT] + x->at[PR_AT_GIVEBACK], ly = y->at[PR_AT_FAULT] + y->at[PR_AT_GIVEBACK];
    if (lx != ly)
        return lx < ly ? 1 : -1;
    return (x->faults < y->faults) - (x->faults > y->faults);
}

typedef struct {
    double seconds;
    const char *end_reason;
    int exit_status;           /* the command's: its exit code, 128+signal; -1 unknown */
    double calib_ns, calib_refault_ns, calib_refault_sys_ns;
    double self_cpu_s;         /* diagnose's own CPU over the window */
    pstat_t st0, st1;
    time_t started;
} window_t;

/* The command as `mallocbench exec` takes it: an env(1) in front that sets, unsets or clears
 * allocator variables loses those words (exec sets the allocator itself and refuses a command
 * line that sets one: launch_env_word is the one reading of env's words), and env itself where
 * nothing else of it is left; "exec_dropped" names what went (the variables' names, never their
 * values).  Any other command is written as it is. */
static void write_exec_command(FILE *f, const dopts_t *o)
{
    bool env = o->ncmd > 1 && launch_is_env(o->cmd[0]);
    const char *keep[256], *dropped[256];
    int i = 1, nkeep = 0, ndropped = 0;
    while (env && i < o->ncmd && nkeep < 250 && ndropped < 250) {
        launch_env_word_t w;
        launch_env_word(o->cmd, (size_t)i, &w);
        if (w.kind == LAUNCH_ENV_PROGRAM || w.kind == LAUNCH_ENV_SPLIT || w.kind == LAUNCH_ENV_END)
            break; /* the command, or a split string: the rest stays as it is */
        for (size_t k = 0; k < w.words && i + (int)k < o->ncmd; k++)
            if (w.allocator) /* a cleared environment would clear exec's allocator too */
                dropped[ndropped++] = o->cmd[i + k];
            else
                keep[nkeep++] = o->cmd[i + k];
        i += (int)w.words;
    }
    if (!ndropped) /* nothing of an allocator's: the command as given */
        i = 0, nkeep = 0;
    fprintf(f, "\"exec_command\": [");
    int n = 0;
    if (nkeep)
        fprintf(f, "%s", n++ ? ", " : ""), text_json_write(f, o->cmd[0]);
    for (int k = 0; k < nkeep; k++)
        fprintf(f, "%s", n++ ? ", " : ""), text_json_write(f, keep[k]);
    for (int k = i; k < o->ncmd; k++)
        fprintf(f, "%s", n++ ? ", " : ""), text_json_write(f, o->cmd[k]);
    fprintf(f, "], \"exec_dropped\": [");
    for (int k = 0; k < ndropped; k++) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(dropped[k], "="), dropped[k]);
        fprintf(f, "%s", k ? ", " : ""), text_json_write(f, name);
    }
    fprintf(f, "]");
}

static void write_doc(FILE *f, const pm_model_t *m, const pr_watch_t *w, const dopts_t *o, const window_t *win)
{
    pr_stats_t ps;
    pr_stats(w, &ps);
    fprintf(f, "{\"schema\": \"mallocbench-diagnose-raw/1\", \"mode\": \"%s\", ",
            o->mode == MODE_PID ? "pid" : o->mode == MODE_ALL ? "all" : "command");
    fprintf(f, "\"target\": {\"pid\": %d, \"children\": %s, \"command\": [", (int)o->pid, o->children ? "true" : "false");
    for (int i = 0; i < o->ncmd; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, o->cmd[i]);
    fprintf(f, "], ");
    write_exec_command(f, o);
    fprintf(f, ", ");
    jstr(f, "allocator", o->family ? o->family : ""); /* -a, as exec takes it ("" the command's own) */
    fprintf(f, ", \"tunables\": [");
    for (size_t i = 0; i < o->ntun; i++)
        fprintf(f, "%s", i ? ", " : ""), text_json_write(f, o->tun[i]);
    fprintf(f, "], \"exit_status\": %d}, ", win->exit_status);
    fprintf(f, "\"window\": {\"started_unix\": %lld, \"seconds\": %.6f, \"ended\": \"%s\"}, ",
            (long long)win->started, win->seconds, win->end_reason);
    fprintf(f, "\"watch\": {\"cpus\": %u, \"records\": %llu, \"lost\": %llu, \"throttled\": %llu, "
               "\"kernel_symbols\": %s, \"cpu_period_ns\": %llu, \"fault_period\": %u, \"other_calls\": {",
            ps.ncpus, (unsigned long long)ps.records, (unsigned long long)ps.lost, (unsigned long long)ps.throttled,
            ps.ksyms ? "true" : "false", (unsigned long long)PR_CPU_PERIOD_NS, o->light ? o->light : 1u);
    for (int s = 0; s < PR_NSYS; s++)
        fprintf(f, "%s\"%s\": %llu", s ? ", " : "", sys_key[s], (unsigned long long)ps.other_calls[s]);
    fprintf(f, "}, \"tlb_other_samples\": %llu, ", (unsigned long long)pm_tlb_other(m));
    /* the bounds: the model's memory and its cap (--max-memory), records not taken after the
     * window's end or a stop signal; either makes every count a lower bound */
    fprintf(f, "\"model_bytes\": %llu, \"model_limit\": %llu, \"capped\": %s, \"dropped_records\": %llu, "
               "\"lower_bounds\": %s}, ",
            (unsigned long long)pm_bytes(m), (unsigned long long)model_limit(o->max_memory),
            pm_capped(m) ? "true" : "false", (unsigned long long)pm_dropped(m),
            pm_capped(m) || pm_dropped(m) || ps.lost ? "true" : "false");
    jnum(f, "calibrate_fault_ns", win->calib_ns);
    fprintf(f, ", ");
    jnum(f, "calibrate_refault_ns", win->calib_refault_ns);
    fprintf(f, ", ");
    jnum(f, "calibrate_refault_sys_ns", win->calib_refault_sys_ns);
    fprintf(f, ", ");
    jnum(f, "self_cpu_s", win->self_cpu_s);
    fprintf(f, ", \"processes\": [");
    size_t n = pm_count(m), *order = malloc((n ? n : 1) * sizeof *order), k = 0;
    for (size_t i = 0; order && i < n; i++) {
        const pm_proc_t *p = pm_at(m, i);
        if (o->mode != MODE_ALL || p->faults || p->samples || p->calls[PR_SYS_MADVISE] || p->calls[PR_SYS_MUNMAP])
            order[k++] = i;
    }
    sort_model = m;
    if (o->mode == MODE_ALL)
        qsort(order, k, sizeof *order, cmp_loss);
    for (size_t j = 0; j < k && (o->mode != MODE_ALL || j < ALL_OUT); j++) {
        const pm_proc_t *p = pm_at(m, order[j]);
        fprintf(f, "%s", j ? ",\n" : "\n");
        bool main_image = o->mode == MODE_PID && p->pid == o->pid;
        write_proc(f, m, p, o, main_image ? &win->st0 : NULL, main_image ? &win->st1 : NULL);
    }
    free(order);
    fprintf(f, "]}\n");
}

/* ---- the window ---------------------------------------------------------- */

/* Starts the command as it is (our environment, its own allocator; or -a's): 0 or 1. */
static int start_command(const dopts_t *o, pid_t *pid, int *go)
{
    int gp[2] = {-1, -1};
    if (go && pipe2(gp, O_CLOEXEC))
        return die_io("diagnose: pipe: %s", strerror(errno));
    spawn_t sp = {.path = o->path, .argv = o->cmd, .envp = o->envp ? o->envp : environ, .go_fd = go ? gp[0] : -1,
                  .exec_fail = "mallocbench: diagnose: cannot execute the command", .exec_fail_errno = true};
    int rc = spawn_start(&sp, pid);
    if (gp[0] >= 0)
        close(gp[0]);
    if (rc) {
        if (gp[1] >= 0)
            close(gp[1]);
        return die_io("diagnose: cannot start '%s': %s", o->cmd[0], strerror(-rc));
    }
    if (go)
        *go = gp[1];
    return 0;
}

/* Lets a command held before its exec go, once perf record has opened its file (its events
 * are on the command by then) or 5 s passed. */
static void release_command(int go, pid_t perf, int data_fd, pr_watch_t *w, pm_model_t *m)
{
    struct stat st;
    /* the rings are read meanwhile: on a busy host other processes' records would fill them */
    for (int i = 0; perf > 0 && data_fd >= 0 && i < 250 && (fstat(data_fd, &st) || st.st_size == 0); i++) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        (void)pr_poll(w, pr_now() - SETTLE_NS, pm_feed, m);
    }
    for (int i = 0; i < 10; i++) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
        (void)pr_poll(w, pr_now() - SETTLE_NS, pm_feed, m);
    }
    if (write(go, "g", 1) != 1)
        fprintf(stderr, "%s: diagnose: the command was not released: %s\n", prog, strerror(errno));
    close(go);
}

/* Watches until the window ends, the target ends, or a signal: the reason. */
static const char *watch_loop(pr_watch_t *w, pm_model_t *m, const dopts_t *o, pid_t child, uint64_t t0,
                              int *exit_status)
{
    bool bounded = o->mode != MODE_CMD || o->window_given;
    uint64_t end = t0 + (uint64_t)(o->window_s * 1e9);
    for (;;) {
        struct timespec ts = {0, (long)POLL_NS};
        nanosleep(&ts, NULL);
        uint64_t now = pr_now();
        if (pr_poll(w, now - SETTLE_NS, pm_feed, m))
            return "out of memory";
        capture_envs(m, o, bounded ? end : 0);
        if (stop_signal)
            return stop_signal == SIGINT ? "interrupted" : "terminated";
        if (bounded && now >= end)
            return "duration";
        if (o->mode == MODE_PID && proc_gone(o->pid))
            return "exit";
        if (o->mode == MODE_CMD) {
            int status;
            if (waitpid(child, &status, WNOHANG) == child) {
                *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                return "exit";
            }
        }
    }
}

/* perf record of pid's stacks (faults 1 in 16, the give-back calls) into PREFIX.perf.data,
 * its messages into PREFIX.perf.log: its pid, or -1 (the log says why). */
static pid_t start_stacks(const dopts_t *o, pid_t pid, int *data_fd)
{
    char data[PATH_MAX], log[PATH_MAX], p[32];
    snprintf(data, sizeof data, "%s.perf.data", o->stacks);
    snprintf(log, sizeof log, "%s.perf.log", o->stacks);
    snprintf(p, sizeof p, "%d", (int)pid);
    /* both made new here, never through a name already there (a link included): perf writes
     * the data through its descriptor (/proc/self/fd/3), so nothing put at the name later
     * is written either */
    int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    *data_fd = open(data, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (*data_fd < 0) {
        close(fd);
        return -1;
    }
    char *argv[] = {(char *)o->perf, "record", "-q", "-N", "-d", "-o", "/proc/self/fd/3", "-m", "16M", "--call-graph",
                    "dwarf,16384", "-c", "1", "-e", "page-faults/period=16/", "-e", "syscalls:sys_enter_madvise",
                    "-e", "syscalls:sys_enter_munmap", "-e", "syscalls:sys_enter_brk", "-p", p, NULL};
    const spawn_fd_t fds[] = {{SPAWN_DEVNULL, 0}, {fd, 1}, {fd, 2}, {*data_fd, 3}};
    spawn_t sp = {.path = o->perf, .argv = argv, .envp = environ, .fds = fds, .nfds = 4, .group = true,
                  .death_signal = SIGINT, .go_fd = -1};
    pid_t perf = -1;
    int rc = spawn_start(&sp, &perf);
    close(fd);
    return rc ? -1 : perf;
}

/* Ends perf record (SIGINT: it writes its data), SIGKILL after 30 s, or half a second when
 * diagnose was told to stop (its stacks are then left out). */
static void stop_stacks(pid_t perf)
{
    if (perf <= 0)
        return;
    kill(perf, SIGINT);
    for (int i = 0; i < 1500 && !(stop_signal && i >= 25); i++) {
        if (waitpid(perf, NULL, WNOHANG) == perf)
            return;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    kill(-perf, SIGKILL);
    waitpid(perf, NULL, 0);
}

/* The document, to stdout through mallocbench.diagnose (words, or --json). */
static int hand_over(const pm_model_t *m, const pr_watch_t *w, const dopts_t *o, const window_t *win)
{
    int fd = memfd_create("mallocbench-diagnose", 0); /* no file: the words' input, inherited by python */
    FILE *f = fd >= 0 ? fdopen(dup(fd), "w") : NULL;
    if (!f)
        return die_io("diagnose: memfd_create: %s", strerror(errno));
    write_doc(f, m, w, o, win);
    if (fclose(f))
        return die_io("diagnose: writing the document: %s", strerror(errno));
    lseek(fd, 0, SEEK_SET);
    char src[32];
    snprintf(src, sizeof src, "/dev/fd/%d", fd);
    char *args[12];
    int n = 0;
    args[n++] = src;
    if (o->json)
        args[n++] = (char *)"--json";
    char pages_src[32];
    if (o->stacks) { /* the re-faulted pages, "PID PAGE" lines, for the stacks that touched them */
        int pfd = memfd_create("mallocbench-refaulted", 0);
        FILE *pf = pfd >= 0 ? fdopen(dup(pfd), "w") : NULL;
        size_t np = 0;
        const uint64_t *pg = pm_refaulted_pages(m, &np);
        for (size_t i = 0; pf && i < np; i++)
            fprintf(pf, "%llu %llx\n", (unsigned long long)pg[2 * i], (unsigned long long)pg[2 * i + 1]);
        if (pf && !fclose(pf)) {
            lseek(pfd, 0, SEEK_SET);
            snprintf(pages_src, sizeof pages_src, "/dev/fd/%d", pfd);
            args[n++] = (char *)"--refaulted", args[n++] = pages_src;
        }
        args[n++] = (char *)"--stacks", args[n++] = (char *)o->stacks;
    }
    if (o->force)
        args[n++] = (char *)"--force";
    if (o->top)
        args[n++] = (char *)"--top", args[n++] = (char *)o->top;
    args[n] = NULL;
    fflush(stdout);
    return tools_exec_python("diagnose", n, args);
}

/* The window and its report (o parsed): the exit status. */
static int diagnose(dopts_t *op)
{
    dopts_t o = *op;
    int rc;
    if (geteuid() != 0)
        return die_usage("diagnose needs root: it watches every CPU's page faults and system calls "
                         "system-wide (run it with sudo)");
    if ((rc = procread_start())) /* forked now, small: the reads of other processes are its */
        return die_io("diagnose: cannot start its reader: %s", strerror(-rc));
    window_t win = {.exit_status = -1, .calib_ns = NAN, .calib_refault_ns = NAN, .calib_refault_sys_ns = NAN};
    pm_model_t *m = NULL;
    pr_watch_t *w = NULL;
    char err[512];
    if (pm_new(&m, pr_now(), o.children))
        return die_io("diagnose: out of memory");
    if ((rc = pr_open(&w, o.light ? o.light : 1, pm_wants, m, err, sizeof err))) {
        pm_free(m);
        return rc == -EACCES || rc == -EPERM ? die_usage("diagnose: %s", err) : die_io("diagnose: %s", err);
    }
    pm_set_names(m, w);
    pm_set_reader(m, read_by_reader);
    pm_limit(m, model_limit(o.max_memory));
    pm_ignore(m, procread_pid());
    struct sigaction sa = {.sa_handler = on_signal}, old;
    for (int i = 0; i < 2; i++) /* SIGINT, SIGTERM; one the caller left ignored stays so (docs/output.md) */
        if (sigaction(i ? SIGTERM : SIGINT, NULL, &old) || old.sa_handler != SIG_IGN)
            sigaction(i ? SIGTERM : SIGINT, &sa, NULL);
    pid_t child = -1;
    if (o.mode == MODE_ALL) /* hundreds of processes: read before the rings start to fill */
        rc = pm_watch_all(m, getpid());
    uint64_t t0 = pr_now();
    double cpu0 = self_cpu();
    /* no record is taken past the window's end and a little: whatever the watched processes do,
     * the window ends on time (and within STOP_GRACE_NS of a stop signal) */
    bool bounded = o.mode != MODE_CMD || o.window_given;
    pm_stop_when(m, &stop_signal, bounded ? t0 + (uint64_t)(o.window_s * 1e9) + STOP_GRACE_NS : 0);
    pr_enable(w);
    win.started = time(NULL);
    /* a process's mappings are read once its mmap records are on: a change between the reading
     * and the window's start would otherwise be missed (the records from before the reading
     * replay what it shows already) */
    if (o.mode == MODE_PID) {
        rc = pm_watch(m, o.pid, true, false);
        win.st0 = proc_stat(o.pid);
    }
    int go = -1; /* --stacks: the command waits before its exec until perf follows it */
    if (!rc && o.mode == MODE_CMD && !(rc = start_command(&o, &child, o.stacks ? &go : NULL)))
        o.pid = child, rc = pm_watch(m, child, false, true);
    int data_fd = -1;
    pid_t perf = !rc && o.stacks ? start_stacks(&o, o.pid, &data_fd) : -1;
    if (go >= 0)
        release_command(go, perf, data_fd, w, m);
    if (rc) {
        pr_close(w);
        pm_free(m);
        procread_stop();
        return rc > 0 ? rc : die_io("diagnose: %s", strerror(-rc));
    }
    capture_envs(m, &o, o.mode != MODE_CMD || o.window_given ? t0 + (uint64_t)(o.window_s * 1e9) : 0);
    win.end_reason = watch_loop(w, m, &o, child, t0, &win.exit_status);
    uint64_t t1 = pr_now();
    pr_disable(w); /* the window ends here: nothing after it is counted */
    if (o.mode == MODE_PID)
        win.st1 = proc_stat(o.pid);
    stop_stacks(perf);
    if (data_fd >= 0)
        close(data_fd);
    struct timespec ts = {0, (long)SETTLE_NS};
    if (!stop_signal)
        nanosleep(&ts, NULL);
    /* what is left of the window: this long at most; nothing once a stop signal's grace is over
     * (its records would all be dropped: they are not even read) */
    pm_stop_when(m, &stop_signal, pr_now() + (stop_signal ? SIGNAL_GRACE_NS : STOP_GRACE_NS));
    if (!pm_stopped(m) && pr_poll(w, t1, pm_feed, m))
        win.end_reason = "out of memory (the counts are lower bounds)";
    pm_finish(m, t1);
    win.self_cpu_s = self_cpu() - cpu0;
    win.seconds = (double)(t1 - t0) / 1e9;
    calib_t c; /* --calibrate: one run, a second of it (16 MiB, 8 rounds), after the window */
    if (o.calibrate && !stop_signal && !calibrate_measure("16M", "8", 1, 120, false, &c)) {
        win.calib_ns = c.v[CALIB_FAULT][0];
        win.calib_refault_ns = c.v[CALIB_REFAULT][0];
        win.calib_refault_sys_ns = c.v[CALIB_REFAULT_SYS][0];
    }
    capture_rest(m, &o);
    procread_stop();
    rc = hand_over(m, w, &o, &win);
    pr_close(w);
    pm_free(m);
    free_caps();
    return rc;
}

int cmd_diagnose(int argc, char **argv)
{
    dopts_t o;
    int rc = parse(argc, argv, &o);
    rc = rc ? (rc < 0 ? 0 : rc) : diagnose(&o);
    free(o.cfg);
    launch_free_words(o.envp);
    return rc;
}
