/* launch.c - what the harness needs to launch a user's command in place of
 * the worker (contract: launch.h): its shell words split and quoted, the
 * program judged (can an allocator be preloaded into it?), and the figure
 * it prints found by a regular expression in its output. */
#include "launch.h"
#include "elfinfo.h"
#include "registry.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- words ------------------------------------------------------------------ */

static int push_word(char ***v, size_t *n, size_t *cap, const char *w, size_t len)
{
    if (*n + 2 > *cap) {
        size_t c = *cap ? *cap * 2 : 8;
        char **nv = realloc(*v, c * sizeof *nv);
        if (!nv)
            return -ENOMEM;
        *v = nv, *cap = c;
    }
    if (!((*v)[*n] = strndup(w, len)))
        return -ENOMEM;
    (*v)[++*n] = NULL;
    return 0;
}

void launch_free_words(char **v)
{
    for (char **p = v; p && *p; p++)
        free(*p);
    free(v);
}

/* One word from *pp into buf (quotes removed): 0, or -EINVAL. */
static int next_word(const char **pp, char *buf, size_t *len, char *err, size_t errlen)
{
    const char *p = *pp;
    size_t n = 0;
    while (*p && !isspace((unsigned char)*p)) {
        char q = *p;
        if (q == '\'' || q == '"') {
            const char *start = p++;
            while (*p && *p != q) {
                if (q == '"' && *p == '\\' && strchr("\"\\$`", p[1]))
                    p++;
                buf[n++] = *p++;
            }
            if (!*p) {
                snprintf(err, errlen, "unterminated %s quote in the command at '%.20s'",
                         q == '"' ? "double" : "single", start);
                return -EINVAL;
            }
            p++;
        } else if (q == '\\' && p[1]) {
            buf[n++] = p[1];
            p += 2;
        } else {
            buf[n++] = *p++;
        }
    }
    *pp = p;
    *len = n;
    return 0;
}

int launch_split(const char *cmd, char ***argvp, char *err, size_t errlen)
{
    char **v = NULL;
    size_t n = 0, cap = 0;
    char *buf = malloc(strlen(cmd) + 1);
    if (!buf)
        return -ENOMEM;
    int rc = 0;
    for (const char *p = cmd;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        size_t len;
        if ((rc = next_word(&p, buf, &len, err, errlen)) || (rc = push_word(&v, &n, &cap, buf, len)))
            break;
    }
    free(buf);
    if (!rc && n == 0) {
        snprintf(err, errlen, "no command given (exec:cmd=..., or mallocbench exec -- CMD ARGS)");
        rc = -EINVAL;
    }
    if (rc) {
        launch_free_words(v);
        return rc;
    }
    *argvp = v;
    return 0;
}

int launch_quote(char *const *argv, char *out, size_t len)
{
    static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+=/.,:@%";
    size_t off = 0;
    for (char *const *w = argv; *w; w++) {
        bool bare = **w && strspn(*w, plain) == strlen(*w);
        if (off && off < len)
            out[off++] = ' ';
        if (!bare && off < len)
            out[off++] = '\'';
        for (const char *p = *w; *p && off < len; p++) {
            if (*p == '\'') {
                const char *esc = "'\\''";
                for (; *esc && off < len; esc++)
                    out[off++] = *esc;
            } else {
                out[off++] = *p;
            }
        }
        if (!bare && off < len)
            out[off++] = '\'';
    }
    if (off >= len)
        return -ENAMETOOLONG;
    out[off] = '\0';
    return 0;
}

/* ---- can it be preloaded? ---------------------------------------------------- */

/* The family whose library "needed" is (libjemalloc.so.2 ~ libjemalloc.so*). */
static const char *allocator_of(const char *needed)
{
    size_t stem = strcspn(needed, ".");
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        for (const char *const *so = a->sonames; so && *so; so++)
            if (strcspn(*so, ".") == stem && !strncmp(*so, needed, stem) && !strncmp(needed + stem, ".so", 3))
                return a->name;
    }
    return NULL;
}

