/* cmd_list.c - `mallocbench list [allocators|workloads|tunables|events]
 * [--json]`: what is installed and what every input accepts, from the
 * registries; --json is the workloads' descriptors for tests and scripts. */
#include "cli.h"
#include "schedule.h"
#include "sidecar.h"
#include "text.h"
#include "tools.h"
#include "units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *type_name(tun_type_t t)
{
    static const char *const names[] = {"int", "uint", "size", "bool", "double", "enum"};
    return names[t];
}

/* The domain `tune` searches for tunable t of a, or NULL. */
static const char *domain_of(const alloc_info_t *a, const alloc_tunable_t *t)
{
    for (size_t d = 0; d < a->ndomains; d++)
        if (!strcmp(a->domains[d].name, t->name))
            return a->domains[d].values;
    return NULL;
}

/* 2 after one line naming the valid families, for an unknown one. */
static int unknown_family(const char *name)
{
    char valid[512] = "";
    for (size_t i = 0; i < alloc_count(); i++)
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "", alloc_at(i)->name);
    return die_usage("list tunables: unknown allocator '%s' (valid: %s)", name, valid);
}

static int list_tunables(const char *only)
{
    if (only && !alloc_find(only))
        return unknown_family(only);
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        if (only && strcmp(only, a->name))
            continue;
        printf("%s %s (%s):\n", a->name, a->tested_version, a->conf_how);
        for (size_t k = 0; k < a->ntunables; k++) {
            const alloc_tunable_t *t = &a->tunables[k];
            char range[96];
            if (t->type == TUN_ENUM)
                snprintf(range, sizeof range, "%s", t->choices);
            else if (t->type == TUN_BOOL)
                snprintf(range, sizeof range, "0|1");
            else
                snprintf(range, sizeof range, "%.15g..%.15g", t->min, t->max);
            printf("  %-30s %-6s default %-18s %-26s %s\n", t->name, type_name(t->type), t->def, range, t->help);
            if (domain_of(a, t))
                printf("  %-30s tune searches %s\n", "", domain_of(a, t));
        }
        if (a->known)
            printf("  hand-picked %s: %s\n", a->known_label, a->known);
    }
    return 0;
}

/* A domain as JSON: {"kind": "values", "values": [...]} or {"kind": "log",
 * "lo": N, "hi": N} (canonical numbers), so no script parses its text. */
static void domain_json(const alloc_info_t *a, const char *name, const char *values)
{
    const char *dots = strstr(values, "..");
    if (dots) {
        alloc_setting_t lo, hi;
        char text[160], err[256];
        snprintf(text, sizeof text, "%s=%.*s", name, (int)(dots - values), values);
        if (alloc_parse_setting(a, text, &lo, err, sizeof err))
            snprintf(lo.value, sizeof lo.value, "null");
        snprintf(text, sizeof text, "%s=%s", name, dots + 2);
        if (alloc_parse_setting(a, text, &hi, err, sizeof err))
            snprintf(hi.value, sizeof hi.value, "null");
        printf("{\"kind\": \"log\", \"lo\": %s, \"hi\": %s}", lo.value, hi.value);
        return;
    }
    printf("{\"kind\": \"values\", \"values\": [");
    for (const char *v = values; *v;) {
        size_t n = strcspn(v, "|");
        char one[128];
        snprintf(one, sizeof one, "%.*s", (int)n, v);
        printf("%s", v == values ? "" : ", ");
        text_json_write(stdout, one);
        v += n + (v[n] == '|');
    }
    printf("]}");
}

/* The known setting "name=value,..." as [[name, value], ...]. */
static void known_json(const char *known)
{
    printf("[");
    for (const char *s = known; s && *s;) {
        size_t n = strcspn(s, ","), eq = strcspn(s, "=");
        char k[64], v[128];
        snprintf(k, sizeof k, "%.*s", (int)(eq < n ? eq : n), s);
        snprintf(v, sizeof v, "%.*s", eq < n ? (int)(n - eq - 1) : 0, eq < n ? s + eq + 1 : "");
        printf("%s[", s == known ? "" : ", ");
        text_json_write(stdout, k);
        printf(", ");
        text_json_write(stdout, v);
        printf("]");
        s += n + (s[n] == ',');
    }
    printf("]");
}

