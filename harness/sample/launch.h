/* launch.h - a user's command run by the harness in place of the worker
 * (`mallocbench exec -- CMD ARGS`, or `exec:cmd=...` in a matrix): the
 * command as one line of shell words split and quoted, the refusal of a
 * program into which an allocator cannot really be preloaded, and the
 * figure it prints.  The exec workload itself is only a descriptor. */
#ifndef MB_LAUNCH_H
#define MB_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

/* Words of a command line as a POSIX shell splits them, without any
 * expansion: '...' literal, "..." with \" \\ \$ \` escapes, \c outside
 * quotes.  A NULL-terminated vector from malloc (free each word, then it);
 * -EINVAL with one line in err (unterminated quote, empty command). */
int launch_split(const char *cmd, char ***argv, char *err, size_t errlen);
/* Frees what launch_split made (each word, then the vector); NULL is fine. */
void launch_free_words(char **argv);

/* The words quoted back into one line that launch_split turns into the same
 * words (single quotes only where needed): 0, or -ENAMETOOLONG. */
int launch_quote(char *const *argv, char *out, size_t len);

/* A figure's magnitude: 0 or within these (scripts/mallocbench/mbcsv.py NUM_MIN,
 * NUM_MAX: what every reader of the CSV accepts). */
#define METRIC_MIN 1e-100
#define METRIC_MAX 1e100

/* The figure printed by the command: the last line of out[0..outlen) that
 * matches the extended regular expression re.  The output is read by its
 * length (a NUL byte does not end it); a line is read as a terminal shows
 * it last: the text after its last \r (a progress bar's rewrite; a CRLF's
 * \r is no rewrite), its NUL bytes dropped.  With a group, the group's text less
 * ASCII spaces at its ends must be one number by the strict grammar
 * [-+]?(digits[.digits]|.digits)([eE][-+]?digits)? (no separators, hex,
 * Unicode minus, unit, inf or nan); without a group, the first number on the
 * line from where the match starts (a sign that joins no word; a unit may
 * follow, "2ms"), which must be whole (not the start of 1,234, 1.5.3 or
 * 0x10).  Either way its magnitude is 0 or within METRIC_MIN..METRIC_MAX.
 * cut_start / cut_end: out is a window of a longer output, cut before its
 * first line / after its last.  text (may be NULL): what was read, for the
 * message.  0 with *value, or -ENOENT (no match, no number), -EINVAL (bad
 * re), -EDOM (not one whole number), -ERANGE (inf, nan, or out of the
 * range), -EMSGSIZE (the matching line touches a cut edge, so its figure
 * may have lost digits), -ENOMEM. */
int launch_metric(const char *re, const char *out, size_t outlen, bool cut_start, bool cut_end, double *value,
                  char *text, size_t textlen);

/* What is kept of a command's output: its first cap-1 bytes in head and
 * its last cap-1 in tail (both NUL-terminated, cap bytes each), and how
 * many bytes came in all.  Zero it, point head and tail at the caller's
 * buffers, set cap; then add each read. */
typedef struct {
    char *head, *tail;
    size_t cap, head_len, tail_len;
    unsigned long long total;
} launch_window_t;
void launch_window_add(launch_window_t *w, const char *buf, size_t n);

/* launch_metric over a window, for the figure printed last: over the whole
 * output where head and tail hold all of it; else over the tail (its first
 * line cut), and where the tail holds no figure, -ENODATA if the head holds
 * one (bytes between them were not kept, so the last figure is unknown), else
 * -ENOENT.  Returns as launch_metric. */
int launch_window_metric(const launch_window_t *w, const char *re, double *value, char *text, size_t textlen);

/* What one group of env(1)'s arguments (GNU coreutils' options) does to the
 * environment of the program env runs: the one reading of env's words, for
 * exec's refusal and diagnose's Verify line. */
typedef enum {
    LAUNCH_ENV_SET,     /* NAME=VALUE */
    LAUNCH_ENV_UNSET,   /* -u NAME, -uNAME, --unset=NAME */
    LAUNCH_ENV_CLEAR,   /* -i, --ignore-environment, -, or -i among short options */
    LAUNCH_ENV_SPLIT,   /* -S STRING: more words from one */
    LAUNCH_ENV_OTHER,   /* an option of env's own: -C DIR, -0, -v, --*-signal */
    LAUNCH_ENV_END,     /* "--": the program follows */
    LAUNCH_ENV_PROGRAM, /* the program: env's arguments end before it (words 0) */
} launch_env_kind_t;
typedef struct {
    launch_env_kind_t kind;
    size_t words;       /* argv words it takes: 0 (PROGRAM), 1 or 2 */
    char name[128];     /* SET, UNSET: the variable's name */
    const char *value;  /* SET: its value; SPLIT: the string (pointers into argv) */
    bool allocator;     /* touches a variable an allocator or the probe reads (CLEAR: always) */
} launch_env_word_t;
/* Is this program env(1) (by its base name)? */
bool launch_is_env(const char *argv0);
/* The group of env's arguments at argv[i] (not NULL). */
void launch_env_word(char *const *argv, size_t i, launch_env_word_t *w);

/* The checks of an exec workload before any run: cmd splits, its program
 * can take a preloaded allocator, metric (if not "") is an extended regular
 * expression.  0, or -EINVAL with one line in err. */
int launch_check_command(const char *cmd, const char *metric, char *err, size_t errlen);

/* re ("" passes) is an extended regular expression: 0, or -EINVAL with
 * "<what> '<re>' is not an extended regular expression" in err. */
int launch_check_regex(const char *what, const char *re, char *err, size_t errlen);

/* The last non-empty line of a child's output kept in buf (trailing newlines
 * cut in place), for messages: a pointer into buf. */
const char *launch_last_line(char *buf);

#endif
