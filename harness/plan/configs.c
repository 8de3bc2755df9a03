/* configs.c - the allocator configurations of a run (contract: configs.h):
 * each -a choice (a family, its library, the user's label) crossed with the
 * -t tunable lists that name it, every value checked against the allocator
 * registry before anything runs. */
#include "error.h"
#include "spec.h"
#include "configs.h"
#include "huge.h"
#include "registry.h"
#include "units.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const alloc_info_t *alloc;
    char label[64];                    /* -t LABEL:...: only that configuration; "" = the family */
    char name[64];                     /* tunable name */
    size_t nvalues;
    char values[SPEC_MAX_VALUES][64];
    unsigned line;                     /* its matrix line (0: the command line) */
} sweep_t;

typedef struct {
    const alloc_info_t *alloc;
    char lib[PATH_MAX];
    bool user_lib;
    char label[64];                    /* -a LABEL=FAMILY[:PATH]; "" = none given */
} alloc_choice_t;

/* The configuration's name in the CSV: the user's label, else the family
 * (@library when one was given), then the tunables asked for. */
static void config_label(run_config_t *c, const char *label)
{
    size_t off = (size_t)snprintf(c->label, sizeof c->label, "%s", label[0] ? label : c->alloc->name);
    if (c->user_lib && !label[0])
        off += (size_t)snprintf(c->label + off, sizeof c->label - off, "@%s", c->lib);
    c->requested[0] = '\0';
    size_t roff = 0;
    size_t shown_n = 0;
    for (size_t i = 0; i < c->nsettings; i++) {
        /* sizes read as the user writes them (32M), exactly */
        char shown[64];
        snprintf(shown, sizeof shown, "%s", c->settings[i].value);
        if (c->settings[i].t->type == TUN_SIZE)
            units_format_size(strtoull(shown, NULL, 10), shown, sizeof shown);
        roff += (size_t)snprintf(c->requested + roff, sizeof c->requested - roff, "%s%s=%s",
                                 i ? ";" : "", c->settings[i].t->name, c->settings[i].value);
        if (i + 1 == c->huge_implied)
            continue; /* huge=advise's own: the label says huge=advise */
        off += (size_t)snprintf(c->label + off, sizeof c->label - off, "%s%s=%s", shown_n++ ? "," : "[",
                                c->settings[i].t->name, shown);
    }
    if (c->huge_given && off < sizeof c->label)
        off += (size_t)snprintf(c->label + off, sizeof c->label - off, "%s" HUGE_NAME "=%s", shown_n++ ? "," : "[",
                                run_huge_name(c->huge));
    if (shown_n && off < sizeof c->label)
        snprintf(c->label + off, sizeof c->label - off, "]");
}

