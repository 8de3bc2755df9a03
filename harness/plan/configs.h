/* configs.h - the allocator configurations of a run: the -a choices (a
 * family, optionally its library and the user's label) crossed with the -t
 * tunable lists, each value checked against the allocator registry.  Errors
 * are printed in one line that names the spec entry's matrix line. */
#ifndef MB_CONFIGS_H
#define MB_CONFIGS_H
#include "types.h"
#include "spec.h"

#include <stddef.h>

/* cfg (room for SPEC_MAX_CONFIGS) from sp's allocators and tunables:
 * 0, or 2 after the error. */
int configs_resolve(const run_spec_t *sp, run_config_t *cfg, size_t *ncfg);

#endif
