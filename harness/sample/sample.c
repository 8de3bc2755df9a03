/* sample.c - one sample, one child: fork, stop before exec while the counters
 * are opened on the child, release, then poll the child's pidfd, its region
 * markers, its output and the probe's report while sampling RSS, until it
 * exits or its time is up.  It only observes: judge.c gives the status. */
#include "sample.h"
#include "tree.h"
#include "units.h"
#include "probe.h"
#include "region.h"
#include "launch.h"
#include "spawn.h"
#include "prepare.h"
#include "probe_report.h"
#include "server.h"
#include "disturb.h"
#include "execs.h"
#include "mb_config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define OUTPUT_KEEP RUN_OUTPUT_KEEP
#define PROBE_BUF (64 * 1024)
#define ENV_PATH "/usr/bin/env"

static volatile sig_atomic_t interrupted;
static volatile pid_t running_child;

/* The child and everything it started in its process group. */
static void kill_group(pid_t pid)
{
    if (kill(-pid, SIGKILL) != 0)
        kill(pid, SIGKILL);
}

/* At exit of the harness, however it returns: no sample outlives it. */
static void kill_running_child(void)
{
    if (running_child > 0) {
        kill_group(running_child);
        spawn_kill_stragglers(NULL, 0);
    }
}

__attribute__((constructor)) static void register_child_reaper(void)
{
    atexit(kill_running_child);
}

void sample_interrupt(void) { interrupted = 1; }
bool sample_interrupted(void) { return interrupted != 0; }

#define now_s mono_now

/* utime and stime of the whole thread group from /proc/PID/stat, seconds. */
static int proc_cpu(pid_t pid, double *user, double *sys)
{
    char buf[1024], *p;
    int rc = spawn_proc_stat(pid, buf, sizeof buf, &p);
    if (rc)
        return rc;
    /* after ") " come fields 3.. ; utime is field 14, stime 15 */
    unsigned long long ut = 0, st = 0;
    int field = 2;
    for (char *tok = strtok(p, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 14)
            ut = strtoull(tok, NULL, 10);
        else if (field == 15) {
            st = strtoull(tok, NULL, 10);
            break;
        }
    }
    double hz = (double)sysconf(_SC_CLK_TCK);
    *user = (double)ut / hz;
    *sys = (double)st / hz;
    return 0;
}