static int judge_elf(const char *path, const elf_info_t *e, char *err, size_t errlen)
{
    if (e->setid) {
        snprintf(err, errlen, "'%s' is setuid or setgid: the loader ignores LD_PRELOAD for it, so "
                 "no allocator would be swapped", path);
        return -EINVAL;
    }
    if (!e->elf)
        return 0;
    if (!e->dynamic) {
        snprintf(err, errlen, "'%s' is statically linked: nothing can be preloaded into it, so it "
                 "would run its built-in malloc under every allocator", path);
        return -EINVAL;
    }
    for (size_t i = 0; i < e->nneeded; i++) {
        const char *fam = allocator_of(e->needed[i]);
        if (fam) {
            snprintf(err, errlen, "'%s' links %s itself (%s): a preloaded allocator would not "
                     "replace it everywhere", path, fam, e->needed[i]);
            return -EINVAL;
        }
    }
    if (e->defines_malloc) {
        snprintf(err, errlen, "'%s' defines its own malloc (dynamic symbol table): its own calls "
                 "would not reach a preloaded allocator", path);
        return -EINVAL;
    }
    return 0;
}

/* Can an allocator be preloaded into the program argv[0] names?  0, or
 * -EINVAL with the reason in err: not found, a static binary, setuid or
 * setgid, or one that links an allocator of the registry or defines
 * malloc itself.  A script is judged by its interpreter. */
static int launch_check_program(const char *name, char *err, size_t errlen)
{
    char path[PATH_MAX];
    elf_info_t *e = malloc(sizeof *e);
    if (!e)
        return -ENOMEM;
    int rc = elf_which(name, path, sizeof path);
    if (rc == -EISDIR)
        snprintf(err, errlen, "'%s' is a directory, not a program", path);
    else if (rc == -EACCES)
        snprintf(err, errlen, "'%s' is not executable (no execute permission, or not a regular file)", path);
    else if (rc)
        snprintf(err, errlen, "command '%s' not found%s", name, strchr(name, '/') ? "" : " on PATH");
    if (!rc && !(rc = elf_inspect(path, e, err, errlen)) && !(rc = judge_elf(path, e, err, errlen)) &&
        e->script) {
        /* a script: what runs is its interpreter (through env(1) on PATH) */
        char interp[PATH_MAX];
        const char *base = strrchr(e->interp, '/');
        bool via_env = base && !strcmp(base + 1, "env") && e->interp_arg[0] && e->interp_arg[0] != '-';
        snprintf(interp, sizeof interp, "%s", via_env ? e->interp_arg : e->interp);
        if ((rc = elf_which(interp, path, sizeof path)))
            snprintf(err, errlen, "the interpreter '%s' of '%s' is not found", interp, name);
        else if (!(rc = elf_inspect(path, e, err, errlen)))
            rc = judge_elf(path, e, err, errlen);
    }
    free(e);
    return rc ? -EINVAL : 0;
}

/* ---- the printed figure ------------------------------------------------------ */

/* Length of the number at s[0..len) by the strict grammar
 * [-+]?(digits[.digits]|.digits)([eE][-+]?digits)?, or 0. */
static size_t number_len(const char *s, size_t len)
{
    size_t i = 0, digits = 0;
    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < len && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i + 1 < len && s[i] == '.' && isdigit((unsigned char)s[i + 1]))
        for (i++; i < len && isdigit((unsigned char)s[i]); i++)
            digits++;
    if (!digits)
        return 0;
    size_t e = i + 1;
    if (e < len && (s[e] == '-' || s[e] == '+'))
        e++;
    if (i < len && (s[i] == 'e' || s[i] == 'E') && e < len && isdigit((unsigned char)s[e])) {
        while (e < len && isdigit((unsigned char)s[e]))
            e++;
        i = e;
    }
    return i;
}

/* Does a word inf, infinity or nan (any case, signed or not) start at s[i]? */
static bool not_finite_word(const char *s, size_t i, size_t len)
{
    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    size_t n = len - i < 3 ? len - i : 3;
    if (n < 3 || (strncasecmp(s + i, "inf", 3) && strncasecmp(s + i, "nan", 3)))
        return false;
    size_t w = i + 3;
    if (!strncasecmp(s + i, "inf", 3) && len - w >= 5 && !strncasecmp(s + w, "inity", 5))
        w += 5;
    return w == len || !isalnum((unsigned char)s[w]);
}

