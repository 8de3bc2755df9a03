/* cmd_calibrate.c - `mallocbench calibrate [SIZE]`: the machine's own limits
 * (memcpy bandwidth, one minor page fault, one re-fault whole) from the calibrate workload run
 * under glibc (machine/calibrate.c), medians of five samples. */
#include "calibrate.h"
#include "cli.h"
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    if (isfinite(c.steal))
        printf("measured at load %.2f (1-minute average), the host stealing %.1f%% of the CPUs' time\n", c.load1,
               100.0 * c.steal);
    else
        printf("measured at load %.2f (1-minute average); steal unknown (/proc/stat unreadable)\n", c.load1);
    return 0;
}
