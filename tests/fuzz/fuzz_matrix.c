/* fuzz_matrix.c - libFuzzer target: the input is a whole matrix file for
 * matrix_parse (on top of opt_defaults, as `run` does).  Checks: no
 * crash or leak, an error always says why, and on success every count
 * within its array and every string NUL-terminated within its field. */
#include "matrix.h"
#include "options.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static run_spec_t s;

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    opt_defaults(&s, NULL);
    if (matrix_parse("fuzz.ini", (const char *)data, size, &s, err, sizeof err) != 0) {
        if (!err[0] || !TERMINATED(err))
            abort();
        return 0;
    }
    /* repetitions, where the matrix gives it, is at least 1 (without it the run's default
     * plan sizes itself: resolve.c default_plan) */
    if (s.nw > SPEC_MAX_WORKLOADS || s.nt > SPEC_MAX_TUNABLES || (s.reps_given && s.reps < 1) ||
        (!s.reps_given && s.reps != 0))
        abort();
    for (size_t i = 0; i < s.nw; i++)
        if (!TERMINATED(s.workload[i]) || !TERMINATED(s.wsweep[i]) || !s.workload[i][0])
            abort();
    for (size_t i = 0; i < s.nt; i++)
        if (!TERMINATED(s.tunable[i]) || !s.tunable[i][0])
            abort();
    if (!TERMINATED(s.allocators) || !TERMINATED(s.output) || !TERMINATED(s.events) ||
        !TERMINATED(s.sweep) || !TERMINATED(s.pin) || !TERMINATED(s.matrix))
        abort();
    return 0;
}
