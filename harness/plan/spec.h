/* spec.h - a run specification: what `mallocbench run` is asked to do, from
 * the command line, a matrix file or both (options.c fills it from either,
 * through one table), and every capacity of a run, defined once here.
 * The spec is checked against the registries when resolved; spec.c only
 * remembers which matrix line an error is about. */
#ifndef MB_SPEC_H
#define MB_SPEC_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPEC_MAX_WORKLOADS 256 /* workloads given (-w, [workload]), and after --sweep expands them */
#define SPEC_MAX_TUNABLES 256  /* tunable lists (-t, [tunables] lines): tune gives every candidate its own */
#define SPEC_MAX_VALUES 32     /* values of one tunable list */
#define SPEC_MAX_CONFIGS 256   /* allocator configurations, after the tunables' cross product */
#define SPEC_MAX_EVENTS 16     /* extra perf events (-e, events) */
#define SPEC_TEXT 1024

/* The default plan (no -r, --adaptive or --resolution) is sequential, as an explicit
 * --resolution is (seqstop.h): each comparison stops at the first look (blocks 8, 12,
 * 18, the cap) where its verdict is settled or its resolution 2% reached, within 10
 * minutes and 30 blocks.  VERDICT_MIN_BLOCKS: the fewest pairs from which the exact
 * signed-rank test at 95% can flag a change (p >= 1/32), --adaptive's fewest blocks. */
#define VERDICT_MIN_BLOCKS 6
#define DEFAULT_RESOLUTION 0.02
#define DEFAULT_BUDGET_S 600.0
#define DEFAULT_MAX_BLOCKS 30

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
    double tree_interval_s;                        /* commands and servers: the tree's PSS; 0 = off */
    char sweep[128];                               /* applies to workloads without their own */
    bool limit;
    unsigned limit_every;                          /* measure the limit in every K-th block */
    unsigned warmup_runs;
    double min_time_s;                             /* --min-time: 0 = run the work as given */
    uint64_t seed;
    bool seed_given;
    double adaptive;                               /* target relative half-width of the CI; 0 = fixed */
    double resolution;                             /* the same, of the paired ratio to the first
                                                    * configuration (--resolution); 0 = off */
    double budget_s;                               /* adaptive: stop adding blocks after this */
    char figure[16];                               /* --figure: the primary figure, "throughput" or
                                                    * "cpu" (CPU per unit of work, lower is better) */
    unsigned max_blocks;
    /* set by the command line or the matrix, not by their defaults: with none of
     * -r, --adaptive, --resolution a run is sized for a verdict (resolve_args) */
    bool reps_given, budget_given, max_blocks_given;
    bool default_plan;                             /* that default plan is in force */
    char pin[64];                                  /* CPU list for the children, "" = no pinning */
    bool pin_threads;                              /* each workload thread on one CPU of its set */
    char matrix[PATH_MAX];                         /* the file it came from, "" = command line */
    /* matrix lines of each entry (0: from the command line), for messages */
    unsigned wline[SPEC_MAX_WORKLOADS], wsweep_line[SPEC_MAX_WORKLOADS], tline[SPEC_MAX_TUNABLES];
    unsigned allocators_line, events_line, pin_line, sweep_line, output_line;
} run_spec_t;

/* Errors about the spec entry at this matrix line (0: the command line)
 * start "file:line: " until the next spec_at (spec.c). */
void spec_at(const run_spec_t *sp, unsigned line);
/* die_usage (error.h) with the entry's place in front; returns 2. */
int die_spec(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
