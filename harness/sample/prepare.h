/* prepare.h - what a sample runs, before it runs: which launcher starts its
 * workload, the command line and environment of that child, and the
 * sample's secrets.  prepare.c builds them; sample.c starts and watches the
 * child; --print-commands prints the same command for a user. */
#ifndef MB_PREPARE_H
#define MB_PREPARE_H
#include "types.h"

#include <stdbool.h>
#include <stdio.h>

/* The descriptors the child finds its channels at: the worker's region
 * markers and result line (sync), and the probe's report. */
#define PREPARE_SYNC_FD 3
#define PREPARE_PROBE_FD 4

typedef enum { LAUNCH_WORKER, LAUNCH_COMMAND, LAUNCH_SERVER } launch_kind_t;

/* What runs after env(1) and the allocator's variables: the worker, a
 * user's command (the exec workload) or a user's server (serve).  One row
 * per kind, chosen once per workload. */
typedef struct {
    const char *name;           /* wl_t.launcher that picks it; NULL: every other */
    const char *what;           /* its name in messages */
    launch_kind_t kind;
    int (*check)(const wl_args_t *a, char *err, size_t errlen);  /* before any run */
    int (*words)(const run_opts_t *o, const wl_args_t *a, char ***words);
    bool sync_token;            /* its lines on fd 3 carry the sample's secret (the worker) */
    bool serves;                /* a server, with a client beside it (server.h) */
} launcher_t;

const launcher_t *prepare_launcher(const wl_args_t *a);

/* The sample's secrets (docs/proof.md): hex from getrandom, one for the
 * probe in the process started, one for the probe in its descendants, one
 * for the worker's lines on fd 3. */
#define TOKEN_LEN 32
typedef struct {
    char probe[TOKEN_LEN + 1], dprobe[TOKEN_LEN + 1], sync[TOKEN_LEN + 1];
} tokens_t;

/* Fresh secrets from getrandom (sync: the worker's too): 0 or -errno. */
int prepare_tokens(tokens_t *t, bool sync);

/* The command that runs one sample, as argv: "env", LD_PRELOAD=..., the
 * allocator's variables, the worker and its arguments (or the user's
 * command).  Free with launch_free_words (launch.h). */
int prepare_command(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, char ***argv);

/* Our environment without any allocator variable (LD_PRELOAD, MB_PROBE_*,
 * every family's), as a clean shell would have it, nor any that extra sets,
 * then extra[0..nextra): the one environment builder of every launch site;
 * a vector from malloc (launch_free_words), or -ENOMEM. */
int prepare_env(char *const *extra, size_t nextra, char ***envp);

/* env(1)'s own environment for one sample: prepare_env plus the MB_*
 * plumbing (fds, the probe's read-backs, the parent) and the secrets. */
int prepare_child_env(const char *probe_keys, const tokens_t *t, bool pin_threads, char ***envp);

/* "MB_SYNC_ID=DEV:INO" for the sync socket fd (the child's end): what a
 * writer checks MB_SYNC_FD's descriptor against (include/mallocbench.h);
 * 0 or -errno.  prepare_env_add_sync appends it to *envp (a vector from
 * malloc): 0, -ENOMEM or -errno. */
int prepare_sync_id(int fd, char *nv, size_t len);
int prepare_env_add_sync(char ***envp, int fd);

/* The checks before any run of a workload: its own (wl_t.check), or for
 * a user's command those of launch_check_command.  0, or -EINVAL with one
 * line in err. */
int prepare_check(const wl_args_t *a, char *err, size_t errlen);

/* Print that command so a user can reproduce one sample by hand, e.g. under
 * `perf stat --`: the sample's command with the probe armed as in a sample
 * (MB_PROBE_FD=2: its report on stderr; MB_PROBE_READ: the same read-backs);
 * allocator variables set in our environment get `-u`.  Only the sample's
 * secrets and its fds 3 and 4 are not there. */
int prepare_print_command(FILE *out, const run_opts_t *o, const run_config_t *c, const wl_args_t *a);

#endif
