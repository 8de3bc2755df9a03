/* registry.c - the pure functions around the family table (families.c):
 * locating a library, checking and canonicalising a setting, building its
 * environment, reading the allocator's stderr.  Every family-specific fact
 * comes from its alloc_info_t. */
#include "registry.h"
#include "mb_config.h"
#include "units.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

size_t alloc_count(void) { return alloc_nfamilies; }
const alloc_info_t *alloc_at(size_t i) { return i < alloc_nfamilies ? alloc_families[i] : NULL; }

const alloc_info_t *alloc_find(const char *name)
{
    for (size_t i = 0; i < alloc_nfamilies; i++)
        if (strcmp(alloc_families[i]->name, name) == 0)
            return alloc_families[i];
    return NULL;
}

bool alloc_is_system(const alloc_info_t *a) { return a->sonames == NULL; }

const alloc_info_t *alloc_system(void)
{
    for (size_t i = 0; i < alloc_nfamilies; i++)
        if (alloc_is_system(alloc_families[i]))
            return alloc_families[i];
    return NULL;
}

const alloc_tunable_t *alloc_find_tunable(const alloc_info_t *a, const char *name)
{
    for (size_t i = 0; i < a->ntunables; i++)
        if (strcmp(a->tunables[i].name, name) == 0)
            return &a->tunables[i];
    return NULL;
}

const char *alloc_refused_reason(const alloc_info_t *a, const char *name)
{
    for (const alloc_refusal_t *r = a->refused; r && r->name; r++)
        if (strcmp(r->name, name) == 0)
            return r->reason;
    return NULL;
}

/* The highest version (strverscmp) of `name` in the directories matching
 * the glob `dir`: 0 and path, or -ENOENT. */
static int locate_glob(const char *dir, const char *name, char *path, size_t len)
{
    char pat[PATH_MAX];
    glob_t g;
    int rc = -ENOENT;
    snprintf(pat, sizeof pat, "%s/%s", dir, name);
    if (glob(pat, GLOB_NOSORT, NULL, &g) != 0)
        return -ENOENT;
    const char *best = NULL;
    for (size_t i = 0; i < g.gl_pathc; i++)
        if (access(g.gl_pathv[i], R_OK) == 0 && (!best || strverscmp(g.gl_pathv[i], best) > 0))
            best = g.gl_pathv[i];
    if (best) {
        snprintf(path, len, "%s", best);
        rc = 0;
    }
    globfree(&g);
    return rc;
}

int alloc_locate(const alloc_info_t *a, char *path, size_t len)
{
    static const char *const dirs[] = {"/usr/local/lib", "/usr/lib/" MB_MULTIARCH,
                                       "/lib/" MB_MULTIARCH, "/usr/lib64", "/usr/lib"};
    path[0] = '\0';
    for (const char *const *so = a->sonames; so && *so; so++) {
        for (const char *const *d = a->dirs; d && *d; d++)
            if (locate_glob(*d, *so, path, len) == 0)
                return 0;
        for (size_t d = 0; d < NELEM(dirs); d++) {
            snprintf(path, len, "%s/%s", dirs[d], *so);
            if (access(path, R_OK) == 0)
                return 0;
        }
    }
    path[0] = '\0';
    return -ENOENT;
}

static void list_names(const alloc_info_t *a, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->ntunables && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", a->tunables[i].name);
}

