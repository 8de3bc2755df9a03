/* prepare.c - what a sample runs, before it runs (contract: prepare.h): the
 * launcher of its workload (the worker, a user's command, a server), the
 * command env(1) runs with the allocator's variables, env's own environment
 * with the sample's secrets, and that command printed for a user
 * (--print-commands).  Starts nothing: sample.c does. */
#include "prepare.h"
#include "launch.h"
#include "probe.h"
#include "region.h"
#include "server.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static char *xstrdup_printf(const char *fmt, const char *a, const char *b)
{
    size_t len = strlen(fmt) + strlen(a) + strlen(b) + 1;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, fmt, a, b);
    return s;
}

/* The command of a sample, the one --print-commands shows:
 *   env LD_PRELOAD=<lib>:<probe> <allocator vars> <worker> <workload> <params>
 * (or the user's command in place of the worker and its arguments).  The child runs exactly this through env(1), so its whole-process counts
 * are those `perf stat -- <command>` gives (env's own start-up included). */
int prepare_command(const run_opts_t *o, const run_config_t *c, const wl_args_t *a, char ***argvp)
{
    size_t n = 0;
    char **argv = calloc(c->env.n + 3, sizeof *argv);
    if (!argv)
        return -ENOMEM;
    if (!(argv[n++] = strdup("env")))
        goto oom;
    argv[n] = c->lib[0] ? xstrdup_printf("LD_PRELOAD=%s:%s", c->lib, o->probe)
                        : xstrdup_printf("LD_PRELOAD=%s%s", o->probe, "");
    if (!argv[n++])
        goto oom;
    for (size_t i = 0; i < c->env.n; i++)
        if (!(argv[n++] = strdup(c->env.var[i])))
            goto oom;
    char **words;
    int rc = prepare_launcher(a)->words(o, a, &words);
    if (rc) {
        launch_free_words(argv);
        return rc;
    }
    size_t nw = 0;
    while (words[nw])
        nw++;
    char **more = realloc(argv, (n + nw + 1) * sizeof *argv);
    if (!more) {
        launch_free_words(words);
        goto oom;
    }
    argv = more;
    memcpy(argv + n, words, (nw + 1) * sizeof *argv);
    free(words);
    *argvp = argv;
    return 0;
oom:
    launch_free_words(argv);
    return -ENOMEM;
}

/* Is the variable nv ("NAME=VALUE") one that extra sets too? */
static bool env_overridden(const char *nv, char *const *extra, size_t nextra)
{
    size_t len = strcspn(nv, "=");
    for (size_t i = 0; i < nextra; i++)
        if (!strncmp(nv, extra[i], len) && extra[i][len] == '=')
            return true;
    return false;
}

int prepare_env(char *const *extra, size_t nextra, char ***envp)
{
    size_t n = 0;
    for (char **e = environ; *e; e++)
        n++;
    char **env = calloc(n + nextra + 1, sizeof *env);
    if (!env)
        return -ENOMEM;
    size_t k = 0;
    for (char **e = environ; *e; e++)
        if (!alloc_env_is_allocator_var(*e) && !env_overridden(*e, extra, nextra) &&
            !(env[k++] = strdup(*e)))
            goto oom;
    for (size_t i = 0; i < nextra; i++)
        if (!(env[k++] = strdup(extra[i])))
            goto oom;
    env[k] = NULL;
    *envp = env;
    return 0;
oom:
    launch_free_words(env);
    return -ENOMEM;
}

static int token_make(char *out)
{
    unsigned char raw[TOKEN_LEN / 2];
    size_t got = 0;
    while (got < sizeof raw) {
        ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
        if (n < 0 && errno != EINTR)
            return -errno;
        got += n > 0 ? (size_t)n : 0;
    }
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
    return 0;
}

int prepare_tokens(tokens_t *t, bool sync)
{
    int rc = token_make(t->probe);
    if (!rc)
        rc = token_make(t->dprobe);
    if (!rc && sync)
        rc = token_make(t->sync);
    return rc;
}

/* env(1)'s own environment: ours without any allocator variable (so env
 * itself runs as it would from a clean shell), plus the MB_* plumbing and
 * the sample's secrets. */
int prepare_child_env(const char *probe_keys, const tokens_t *t, bool pin_threads, char ***envp)
{
    char sync[32], probe[32], parent[32], tp[64], td[64], ts[64];
    snprintf(tp, sizeof tp, "%s=%s", MB_PROBE_TOKEN_ENV, t->probe);
    snprintf(td, sizeof td, "%s=%s", MB_PROBE_DTOKEN_ENV, t->dprobe);
    snprintf(ts, sizeof ts, "%s=%s", MB_SYNC_TOKEN_ENV, t->sync);
    snprintf(sync, sizeof sync, "%s=%d", MB_SYNC_FD_ENV, PREPARE_SYNC_FD);
    snprintf(probe, sizeof probe, "%s=%d", MB_PROBE_FD_ENV, PREPARE_PROBE_FD);
    snprintf(parent, sizeof parent, "%s=%ld", MB_PROBE_PARENT_ENV, (long)getpid());
    char *read = xstrdup_printf("%s=%s", MB_PROBE_READ_ENV, probe_keys);
    if (!read)
        return -ENOMEM;
    char pin[] = MB_PIN_THREADS_ENV "=1";
    char root[] = MB_PROBE_ROOT_ENV "=0000000000";
    char *plumbing[9] = {sync, probe, read, parent, tp, td, root};
    size_t n = 7;
    if (t->sync[0])
        plumbing[n++] = ts;
    if (pin_threads)
        plumbing[n++] = pin;
    int rc = prepare_env(plumbing, n, envp);
    free(read);
    return rc;
}

