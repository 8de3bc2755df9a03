/* profile.c - one unmeasured run of a cell under `perf record --call-graph
 * dwarf`, then scripts/flamegraph.py turns perf.data into folded stacks and
 * an SVG.  perf starts the worker itself, with the sample's environment
 * (ours without allocator variables, plus LD_PRELOAD and the configuration's
 * variables): perf 6.1 loses the user stacks of a command started through
 * env(1), whose pre-exec maps stay in its view (docs/profile.md). */
#include "profile.h"
#include "elfinfo.h"
#include "fileio.h"
#include "launch.h"
#include "prepare.h"
#include "sample.h"
#include "spawn.h"
#include "tools.h"
#include "tracefs.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PERF_ARGS_MAX 40
#define RENDER_TIMEOUT_S 600.0

/* Whether the kernel's syscall tracepoints can be opened (tracefs.h's, readable). */
static bool have_syscall_tracepoints(void)
{
    const char *tfs = tracefs_dir();
    char p[PATH_MAX];
    return tfs && (size_t)snprintf(p, sizeof p, "%s/events/syscalls/sys_enter_madvise", tfs) < sizeof p &&
           access(p, F_OK) == 0;
}

/* perf's ring buffer per CPU (-m), "16M": 16 MiB, halved down to 1 MiB
 * while the buffers of all CPUs (perf maps one per CPU) exceed 256 MiB. */
static void buffer_size(char *buf, size_t len)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    long mib = PROFILE_BUFFER_MIB;
    while (ncpu > 0 && mib > 1 && mib * ncpu > PROFILE_BUFFERS_MIB)
        mib /= 2;
    snprintf(buf, len, "%ldM", mib);
}

int profile_record_argv(const profile_record_t *r, char ***argvp)
{
    char fault_ev[64], cpu_ev[64], stack[32], mmap_size[32];
    buffer_size(mmap_size, sizeof mmap_size);
    snprintf(fault_ev, sizeof fault_ev, "page-faults/period=%d/", r->fault_period);
    snprintf(cpu_ev, sizeof cpu_ev, "cpu-clock/period=%d/", PROFILE_CPU_PERIOD_NS);
    snprintf(stack, sizeof stack, "dwarf,%d", PROFILE_STACK_BYTES);
    const char *words[PERF_ARGS_MAX];
    size_t k = 0;
    const char *head[] = {r->perf, "record", "-q", "-N"};
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        words[k++] = head[i];
    if (r->data_addr)
        words[k++] = "-d";
    const char *mid[] = {"-o", r->data, "-m", mmap_size, "--call-graph", stack,
                         "-c", "1", /* every tracepoint hit; the periods are their own */
                         "-e", fault_ev};
    for (size_t i = 0; i < sizeof mid / sizeof *mid; i++)
        words[k++] = mid[i];
    if (r->cpu) {
        words[k++] = "-e";
        words[k++] = cpu_ev;
    }
    const char *tps[] = {"-e", "syscalls:sys_enter_madvise", "-e", "syscalls:sys_enter_munmap",
                         "-e", "syscalls:sys_enter_brk"};
    for (size_t i = 0; r->tracepoints && i < sizeof tps / sizeof *tps; i++)
        words[k++] = tps[i];
    if (r->pid) {
        words[k++] = "-p";
        words[k++] = r->pid;
    } else {
        words[k++] = "--";
    }
    size_t ncmd = 0;
    while (!r->pid && r->cmd[ncmd])
        ncmd++;
    char **argv = calloc(k + ncmd + 1, sizeof *argv);
    if (!argv)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < k; i++)
        if (!(argv[n++] = strdup(words[i])))
            goto oom;
    for (size_t i = 0; i < ncmd; i++)
        if (!(argv[n++] = strdup(r->cmd[i])))
            goto oom;
    *argvp = argv;
    return 0;
oom:
    launch_free_words(argv);
    return -ENOMEM;
}

/* Runs argv to its end (killed with its group after timeout_s, 0 = none, or
 * on an interrupt), its stdout to out_fd and its stderr to err_fd (our own
 * temporaries, opened by file_temp: nothing is opened here by name):
 * 0 with its wait status, or -errno; -ETIMEDOUT when it was killed on time,
 * -EINTR on an interrupt. */
static int run_to_end(const run_opts_t *o, char *const *argv, char *const *envp, int out_fd, int err_fd,
                      double timeout_s, bool thp_disable, int *wstatus)
{
    /* stdin from /dev/null, stdout to out_fd, stderr to err_fd */
    const spawn_fd_t fds[] = {{SPAWN_DEVNULL, 0}, {out_fd, 1}, {err_fd, 2}};
    spawn_t sp = {.path = argv[0], .argv = argv, .envp = envp, .fds = fds, .nfds = 3,
                  .cpus = o->pin ? &o->cpus : NULL, .group = true, .death_signal = SIGKILL, .go_fd = -1,
                  .thp_disable = thp_disable};
    pid_t pid = 0;
    int rc = spawn_start(&sp, &pid);
    if (rc)
        return rc;
    double deadline = timeout_s > 0 ? mono_now() + timeout_s : 0;
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (;;) {
        pid_t w = waitpid(pid, wstatus, WNOHANG);
        if (w == pid)
            return rc;
        if (w < 0 && errno != EINTR)
            return -errno;
        if (!rc && (sample_interrupted() || (deadline > 0 && mono_now() > deadline))) {
            rc = sample_interrupted() ? -EINTR : -ETIMEDOUT;
            if (kill(-pid, SIGKILL) != 0)
                kill(pid, SIGKILL);
        }
        nanosleep(&tick, NULL);
    }
}

