/* quiet.c - the machine's quiet before a run (contract: quiet.h). */
#include "quiet.h"
#include "disturb.h"
#include "sysinfo.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Every CPU's scaling_governor: one name, "mixed", or "" when none is exposed. */
static void governors(char *out, size_t len)
{
    DIR *d = opendir("/sys/devices/system/cpu");
    out[0] = '\0';
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "cpu", 3) || e->d_name[3] < '0' || e->d_name[3] > '9')
            continue;
        char path[320], g[64] = "";
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%s/cpufreq/scaling_governor", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        if (fgets(g, sizeof g, f))
            g[strcspn(g, "\n")] = '\0';
        fclose(f);
        if (!out[0])
            snprintf(out, len, "%s", g);
        else if (strcmp(out, g))
            snprintf(out, len, "mixed");
    }
    closedir(d);
}

void quiet_check(quiet_t *q)
{
    memset(q, 0, sizeof *q);
    q->load1 = q->steal_pct = -1;
    q->others_runnable = -1;
    q->ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double load = sysinfo_load1();
    q->load1 = isnan(load) ? -1 : load;
    disturb_stat_t s0, s1 = {0, 0, 0, -1};
    bool have = disturb_stat(&s0) == 0;
    int least = have ? s0.running : -1;
    for (int i = 0; have && i < 5; i++) {
        struct timespec ts = {0, 25 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (disturb_stat(&s1) == 0 && s1.running >= 0 && (least < 0 || s1.running < least))
            least = s1.running;
    }
    if (least >= 0)
        q->others_runnable = least > 0 ? least - 1 : 0; /* procs_running counts the harness */
    if (have && s1.total > s0.total)
        q->steal_pct = 100.0 * (double)(s1.steal - s0.steal) / (double)(s1.total - s0.total);
    governors(q->governor, sizeof q->governor);
    size_t n = 0;
#define WHY(...) (n += (size_t)snprintf(q->why + n, n < sizeof q->why ? sizeof q->why - n : 0, __VA_ARGS__))
    if (q->ncpu > 0 && q->load1 >= 0.5 * (double)q->ncpu)
        WHY("%sload %.2f over the last minute on %ld CPUs", n ? ", " : "", q->load1, q->ncpu);
    if (q->others_runnable > 0)
        WHY("%s%d other task%s runnable now", n ? ", " : "", q->others_runnable,
            q->others_runnable == 1 ? "" : "s");
    if (q->steal_pct >= 2.0)
        WHY("%sthe host stole %.1f%% of the CPU time", n ? ", " : "", q->steal_pct);
    if (q->governor[0] && strcmp(q->governor, "performance"))
        WHY("%sCPU frequency governor '%s', not 'performance'", n ? ", " : "", q->governor);
#undef WHY
    q->quiet = n == 0;
}
