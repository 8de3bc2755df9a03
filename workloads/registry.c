/* registry.c - the workload table and the parsing of workload specs,
 * shared by the harness (to refuse bad input before any run) and the worker. */
#include "workload.h"
#include "dist.h"
#include "text.h"
#include "units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the table, in workloads.c (its X(name) lines are also meson's list) */
extern const wl_t *const wl_table[];
extern const size_t wl_ntable;

size_t wl_count(void) { return wl_ntable; }
const wl_t *wl_at(size_t i) { return i < wl_ntable ? wl_table[i] : NULL; }

const wl_t *wl_find(const char *name)
{
    for (size_t i = 0; i < wl_ntable; i++)
        if (strcmp(wl_table[i]->name, name) == 0)
            return wl_table[i];
    return NULL;
}

static int param_parse(const wl_t *wl, size_t i, const char *val, wl_args_t *a, char *err,
                       size_t errlen)
{
    const wl_param_t *p = &wl->params[i];
    uint64_t *out = &a->v[i];
    size_t bad;
    /* every value reaches the CSV: UTF-8 without control characters (a tab
     * only in text such as a command); the value itself is not echoed */
    int rc = text_check(val, p->type == WLP_TEXT, &bad);
    if (rc) {
        /* a command is one line of shell words: a program of several lines goes in a file */
        snprintf(err, errlen, "bad value for %s:%s: %s at byte %zu%s", wl->name, p->name, text_reason(rc), bad,
                 p->type == WLP_TEXT && (val[bad] == '\n' || val[bad] == '\r')
                     ? " (a line break: a command is one line; put a program of several lines in a file and "
                       "run that file)" : "");
        return -EINVAL;
    }
    switch (p->type) {
    case WLP_SIZE:
        rc = units_parse_size(val, out);
        break;
    case WLP_UINT:
        rc = units_parse_u64(val, out);
        break;
    case WLP_ENUM:
        if (units_parse_choice(p->choices, val, out)) {
            snprintf(err, errlen, "bad value '%s' for %s:%s (one of %s)", val, wl->name, p->name,
                     p->choices);
            return -EINVAL;
        }
        return 0;
    case WLP_TEXT:
        if (strlen(val) >= WL_STR_MAX) {
            snprintf(err, errlen, "bad value for %s:%s (one line of at most %d characters)", wl->name,
                     p->name, WL_STR_MAX - 1);
            return -EINVAL;
        }
        snprintf(a->str[i], WL_STR_MAX, "%s", val);
        return 0;
    case WLP_STRING:
    case WLP_SIZES:
        /* the value travels on the worker's command line and in a spec */
        if (strlen(val) >= WL_STR_MAX || strpbrk(val, " ,\t\n'\"")) {
            snprintf(err, errlen, "bad value '%s' for %s:%s (no spaces, commas or quotes; at most %d "
                     "characters)", val, wl->name, p->name, WL_STR_MAX - 1);
            return -EINVAL;
        }
        if (p->type == WLP_SIZES) {
            dist_t *d = malloc(sizeof *d);
            char why[512];
            if (!d)
                return -ENOMEM;
            rc = dist_parse(val, d, why, sizeof why);
            uint64_t max = rc ? 0 : dist_max(d);
            free(d);
            if (rc) {
                snprintf(err, errlen, "bad value for %s:%s: %s", wl->name, p->name, why);
                return -EINVAL;
            }
            if (max > p->max) {
                char hi[32];
                units_format_size(p->max, hi, sizeof hi);
                snprintf(err, errlen, "value '%s' for %s:%s is out of range (sizes up to %s)", val,
                         wl->name, p->name, hi);
                return -ERANGE;
            }
        }
        snprintf(a->str[i], WL_STR_MAX, "%s", val);
        return 0;
    default:
        rc = -EINVAL;
    }
    if (rc) {
        snprintf(err, errlen, "bad value '%s' for %s:%s (expected %s)", val, wl->name, p->name,
                 p->type == WLP_SIZE ? "a size such as 64K or 16M" : "a non-negative integer");
        return -EINVAL;
    }
    if (*out < p->min || *out > p->max) {
        char lo[32], hi[32];
        if (p->type == WLP_SIZE) {
            units_format_size(p->min, lo, sizeof lo);
            units_format_size(p->max, hi, sizeof hi);
        } else {
            snprintf(lo, sizeof lo, "%llu", (unsigned long long)p->min);
            snprintf(hi, sizeof hi, "%llu", (unsigned long long)p->max);
        }
        snprintf(err, errlen, "value '%s' for %s:%s is out of range [%s, %s]", val, wl->name,
                 p->name, lo, hi);
        return -ERANGE;
    }
    return 0;
}

