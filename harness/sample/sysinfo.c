/* sysinfo.c - facts about the machine, read from /proc and /sys, for the
 * sidecar that travels with every CSV. */
#include "sysinfo.h"
#include "text.h"

#include <gnu/libc-version.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

void sysinfo_json_string(FILE *out, const char *s)
{
    if (!s)
        fputs("null", out);
    else
        text_json_write(out, s);
}

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

/* "always [madvise] never" -> "madvise" */
static char *bracketed(char *s)
{
    char *l = s ? strchr(s, '[') : NULL, *r = l ? strchr(l, ']') : NULL;
    if (!l || !r)
        return s;
    *r = '\0';
    return l + 1;
}

static void member(FILE *out, const char *key, const char *val, int last)
{
    fprintf(out, "    \"%s\": ", key);
    sysinfo_json_string(out, val);
    fputs(last ? "\n" : ",\n", out);
}

void sysinfo_hostname(char *buf, size_t len)
{
    if (gethostname(buf, len) != 0)
        snprintf(buf, len, "unknown");
    buf[len - 1] = '\0';
}

void sysinfo_write_machine(FILE *out)
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
    member(out, "thp_enabled", bracketed(read_line("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf)), 0);
    member(out, "thp_defrag", bracketed(read_line("/sys/kernel/mm/transparent_hugepage/defrag", buf, sizeof buf)), 0);
    member(out, "glibc_version", gnu_get_libc_version(), 0);
    member(out, "perf_event_paranoid", read_line("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf), 0);
    member(out, "cpufreq_governor", read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, sizeof buf), 1);
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