/* The line of a log that says why perf failed: the one after "Error:",
 * else the last non-empty one. */
static void log_reason(const char *log_path, char *buf, size_t len)
{
    snprintf(buf, len, "no message");
    FILE *f = fopen(log_path, "r");
    if (!f)
        return;
    char line[512];
    bool after_error = false;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (!strcmp(line, "Error:")) {
            after_error = true;
            continue;
        }
        snprintf(buf, len, "%s", line);
        if (after_error)
            break;
    }
    fclose(f);
}

/* The first line of a file into buf ("" when there is none). */
static void read_first_line(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, (int)len, f))
        buf[strcspn(buf, "\r\n")] = '\0';
    fclose(f);
}

/* Every file a profile writes is a fresh temporary beside OUT (file_temp:
 * O_EXCL, never an existing name or a link's target); the graphs are renamed
 * over OUT.folded and OUT.svg (a link planted there is replaced, never
 * followed), the rest removed by the names we created. */

typedef struct {
    const run_opts_t *o;
    const profile_cmd_t *cmd;
    char perf[PATH_MAX];
    char folded[PATH_MAX], svg[PATH_MAX];                   /* where the graphs end */
    char data[PATH_MAX + 32], log[PATH_MAX + 32], line[PATH_MAX + 32];  /* temporaries */
    char folded_tmp[PATH_MAX + 32], svg_tmp[PATH_MAX + 32];
    int log_fd, line_fd;
} profile_t;

/* perf.data into OUT.folded and OUT.svg by mallocbench.flamegraph; its
 * summary line into p->line's file and then into summary. */
static int render(profile_t *p, char *summary, size_t len)
{
    char pythonpath[2 * PATH_MAX], python[PATH_MAX];
    if (tools_python_env(pythonpath, sizeof pythonpath)) {
        snprintf(summary, len, "profile: cannot find the mallocbench Python package (its flamegraph module)");
        return -ENOENT;
    }
    if (elf_which("/usr/bin/python3", python, sizeof python) && elf_which_tool("python3", python, sizeof python)) {
        snprintf(summary, len, "profile: cannot find python3");
        return -ENOENT;
    }
    char *argv[] = {python, "-m", "mallocbench.flamegraph", "--perf-data", p->data, "--perf", p->perf,
                    "--folded", p->folded_tmp, "--svg", p->svg_tmp, "--force", /* our temporaries */ "--title", (char *)p->cmd->title, "--allocator-lib",
                    (char *)(p->cmd->alloc_lib ? p->cmd->alloc_lib : ""), NULL};
    int wstatus = 0;
    char safe[] = "PYTHONSAFEPATH=1"; /* python3 -m: no module from the current directory */
    char *extra[] = {pythonpath, safe}, **envp = NULL;
    int rc = prepare_env(extra, 2, &envp);
    if (!rc)
        rc = run_to_end(p->o, argv, envp, p->line_fd, p->log_fd, RENDER_TIMEOUT_S, false, &wstatus);
    launch_free_words(envp);
    if (!rc && !(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)) {
        char why[512];
        log_reason(p->log, why, sizeof why);
        snprintf(summary, len, "profile: flamegraph.py failed: %s", why);
        return -EIO;
    }
    if (rc) {
        snprintf(summary, len, "profile: cannot run flamegraph.py: %s", strerror(-rc));
        return rc;
    }
    read_first_line(p->line, summary, len);
    /* rename replaces a link at the graph's name itself, never what it points to */
    if (rename(p->folded_tmp, p->folded) || rename(p->svg_tmp, p->svg)) {
        rc = -errno;
        snprintf(summary, len, "profile: cannot write '%s' or '%s': %s", p->folded, p->svg, strerror(-rc));
        return rc;
    }
    return 0;
}

