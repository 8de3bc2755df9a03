/* region.h - the worker's side of the steady-state handshake.  When the
 * harness runs the worker it passes MB_SYNC_FD (and MB_SYNC_ID, what it must
 * be: include/mallocbench.h); at region_begin() and
 * region_end() the worker stops until the harness has read its counters, so
 * the measured region's figures exclude start-up and warm-up.  Run by hand
 * (no MB_SYNC_FD) the calls only take the time, and the result is printed. */
#ifndef MB_REGION_H
#define MB_REGION_H
#include "workload.h"

#define MB_SYNC_FD_ENV "MB_SYNC_FD"
/* The sync socket's identity, "DEV:INO" (its st_dev and st_ino, decimal):
 * a writer checks MB_SYNC_FD's descriptor against it before any write
 * (include/mallocbench.h), so a descendant whose descriptor of that number
 * is another file writes nothing into it. */
#define MB_SYNC_ID_ENV "MB_SYNC_ID"
/* The sample's secret: the worker takes it from the environment at load
 * (and scrubs it there) and starts every line it sends with "<token> ";
 * the harness takes a line without it for a forgery. */
#define MB_SYNC_TOKEN_ENV "MB_SYNC_TOKEN"

/* Set (to 1) by `run --pin-threads`: each thread a workload starts pins
 * itself to one CPU of the process's set (region_pin_thread). */
#define MB_PIN_THREADS_ENV "MB_PIN_THREADS"

void region_begin(void);
void region_end(void);
/* Wall seconds between region_begin and region_end. */
double region_seconds(void);
/* Monotonic clock in seconds. */
double region_now(void);
/* The result line (result.h) to the harness, or to stdout by hand; a
 * result that cannot be sent is a failure line instead (-EINVAL). */
int region_report(const wl_args_t *a, const wl_result_t *r);
/* A failure line the harness records as the row's message. */
void region_fail(const char *msg);
/* Has region_fail been called (a workload that said why it failed)? */
bool region_failed(void);
/* Under MB_PIN_THREADS: the calling thread, the index-th the workload
 * started (0, 1, ...), pinned to the (index mod n)-th of the n CPUs the
 * process may run on, so that no two share a CPU while there are enough and
 * none migrates.  Without it, nothing. */
void region_pin_thread(unsigned index);

#endif