int wl_defaults(const wl_t *wl, wl_args_t *out)
{
    char err[256];
    memset(out, 0, sizeof *out);
    out->wl = wl;
    for (size_t i = 0; i < wl->nparams; i++)
        if (param_parse(wl, i, wl->params[i].def, out, err, sizeof err))
            return -EINVAL; /* a bad default is a bug in the table; tests catch it */
    return 0;
}

int wl_set(wl_args_t *a, const char *kv, char *err, size_t errlen)
{
    const wl_t *wl = a->wl;
    const char *eq = strchr(kv, '=');
    if (!eq || eq == kv) {
        snprintf(err, errlen, "bad parameter '%s' for workload %s: expected NAME=VALUE", kv, wl->name);
        return -EINVAL;
    }
    size_t n = (size_t)(eq - kv);
    for (size_t i = 0; i < wl->nparams; i++) {
        if (strlen(wl->params[i].name) == n && strncmp(wl->params[i].name, kv, n) == 0)
            return param_parse(wl, i, eq + 1, a, err, errlen);
    }
    char names[256];
    size_t off = 0;
    names[0] = '\0';
    for (size_t i = 0; i < wl->nparams && off < sizeof names; i++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "",
                                wl->params[i].name);
    snprintf(err, errlen, "unknown parameter '%.*s' for workload %s (valid: %s)", (int)n, kv,
             wl->name, names);
    return -EINVAL;
}

static const wl_param_t *param_named(const wl_t *wl, const char *name, size_t n)
{
    for (size_t i = 0; i < wl->nparams; i++)
        if (strlen(wl->params[i].name) == n && strncmp(wl->params[i].name, name, n) == 0)
            return &wl->params[i];
    return NULL;
}

/* The end of the "name=value" item at kv: the next comma, or for a
 * WLP_TEXT parameter the next ",NAME=" of a parameter (commas in between
 * belong to the text). */
static char *item_end(const wl_t *wl, char *kv)
{
    size_t klen = strcspn(kv, "=,");
    const wl_param_t *p = kv[klen] == '=' ? param_named(wl, kv, klen) : NULL;
    if (!p || p->type != WLP_TEXT)
        return kv + strcspn(kv, ",");
    for (char *c = strchr(kv + klen, ','); c; c = strchr(c + 1, ',')) {
        size_t n = strcspn(c + 1, "=,");
        if (c[1 + n] == '=' && param_named(wl, c + 1, n))
            return c;
    }
    return kv + strlen(kv);
}

int wl_parse_spec(const char *spec, wl_args_t *out, char *err, size_t errlen)
{
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", spec) >= (int)sizeof buf) {
        snprintf(err, errlen, "workload spec too long");
        return -EINVAL;
    }
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    const wl_t *wl = wl_find(buf);
    if (!wl) {
        char names[256];
        size_t off = 0;
        names[0] = '\0';
        for (size_t i = 0; i < wl_ntable && off < sizeof names; i++)
            if (!wl_table[i]->hidden)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "",
                                        wl_table[i]->name);
        snprintf(err, errlen, "unknown workload '%s' (valid: %s)", buf, names);
        return -EINVAL;
    }
    wl_defaults(wl, out);
    if (!colon || !colon[1])
        return 0;
    bool seen[WL_MAX_PARAMS] = {false};
    for (char *kv = colon + 1; kv;) {
        char *end = item_end(wl, kv);
        char *next = *end ? end + 1 : NULL;
        *end = '\0';
        /* a parameter given twice is refused: text such as a unit or a
         * command word holding ",cmd=" would otherwise set another one */
        size_t klen = strcspn(kv, "=");
        const wl_param_t *p = kv[klen] == '=' ? param_named(wl, kv, klen) : NULL;
        if (p && seen[p - wl->params]) {
            snprintf(err, errlen, "parameter %s:%s given twice (a value holding \",%s=\"?)", wl->name, p->name,
                     p->name);
            return -EINVAL;
        }
        if (p)
            seen[p - wl->params] = true;
        if (!*kv && next) { /* only a last one may be empty: "unit=a,,cmd=" is not unit "a," */
            snprintf(err, errlen, "empty parameter in '%s' (two commas?)", spec);
            return -EINVAL;
        }
        int rc = *kv ? wl_set(out, kv, err, errlen) : 0;
        if (rc)
            return rc;
        kv = next;
    }
    return 0;
}

