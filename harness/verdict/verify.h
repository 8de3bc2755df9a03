/* verify.h - proof that the allocator asked for served malloc and that every
 * requested tunable took effect, from the probe's report inside the child
 * (or, for a family read back by the loader, the dynamic loader's own
 * reading of the settings).
 * A failed proof is an error naming the cause, never a number. */
#ifndef MB_VERIFY_H
#define MB_VERIFY_H
#include "types.h"

/* Check one sample's probe report against its configuration (called by
 * judge.c, after judge_status).  On failure sets s->status = RUN_ERROR
 * with the reason and returns -1.  effective
 * gets every read-back tunable as "name=value;...". */
int verify_sample(const run_config_t *c, run_sample_t *s, char *effective, size_t efflen);

/* ALLOC_CHECK_LOADER families: each requested value is the one in force
 * in the loader's listing of its tunables (sample_loader_listing): 0, or
 * -EINVAL with one line in err. */
int verify_loader_tunables(const run_config_t *c, const char *listing, char *err, size_t errlen);

#endif
