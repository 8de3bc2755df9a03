/* cmd_record.c - `mallocbench record` and `mallocbench trace` (contract: cli.h).
 * record checks its inputs, writes the trace's file header to FILE.tmp,
 * runs the command with libmbrecord.so preloaded in front of the allocator
 * (each process of it appends its own chunks), renames the file and reads
 * it back; trace prints what a trace holds, or the byte where it breaks. */
#include "cli.h"
#include "elfinfo.h"
#include "memavail.h"
#include "outfile.h"
#include "registry.h"
#include "launch.h"
#include "prepare.h"
#include "spawn.h"
#include "sysinfo.h"
#include "tools.h"
#include "trace.h"
#include "units.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    const char *out;
    const char *alloc_arg;      /* -a NAME or NAME=LIB */
    bool force;
    char **cmd;
    const alloc_info_t *alloc;
    char lib[PATH_MAX];         /* "" for the allocator in libc */
    char recorder[PATH_MAX];
    char exe[PATH_MAX];         /* the command found on PATH */
    outfile_t of;               /* the trace: of.tmp is absolute (the command may chdir) */
    size_t region_at;           /* offset in the file of the region line's value */
    uint64_t region[2];         /* the region the command marked: ns since start_ns, begin and end */
    int marks;                  /* markers seen: 2 when both came, in order */
} rec_t;

/* The header's region line, "region=BEGIN END" in ns from start_ns, is
 * written blank (this many spaces) and filled once the command has marked
 * its region (include/mallocbench.h over MB_SYNC_FD), or left blank. */
#define REGION_FIELD 42
#define REC_SYNC_FD 3

static void record_usage(FILE *out)
{
    fprintf(out, "usage: mallocbench record [-o FILE] [-a ALLOCATOR[=LIB]] [--force] -- CMD [ARGS...]\n"
                 "runs CMD with libmbrecord.so preloaded and writes every allocation call of it and\n"
                 "of its children to FILE (trace.mbt), a binary trace that `mallocbench trace FILE`\n"
                 "prints and the replay workload replays.  -a: the allocator CMD runs under (glibc).\n"
                 "Exit code: CMD's (128+signal when killed), 2 on bad usage or input.\n");
}

static int record_args(int argc, char **argv, rec_t *r)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
        {"allocator", required_argument, NULL, 'a'}, {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:a:fh", longs, NULL)) != -1) {
        switch (c) {
        case 'o': r->out = optarg; break;
        case 'a': r->alloc_arg = optarg; break;
        case 'f': r->force = true; break;
        case 'h': record_usage(stdout); return -1;
        default: return die_usage("record: see `mallocbench record --help`");
        }
    }
    if (optind >= argc)
        return die_usage("record: no command given (mallocbench record [-o FILE] -- CMD ARGS...)");
    r->cmd = argv + optind;
    if (!*r->out)
        return die_usage("record: empty output file name");
    struct stat st;
    if (outfile_is_special(r->out))
        return die_usage("record: cannot write '%s': a trace must be a regular file (the recorded "
                         "processes append to it)", r->out);
    if (!r->force && stat(r->out, &st) == 0)
        return die_usage("record: '%s' exists (use --force to replace it)", r->out);
    return 0;
}

/* The allocator (-a NAME[=LIB]) and its library: 0 or 2. */
static int record_allocator(rec_t *r)
{
    char name[64];
    const char *arg = r->alloc_arg ? r->alloc_arg : alloc_system()->name;
    const char *eq = strchr(arg, '=');
    snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
    if (!(r->alloc = alloc_find(name)))
        return die_usage("record: unknown allocator '%s' (`mallocbench list allocators`)", name);
    r->lib[0] = '\0';
    if (eq) {
        if (alloc_is_system(r->alloc))
            return die_usage("record: %s's malloc is part of libc and takes no library path", name);
        if (!realpath(eq + 1, r->lib))
            return die_usage("record: cannot read library '%s': %s", eq + 1, strerror(errno));
    } else if (!alloc_is_system(r->alloc) && alloc_locate(r->alloc, r->lib, sizeof r->lib)) {
        return die_usage("record: %s is not installed: %s not found (install it or use -a %s=PATH)",
                         name, r->alloc->sonames[0], name);
    }
    return 0;
}

