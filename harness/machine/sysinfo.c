/* sysinfo.c - facts about the machine, read from /proc and /sys, for the
 * sidecar that travels with every CSV. */
#include "sysinfo.h"
#include "text.h"
#include "tree.h"

#include <gnu/libc-version.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* First line of a file, trimmed; NULL if unreadable. */
static char *read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char *r = fgets(buf, (int)len, f);
    fclose(f);
    if (r)
        buf[strcspn(buf, "\n")] = '\0';
    return r;
}

/* The value of "key" in a "key : value" file such as /proc/cpuinfo. */
static char *read_keyed(const char *path, const char *key, char *buf, size_t len)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return NULL;
    char line[512];
    char *found = NULL;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && (line[klen] == ' ' || line[klen] == '\t' || line[klen] == ':')) {
            char *v = strchr(line, ':');
            if (!v)
                continue;
            v++;
            while (*v == ' ' || *v == '\t')
                v++;
            v[strcspn(v, "\n")] = '\0';
            snprintf(buf, len, "%s", v);
            found = buf;
            break;
        }
    }
    fclose(f);
    return found;
}

void sysinfo_cpu_model(char *buf, size_t len)
{
    char tmp[512];
    const char *m = read_keyed("/proc/cpuinfo", "model name", tmp, sizeof tmp);
    snprintf(buf, len, "%s", m ? m : "unknown cpu");
}

static void member(FILE *out, const char *key, const char *val, int last)
{
    fprintf(out, "    \"%s\": ", key);
    text_json_write(out, val);
    fputs(last ? "\n" : ",\n", out);
}

void sysinfo_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0)
        snprintf(buf, len, "unknown");
    buf[len - 1] = '\0';
}

void sysinfo_boot_id(char *buf, size_t len)
{
    if (!read_line("/proc/sys/kernel/random/boot_id", buf, len))
        buf[0] = '\0';
}

double sysinfo_load1(void)
{
    char buf[128];
    return read_line("/proc/loadavg", buf, sizeof buf) ? strtod(buf, NULL) : NAN;
}

/* NUMA nodes online (/sys/devices/system/node/online: "0" or "0-1,3"), or -1. */
static int numa_nodes(void)
{
    char buf[256];
    if (!read_line("/sys/devices/system/node/online", buf, sizeof buf))
        return -1;
    int n = 0;
    for (char *p = buf; *p;) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return -1;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        n += (int)(b - a + 1);
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            break;
    }
    return n;
}

/* This process's cgroup memory limit in bytes (v2 memory.max, v1
 * memory.limit_in_bytes; read only), or -1 when there is none or it cannot be read. */
static long long cgroup_memory_limit(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[1024], path[1400], buf[64];
    long long limit = -1;
    while (fgets(line, sizeof line, f) && limit < 0) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *ctrl = c1 + 1, *cg = c2 + 1;
        if (!strcmp(ctrl, ""))  /* v2: 0::/path */
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", cg);
        else if (strstr(ctrl, "memory"))
            snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", cg);
        else
            continue;
        if (!read_line(path, buf, sizeof buf))
            continue;
        char *end;
        unsigned long long v = strtoull(buf, &end, 10);
        /* "max", or v1's "unlimited" (a page-rounded LLONG_MAX) */
        limit = end == buf || v >= (1ULL << 62) ? -2 : (long long)v;
    }
    fclose(f);
    return limit < 0 ? -1 : limit;
}

/* A whole-number member and its comma; null where v < 0 (unknown, or none). */
static void count(FILE *out, const char *key, long long v)
{
    if (v >= 0)
        fprintf(out, "    \"%s\": %lld,\n", key, v);
    else
        fprintf(out, "    \"%s\": null,\n", key);
}

/* One member of the calibration object, and its comma (measured_at comes last). */
static void number(FILE *out, const char *key, double v, const char *fmtspec)
{
    fprintf(out, "      \"%s\": ", key);
    if (isfinite(v))
        fprintf(out, fmtspec, v);
    else
        fputs("null", out);
    fputs(",\n", out);
}

static void write_machine(FILE *out, const machine_calib_t *cal)
{
    char buf[512], host[256];
    struct utsname u;
    uname(&u);
    sysinfo_hostname(host, sizeof host);
    member(out, "host", host, 0);
    member(out, "cpu_model", read_keyed("/proc/cpuinfo", "model name", buf, sizeof buf), 0);
    fprintf(out, "    \"cores_online\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
    char *mem = read_keyed("/proc/meminfo", "MemTotal", buf, sizeof buf); /* "24576000 kB" */
    if (mem)
        fprintf(out, "    \"mem_total_kib\": %lld,\n", strtoll(mem, NULL, 10));
    else
        fputs("    \"mem_total_kib\": null,\n", out);
    member(out, "kernel", u.release, 0);
    member(out, "machine", u.machine, 0);
    member(out, "thp_enabled", tree_thp_word("enabled", buf, sizeof buf) ? buf : NULL, 0);
    member(out, "thp_defrag", tree_thp_word("defrag", buf, sizeof buf) ? buf : NULL, 0);
    member(out, "glibc_version", gnu_get_libc_version(), 0);
    member(out, "perf_event_paranoid", read_line("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf), 0);
    member(out, "cpufreq_governor", read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, sizeof buf), 0);
    char boot[64];
    sysinfo_boot_id(boot, sizeof boot);
    member(out, "boot_id", boot[0] ? boot : NULL, 0);
    int nodes = numa_nodes();
    count(out, "numa_nodes", nodes > 0 ? nodes : -1);
    count(out, "cgroup_memory_limit", cgroup_memory_limit());
    if (!cal || !cal->have) {
        fputs("    \"calibration\": null", out);
        if (cal && cal->why[0]) {
            fputs(",\n    \"calibration_missing\": ", out);
            text_json_write(out, cal->why);
        }
        fputs("\n", out);
        return;
    }
    fputs("    \"calibration\": {\n", out);
#define X(key, member, fmtspec) number(out, key, cal->member, fmtspec);
    MACHINE_CALIB_FIGURES(X)
#undef X
    fputs("      \"huge_defrag\": ", out); /* the THP defrag mode the huge fault was measured under */
    text_json_write(out, cal->thp_defrag[0] ? cal->thp_defrag : NULL);
    if (cal->huge_why[0]) {
        fputs(",\n      \"huge_fault_missing\": ", out);
        text_json_write(out, cal->huge_why);
    }
    fprintf(out, ",\n      \"measured_at\": %lld,\n      \"cached\": %s\n    }\n", cal->measured_at,
            cal->cached ? "true" : "false");
}

char *sysinfo_machine_json(const machine_calib_t *cal)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    write_machine(f, cal);
    if (fclose(f)) {
        free(text);
        return NULL;
    }
    return text;
}

void sysinfo_git_commit(char *buf, size_t len)
{
    buf[0] = '\0';
#ifdef MB_SOURCE_DIR
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "git -C '%s' rev-parse HEAD 2>/dev/null && "
             "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null | head -c1",
             MB_SOURCE_DIR, MB_SOURCE_DIR);
    FILE *p = popen(cmd, "re");
    if (!p)
        return;
    char sha[128] = "", dirty[8] = "";
    if (fgets(sha, sizeof sha, p))
        sha[strcspn(sha, "\n")] = '\0';
    if (fgets(dirty, sizeof dirty, p) == NULL)
        dirty[0] = '\0';
    pclose(p);
    snprintf(buf, len, "%s%s", sha, sha[0] && dirty[0] ? "-dirty" : "");
#endif
}
