/* procread.h - diagnose's reads of other processes (ident_capture: the program
 * file, the environment, the command line, memory through /proc/PID/mem) done
 * by a child of its own, the reader, so that a process that makes such a read
 * slow (its program on a FUSE mount it serves, memory that blocks a remote
 * read) holds up only the reader: a request not answered in time kills it, and
 * the next request forks a fresh one, never waiting on the one left behind.
 * The reader ignores SIGINT and SIGTERM (diagnose ends it) and dies with
 * diagnose. */
#ifndef MB_PROCREAD_H
#define MB_PROCREAD_H
#include "ident.h"

#include <stdbool.h>
#include <sys/types.h>

#define PROCREAD_TIMEOUT_MS 300 /* the most one process's reading may take */

/* Starts the reader (before anything else is open that it need not inherit): 0 or -errno. */
int procread_start(void);
/* ident_capture(pid) by the reader, waiting at most timeout_ms: 0, -ETIMEDOUT (the reader
 * was killed; out says nothing was read), or -errno.  ident_capture_free(out) after. */
int procread_capture(int pid, bool full_cmdline, unsigned timeout_ms, ident_capture_t *out);
/* /proc/PID/NAME ("maps" or "smaps_rollup": files whose reading takes the process's memory-map
 * lock, which it can hold) by the reader: 0 with a malloc'd, NUL-ended buffer in *buf (*len
 * bytes; empty where the file could not be read), -ETIMEDOUT (the reader was killed), or -errno. */
int procread_file(int pid, const char *name, unsigned timeout_ms, char **buf, size_t *len);
/* The reader's pid (-1 none): a process diagnose does not watch. */
pid_t procread_pid(void);
/* Ends the reader. */
void procread_stop(void);

#endif
