/* probe_report.h - the narrow reader of what the probe (allocators/probe.c)
 * reported from inside a sample's processes: key=value lines such as
 * malloc_so, family, version and tun:<setting> read-backs, and for each
 * descendant that loaded it, its allocator.  sample.c fills a sample's report
 * through the setters (the report's storage is written here only); verify.c, rows.c and the preflight read it through
 * probe_report_get. */
#ifndef MB_PROBE_REPORT_H
#define MB_PROBE_REPORT_H
#include "types.h"

/* Value of a probe key ("malloc_so", "tun:opt.dirty_decay_ms/ssize"), or NULL. */
const char *probe_report_get(const run_sample_t *s, const char *key);
/* Adds a key=value line of the probe's, in the order sent (a repeated key:
 * probe_report_get gives the first); a full report drops it. */
void probe_report_add(run_sample_t *s, const char *key, const char *val);
/* Sets a key (replacing one the probe wrote); a full report drops it. */
void probe_report_set(run_sample_t *s, const char *key, const char *val);
/* A descendant's line "proc:PID=family|malloc_so|exe": counted, and the
 * first whose allocator is not the root process's kept for the message. */
void probe_report_descendant(run_sample_t *s, const char *pid, const char *val);

#endif
