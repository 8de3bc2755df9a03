/* rows.h - one CSV row (csv.h) per sample: the run's identity, the
 * configuration, the status, and each figure of the sample (sample.h) in its
 * column: the fixed counters where CNT_FIXED_EVENTS says, the worker's
 * result where WL_RESULT_FIELDS says.  What was not measured stays empty. */
#ifndef MB_ROWS_H
#define MB_ROWS_H
#include "counters.h"
#include "csv.h"
#include "types.h"
#include "workload.h"

#include <stddef.h>
#include <stdint.h>

/* What every row of one invocation shares. */
typedef struct {
    const char *run_id, *host, *shard;
    char matrix_id[24];
    uint64_t seed;
    unsigned attempt;   /* the block's attempt (remeasure.h): 0 first, 1 and 2 measured again */
} row_ctx_t;

/* Clear row and fill it for sample s of workload a under configuration c:
 * version when the probe reported none, effective tunables as verified, cnt
 * the set s was counted with (NULL: none), ts its start, limit the
 * workload's limit throughput (NAN: none), scale the --min-time factor.
 * An untrusted sample gets its identity and status only. */
void row_fill(csv_row_t *row, const row_ctx_t *x, size_t sample, unsigned block, size_t position,
              const wl_args_t *a, const run_config_t *c, const char *version, int rep,
              const run_sample_t *s, const char *effective, const cnt_set_t *cnt, const char *ts,
              double limit, uint64_t scale);

#endif
