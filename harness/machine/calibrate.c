/* calibrate.c - the machine's own costs (contract: calibrate.h): the calibrate workload run
 * under glibc through sample_run, and the per-boot cache of its figures that every run's
 * sidecar reads (a huge fault's cost NaN, with the reason, where the kernel gave no huge page). */
#include "calibrate.h"
#include "disturb.h"
#include "error.h"
#include "judge.h"
#include "outfile.h"
#include "sample.h"
#include "sysinfo.h"
#include "tools.h"
#include "tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double extra_value(const char *extra, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = extra; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL)
        if (!strncmp(p, key, n) && p[n] == '=')
            return strtod(p + n + 1, NULL);
    return NAN;
}

/* Ascending, NaN last (a sample with no huge fault sorts after those with one). */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

void calibrate_huge_why(const char *enabled, const char *defrag, double huge_faults, double fallbacks, bool off,
                        double unknown, char *why, size_t len)
{
    if (huge_faults > 0)
        snprintf(why, len, "%s", "");
    else if (!enabled[0])
        snprintf(why, len, "no /sys/kernel/mm/transparent_hugepage: this kernel gives no transparent huge pages");
    else if (!strcmp(enabled, "never"))
        snprintf(why, len, "transparent huge pages are off (enabled=never): the kernel gives no huge page");
    else if (off)
        snprintf(why, len, "transparent huge pages are disabled for the calibrating process (PR_SET_THP_DISABLE)");
    else if (fallbacks > 0)
        snprintf(why, len, "every fault of the advised range fell back to 4 KiB pages (%.0f; defrag=%s): "
                 "no free 2 MiB block", fallbacks, defrag[0] ? defrag : "unknown");
    else if (unknown > 0)
        snprintf(why, len, "no fault could be told huge (/proc/self/smaps and /proc/vmstat unreadable)");
    else
        snprintf(why, len, "no huge-page fault was measured (huge_pages=0, or its mappings failed)");
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
    static const char *const keys[CALIB_NFIG] = {NULL, "fault_ns", "refault_ns", "refault_sys_ns", "huge_fault_ns"};
    int rc = 0;
    disturb_stat_t st0, st1;
    bool times = disturb_stat(&st0) == 0;
    c->load1 = sysinfo_load1();
    tree_thp_word("enabled", c->thp_enabled, sizeof c->thp_enabled);
    tree_thp_word("defrag", c->thp_defrag, sizeof c->thp_defrag);
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
        c->huge_n += isfinite(c->v[CALIB_HUGE][c->n]);
        c->huge_faults += extra_value(s->res.extra, "huge_faults");
        c->huge_fallbacks += extra_value(s->res.extra, "huge_fallbacks");
        c->huge_unknown += extra_value(s->res.extra, "huge_unknown");
        c->huge_off |= extra_value(s->res.extra, "huge_off") > 0;
        c->n++;
    }
    times = times && disturb_stat(&st1) == 0 && st1.total > st0.total;
    c->steal = times ? (double)(st1.steal - st0.steal) / (double)(st1.total - st0.total) : NAN;
    sample_free(s);
    free(glibc);
    for (int k = 0; k < CALIB_NFIG; k++)
        qsort(c->v[k], (size_t)c->n, sizeof c->v[k][0], cmp_double);
    return rc;
}

/* ---- the machine's costs, cached per boot, for every run's sidecar ---- */

#define CACHE_MAX_AGE_S (24 * 3600)
#define CACHE_MAX_LOAD_DIFF 0.5

static bool cache_dir(char *dir, size_t len)
{
    const char *e = getenv("MB_CALIBRATION_CACHE"), *x = getenv("XDG_RUNTIME_DIR"), *h = getenv("HOME");
    if (e && *e)
        return (size_t)snprintf(dir, len, "%s", e) < len;
    if (x && *x)
        return (size_t)snprintf(dir, len, "%s/mallocbench", x) < len;
    if (geteuid() == 0)
        return (size_t)snprintf(dir, len, "/run/mallocbench") < len;
    return h && *h && (size_t)snprintf(dir, len, "%s/.cache/mallocbench", h) < len;
}

/* The cache's figures: the sidecar's list (sysinfo.h), by offset. */
static const struct {
    const char *key;
    size_t off;
} cache_fields[] = {
#define X(key, member, fmtspec) {key, offsetof(machine_calib_t, member)},
    MACHINE_CALIB_FIGURES(X)
#undef X
};
#define NCACHE_FIELDS (sizeof cache_fields / sizeof cache_fields[0])

