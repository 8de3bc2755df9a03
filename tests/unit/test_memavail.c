/* test_memavail.c - the memory a run can take (common/memavail.c): the
 * /proc/meminfo parser on valid, missing, malformed and trailing-junk
 * figures; the peak check passing what fits and refusing, in one line
 * naming both figures, what cannot. */
#include "../check.h"
#include "memavail.h"

#include <errno.h>

int main(void)
{
    const char *mi = "MemTotal:       32768000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
    uint64_t v = 0;
    CHECK_INT(mem_parse_meminfo(mi, "MemAvailable", &v), 0);
    CHECK_U64(v, 2048 * 1024);
    CHECK_INT(mem_parse_meminfo(mi, "MemTotal", &v), 0);
    CHECK_U64(v, 32768000ull * 1024);
    CHECK_INT(mem_parse_meminfo(mi, "Mem", &v), -ENOENT);
    CHECK_INT(mem_parse_meminfo(mi, "SwapFree", &v), -ENOENT);
    CHECK_INT(mem_parse_meminfo("MemAvailable: x kB\n", "MemAvailable", &v), -EINVAL);
    CHECK_INT(mem_parse_meminfo("MemAvailable: 12 MB\n", "MemAvailable", &v), -EINVAL);
    CHECK_INT(mem_parse_meminfo("MemAvailable: 12\n", "MemAvailable", &v), -EINVAL);
    CHECK_INT(mem_parse_meminfo("MemAvailable: 99999999999999999999 kB\n", "MemAvailable", &v),
              -EINVAL);
    CHECK_INT(mem_parse_meminfo("", "MemAvailable", &v), -ENOENT);

    const char *what = NULL;
    if (mem_available(&v, &what))
        SKIP("no figure of the memory available here");
    CHECK(what != NULL && v > 0);
    char msg[256] = "";
    CHECK_INT(mem_check_peak(0, msg, sizeof msg), 0);
    CHECK_INT(mem_check_peak(UINT64_MAX, msg, sizeof msg), -ENOMEM);
    CHECK(strstr(msg, "18446744073709551615") && strstr(msg, "memory available") &&
          strstr(msg, what) && !strchr(msg, '\n'));
    CHECK_DONE();
}
