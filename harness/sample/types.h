/* types.h - what the stages of a run pass each other: an allocator
 * configuration (the unit compared), the options every sample runs with, and
 * one sample as observed (sample.c fills it) then judged (judge.c sets its
 * status).  Types only, so that the plan, the verdict and the output include
 * this and not the sampler; and the one name of each status. */
#ifndef MB_TYPES_H
#define MB_TYPES_H
#include "counters.h"
#include "registry.h"
#include "result.h"
#include "workload.h"

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#define RUN_SETTINGS_MAX ALLOC_SETTINGS_MAX /* allocators/registry.h */

/* A configuration's huge-page condition (-t LABEL:huge=...): the kernel's
 * own mode (system), transparent huge pages off for the whole process tree
 * (never: PR_SET_THP_DISABLE), or the family's own huge-page setting on
 * (advise: configs.c adds it).  Indexed by run_huge_names. */
typedef enum { HUGE_SYSTEM, HUGE_NEVER, HUGE_ADVISE } run_huge_t;
static inline const char *run_huge_name(run_huge_t h)
{
    static const char *const names[] = {"system", "never", "advise"};
    return (unsigned)h < 3 ? names[h] : "?";
}

/* One allocator configuration: the unit that is compared. */
typedef struct {
    const alloc_info_t *alloc;
    char lib[PATH_MAX];                     /* "" for glibc */
    bool user_lib;                          /* given with -a NAME=PATH */
    alloc_setting_t settings[RUN_SETTINGS_MAX];
    size_t nsettings;
    alloc_env_t env;                        /* the settings as environment */
    char label[256];                        /* "jemalloc[dirty_decay_ms=-1]" */
    char requested[512];                    /* "dirty_decay_ms=-1;..." */
    run_huge_t huge;                        /* its huge-page condition */
    bool huge_given;                        /* -t gave huge= (the label shows it) */
    size_t huge_implied;                    /* 1 + the index in settings[] of the one huge=advise
                                             * added; 0: none */
} run_config_t;

typedef struct {
    const char *worker;                     /* path of mallocbench-worker */
    const char *probe;                      /* path of libmbprobe.so */
    double timeout_s;                       /* 0: none */
    double sample_interval_s;               /* RSS sampling period */
    double tree_interval_s;                 /* commands and servers: the process tree's PSS
                                             * (tree.h) every this long; 0 = not read */
    bool pin;                               /* pin the child to cpus */
    bool pin_threads;                       /* and each workload thread to one of them */
    cpu_set_t cpus;
} run_opts_t;

typedef enum { RUN_OK, RUN_ERROR, RUN_CRASHED, RUN_TIMEOUT } run_status_t;

#define RUN_PROBE_MAX 128
#define RUN_OUTPUT_KEEP 4096

/* One RSS reading: seconds since the child was let go, and KiB. */
typedef struct {
    double t;
    long rss_kib;
} run_rss_point_t;

/* One sample: what sample_run observed, then the verdict that only
 * judge.c writes (sample_run leaves it zero). */
typedef struct {
    /* the verdict (judge.c) */
    run_status_t status;
    char message[1024];
    bool untrusted;                         /* wrong allocator or setting: report no figures */
    /* how the child ended */
    int wstatus;                            /* as wait(2) gives it */
    bool timed_out;                         /* killed at --timeout */
    bool interrupted;                       /* killed because the harness was asked to stop */
    const char *what;                       /* "worker" or "the command", for messages */
    char out_head[RUN_OUTPUT_KEEP];         /* the first bytes of its output ... */
    char out_tail[RUN_OUTPUT_KEEP];         /* ... and the last */
    char fail[512];                         /* its first "fail" line, or why its result was bad */
    int stop_signal;                        /* > 0: it stopped with this signal (and was killed) */
    long oom_kills;                         /* rise of /proc/vmstat oom_kill meanwhile; < 0 unknown */
    int setup_errno;                        /* > 0: it failed before its program ran ... */
    char setup_what[128];                   /* ... at this step (spawn_failure) */
    char forged[192];                       /* the first line on fd 3 or 4 without the secret */
    char harness_why[640];                  /* the harness ended it (or never started it) for this */
    bool stopped;                           /* the harness stopped it after its work (a server after
                                             * its client): how it ends then is no failure */
    bool stop_killed;                       /* ... and it took SIGKILL after the grace */
    /* whole process */
    double wall_s, user_s, sys_s;
    long maxrss_kib, minflt, majflt;
    cnt_value_t total[CNT_MAX];
    /* measured region */
    bool have_region;
    cnt_value_t begin[CNT_MAX], end[CNT_MAX];
    double region_user_s, region_sys_s;
    /* what disturbed it (disturb.h): its threads' run-queue wait and
     * involuntary switches in the region (NAN / -1 unknown); over the
     * sample, machine-wide, the host's steal, khugepaged's collapses and
     * the kernel's compactions (-1 unknown) */
    double region_run_delay_s;
    long region_nivcsw;
    double steal_s;
    long collapses, compactions;
    /* RSS */
    long rss_peak_kib, rss_final_kib;
    size_t rss_samples;
    /* commands and servers: the largest summed Pss of the process tree (tree.h)
     * over its readings (-1: not read), and the most processes one reading saw */
    long tree_pss_peak_kib;
    unsigned tree_procs_max;
    /* huge pages, every sample (built-in workloads read alone, at each tree
     * interval and at the region's end): the tree's Anonymous and
     * AnonHugePages at the reading where Anonymous was largest (-1: never
     * read); over all readings, the processes whose THP_enabled was read and
     * of them those with it off, and the first read with it on (0: none) */
    long anon_peak_kib, anon_huge_peak_kib, anon_huge_max_kib; /* ... and the most AnonHugePages of any reading */
    unsigned thp_read, thp_off;
    pid_t thp_on_pid;
    /* machine-wide over the sample (disturb.h; -1 unknown): huge-page faults,
     * fallbacks, PMD splits, page splits; and the CPU time of every task but
     * the harness and its children (NAN unknown): others that could add to them */
    long thp_faults, thp_fallbacks, pmd_splits, page_splits;
    double others_cpu_s;
    /* processes of the sample still running when it ended (daemons, a
     * setsid'd grandchild), killed then so none competes with the next */
    unsigned stragglers;
    run_rss_point_t *rss;                   /* the readings kept (rss_samples of them, unless */
    size_t nrss, rss_cap;                   /* memory ran out): kept from one sample_run to the next */
    /* the worker's result line (result.h): have_result when one came whole */
    bool have_result;
    wl_report_t res;
    /* processes that loaded the probe: the one started, then each
     * descendant that reported (exec'd children of an exec command); the
     * first descendant whose malloc came from another allocator */
    unsigned nproc;
    char proc_mismatch[512];
    /* program images (execs.h): how many the tree started, less the launcher
     * env(1) (-1: not counted, images_why says why), how many reported the
     * probe, and the first that did not (its file; "" when not named) */
    long images_started;
    unsigned images_reported;
    char image_unproven[160];
    char images_why[160];
    /* the probe's report: key=value lines */
    size_t nprobe;
    char probe_key[RUN_PROBE_MAX][96];
    char probe_val[RUN_PROBE_MAX][512];
} run_sample_t;

/* "ok", "error", "crashed" or "timeout": the status column's words. */
static inline const char *sample_status_name(run_status_t s)
{
    static const char *const names[] = {"ok", "error", "crashed", "timeout"};
    return (unsigned)s < 4 ? names[s] : "error";
}

#endif
