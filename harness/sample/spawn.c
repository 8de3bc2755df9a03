/* spawn.c - fork and exec for every launch site (contract: spawn.h).  From
 * the fork to the exec the child makes only async-signal-safe calls, so the
 * harness may hold any lock when it spawns. */
#include "spawn.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define SPAWN_FD_MAX 16

/* The steps of the child's set-up, as spawn_failure names them. */
enum { STEP_BOND, STEP_GO_FD, STEP_FDS, STEP_CPUS, STEP_THP, STEP_GO, STEP_EXEC };
static const char *const step_names[] = {
    "join its process group or take its death signal", "keep the go-pipe",
    "set up its descriptors", "be pinned to its CPUs", "switch transparent huge pages off (PR_SET_THP_DISABLE)",
    "get the go from the harness", "execute",
};

typedef struct {
    int step, err;
} spawn_fail_t;

/* Above every number the map asks for, so a copy is never overwritten by a
 * target (and low enough for a small RLIMIT_NOFILE: not a fixed 64). */
static int fd_floor(const spawn_t *sp)
{
    int top = 2;
    for (size_t i = 0; i < sp->nfds && i < SPAWN_FD_MAX; i++)
        if (sp->fds[i].to > top)
            top = sp->fds[i].to;
    return top + 1;
}

/* Its group and its death signal, first thing; false if the harness is
 * already gone (the death signal would never come). */
static bool child_bond(const spawn_t *sp, pid_t parent)
{
    if (sp->group)
        setpgid(0, 0);
    if (!sp->death_signal)
        return true;
    return prctl(PR_SET_PDEATHSIG, sp->death_signal) == 0 && getppid() == parent;
}

/* The fd map: every source copied out of the way first, so that one
 * target never overwrites a later source. */
static bool child_fds(const spawn_t *sp)
{
    int high[SPAWN_FD_MAX];
    if (sp->nfds > SPAWN_FD_MAX) {
        errno = E2BIG;
        return false;
    }
    for (size_t i = 0; i < sp->nfds; i++) {
        int from = sp->fds[i].from;
        if (from == SPAWN_DEVNULL)
            from = open("/dev/null", O_RDONLY | O_CLOEXEC);
        high[i] = from < 0 ? -1 : fcntl(from, F_DUPFD_CLOEXEC, fd_floor(sp));
        if (high[i] < 0)
            return false;
    }
    for (size_t i = 0; i < sp->nfds; i++)
        if (dup2(high[i], sp->fds[i].to) < 0)
            return false;
    return true;
}

static void child_signals(void)
{
    static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGPIPE};
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &dfl, NULL);
}

static void child_say(const char *a, const char *b)
{
    ssize_t ignored = write(2, a, strlen(a));
    if (b)
        ignored = write(2, b, strlen(b));
    (void)ignored;
}

/* The failed step and its errno to the harness, then the exit code. */
__attribute__((noreturn)) static void child_fail(int fail_fd, int step, int err, int code)
{
    spawn_fail_t f = {step, err ? err : EIO};
    if (fail_fd >= 0)
        (void)!write(fail_fd, &f, sizeof f);
    _exit(code);
}

__attribute__((noreturn)) static void child_run(const spawn_t *sp, pid_t parent, int fail_fd)
{
    /* out of the map's way before the map is applied */
    if (fail_fd >= 0 && fail_fd < fd_floor(sp))
        fail_fd = fcntl(fail_fd, F_DUPFD_CLOEXEC, fd_floor(sp));
    int go_fd = sp->go_fd >= 0 ? fcntl(sp->go_fd, F_DUPFD_CLOEXEC, fd_floor(sp)) : -1;
    if (!child_bond(sp, parent))
        child_fail(fail_fd, STEP_BOND, errno ? errno : ESRCH, 126);
    if (sp->go_fd >= 0 && go_fd < 0)
        child_fail(fail_fd, STEP_GO_FD, errno, 126);
    if (!child_fds(sp))
        child_fail(fail_fd, STEP_FDS, errno, 126);
    if (sp->cpus && sched_setaffinity(0, sizeof *sp->cpus, sp->cpus) != 0)
        child_fail(fail_fd, STEP_CPUS, errno, 125);
    if (sp->thp_disable && prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 1)
        child_fail(fail_fd, STEP_THP, errno ? errno : EINVAL, 126); /* spawn_start set it before the fork */
    child_signals();
    if (go_fd >= 0) {
        char go = 0;
        ssize_t n;
        while ((n = read(go_fd, &go, 1)) < 0 && errno == EINTR)
            ;
        if (go != 'g')
            child_fail(fail_fd, STEP_GO, n < 0 ? errno : EPIPE, 126);
    }
    execve(sp->path, sp->argv, sp->envp);
    int err = errno;
    if (sp->exec_fail) {
        child_say(sp->exec_fail, sp->exec_fail_errno ? ": " : NULL);
        child_say(sp->exec_fail_errno ? strerror(err) : "", "\n");
    }
    child_fail(fail_fd, STEP_EXEC, err, 127);
}

