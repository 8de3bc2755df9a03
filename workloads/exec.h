/* exec.h - the `exec` pseudo-workload: a user's command, run by the harness
 * itself in place of the worker (`mallocbench exec -- CMD ARGS`, or
 * `exec:cmd=...` in a matrix).  Its parameters carry the command as one
 * line of shell words; the harness splits, checks and runs it
 * (harness/sample/launch.h). */
#ifndef MB_EXEC_H
#define MB_EXEC_H
#include "workload.h"

extern const wl_t wl_exec;

#endif
