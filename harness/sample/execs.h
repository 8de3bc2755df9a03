/* execs.h - the program images a sample's process tree started, counted and
 * named by the kernel, so that the probe's reports are held to every image
 * (a wrapper that execs its program in the same process is two images), not
 * to every process.  The tracepoint sched:sched_process_exec is counted on
 * the child like the fault counters (enable_on_exec, inherited by every
 * descendant), one event per CPU, each with a small ring of the execs' pids
 * and file names: the count is exact; the names run short only when a ring
 * overflows, and the caller drains the rings while the sample runs. */
#ifndef MB_EXECS_H
#define MB_EXECS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define EXECS_NAMES_MAX 1024

typedef struct {
    pid_t pid;
    uint64_t time;      /* perf clock, to order the CPUs' records */
    char file[160];     /* the file execve was given (a script's own path, not its interpreter) */
} execs_image_t;

typedef struct execs execs_t;

/* Opens the counting on pid, stopped before its first exec: 0, or -errno
 * with the reason in why (no tracefs, not permitted); *out is NULL then. */
int execs_open(execs_t **out, pid_t pid, char *why, size_t whylen);
/* Moves what the rings hold into the list of images (call it now and then
 * while the sample runs, and once at its end). */
void execs_drain(execs_t *x);
/* The images started so far (every exec in the tree), or -1 unread. */
long execs_count(const execs_t *x);
/* The images named, in the order they started (*n of them: fewer than
 * execs_count when a ring overflowed or EXECS_NAMES_MAX was reached). */
const execs_image_t *execs_images(execs_t *x, size_t *n);
void execs_close(execs_t *x);

#endif