/* The command as execvp will find it: 0 or 2. */
static int record_command(rec_t *r)
{
    const char *c = r->cmd[0];
    int rc = elf_which(c, r->exe, sizeof r->exe);
    if (rc && strchr(c, '/'))
        return die_usage("record: cannot execute '%s': %s", c, strerror(-rc));
    if (rc)
        return die_usage("record: command '%s' not found on PATH", c);
    return 0;
}

/* libmbrecord.so beside the probe (build tree or libexec): 0 or 2. */
static int record_find_recorder(rec_t *r)
{
    run_opts_t o = {0};
    char worker[PATH_MAX], probe[PATH_MAX];
    if (tools_find(&o, worker, probe, sizeof probe))
        return 2;
    char *slash = strrchr(probe, '/');
    snprintf(r->recorder, sizeof r->recorder, "%.*s/libmbrecord.so",
             slash ? (int)(slash - probe) : 1, slash ? probe : ".");
    if (access(r->recorder, R_OK))
        return die_usage("record: cannot read recorder '%s': %s", r->recorder, strerror(errno));
    return 0;
}

/* The header text: command, allocator, machine, recorded (key=value lines). */
static void record_text(const rec_t *r, char *text, size_t len)
{
    size_t n = (size_t)snprintf(text, len, "command=");
    for (char **a = r->cmd; *a && n < len; a++)
        n += (size_t)snprintf(text + n, len - n, "%s%s", a == r->cmd ? "" : " ", *a);
    for (char *p = text; *p; p++)
        if (*p == '\n')
            *p = ' ';
    char host[256], cpu[256], when[64];
    struct utsname u;
    if (uname(&u))
        snprintf(u.release, sizeof u.release, "unknown");
    sysinfo_hostname(host, sizeof host);
    sysinfo_cpu_model(cpu, sizeof cpu);
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    if (n < len)
        snprintf(text + n, len - n, "\nallocator=%s %s\nmachine=%s, %s, %s, %ld cores\nrecorded=%s\nregion=%*s\n",
                 r->alloc->name, r->lib[0] ? r->lib : "libc", host, u.release, cpu,
                 sysconf(_SC_NPROCESSORS_ONLN), when, REGION_FIELD, "");
}

/* FILE.tmp with the file header, under FILE's lock (outfile_open): 0, 1 or 2. */
static int record_header(rec_t *r, uint64_t start_ns)
{
    char text[8192], err[PATH_MAX + 128];
    int rc = outfile_open(&r->of, r->out, err, sizeof err);
    if (rc)
        return die_for(rc, "record: %s", err);
    record_text(r, text, sizeof text);
    const char *line = strstr(text, "\nregion=");
    /* a command line long enough to cut the text leaves no region line: none is written */
    r->region_at = line && strlen(line) >= 8 + REGION_FIELD ? sizeof(mbt_header_t) + (size_t)(line - text) + 8 : 0;
    mbt_header_t h = {.version = MBT_VERSION, .header_len = sizeof h,
                      .page_size = (uint32_t)sysconf(_SC_PAGESIZE),
                      .text_len = (uint32_t)strlen(text), .start_ns = start_ns};
    memcpy(h.magic, MBT_MAGIC, sizeof h.magic);
    int fd = r->of.fd;
    bool ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
              write(fd, text, h.text_len) == (ssize_t)h.text_len;
    int e = errno;
    r->of.fd = -1; /* the recorded processes append to the file by its name */
    if (close(fd) || !ok) {
        e = ok ? errno : e;
        outfile_abort(&r->of);
        return die_io("record: cannot write '%s': %s", r->of.tmp, strerror(e));
    }
    return 0;
}