/* A figure's magnitude: 0 or within [METRIC_MIN, METRIC_MAX], the range
 * every reader of the CSV accepts (scripts/mallocbench/mbcsv.py NUM_MIN, NUM_MAX). */
static bool in_range(double v)
{
    return v == 0 || (fabs(v) >= METRIC_MIN && fabs(v) <= METRIC_MAX);
}

/* s[0..n) (a number by number_len) as a double: 0, or -ERANGE when it is
 * not finite or its magnitude is outside the range (5e-400 is not 0). */
static int to_double(const char *s, size_t n, double *value)
{
    char buf[128];
    if (n >= sizeof buf)
        return -ERANGE;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (end != buf + n || !isfinite(v) || errno == ERANGE || !in_range(v))
        return -ERANGE;
    *value = v;
    return 0;
}

/* The first number in s[0..len): a sign counts when it does not join a
 * word ("run-3" holds 3, "x: -2.5" holds -2.5).  It must be whole: not the
 * start of 1,234 or 1.5.3, a hex 0x10, or after a Unicode minus (U+2212);
 * a unit may follow ("2ms").  0, -ENOENT (none), -EDOM (not whole), or
 * -ERANGE (inf, nan, or out of range).  *at, *n: where the number starts,
 * its length (for the message). */
static int number_in(const char *s, size_t len, double *value, size_t *at, size_t *n)
{
    for (size_t i = 0; i < len; i++) {
        bool word_before = i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.');
        bool sign = (s[i] == '-' || s[i] == '+') && !word_before;
        *at = i;
        *n = 0;
        if (!word_before && not_finite_word(s, i, len)) {
            while (i + *n < len && !isspace((unsigned char)s[i + *n]))
                (*n)++; /* the word, for the message */
            return -ERANGE;
        }
        if (!sign && !isdigit((unsigned char)s[i]) && s[i] != '.')
            continue;
        size_t k = number_len(s + i, len - i);
        if (!k)
            continue;
        *n = k;
        size_t e = i + k;
        bool grouped = e + 1 < len && (s[e] == ',' || s[e] == '.') && isdigit((unsigned char)s[e + 1]);
        bool hex = e < len && (s[e] == 'x' || s[e] == 'X') && s[e - 1] == '0' && k == 1u + sign; /* 0x, -0x */
        bool unicode_minus = i >= 3 && !memcmp(s + i - 3, "\xe2\x88\x92", 3);
        if (grouped || hex || unicode_minus) {
            while (e < len && !isspace((unsigned char)s[e]))
                e++;
            *at = unicode_minus ? i - 3 : i;
            *n = e - *at;
            return -EDOM;
        }
        return to_double(s + i, k, value);
    }
    return -ENOENT;
}

/* A group: the whole text, less ASCII white space at its ends, must be one
 * number.  0, -EDOM (anything else: separators, hex, a unit, text) or
 * -ERANGE; -ENOENT for an empty group. */
static int whole_number(const char *s, size_t len, double *value)
{
    while (len && memchr(" \t\r\v\f", s[len - 1], 5)) /* ASCII white space: a CRLF line's \r too */
        len--;
    while (len && memchr(" \t\r\v\f", *s, 5))
        s++, len--;
    if (!len)
        return -ENOENT;
    size_t i = 0;
    if (not_finite_word(s, 0, len))
        return -ERANGE;
    size_t k = number_len(s + i, len);
    if (k != len)
        return -EDOM;
    return to_double(s, k, value);
}

/* Where the text a line of output shows last lies in line[0..len): after its
 * last \r (a progress bar rewrites its line: "12.0\r15.0" shows 15.0), a
 * CRLF's \r and NULs at its end aside.  *from, *to; a terminal's overlay of
 * a longer earlier text is not emulated ("12.0\r9" is 9). */
static void line_shown(const char *line, size_t len, size_t *from, size_t *to)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == '\0'))
        len--;
    size_t f = len;
    while (f && line[f - 1] != '\r')
        f--;
    *from = f, *to = len;
}

