/* matrix.h - a run specification, from the command line or from a matrix
 * file that describes a whole experiment (INI, parsed here):
 *
 *   [run]                      repetitions, timeout, sample_interval, events,
 *                              output, seed, warmup_runs, min_time, adaptive, budget,
 *                              max_blocks, pin, allocators, limit (yes|no)
 *   [workload NAME [LABEL]]    one workload: PARAM = VALUE lines, and
 *                              sweep = PARAM=LO..HI to expand it
 *   [tunables ALLOCATOR]       NAME = V1,V2 (a list sweeps; the cross product
 *                              of all lines of all sections is run)
 *
 * Lines are at most MATRIX_LINE_MAX bytes; ';' or '#' starts a comment line
 * and " ;" an end-of-line comment.  A key set twice in one section, the
 * same section twice, a key outside any section and an over-long line are
 * errors.  Every entry keeps its line, so errors found later (an unknown
 * workload parameter, a tunable typo) still name "file:line: reason";
 * the first error is reported and nothing runs then. */
#ifndef MB_MATRIX_H
#define MB_MATRIX_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPEC_MAX_WORKLOADS 64
#define SPEC_MAX_TUNABLES 32
#define SPEC_TEXT 1024
#define MATRIX_LINE_MAX 1024

typedef struct {
    size_t nw;
    char workload[SPEC_MAX_WORKLOADS][SPEC_TEXT];  /* "name:k=v,k=v" */
    char wsweep[SPEC_MAX_WORKLOADS][128];          /* per workload: "size=64K..256M" or "" */
    size_t nt;
    char tunable[SPEC_MAX_TUNABLES][SPEC_TEXT];    /* "alloc:name=v1,v2" */
    char allocators[SPEC_TEXT];                    /* "" = every installed one */
    uint64_t reps;
    char output[PATH_MAX];
    char events[SPEC_TEXT];
    double timeout_s, sample_interval_s;
    char sweep[128];                               /* applies to workloads without their own */
    bool limit;
    unsigned warmup_runs;
    double min_time_s;                             /* --min-time: 0 = run the work as given */
    uint64_t seed;
    bool seed_given;
    double adaptive;                               /* target relative half-width of the CI; 0 = fixed */
    double budget_s;                               /* adaptive: stop adding blocks after this */
    unsigned max_blocks;
    char pin[64];                                  /* CPU list for the children, "" = no pinning */
    char matrix[PATH_MAX];                         /* the file it came from, "" = command line */
    /* matrix lines of each entry (0: from the command line), for messages */
    unsigned wline[SPEC_MAX_WORKLOADS], wsweep_line[SPEC_MAX_WORKLOADS], tline[SPEC_MAX_TUNABLES];
    unsigned allocators_line, events_line, pin_line, sweep_line, output_line;
} run_spec_t;

void spec_defaults(run_spec_t *s);
/* Load a matrix file into s (on top of the defaults).  -EINVAL with
 * "file:line: reason" in err. */
int matrix_load(const char *path, run_spec_t *s, char *err, size_t errlen);
/* The same on the text of a matrix (len bytes, not NUL-terminated; a NUL
 * byte is an error); name is used in messages.  A pure function. */
int matrix_parse(const char *name, const char *text, size_t len, run_spec_t *s, char *err, size_t errlen);

#endif