int alloc_parse_setting(const alloc_info_t *a, const char *text, alloc_setting_t *out,
                        char *err, size_t errlen)
{
    const char *eq = strchr(text, '=');
    char name[64];
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof name) {
        snprintf(err, errlen, "bad tunable '%s' for %s: expected NAME=VALUE", text, a->name);
        return -EINVAL;
    }
    memcpy(name, text, (size_t)(eq - text));
    name[eq - text] = '\0';
    const char *val = eq + 1;
    const alloc_tunable_t *t = alloc_find_tunable(a, name);
    if (!t) {
        const char *why = alloc_refused_reason(a, name);
        char names[1024];
        list_names(a, names, sizeof names);
        if (why)
            snprintf(err, errlen, "%s tunable '%s' %s", a->name, name, why);
        else
            snprintf(err, errlen, "unknown %s tunable '%s' (valid: %s)", a->name, name, names);
        return -EINVAL;
    }
    out->t = t;
    double num = 0;
    int rc = 0;
    switch (t->type) {
    case TUN_SIZE: {
        uint64_t v;
        rc = units_parse_size(val, &v);
        num = (double)v;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%llu", (unsigned long long)v);
        break;
    }
    case TUN_UINT: {
        uint64_t v;
        rc = units_parse_u64(val, &v);
        num = (double)v;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%llu", (unsigned long long)v);
        break;
    }
    case TUN_INT: {
        int64_t v;
        rc = units_parse_i64(val, &v);
        num = (double)v;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%lld", (long long)v);
        break;
    }
    case TUN_DOUBLE:
        rc = units_parse_double(val, &num);
        if (!rc)
            snprintf(out->value, sizeof out->value, "%.17g", num);
        break;
    case TUN_BOOL:
        /* the spellings a matrix file's yes/no keys accept, so the two agree */
        if (!strcasecmp(val, "1") || !strcasecmp(val, "true") || !strcasecmp(val, "on") ||
            !strcasecmp(val, "yes"))
            num = 1;
        else if (!strcasecmp(val, "0") || !strcasecmp(val, "false") || !strcasecmp(val, "off") ||
                 !strcasecmp(val, "no"))
            num = 0;
        else
            rc = -EINVAL;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%d", (int)num);
        break;
    case TUN_ENUM: {
        uint64_t idx;
        if (units_parse_choice(t->choices, val, &idx)) {
            snprintf(err, errlen, "bad value '%s' for %s:%s (one of %s)", val, a->name, name, t->choices);
            return -EINVAL;
        }
        snprintf(out->value, sizeof out->value, "%s", val);
        return 0;
    }
    }
    if (rc) {
        static const char *const what[] = {"an integer", "a non-negative integer",
                                           "a size such as 64K or 16M", "true or false (1/0, yes/no, on/off)", "a number", ""};
        snprintf(err, errlen, "bad value '%s' for %s:%s (expected %s)", val, a->name, name, what[t->type]);
        return -EINVAL;
    }
    if (num < t->min || num > t->max) {
        snprintf(err, errlen, "value '%s' for %s:%s is out of range [%.15g, %.15g]", val, a->name,
                 name, t->min, t->max);
        return -ERANGE;
    }
    return 0;
}

static int env_append(alloc_env_t *env, const char *fmt, const char *k, const char *v)
{
    if (env->n >= ALLOC_ENV_MAX)
        return -E2BIG;
    int n = snprintf(env->var[env->n], ALLOC_ENV_LEN, fmt, k, v);
    if (n < 0 || n >= ALLOC_ENV_LEN)
        return -E2BIG;
    env->n++;
    return 0;
}

/* Join settings into one variable: prefix, then key<kv>value joined by sep. */
static int env_join(alloc_env_t *env, const char *var, const alloc_setting_t *s, size_t n,
                    const char *kv, const char *sep)
{
    char buf[ALLOC_ENV_LEN];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + off, sizeof buf - off, "%s%s%s%s", i ? sep : "", s[i].t->env_key, kv,
                         s[i].value);
        if (w < 0 || (size_t)w >= sizeof buf - off)
            return -E2BIG;
        off += (size_t)w;
    }
    return env_append(env, "%s=%s", var, buf);
}