/* Is name one of wl->quiet_defaults ("a|b")? */
static bool wl_is_quiet(const wl_t *wl, const char *name)
{
    size_t n = strlen(name);
    for (const char *q = wl->quiet_defaults; q && *q;) {
        const char *end = strchr(q, '|');
        size_t len = end ? (size_t)(end - q) : strlen(q);
        if (len == n && strncmp(q, name, n) == 0)
            return true;
        q = end ? end + 1 : q + len;
    }
    return false;
}

/* Does params[i] of a hold its default (as wl_parse_spec would set it)? */
static bool wl_is_default(const wl_args_t *a, size_t i)
{
    wl_args_t d = {.wl = a->wl};
    char err[256];
    const wl_param_t *p = &a->wl->params[i];
    if (param_parse(a->wl, i, p->def, &d, err, sizeof err))
        return false;
    if (p->type == WLP_STRING || p->type == WLP_SIZES || p->type == WLP_TEXT)
        return strcmp(a->str[i], d.str[i]) == 0;
    return a->v[i] == d.v[i];
}

void wl_format_args(const wl_args_t *a, char sep, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->wl->nparams && off < len; i++) {
        const wl_param_t *p = &a->wl->params[i];
        char v[64];
        if (off >= len)
            break;
        if (wl_is_quiet(a->wl, p->name) && wl_is_default(a, i))
            continue;
        if (p->type == WLP_SIZE)
            units_format_size(a->v[i], v, sizeof v);
        else if (p->type == WLP_ENUM)
            units_choice_name(p->choices, a->v[i], v, sizeof v);
        else if (p->type == WLP_STRING || p->type == WLP_SIZES || p->type == WLP_TEXT) {
            off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? (char[]){sep, 0} : "", p->name,
                                    a->str[i]);
            continue;
        }
        else
            snprintf(v, sizeof v, "%llu", (unsigned long long)a->v[i]);
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? (char[]){sep, 0} : "", p->name, v);
    }
}

uint64_t wl_get(const wl_args_t *a, const char *name)
{
    for (size_t i = 0; i < a->wl->nparams; i++)
        if (strcmp(a->wl->params[i].name, name) == 0)
            return a->v[i];
    return 0;
}

bool wl_param_is_text(const wl_t *wl, const char *name)
{
    const wl_param_t *p = param_named(wl, name, strlen(name));
    return p && p->type == WLP_TEXT;
}

const char *wl_metric(const wl_args_t *a, bool *lower_is_better)
{
    const wl_param_t *m = param_named(a->wl, "metric", 6);
    if (m && m->type == WLP_TEXT && *wl_get_str(a, "metric")) {
        *lower_is_better = wl_get(a, "better") == 1; /* choices "higher|lower" */
        return "the figure the command printed (metric=REGEX)";
    }
    *lower_is_better = a->wl->lower_is_better;
    return a->wl->metric ? a->wl->metric : "";
}

const char *wl_get_str(const wl_args_t *a, const char *name)
{
    for (size_t i = 0; i < a->wl->nparams; i++)
        if (strcmp(a->wl->params[i].name, name) == 0)
            return a->str[i];
    return "";
}

uint64_t wl_scale(wl_args_t *a, uint64_t factor)
{
    if (!a->wl->scale || factor <= 1)
        return 1;
    char list[128];
    snprintf(list, sizeof list, "%s", a->wl->scale);
    char *save = NULL;
    for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save))
        for (size_t i = 0; i < a->wl->nparams; i++) {
            const wl_param_t *p = &a->wl->params[i];
            if (strcmp(p->name, name) || a->v[i] == 0)
                continue;
            uint64_t most = p->max / a->v[i];
            if (factor > most)
                factor = most ? most : 1;
            a->v[i] *= factor;
            return factor;
        }
    return 1;
}
