/* ending.h - what the end of a sample's process means: its wait status and
 * what the harness saw around it (a time-out, an interrupt, a stop, the
 * child's own set-up failure, the OOM killer) turned into a status and one
 * line of message.  ending_describe is pure, so sample.c's finish_status and
 * any later judge of a sample share one wording. */
#ifndef MB_ENDING_H
#define MB_ENDING_H
#include <stdbool.h>
#include <stddef.h>

/* The sample's status as the end alone decides it (sample.h's run_status_t
 * names the same four; this header stands alone so that sample.c, and the
 * judge after it, include it without a cycle). */
typedef enum { ENDING_OK, ENDING_ERROR, ENDING_CRASHED, ENDING_TIMEOUT } ending_status_t;

typedef struct {
    int wstatus;              /* from wait4 */
    bool timed_out;           /* the harness killed it at --timeout */
    double timeout_s;
    bool interrupted;         /* the harness killed it on ^C or SIGTERM */
    int stop_signal;          /* > 0: it stopped with this signal (and was killed then) */
    long oom_kills;           /* rise of /proc/vmstat oom_kill during the sample; < 0 unknown */
    int setup_errno;          /* > 0: the child failed before its program ran (spawn's fail pipe) */
    const char *setup_what;   /* ... at this step ("set up its descriptors") */
    const char *tail;         /* the last line of its output, or "" */
    const char *fail;         /* its own reason (the worker's fail line), or "" */
    const char *harness_why;  /* the harness ended it, or never started it, for this reason; or "" */
    bool stopped;             /* the harness stopped it once its work was done: any end is fine */
} ending_facts_t;

/* ENDING_OK when the process exited 0 on its own (whether it brought a
 * result and proof is the caller's to judge); else the status, why in msg. */
ending_status_t ending_describe(const ending_facts_t *f, char *msg, size_t len);

#endif
