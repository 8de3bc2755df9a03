/* resolve.h - from `run`'s command line (and the matrix it names) to what one
 * invocation runs: the spec read through the option table, then its
 * workloads (sweeps expanded), allocator configurations and events checked
 * against the registries, all before anything runs.  Errors are printed in
 * one line that names the matrix line where there is one. */
#ifndef MB_RESOLVE_H
#define MB_RESOLVE_H
#include "options.h"
#include "types.h"
#include "spec.h"
#include "workload.h"

#include <stddef.h>
#include <stdint.h>

/* The plan: everything one invocation works with, resolved from the spec,
 * and read-only once resolve_spec returns (what changes during the run is
 * in schedule.h's run_state_t). */
typedef struct {
    size_t nw, ncfg, ncells;
    wl_args_t wl[SPEC_MAX_WORKLOADS];
    run_config_t cfg[SPEC_MAX_CONFIGS];
    run_config_t system;          /* the system allocator: a workload's limit runs under it */
    const char *extra[SPEC_MAX_EVENTS];
    size_t nextra;
    char evbuf[SPEC_TEXT];
} resolved_t;

/* The spec and the command-line-only options of `run`'s arguments (after
 * "run"): -1 to go on, else the exit code (0 after --help). */
int resolve_args(int argc, char **argv, run_spec_t *sp, run_cli_t *cli);
/* Workloads, allocators, tunables and events of a spec, checked against
 * the registries: 0, or 2 after the error. */
int resolve_spec(const run_spec_t *sp, resolved_t *r);
/* Hash of the plan's cells in order (workloads with every parameter, then
 * configuration labels). */
uint64_t resolve_cells_hash(const resolved_t *r);
/* The plan's identity ("%016llx"): its cells in order and its seed (not the
 * number of blocks, so a resumed or adaptive run keeps it; not the shard). */
void resolve_plan_id(const resolved_t *r, uint64_t seed, char *out, size_t len);

#endif