/* Resident set of the child from /proc/PID/statm, KiB; -1 when gone. */
static long proc_rss_kib(int statm_fd)
{
    char buf[256];
    if (statm_fd < 0)
        return -1;
    ssize_t n = pread(statm_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    unsigned long size, resident;
    if (sscanf(buf, "%lu %lu", &size, &resident) != 2 || size == 0)
        return -1; /* an exiting process has no memory map left: not a reading */
    return (long)(resident * (unsigned long)(sysconf(_SC_PAGESIZE) / 1024));
}

typedef struct child {
    const run_opts_t *o;
    const run_config_t *c;
    const wl_args_t *a;
    const launcher_t *l;
    run_sample_t *s;
    cnt_set_t *cnt;
    pid_t pid;
    int statm_fd;
    double t0;
    char sync_buf[WL_RESULT_LINE_MAX + 2 * TOKEN_LEN];
    const tokens_t *tok;
    char forged[192];               /* the first line without the sample's secret */
    size_t sync_len;
    launch_window_t out;            /* s->out_head and s->out_tail: the first bytes of the child's
                                     * output (allocators report at start-up) and the last */
    char *probe_buf;
    size_t probe_len;
    double t_begin, t_end;          /* the region markers, when the program sent them */
    int fail_fd;                    /* spawn's: why the child never ran its program */
    pid_t keep[64];                 /* children of the harness before the sample: not its stragglers */
    size_t nkeep;
    serve_t *sv;                    /* a server's sample: its readiness and its client */
    char **client_env;              /* ... and the client's environment (NULL: out of memory) */
    disturb_tasks_t tasks;          /* its threads' run-queue wait and involuntary switches */
    disturb_machine_t m0;           /* the machine's steal, collapses, compactions at the start */
    double cpu0_s;                  /* ... and the harness's CPU time with its reaped children's */
    unsigned ticks;                 /* RSS readings so far: the threads are read every 10th */
    double next_tree;               /* when the process tree's PSS is read next (INFINITY: never) */
    execs_t *ex;                    /* the tree's program images, from the kernel (NULL: not counted) */
    struct { pid_t pid; unsigned n; } rep[EXECS_NAMES_MAX]; /* images that reported the probe, per process */
    size_t nrep;
    bool rep_full;                  /* a process beyond rep[]: its reports are not told apart */
    pid_t armed[64];                /* stragglers killed before their probe could report */
    size_t narmed;
    /* the probe's lines are read as they come (probe_lines): where the reports of the
     * process started are, and whether a line was lost */
    unsigned root_images;
    bool later;                     /* within a later image's report */
    bool probe_lost;
    char later_exe[200];
} child_t;

/* The sample's whole tree (tree.h): for a command or server its summed Pss
 * (the peak kept) and the run-queue wait of every thread in it (a compiler
 * driver's cc1, a shell's program: the work is often not in the first
 * process); for every kind, the huge-page share at the largest Anonymous and
 * each process's THP_enabled.  A built-in workload is read alone. */
static void tree_sample(child_t *ch)
{
    tree_reading_t r;
    pid_t pids[DISTURB_TASKS];
    bool alone = ch->l->kind == LAUNCH_WORKER;
    run_sample_t *s = ch->s;
    if (tree_read(ch->pid, alone, &r, pids, DISTURB_TASKS))
        return;
    for (unsigned i = 1; i < r.nproc && i < DISTURB_TASKS; i++)
        disturb_scan(pids[i], &ch->tasks); /* root's threads: every 10th RSS reading */
    if (r.anon_huge_kib > s->anon_huge_max_kib)
        s->anon_huge_max_kib = r.anon_huge_kib;
    if (r.anon_kib > s->anon_peak_kib) {
        s->anon_peak_kib = r.anon_kib;
        s->anon_huge_peak_kib = r.anon_huge_kib;
    }
    s->thp_read += r.thp_read;
    s->thp_off += r.thp_off;
    if (r.thp_on_pid && !s->thp_on_pid)
        s->thp_on_pid = r.thp_on_pid;
    if (alone)
        return; /* one process: its RSS (rss_peak_kib) is its memory */
    if (r.pss_kib > s->tree_pss_peak_kib)
        s->tree_pss_peak_kib = r.pss_kib;
    if (r.nproc > s->tree_procs_max)
        s->tree_procs_max = r.nproc;
}

static void rss_sample(child_t *ch)
{
    if (ch->ticks++ % 10 == 0)
        disturb_scan(ch->pid, &ch->tasks); /* a thread that ends keeps its last reading */
    long rss = proc_rss_kib(ch->statm_fd);
    if (rss < 0)
        return;
    if (rss > ch->s->rss_peak_kib)
        ch->s->rss_peak_kib = rss;
    ch->s->rss_samples++;
    run_sample_t *s = ch->s;
    if (s->nrss == s->rss_cap) {
        size_t cap = s->rss_cap ? 2 * s->rss_cap : 256;
        run_rss_point_t *more = realloc(s->rss, cap * sizeof *more);
        if (!more)
            return; /* the reading counts; the series lacks it */
        s->rss = more;
        s->rss_cap = cap;
    }
    s->rss[s->nrss++] = (run_rss_point_t){now_s() - ch->t0, rss};
}

/* The line after its "<token> ", or NULL when it does not start so. */
static char *untoken(char *line, const char *token)
{
    size_t n = strlen(token);
    if (!n || strncmp(line, token, n) || line[n] != ' ')
        return NULL;
    return line + n + 1;
}

/* Notes the first line that came without the sample's secret. */
static void forged(child_t *ch, int fd, const char *line)
{
    if (ch->forged[0])
        return;
    snprintf(ch->forged, sizeof ch->forged, "forged report on fd %d (a line without the sample's "
             "token): '%.80s'", fd, line);
    for (char *q = ch->forged; *q; q++)
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = '?';
}

/* The region's edge: counters, CPU times and RSS read now. */
static void region_mark(child_t *ch, bool begin)
{
    run_sample_t *s = ch->s;
    double u = NAN, sy = NAN;
    if (ch->cnt)
        cnt_read(ch->cnt, begin ? s->begin : s->end);
    proc_cpu(ch->pid, &u, &sy);
    long rss = proc_rss_kib(ch->statm_fd);
    uint64_t delay, nivcsw;
    disturb_scan(ch->pid, &ch->tasks);
    disturb_sums(&ch->tasks, &delay, &nivcsw);
    if (begin) {
        ch->t_begin = now_s();
        s->region_user_s = u;
        s->region_sys_s = sy;
        s->region_run_delay_s = (double)delay * 1e-9;
        s->region_nivcsw = (long)nivcsw;
    } else {
        ch->t_end = now_s();
        s->region_user_s = u - s->region_user_s;
        s->region_sys_s = sy - s->region_sys_s;
        s->region_run_delay_s = (double)delay * 1e-9 - s->region_run_delay_s;
        s->region_nivcsw = (long)nivcsw - s->region_nivcsw;
        s->have_region = true;
        s->rss_final_kib = rss;
        if (ch->o->tree_interval_s > 0)
            tree_sample(ch); /* the worker waits for our answer: its memory as the region left it */
    }
    if (rss > s->rss_peak_kib)
        s->rss_peak_kib = rss;
}

/* One line from the worker on the sync socket; markers are answered only
 * after the counters are read, so the region is exactly bracketed.  A
 * command (no token) may send markers only. */
static void sync_line(child_t *ch, char *raw, int sync_fd)
{
    run_sample_t *s = ch->s;
    char *line = ch->tok->sync[0] ? untoken(raw, ch->tok->sync) : raw;
    if (!line || (!ch->tok->sync[0] && strcmp(line, "begin") && strcmp(line, "end"))) {
        forged(ch, PREPARE_SYNC_FD, raw);
        return;
    }
    if (!strcmp(line, "begin") || !strcmp(line, "end")) {
        /* a server's region is its client's run, not what it marks */
        if (!ch->sv)
            region_mark(ch, line[0] == 'b');
        char ack = 'g';
        while (write(sync_fd, &ack, 1) < 0 && errno == EINTR)
            ;
    } else if (!strncmp(line, "result ", 7)) {
        char why[256];
        if (wl_result_parse(line, &s->res, why, sizeof why) == 0)
            s->have_result = true;
        else if (!ch->s->fail[0])
            snprintf(ch->s->fail, sizeof ch->s->fail, "bad result line: %s", why);
    } else if (!strncmp(line, "fail ", 5) && !ch->s->fail[0]) {
        /* the first failure is the cause; later ones are its consequences */
        snprintf(ch->s->fail, sizeof ch->s->fail, "%s", line + 5);
    }
}

static void sync_read(child_t *ch, int fd, int *eof)
{
    ssize_t n = read(fd, ch->sync_buf + ch->sync_len, sizeof ch->sync_buf - 1 - ch->sync_len);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            *eof = 1;
        return;
    }
    ch->sync_len += (size_t)n;
    ch->sync_buf[ch->sync_len] = '\0';
    char *start = ch->sync_buf, *nl;
    while ((nl = strchr(start, '\n'))) {
        *nl = '\0';
        sync_line(ch, start, fd);
        start = nl + 1;
    }
    ch->sync_len = strlen(start);
    memmove(ch->sync_buf, start, ch->sync_len + 1);
    if (ch->sync_len >= sizeof ch->sync_buf - 1)
        ch->sync_len = 0; /* an over-long line is dropped, not fatal */
}

