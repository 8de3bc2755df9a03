/* ending.c - the status and message of a sample's end (contract: ending.h).
 * The OOM killer is recognised by a heuristic: a SIGKILL the harness did not
 * send, while /proc/vmstat's oom_kill rose; a kill of another process on the
 * machine at the same moment would be taken for ours (docs/exec.md). */
#include "ending.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* "SIGSTOP", or "signal 40" for one without a name. */
static const char *sig_name(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(buf, len, "SIG%s", abbrev);
    else
        snprintf(buf, len, "signal %d", sig);
    return buf;
}

/* Killed by a signal: the OOM killer's SIGKILL named as such. */
static ending_status_t signalled(const ending_facts_t *f, char *msg, size_t len)
{
    int sig = WTERMSIG(f->wstatus);
    const char *sep = *f->tail ? ": " : "";
    if (sig == SIGKILL && f->oom_kills > 0)
        snprintf(msg, len, "out of memory: killed by the OOM killer (signal 9; /proc/vmstat oom_kill "
                 "rose by %ld during the sample)%s%s", f->oom_kills, sep, f->tail);
    else
        snprintf(msg, len, "killed by signal %d (%s)%s%s", sig, strsignal(sig), sep, f->tail);
    return ENDING_CRASHED;
}

ending_status_t ending_describe(const ending_facts_t *f, char *msg, size_t len)
{
    char name[32];
    if (f->timed_out) {
        snprintf(msg, len, "killed after %.3g s (--timeout)", f->timeout_s);
        return ENDING_TIMEOUT;
    }
    if (f->interrupted) {
        snprintf(msg, len, "interrupted");
        return ENDING_ERROR;
    }
    if (f->harness_why && *f->harness_why) {
        snprintf(msg, len, "%s", f->harness_why);
        return ENDING_ERROR;
    }
    if (f->stopped) {
        msg[0] = '\0';
        return ENDING_OK;
    }
    if (f->stop_signal > 0) {
        snprintf(msg, len, "stopped (%s): killed, since a stopped sample would only run out its time",
                 sig_name(f->stop_signal, name, sizeof name));
        return ENDING_ERROR;
    }
    if (f->setup_errno > 0) {
        snprintf(msg, len, "the child could not %s: %s", f->setup_what ? f->setup_what : "start",
                 strerror(f->setup_errno));
        return ENDING_ERROR;
    }
    if (WIFSIGNALED(f->wstatus))
        return signalled(f, msg, len);
    if (WIFEXITED(f->wstatus) && WEXITSTATUS(f->wstatus) != 0) {
        snprintf(msg, len, "exit code %d: %s", WEXITSTATUS(f->wstatus),
                 *f->fail ? f->fail : *f->tail ? f->tail : "(no output)");
        return ENDING_ERROR;
    }
    msg[0] = '\0';
    return ENDING_OK;
}
