/* sidecar.h - FILE.meta.json beside a run's CSV: schema version, run id,
 * start time, program version and commit, the command, how counters were
 * read, the machine, every configuration (library, version, environment)
 * and how each workload's limit was measured.  Written to a temporary name
 * and renamed; a resumed run keeps the first run's sidecar inside its own
 * ("previous"). */
#ifndef MB_SIDECAR_H
#define MB_SIDECAR_H
#include "run.h"
#include "workload.h"

#include <stdbool.h>
#include <stddef.h>

/* limits: NULL when not measured (--no-limit).  0 or -errno. */
int sidecar_write(const char *path, bool keep_previous, const char *run_id, int argc, char **argv,
                  const run_config_t *cfg, size_t ncfg, char versions[][128],
                  const run_opts_t *o, const wl_args_t *wl, const double *limits, size_t nw);

#endif
