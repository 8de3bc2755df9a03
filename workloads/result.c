/* result.c - the worker's result line (see result.h).  One table of fields,
 * generated from WL_RESULT_FIELDS, drives the writer, the parser and the
 * checks between them; each kind says once how it is unset, checked and
 * read back. */
#include "result.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { K_F64, K_U64, K_HEX64, K_LIT, K_TEXT } wlr_kind_t;

typedef struct {
    const char *name;
    wlr_kind_t kind;
    int with;                    /* WLR_always, WLR_optional or the field it goes with */
    size_t off, size;            /* the field in wl_report_t */
} wlr_field_t;

#define WLR_ROW(name, kind, fmt, with, col) \
    [WLR_##name] = {#name, K_##kind, WLR_##with, offsetof(wl_report_t, name), \
                    sizeof(((wl_report_t *)0)->name)},
static const wlr_field_t wlr_fields[WLR_COUNT] = {WL_RESULT_FIELDS(WLR_ROW)};
#undef WLR_ROW

_Static_assert(WLR_COUNT <= 32, "wl_report_t.present has one bit per field");
/* A field goes with an earlier one: one pass in order decides what is sent. */
#define WLR_ORDER(name, kind, fmt, with, col) \
    _Static_assert(WLR_##with < WLR_##name, "result field " #name " goes with a later field");
WL_RESULT_FIELDS(WLR_ORDER)
#undef WLR_ORDER

/* Per kind: not set yet, and why a set value cannot be sent (or NULL). */
#define WLR_UNSET_F64(x) ((x) = NAN)
#define WLR_UNSET_U64(x) ((x) = 0)
#define WLR_UNSET_HEX64(x) ((x) = 0)
#define WLR_UNSET_LIT(x) ((x) = NULL)
#define WLR_UNSET_TEXT(x) ((x)[0] = '\0')
#define WLR_ABSENT_F64(x) isnan(x)
#define WLR_ABSENT_U64(x) false
#define WLR_ABSENT_HEX64(x) false
#define WLR_ABSENT_LIT(x) (!(x) || !*(x))
#define WLR_ABSENT_TEXT(x) (!*(x))
/* Left as wl_result_init left it (a U64 of 0 may be a value, or unset). */
#define WLR_DEFAULT_F64(x) isnan(x)
#define WLR_DEFAULT_U64(x) ((x) == 0)
#define WLR_DEFAULT_HEX64(x) ((x) == 0)
#define WLR_DEFAULT_LIT(x) WLR_ABSENT_LIT(x)
#define WLR_DEFAULT_TEXT(x) WLR_ABSENT_TEXT(x)
#define WLR_CLEAR_F64(x) ((x) = NAN)           /* in wl_report_t, after a memset */
#define WLR_CLEAR_U64(x) ((void)0)
#define WLR_CLEAR_HEX64(x) ((void)0)
#define WLR_CLEAR_LIT(x) ((void)0)
#define WLR_CLEAR_TEXT(x) ((void)0)
#define WLR_BAD_F64(x, i) (isfinite(x) ? NULL : "is not a finite number")
#define WLR_BAD_U64(x, i) NULL
#define WLR_BAD_HEX64(x, i) NULL
#define WLR_BAD_LIT(x, i) wlr_bad_text(x, wlr_fields[i].size)
#define WLR_BAD_TEXT(x, i) wlr_bad_text(x, wlr_fields[i].size)

const char *wl_result_field_name(int i)
{
    return i >= 0 && i < WLR_COUNT ? wlr_fields[i].name : NULL;
}

void wl_result_init(wl_result_t *r)
{
    memset(r, 0, sizeof *r);
#define WLR_INIT(name, kind, fmt, with, col) WLR_UNSET_##kind(r->name);
    WL_RESULT_FIELDS(WLR_INIT)
#undef WLR_INIT
}

/* A string travels as one word and must fit the harness's copy. */
static const char *wlr_bad_text(const char *s, size_t size)
{
    if (strlen(s) >= size)
        return "is too long";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            return "holds a space or a control character";
    return NULL;
}

/* Which fields go on the line: always, when set, or with the field they go
 * with.  -EINVAL when one that must go is not set or cannot be written. */
static int wlr_sent(const wl_args_t *a, const wl_result_t *r, bool *sent, char *err, size_t errlen)
{
    bool absent[WLR_COUNT], dflt[WLR_COUNT];
    const char *bad[WLR_COUNT];
#define WLR_LOOK(name, kind, fmt, with, col) \
    absent[WLR_##name] = WLR_ABSENT_##kind(r->name); \
    dflt[WLR_##name] = WLR_DEFAULT_##kind(r->name); \
    bad[WLR_##name] = absent[WLR_##name] ? NULL : WLR_BAD_##kind(r->name, WLR_##name);
    WL_RESULT_FIELDS(WLR_LOOK)
#undef WLR_LOOK
    for (int i = 0; i < WLR_COUNT; i++) {
        const wlr_field_t *f = &wlr_fields[i];
        const char *with = f->with >= 0 ? wlr_fields[f->with].name : "";
        sent[i] = f->with == WLR_always || (f->with == WLR_optional ? !absent[i] : sent[f->with]);
        if (sent[i] && absent[i]) {
            snprintf(err, errlen, "workload %s: result field '%s' is not set%s%s%s", a->wl->name,
                     f->name, *with ? " (it goes with '" : "", with, *with ? "')" : "");
            return -EINVAL;
        }
        if (!sent[i] && !dflt[i] && *with) {
            snprintf(err, errlen, "workload %s: result field '%s' is set without '%s'", a->wl->name,
                     f->name, with);
            return -EINVAL;
        }
        if (sent[i] && bad[i]) {
            snprintf(err, errlen, "workload %s: result field '%s' %s", a->wl->name, f->name, bad[i]);
            return -EINVAL;
        }
    }
    return 0;
}

__attribute__((format(printf, 4, 5)))
static size_t wlr_put(char *line, size_t len, size_t off, const char *fmt, ...)
{
    if (off >= len)
        return off;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line + off, len - off, fmt, ap);
    va_end(ap);
    return n < 0 ? len : off + (size_t)n;
}

int wl_result_format(const wl_args_t *a, const wl_result_t *r, char *line, size_t len, char *err,
                     size_t errlen)
{
    bool sent[WLR_COUNT];
    int rc = wlr_sent(a, r, sent, err, errlen);
    if (rc)
        return rc;
    char params[1024];
    wl_format_args(a, ',', params, sizeof params);
    size_t off = wlr_put(line, len, 0, "result workload=%s params=%s", a->wl->name, params);
#define WLR_PUT(name, kind, fmt, with, col) \
    if (sent[WLR_##name]) \
        off = wlr_put(line, len, off, " " #name "=" fmt, r->name);
    WL_RESULT_FIELDS(WLR_PUT)
#undef WLR_PUT
    off = wlr_put(line, len, off, "\n");
    size_t cap = len < WL_RESULT_LINE_MAX ? len : WL_RESULT_LINE_MAX;
    if (off >= cap) {
        snprintf(err, errlen, "workload %s: result line longer than %zu bytes", a->wl->name, cap - 1);
        return -EINVAL;
    }
    return 0;
}

/* The value of field f into out, or why not. */
static const char *wlr_value(const wlr_field_t *f, const char *v, wl_report_t *out)
{
    char *dst = (char *)out + f->off, *end;
    size_t n = strlen(v);
    if (n == 0)
        return "is empty";
    if (f->kind == K_LIT || f->kind == K_TEXT) {
        if (n >= f->size)
            return "is too long";
        memcpy(dst, v, n + 1);
        return NULL;
    }
    if (f->kind == K_F64) {
        double d = strtod(v, &end);
        if (strspn(v, "0123456789+-.eE") != n || *end || !isfinite(d))
            return "is not a finite decimal number";
        memcpy(dst, &d, sizeof d);
        return NULL;
    }
    bool hex = f->kind == K_HEX64;
    if (strspn(v, hex ? "0123456789abcdefABCDEF" : "0123456789") != n || (hex && n > 16))
        return hex ? "is not a hex number of up to 16 digits" : "is not a non-negative integer";
    errno = 0;
    uint64_t u = strtoull(v, &end, hex ? 16 : 10);
    if (errno)
        return "is out of range";
    memcpy(dst, &u, sizeof u);
    return NULL;
}

/* Every field that must come came, and none came without its companion. */
static int wlr_complete(const wl_report_t *out, char *err, size_t errlen)
{
    for (int i = 0; i < WLR_COUNT; i++) {
        const wlr_field_t *f = &wlr_fields[i];
        bool here = out->present & WLR_BIT(i);
        bool need = f->with == WLR_always || (f->with >= 0 && (out->present & WLR_BIT(f->with)));
        if (need && !here) {
            snprintf(err, errlen, "field '%s' is missing%s%s%s", f->name,
                     f->with >= 0 ? " (it goes with '" : "",
                     f->with >= 0 ? wlr_fields[f->with].name : "", f->with >= 0 ? "')" : "");
            return -EINVAL;
        }
        if (here && !need && f->with >= 0) {
            snprintf(err, errlen, "field '%s' without '%s'", f->name, wlr_fields[f->with].name);
            return -EINVAL;
        }
    }
    return 0;
}

/* One name=value word: the envelope (workload, params) first, then fields. */
static int wlr_word(char *word, size_t k, wl_report_t *out, char *err, size_t errlen)
{
    static const char *const envelope[] = {"workload", "params"};
    char *eq = strchr(word, '=');
    if (!eq) {
        snprintf(err, errlen, "'%.60s' is not name=value", word);
        return -EINVAL;
    }
    *eq = '\0';
    const char *v = eq + 1;
    if (k < 2) {
        if (strcmp(word, envelope[k]) != 0 || (k == 0 && !*v)) {
            snprintf(err, errlen, "expected %s= as word %zu, got '%.60s='", envelope[k], k + 1, word);
            return -EINVAL;
        }
        return 0;
    }
    int i = 0;
    while (i < WLR_COUNT && strcmp(wlr_fields[i].name, word) != 0)
        i++;
    if (i == WLR_COUNT) {
        snprintf(err, errlen, "unknown field '%.60s'", word);
        return -EINVAL;
    }
    if (out->present & WLR_BIT(i)) {
        snprintf(err, errlen, "field '%s' given twice", word);
        return -EINVAL;
    }
    const char *why = wlr_value(&wlr_fields[i], v, out);
    if (why) {
        snprintf(err, errlen, "field '%s': value '%.60s' %s", word, v, why);
        return -EINVAL;
    }
    out->present |= WLR_BIT(i);
    return 0;
}

int wl_result_parse(const char *line, wl_report_t *out, char *err, size_t errlen)
{
    char buf[WL_RESULT_LINE_MAX];
    memset(out, 0, sizeof *out);
#define WLR_CLEAR(name, kind, fmt, with, col) WLR_CLEAR_##kind(out->name);
    WL_RESULT_FIELDS(WLR_CLEAR)
#undef WLR_CLEAR
    size_t len = strlen(line);
    if (len >= sizeof buf) {
        snprintf(err, errlen, "longer than %d bytes", WL_RESULT_LINE_MAX - 1);
        return -EINVAL;
    }
    if (strncmp(line, "result ", 7) != 0) {
        snprintf(err, errlen, "does not start with 'result '");
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        if ((unsigned char)line[i] < ' ' || line[i] == 0x7f) {
            snprintf(err, errlen, "control character at byte %zu", i + 1);
            return -EINVAL;
        }
    }
    memcpy(buf, line + 7, len - 6);
    size_t k = 0;
    for (char *word = buf, *next; word; word = next, k++) {
        next = strchr(word, ' ');
        if (next)
            *next++ = '\0';
        if (!*word) {
            snprintf(err, errlen, "empty word %zu (two spaces, or one at an end)", k + 1);
            return -EINVAL;
        }
        int rc = wlr_word(word, k, out, err, errlen);
        if (rc)
            return rc;
    }
    if (k < 2) {
        snprintf(err, errlen, "no params= after workload=");
        return -EINVAL;
    }
    return wlr_complete(out, err, errlen);
}