static void out_read(child_t *ch, int fd, int *eof)
{
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            *eof = 1;
        return;
    }
    launch_window_add(&ch->out, buf, (size_t)n);
}

static void probe_lines(child_t *ch, char *buf);

/* Reads what the probes wrote and takes every whole line at once (a tree
 * of thousands of images sends more than any buffer holds); a line longer
 * than the buffer is lost, and said so. */
static ssize_t probe_read(child_t *ch, int fd, int *eof)
{
    if (ch->probe_len >= PROBE_BUF - 1) {
        ch->probe_len = 0;
        ch->probe_lost = true;
    }
    ssize_t n = read(fd, ch->probe_buf + ch->probe_len, PROBE_BUF - 1 - ch->probe_len);
    if (n <= 0) {
        if (n == 0 || (errno != EAGAIN && errno != EINTR))
            *eof = 1;
        return n;
    }
    ch->probe_len += (size_t)n;
    ch->probe_buf[ch->probe_len] = '\0';
    char *nl = memrchr(ch->probe_buf, '\n', ch->probe_len);
    if (!nl)
        return n;
    *nl = '\0';
    size_t rest = ch->probe_len - (size_t)(nl + 1 - ch->probe_buf);
    probe_lines(ch, ch->probe_buf);
    memmove(ch->probe_buf, nl + 1, rest + 1);
    ch->probe_len = rest;
    return n;
}

/* One more image of pid reported the probe. */
static void count_report(child_t *ch, pid_t pid)
{
    ch->s->images_reported++;
    for (size_t i = 0; i < ch->nrep; i++)
        if (ch->rep[i].pid == pid) {
            ch->rep[i].n++;
            return;
        }
    if (ch->nrep < sizeof ch->rep / sizeof *ch->rep) {
        ch->rep[ch->nrep].pid = pid;
        ch->rep[ch->nrep++].n = 1;
    } else {
        ch->rep_full = true;
    }
}

/* A key of a later image of the process started (a wrapper that execs its
 * program: `sh -c 'exec prog'`, env): its allocator, library and settings
 * must be the first image's, which verify.c holds to the configuration. */
static void later_image_key(run_sample_t *s, const char *key, const char *val, const char *exe)
{
    static const char *const held[] = {"family", "malloc_so", "settings_digest"};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++) {
        const char *first = probe_report_get(s, held[i]);
        if (strcmp(key, held[i]) || (first && !strcmp(first, val)) || s->proc_mismatch[0])
            continue;
        if (i < 2)
            snprintf(s->proc_mismatch, sizeof s->proc_mismatch, "the process started exec'd %.200s, "
                     "whose malloc came from %.200s (%s was %.80s in the image before it)",
                     exe, val, held[i], first ? first : "unknown");
        else
            snprintf(s->proc_mismatch, sizeof s->proc_mismatch, "the process started exec'd %.200s "
                     "with other allocator settings than the image before it (an allocator's "
                     "variable was set or unset on the way: a wrapper script?)", exe);
    }
}

/* The probe's lines: the process's own under its token (one report for
 * each of its images), descendants' proc: lines under theirs; any other
 * line is a forgery.  Called on whole lines as they come, and once more at
 * the end for what is left. */
static void probe_lines(child_t *ch, char *buf)
{
    run_sample_t *s = ch->s;
    char *save = NULL;
    for (char *raw = strtok_r(buf, "\n", &save); raw; raw = strtok_r(NULL, "\n", &save)) {
        char *line = untoken(raw, ch->tok->probe);
        if (!line && (!(line = untoken(raw, ch->tok->dprobe)) || strncmp(line, "proc:", 5))) {
            forged(ch, PREPARE_PROBE_FD, raw);
            continue;
        }
        char *eq = strchr(line, '=');
        if (eq && !strncmp(line, "proc:", 5)) {
            *eq = '\0';
            probe_report_descendant(s, line + 5, eq + 1);
            count_report(ch, (pid_t)strtol(line + 5, NULL, 10));
            continue;
        }
        if (!eq)
            continue;
        *eq = '\0';
        const char *val = eq + 1;
        if (!strcmp(line, "probe_at"))
            ch->later = ++ch->root_images > 1;
        bool done = !strcmp(line, "probe") && !strcmp(val, "done");
        if (done)
            count_report(ch, ch->pid);
        if (ch->later) {
            /* a later image's report, to its probe=done: held to the first, not added */
            if (!strcmp(line, "exe"))
                snprintf(ch->later_exe, sizeof ch->later_exe, "%s", val);
            later_image_key(s, line, val, ch->later_exe[0] ? ch->later_exe : "?");
            ch->later = !done;
            continue;
        }
        probe_report_add(s, line, val);
    }
}

/* What a process has mapped: the probe, the loader, another library, any
 * file; -1 when its maps cannot be read. */
static int maps_of(pid_t pid, bool *probe, bool *loader, bool *libs, bool *file)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    *probe = *loader = *libs = *file = false;
    if (!f)
        return -1;
    while (!*probe && fgets(line, sizeof line, f)) {
        const char *name = strrchr(line, '/');
        if (!name)
            continue;
        *file = true;
        if (strstr(name, "libmbprobe"))
            *probe = true;
        else if (!strncmp(name, "/ld-linux", 9) || !strncmp(name, "/ld-musl", 8))
            *loader = true;
        else if (strstr(name, ".so"))
            *libs = true;
    }
    fclose(f);
    return 0;
}

/* A straggler about to be killed (spawn_kill_stragglers_seen): one that
 * has the probe mapped (it reports before main, so it was killed on its way
 * there, or its report could not be sent: its preload took), whose loader is
 * still setting up (ld.so mapped, no other library yet), or that is inside
 * execve (nothing mapped yet, or its program and not yet its loader: read
 * again a few times, as a static program stays so) did no work without the
 * probe; one whose libraries are loaded and the probe not among them, or a
 * static program, did. */
