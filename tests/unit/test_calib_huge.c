/* test_calib_huge.c - calibrate_huge_why (harness/machine/calibrate.c): the one line that
 * says why a calibration has no huge fault's cost, for every way the kernel gives none (no
 * THP in the kernel, THP never, THP refused to the process, every fault fell back, counts
 * unreadable), and nothing said where a fault was shown huge, even beside fallbacks. */
#include "../check.h"
#include "calibrate.h"

static char why[160];

static const char *say(const char *enabled, const char *defrag, double huge, double fallbacks, bool off,
                       double unknown)
{
    calibrate_huge_why(enabled, defrag, huge, fallbacks, off, unknown, why, sizeof why);
    return why;
}

int main(void)
{
    /* measured: no reason, whatever else happened beside it */
    CHECK_STR(say("madvise", "madvise", 32, 0, false, 0), "");
    CHECK_STR(say("always", "defer", 8, 24, false, 0), "");
    CHECK_STR(say("madvise", "madvise", 1, 0, false, 5), "");
    /* the kernel's own mode first: it decides before anything the process does */
    CHECK_STR(say("", "", 0, 0, false, 0),
              "no /sys/kernel/mm/transparent_hugepage: this kernel gives no transparent huge pages");
    CHECK_STR(say("", "", 0, 0, true, 0),
              "no /sys/kernel/mm/transparent_hugepage: this kernel gives no transparent huge pages");
    CHECK_STR(say("never", "madvise", 0, 32, false, 0),
              "transparent huge pages are off (enabled=never): the kernel gives no huge page");
    CHECK_STR(say("madvise", "madvise", 0, 0, true, 0),
              "transparent huge pages are disabled for the calibrating process (PR_SET_THP_DISABLE)");
    /* every fault fell back: the count and the defrag mode said */
    CHECK_STR(say("madvise", "never", 0, 96, false, 0),
              "every fault of the advised range fell back to 4 KiB pages (96; defrag=never): no free 2 MiB block");
    CHECK_STR(say("always", "", 0, 3, false, 0),
              "every fault of the advised range fell back to 4 KiB pages (3; defrag=unknown): no free 2 MiB block");
    CHECK_STR(say("madvise", "madvise", 0, 0, false, 32),
              "no fault could be told huge (/proc/self/smaps and /proc/vmstat unreadable)");
    CHECK_STR(say("madvise", "madvise", 0, 0, false, 0),
              "no huge-page fault was measured (huge_pages=0, or its mappings failed)");
    /* a line, never more, and cut to the buffer without overrunning it */
    char small[16];
    calibrate_huge_why("never", "", 0, 0, false, 0, small, sizeof small);
    CHECK_INT(strlen(small), sizeof small - 1);
    CHECK(!strchr(say("madvise", "always", 0, 1e6, false, 0), '\n'));
    CHECK_DONE();
}
