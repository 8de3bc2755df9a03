/* cmd_calibrate.c - `mallocbench calibrate [SIZE]`: the machine's own limits
 * (memcpy bandwidth, one minor page fault, one re-fault whole) from the calibrate workload run
 * under glibc through sample_run, medians of five samples. */
#include "cli.h"
#include "judge.h"
#include "sample.h"
#include "tools.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double extra_value(const char *extra, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = extra; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
        if (!strncmp(p, key, n) && p[n] == '=')
            return strtod(p + n + 1, NULL);
    return NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int calibrate_measure(const char *size, const char *rounds, int samples, double timeout_s, bool report,
                      calib_t *c)
{
    memset(c, 0, sizeof *c);
    if (samples < 1 || samples > CALIB_SAMPLES_MAX)
        return die_usage("calibrate: %d samples (1 to %d)", samples, CALIB_SAMPLES_MAX);
    run_opts_t o = {.timeout_s = timeout_s, .sample_interval_s = 0.05};
    char worker[PATH_MAX], probe[PATH_MAX], err[512], kv[128];
    if (tools_find(&o, worker, probe, sizeof worker))
        return 2;
    wl_args_t a;
    wl_defaults(wl_find("calibrate"), &a);
    const char *set[2][2] = {{"size", size}, {"rounds", rounds}};
    for (int i = 0; i < 2; i++) {
        snprintf(kv, sizeof kv, "%s=%s", set[i][0], set[i][1] ? set[i][1] : "");
        if (set[i][1] && wl_set(&a, kv, err, sizeof err))
            return die_usage("%s", err);
    }
    c->size = wl_get(&a, "size");
    run_config_t *glibc = calloc(1, sizeof *glibc); /* the system allocator: none in the way */
    run_sample_t *s = calloc(1, sizeof *s);
    if (!glibc || !s) {
        free(glibc);
        free(s);
        return 1;
    }
    glibc->alloc = alloc_system();
    snprintf(glibc->label, sizeof glibc->label, "%s", glibc->alloc->name);
    static const char *const keys[CALIB_NFIG] = {NULL, "fault_ns", "refault_ns", "refault_sys_ns"};
    int rc = 0;
    for (int r = 0; r < samples && !rc; r++) {
        rc = sample_run(&o, glibc, &a, NULL, s);
        if (!rc)
            judge_status(&o, glibc, s);
        if (rc || s->status != RUN_OK) {
            if (report)
                fprintf(stderr, "%s: calibrate: %s\n", prog, s->message);
            rc = 1;
            break;
        }
        c->v[CALIB_BW][c->n] = s->res.throughput;
        for (int k = 1; k < CALIB_NFIG; k++)
            c->v[k][c->n] = extra_value(s->res.extra, keys[k]);
        c->n++;
    }
    sample_free(s);
    free(glibc);
    for (int k = 0; k < CALIB_NFIG; k++)
        qsort(c->v[k], (size_t)c->n, sizeof c->v[k][0], cmp_double);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: mallocbench calibrate [SIZE]\n"
               "the machine's limits with no allocator in the way (workload `calibrate`, glibc,\n"
               "5 samples, medians): memcpy bandwidth into a pre-faulted buffer of SIZE (64M),\n"
               "the cost of one minor page fault (fresh mapping, one write per page), and of one\n"
               "re-fault whole (a buffer written after MADV_DONTNEED, less the same buffer written resident).\n");
        return 0;
    }
    calib_t c;
    int rc = calibrate_measure(argc > 1 ? argv[1] : NULL, NULL, 5, 300, true, &c);
    if (rc)
        return rc;
    int n = c.n;
    const double *bw = c.v[CALIB_BW], *fault = c.v[CALIB_FAULT], *refault = c.v[CALIB_REFAULT];
    char size[32];
    units_format_size(c.size, size, sizeof size);
    printf("memcpy bandwidth  %.2f GB/s  (median of %d; %s pre-faulted buffer; range %.2f..%.2f)\n",
           bw[n / 2] / 1e9, n, size, bw[0] / 1e9, bw[n - 1] / 1e9);
    printf("minor page fault  %.0f ns    (median of %d; first write to a fresh 4 KiB page, zeroing "
           "included; range %.0f..%.0f)\n", fault[n / 2], n, fault[0], fault[n - 1]);
    printf("re-fault, whole   %.0f ns    (median of %d; a page written after MADV_DONTNEED less the same page "
           "written resident; range %.0f..%.0f), %.0f ns of it system time\n", refault[n / 2], n, refault[0],
           refault[n - 1], c.v[CALIB_REFAULT_SYS][n / 2]);
    printf("so re-faulting a buffer costs ~%.1fx copying it once\n",
           fault[n / 2] * 1e-9 / (4096.0 / bw[n / 2]));
    return 0;
}