/* The cache's folder opened, when it is safe to trust: a folder (a path through links is
 * fine) owned by us and writable by nobody else, so that nobody else can plant a file or a
 * link in it.  An fd, or -1 (then the cache is neither read nor written). */
static int cache_dir_open(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* The huge fault's figures: counts whole and not negative; its cost NaN exactly when no fault
 * was shown huge (the kernel gave none), else more than nothing and less than absurd. */
static bool huge_plausible(const machine_calib_t *m)
{
    bool counts = isfinite(m->huge_faults) && m->huge_faults >= 0 && m->huge_faults == floor(m->huge_faults) &&
                  isfinite(m->huge_fallbacks) && m->huge_fallbacks >= 0 && m->huge_fallbacks <= 1e9 &&
                  m->huge_faults <= 1e9;
    if (!counts)
        return false;
    return m->huge_faults == 0 ? isnan(m->huge_fault_ns)
                               : isfinite(m->huge_fault_ns) && m->huge_fault_ns > 0 && m->huge_fault_ns <= 1e9;
}

/* Are the figures what a calibration on this machine can measure?  Finite; a fault and a
 * copy cost more than nothing and less than absurd; the re-fault figures are differences
 * of two measurements (they may be 0 or just below), bounded; the load an average; the steal
 * a share, or NaN where /proc/stat was unreadable (as measured). */
static bool cache_plausible(const machine_calib_t *m)
{
    return isfinite(m->fault_ns) && m->fault_ns > 0 && m->fault_ns <= 1e8 && isfinite(m->memcpy_bps) &&
           m->memcpy_bps > 1e6 && m->memcpy_bps <= 1e13 && isfinite(m->refault_ns) && fabs(m->refault_ns) <= 1e8 &&
           isfinite(m->refault_sys_ns) && fabs(m->refault_sys_ns) <= 1e8 && isfinite(m->load1) && m->load1 >= 0 &&
           m->load1 <= 1e5 && (isnan(m->steal) || (m->steal >= 0 && m->steal <= 1)) && huge_plausible(m);
}

/* The cache file NAME in the folder dfd, read only when it is a regular file (not a link:
 * O_NOFOLLOW) owned by us and writable by nobody else, its figures plausible and of this
 * boot, every figure and both THP words there (a file from before a figure was added is
 * remeasured).  false (the figures remeasured) for anything else, never a crash. */
static bool cache_read(int dfd, const char *name, const char *boot, machine_calib_t *m)
{
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return false;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) ||
        st.st_size > 4096) {
        close(fd);
        return false;
    }
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return false;
    }
    char line[256], b[64] = "";
    unsigned got = 0, all = (1u << NCACHE_FIELDS) - 1, words = 0;
    bool when = false, bad = false;
    while (fgets(line, sizeof line, f)) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq++ = '\0';
        eq[strcspn(eq, "\n")] = '\0';
        char *end = NULL;
        if (!strcmp(line, "boot_id")) {
            snprintf(b, sizeof b, "%s", eq);
        } else if (!strcmp(line, "measured_at")) {
            errno = 0;
            m->measured_at = strtoll(eq, &end, 10), when = true;
            bad |= errno != 0 || end == eq || *end;
        } else if (!strcmp(line, "thp_enabled") || !strcmp(line, "thp_defrag")) {
            bool en = line[4] == 'e';
            bad |= strlen(eq) >= sizeof m->thp_enabled || eq[strspn(eq, "abcdefghijklmnopqrstuvwxyz_+-")];
            snprintf(en ? m->thp_enabled : m->thp_defrag, sizeof m->thp_enabled, "%s", eq);
            words |= en ? 1u : 2u;
        }
        for (size_t i = 0; i < NCACHE_FIELDS; i++)
            if (!strcmp(line, cache_fields[i].key)) {
                *(double *)((char *)m + cache_fields[i].off) = strtod(eq, &end);
                bad |= end == eq || *end;
                got |= 1u << i;
            }
    }
    fclose(f);
    return !bad && got == all && words == 3 && when && !strcmp(b, boot) && cache_plausible(m);
}

/* Written whole through outfile (a fresh O_EXCL temporary beside it, renamed over NAME: a
 * link planted there is replaced, never followed), only into a folder cache_dir_open trusts. */