/* The command's environment: ours without any allocator variable (an
 * inherited LD_PRELOAD of another allocator would serve its malloc), then
 * the recorder first in LD_PRELOAD (its dlsym(RTLD_NEXT) then finds the
 * allocator's malloc), the allocator's variables and the recorder's. */
static int record_env(const rec_t *r, uint64_t start_ns, int sync_fd, char ***envp)
{
    char preload[2 * PATH_MAX + 16], path[PATH_MAX + 32], num[64], sync[32], sync_id[80];
    snprintf(sync, sizeof sync, "MB_SYNC_FD=%d", REC_SYNC_FD);
    int rc = prepare_sync_id(sync_fd, sync_id, sizeof sync_id); /* the socket a marker may go to */
    if (rc)
        return rc;
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s%s%s", r->recorder, r->lib[0] ? ":" : "", r->lib);
    snprintf(path, sizeof path, "MB_RECORD_PATH=%s", r->of.tmp);
    snprintf(num, sizeof num, "MB_RECORD_START_NS=%llu", (unsigned long long)start_ns);
    alloc_env_t env;
    rc = alloc_build_env(r->alloc, NULL, 0, &env);
    if (rc)
        return rc;
    char *extra[ALLOC_ENV_MAX + 5];
    size_t n = 0;
    extra[n++] = preload;
    extra[n++] = path;
    extra[n++] = num;
    extra[n++] = sync;
    extra[n++] = sync_id;
    for (size_t i = 0; i < env.n && n < sizeof extra / sizeof *extra; i++)
        extra[n++] = env.var[i];
    return prepare_env(extra, n, envp);
}

/* Starts the command: in the terminal's process group (^C and the tty
 * reach it as when it runs alone; the harness ignores ^C and finishes the
 * trace), and killed with the harness, even by SIGKILL. */
static int record_start(const rec_t *r, uint64_t start_ns, int sync_fd, pid_t *pid)
{
    char **envp, fail[PATH_MAX + 64];
    int rc = record_env(r, start_ns, sync_fd, &envp);
    if (rc)
        return rc;
    snprintf(fail, sizeof fail, "%s: record: cannot execute '%s'", prog, r->exe);
    /* its stdin, stdout and stderr are ours (/dev/null for one we lack), fd 3 the markers' socket */
    spawn_fd_t fds[] = {{0, 0}, {1, 1}, {2, 2}, {sync_fd, REC_SYNC_FD}};
    for (int i = 0; i < 3; i++)
        if (fcntl(i, F_GETFD) < 0)
            fds[i].from = SPAWN_DEVNULL;
    spawn_t sp = {.path = r->exe, .argv = r->cmd, .envp = envp, .death_signal = SIGKILL, .fds = fds,
                  .nfds = 4, .go_fd = -1, .exec_fail = fail, .exec_fail_errno = true};
    rc = spawn_start(&sp, pid);
    launch_free_words(envp);
    return rc;
}

/* Runs the command to its end, then kills and reaps whatever it left
 * running (a daemon that setsid'd reparents to us, the subreaper), so that
 * no traced process appends to the trace once it is finished. */
/* A marker line from the command: its time noted, answered with one byte. */
static void record_mark(rec_t *r, const char *line, uint64_t start, int fd)
{
    bool begin = !strcmp(line, "begin");
    if ((begin && r->marks == 0) || (!strcmp(line, "end") && r->marks == 1))
        r->region[r->marks++] = mono_ns() - start;
    else if (begin || !strcmp(line, "end"))
        r->marks = 3; /* out of order, or marked twice: no region */
    char ack = 'g';
    while (write(fd, &ack, 1) < 0 && errno == EINTR)
        ;
}

/* Until the command exits: its region markers answered as the harness
 * answers them in a sample (so a program that marks its region runs the
 * same), their times kept for the header. */
