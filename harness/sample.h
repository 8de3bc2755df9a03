/* sample.h - one sample: one fresh child process running the worker under one
 * allocator configuration, counted from exec to exit, with the measured
 * region's counters read at the worker's region markers, RSS sampled from
 * /proc, and the probe's report from inside the child.  A crash, a kill or
 * a time-out is a status in the sample, never an error of the harness. */
#ifndef MB_SAMPLE_H
#define MB_SAMPLE_H
#include "counters.h"
#include "registry.h"
#include "result.h"
#include "workload.h"

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define RUN_SETTINGS_MAX ALLOC_SETTINGS_MAX /* allocators/registry.h */

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

/* One sample: what run_sample observed, then the verdict that only
 * judge.c writes (run_sample leaves it zero). */
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
    /* processes of the sample still running when it ended (daemons, a
     * setsid'd grandchild), killed then so none competes with the next */
    unsigned stragglers;
    run_rss_point_t *rss;                   /* the readings kept (rss_samples of them, unless */
    size_t nrss, rss_cap;                   /* memory ran out): kept from one run_sample to the next */
    /* the worker's result line (result.h): have_result when one came whole */
    bool have_result;
    wl_report_t res;
    /* processes that loaded the probe: the one started, then each
     * descendant that reported (exec'd children of an exec command); the
     * first descendant whose malloc came from another allocator */
    unsigned nproc;
    char proc_mismatch[512];
    /* the probe's report: key=value lines */
    size_t nprobe;
    char probe_key[RUN_PROBE_MAX][96];
    char probe_val[RUN_PROBE_MAX][512];
} run_sample_t;

const char *run_status_name(run_status_t s);

/* Value of a probe key ("malloc_so", "tun:opt.dirty_decay_ms/ssize"), or NULL. */
const char *run_probe_get(const run_sample_t *s, const char *key);

/* The command that runs one sample, as argv: "env", LD_PRELOAD=..., the
 * allocator's variables, the worker and its arguments.  Free with
 * run_free_strv. */
int run_command(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, char ***argv);
void run_free_strv(char **v);

/* Our environment without any allocator variable (LD_PRELOAD, MB_PROBE_*,
 * every family's), as a clean shell would have it, nor any that extra sets,
 * then extra[0..nextra): the one environment builder of every launch site;
 * a vector from malloc (run_free_strv), or -ENOMEM. */
int run_env(char *const *extra, size_t nextra, char ***envp);

/* The checks before any run of a workload: its own (wl_t.check), or for
 * a user's command those of launch_check_command.  0, or -EINVAL with one
 * line in err. */
int run_check(const wl_args_t *a, char *err, size_t errlen);

/* Print that command so a user can reproduce one sample by hand, e.g. under
 * `perf stat --`: the sample's command with the probe armed as in a sample
 * (MB_PROBE_FD=2: its report on stderr; MB_PROBE_READ: the same read-backs);
 * allocator variables set in our environment get `-u`.  Only the sample's
 * secrets and its fds 3 and 4 are not there. */
int run_print_command(FILE *out, const run_opts_t *o, const run_config_t *c, const wl_args_t *a);

/* Run one sample and observe it: how it ended, its counters, its output's
 * head and tail, the probe's keys, its RSS readings.  It judges nothing:
 * judge_sample (judge.h) gives the status.  cnt may be NULL (no counters:
 * the pre-flight check).  out starts zeroed (calloc) and is released with
 * run_sample_free.  Returns 0, or -errno when the harness itself could not
 * start the child (out of fds, fork failed). */
int run_sample(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, cnt_set_t *cnt,
               run_sample_t *out);
/* Free what a sample holds (its RSS readings) and the sample itself. */
void run_sample_free(run_sample_t *s);

/* Ask the running sample to stop (from a signal handler): the child is
 * killed and the sample comes back with status error "interrupted". */
void run_interrupt(void);
bool run_interrupted(void);

#endif