static void straggler_seen(pid_t pid, void *ctx)
{
    child_t *ch = ctx;
    bool probe, loader, libs, file;
    if (ch->narmed == sizeof ch->armed / sizeof *ch->armed || maps_of(pid, &probe, &loader, &libs, &file))
        return;
    for (int i = 0; i < 10 && file && !probe && !loader && !libs; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        if (maps_of(pid, &probe, &loader, &libs, &file))
            return;
    }
    if (probe || (loader && !libs) || !file)
        ch->armed[ch->narmed++] = pid;
}

static bool armed_straggler(const child_t *ch, pid_t pid)
{
    for (size_t i = 0; i < ch->narmed; i++)
        if (ch->armed[i] == pid)
            return true;
    return false;
}

/* The images the kernel saw start that did not report the probe: the k-th
 * image of a process beyond the reports that process sent (the first image
 * of the process started is the launcher, env(1), which never loads it).
 * One of a straggler killed with the probe still to load is not held (it
 * leaves images_started); the first other is named. */
static void name_unproven(child_t *ch)
{
    size_t n;
    const execs_image_t *im = execs_images(ch->ex, &n);
    struct { pid_t pid; unsigned n; } seen[EXECS_NAMES_MAX];
    size_t nseen = 0;
    bool launcher = true;
    for (size_t i = 0; i < n; i++) {
        if (launcher && im[i].pid == ch->pid) {
            launcher = false;
            continue;
        }
        size_t j = 0;
        while (j < nseen && seen[j].pid != im[i].pid)
            j++;
        if (j == nseen) {
            if (nseen == sizeof seen / sizeof *seen)
                return;
            seen[nseen].pid = im[i].pid, seen[nseen++].n = 0;
        }
        unsigned reported = 0;
        for (size_t r = 0; r < ch->nrep; r++)
            if (ch->rep[r].pid == im[i].pid)
                reported = ch->rep[r].n;
        if (++seen[j].n <= reported)
            continue;
        if (armed_straggler(ch, im[i].pid) && !ch->rep_full)
            ch->s->images_started--;
        else if (!ch->s->image_unproven[0])
            snprintf(ch->s->image_unproven, sizeof ch->s->image_unproven, "%s (pid %d)", im[i].file,
                     (int)im[i].pid);
    }
}

/* Lines the allocator wrote about itself at start-up (its family's
 * outputs: a version, an effective setting) join the probe's report. */
static void output_keys(child_t *ch)
{
    char copy[OUTPUT_KEEP], key[128], val[256], *save = NULL;
    snprintf(copy, sizeof copy, "%s", ch->s->out_head);
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        if (alloc_output_line(ch->c->alloc, l, key, sizeof key, val, sizeof val))
            probe_report_set(ch->s, key, val);
}

/* What the watch loop learns about the child's end. */
typedef struct ending {
    int wstatus;
    struct rusage ru;
    bool timed_out;
    int stop_signal;        /* it stopped (SIGSTOP, SIGTSTP...): killed then */
    double t_end;
} ending_t;

/* The sample's descriptors: sync socket, probe, output and go pipes,
 * [0] the harness's end, [1] the child's (go: the reverse). */
typedef struct {
    int sp[2], pp[2], op[2], gp[2];
} pipes_t;

/* Has the child stopped?  A stopped child would only sit out its time. */
static int stop_signal_of(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WSTOPPED | WNOHANG) == 0 && si.si_pid == pid &&
        si.si_code == CLD_STOPPED)
        return si.si_status;
    return 0;
}

/* What server_step asks of the sampler, in order: the region's markers
 * (counters read at the moment) and SIGKILL to the server's whole group. */
static void hook_mark(void *ctx, bool begin)
{
    region_mark(ctx, begin);
}

static void hook_kill(void *ctx)
{
    kill_group(((child_t *)ctx)->pid);
}

/* Reads the child's three channels and samples its RSS until it exits (or
 * is killed on time-out or interrupt), then drains what it wrote last. */