static void record_wait(rec_t *r, uint64_t start, pid_t pid, int sock, int *status)
{
    char buf[256];
    size_t len = 0;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    for (;;) {
        struct pollfd fds[2] = {{pidfd, POLLIN, 0}, {sock, POLLIN, 0}};
        int n = poll(fds, 2, pidfd < 0 ? 10 : -1);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && fds[1].revents) {
            ssize_t got = read(sock, buf + len, sizeof buf - 1 - len);
            if (got <= 0)
                sock = -1;
            else
                len += (size_t)got;
            buf[len] = '\0';
            char *nl;
            while ((nl = strchr(buf, '\n'))) {
                *nl = '\0';
                record_mark(r, buf, start, fds[1].fd);
                len -= (size_t)(nl + 1 - buf);
                memmove(buf, nl + 1, len + 1);
            }
            if (len >= sizeof buf - 1)
                len = 0;
        }
        if ((pidfd < 0 || (n > 0 && fds[0].revents)) && waitpid(pid, status, pidfd < 0 ? WNOHANG : 0) == pid)
            break;
    }
    if (pidfd >= 0)
        close(pidfd);
}

static int record_run(rec_t *r, uint64_t start, pid_t *pid, int *status, unsigned *stragglers)
{
    pid_t keep[64];
    int sp[2];
    int nkeep = spawn_subreaper();
    if (!nkeep)
        nkeep = spawn_children(keep, sizeof keep / sizeof *keep);
    if (nkeep < 0)
        return nkeep;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
        return -errno;
    int rc = record_start(r, start, sp[1], pid);
    close(sp[1]);
    if (!rc)
        record_wait(r, start, *pid, sp[0], status);
    close(sp[0]);
    if (!rc)
        *stragglers = spawn_kill_stragglers(keep, (size_t)nkeep);
    return rc;
}

/* The region line of the header filled in, when the command marked one. */
static void record_region(const rec_t *r)
{
    char val[REGION_FIELD + 1];
    if (r->marks != 2 || !r->region_at)
        return;
    int n = snprintf(val, sizeof val, "%llu %llu", (unsigned long long)r->region[0],
                     (unsigned long long)r->region[1]);
    int fd = open(r->of.tmp, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || n <= 0 || n > REGION_FIELD || pwrite(fd, val, (size_t)n, (off_t)r->region_at) != n)
        fprintf(stderr, "%s: record: the region the command marked is not in the trace: %s\n", prog,
                fd < 0 ? strerror(errno) : "cannot write the header");
    if (fd >= 0)
        close(fd);
}

/* Processes: distinct pids (an exec keeps the pid and adds an image). */
static size_t trace_pids(const mbt_trace_t *t)
{
    size_t n = 0;
    for (size_t k = 0; k < t->nproc; k++)
        n += t->proc[k].first_image == k;
    return n;
}

/* Read the finished trace back and print one line about it. */
static int record_summary(const rec_t *r, double wall_s)
{
    mbt_trace_t t;
    char err[512];
    if (mbt_read(r->out, &t, err, sizeof err)) {
        fprintf(stderr, "%s: record: the trace is unreadable: %s\n", prog, err);
        return 1;
    }
    struct stat st;
    long long bytes = stat(r->out, &st) ? -1 : (long long)st.st_size;
    fprintf(stderr, "%s: recorded %llu events, %zu threads, %zu processes, %lld bytes in '%s' "
            "(wall %.3f s)\n", prog, (unsigned long long)t.nevents, t.nthread, trace_pids(&t), bytes,
            r->out, wall_s);
    if (t.truncated_at)  /* a full disk, or a process killed mid-write: err says where */
        fprintf(stderr, "%s: record: '%s': %s\n", prog, r->out, err);
    if (!t.nproc)
        fprintf(stderr, "%s: record: no process of the command loaded the recorder (a static "
                "program, or one that dropped LD_PRELOAD)\n", prog);
    mbt_free(&t);
    return 0;
}