/* `list tunables [FAMILY] --json`: every family's tunables with their
 * search domains (null: not searched) and its hand-picked setting. */
static int list_tunables_json(const char *only)
{
    if (only && !alloc_find(only))
        return unknown_family(only);
    printf("{\"families\": [");
    for (size_t i = 0, m = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        if (only && strcmp(only, a->name))
            continue;
        printf("%s\n  {\"name\": ", m++ ? "," : "");
        text_json_write(stdout, a->name);
        printf(", \"colour\": ");
        text_json_write(stdout, a->colour);
        printf(", \"known_label\": ");
        if (a->known_label)
            text_json_write(stdout, a->known_label);
        else
            printf("null");
        printf(", \"known\": ");
        if (a->known)
            known_json(a->known);
        else
            printf("null");
        printf(",\n   \"tunables\": [");
        for (size_t k = 0; k < a->ntunables; k++) {
            const alloc_tunable_t *t = &a->tunables[k];
            printf("%s\n     {\"name\": ", k ? "," : "");
            text_json_write(stdout, t->name);
            printf(", \"type\": \"%s\", \"default\": ", type_name(t->type));
            text_json_write(stdout, t->def);
            printf(", \"help\": ");
            text_json_write(stdout, t->help);
            printf(", \"domain\": ");
            if (domain_of(a, t))
                domain_json(a, t->name, domain_of(a, t));
            else
                printf("null");
            printf("}");
        }
        printf("]}");
    }
    printf("\n]}\n");
    return 0;
}

static int list_workloads(void)
{
    for (size_t i = 0; i < wl_count(); i++) {
        const wl_t *w = wl_at(i);
        if (w->hidden)
            continue;
        printf("%s: %s\n", w->name, w->help);
        for (size_t k = 0; k < w->nparams; k++) {
            const wl_param_t *p = &w->params[k];
            char lo[32], hi[32], range[96];
            if (p->type == WLP_SIZE || p->type == WLP_SIZES) {
                units_format_size(p->min, lo, sizeof lo);
                units_format_size(p->max, hi, sizeof hi);
            } else {
                snprintf(lo, sizeof lo, "%llu", (unsigned long long)p->min);
                snprintf(hi, sizeof hi, "%llu", (unsigned long long)p->max);
            }
            if (p->type == WLP_ENUM)
                snprintf(range, sizeof range, "%s", p->choices);
            else if (p->type == WLP_STRING)
                snprintf(range, sizeof range, "word");
            else if (p->type == WLP_TEXT)
                snprintf(range, sizeof range, "text");
            else if (p->type == WLP_SIZES)
                snprintf(range, sizeof range, "sizes %s..%s", lo, hi);
            else
                snprintf(range, sizeof range, "%s..%s", lo, hi);
            printf("  %-10s %-8s default %-12s %-22s %s\n", p->name, p->unit, p->def, range, p->help);
        }
    }
    return 0;
}

/* One parameter of `list workloads --json`: min and max for numbers and
 * sizes, the list of choices for an enum, null where they do not apply. */
static void param_json(const wl_param_t *p)
{
    static const char *const types[] = {"size", "uint", "enum", "string", "sizes", "text"};
    bool numeric = p->type == WLP_SIZE || p->type == WLP_UINT || p->type == WLP_SIZES;
    printf("{\"name\": ");
    text_json_write(stdout, p->name);
    printf(", \"type\": \"%s\", \"default\": ", types[p->type]);
    text_json_write(stdout, p->def);
    if (numeric)
        printf(", \"min\": %llu, \"max\": %llu", (unsigned long long)p->min, (unsigned long long)p->max);
    else
        printf(", \"min\": null, \"max\": null");
    printf(", \"choices\": %s", p->type == WLP_ENUM ? "[" : "null");
    for (const char *c = p->type == WLP_ENUM ? p->choices : ""; *c;) {
        size_t n = strcspn(c, "|");
        printf("%s\"%.*s\"", c == p->choices ? "" : ", ", (int)n, c); /* words, as in a spec */
        c += n + (c[n] == '|');
    }
    printf("%s", p->type == WLP_ENUM ? "]" : "");
    printf(", \"unit\": ");
    text_json_write(stdout, p->unit);
    printf(", \"help\": ");
    text_json_write(stdout, p->help);
    printf("}");
}

