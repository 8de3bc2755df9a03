/* hist.h - an HDR-style latency histogram in fixed memory: log-linear
 * buckets (HIST_SUB_BITS sub-buckets per power of two), so any recorded
 * value is reported within a relative error of 2^-HIST_SUB_BITS (< 0.8%).
 * Recording is a few integer operations and never allocates; one histogram
 * per thread, merged at the end. */
#ifndef MB_HIST_H
#define MB_HIST_H
#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

typedef struct {
    uint64_t count[HIST_BUCKETS];
    uint64_t total;     /* values recorded */
    uint64_t min, max;  /* exact */
} hist_t;

void hist_init(hist_t *h);
void hist_record(hist_t *h, uint64_t value);
void hist_merge(hist_t *dst, const hist_t *src);
/* The value at percentile p (0 < p <= 100): the smallest recorded bucket
 * value v such that at least p% of values are <= v (highest value in that
 * bucket, clamped to max).  0 when empty. */
uint64_t hist_percentile(const hist_t *h, double p);

#endif
