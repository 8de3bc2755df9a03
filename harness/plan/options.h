/* options.h - the options of `mallocbench run`, in one table (options.c):
 * each option's flag, short flag, matrix [run] key, type, range, default,
 * help line and the field it is stored in.  The getopt_long table, the
 * matrix [run] keys and `run --help` are made from it, and one validation
 * function per type checks a value whichever way it came, so a flag and
 * its key cannot disagree.  Pure: an error comes back as one line of text
 * naming its source ("--adaptive: ..." or "adaptive: ..."). */
#ifndef MB_OPTIONS_H
#define MB_OPTIONS_H
#include "types.h"
#include "spec.h"

#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Options of `run` that are not part of the spec (command line only). */
typedef struct {
    bool print_only, quiet, resume, force, help;
    bool keep_going;                         /* --keep-going: exit 0 when a configuration has no ok sample */
    bool profile;                            /* --profile: flame graphs after the run */
    bool require_quiet;                      /* --require-quiet: refuse a busy machine */
    unsigned shard_k, shard_n;
    char sidecars[PATH_MAX];
    char worker[PATH_MAX], probe[PATH_MAX];  /* --worker, --probe; "" = found beside the program */
    bool w_given, t_given;                   /* -w and -t replace the matrix's lists on first use */
    /* hyperfine's hooks, run by the schedule through /bin/sh -c outside every sample's
     * counters, without the probe or the allocator's environment; "" = none */
    char prepare[SPEC_TEXT];                 /* --prepare: before each sample */
    char conclude[SPEC_TEXT];                /* --conclude: after each sample */
    char cleanup[SPEC_TEXT];                 /* --cleanup: once per configuration, after its last */
    run_opts_t o;
} run_cli_t;

/* Room for a getopt_long table of every option (and its terminator). */
#define OPT_GETOPT_MAX 48

/* Every option's default into sp and cli (cli may be NULL). */
void opt_defaults(run_spec_t *sp, run_cli_t *cli);
/* The getopt_long tables: longopts (OPT_GETOPT_MAX entries) and the short
 * option string (it starts with ':', so a missing value reads ':'). */
void opt_getopt_tables(struct option *longopts, char *shortopts, size_t len);
/* Is getopt's answer c the matrix option (-m, read before the others)? */
bool opt_is_matrix(int c);
/* Apply getopt's answer c with its argument: 0, or -EINVAL with
 * "--flag: reason" in err. */
int opt_set_arg(int c, const char *arg, run_spec_t *sp, run_cli_t *cli, char *err, size_t errlen);
/* Apply the [run] key of a matrix at line: 0, -EINVAL with "key: reason"
 * in err, or -ENOENT for an unknown key (err lists the valid ones). */
int opt_set_key(run_spec_t *sp, const char *key, const char *value, unsigned line, char *err, size_t errlen);
/* `run --help`, made from the table. */
void opt_usage(FILE *out);
/* A CPU list ("1", "0-1", "0,2-3") into set: 0 or -EINVAL. */
int opt_parse_cpus(const char *s, cpu_set_t *set);

#endif
