/* matrix.c - matrix files (INI, libinih) into a run specification.  Values
 * are checked here only for form; the runner checks them against the
 * registries exactly as it checks the command line. */
#include "matrix.h"
#include "units.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

void spec_defaults(run_spec_t *s)
{
    memset(s, 0, sizeof *s);
    s->reps = 5;
    s->timeout_s = 600;
    s->sample_interval_s = 0.010;
    s->limit = true;
    s->warmup_runs = 1;
    s->max_blocks = 100;
}

typedef struct {
    run_spec_t *s;
    char err[512];
    char section[128];
    long cur_workload;       /* index of the [workload] section being read, -1 none */
} load_t;

static int fail(load_t *l, const char *fmt, const char *a, const char *b)
{
    snprintf(l->err, sizeof l->err, fmt, a, b);
    return 0; /* libinih: stop, and return this line's number */
}

static bool parse_bool(const char *v, bool *out)
{
    if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "on"))
        *out = true;
    else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "off"))
        *out = false;
    else
        return false;
    return true;
}

static int run_key(load_t *l, const char *k, const char *v)
{
    run_spec_t *s = l->s;
    uint64_t u;
    if (!strcmp(k, "repetitions")) {
        if (units_parse_u64(v, &u) || u < 1 || u > 100000)
            return fail(l, "bad repetitions '%s' (1 to 100000)%s", v, "");
        s->reps = u;
    } else if (!strcmp(k, "timeout")) {
        if (units_parse_duration(v, &s->timeout_s))
            return fail(l, "bad timeout '%s' (a duration such as 90s or 10m)%s", v, "");
    } else if (!strcmp(k, "sample_interval")) {
        if (units_parse_duration(v, &s->sample_interval_s) || s->sample_interval_s < 0.001)
            return fail(l, "bad sample_interval '%s' (at least 1ms)%s", v, "");
    } else if (!strcmp(k, "events")) {
        snprintf(s->events, sizeof s->events, "%s", v);
    } else if (!strcmp(k, "output")) {
        snprintf(s->output, sizeof s->output, "%s", v);
    } else if (!strcmp(k, "allocators")) {
        snprintf(s->allocators, sizeof s->allocators, "%s", v);
    } else if (!strcmp(k, "seed")) {
        if (units_parse_u64(v, &s->seed))
            return fail(l, "bad seed '%s'%s", v, "");
        s->seed_given = true;
    } else if (!strcmp(k, "warmup_runs")) {
        if (units_parse_u64(v, &u) || u > 100)
            return fail(l, "bad warmup_runs '%s' (0 to 100)%s", v, "");
        s->warmup_runs = (unsigned)u;
    } else if (!strcmp(k, "adaptive")) {
        double pct;
        char num[64];
        snprintf(num, sizeof num, "%s", v);
        size_t n = strlen(num);
        if (n && num[n - 1] == '%')
            num[n - 1] = '\0';
        if (units_parse_double(num, &pct) || pct < 0 || pct > 100)
            return fail(l, "bad adaptive '%s' (a target such as 1%%)%s", v, "");
        s->adaptive = pct / 100.0;
    } else if (!strcmp(k, "budget")) {
        if (units_parse_duration(v, &s->budget_s))
            return fail(l, "bad budget '%s' (a duration such as 30m)%s", v, "");
    } else if (!strcmp(k, "max_blocks")) {
        if (units_parse_u64(v, &u) || u < 1 || u > 100000)
            return fail(l, "bad max_blocks '%s'%s", v, "");
        s->max_blocks = (unsigned)u;
    } else if (!strcmp(k, "pin")) {
        snprintf(s->pin, sizeof s->pin, "%s", v);
    } else if (!strcmp(k, "limit")) {
        if (!parse_bool(v, &s->limit))
            return fail(l, "bad limit '%s' (yes or no)%s", v, "");
    } else if (!strcmp(k, "sweep")) {
        snprintf(s->sweep, sizeof s->sweep, "%s", v);
    } else {
        return fail(l, "unknown key '%s' in [run] (valid: repetitions, timeout, sample_interval, events, "
                       "output, seed, warmup_runs, adaptive, budget, max_blocks, pin, allocators, limit, "
                       "sweep)%s", k, "");
    }
    return 1;
}

static int handler(void *user, const char *section, const char *key, const char *value)
{
    load_t *l = user;
    run_spec_t *s = l->s;
    bool new_section = strcmp(section, l->section) != 0;
    if (new_section)
        snprintf(l->section, sizeof l->section, "%s", section);
    if (!strcmp(section, "run"))
        return run_key(l, key, value);
    if (!strncmp(section, "workload ", 9)) {
        if (new_section) {
            if (s->nw >= SPEC_MAX_WORKLOADS)
                return fail(l, "too many [workload] sections%s%s", "", "");
            char name[64];
            if (sscanf(section + 9, "%63s", name) != 1)
                return fail(l, "[workload] needs a name, e.g. [workload tensor_copy]%s%s", "", "");
            l->cur_workload = (long)s->nw++;
            snprintf(s->workload[l->cur_workload], SPEC_TEXT, "%s:", name);
        }
        char *w = s->workload[l->cur_workload];
        if (!strcmp(key, "sweep")) {
            snprintf(s->wsweep[l->cur_workload], sizeof s->wsweep[0], "%s", value);
            return 1;
        }
        size_t len = strlen(w);
        int n = snprintf(w + len, SPEC_TEXT - len, "%s%s=%s", w[len - 1] == ':' ? "" : ",", key, value);
        if (n < 0 || (size_t)n >= SPEC_TEXT - len)
            return fail(l, "workload parameters too long%s%s", "", "");
        return 1;
    }
    if (!strncmp(section, "tunables ", 9)) {
        char alloc[64];
        if (sscanf(section + 9, "%63s", alloc) != 1)
            return fail(l, "[tunables] needs an allocator, e.g. [tunables jemalloc]%s%s", "", "");
        if (s->nt >= SPEC_MAX_TUNABLES)
            return fail(l, "too many tunables%s%s", "", "");
        snprintf(s->tunable[s->nt++], SPEC_TEXT, "%s:%s=%s", alloc, key, value);
        return 1;
    }
    return fail(l, "unknown section [%s] (valid: [run], [workload NAME], [tunables ALLOCATOR])%s", section, "");
}

int matrix_load(const char *path, run_spec_t *s, char *err, size_t errlen)
{
    load_t l = {.s = s, .cur_workload = -1};
    s->nw = 0;
    s->nt = 0;
    snprintf(s->matrix, sizeof s->matrix, "%s", path);
    int line = ini_parse(path, handler, &l);
    if (line == -1) {
        snprintf(err, errlen, "cannot open matrix '%s': %s", path, strerror(errno));
        return -ENOENT;
    }
    if (line == -2) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -ENOMEM;
    }
    if (line > 0) {
        snprintf(err, errlen, "%s:%d: %s", path, line, l.err[0] ? l.err : "syntax error (expected [section] or key = value)");
        return -EINVAL;
    }
    if (!s->nw) {
        snprintf(err, errlen, "%s: no [workload NAME] section", path);
        return -EINVAL;
    }
    /* "tensor_copy:" with no parameters is "tensor_copy" */
    for (size_t i = 0; i < s->nw; i++) {
        size_t n = strlen(s->workload[i]);
        if (n && s->workload[i][n - 1] == ':')
            s->workload[i][n - 1] = '\0';
    }
    return 0;
}