/* What was matched, for the message: at most 60 bytes, a NUL shown as \0. */
static void quote_match(char *text, size_t textlen, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < 60 && o + 3 < textlen; i++) {
        if (s[i])
            text[o++] = s[i];
        else
            text[o++] = '\\', text[o++] = '0';
    }
    text[o] = '\0';
}

int launch_metric(const char *re, const char *out, size_t outlen, bool cut_start, bool cut_end, double *value,
                  char *text, size_t textlen)
{
    regex_t rx;
    if (regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE))
        return -EINVAL;
    char *copy = malloc(outlen + 1); /* one line's shown text, its NULs dropped */
    if (!copy) {
        regfree(&rx);
        return -ENOMEM;
    }
    int rc = -ENOENT;
    regmatch_t m[2];
    if (text && textlen)
        text[0] = '\0';
    for (size_t at = 0; at < outlen;) {
        const char *line = out + at, *nl = memchr(line, '\n', outlen - at);
        size_t linelen = nl ? (size_t)(nl - line) : outlen - at, from, to, len = 0;
        line_shown(line, linelen, &from, &to);
        for (size_t i = from; i < to; i++)
            if (line[i])
                copy[len++] = line[i];
        copy[len] = '\0';
        /* a line the window cut: its figure may have lost digits (its start is
         * whole where a \r inside the window began the text it shows) */
        bool cut = (cut_start && at == 0 && from == 0) || (cut_end && !nl);
        if (regexec(&rx, copy, 2, m, 0) == 0) {
            /* the group, whole; without one, the first number on the rest of the line */
            bool group = m[1].rm_so >= 0;
            size_t gfrom = (size_t)(group ? m[1].rm_so : m[0].rm_so);
            size_t gto = group ? (size_t)m[1].rm_eo : len;
            size_t where = 0, n = gto - gfrom;
            double v;
            int got = group ? whole_number(copy + gfrom, gto - gfrom, &v)
                            : number_in(copy + gfrom, gto - gfrom, &v, &where, &n);
            if (got != -ENOENT) { /* the last match wins */
                rc = cut ? -EMSGSIZE : got;
                if (text && textlen)
                    quote_match(text, textlen, copy + gfrom + where, n);
            }
            if (!got)
                *value = v;
        }
        at += linelen + (nl != NULL);
    }
    free(copy);
    regfree(&rx);
    return rc;
}

void launch_window_add(launch_window_t *w, const char *buf, size_t add)
{
    size_t keep = w->cap - 1, head = keep - w->head_len;
    w->total += add;
    head = head < add ? head : add;
    memcpy(w->head + w->head_len, buf, head);
    w->head_len += head;
    w->head[w->head_len] = '\0';
    if (add >= keep) {
        memcpy(w->tail, buf + add - keep, keep);
        w->tail_len = keep;
    } else {
        if (w->tail_len + add > keep) {
            size_t drop = w->tail_len + add - keep;
            memmove(w->tail, w->tail + drop, w->tail_len - drop);
            w->tail_len -= drop;
        }
        memcpy(w->tail + w->tail_len, buf, add);
        w->tail_len += add;
    }
    w->tail[w->tail_len] = '\0';
}

int launch_window_metric(const launch_window_t *w, const char *re, double *value, char *text, size_t textlen)
{
    unsigned long long tail_at = w->total - w->tail_len; /* where the tail starts in the output */
    if (tail_at <= w->head_len) {
        /* nothing was lost: the output is the head up to the tail's start, then the tail */
        size_t lead = (size_t)tail_at;
        char *all = malloc(lead + w->tail_len + 1);
        if (!all)
            return -ENOMEM;
        memcpy(all, w->head, lead);
        memcpy(all + lead, w->tail, w->tail_len);
        int rc = launch_metric(re, all, lead + w->tail_len, false, false, value, text, textlen);
        free(all);
        return rc;
    }
    int rc = launch_metric(re, w->tail, w->tail_len, true, false, value, text, textlen);
    if (rc != -ENOENT)
        return rc;
    /* none in the tail: a figure in the head is not known to be the last (the
     * output between them, or the whole of the tail's cut first line, may hold a later one) */
    double ignored;
    rc = launch_metric(re, w->head, w->head_len, false, true, &ignored, NULL, 0);
    return rc == -ENOENT || rc == -EINVAL || rc == -ENOMEM ? rc : -ENODATA;
}

