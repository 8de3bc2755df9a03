/* judge.h - the one place that judges a sample: from the configuration and
 * what sample_run observed (how the child ended, its output, the probe's
 * report) to a status and a message, and to the proof that the allocator
 * and every setting asked for took effect (verify.c).  sample.c observes,
 * judge.c decides, output.c writes. */
#ifndef MB_JUDGE_H
#define MB_JUDGE_H
#include "types.h"

#include <stddef.h>

/* The status and message of a sample from how its child ended: time-out,
 * interrupt, signal, exit code, a missing result, a descendant under
 * another allocator, the allocator's own complaint about a setting.  Sets
 * s->status, s->message and s->untrusted; nothing else. */
void judge_status(const run_opts_t *o, const run_config_t *c, run_sample_t *s);

/* A measured sample: judge_status, then the probe's proof (verify_sample),
 * which may turn an ok into an error.  effective gets the read-back
 * tunables ("name=value;...").  0 when the sample is ok. */
int judge_sample(const run_opts_t *o, const run_config_t *c, run_sample_t *s, char *effective,
                 size_t efflen);

/* Before any run: the configuration's own library can be read.  0, or
 * -ENOENT with one line in err. */
int judge_library(const run_config_t *c, char *err, size_t errlen);

/* The pre-flight sample (the worker once under the configuration, a no-op
 * workload, no counters: schedule_preflight runs it) judged: ok and proven.
 * version gets the allocator's version.  -EINVAL with one line in err when
 * it fails. */
int judge_preflight(const run_opts_t *o, const run_config_t *c, run_sample_t *s, char *version, size_t vlen,
                    char *err, size_t errlen);

#endif
