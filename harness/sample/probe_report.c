/* probe_report.c - the probe's report of a sample (contract: probe_report.h):
 * the keys it sent from inside the child, the allocator's own start-up
 * lines added to them, and the processes below the one started. */
#include "probe_report.h"

#include <stdio.h>
#include <string.h>

const char *probe_report_get(const run_sample_t *s, const char *key)
{
    for (size_t i = 0; i < s->nprobe; i++)
        if (strcmp(s->probe_key[i], key) == 0)
            return s->probe_val[i];
    return NULL;
}

/* A descendant's line "proc:PID=family|malloc_so|digest|exe": counted, and
 * the first whose allocator or settings are not the root process's kept for
 * the message. */
void probe_report_descendant(run_sample_t *s, const char *pid, const char *val)
{
    const char *fam = probe_report_get(s, "family"), *so = probe_report_get(s, "malloc_so");
    const char *dig = probe_report_get(s, "settings_digest");
    size_t fl = strcspn(val, "|");
    const char *vso = val[fl] ? val + fl + 1 : "";
    size_t sl = strcspn(vso, "|");
    const char *vdig = vso[sl] ? vso + sl + 1 : "";
    size_t dl = strcspn(vdig, "|");
    const char *exe = vdig[dl] ? vdig + dl + 1 : "?";
    s->nproc++;
    if (s->proc_mismatch[0] || !fam || !so)
        return;
    if (strncmp(val, fam, fl) || fam[fl] || strncmp(vso, so, sl) || so[sl])
        snprintf(s->proc_mismatch, sizeof s->proc_mismatch, "process %s (%s) got malloc from %.*s "
                 "(%.*s), not %s", pid, exe, (int)sl, vso, (int)fl, val, so);
    else if (dig && (strncmp(vdig, dig, dl) || dig[dl]))
        snprintf(s->proc_mismatch, sizeof s->proc_mismatch, "process %s (%s) ran %s with other "
                 "settings than the process started (an allocator's variable was set or unset on "
                 "the way: a wrapper script?)", pid, exe, fam);
}

void probe_report_add(run_sample_t *s, const char *key, const char *val)
{
    if (s->nprobe >= RUN_PROBE_MAX)
        return;
    snprintf(s->probe_key[s->nprobe], sizeof s->probe_key[0], "%s", key);
    snprintf(s->probe_val[s->nprobe], sizeof s->probe_val[0], "%s", val);
    s->nprobe++;
}

/* Sets a probe key (replacing one the probe wrote). */
void probe_report_set(run_sample_t *s, const char *key, const char *val)
{
    size_t i = 0;
    while (i < s->nprobe && strcmp(s->probe_key[i], key) != 0)
        i++;
    if (i == RUN_PROBE_MAX)
        return;
    snprintf(s->probe_key[i], sizeof s->probe_key[0], "%s", key);
    snprintf(s->probe_val[i], sizeof s->probe_val[0], "%s", val);
    if (i == s->nprobe)
        s->nprobe++;
}
