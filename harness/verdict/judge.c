/* judge.c - judging a sample (contract: judge.h): the status decided from
 * the configuration and sample.c's observations in judge_status, the probe's
 * proof from verify.c after it.  Reads observations, writes only the
 * verdict (status, message, untrusted). */
#include "judge.h"
#include "probe_report.h"
#include "ending.h"
#include "launch.h"
#include "verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The allocator's own complaint about a setting, as one line (two when the
 * first ends with ':' and names what follows), or NULL. */
static const char *rejection(const run_config_t *c, const run_sample_t *s, char *line, size_t len)
{
    const char *at = alloc_rejection(c->alloc, s->out_head);
    if (!at)
        at = alloc_rejection(c->alloc, s->out_tail);
    if (!at)
        return NULL;
    size_t n = strcspn(at, "\n");
    if (n && at[n - 1] == ':' && at[n] == '\n')
        n += 1 + strcspn(at + n + 1, "\n");
    snprintf(line, len, "%.*s", (int)n, at);
    for (char *q = line; *q; q++)
        if (*q == '\n' || *q == '\t')
            *q = ' ';
    return line;
}

/* Why huge=never did not hold in the sample, or NULL: a process of the tree
 * read with THP_enabled 1, huge pages in its memory, or no process read at
 * all (nothing proves it).  The proof reads /proc, so a statically linked
 * program is held to it as any other. */
static const char *thp_broken(const run_config_t *c, const run_sample_t *s, char *line, size_t len)
{
    if (c->huge != HUGE_NEVER)
        return NULL;
    if (s->thp_on_pid)
        snprintf(line, len, "huge=never did not hold: process %ld of the tree had transparent huge pages on "
                 "(THP_enabled 1 in /proc/%ld/status)", (long)s->thp_on_pid, (long)s->thp_on_pid);
    else if (s->anon_huge_max_kib > 0)
        snprintf(line, len, "huge=never did not hold: the tree held %ld KiB in huge pages (AnonHugePages)",
                 s->anon_huge_max_kib);
    else if (!s->thp_read)
        snprintf(line, len, "huge=never not proven: no process of the tree was read with a THP_enabled line "
                 "(/proc/PID/status has one from Linux 5.0)");
    else
        return NULL;
    return line;
}

void judge_status(const run_opts_t *o, const run_config_t *c, run_sample_t *s)
{
    char out_copy[RUN_OUTPUT_KEEP];
    snprintf(out_copy, sizeof out_copy, "%s", s->out_tail);
    const char *tail = launch_last_line(out_copy), *what = s->what ? s->what : "worker";
    char why[256], thp_why[256];
    const char *rejected = rejection(c, s, why, sizeof why), *thp = thp_broken(c, s, thp_why, sizeof thp_why);
    s->untrusted = false;
    s->message[0] = '\0';
    /* how it ended: the one wording of ending.c */
    ending_facts_t f = {.wstatus = s->wstatus, .timed_out = s->timed_out, .timeout_s = o->timeout_s,
                        .interrupted = s->interrupted, .stop_signal = s->stop_signal,
                        .oom_kills = s->oom_kills, .setup_errno = s->setup_errno,
                        .setup_what = s->setup_what[0] ? s->setup_what : NULL, .tail = tail,
                        .fail = s->fail, .harness_why = s->harness_why, .stopped = s->stopped};
    static const run_status_t as_run[] = {
        [ENDING_OK] = RUN_OK, [ENDING_ERROR] = RUN_ERROR,
        [ENDING_CRASHED] = RUN_CRASHED, [ENDING_TIMEOUT] = RUN_TIMEOUT,
    };
    ending_status_t st = ending_describe(&f, s->message, sizeof s->message);
    if (st != ENDING_OK) {
        s->status = as_run[st];
    } else if (s->forged[0]) {
        /* the proof or the result did not come from the probe or the worker */
        s->status = RUN_ERROR;
        s->untrusted = true;
        snprintf(s->message, sizeof s->message, "%s", s->forged);
    } else if (!s->have_result) {
        s->status = RUN_ERROR;
        /* a result line that did not parse says why (s->fail) */
        snprintf(s->message, sizeof s->message, "%s exited without a result%s%s", what,
                 s->fail[0] || *tail ? ": " : "", s->fail[0] ? s->fail : tail);
    } else if (s->proc_mismatch[0]) {
        /* a child of the command escaped the allocator asked for */
        s->status = RUN_ERROR;
        s->untrusted = true;
        snprintf(s->message, sizeof s->message, "%s", s->proc_mismatch);
    } else if (rejected) {
        /* an allocator that carries on after a bad setting: we do not */
        s->status = RUN_ERROR;
        s->untrusted = true;
        snprintf(s->message, sizeof s->message, "%s rejected a setting: %s", c->alloc->name, rejected);
    } else if (thp) {
        s->status = RUN_ERROR;
        snprintf(s->message, sizeof s->message, "%s", thp);
    } else {
        s->status = RUN_OK;
    }
}

int judge_sample(const run_opts_t *o, const run_config_t *c, run_sample_t *s, char *effective,
                 size_t efflen)
{
    judge_status(o, c, s);
    verify_sample(c, s, effective, efflen);
    return s->status == RUN_OK ? 0 : -1;
}

int judge_library(const run_config_t *c, char *err, size_t errlen)
{
    if (c->lib[0] && access(c->lib, R_OK) != 0) {
        snprintf(err, errlen, "%s: cannot read library '%s': %s", c->alloc->name, c->lib, strerror(errno));
        return -ENOENT;
    }
    return 0;
}

int judge_preflight(const run_opts_t *o, const run_config_t *c, run_sample_t *s, char *version, size_t vlen,
                    char *err, size_t errlen)
{
    char eff[2048];
    version[0] = '\0';
    judge_status(o, c, s);
    if (s->status == RUN_OK)
        verify_sample(c, s, eff, sizeof eff);
    if (s->status != RUN_OK) {
        snprintf(err, errlen, "%s: %s", c->label, s->message);
        return -EINVAL;
    }
    const char *v = probe_report_get(s, "version");
    snprintf(version, vlen, "%s", v ? v : "");
    return 0;
}