/* `list workloads --json`: what `list workloads` says, for programs, plus
 * the presentation facts (as in the sidecar) and the smoke-test specs. */
static int list_workloads_json(void)
{
    printf("{\"workloads\": [");
    for (size_t i = 0, n = 0; i < wl_count(); i++) {
        const wl_t *w = wl_at(i);
        if (w->hidden)
            continue;
        printf(n++ ? ",\n  {" : "\n  {");
        sidecar_workload_facts(stdout, w);
        printf(", \"help\": ");
        text_json_write(stdout, w->help);
        printf(",\n   \"params\": [");
        for (size_t k = 0; k < w->nparams; k++) {
            printf(k ? ",\n     " : "\n     ");
            param_json(&w->params[k]);
        }
        printf("],\n   \"smoke\": [");
        char spec[1024];
        for (const char *s = w->smoke ? w->smoke : ""; *s;) {
            size_t len = strcspn(s, ";");
            snprintf(spec, sizeof spec, "%.*s", (int)len, s);
            printf("%s", s == w->smoke ? "" : ", ");
            text_json_write(stdout, spec);
            s += len + (s[len] == ';');
        }
        printf("]}");
    }
    printf("\n]}\n");
    return 0;
}

static int list_allocators(void)
{
    run_opts_t o = {.timeout_s = 30, .sample_interval_s = 0.01};
    char worker[PATH_MAX], probe[PATH_MAX];
    if (tools_find(&o, worker, probe, sizeof worker))
        return 2;
    run_config_t *c = malloc(sizeof *c);
    if (!c)
        return 1;
    printf("%-10s %-10s %-48s %s\n", "allocator", "installed", "library", "version (read from inside a child)");
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        memset(c, 0, sizeof *c);
        c->alloc = a;
        snprintf(c->label, sizeof c->label, "%s", a->name);
        (void)alloc_build_env(a, NULL, 0, &c->env); /* what the family always sets */
        if (!alloc_is_system(a) && alloc_locate(a, c->lib, sizeof c->lib)) {
            char want[256];
            size_t off = 0;
            for (const char *const *so = a->sonames; *so; so++)
                off += (size_t)snprintf(want + off, sizeof want - off, "%s%s", off ? " or " : "", *so);
            printf("%-10s %-10s %-48s %s\n", a->name, "no", want, "-");
            continue;
        }
        char version[128], err[1024];
        if (schedule_preflight(&o, c, version, sizeof version, err, sizeof err))
            printf("%-10s %-10s %-48s error: %s\n", a->name, "broken", c->lib[0] ? c->lib : "(libc)", err);
        else
            printf("%-10s %-10s %-48s %s\n", a->name, "yes", c->lib[0] ? c->lib : "(libc)", version);
    }
    free(c);
    return 0;
}

int cmd_list(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fprintf(argc < 2 ? stderr : stdout,
                "usage: mallocbench list allocators|workloads|events|tunables [ALLOCATOR] [--json]\n");
        if (argc >= 2)
            printf("       mallocbench list workloads --json: the same, with each workload's figure,\n"
                   "       traits and smoke-test specs, as JSON\n"
                   "       mallocbench list tunables [ALLOCATOR] --json: every tunable with the domain\n"
                   "       `tune` searches, and each family's hand-picked setting, as JSON\n");
        return argc < 2 ? 2 : 0;
    }
    bool json = argc >= 3 && !strcmp(argv[argc - 1], "--json") &&
                (!strcmp(argv[1], "workloads") || !strcmp(argv[1], "tunables"));
    if (argc > (strcmp(argv[1], "tunables") ? 2 : 3) + json)
        return die_usage("list %s: unexpected argument '%s'", argv[1], argv[argc - 1]);
    if (!strcmp(argv[1], "allocators"))
        return list_allocators();
    if (!strcmp(argv[1], "workloads"))
        return json ? list_workloads_json() : list_workloads();
    if (!strcmp(argv[1], "events"))
        return cnt_list_events(stdout) ? 1 : 0;
    if (!strcmp(argv[1], "tunables"))
        return json ? list_tunables_json(argc > 3 ? argv[2] : NULL)
                    : list_tunables(argc > 2 ? argv[2] : NULL);
    return die_usage("list: unknown topic '%s' (allocators, workloads, events, tunables)", argv[1]);
}