int prepare_sync_id(int fd, char *nv, size_t len)
{
    struct stat st;
    if (fstat(fd, &st))
        return -errno;
    snprintf(nv, len, "%s=%llu:%llu", MB_SYNC_ID_ENV, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    return 0;
}

int prepare_env_add_sync(char ***envp, int fd)
{
    char nv[80];
    size_t n = 0;
    int rc = prepare_sync_id(fd, nv, sizeof nv);
    if (rc)
        return rc;
    while ((*envp)[n])
        n++;
    char **more = realloc(*envp, (n + 2) * sizeof **envp);
    if (!more)
        return -ENOMEM;
    *envp = more;
    if (!(more[n] = strdup(nv)))
        return -ENOMEM;
    more[n + 1] = NULL;
    return 0;
}

/* Shell-quote a word only when it needs it, as exec's command is quoted. */
static void print_word(FILE *out, const char *w)
{
    size_t len = 4 * strlen(w) + 3; /* every character a quote: '\'' */
    char *q = malloc(len);
    char *const one[] = {(char *)w, NULL};
    fputs(q && launch_quote(one, q, len) == 0 ? q : w, out);
    free(q);
}

int prepare_print_command(FILE *out, const run_opts_t *o, const run_config_t *c, const wl_args_t *a)
{
    char **argv;
    int rc = prepare_command(o, c, a, &argv);
    if (rc)
        return rc;
    fputs(argv[0], out);
    /* variables the user's shell has set that the harness removes */
    for (char **e = environ; *e; e++) {
        if (alloc_env_is_allocator_var(*e) && strncmp(*e, "MB_", 3) != 0) {
            const char *eq = strchr(*e, '=');
            fprintf(out, " -u %.*s", (int)(eq - *e), *e);
        }
    }
    /* the probe armed as in a counted sample (it changes nothing in the
     * allocator: allocators/probe.c), its report on stderr */
    char keys[2048], read[2100];
    alloc_probe_keys(c->alloc, keys, sizeof keys);
    snprintf(read, sizeof read, "%s=%s", MB_PROBE_READ_ENV, keys);
    fprintf(out, " %s=2 %s", MB_PROBE_FD_ENV, o->pin_threads ? MB_PIN_THREADS_ENV "=1 " : "");
    print_word(out, read);
    for (char **p = argv + 1; *p; p++) {
        fputc(' ', out);
        print_word(out, *p);
    }
    fputc('\n', out);
    launch_free_words(argv);
    return 0;
}

/* The worker: its path, the workload's name and its parameters. */
static int worker_words(const run_opts_t *o, const wl_args_t *a, char ***words)
{
    char params[1024], *save = NULL;
    wl_format_args(a, ' ', params, sizeof params);
    size_t n = 0;
    char **v = calloc(WL_MAX_PARAMS + 3, sizeof *v);
    if (!v)
        return -ENOMEM;
    if (!(v[n++] = strdup(o->worker)) || !(v[n++] = strdup(a->wl->name)))
        goto oom;
    for (char *t = strtok_r(params, " ", &save); t; t = strtok_r(NULL, " ", &save))
        if (!(v[n++] = strdup(t)))
            goto oom;
    *words = v;
    return 0;
oom:
    launch_free_words(v);
    return -ENOMEM;
}

static int worker_check(const wl_args_t *a, char *err, size_t errlen)
{
    return a->wl->check ? a->wl->check(a, err, errlen) : 0;
}

/* A user's command: its shell words in place of the worker. */
static int command_words(const run_opts_t *o, const wl_args_t *a, char ***words)
{
    char err[256];
    (void)o;
    return launch_split(wl_get_str(a, "cmd"), words, err, sizeof err);
}

static int command_check(const wl_args_t *a, char *err, size_t errlen)
{
    return launch_check_command(wl_get_str(a, "cmd"), wl_get_str(a, "metric"), err, errlen);
}

static const launcher_t launchers[] = {
    {"command", "the command", LAUNCH_COMMAND, command_check, command_words, false, false},
    {"server", "the server", LAUNCH_SERVER, server_check, command_words, false, true},
    {NULL, "worker", LAUNCH_WORKER, worker_check, worker_words, true, false},
};

const launcher_t *prepare_launcher(const wl_args_t *a)
{
    const launcher_t *l = launchers;
    while (l->name && !(a->wl->launcher && strcmp(l->name, a->wl->launcher) == 0))
        l++;
    return l;
}

int prepare_check(const wl_args_t *a, char *err, size_t errlen)
{
    return prepare_launcher(a)->check(a, err, errlen);
}
