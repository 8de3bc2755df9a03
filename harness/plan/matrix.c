/* matrix.c - matrix files (INI) into a run specification.  The INI reader
 * is our own, so that it stops at the first error, keeps every entry's line
 * and refuses what a general INI library would silently accept (long lines
 * cut in two, duplicate keys and sections).  [run] values are checked by
 * the option table (options.c), as their flags are; workload parameters and
 * tunables against the registries here, so that an error names its line. */
#include "fileio.h"
#include "matrix.h"
#include "huge.h"
#include "options.h"
#include "registry.h"
#include "text.h"
#include "workload.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* every [workload] and [tunables] section there may be, and [run] */
#define MATRIX_SECTIONS (SPEC_MAX_WORKLOADS + SPEC_MAX_TUNABLES + 1)
#define MATRIX_KEYS 64

typedef struct {
    run_spec_t *s;
    char err[512];
    unsigned line;           /* the line being read */
    long cur_workload;       /* index of the [workload] section being read, -1 none */
    wl_args_t args;          /* its parameters so far, checked key by key */
    const alloc_info_t *alloc; /* the allocator of the [tunables] section being read */
    /* every section seen, and the keys of the current one, for duplicates */
    size_t nsections;
    char sections[MATRIX_SECTIONS][128];
    unsigned section_line[MATRIX_SECTIONS];
    size_t nkeys;
    char keys[MATRIX_KEYS][64];
    unsigned key_line[MATRIX_KEYS];
} load_t;

static int fail(load_t *l, const char *fmt, const char *a, const char *b)
{
    snprintf(l->err, sizeof l->err, fmt, a, b);
    return 0; /* libinih: stop, and return this line's number */
}

static int too_many(load_t *l, const char *what, int most)
{
    snprintf(l->err, sizeof l->err, "too many %s (at most %d)", what, most);
    return 0;
}

/* A [run] key: an option of the table, checked as its flag is. */
static int run_key(load_t *l, const char *k, const char *v)
{
    return opt_set_key(l->s, k, v, l->line, l->err, sizeof l->err) ? 0 : 1;
}

/* A new [section]: refuse it twice; a workload section becomes an entry
 * even when no key follows (the workload with its defaults). */
static int begin_section(load_t *l, const char *section)
{
    run_spec_t *s = l->s;
    for (size_t i = 0; i < l->nsections; i++)
        if (!strcmp(l->sections[i], section)) {
            snprintf(l->err, sizeof l->err, "section [%s] appears twice (first at line %u)", section,
                     l->section_line[i]);
            return 0;
        }
    if (l->nsections >= MATRIX_SECTIONS)
        return too_many(l, "sections", MATRIX_SECTIONS);
    snprintf(l->sections[l->nsections], sizeof l->sections[0], "%s", section);
    l->section_line[l->nsections++] = l->line;
    l->nkeys = 0;
    l->cur_workload = -1;
    if (!strcmp(section, "run"))
        return 1;
    if (!strncmp(section, "workload", 8) && (!section[8] || section[8] == ' ')) {
        char name[64], label[64], junk[2];
        int n = sscanf(section + 8, "%63s %63s %1s", name, label, junk);
        if (n < 1)
            return fail(l, "[workload] needs a name, e.g. [workload tensor_copy]%s%s", "", "");
        if (n > 2)
            return fail(l, "bad section [%s] (expected [workload NAME] or [workload NAME LABEL])%s", section, "");
        if (s->nw >= SPEC_MAX_WORKLOADS)
            return too_many(l, "[workload] sections", SPEC_MAX_WORKLOADS);
        if (wl_parse_spec(name, &l->args, l->err, sizeof l->err))
            return 0;
        l->cur_workload = (long)s->nw++;
        snprintf(s->workload[l->cur_workload], SPEC_TEXT, "%s:", name);
        s->wsweep[l->cur_workload][0] = '\0';
        s->wline[l->cur_workload] = l->line;
        s->wsweep_line[l->cur_workload] = 0;
        return 1;
    }
    if (!strncmp(section, "tunables", 8) && (!section[8] || section[8] == ' ')) {
        char alloc[64], junk[2];
        int n = sscanf(section + 8, "%63s %1s", alloc, junk);
        if (n != 1)
            return fail(l, "[tunables] needs one allocator, e.g. [tunables jemalloc]%s%s", "", "");
        l->alloc = alloc_find(alloc); /* NULL: a label from `allocators`, checked when resolved */
        return 1;
    }
    return fail(l, "unknown section [%s] (valid: [run], [workload NAME], [tunables ALLOCATOR])%s", section, "");
}