/* Cross product of one allocator's sweeps. */
static int expand_configs(const run_spec_t *sp, const alloc_choice_t *ch, const sweep_t *sw, size_t nsw,
                          run_config_t *out, size_t *nout)
{
    const sweep_t *mine[SPEC_MAX_TUNABLES];
    size_t nmine = 0;
    for (size_t i = 0; i < nsw; i++)
        if (sw[i].label[0] ? !strcmp(sw[i].label, ch->label) : sw[i].alloc == ch->alloc)
            mine[nmine++] = &sw[i];
    /* one name set twice for one configuration (-t FAMILY:X and -t LABEL:X): neither may win silently */
    for (size_t i = 0; i < nmine; i++)
        for (size_t k = i + 1; k < nmine; k++)
            if (!strcmp(mine[i]->name, mine[k]->name) && (spec_at(sp, mine[k]->line), 1))
                return die_spec("%s: %s given twice for configuration '%s' (for %s and for %s): give it once",
                                ch->alloc->name, mine[i]->name, ch->label[0] ? ch->label : ch->alloc->name,
                                mine[i]->label[0] ? mine[i]->label : ch->alloc->name,
                                mine[k]->label[0] ? mine[k]->label : ch->alloc->name);
    size_t idx[SPEC_MAX_TUNABLES] = {0};
    for (;;) {
        if (*nout >= SPEC_MAX_CONFIGS)
            return die_spec("too many configurations (at most %d)", SPEC_MAX_CONFIGS);
        run_config_t *c = &out[(*nout)++];
        memset(c, 0, sizeof *c);
        c->alloc = ch->alloc;
        snprintf(c->lib, sizeof c->lib, "%s", ch->lib);
        c->user_lib = ch->user_lib;
        run_huge_t huge = HUGE_SYSTEM;
        bool huge_given = false;
        for (size_t i = 0; i < nmine; i++) {
            char kv[160], err[1024];
            if (!strcmp(mine[i]->name, HUGE_NAME)) {
                huge_given = true; /* the harness's condition, applied below */
                if (huge_parse(c->alloc, mine[i]->values[idx[i]], &huge))
                    return 2;
                continue;
            }
            if (!strcmp(mine[i]->values[idx[i]], "default"))
                continue; /* the allocator's own default: nothing set */
            if (c->nsettings >= RUN_SETTINGS_MAX)
                return die_spec("%s: too many tunables set at once (at most %d)", c->alloc->name,
                                RUN_SETTINGS_MAX);
            snprintf(kv, sizeof kv, "%s=%s", mine[i]->name, mine[i]->values[idx[i]]);
            if (alloc_parse_setting(c->alloc, kv, &c->settings[c->nsettings++], err, sizeof err))
                return die_spec("%s", err);
        }
        if (huge_apply(c, huge, huge_given))
            return 2;
        if (alloc_build_env(c->alloc, c->settings, c->nsettings, &c->env))
            return die_spec("%s: settings too long for the environment", c->alloc->name);
        config_label(c, ch->label);
        /* next combination */
        size_t k = 0;
        while (k < nmine && ++idx[k] == mine[k]->nvalues)
            idx[k++] = 0;
        if (k == nmine)
            break;
    }
    return 0;
}