static void watch(child_t *ch, const pipes_t *p, int pidfd, ending_t *e)
{
    const run_opts_t *o = ch->o;
    pid_t pid = ch->pid;
    double next_sample = ch->t0 + o->sample_interval_s;
    ch->next_tree = o->tree_interval_s > 0 ? ch->t0 : INFINITY;
    double deadline = o->timeout_s > 0 ? ch->t0 + o->timeout_s : INFINITY;
    int sync_eof = 0, out_eof = 0, probe_eof = 0, exited = 0;
    bool killed = false;
    while (!exited) {
        double t = now_s();
        if (t >= next_sample) {
            rss_sample(ch);
            next_sample += o->sample_interval_s;
            if (next_sample < t)
                next_sample = t + o->sample_interval_s;
        }
        execs_drain(ch->ex);
        if (t >= ch->next_tree) {
            tree_sample(ch);
            ch->next_tree = fmax(ch->next_tree + o->tree_interval_s, now_s());
        }
        if (!killed && (t >= deadline || interrupted || (e->stop_signal = stop_signal_of(pid)))) {
            e->timed_out = t >= deadline && !interrupted && !e->stop_signal;
            kill_group(pid);
            killed = true;
        }
        int ms = (int)ceil((fmin(fmin(next_sample, ch->next_tree), deadline) - t) * 1000.0);
        if (ms < 0 || killed)
            ms = killed ? 50 : 0;
        const server_hooks_t hooks = {ch, hook_mark, hook_kill, ch->client_env};
        int sv_ms = ch->sv ? server_step(ch->sv, ch->a, ch->pid, t, ch->s, &hooks, &killed) : -1;
        if (sv_ms >= 0 && sv_ms < ms)
            ms = sv_ms;
        bool client = ch->sv && ch->sv->phase == SERVE_LOADING && !ch->sv->client_ended;
        struct pollfd fds[6] = {
            {pidfd, POLLIN, 0},
            {sync_eof ? -1 : p->sp[0], POLLIN, 0},
            {out_eof ? -1 : p->op[0], POLLIN, 0},
            {probe_eof ? -1 : p->pp[0], POLLIN, 0},
            {client ? ch->sv->client_pidfd : -1, POLLIN, 0},
            {client ? ch->sv->client_out : -1, POLLIN, 0},
        };
        if ((pidfd < 0 || (client && ch->sv->client_pidfd < 0)) && ms > 10)
            ms = 10; /* no pidfd (old kernel): fall back to polling waitpid */
        int n = poll(fds, 6, ms);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && fds[1].revents)
            sync_read(ch, p->sp[0], &sync_eof);
        if (n > 0 && fds[2].revents)
            out_read(ch, p->op[0], &out_eof);
        if (n > 0 && fds[3].revents)
            probe_read(ch, p->pp[0], &probe_eof);
        if ((pidfd < 0 || (n > 0 && fds[0].revents)) &&
            wait4(pid, &e->wstatus, pidfd < 0 ? WNOHANG : 0, &e->ru) == pid)
            exited = 1;
    }
    e->t_end = now_s();
    if (!exited) {
        kill_group(pid);
        wait4(pid, &e->wstatus, 0, &e->ru);
    }
    if (ch->sv)
        server_client_end(ch->sv); /* a client the server's end or the time-out cut short */
    /* whatever the sample left running, in its group or not (setsid) */
    ch->s->stragglers = spawn_kill_stragglers_seen(ch->keep, ch->nkeep, straggler_seen, ch);
    kill(-pid, SIGKILL);
    running_child = 0;
    /* what the child wrote just before it exited */
    for (int i = 0; i < 64 && !sync_eof; i++)
        sync_read(ch, p->sp[0], &sync_eof);
    for (int i = 0; i < 64 && !out_eof; i++)
        out_read(ch, p->op[0], &out_eof);
    /* and after its end of file too: a descendant whose inherited descriptor was
     * closed reopens the pipe (MB_PROBE_PIPE), perhaps after every other writer left */
    for (int i = 0; i < 4096 && probe_read(ch, p->pp[0], &probe_eof) > 0; i++)
        ;
}

/* The figure metric=re finds in an output kept (its last 4 KiB, else its
 * first): 0, or -errno with the reason in fail (whose output: what). */
static int window_metric(const launch_window_t *w, const char *re, const char *what, char *fail,
                         size_t len, double *v)
{
    char text[64];
    int rc = launch_window_metric(w, re, v, text, sizeof text);
    if (rc == -ERANGE)
        snprintf(fail, len, "metric '%s' matched '%s': not finite, or of a magnitude outside 0 and "
                 "%g..%g (what the CSV's readers accept)", re, text, METRIC_MIN, METRIC_MAX);
    else if (rc == -EDOM)
        snprintf(fail, len, "metric '%s' matched '%s': not one whole number (digits with an optional sign, "
                 "fraction and exponent; no separators, hex or other text)", re, text);
    else if (rc == -EMSGSIZE)
        snprintf(fail, len, "metric '%s' matched a line cut by the %zu-byte window of output kept: its "
                 "figure may have lost digits", re, w->cap - 1);
    else if (rc == -ENODATA)
        snprintf(fail, len, "metric '%s' matched in the first %zu bytes of %s output but not in its last "
                 "%zu, and the %llu bytes between were not kept: the figure printed last is unknown", re,
                 w->head_len, what, w->tail_len, w->total - w->head_len - w->tail_len);
    else if (rc)
        snprintf(fail, len, "metric '%s' matched no number in %s output (its first and last 4 KiB)", re,
                 what);
    return rc;
}

/* processes=N (those that loaded the probe) and, where the kernel counted
 * them, images=N (the program images the tree started, the launcher not
 * included: one more for each exec), for a command's or server's row. */
static void extra_procs(const run_sample_t *s, char *out, size_t len)
{
    int n = snprintf(out, len, "processes=%u", s->nproc);
    if (s->images_started >= 0 && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, ";images=%ld", s->images_started);
}

/* A command's result, made here (no worker sends one): the region is
 * the whole process tree unless the command marked one; the figure is 1 /
 * its wall time, or the number metric=REGEX finds in the output. */
static void command_result(child_t *ch, const ending_t *e)
{
    run_sample_t *s = ch->s;
    if (e->timed_out || !WIFEXITED(e->wstatus) || WEXITSTATUS(e->wstatus) != 0)
        return; /* judge_status says why */
    double region = ch->t_end - ch->t_begin;
    bool marked = s->have_region; /* the program marked its region (region.h) */
    if (!s->have_region) {
        for (size_t i = 0; i < CNT_MAX; i++) {
            s->begin[i] = s->end[i] = s->total[i];
            s->begin[i].value = s->begin[i].enabled = s->begin[i].running = 0;
        }
        s->region_user_s = s->user_s;
        s->region_sys_s = s->sys_s;
        uint64_t delay, nivcsw; /* the threads' last readings (every 10th RSS tick) */
        disturb_sums(&ch->tasks, &delay, &nivcsw);
        s->region_run_delay_s = (double)delay * 1e-9;
        s->region_nivcsw = (long)nivcsw;
        s->have_region = true;
        region = s->wall_s;
    }
    wl_report_t *r = &s->res;
    memset(r, 0, sizeof *r);
    const char *re = wl_get_str(ch->a, "metric");
    if (*re) {
        if (window_metric(&ch->out, re, "the command's", s->fail, sizeof s->fail, &r->throughput))
            return;
        snprintf(r->unit, sizeof r->unit, "%s", wl_get_str(ch->a, "unit"));
    } else {
        r->throughput = region > 0 ? 1.0 / region : NAN;
        snprintf(r->unit, sizeof r->unit, "runs/s");
    }
    r->region_s = region;
    extra_procs(s, r->extra, sizeof r->extra);
    size_t len = strlen(r->extra); /* what the counts cover: mbdata.same_window */
    snprintf(r->extra + len, sizeof r->extra - len, ";region=%s", marked ? "marked" : "whole");
    r->present = WLR_BIT(WLR_throughput) | WLR_BIT(WLR_unit) | WLR_BIT(WLR_region_s) | WLR_BIT(WLR_extra);
    s->have_result = true;
}

