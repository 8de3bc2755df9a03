/* huge.c - the huge-page condition of a configuration (contract: huge.h). */
#include "huge.h"
#include "error.h"
#include "spec.h"
#include "registry.h"
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

int huge_value(const alloc_info_t *a, const char *value, run_huge_t *h, char *why, size_t len)
{
    if (!strcmp(value, "system") || !strcmp(value, "default"))
        *h = HUGE_SYSTEM;
    else if (!strcmp(value, "never"))
        *h = HUGE_NEVER;
    else if (!strcmp(value, "advise"))
        *h = HUGE_ADVISE;
    else
        return snprintf(why, len, "%s: bad value '%s' for huge (valid: never, advise, system)", a->name, value), -1;
    if (*h != HUGE_ADVISE)
        return 0;
    if (!a->huge_advise)
        return snprintf(why, len, "%s: huge=advise refused: %s", a->name,
                        a->huge_none ? a->huge_none : "no huge-page setting"), -1;
    char mode[32];
    tree_thp_word("enabled", mode, sizeof mode);
    if (!mode[0] || !strcmp(mode, "never"))
        return snprintf(why, len, "%s: huge=advise refused: the kernel gives no transparent huge pages (%s: %s)",
                        a->name, THP_ENABLED, mode[0] ? "never" : "absent"), -1;
    return 0;
}

int huge_parse(const alloc_info_t *a, const char *value, run_huge_t *h)
{
    char why[512];
    return huge_value(a, value, h, why, sizeof why) ? die_spec("%s", why) : 0;
}

/* Does value appear in the "|"-separated list? */
static bool in_list(const char *list, size_t len, const char *value)
{
    size_t n = strlen(value);
    for (const char *p = list; p < list + len;) {
        size_t k = strcspn(p, "|");
        if (k > (size_t)(list + len - p))
            k = (size_t)(list + len - p);
        if (k == n && !strncmp(p, value, n))
            return true;
        p += k + 1;
    }
    return false;
}

/* The value of name in a family's list "name=v|v,name=v" (huge_off; huge_advise
 * is a list of one): a pointer to it and its length in *len, or NULL when the
 * list (NULL: empty) does not name it. */
static const char *list_value(const char *list, const char *name, size_t *len)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
        if (!strncmp(p, name, n) && p[n] == '=') {
            *len = strcspn(p + n + 1, ",");
            return p + n + 1;
        }
    }
    return NULL;
}

bool huge_tunable(const alloc_info_t *a, const char *name)
{
    size_t len;
    return list_value(a->huge_off, name, &len) || list_value(a->huge_advise, name, &len);
}

/* vm.nr_hugepages: the hugetlbfs pages reserved (0 when unreadable). */
static long hugetlb_reserved(void)
{
    long n = 0;
    FILE *f = fopen("/proc/sys/vm/nr_hugepages", "re");
    if (f && fscanf(f, "%ld", &n) != 1)
        n = 0;
    if (f)
        fclose(f);
    return n;
}

/* Is name=v the family's hugetlbfs setting ("name=value", or "name=*": any
 * value but 0)? */
static bool hugetlbfs_setting(const char *spec, const char *name, const char *v)
{
    size_t n = strlen(name);
    if (strncmp(spec, name, n) || spec[n] != '=')
        return false;
    return !strcmp(spec + n + 1, "*") ? strcmp(v, "0") != 0 : !strcmp(spec + n + 1, v);
}

/* Each setting of c against the condition h: 0, or 2 after the error. */
static int huge_check(const run_config_t *c, run_huge_t h)
{
    const alloc_info_t *a = c->alloc;
    for (size_t i = 0; i < c->nsettings; i++) {
        const char *name = c->settings[i].t->name, *v = c->settings[i].value;
        char kv[160];
        snprintf(kv, sizeof kv, "%s=%s", name, v);
        if (a->hugetlbfs && hugetlbfs_setting(a->hugetlbfs, name, v) && hugetlb_reserved() <= 0)
            return die_spec("%s: %s refused: it takes hugetlbfs pages and none are reserved (vm.nr_hugepages "
                            "is 0); transparent huge pages are huge=advise", a->name, kv);
        size_t len;
        const char *off = list_value(a->huge_off, name, &len);
        if (h == HUGE_NEVER && off && !in_list(off, len, v))
            return die_spec("%s: huge=never contradicts %s, which asks for huge pages", a->name, kv);
        if (h == HUGE_ADVISE && list_value(a->huge_advise, name, &len) && strcmp(a->huge_advise, kv))
            return die_spec("%s: huge=advise sets %s; -t gives %s", a->name, a->huge_advise, kv);
    }
    return 0;
}

int huge_apply(run_config_t *c, run_huge_t h, bool given)
{
    c->huge = h;
    c->huge_given = given;
    c->huge_implied = 0;
    if (huge_check(c, h))
        return 2;
    if (h != HUGE_ADVISE)
        return 0;
    for (size_t i = 0; i < c->nsettings; i++) {
        char kv[160];
        snprintf(kv, sizeof kv, "%s=%s", c->settings[i].t->name, c->settings[i].value);
        if (!strcmp(kv, c->alloc->huge_advise))
            return 0; /* -t gave it too */
    }
    char err[1024];
    if (c->nsettings >= RUN_SETTINGS_MAX)
        return die_spec("%s: too many tunables set at once (at most %d)", c->alloc->name, RUN_SETTINGS_MAX);
    if (alloc_parse_setting(c->alloc, c->alloc->huge_advise, &c->settings[c->nsettings], err, sizeof err))
        return die_spec("%s", err);
    c->huge_implied = ++c->nsettings;
    return 0;
}