/* SIGTERM stops a recording as ^C does (docs/output.md, *Signals*): it goes on to
 * the command, and record finishes its trace when the command ends.  record_pid
 * points at the command's pid once it is started (-1 before). */
static pid_t *volatile record_pid;

static void record_pass_term(int sig)
{
    pid_t pid = record_pid ? *(volatile pid_t *)record_pid : -1;
    if (pid > 0)
        kill(pid, sig);
}

int cmd_record(int argc, char **argv)
{
    static rec_t r;
    memset(&r, 0, sizeof r);
    r.out = "trace.mbt";
    int rc = record_args(argc, argv, &r);
    if (rc)
        return rc < 0 ? 0 : rc;
    if ((rc = record_allocator(&r)) || (rc = record_command(&r)) || (rc = record_find_recorder(&r)))
        return rc;
    uint64_t start = mono_ns();
    if ((rc = record_header(&r, start)))
        return rc;
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit, old_term,
                                  term = {.sa_handler = record_pass_term};
    sigaction(SIGINT, &ign, &old_int); /* the command gets ^C; we finish its trace */
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = -1;
    record_pid = &pid; /* its address escapes: record_start's store is there before any wait */
    if (sigaction(SIGTERM, NULL, &old_term) || old_term.sa_handler != SIG_IGN) /* one left ignored stays so */
        sigaction(SIGTERM, &term, NULL);
    int status = 0;
    unsigned stragglers = 0;
    rc = record_run(&r, start, &pid, &status, &stragglers);
    double wall = (double)(mono_ns() - start) / 1e9;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc) {
        outfile_abort(&r.of);
        return die_io("record: cannot start the command: %s", strerror(-rc));
    }
    char err[PATH_MAX + 128];
    record_region(&r);
    if (outfile_commit(&r.of, err, sizeof err))
        return die_io("record: %s", err);
    if (stragglers)
        fprintf(stderr, "%s: record: killed %u process%s the command left running, before finishing "
                "the trace\n", prog, stragglers, stragglers == 1 ? "" : "es");
    int code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    if (record_summary(&r, wall))
        return code ? code : 1;
    return code;
}

/* ---- trace ---------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s that is not a C1 control (a
 * terminal may take U+0080..U+009F as escapes), or 0. */
static size_t trace_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (c == 0xc2)
        lo = 0xa0;
    for (size_t i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
        if (s[i] < lo || s[i] > hi)
            return 0;
    return n;
}

/* Prints a string from the trace (untrusted) so that it cannot drive the
 * terminal: control bytes and bytes that are not UTF-8 as \xNN, a backslash
 * as \\; newlines kept where keep_nl (the header text's lines). */
static void trace_put_escaped(const char *str, bool keep_nl)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        size_t n = *s >= 0x80 ? trace_utf8_len(s) : 1;
        if (*s == '\\')
            fputs("\\\\", stdout);
        else if ((*s < 0x20 && !(keep_nl && *s == '\n')) || *s == 0x7f || !n)
            printf("\\x%02X", *s);
        else
            fwrite(s, 1, n, stdout);
        s += n ? n : 1;
    }
}