/* A server's result, made here from its client's run: the region is the
 * client's run; the figure is the number metric=REGEX finds in the client's
 * output (else 1 / the client's wall time), the latencies those p50=...
 * find.  A client that failed, or a server that ended before it was
 * stopped, gives none (harness_why or fail says why). */
static void server_result(child_t *ch, const ending_t *e)
{
    run_sample_t *s = ch->s;
    serve_t *sv = ch->sv;
    char why[600];
    server_client_failure(sv, why, sizeof why);
    if (!s->stopped) {
        if (!s->harness_why[0] && !e->timed_out && !interrupted)
            snprintf(s->fail, sizeof s->fail, "the server ended %s%s%.400s%s",
                     sv->phase == SERVE_WAITING ? "before it was ready" : "while its client ran",
                     why[0] ? " (" : "", why, why[0] ? ")" : "");
        return;
    }
    if (why[0]) {
        snprintf(s->harness_why, sizeof s->harness_why, "serve: %s", why);
        return;
    }
    wl_report_t *r = &s->res;
    memset(r, 0, sizeof *r);
    r->region_s = ch->t_end - ch->t_begin;
    const char *re = wl_get_str(ch->a, "metric");
    if (*re) {
        if (window_metric(&sv->out, re, "the client's", s->fail, sizeof s->fail, &r->throughput))
            return;
        snprintf(r->unit, sizeof r->unit, "%s", wl_get_str(ch->a, "unit"));
    } else {
        r->throughput = r->region_s > 0 ? 1.0 / r->region_s : NAN;
        snprintf(r->unit, sizeof r->unit, "runs/s");
    }
    double us[4];
    if (server_latencies(sv, ch->a, us, s->fail, sizeof s->fail))
        return;
    r->present = WLR_BIT(WLR_throughput) | WLR_BIT(WLR_unit) | WLR_BIT(WLR_region_s) | WLR_BIT(WLR_extra);
    if (!isnan(us[0]) || !isnan(us[1]) || !isnan(us[2]) || !isnan(us[3])) {
        snprintf(r->lat_what, sizeof r->lat_what, "request");
        r->lat_p50_us = us[0], r->lat_p99_us = us[1], r->lat_p999_us = us[2], r->lat_max_us = us[3];
        static const int bits[4] = {WLR_lat_p50_us, WLR_lat_p99_us, WLR_lat_p999_us, WLR_lat_max_us};
        r->present |= WLR_BIT(WLR_lat_what);
        for (int i = 0; i < 4; i++)
            if (!isnan(us[i])) /* a latency not asked for is not measured: an empty field */
                r->present |= WLR_BIT(bits[i]);
    }
    extra_procs(s, r->extra, sizeof r->extra);
    size_t len = strlen(r->extra);
    snprintf(r->extra + len, sizeof r->extra - len, ";stop=%s", s->stop_killed ? "kill" : "term");
    s->have_result = true;
}

/* The harness's own CPU time and its reaped children's, s. */
static double harness_cpu_s(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) *
               1e-6;
}

/* A machine-wide count over the sample: now - then, or -1 where either is unknown. */
static long delta(long now, long then)
{
    return now >= 0 && then >= 0 ? now - then : -1;
}

/* The machine-wide huge-page counts over the sample, and the CPU time of the
 * tasks outside it (busy time less the harness's and its children's, the
 * child just reaped included: never below 0, clock ticks apart). */
static void machine_thp(child_t *ch, const disturb_machine_t *m1)
{
    run_sample_t *out = ch->s;
    const disturb_machine_t *m0 = &ch->m0;
    out->thp_faults = delta(m1->thp_faults, m0->thp_faults);
    out->thp_fallbacks = delta(m1->thp_fallbacks, m0->thp_fallbacks);
    out->pmd_splits = delta(m1->pmd_splits, m0->pmd_splits);
    out->page_splits = delta(m1->page_splits, m0->page_splits);
    out->others_cpu_s = m1->busy_s >= 0 && m0->busy_s >= 0
                            ? fmax(0.0, (m1->busy_s - m0->busy_s) - (harness_cpu_s() - ch->cpu0_s))
                            : NAN;
}

/* The figures of a finished child: how it ended, times, rusage, probe
 * report (judge.c turns them into a status). */