static int handler(load_t *l, const char *section, const char *key, const char *value)
{
    run_spec_t *s = l->s;
    for (size_t i = 0; i < l->nkeys; i++)
        if (!strcmp(l->keys[i], key)) {
            snprintf(l->err, sizeof l->err, "'%s' is set twice in [%s] (first at line %u)", key, section,
                     l->key_line[i]);
            return 0;
        }
    if (l->nkeys >= MATRIX_KEYS)
        return too_many(l, "keys in one section", MATRIX_KEYS);
    snprintf(l->keys[l->nkeys], sizeof l->keys[0], "%s", key);
    l->key_line[l->nkeys++] = l->line;
    if (!strcmp(section, "run"))
        return run_key(l, key, value);
    if (l->cur_workload >= 0) {
        char *w = s->workload[l->cur_workload];
        if (!strcmp(key, "sweep")) {
            snprintf(s->wsweep[l->cur_workload], sizeof s->wsweep[0], "%s", value);
            s->wsweep_line[l->cur_workload] = l->line;
            return 1;
        }
        /* checked here, so that an error names this line */
        char kv[SPEC_TEXT + 64];
        if (strchr(value, ',') && !wl_param_is_text(l->args.wl, key))
            return fail(l, "the value of '%s' cannot hold a comma: '%s'", key, value);
        snprintf(kv, sizeof kv, "%s=%s", key, value);
        if (wl_set(&l->args, kv, l->err, sizeof l->err))
            return 0;
        size_t len = strlen(w);
        int n = snprintf(w + len, SPEC_TEXT - len, "%s%s=%s", w[len - 1] == ':' ? "" : ",", key, value);
        if (n < 0 || (size_t)n >= SPEC_TEXT - len)
            return fail(l, "workload parameters too long%s%s", "", "");
        return 1;
    }
    /* [tunables ALLOCATOR]: every value of the list checked here */
    char vals[SPEC_TEXT], *save = NULL;
    snprintf(vals, sizeof vals, "%s", value);
    size_t nv = 0;
    for (char *v = strtok_r(vals, ",", &save); v; v = strtok_r(NULL, ",", &save), nv++) {
        char kv[SPEC_TEXT + 64];
        alloc_setting_t st;
        if (!l->alloc || !strcmp(key, HUGE_NAME))
            continue; /* huge: the harness's condition, checked with the configurations (configs.c) */
        snprintf(kv, sizeof kv, "%s=%s", key, v);
        bool dflt = !strcmp(v, "default") && alloc_find_tunable(l->alloc, key);
        if (!dflt && alloc_parse_setting(l->alloc, kv, &st, l->err, sizeof l->err))
            return 0;
    }
    if (!nv)
        return fail(l, "no value for '%s'%s", key, "");
    char alloc[64];
    sscanf(section + 8, "%63s", alloc);
    if (s->nt >= SPEC_MAX_TUNABLES)
        return too_many(l, "tunables", SPEC_MAX_TUNABLES);
    int n = snprintf(s->tunable[s->nt], SPEC_TEXT, "%s:%s=%s", alloc, key, value);
    if (n < 0 || n >= SPEC_TEXT)
        return fail(l, "tunable too long%s%s", "", "");
    s->tline[s->nt++] = l->line;
    return 1;
}

static char *trim(char *a, char *b)
{
    while (a < b && isspace((unsigned char)*a))
        a++;
    while (b > a && isspace((unsigned char)b[-1]))
        b--;
    *b = '\0';
    return a;
}