/* One process (every image of its pid): how it started, then its stats. */
static int trace_process(const mbt_trace_t *t, size_t k)
{
    const mbt_proc_t *p = &t->proc[k];
    mbt_stats_t s;
    int rc = mbt_stats_proc(t, k, &s);
    if (rc)
        return rc;
    printf("process %u: %s, parent %u, ", p->pid, p->forked ? "fork" : "exec", p->ppid);
    trace_put_escaped(p->exe, false);
    for (size_t j = p->next_image; j; j = t->proc[j].next_image) {
        printf(" -> ");
        trace_put_escaped(t->proc[j].exe, false);
    }
    uint64_t nev = 0;
    for (int op = 1; op < MBT_OP_COUNT; op++)
        nev += s.count[op];
    printf("\n  %-16s %llu\n  %-16s %llu\n", "threads", (unsigned long long)s.nthreads,
           "events", (unsigned long long)nev);
    for (int op = 1; op < MBT_OP_COUNT; op++)
        printf("  %-16s %llu\n", mbt_op_name((unsigned)op), (unsigned long long)s.count[op]);
    printf("  %-16s %llu\n  %-16s %llu\n  %-16s %llu\n  %-16s %llu\n  %-16s %llu\n",
           "unknown_free", (unsigned long long)s.unknown_free,
           "peak_live_bytes", (unsigned long long)s.peak_live_bytes,
           "replay_peak_bytes", (unsigned long long)s.replay_peak_bytes,
           "live_bytes_end", (unsigned long long)s.live_bytes_end,
           "bytes_allocated", (unsigned long long)s.bytes_allocated);
    return 0;
}

/* The largest peak live bytes of any process against the memory available:
 * 0; 2 after one line when over and not warn_only; -ENOMEM. */
static int trace_check_memory(const mbt_trace_t *t, const char *path, bool warn_only)
{
    uint64_t peak = 0;
    uint32_t pid = 0;
    for (size_t k = 0; k < t->nproc; k++) {
        mbt_stats_t s;
        if (t->proc[k].first_image != k)
            continue;
        if (mbt_stats_proc(t, k, &s))
            return -ENOMEM;
        if (s.replay_peak_bytes > peak) /* what a replay of it would hold (mbt_stats_t) */
            peak = s.replay_peak_bytes, pid = t->proc[k].pid;
    }
    char why[256];
    if (!mem_check_peak(peak, why, sizeof why))
        return 0;
    if (warn_only) {
        fprintf(stderr, "%s: warning: trace: '%s': process %u: %s\n", prog, path, pid, why);
        return 0;
    }
    return die_usage("trace: '%s': process %u: %s (--over-memory=warn reads it anyway)", path,
                     pid, why);
}

int cmd_trace(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: mallocbench trace [--over-memory=refuse|warn] FILE\nprints what a trace "
               "of `mallocbench record` holds: its header, and per process\nits threads, calls "
               "per operation, frees of blocks never seen allocated and\nthe most bytes it held "
               "at once.  A trace whose process held more bytes at once\nthan the memory "
               "available is refused unless --over-memory=warn.\n");
        return 0;
    }
    bool warn_only = false;
    if (argc == 3 && !strncmp(argv[1], "--over-memory=", 14)) {
        if (strcmp(argv[1] + 14, "warn") && strcmp(argv[1] + 14, "refuse"))
            return die_usage("trace: '%s': --over-memory takes refuse or warn", argv[1] + 14);
        warn_only = !strcmp(argv[1] + 14, "warn");
        argc--, argv++;
    }
    if (argc != 2)
        return die_usage("trace: one trace file expected (mallocbench trace FILE)");
    mbt_trace_t t;
    char err[512];
    int rc = mbt_read(argv[1], &t, err, sizeof err);
    if (rc)
        return die_usage("trace: %s", err);
    if (t.truncated_at)
        fprintf(stderr, "%s: warning: trace: %s\n", prog, err);
    if ((rc = trace_check_memory(&t, argv[1], warn_only))) {
        mbt_free(&t);
        return rc < 0 ? die_io("trace: out of memory") : rc;
    }
    printf("trace: %s, version %u, page size %u\n", argv[1], t.version, t.page_size);
    trace_put_escaped(t.text, true);
    printf("processes: %zu (%zu images), threads: %zu, events: %llu\n", trace_pids(&t), t.nproc,
           t.nthread, (unsigned long long)t.nevents);
    for (size_t k = 0; k < t.nproc && !rc; k++)
        if (t.proc[k].first_image == k) /* a pid once, at its first image */
            rc = trace_process(&t, k);
    mbt_free(&t);
    return rc ? die_io("trace: out of memory") : 0;
}