int alloc_build_env(const alloc_info_t *a, const alloc_setting_t *s, size_t n, alloc_env_t *env)
{
    env->n = 0;
    for (const char *const *e = a->extra_env; e && *e; e++)
        if (env_append(env, "%s%s", *e, ""))
            return -E2BIG;
    if (n == 0)
        return 0;
    if (n > ALLOC_SETTINGS_MAX)
        return -E2BIG;
    alloc_setting_t spelt[ALLOC_SETTINGS_MAX];
    for (size_t i = 0; i < n; i++) {
        spelt[i] = s[i];
        if (s[i].t->type == TUN_BOOL)
            snprintf(spelt[i].value, sizeof spelt[i].value, "%s",
                     strcmp(s[i].value, "1") ? a->conf.no : a->conf.yes);
    }
    if (a->conf.var)
        return env_join(env, a->conf.var, spelt, n, a->conf.kv, a->conf.sep);
    for (size_t i = 0; i < n; i++) {
        int rc = env_append(env, "%s=%s", spelt[i].t->env_key, spelt[i].value);
        if (rc)
            return rc;
    }
    return 0;
}

/* Does NAME=VALUE match a family's variable pattern ("NAME=" or "PREFIX_")? */
static bool var_matches(const char *nv, const char *pat)
{
    size_t l = strlen(pat);
    return strncmp(nv, pat, l) == 0 && (pat[l - 1] == '=' || strchr(nv + l, '='));
}

bool alloc_env_is_allocator_var(const char *nv)
{
    static const char *const ours[] = {"LD_PRELOAD=", "MB_PROBE_", "MB_SYNC_"};
    for (size_t i = 0; i < NELEM(ours); i++)
        if (var_matches(nv, ours[i]))
            return true;
    for (size_t f = 0; f < alloc_nfamilies; f++)
        for (const char *const *v = alloc_families[f]->env_vars; v && *v; v++)
            if (var_matches(nv, *v))
                return true;
    return false;
}

const alloc_info_t *alloc_by_library(const char *path, const char **soname)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    for (size_t f = 0; f < alloc_nfamilies; f++)
        for (const char *const *so = alloc_families[f]->sonames; so && *so; so++) {
            size_t n = strlen(*so);
            if (!strncmp(b, *so, n) && (b[n] == '\0' || b[n] == '.')) {
                if (soname)
                    *soname = *so;
                return alloc_families[f];
            }
        }
    return NULL;
}

const alloc_info_t *alloc_env_owner(const char *nv)
{
    for (size_t f = 0; f < alloc_nfamilies; f++)
        for (const char *const *v = alloc_families[f]->env_vars; v && *v; v++)
            if (var_matches(nv, *v))
                return alloc_families[f];
    return NULL;
}

void alloc_probe_keys(const alloc_info_t *a, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    if (a->check != ALLOC_CHECK_PROBE)
        return;
    for (size_t i = 0; i < a->ntunables && off < len; i++)
        if (a->tunables[i].readback)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
                                    a->tunables[i].readback);
}

/* Parse a read-back number: decimal, 0x hex (ld.so), or true/false. */
static int effective_number(const char *s, double *out)
{
    if (!strcmp(s, "true")) { *out = 1; return 0; }
    if (!strcmp(s, "false")) { *out = 0; return 0; }
    char *end;
    errno = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        *out = (double)strtoull(s, &end, 16);
    } else {
        *out = strtod(s, &end);
    }
    return (errno || end == s || *end) ? -EINVAL : 0;
}

bool alloc_value_matches(const alloc_tunable_t *t, const char *requested, const char *effective)
{
    if (!effective || !*effective || effective[0] == '!')
        return false;
    if (t->type == TUN_ENUM)
        return strcmp(requested, effective) == 0;
    double want, got;
    if (effective_number(requested, &want) || effective_number(effective, &got))
        return false;
    if (t->type == TUN_DOUBLE)
        return fabs(want - got) <= 1e-9 * fmax(1.0, fabs(want));
    return want == got;
}

const char *alloc_rejection(const alloc_info_t *a, const char *output)
{
    const char *first = NULL;
    for (const char *const *r = a->rejects; r && *r; r++) {
        const char *at = strstr(output, *r);
        if (at && (!first || at < first))
            first = at;
    }
    return first;
}