/* ---- before any run ---------------------------------------------------------- */

/* The variable NAME (len bytes) is one an allocator or the probe reads? */
bool launch_is_env(const char *argv0)
{
    const char *base = strrchr(argv0, '/');
    return !strcmp(base ? base + 1 : argv0, "env");
}

/* GNU env(1)'s long options (getopt_long: any unambiguous prefix names one);
 * arg 1: a value, after '=' or in the next word; 2: only after '='. */
static const struct {
    const char *name;
    launch_env_kind_t kind;
    int arg;
} env_long[] = {
    {"ignore-environment", LAUNCH_ENV_CLEAR, 0}, {"null", LAUNCH_ENV_OTHER, 0},
    {"unset", LAUNCH_ENV_UNSET, 1},             {"chdir", LAUNCH_ENV_OTHER, 1},
    {"split-string", LAUNCH_ENV_SPLIT, 1},      {"default-signal", LAUNCH_ENV_OTHER, 2},
    {"ignore-signal", LAUNCH_ENV_OTHER, 2},     {"block-signal", LAUNCH_ENV_OTHER, 2},
    {"list-signal-handling", LAUNCH_ENV_OTHER, 0}, {"debug", LAUNCH_ENV_OTHER, 0},
    {"help", LAUNCH_ENV_OTHER, 0},              {"version", LAUNCH_ENV_OTHER, 0},
};

static void env_name(launch_env_word_t *w, const char *name, size_t len)
{
    char nv[sizeof w->name + 1];
    snprintf(w->name, sizeof w->name, "%.*s", (int)len, name);
    snprintf(nv, sizeof nv, "%s=", w->name);
    w->allocator = len < sizeof w->name - 1 && alloc_env_is_allocator_var(nv);
}

/* "--name[=value]": the option it names (an exact name, or a prefix of one
 * only), its value; an unknown or ambiguous one touches nothing (env
 * refuses it, and the command fails). */
static void env_long_word(char *const *argv, size_t i, launch_env_word_t *w)
{
    const char *a = argv[i] + 2, *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    int found = -1, matches = 0;
    for (size_t k = 0; k < sizeof env_long / sizeof *env_long; k++) {
        if (strncmp(env_long[k].name, a, len))
            continue;
        if (!env_long[k].name[len]) { /* exact */
            found = (int)k, matches = 1;
            break;
        }
        found = (int)k, matches++;
    }
    w->kind = LAUNCH_ENV_OTHER;
    if (matches != 1 || !len)
        return;
    const char *v = eq ? eq + 1 : NULL;
    if (!v && env_long[found].arg == 1 && argv[i + 1])
        v = argv[i + 1], w->words = 2;
    w->kind = env_long[found].kind;
    if (w->kind == LAUNCH_ENV_CLEAR)
        w->allocator = true;
    else if (w->kind == LAUNCH_ENV_UNSET)
        env_name(w, v ? v : "", v ? strlen(v) : 0);
    else if (w->kind == LAUNCH_ENV_SPLIT)
        w->value = v ? v : "";
}

/* "-abc": flags (-i -0 -v) up to one that takes a value (-u -C -S), whose
 * value is the rest of the word or the next word.  -i anywhere clears. */
static void env_short_word(char *const *argv, size_t i, launch_env_word_t *w)
{
    const char *a = argv[i];
    w->kind = LAUNCH_ENV_OTHER;
    for (const char *c = a + 1; *c; c++) {
        if (*c == 'i') {
            w->kind = LAUNCH_ENV_CLEAR;
            w->allocator = true;
            continue;
        }
        if (!strchr("uCS", *c))
            continue; /* -0, -v, or a letter env refuses */
        const char *v = c[1] ? c + 1 : argv[i + 1];
        if (!c[1] && argv[i + 1])
            w->words = 2;
        if (w->kind == LAUNCH_ENV_CLEAR)
            return;
        if (*c == 'u') {
            w->kind = LAUNCH_ENV_UNSET;
            env_name(w, v ? v : "", v ? strlen(v) : 0);
        } else if (*c == 'S') {
            w->kind = LAUNCH_ENV_SPLIT;
            w->value = v ? v : "";
        }
        return;
    }
}