/* One line (NUL-terminated, no newline): 1 to go on, 0 on an error in l->err. */
static int parse_line(load_t *l, char *line, char *section, size_t seclen)
{
    char *p = trim(line, line + strlen(line));
    if (!*p || *p == ';' || *p == '#')
        return 1;
    /* an end-of-line comment starts with whitespace then ';' */
    for (char *c = p + 1; *c; c++)
        if (*c == ';' && isspace((unsigned char)c[-1])) {
            *c = '\0';
            p = trim(p, c);
            break;
        }
    if (*p == '[') {
        char *close = strchr(p, ']');
        if (!close)
            return fail(l, "a section name must end with ']'%s%s", "", "");
        if (close[1])
            return fail(l, "text after the section name: '%s'%s", close + 1, "");
        char *name = trim(p + 1, close);
        /* runs of blanks are one space, so "[workload  x]" is "[workload x]" */
        if (strlen(name) >= 127)
            return fail(l, "section name too long%s%s", "", "");
        char norm[128];
        size_t o = 0;
        for (char *c = name; *c; c++)
            if (!isspace((unsigned char)*c))
                norm[o++] = *c;
            else if (norm[o - 1] != ' ')
                norm[o++] = ' ';
        norm[o] = '\0';
        if (!norm[0])
            return fail(l, "empty section name []%s%s", "", "");
        snprintf(section, seclen, "%s", norm);
        return begin_section(l, section);
    }
    char *eq = strchr(p, '=');
    if (!eq)
        return fail(l, "expected [section] or key = value, not '%s'%s", p, "");
    char *value = trim(eq + 1, eq + 1 + strlen(eq + 1));
    char *key = trim(p, eq);
    if (!*key)
        return fail(l, "a key is missing before '='%s%s", "", "");
    if (strlen(key) >= 64)
        return fail(l, "key '%.40s...' too long%s", key, "");
    if (!section[0])
        return fail(l, "'%s' is outside any section (start with [run] or [workload NAME])%s", key, "");
    return handler(l, section, key, value);
}

/* Whether the n bytes at p (copied into line) are not UTF-8; *bad is where. */
static bool line_not_utf8(const char *p, size_t n, char *line, size_t *bad)
{
    memcpy(line, p, n);
    line[n] = '\0';
    return text_utf8_check(line, bad) != 0;
}

int matrix_parse(const char *name, const char *text, size_t len, run_spec_t *s, char *err, size_t errlen)
{
    load_t *l = calloc(1, sizeof *l);
    if (!l) {
        snprintf(err, errlen, "%s: out of memory", name);
        return -ENOMEM;
    }
    l->s = s;
    l->cur_workload = -1;
    s->nw = 0;
    s->nt = 0;
    s->allocators_line = s->events_line = s->pin_line = s->sweep_line = s->output_line = 0;
    char section[128] = "", line[MATRIX_LINE_MAX + 2];
    int rc = 0;
    size_t pos = 0;
    while (pos < len && !rc) {
        l->line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = (nl ? (size_t)(nl - text) : len) - pos;
        size_t bad;
        if (memchr(text + pos, '\0', n)) {
            snprintf(l->err, sizeof l->err, "a NUL byte: not a text file");
            rc = -EINVAL;
        } else if (n <= MATRIX_LINE_MAX && line_not_utf8(text + pos, n, line, &bad)) {
            /* labels, parameters and paths reach the CSV, read as UTF-8 */
            snprintf(l->err, sizeof l->err, "not UTF-8 at byte %zu of the line", bad);
            rc = -EINVAL;
        } else if (n > MATRIX_LINE_MAX) {
            snprintf(l->err, sizeof l->err, "line longer than %d bytes", MATRIX_LINE_MAX);
            rc = -EINVAL;
        } else {
            memcpy(line, text + pos, n);
            line[n] = '\0';
            if (n && line[n - 1] == '\r')
                line[n - 1] = '\0';
            if (!parse_line(l, line, section, sizeof section))
                rc = -EINVAL;
        }
        pos += n + (nl ? 1 : 0);
    }
    if (rc)
        snprintf(err, errlen, "%s:%u: %s", name, l->line, l->err);
    else if (!s->nw) {
        snprintf(err, errlen, "%s: no [workload NAME] section", name);
        rc = -EINVAL;
    }
    /* "tensor_copy:" with no parameters is "tensor_copy" */
    for (size_t i = 0; i < s->nw && !rc; i++) {
        size_t n = strlen(s->workload[i]);
        if (n && s->workload[i][n - 1] == ':')
            s->workload[i][n - 1] = '\0';
    }
    free(l);
    return rc;
}

int matrix_load(const char *path, run_spec_t *s, char *err, size_t errlen)
{
    snprintf(s->matrix, sizeof s->matrix, "%s", path);
    char *buf;
    size_t len;
    int rc = file_read_all(path, 64u << 20, &buf, &len);
    if (rc) {
        snprintf(err, errlen, rc == -ENOENT || rc == -EACCES ? "cannot open matrix '%s': %s" : "cannot read matrix '%s': %s", path,
                 rc == -EFBIG ? "larger than 64 MiB" : strerror(-rc));
        return rc;
    }
    rc = matrix_parse(path, buf, len, s, err, errlen);
    free(buf);
    return rc;
}