/* NULL when path is an ELF shared object of this machine's class, else why not. */
static const char *elf_shared_object(const char *path)
{
    unsigned char h[20];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return strerror(errno);
    ssize_t n = read(fd, h, sizeof h);
    close(fd);
    if (n < (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG))
        return "not an ELF file";
    if (h[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return "an ELF file of another word size";
    uint16_t type = (uint16_t)(h[EI_DATA] == ELFDATA2LSB ? h[16] | h[17] << 8 : h[16] << 8 | h[17]);
    if (type != ET_DYN)
        return type == ET_EXEC ? "an executable, not a library" : "an ELF file that is not a library";
    return NULL;
}

/* A label the user chose: letters, digits and "._+-", not a family's name
 * unless it is that family's. */
static bool label_ok(const char *l)
{
    if (!*l || strlen(l) >= 48)
        return false;
    for (const char *p = l; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("._+-", *p))
            return false;
    return true;
}

static int unknown_allocator(const char *name)
{
    char names[256];
    size_t off = 0;
    for (size_t i = 0; i < alloc_count(); i++)
        off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "", alloc_at(i)->name);
    return die_spec("unknown allocator '%s' (valid: %s; or LABEL=ALLOCATOR[:LIBRARY])", name, names);
}

/* One item of -a: FAMILY, FAMILY=LIBRARY, or LABEL=FAMILY[:LIBRARY] (a
 * configuration under the user's name, e.g. je-new=jemalloc:/opt/lib.so).
 * 1 when it is skipped (not installed, quiet_missing), else 0 or 2. */
static int parse_allocator(char *item, alloc_choice_t *c, bool quiet_missing)
{
    memset(c, 0, sizeof *c);
    char *eq = strchr(item, '='), *lib = NULL;
    if (eq)
        *eq = '\0';
    const char *family = item;
    if (eq) {
        /* LABEL=FAMILY or LABEL=FAMILY:PATH, when what follows '=' names a family */
        char *colon = strchr(eq + 1, ':');
        char fam[64];
        snprintf(fam, sizeof fam, "%.*s", (int)(colon ? colon - eq - 1 : (long)strlen(eq + 1)), eq + 1);
        if (alloc_find(fam)) {
            if (!label_ok(item))
                return die_spec("bad label '%s' (letters, digits and ._+- only, at most 47)", item);
            snprintf(c->label, sizeof c->label, "%s", item);
            family = eq + 1;
            if (colon) {
                *colon = '\0';
                lib = colon + 1;
            }
        } else {
            lib = eq + 1;
        }
    }
    const alloc_info_t *a = alloc_find(family);
    if (!a)
        return unknown_allocator(family);
    c->alloc = a;
    if (lib) {
        if (alloc_is_system(a))
            return die_spec("%s's malloc is part of libc and cannot be given a library path", a->name);
        if (access(lib, R_OK) != 0)
            return die_spec("cannot read library '%s' for %s: %s", lib, a->name, strerror(errno));
        if (!realpath(lib, c->lib))
            return die_spec("cannot resolve '%s': %s", lib, strerror(errno));
        const char *why = elf_shared_object(c->lib);
        if (why)
            return die_spec("library '%s' for %s is not a shared object: %s", lib, a->name, why);
        c->user_lib = true;
    } else if (!alloc_is_system(a) && alloc_locate(a, c->lib, sizeof c->lib)) {
        if (quiet_missing) {
            fprintf(stderr, "%s: skipping %s: not installed (%s)\n", prog, a->name, a->sonames[0]);
            return 1;
        }
        return die_spec("%s is not installed: %s not found in the system library directories "
                        "(install its Debian package or use -a %s=PATH)", a->name, a->sonames[0], a->name);
    }
    return 0;
}

static int parse_allocators(const char *list, alloc_choice_t *out, size_t *n, bool quiet_missing)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    /* strtok would skip an empty item: a label ",x" would become "x" */
    if (list[0] == ',' || strstr(list, ",,"))
        return die_spec("empty item in the allocator list '%s'", list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (*n >= SPEC_MAX_CONFIGS)
            return die_spec("too many allocators");
        alloc_choice_t *c = &out[*n];
        int rc = parse_allocator(item, c, quiet_missing);
        if (rc == 1)
            continue;
        if (rc)
            return rc;
        /* two configurations under one name could not be told apart */
        for (size_t i = 0; i < *n; i++) {
            const char *mine = c->label[0] ? c->label : c->alloc->name, *other = out[i].label[0] ? out[i].label
                                                                                                : out[i].alloc->name;
            bool same_plain = !c->label[0] && !out[i].label[0] && c->alloc == out[i].alloc &&
                              !strcmp(c->lib, out[i].lib);
            if (same_plain || ((c->label[0] || out[i].label[0]) && !strcmp(mine, other)))
                return die_spec("allocator '%s' given twice: give one of them a label, e.g. %s-b=%s",
                                mine, c->alloc->name, c->alloc->name);
        }
        (*n)++;
    }
    if (*n == 0)
        return die_spec("no allocator to run");
    return 0;
}

/* -t ALLOCATOR:NAME=V1,V2: ALLOCATOR is a family (all its configurations)
 * or a label given with -a (that configuration only). */
