/* memavail.c - the memory a run can still take (see memavail.h): the lowest
 * of MemAvailable, the RLIMIT_AS soft limit and the cgroup v2 limit left. */
#include "memavail.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int mem_parse_meminfo(const char *text, const char *key, uint64_t *bytes)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, key, kl) || p[kl] != ':')
            continue;
        char *end;
        errno = 0;
        unsigned long long kb = strtoull(p + kl + 1, &end, 10);
        while (*end == ' ')
            end++;
        if (errno || end == p + kl + 1 || strncmp(end, "kB", 2) || kb > UINT64_MAX / 1024)
            return -EINVAL;
        *bytes = (uint64_t)kb * 1024;
        return 0;
    }
    return -ENOENT;
}

static int read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

/* The cgroup v2 limit left to this process (memory.max - memory.current): 0, -ENOENT. */
static int cgroup_left(uint64_t *bytes)
{
    char buf[4096], path[4200], val[64];
    if (read_text("/proc/self/cgroup", buf, sizeof buf) || strncmp(buf, "0::", 3))
        return -ENOENT;
    buf[strcspn(buf, "\n")] = '\0';
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", buf + 3);
    if (read_text(path, val, sizeof val) || !strncmp(val, "max", 3))
        return -ENOENT;
    uint64_t max = strtoull(val, NULL, 10), cur = 0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", buf + 3);
    if (!read_text(path, val, sizeof val))
        cur = strtoull(val, NULL, 10);
    *bytes = cur < max ? max - cur : 0;
    return 0;
}

int mem_available(uint64_t *bytes, const char **what)
{
    char buf[8192];
    uint64_t v;
    int found = 0;
    if (!read_text("/proc/meminfo", buf, sizeof buf) && !mem_parse_meminfo(buf, "MemAvailable", &v))
        *bytes = v, *what = "MemAvailable", found = 1;
    struct rlimit rl;
    if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY &&
        (!found || (uint64_t)rl.rlim_cur < *bytes))
        *bytes = (uint64_t)rl.rlim_cur, *what = "RLIMIT_AS", found = 1;
    if (!cgroup_left(&v) && (!found || v < *bytes))
        *bytes = v, *what = "cgroup memory.max", found = 1;
    return found ? 0 : -ENOENT;
}

int mem_check_peak(uint64_t peak, char *msg, size_t len)
{
    uint64_t avail;
    const char *what;
    if (mem_available(&avail, &what) || peak <= avail)
        return 0;
    snprintf(msg, len, "its peak live bytes, %" PRIu64 " (%.1f GiB), are more than the memory "
             "available, %" PRIu64 " (%.1f GiB, %s)", peak, (double)peak / (1 << 30), avail,
             (double)avail / (1 << 30), what);
    return -ENOMEM;
}
