/* verify.c - compares what the probe saw inside the child with what was
 * asked for: the shared object serving malloc, the allocator family behind
 * it, and each tunable's effective value. */
#include "verify.h"
#include "probe_report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_file(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!realpath(a, ra) || !realpath(b, rb))
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0;
}

static int fail(run_sample_t *s, const char *fmt, const char *a, const char *b, const char *c)
{
    s->status = RUN_ERROR;
    s->untrusted = true;
    snprintf(s->message, sizeof s->message, fmt, a, b, c);
    return -1;
}

/* The family did not serve malloc: say who did, with the family's hint. */
static int wrong_family(const run_config_t *c, run_sample_t *s, const char *so, const char *family)
{
    const char *hint = "";
    if (c->alloc->mismatch_key && probe_report_get(s, c->alloc->mismatch_key))
        hint = c->alloc->mismatch_hint;
    fail(s, "malloc was served by %s (%s), not by %s", so, family, c->alloc->name);
    size_t len = strlen(s->message);
    snprintf(s->message + len, sizeof s->message - len, "%s%s", *hint ? " " : "", hint);
    return -1;
}

/* Without a read-back (ALLOC_CHECK_LOADER, ALLOC_CHECK_ENV): every variable
 * that applies the settings must have reached the child unchanged. */
static int check_env_reached(const run_config_t *c, run_sample_t *s)
{
    for (size_t i = 0; i < c->env.n; i++) {
        char key[160];
        const char *eq = strchr(c->env.var[i], '=');
        if (!eq)
            continue;
        snprintf(key, sizeof key, "env:%.*s", (int)(eq - c->env.var[i]), c->env.var[i]);
        const char *got = probe_report_get(s, key);
        if (!got || strcmp(got, eq + 1) != 0)
            return fail(s, "%s: the settings did not reach the child (%s, the child saw %s)", c->alloc->name,
                        c->env.var[i], got ? got : "it unset");
    }
    return 0;
}

/* ALLOC_CHECK_PROBE: each setting's value as read back inside the child. */
static int check_read_back(const run_config_t *c, run_sample_t *s, const alloc_setting_t *st)
{
    const char *want = c->alloc->name;
    char key[128];
    snprintf(key, sizeof key, "tun:%s", st->t->readback);
    const char *v = probe_report_get(s, key);
    if (!v)
        return fail(s, "%s:%s could not be read back from the child%s", want, st->t->name, "");
    if (v[0] == '!') {
        char name[128];
        snprintf(name, sizeof name, "%s:%s", want, st->t->name);
        return fail(s, "%s could not be verified: %s%s", name, v + 1, "");
    }
    if (!alloc_value_matches(st->t, st->value, v)) {
        char name[160];
        snprintf(name, sizeof name, "%s:%s=%s", want, st->t->name, st->value);
        return fail(s, "%s did not take effect: the allocator reports %s%s", name, v, "");
    }
    return 0;
}

int verify_sample(const run_config_t *c, run_sample_t *s, char *effective, size_t efflen)
{
    const alloc_info_t *a = c->alloc;
    effective[0] = '\0';
    if (strcmp(probe_report_get(s, "probe") ? probe_report_get(s, "probe") : "", "done") != 0) {
        if (s->status != RUN_OK)
            return 0; /* a crash before the probe ran: the status says enough */
        return fail(s, "the probe did not report from inside the child (is %s preloadable?)%s%s",
                    c->lib[0] ? c->lib : "libmbprobe.so", "", "");
    }
    if (s->status == RUN_OK && s->images_started >= 0 && (long)s->images_reported < s->images_started) {
        /* the kernel saw more program images start than reported the probe (a sample that
         * crashed or timed out killed some on their way: its status says enough) */
        s->status = RUN_ERROR;
        s->untrusted = true;
        snprintf(s->message, sizeof s->message, "program image %s ran without the probe (%ld images "
                 "started, %u reported it): its LD_PRELOAD was changed or cleared on the way (a "
                 "wrapper that sets it, env -i, a static or setuid program), so nothing proves it "
                 "ran %s", s->image_unproven[0] ? s->image_unproven : "(not named: too many to "
                 "follow)", s->images_started, s->images_reported, a->name);
        return -1;
    }
    const char *so = probe_report_get(s, "malloc_so");
    const char *family = probe_report_get(s, "family");
    so = so ? so : "(unknown)";
    family = family ? family : "unknown";
    if (strcmp(family, a->name) != 0)
        return wrong_family(c, s, so, family);
    if (c->lib[0] && !same_file(so, c->lib))
        return fail(s, "malloc was served by %s, not by the requested %s%s", so, c->lib, "");
    if (a->check != ALLOC_CHECK_PROBE && check_env_reached(c, s))
        return -1;

    /* Effective values of every tunable the allocator reports. */
    size_t off = 0;
    for (size_t i = 0; a->check == ALLOC_CHECK_PROBE && i < a->ntunables && off < efflen; i++) {
        const alloc_tunable_t *t = &a->tunables[i];
        char key[128];
        snprintf(key, sizeof key, "tun:%s", t->readback ? t->readback : "");
        const char *v = t->readback ? probe_report_get(s, key) : NULL;
        if (v && v[0] != '!')
            off += (size_t)snprintf(effective + off, efflen - off, "%s%s=%s", off ? ";" : "", t->name, v);
    }
    for (size_t i = 0; i < c->nsettings; i++) {
        const alloc_setting_t *st = &c->settings[i];
        if (a->check == ALLOC_CHECK_PROBE) {
            if (check_read_back(c, s, st))
                return -1;
        } else if (off < efflen) {
            /* the loader's reading was checked before the run (ALLOC_CHECK_LOADER),
             * or the allocator's own parser would have complained (ALLOC_CHECK_ENV) */
            off += (size_t)snprintf(effective + off, efflen - off, "%s%s=%s", off ? ";" : "",
                                    st->t->name, st->value);
        }
    }
    return 0;
}

int verify_loader_tunables(const run_config_t *c, const char *listing, char *err, size_t errlen)
{
    const char *name = c->alloc->name;
    char seen[RUN_SETTINGS_MAX][96];
    for (size_t i = 0; i < c->nsettings; i++)
        seen[i][0] = '\0';
    for (const char *l = listing; *l;) {
        /* "<readback name>: 0x4000000 (min: 0x0, max: ...)" */
        size_t n = strcspn(l, "\n");
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
        l += n + (l[n] == '\n');
        char *colon = strstr(line, ": ");
        if (!colon)
            continue;
        *colon = '\0';
        char *val = colon + 2;
        val[strcspn(val, " \n")] = '\0';
        for (size_t i = 0; i < c->nsettings; i++)
            if (c->settings[i].t->readback && !strcmp(line, c->settings[i].t->readback))
                snprintf(seen[i], sizeof seen[i], "%s", val);
    }
    for (size_t i = 0; i < c->nsettings; i++) {
        const alloc_setting_t *s = &c->settings[i];
        if (!seen[i][0]) {
            snprintf(err, errlen, "%s:%s is not a tunable of this %s (the loader does not list %s)", name,
                     s->t->name, name, s->t->readback);
            return -EINVAL;
        }
        if (!alloc_value_matches(s->t, s->value, seen[i])) {
            snprintf(err, errlen, "%s:%s=%s did not take effect: the loader reports %s", name,
                     s->t->name, s->value, seen[i]);
            return -EINVAL;
        }
    }
    return 0;
}