void launch_env_word(char *const *argv, size_t i, launch_env_word_t *w)
{
    const char *a = argv[i], *v;
    memset(w, 0, sizeof *w);
    w->words = 1;
    if (!strcmp(a, "--")) {
        w->kind = LAUNCH_ENV_END;
    } else if (!strcmp(a, "-")) {
        w->kind = LAUNCH_ENV_CLEAR; /* as -i */
        w->allocator = true;
    } else if (!strncmp(a, "--", 2)) {
        env_long_word(argv, i, w);
    } else if (a[0] == '-') {
        env_short_word(argv, i, w);
    } else if ((v = strchr(a, '=')) && v != a) {
        w->kind = LAUNCH_ENV_SET;
        w->value = v + 1;
        env_name(w, a, (size_t)(v - a));
    } else {
        w->kind = LAUNCH_ENV_PROGRAM;
        w->words = 0;
    }
}

static int env_refuse(char *err, size_t errlen, const char *how, const char *what)
{
    snprintf(err, errlen, "the command %s %s through env(1): the harness sets the allocator's "
             "variables itself (-a names the allocator, -t its settings), and a program started "
             "without them would not run the configuration measured", how, what);
    return -EINVAL;
}

/* A command that runs env(1) (however nested, `env A=1 env -i prog`) must
 * not set, unset or clear a variable an allocator or the probe reads: 0,
 * or -EINVAL with the one-line reason.  The program env runs in the end
 * is returned in *prog (an index into argv). */
static int launch_check_env(char **argv, size_t *prog, char *err, size_t errlen)
{
    size_t i = 0;
    while (launch_is_env(argv[i])) {
        launch_env_word_t w = {.kind = LAUNCH_ENV_OTHER};
        for (i++; argv[i] && w.kind != LAUNCH_ENV_END && w.kind != LAUNCH_ENV_PROGRAM; i += w.words) {
            launch_env_word(argv, i, &w);
            if (w.kind == LAUNCH_ENV_CLEAR)
                return env_refuse(err, errlen, "clears the environment (LD_PRELOAD included)", "with -i");
            if (w.kind == LAUNCH_ENV_SPLIT && strchr(w.value, '='))
                return env_refuse(err, errlen, "splits a string of assignments", "(-S)");
            if (w.allocator)
                return env_refuse(err, errlen, w.kind == LAUNCH_ENV_SET ? "sets" : "unsets", w.name);
        }
        if (!argv[i]) {
            snprintf(err, errlen, "the command runs env(1) with no program: it would only print the "
                     "environment");
            return -EINVAL;
        }
    }
    *prog = i;
    return 0;
}

int launch_check_command(const char *cmd, const char *metric, char *err, size_t errlen)
{
    char **argv;
    size_t prog = 0;
    int rc = launch_split(cmd, &argv, err, errlen);
    if (rc)
        return rc;
    rc = launch_check_env(argv, &prog, err, errlen);
    if (!rc)
        rc = launch_check_program(argv[prog], err, errlen);
    launch_free_words(argv);
    return rc ? rc : launch_check_regex("exec:metric", metric, err, errlen);
}

int launch_check_regex(const char *what, const char *re, char *err, size_t errlen)
{
    regex_t rx;
    if (!*re)
        return 0;
    if (regcomp(&rx, re, REG_EXTENDED | REG_NEWLINE)) {
        snprintf(err, errlen, "%s '%s' is not an extended regular expression", what, re);
        return -EINVAL;
    }
    regfree(&rx);
    return 0;
}

const char *launch_last_line(char *buf)
{
    size_t len = strlen(buf);
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
        buf[--len] = '\0';
    char *nl = strrchr(buf, '\n');
    return nl ? nl + 1 : buf;
}