static int parse_tunable(const char *spec, sweep_t *sw, size_t *nsw, const alloc_choice_t *ch, size_t nch)
{
    const char *colon = strchr(spec, ':');
    const char *eq = colon ? strchr(colon, '=') : NULL;
    if (!colon || !eq || eq == colon + 1)
        return die_spec("bad tunable '%s': expected ALLOCATOR:NAME=VALUE[,VALUE...]", spec);
    char aname[64];
    snprintf(aname, sizeof aname, "%.*s", (int)(colon - spec), spec);
    const alloc_info_t *a = alloc_find(aname);
    const char *label = "";
    for (size_t i = 0; !a && i < nch; i++)
        if (!strcmp(ch[i].label, aname)) {
            a = ch[i].alloc;
            label = ch[i].label;
        }
    if (!a)
        return die_spec("bad tunable '%s': unknown allocator or label '%s'", spec, aname);
    if (*nsw >= SPEC_MAX_TUNABLES)
        return die_spec("too many -t options");
    sweep_t *s = &sw[(*nsw)++];
    memset(s, 0, sizeof *s);
    s->alloc = a;
    snprintf(s->label, sizeof s->label, "%s", label);
    snprintf(s->name, sizeof s->name, "%.*s", (int)(eq - colon - 1), colon + 1);
    for (size_t i = 0; i + 1 < *nsw; i++)
        if (sw[i].alloc == a && !strcmp(sw[i].label, s->label) && !strcmp(sw[i].name, s->name))
            return die_spec("tunable %s:%s given twice (use one -t with a comma list)", aname, s->name);
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    char *save = NULL;
    for (char *v = strtok_r(buf, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
        if (s->nvalues >= SPEC_MAX_VALUES)
            return die_spec("too many values for %s:%s", a->name, s->name);
        char kv[160], err[1024];
        alloc_setting_t st;
        snprintf(kv, sizeof kv, "%s=%s", s->name, v);
        run_huge_t h;
        if (!strcmp(s->name, HUGE_NAME)) {
            if (huge_parse(a, v, &h)) /* the harness's condition, no family's tunable */
                return 2;
        } else if (strcmp(v, "default") != 0 && alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_spec("%s", err);
        if (strcmp(s->name, HUGE_NAME) && !strcmp(v, "default") && !alloc_find_tunable(a, s->name) &&
            alloc_parse_setting(a, kv, &st, err, sizeof err))
            return die_spec("%s", err); /* an unknown name still lists the valid ones */
        snprintf(s->values[s->nvalues++], sizeof s->values[0], "%s", v);
    }
    if (!s->nvalues)
        return die_spec("bad tunable '%s': no value", spec);
    return 0;
}

/* The configurations of sp's allocators and tunables, into choices and
 * sweeps (SPEC_MAX_CONFIGS and SPEC_MAX_TUNABLES of them), then cfg. */
static int resolve_configs(const run_spec_t *sp, alloc_choice_t *choices, sweep_t *sweeps, run_config_t *cfg,
                           size_t *ncfg)
{
    size_t nch = 0;
    spec_at(sp, sp->allocators_line);
    if (sp->allocators[0]) {
        if (parse_allocators(sp->allocators, choices, &nch, false))
            return 2;
    } else {
        char all[256];
        size_t off = 0;
        for (size_t i = 0; i < alloc_count(); i++)
            off += (size_t)snprintf(all + off, sizeof all - off, "%s%s", i ? "," : "", alloc_at(i)->name);
        if (parse_allocators(all, choices, &nch, true))
            return 2;
    }
    size_t nsw = 0;
    for (size_t i = 0; i < sp->nt; i++) {
        spec_at(sp, sp->tline[i]);
        if (parse_tunable(sp->tunable[i], sweeps, &nsw, choices, nch))
            return 2;
        sweeps[nsw - 1].line = sp->tline[i];
    }
    for (size_t i = 0; i < nsw; i++) {
        bool found = false;
        for (size_t k = 0; k < nch; k++)
            found |= choices[k].alloc == sweeps[i].alloc;
        spec_at(sp, i < sp->nt ? sp->tline[i] : 0);
        if (!found)
            return die_spec("tunable %s:%s given, but %s is not among the allocators to run",
                            sweeps[i].alloc->name, sweeps[i].name, sweeps[i].alloc->name);
    }
    *ncfg = 0;
    for (size_t i = 0; i < nch; i++)
        if (expand_configs(sp, &choices[i], sweeps, nsw, cfg, ncfg))
            return 2;
    return 0;
}

int configs_resolve(const run_spec_t *sp, run_config_t *cfg, size_t *ncfg)
{
    alloc_choice_t *choices = calloc(SPEC_MAX_CONFIGS, sizeof *choices);
    sweep_t *sweeps = calloc(SPEC_MAX_TUNABLES, sizeof *sweeps);
    int rc = choices && sweeps ? resolve_configs(sp, choices, sweeps, cfg, ncfg) : die_io("out of memory");
    free(choices);
    free(sweeps);
    return rc;
}