bool alloc_output_line(const alloc_info_t *a, const char *line, char *key, size_t klen, char *val,
                       size_t vlen)
{
    for (const alloc_output_t *o = a->outputs; o && o->prefix; o++) {
        size_t pl = strlen(o->prefix);
        if (strncmp(line, o->prefix, pl) != 0)
            continue;
        const char *v = line + pl;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vl = strcspn(v, "\r\n");
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            vl--;
        snprintf(key, klen, "%s", o->key);
        snprintf(val, vlen, "%.*s", (int)vl, v);
        /* map: "text=value|text=value"; an unmapped text stays as it is */
        for (const char *m = o->map; m && *m;) {
            const char *eq = strchr(m, '='), *bar = strchr(m, '|');
            size_t ml = bar ? (size_t)(bar - m) : strlen(m);
            if (eq && eq < m + ml && (size_t)(eq - m) == vl && strncmp(m, v, vl) == 0) {
                snprintf(val, vlen, "%.*s", (int)(m + ml - eq - 1), eq + 1);
                break;
            }
            m = bar ? bar + 1 : NULL;
        }
        return true;
    }
    return false;
}

/* One value of a domain as NAME=VALUE through the tunable's own parser. */
static int domain_value(const alloc_info_t *a, const char *name, const char *v, size_t n, double *num,
                        char *err, size_t errlen)
{
    char text[160];
    alloc_setting_t s;
    if ((size_t)snprintf(text, sizeof text, "%s=%.*s", name, (int)n, v) >= sizeof text) {
        snprintf(err, errlen, "domain of %s:%s: value '%.*s' too long", a->name, name, (int)n, v);
        return -EINVAL;
    }
    int rc = alloc_parse_setting(a, text, &s, err, errlen);
    if (!rc && num && s.t->type != TUN_ENUM && units_parse_double(s.value, num)) {
        snprintf(err, errlen, "domain of %s:%s: '%s' is not a number", a->name, name, s.value);
        return -EINVAL;
    }
    return rc;
}

int alloc_check_domain(const alloc_info_t *a, const char *name, const char *values, char *err, size_t errlen)
{
    const alloc_tunable_t *t = alloc_find_tunable(a, name);
    if (!t) {
        snprintf(err, errlen, "domain: %s has no tunable '%s'", a->name, name);
        return -EINVAL;
    }
    const char *dots = strstr(values, "..");
    if (dots) {
        double lo, hi;
        if (t->type == TUN_BOOL || t->type == TUN_ENUM) {
            snprintf(err, errlen, "domain of %s:%s: a range '%s' needs a numeric tunable (give V|V|V)",
                     a->name, name, values);
            return -EINVAL;
        }
        if (domain_value(a, name, values, (size_t)(dots - values), &lo, err, errlen) ||
            domain_value(a, name, dots + 2, strlen(dots + 2), &hi, err, errlen))
            return -EINVAL;
        if (!(lo > 0 && lo < hi)) {
            snprintf(err, errlen, "domain of %s:%s: log range '%s' needs 0 < LO < HI", a->name, name, values);
            return -EINVAL;
        }
        return 0;
    }
    if (!*values) {
        snprintf(err, errlen, "domain of %s:%s is empty", a->name, name);
        return -EINVAL;
    }
    for (const char *v = values; *v;) {
        size_t n = strcspn(v, "|");
        if (n == 0) {
            snprintf(err, errlen, "domain of %s:%s: empty value in '%s'", a->name, name, values);
            return -EINVAL;
        }
        if (domain_value(a, name, v, n, NULL, err, errlen))
            return -EINVAL;
        v += n + (v[n] == '|');
        if (v[-1] == '|' && !*v) {
            snprintf(err, errlen, "domain of %s:%s: empty value in '%s'", a->name, name, values);
            return -EINVAL;
        }
    }
    return 0;
}