static void cache_write(const char *dir, const char *path, const char *boot, const machine_calib_t *m)
{
    char tmp[PATH_MAX + 16];
    snprintf(tmp, sizeof tmp, "%s", dir); /* its parents too (~/.cache may not exist yet) */
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            (void)mkdir(tmp, 0755);
            *p = '/';
        }
    if (mkdir(dir, 0755) && errno != EEXIST)
        return;
    int dfd = cache_dir_open(dir);
    if (dfd < 0)
        return; /* not ours alone: another user could swap what we write */
    close(dfd);
    int fd = outfile_temp(path, tmp, sizeof tmp);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    fchmod(fd, 0644);
    fprintf(f, "boot_id=%s\nmeasured_at=%lld\nthp_enabled=%s\nthp_defrag=%s\n", boot, m->measured_at,
            m->thp_enabled, m->thp_defrag);
    for (size_t i = 0; i < NCACHE_FIELDS; i++)
        fprintf(f, "%s=%.9g\n", cache_fields[i].key, *(const double *)((const char *)m + cache_fields[i].off));
    if (fflush(f) || outfile_place(fileno(f), tmp, path, true))
        unlink(tmp);
    fclose(f);
}

void calibrate_machine(machine_calib_t *m)
{
    memset(m, 0, sizeof *m);
    char boot[64], dir[PATH_MAX - 64], path[PATH_MAX];
    sysinfo_boot_id(boot, sizeof boot);
    double load = sysinfo_load1();
    char name[128], enabled[16], defrag[16]; /* a THP mode changed since: its huge figure is stale */
    tree_thp_word("enabled", enabled, sizeof enabled);
    tree_thp_word("defrag", defrag, sizeof defrag);
    bool cachable = boot[0] && strspn(boot, "0123456789abcdef-") == strlen(boot) && cache_dir(dir, sizeof dir) &&
                    (size_t)snprintf(name, sizeof name, "calibration-%s.txt", boot) < sizeof name &&
                    (size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path;
    long long now = (long long)time(NULL);
    int dfd = cachable ? cache_dir_open(dir) : -1;
    bool hit = dfd >= 0 && cache_read(dfd, name, boot, m) && now - m->measured_at >= 0 &&
               now - m->measured_at < CACHE_MAX_AGE_S && !(fabs(load - m->load1) > CACHE_MAX_LOAD_DIFF) &&
               !strcmp(enabled, m->thp_enabled) && !strcmp(defrag, m->thp_defrag);
    if (dfd >= 0)
        close(dfd);
    if (hit) {
        m->have = m->cached = true;
        calibrate_huge_why(m->thp_enabled, m->thp_defrag, m->huge_faults, m->huge_fallbacks, false, 0, m->huge_why,
                           sizeof m->huge_why);
        return;
    }
    memset(m, 0, sizeof *m);
    calib_t c;
    if (calibrate_measure("4M", "4", 3, 60, false, &c) || c.n < 1) {
        snprintf(m->why, sizeof m->why, "the calibrate workload did not run (mallocbench calibrate says why)");
        return;
    }
    m->have = true;
    m->fault_ns = c.v[CALIB_FAULT][c.n / 2];
    m->refault_ns = c.v[CALIB_REFAULT][c.n / 2];
    m->refault_sys_ns = c.v[CALIB_REFAULT_SYS][c.n / 2];
    m->memcpy_bps = c.v[CALIB_BW][c.n / 2];
    m->load1 = c.load1;
    m->steal = c.steal;
    m->huge_fault_ns = c.huge_n ? c.v[CALIB_HUGE][c.huge_n / 2] : NAN;
    m->huge_faults = c.huge_faults;
    m->huge_fallbacks = c.huge_fallbacks;
    snprintf(m->thp_enabled, sizeof m->thp_enabled, "%s", c.thp_enabled);
    snprintf(m->thp_defrag, sizeof m->thp_defrag, "%s", c.thp_defrag);
    calibrate_huge_why(c.thp_enabled, c.thp_defrag, c.huge_faults, c.huge_fallbacks, c.huge_off, c.huge_unknown,
                       m->huge_why, sizeof m->huge_why);
    m->measured_at = now;
    /* THP refused to this process alone, or unreadable counts: not the machine's figure */
    if (cachable && !c.huge_off && !c.huge_unknown)
        cache_write(dir, path, boot, m);
}