static void collect(child_t *ch, const ending_t *e)
{
    run_sample_t *out = ch->s;
    out->wstatus = e->wstatus;
    out->timed_out = e->timed_out;
    out->interrupted = interrupted != 0;
    out->stop_signal = e->stop_signal;
    if (ch->fail_fd < 0 ||
        spawn_failure(ch->fail_fd, out->setup_what, sizeof out->setup_what, &out->setup_errno))
        out->setup_what[0] = '\0', out->setup_errno = 0;
    out->what = ch->l->what;
    if (ch->cnt) {
        cnt_read(ch->cnt, out->total);
        cnt_close(ch->cnt);
    }
    out->wall_s = e->t_end - ch->t0;
    disturb_machine_t m1;
    disturb_machine(&m1);
    out->steal_s = m1.steal_s >= 0 && ch->m0.steal_s >= 0 ? m1.steal_s - ch->m0.steal_s : -1;
    out->collapses = delta(m1.collapses, ch->m0.collapses);
    out->compactions = delta(m1.compactions, ch->m0.compactions);
    out->oom_kills = delta(m1.oom_kills, ch->m0.oom_kills);
    machine_thp(ch, &m1);
    out->user_s = (double)e->ru.ru_utime.tv_sec + (double)e->ru.ru_utime.tv_usec * 1e-6;
    out->sys_s = (double)e->ru.ru_stime.tv_sec + (double)e->ru.ru_stime.tv_usec * 1e-6;
    out->maxrss_kib = e->ru.ru_maxrss;
    out->minflt = e->ru.ru_minflt;
    out->majflt = e->ru.ru_majflt;
    probe_lines(ch, ch->probe_buf);
    if (ch->ex) {
        execs_drain(ch->ex);
        long n = execs_count(ch->ex);
        out->images_started = n > 0 ? n - 1 : n; /* less the launcher */
        if (ch->probe_lost) {
            out->images_started = -1;
            snprintf(out->images_why, sizeof out->images_why, "a line of the probes' reports was "
                     "longer than the %d bytes read at once: the images cannot be told", PROBE_BUF);
        } else if (out->images_started > (long)out->images_reported) {
            name_unproven(ch);
        }
        execs_close(ch->ex);
        ch->ex = NULL;
    }
    output_keys(ch);
    if (ch->l->kind == LAUNCH_COMMAND)
        command_result(ch, e);
    else if (ch->l->kind == LAUNCH_SERVER)
        server_result(ch, e);
    snprintf(out->forged, sizeof out->forged, "%s", ch->forged); /* fd 3's, or fd 4's in probe_lines */
}

/* Orphans of the sample reparent to the harness; what is our child
 * already is not the sample's. */
static int sample_reaper(child_t *ch)
{
    int n = spawn_subreaper();
    if (!n)
        n = spawn_children(ch->keep, sizeof ch->keep / sizeof *ch->keep);
    if (n < 0)
        return n;
    ch->nkeep = (size_t)n;
    return 0;
}

/* Starts the child, lets it go once counters and watchers are ready,
 * watches it to its end: 0 (the status is in ch->s) or -errno. */
static int start_and_watch(child_t *ch, pipes_t *p, char **argv, char **envp)
{
    /* the sync socket and the probe pipe at the numbers the environment
     * names, stdin from /dev/null, stdout and stderr into one pipe */
    const spawn_fd_t fds[] = {{p->sp[1], PREPARE_SYNC_FD}, {p->pp[1], PREPARE_PROBE_FD},
                              {SPAWN_DEVNULL, 0}, {p->op[1], 1}, {p->op[1], 2}};
    spawn_t sp = {.path = ENV_PATH, .argv = argv, .envp = envp, .fds = fds,
                  .nfds = sizeof fds / sizeof *fds, .cpus = ch->o->pin ? &ch->o->cpus : NULL,
                  .group = true, .death_signal = SIGKILL, .go_fd = p->gp[0],
                  .thp_disable = ch->c->huge == HUGE_NEVER,
                  .exec_fail = "mallocbench: cannot execute " ENV_PATH, .fail_fd = &ch->fail_fd};
    pid_t pid;
    int rc = sample_reaper(ch);
    if (!rc)
        rc = spawn_start(&sp, &pid);
    if (rc)
        return rc;
    running_child = pid;
    close(p->sp[1]), p->sp[1] = -1;
    close(p->pp[1]), p->pp[1] = -1;
    close(p->op[1]), p->op[1] = -1;
    close(p->gp[0]), p->gp[0] = -1;
    ch->pid = pid;

    if (ch->cnt)
        cnt_open(ch->cnt, pid); /* per-counter failures are recorded in the set */
    /* a command's or server's images (the worker is ours and execs nothing: its
     * inherited events would only slow each thread it starts, once per CPU) */
    if (ch->l->kind == LAUNCH_WORKER ||
        execs_open(&ch->ex, pid, ch->s->images_why, sizeof ch->s->images_why))
        ch->ex = NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/statm", (int)pid);
    ch->statm_fd = open(path, O_RDONLY | O_CLOEXEC);
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    fcntl(p->sp[0], F_SETFL, O_NONBLOCK);
    fcntl(p->pp[0], F_SETFL, O_NONBLOCK);
    fcntl(p->op[0], F_SETFL, O_NONBLOCK);

    disturb_machine(&ch->m0);
    ch->cpu0_s = harness_cpu_s();
    ch->t0 = now_s();
    if (write(p->gp[1], "g", 1) != 1)
        kill_group(pid);
    close(p->gp[1]), p->gp[1] = -1;
    ending_t e;
    memset(&e, 0, sizeof e);
    watch(ch, p, pidfd, &e);
    if (pidfd >= 0)
        close(pidfd);
    if (ch->statm_fd >= 0)
        close(ch->statm_fd);
    collect(ch, &e);
    return 0;
}

void sample_free(run_sample_t *s)
{
    if (s)
        free(s->rss);
    free(s);
}

/* MB_PROBE_PIPE (probe.h): the probe pipe's read end here and its inode,
 * for a descendant whose inherited descriptor was closed: 0 or -errno. */
static int env_add_pipe(char ***envp, int rfd)
{
    struct stat st;
    size_t n = 0;
    if (fstat(rfd, &st))
        return -errno;
    while ((*envp)[n])
        n++;
    char **more = realloc(*envp, (n + 2) * sizeof **envp);
    if (!more)
        return -ENOMEM;
    *envp = more;
    char nv[96];
    snprintf(nv, sizeof nv, "%s=%d:%llu", MB_PROBE_PIPE_ENV, rfd, (unsigned long long)st.st_ino);
    if (!(more[n] = strdup(nv)))
        return -ENOMEM;
    more[n + 1] = NULL;
    return 0;
}