/* perf record of the command: 0, or -errno with the reason in summary. */
static int record(profile_t *p, char *summary, size_t len)
{
    char **envp = NULL, **argv = NULL;
    int rc = prepare_env(p->cmd->assign, p->cmd->nassign, &envp);
    if (!rc)
        rc = profile_record_argv(&(profile_record_t){.perf = p->perf, .data = p->data, .fault_period = PROFILE_FAULT_PERIOD,
                                                    .cpu = true, .tracepoints = have_syscall_tracepoints(),
                                                    .cmd = p->cmd->argv},
                                 &argv);
    if (rc) {
        snprintf(summary, len, "profile: cannot build the perf command: %s", strerror(-rc));
        goto out;
    }
    double timeout = p->o->timeout_s * PROFILE_TIMEOUT_FACTOR;
    int wstatus = 0;
    rc = run_to_end(p->o, argv, envp, p->log_fd, p->log_fd, timeout, p->cmd->thp_disable, &wstatus);
    struct stat st;
    bool have_data = stat(p->data, &st) == 0 && st.st_size > 0;
    if (rc == -ETIMEDOUT)
        snprintf(summary, len, "profile: killed after %.3g s (%d x --timeout)", timeout, PROFILE_TIMEOUT_FACTOR);
    else if (rc)
        snprintf(summary, len, "profile: perf record: %s", strerror(-rc));
    else if (!have_data || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        char why[512];
        log_reason(p->log, why, sizeof why);
        rc = strstr(why, "ermission") || strstr(why, "paranoid") ? -EPERM : -EIO;
        snprintf(summary, len, "profile: perf record failed (%s %d): %s",
                 WIFEXITED(wstatus) ? "exit" : "signal", WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus),
                 why);
    }
out:
    launch_free_words(envp);
    launch_free_words(argv);
    return rc;
}

/* The same for any command (`mallocbench exec`): o gives the timeout (x
 * PROFILE_TIMEOUT_FACTOR) and the CPUs to pin to. */
static int profile_command(const run_opts_t *o, const profile_cmd_t *cmd, const char *out_prefix, char *summary,
                    size_t len)
{
    profile_t p = {.o = o, .cmd = cmd};
    if (elf_which_tool("perf", p.perf, sizeof p.perf)) {
        snprintf(summary, len, "profile: perf not found on PATH (Debian: apt install linux-perf)");
        return -ENOENT;
    }
    char base[PATH_MAX];
    if ((size_t)snprintf(p.folded, sizeof p.folded, "%s.folded", out_prefix) >= sizeof p.folded ||
        (size_t)snprintf(p.svg, sizeof p.svg, "%s.svg", out_prefix) >= sizeof p.svg) {
        snprintf(summary, len, "profile: '%s': the path is too long", out_prefix);
        return -ENAMETOOLONG;
    }
    /* perf record writes a perf.data it finds empty in place (one with data it renames to .old) */
    const struct { char *tmp; const char *suffix; int *fd; } temps[] = {
        {p.data, "perf.data", NULL}, {p.log, "perf.log", &p.log_fd}, {p.line, "summary", &p.line_fd},
        {p.folded_tmp, "folded", NULL}, {p.svg_tmp, "svg", NULL}};
    p.log_fd = p.line_fd = -1;
    int rc = 0;
    size_t made = 0;
    for (; made < sizeof temps / sizeof *temps; made++) {
        snprintf(base, sizeof base, "%s.%s", out_prefix, temps[made].suffix);
        int fd = file_temp(base, temps[made].tmp, PATH_MAX + 32);
        if (fd < 0) {
            rc = fd;
            snprintf(summary, len, "profile: cannot create a temporary beside '%s': %s", base, strerror(-rc));
            break;
        }
        if (temps[made].fd)
            *temps[made].fd = fd;
        else
            close(fd);
    }
    double t0 = mono_now();
    if (!rc)
        rc = record(&p, summary, len);
    if (!rc)
        rc = render(&p, summary, len);
    for (size_t i = 0; i < made; i++)
        unlink(temps[i].tmp); /* by the names we created (the graphs' are gone when placed) */
    if (p.log_fd >= 0)
        close(p.log_fd);
    if (p.line_fd >= 0)
        close(p.line_fd);
    char took[64];
    snprintf(took, sizeof took, "; %.1f s", mono_now() - t0);
    if (!rc && strlen(summary) + strlen(took) < len)
        strcat(summary, took);
    return rc;
}

int profile_cell(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, const char *out_prefix,
                 char *summary, size_t len)
{
    char **cmd = NULL, params[1024], title[1536];
    int rc = prepare_command(o, c, a, &cmd);
    if (rc) {
        snprintf(summary, len, "profile: cannot build the command: %s", strerror(-rc));
        return rc;
    }
    size_t w = 1; /* cmd: env VAR=VALUE... WORKER ARGS (or the exec command) */
    while (cmd[w] && strchr(cmd[w], '='))
        w++;
    wl_format_args(a, ',', params, sizeof params);
    snprintf(title, sizeof title, "%s(%s) under %s", a->wl->name, params, c->label);
    profile_cmd_t pc = {.assign = cmd + 1, .nassign = w - 1, .argv = cmd + w, .title = title, .alloc_lib = c->lib,
                        .thp_disable = c->huge == HUGE_NEVER};
    if (cmd[w])
        rc = profile_command(o, &pc, out_prefix, summary, len);
    else
        snprintf(summary, len, "profile: no command after the environment"), rc = -EINVAL;
    launch_free_words(cmd);
    return rc;
}
