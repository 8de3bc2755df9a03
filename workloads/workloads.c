/* workloads.c - the one table of workloads, in the order `list`, the
 * sidecar, plots and reports show them.  Adding a workload: its file
 * (workloads/<name>.c, ending in `const wl_t wl_<name>`, see workload.h)
 * and one X(<name>) line here; meson reads these lines to build it. */
#include "workload.h"

#define WORKLOADS(X)    \
    X(tensor_copy)      \
    X(arena_churn)      \
    X(train_step)       \
    X(idle_release)     \
    X(calibrate)        \
    X(replay)           \
    X(selftest)         \
    X(exec)             \
    X(serve)            \
    /* end of the table */

#define DECLARE(n) extern const wl_t wl_##n;
#define ENTRY(n) &wl_##n,
WORKLOADS(DECLARE)
const wl_t *const wl_table[] = {WORKLOADS(ENTRY)};
const size_t wl_ntable = sizeof wl_table / sizeof *wl_table;