/* One child for the sample in out (sv: a server's, else NULL). */
static int sample_child(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, cnt_set_t *cnt,
                        run_sample_t *out, serve_t *sv)
{
    char keys[2048];
    alloc_probe_keys(c->alloc, keys, sizeof keys);
    char **envp = NULL, **argv = NULL;
    tokens_t tok = {"", "", ""};
    int rc = prepare_tokens(&tok, prepare_launcher(a)->sync_token);
    if (!rc)
        rc = prepare_child_env(keys, &tok, o->pin_threads, &envp);
    if (!rc)
        rc = prepare_command(o, c, a, &argv);
    if (rc) {
        launch_free_words(envp);
        return rc;
    }
    pipes_t p = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
    child_t ch = {.o = o, .c = c, .a = a, .l = prepare_launcher(a), .s = out, .cnt = cnt, .tok = &tok, .statm_fd = -1,
                  .fail_fd = -1, .out = {.head = out->out_head, .tail = out->out_tail, .cap = OUTPUT_KEEP},
                  .sv = sv};
    if (sv && prepare_env(NULL, 0, &ch.client_env))
        ch.client_env = NULL; /* server_step: the client cannot start */
    ch.probe_buf = malloc(PROBE_BUF);
    if (!ch.probe_buf || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p.sp) ||
        pipe2(p.pp, O_CLOEXEC) || pipe2(p.op, O_CLOEXEC) || pipe2(p.gp, O_CLOEXEC))
        rc = ch.probe_buf ? -errno : -ENOMEM;
    else if (!(rc = env_add_pipe(&envp, p.pp[0])) && !(rc = prepare_env_add_sync(&envp, p.sp[1]))) {
        ch.probe_buf[0] = '\0';
        rc = start_and_watch(&ch, &p, argv, envp);
    }
    free(ch.probe_buf);
    launch_free_words(ch.client_env);
    if (ch.fail_fd >= 0)
        close(ch.fail_fd);
    for (int i = 0; i < 2; i++) {
        if (p.sp[i] >= 0) close(p.sp[i]);
        if (p.pp[i] >= 0) close(p.pp[i]);
        if (p.op[i] >= 0) close(p.op[i]);
        if (p.gp[i] >= 0) close(p.gp[i]);
    }
    launch_free_words(envp);
    launch_free_words(argv);
    return rc;
}

int sample_run(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, cnt_set_t *cnt,
               run_sample_t *out)
{
    run_rss_point_t *rss = out->rss; /* the readings' room is kept for the next sample */
    size_t cap = out->rss_cap;
    memset(out, 0, sizeof *out);
    out->rss = rss;
    out->rss_cap = cap;
    out->rss_final_kib = -1;
    out->tree_pss_peak_kib = -1;
    out->images_started = -1;
    out->nproc = 1; /* the process started; probe_lines counts each descendant */
    out->region_run_delay_s = NAN;
    out->region_nivcsw = -1;
    out->steal_s = -1;
    out->collapses = out->compactions = -1;
    out->anon_peak_kib = out->anon_huge_peak_kib = out->anon_huge_max_kib = -1;
    out->thp_faults = out->thp_fallbacks = out->pmd_splits = out->page_splits = -1;
    out->others_cpu_s = NAN;
    if (!prepare_launcher(a)->serves)
        return sample_child(o, c, a, cnt, out, NULL);
    /* a server: its port in its words (tcp:auto), nothing else on it yet */
    wl_args_t *sub = malloc(sizeof *sub);
    serve_t *sv = malloc(sizeof *sv);
    int port, rc = sub && sv ? 0 : -ENOMEM;
    if (!rc && (server_args(a, sub, &port, out->harness_why, sizeof out->harness_why) ||
                server_before(sv, sub, port, now_s(), out->harness_why, sizeof out->harness_why)))
        out->what = prepare_launcher(a)->what; /* a row that says why; no process started */
    else if (!rc)
        rc = sample_child(o, c, sub, cnt, out, sv);
    free(sub);
    free(sv);
    return rc;
}

int sample_loader_listing(const run_config_t *c, char *out, size_t len, char *err, size_t errlen)
{
    const char *name = c->alloc->name;
    out[0] = '\0';
    if (access(MB_LDSO, X_OK) != 0) {
        snprintf(err, errlen, "cannot verify %s tunables: dynamic loader '%s' not found "
                              "(configure with -Dldso=PATH)", name, MB_LDSO);
        return -ENOENT;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC)) {
        int e = errno;
        snprintf(err, errlen, "cannot verify %s tunables: cannot make a pipe: %s", name, strerror(e));
        return -e;
    }
    char *argv[] = {(char *)MB_LDSO, (char *)"--list-tunables", NULL};
    char *envp[] = {(char *)c->env.var[0], NULL};
    const spawn_fd_t to_pipe[] = {{p[1], 1}};
    spawn_t sp = {.path = MB_LDSO, .argv = argv, .envp = envp, .fds = to_pipe, .nfds = 1,
                  .group = true, .death_signal = SIGKILL, .go_fd = -1};
    pid_t pid;
    int rc = spawn_start(&sp, &pid);
    if (rc) {
        close(p[0]);
        close(p[1]);
        snprintf(err, errlen, "cannot verify %s tunables: cannot start '%s': %s", name, MB_LDSO, strerror(-rc));
        return rc;
    }
    close(p[1]);
    size_t got = 0;
    ssize_t n;
    while ((n = read(p[0], out + got, len - 1 - got)) > 0 || (n < 0 && errno == EINTR))
        got += n > 0 ? (size_t)n : 0;
    out[got] = '\0';
    char sink[512];
    while (read(p[0], sink, sizeof sink) > 0) /* a listing longer than out: the rest unread */
        ;
    close(p[0]);
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "cannot verify %s tunables: '%s --list-tunables' failed", name, MB_LDSO);
        return -EIO;
    }
    return 0;
}
