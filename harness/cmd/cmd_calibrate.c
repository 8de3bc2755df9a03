/* cmd_calibrate.c - `mallocbench calibrate [SIZE]`: the machine's own limits
 * (memcpy bandwidth, one minor page fault, one re-fault whole, one 2 MiB huge-page fault beside
 * 512 minor ones) from the calibrate workload run
 * under glibc (machine/calibrate.c), medians of five samples. */
#include "calibrate.h"
#include "cli.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The huge fault's line: its cost beside 512 minor faults, or why there is none (one line). */
static void print_huge(const calib_t *c)
{
    double small = 512 * c->v[CALIB_FAULT][c->n / 2];
    if (!c->huge_n) {
        char why[160];
        calibrate_huge_why(c->thp_enabled, c->thp_defrag, c->huge_faults, c->huge_fallbacks, c->huge_off,
                           c->huge_unknown, why, sizeof why);
        printf("huge page fault   not measured: %s\n", why);
        return;
    }
    const double *h = c->v[CALIB_HUGE];
    int n = c->huge_n;
    printf("huge page fault   %.0f ns  (median of %d; first write to a fresh 2 MiB page of an aligned MADV_HUGEPAGE "
           "range, %.0f faults each shown huge by its AnonHugePages, %.0f fell back, defrag=%s; range %.0f..%.0f)\n",
           h[n / 2], n, c->huge_faults, c->huge_fallbacks, c->thp_defrag[0] ? c->thp_defrag : "unknown", h[0],
           h[n - 1]);
    printf("so one huge fault costs %.3gx 512 minor faults (%.0f ns): what 2 MiB costs faulted huge against 4 KiB "
           "at a time\n", h[n / 2] / small, small);
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: mallocbench calibrate [SIZE]\n"
               "the machine's limits with no allocator in the way (workload `calibrate`, glibc,\n"
               "5 samples, medians): memcpy bandwidth into a pre-faulted buffer of SIZE (64M),\n"
               "the cost of one minor page fault (fresh mapping, one write per page), and of one\n"
               "re-fault whole (a buffer written after MADV_DONTNEED, less the same buffer written resident),\n"
               "and of one 2 MiB huge-page fault (a write per 2 MiB of an aligned MADV_HUGEPAGE range, counted\n"
               "only where its AnonHugePages shows the page huge) beside 512 minor faults; where the kernel\n"
               "gave no huge page (THP never or absent, every fault fell back) it says why instead.\n");
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
    print_huge(&c);
    if (isfinite(c.steal))
        printf("measured at load %.2f (1-minute average), the host stealing %.1f%% of the CPUs' time\n", c.load1,
               100.0 * c.steal);
    else
        printf("measured at load %.2f (1-minute average); steal unknown (/proc/stat unreadable)\n", c.load1);
    return 0;
}
