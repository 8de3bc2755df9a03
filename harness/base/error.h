/* error.h - the one-line error printers every stage of the harness uses:
 * "mallocbench: <what failed, quoting its subject>" on stderr.  die_usage
 * for bad usage or input (returns 2), die_io for a read, write or
 * allocation that failed, not the user (returns 1).  The bottom of the
 * harness's layers: it calls nothing above it. */
#ifndef MB_ERROR_H
#define MB_ERROR_H

/* Exit 4: a run, exec or serve ended with a configuration none of whose
 * samples was ok (each named on stderr; --keep-going exits 0 instead).
 * Distinct from 1 (a failure to start, read or write), 2 (bad usage or
 * input) and 3 (a finding: detect's unresolved regression). */
#define EXIT_NO_OK_SAMPLE 4

/* The name in front of every message: "mallocbench". */
extern const char *prog;

/* Print "mallocbench: <message>" and return 2 (bad usage or input). */
int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "mallocbench: <message>" and return 1: a read, a write or an
 * allocation failed, not the user. */
int die_io(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* One of the two by the -errno of what failed: die_usage when rc says the
 * input itself is wrong (malformed, not there, not a file, too large),
 * else die_io (a read or write failed). */
int die_for(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
