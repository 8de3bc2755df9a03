/* cmd_diagnose.c - `mallocbench diagnose -p PID | --all | -- CMD`: a process
 * that runs already (or a command run as it is) watched from outside for a
 * window: every fault and give-back call recorded by per-CPU system-wide
 * events (harness/watch/perfring.h), classified by the page model
 * (pagemodel.h), its allocator and start-up settings recognised (ident.h).
 * The measurements go out as one JSON document (diagdoc.h, schema
 * mallocbench-diagnose-raw/1) to mallocbench.diagnose, which predicts the
 * fix's saving and says it in words (or --json).  The watched process is
 * never stopped, signalled or waited on; diagnose only reads. */
#include "calibrate.h"
#include "cli.h"
#include "configs.h"
#include "diagdoc.h"
#include "disturb.h"
#include "elfinfo.h"
#include "ident.h"
#include "launch.h"
#include "pagemodel.h"
#include "perfring.h"
#include "procread.h"
#include "profile.h"
#include "prepare.h"
#include "registry.h"
#include "spawn.h"
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
#define DEFAULT_LIGHT 16        /* --light: one fault in this many recorded */
#define MAX_T 16                /* -t given to a command's family */
#define DEFAULT_MAX_MEMORY (256ull << 20) /* --max-memory: diagnose's own memory, at most */
#define STOP_GRACE_NS 500000000ull /* the window's end: what is left of its records gets this long */
#define SIGNAL_GRACE_NS 100000000ull /* ... and after SIGINT/SIGTERM, this long */

extern char **environ;

typedef enum { MODE_NONE, MODE_PID, MODE_ALL, MODE_CMD, MODE_SEVERAL /* more than one given: refused */ } mode_t_;

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

