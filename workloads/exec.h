/* exec.h - the `exec` pseudo-workload: a user's command, run by the harness
 * itself in place of the worker (`mallocbench exec -- CMD ARGS`, or
 * `exec:cmd=...` in a matrix).  Its parameters carry the command as one
 * line of shell words; this module splits and quotes them, and refuses a
 * program into which an allocator cannot really be preloaded. */
#ifndef MB_EXEC_H
#define MB_EXEC_H
#include "workload.h"

#include <stdbool.h>
#include <stddef.h>

extern const wl_t wl_exec;

static inline bool wl_is_exec(const wl_args_t *a) { return a->wl == &wl_exec; }

/* Words of a command line as a POSIX shell splits them, without any
 * expansion: '...' literal, "..." with \" \\ \$ \` escapes, \c outside
 * quotes.  A NULL-terminated vector from malloc (free each word, then it);
 * -EINVAL with one line in err (unterminated quote, empty command). */
int exec_split(const char *cmd, char ***argv, char *err, size_t errlen);

/* The words quoted back into one line that exec_split turns into the same
 * words (single quotes only where needed): 0, or -ENAMETOOLONG. */
int exec_quote(char *const *argv, char *out, size_t len);

/* Can an allocator be preloaded into the program argv[0] names?  0, or
 * -EINVAL with the reason in err: not found, a static binary, setuid or
 * setgid, or one that links an allocator of the registry or defines
 * malloc itself.  A script is judged by its interpreter. */
int exec_check_program(const char *name, char *err, size_t errlen);

/* The figure printed by the command: the last line of out that matches
 * the extended regular expression re; the number in its first group, or
 * without a group the first number on the line from where the match starts.  0, or -ENOENT (no match, no number), -EINVAL (bad re). */
int exec_metric(const char *re, const char *out, double *value);

#endif
