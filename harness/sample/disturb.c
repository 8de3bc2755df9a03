/* disturb.c - readings of what disturbed a sample (contract: disturb.h). */
#include "disturb.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One thread's run-queue delay (schedstat's 2nd field, ns) and
 * nonvoluntary_ctxt_switches: 0, or -1 when it is gone. */
static int task_read(pid_t pid, int tid, uint64_t *delay, uint64_t *nivcsw)
{
    char path[96], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/task/%d/schedstat", (int)pid, tid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    unsigned long long run = 0, wait = 0;
    int ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
    fclose(f);
    if (!ok)
        return -1;
    *delay = wait;
    snprintf(path, sizeof path, "/proc/%d/task/%d/status", (int)pid, tid);
    f = fopen(path, "re");
    if (!f)
        return -1;
    *nivcsw = 0;
    while (fgets(buf, sizeof buf, f))
        if (!strncmp(buf, "nonvoluntary_ctxt_switches:", 27))
            *nivcsw = strtoull(buf + 27, NULL, 10);
    fclose(f);
    return 0;
}

/* A full table: the threads that have ended leave it, their last readings
 * kept in the sums; the new size (== DISTURB_TASKS when none has ended). */
static size_t disturb_evict(disturb_tasks_t *d)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++) {
        char path[32];
        snprintf(path, sizeof path, "/proc/%d", d->t[i].tid);
        if (access(path, F_OK) == 0) {
            d->t[k++] = d->t[i];
            continue;
        }
        d->gone_delay_ns += d->t[i].delay_ns;
        d->gone_nivcsw += d->t[i].nivcsw;
    }
    d->n = k;
    return k;
}

void disturb_scan(pid_t pid, disturb_tasks_t *d)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return;
    struct dirent *e;
    while ((e = readdir(dir))) {
        int tid = atoi(e->d_name);
        uint64_t delay, nivcsw;
        if (tid <= 0 || task_read(pid, tid, &delay, &nivcsw))
            continue;
        size_t i = 0;
        while (i < d->n && d->t[i].tid != tid)
            i++;
        if (i == d->n && d->n == DISTURB_TASKS)
            i = disturb_evict(d);
        if (i == d->n) {
            if (d->n == DISTURB_TASKS)
                continue; /* more live threads than we follow: the rest go uncounted */
            d->t[d->n++].tid = tid;
        }
        d->t[i].delay_ns = delay;
        d->t[i].nivcsw = nivcsw;
    }
    closedir(dir);
}

void disturb_sums(const disturb_tasks_t *d, uint64_t *delay_ns, uint64_t *nivcsw)
{
    *delay_ns = d->gone_delay_ns;
    *nivcsw = d->gone_nivcsw;
    for (size_t i = 0; i < d->n; i++) {
        *delay_ns += d->t[i].delay_ns;
        *nivcsw += d->t[i].nivcsw;
    }
}

int disturb_stat(disturb_stat_t *st)
{
    FILE *f = fopen("/proc/stat", "re");
    if (!f)
        return -1;
    char line[512];
    st->running = -1;
    st->steal = st->total = st->busy = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long v[8];
        if (!strncmp(line, "cpu ", 4) && sscanf(line + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                                                &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
            for (int i = 0; i < 8; i++)
                st->total += v[i];
            st->steal = v[7];
            st->busy = v[0] + v[1] + v[2] + v[5] + v[6]; /* user nice system irq softirq */
        } else if (!strncmp(line, "procs_running ", 14)) {
            st->running = atoi(line + 14);
        }
    }
    fclose(f);
    return 0;
}

/* The /proc/vmstat counters disturb_machine reads, by name, into m. */
static void vmstat_take(disturb_machine_t *m, const char *name, long val, long *stall, long *wake)
{
    if (!strcmp(name, "thp_collapse_alloc"))
        m->collapses = val;
    else if (!strcmp(name, "compact_stall"))
        *stall = val;
    else if (!strcmp(name, "compact_daemon_wake"))
        *wake = val;
    else if (!strcmp(name, "oom_kill"))
        m->oom_kills = val;
    else if (!strcmp(name, "thp_fault_alloc"))
        m->thp_faults = val;
    else if (!strcmp(name, "thp_fault_fallback"))
        m->thp_fallbacks = val;
    else if (!strcmp(name, "thp_split_pmd"))
        m->pmd_splits = val;
    else if (!strcmp(name, "thp_split_page"))
        m->page_splits = val;
}

void disturb_machine(disturb_machine_t *m)
{
    char line[512];
    m->steal_s = m->busy_s = -1;
    m->collapses = m->compactions = m->oom_kills = -1;
    m->thp_faults = m->thp_fallbacks = m->pmd_splits = m->page_splits = -1;
    disturb_stat_t st;
    if (disturb_stat(&st) == 0) {
        m->steal_s = (double)st.steal / (double)sysconf(_SC_CLK_TCK);
        m->busy_s = (double)st.busy / (double)sysconf(_SC_CLK_TCK);
    }
    FILE *f = fopen("/proc/vmstat", "re");
    if (!f)
        return;
    long stall = -1, wake = -1;
    while (fgets(line, sizeof line, f)) {
        char name[64];
        long val;
        if (sscanf(line, "%63s %ld", name, &val) == 2)
            vmstat_take(m, name, val, &stall, &wake);
    }
    fclose(f);
    if (stall >= 0 && wake >= 0)
        m->compactions = stall + wake;
    if (m->thp_faults < 0)
        m->pmd_splits = m->page_splits = -1; /* no THP in this kernel: nothing counted */
}