int spawn_failure(int fd, char *what, size_t len, int *err)
{
    spawn_fail_t f;
    ssize_t n;
    while ((n = read(fd, &f, sizeof f)) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof f || f.step < 0 || f.step > STEP_EXEC)
        return -ENOENT;
    snprintf(what, len, "%s", step_names[f.step]);
    *err = f.err;
    return 0;
}

int spawn_call(void (*fn)(void *ctx), void *ctx, int death_signal, pid_t *pidp)
{
    pid_t parent = getpid(), pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        if (death_signal && (prctl(PR_SET_PDEATHSIG, death_signal) || getppid() != parent))
            _exit(0); /* the harness is gone already */
        fn(ctx);
        _exit(0);
    }
    *pidp = pid;
    return 0;
}

int spawn_start(const spawn_t *sp, pid_t *pidp)
{
    int fp[2] = {-1, -1};
    if (sp->fail_fd && pipe2(fp, O_CLOEXEC))
        return -errno;
    /* THP off in the harness across the fork, so the child has it off from its
     * first instant (a reading of its /proc/PID/status never sees it on) */
    int thp_was = sp->thp_disable ? prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) : 0;
    if (sp->thp_disable && (thp_was < 0 || prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0)) {
        int err = errno;
        if (fp[0] >= 0)
            close(fp[0]), close(fp[1]);
        return -err;
    }
    pid_t parent = getpid(), pid = fork();
    if (pid != 0 && sp->thp_disable && thp_was == 0)
        prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
    if (pid < 0) {
        int err = errno;
        if (fp[0] >= 0)
            close(fp[0]), close(fp[1]);
        return -err;
    }
    if (pid == 0)
        child_run(sp, parent, fp[1]);
    if (sp->fail_fd) {
        close(fp[1]);
        *sp->fail_fd = fp[0];
    }
    if (sp->group)
        setpgid(pid, pid); /* also here: no window in which a kill of the group misses it */
    *pidp = pid;
    return 0;
}

int spawn_subreaper(void)
{
    return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

int spawn_proc_stat(pid_t pid, char *buf, size_t len, char **fields)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0)
        return -EIO;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold ')' and spaces */
    if (!p)
        return -EIO;
    *fields = p + 1;
    return 0;
}

/* The parent and the state letter of a process from /proc/PID/stat. */
static int proc_ppid_state(pid_t pid, pid_t *ppid, char *state)
{
    char buf[512], *f = NULL;
    long pp;
    if (spawn_proc_stat(pid, buf, sizeof buf, &f) || sscanf(f, " %c %ld", state, &pp) != 2)
        return -EIO;
    *ppid = (pid_t)pp;
    return 0;
}

/* Our children, with whether each is still running (not a zombie).  Every
 * /proc entry is read: /proc/PID/task/TID/children needs a kernel option. */
static int children_of_self(pid_t *pids, bool *live, size_t max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    pid_t self = getpid();
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        pid_t pid, ppid;
        char state;
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (proc_ppid_state(pid, &ppid, &state) || ppid != self)
            continue;
        if (live)
            live[n] = state != 'Z' && state != 'X';
        pids[n++] = pid;
    }
    closedir(d);
    return (int)n;
}

int spawn_children(pid_t *pids, size_t max)
{
    return children_of_self(pids, NULL, max);
}

static bool kept(pid_t pid, const pid_t *keep, size_t nkeep)
{
    for (size_t i = 0; i < nkeep; i++)
        if (keep[i] == pid)
            return true;
    return false;
}

unsigned spawn_kill_stragglers_seen(const pid_t *keep, size_t nkeep, void (*seen)(pid_t, void *), void *ctx)
{
    enum { BATCH = 256, ROUNDS = 1000 };
    pid_t pids[BATCH];
    bool live[BATCH];
    unsigned killed = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int n = children_of_self(pids, live, BATCH);
        size_t acted = 0;
        for (int i = 0; i < n; i++) {
            if (kept(pids[i], keep, nkeep))
                continue;
            if (live[i] && seen)
                seen(pids[i], ctx);
            if (live[i] && kill(pids[i], SIGKILL) == 0)
                killed++;
            while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
                ;
            acted++;
        }
        if (!acted)
            break;
    }
    return killed;
}

unsigned spawn_kill_stragglers(const pid_t *keep, size_t nkeep)
{
    return spawn_kill_stragglers_seen(keep, nkeep, NULL, NULL);
}