typedef diagdoc_pstat_t pstat_t; /* what /proc says of a process at the window's ends */

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
            "  --calibrate        also measure what a re-fault costs whole on this machine and a 2 MiB\n"
            "                     huge-page fault (calibrate, ~1 s, after the window): the upper end of the\n"
            "                     predicted saving, and the huge-page setting's prediction\n"
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
    if (elf_which_tool("perf", o->perf, sizeof o->perf))
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
    if (c->huge == HUGE_NEVER)
        return die_usage("diagnose: -t %s:huge=never: a watched command keeps the kernel's THP mode; "
                         "compare the conditions with exec -t %s:huge=never,%s", o->family, o->family,
                         c->alloc->huge_advise ? "advise" : "system");
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
            o->mode = o->mode ? MODE_SEVERAL : MODE_CMD;
            o->cmd = argv + i + 1;
            o->ncmd = argc - i - 1;
            break;
        } else if ((v = cli_take("-p", argc, argv, &i)) || (v = cli_take("--pid", argc, argv, &i))) {
            o->mode = o->mode ? MODE_SEVERAL : MODE_PID;
            if (parse_pid(v, &o->pid))
                return 2;
        } else if (!strcmp(argv[i], "--all")) {
            o->mode = o->mode ? MODE_SEVERAL : MODE_ALL;
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
    if (o->mode == MODE_SEVERAL)
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
        else if (sscanf(line, "Anonymous: %llu kB", &kib) == 1)
            s.anon_kib = kib;
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


typedef struct {
    double seconds;
    const char *end_reason;
    int exit_status;           /* the command's: its exit code, 128+signal; -1 unknown */
    double calib_ns, calib_refault_ns, calib_refault_sys_ns, calib_huge_ns;
    double self_cpu_s;         /* diagnose's own CPU over the window */
    double thp[3];             /* machine-wide Δ thp faults, fallbacks, PMD splits (NAN: unreadable) */
    pstat_t st0, st1, peak;    /* peak: the reading with the most Anonymous (every PEAK_POLLS polls) */
    time_t started;
} window_t;

/* The command as `mallocbench exec` takes it: an env(1) in front that sets, unsets or clears
 * allocator variables loses those words (exec sets the allocator itself and refuses a command
 * line that sets one: launch_env_word is the one reading of env's words), and env itself where
 * nothing else of it is left; *dropped gets what went (the document names the variables, never
 * their values).  Any other command is kept as it is.  exec and dropped: room for ncmd words. */
static void exec_words(const dopts_t *o, const char **exec, size_t *nexec, const char **dropped, size_t *ndropped)
{
    bool env = o->ncmd > 1 && launch_is_env(o->cmd[0]);
    const char *keep[256];
    int i = 1, nkeep = 0, nd = 0;
    while (env && i < o->ncmd && nkeep < 250 && nd < 250) {
        launch_env_word_t w;
        launch_env_word(o->cmd, (size_t)i, &w);
        if (w.kind == LAUNCH_ENV_PROGRAM || w.kind == LAUNCH_ENV_SPLIT || w.kind == LAUNCH_ENV_END)
            break; /* the command, or a split string: the rest stays as it is */
        for (size_t k = 0; k < w.words && i + (int)k < o->ncmd; k++)
            if (w.allocator) /* a cleared environment would clear exec's allocator too */
                dropped[nd++] = o->cmd[i + k];
            else
                keep[nkeep++] = o->cmd[i + k];
        i += (int)w.words;
    }
    if (!nd) /* nothing of an allocator's: the command as given */
        i = 0, nkeep = 0;
    size_t n = 0;
    if (nkeep)
        exec[n++] = o->cmd[0];
    for (int k = 0; k < nkeep; k++)
        exec[n++] = keep[k];
    for (int k = i; k < o->ncmd; k++)
        exec[n++] = o->cmd[k];
    *nexec = n, *ndropped = (size_t)nd;
}

static const ident_capture_t *capture_of(void *ctx, uint32_t idx)
{
    (void)ctx;
    return idx < ncaps && caps[idx].c ? caps[idx].c : NULL;
}

static void write_doc(FILE *f, const pm_model_t *m, const pr_watch_t *w, const dopts_t *o, const window_t *win)
{
    pr_stats_t ps;
    pr_stats(w, &ps);
    size_t nw = (size_t)(o->ncmd > 0 ? o->ncmd : 0) + 1;
    const char **exec = calloc(nw, sizeof *exec), **dropped = calloc(nw, sizeof *dropped);
    diagdoc_in_t in = {
        .mode = o->mode == MODE_PID ? DIAGDOC_PID : o->mode == MODE_ALL ? DIAGDOC_ALL : DIAGDOC_COMMAND,
        .pid = o->pid, .children = o->children, .cmd = o->cmd, .ncmd = o->ncmd, .exec_cmd = exec,
        .dropped = dropped, .family = o->family, .tunables = o->tun, .ntun = o->ntun, .exe_path = o->path,
        .envp = o->envp ? o->envp : environ, .fault_period = o->light ? o->light : 1u,
        .model_limit = model_limit(o->max_memory), .exit_status = win->exit_status, .started = win->started,
        .seconds = win->seconds, .end_reason = win->end_reason, .calib_ns = win->calib_ns,
        .calib_refault_ns = win->calib_refault_ns, .calib_refault_sys_ns = win->calib_refault_sys_ns,
        .calib_huge_ns = win->calib_huge_ns, .self_cpu_s = win->self_cpu_s, .thp_faults = win->thp[0],
        .thp_fallbacks = win->thp[1], .thp_pmd_splits = win->thp[2], .st0 = win->st0, .st1 = win->st1,
        .peak = win->peak, .capture = capture_of};
    if (exec && dropped)
        exec_words(o, exec, &in.nexec, dropped, &in.ndropped);
    diagdoc_write(f, m, &ps, &in);
    free(exec);
    free(dropped);
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

/* A reading of pid kept in *peak where its Anonymous is the most so far. */
static void peak_note(pid_t pid, pstat_t *peak)
{
    pstat_t s = proc_stat(pid);
    if (s.ok && (!peak->ok || s.anon_kib >= peak->anon_kib))
        *peak = s;
}

/* Machine-wide huge-page counts now (disturb.h's /proc/vmstat reading): faults, fallbacks, splits. */
static void thp_now(double v[3])
{
    disturb_machine_t dm;
    disturb_machine(&dm);
    long c[3] = {dm.thp_faults, dm.thp_fallbacks, dm.pmd_splits};
    for (int i = 0; i < 3; i++)
        v[i] = c[i] < 0 ? NAN : (double)c[i];
}

/* The readings at the window's end: the machine's huge-page counts since thp0, -p's process. */
static void end_readings(const dopts_t *o, window_t *win, const double thp0[3])
{
    thp_now(win->thp);
    for (int i = 0; i < 3; i++)
        win->thp[i] -= thp0[i];
    if (o->mode == MODE_PID && (win->st1 = proc_stat(o->pid)).ok && win->st1.anon_kib >= win->peak.anon_kib)
        win->peak = win->st1;
}

/* Watches until the window ends, the target ends, or a signal: the reason.  The process
 * (-p's or the command's) is read every PEAK_POLLS polls for its huge-page share (*peak). */
#define PEAK_POLLS 10
static const char *watch_loop(pr_watch_t *w, pm_model_t *m, const dopts_t *o, pid_t child, uint64_t t0,
                              int *exit_status, pstat_t *peak)
{
    bool bounded = o->mode != MODE_CMD || o->window_given;
    uint64_t end = t0 + (uint64_t)(o->window_s * 1e9);
    for (unsigned polls = 0;; polls++) {
        struct timespec ts = {0, (long)POLL_NS};
        nanosleep(&ts, NULL);
        uint64_t now = pr_now();
        if (pr_poll(w, now - SETTLE_NS, pm_feed, m))
            return "out of memory";
        capture_envs(m, o, bounded ? end : 0);
        if (o->mode != MODE_ALL && o->pid > 0 && polls % PEAK_POLLS == PEAK_POLLS - 1)
            peak_note(o->pid, peak);
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

/* perf record of pid's stacks (faults 1 in STACKS_FAULT_PERIOD, the give-back calls, profile.h's
 * command line) into PREFIX.perf.data, its messages into PREFIX.perf.log: its pid, or -1 (the
 * log says why). */
#define STACKS_FAULT_PERIOD 16
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
    char **argv = NULL;
    int rc = profile_record_argv(&(profile_record_t){.perf = o->perf, .data = "/proc/self/fd/3",
                                                     .fault_period = STACKS_FAULT_PERIOD, .tracepoints = true,
                                                     .data_addr = true, .pid = p},
                                 &argv);
    const spawn_fd_t fds[] = {{SPAWN_DEVNULL, 0}, {fd, 1}, {fd, 2}, {*data_fd, 3}};
    spawn_t sp = {.path = o->perf, .argv = argv, .envp = environ, .fds = fds, .nfds = 4, .group = true,
                  .death_signal = SIGINT, .go_fd = -1};
    pid_t perf = -1;
    if (!rc)
        rc = spawn_start(&sp, &perf);
    launch_free_words(argv);
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
    window_t win = {.exit_status = -1, .calib_ns = NAN, .calib_refault_ns = NAN, .calib_refault_sys_ns = NAN,
                    .calib_huge_ns = NAN};
    double thp0[3];
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
    thp_now(thp0);
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
    if (win.st0.ok)
        win.peak = win.st0;
    win.end_reason = watch_loop(w, m, &o, child, t0, &win.exit_status, &win.peak);
    uint64_t t1 = pr_now();
    pr_disable(w); /* the window ends here: nothing after it is counted */
    end_readings(&o, &win, thp0);
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
        win.calib_huge_ns = c.huge_n ? c.v[CALIB_HUGE][0] : NAN;
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
