/* units.c - table-driven parsing and printing of sizes and durations.
 * Every parser checks the whole string: "16Mx" and "" are errors. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *suffix;
    double scale;
} unit_t;

static const unit_t size_units[] = {
    {"", 1.0}, {"b", 1.0},
    {"k", 1024.0}, {"kb", 1024.0}, {"kib", 1024.0},
    {"m", 1048576.0}, {"mb", 1048576.0}, {"mib", 1048576.0},
    {"g", 1073741824.0}, {"gb", 1073741824.0}, {"gib", 1073741824.0},
    {"t", 1099511627776.0}, {"tb", 1099511627776.0}, {"tib", 1099511627776.0},
};

static const unit_t time_units[] = {
    {"", 1.0}, {"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"m", 60.0}, {"min", 60.0},
    {"h", 3600.0},
};

static const unit_t *unit_find(const unit_t *tab, size_t n, const char *suffix)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(tab[i].suffix, suffix) == 0)
            return &tab[i];
    return NULL;
}

/* Split "<number><suffix>" and check the number has digits only. */
static int split_number(const char *s, double *num, const char **suffix)
{
    if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
        return -EINVAL;
    const char *p = s;
    int digits = 0;
    while (isdigit((unsigned char)*p)) { p++; digits++; }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) { p++; digits++; }
    }
    if (!digits)
        return -EINVAL;
    char buf[64];
    size_t len = (size_t)(p - s);
    if (len >= sizeof buf)
        return -ERANGE;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    *num = strtod(buf, NULL);
    if (errno)
        return -ERANGE;
    *suffix = p;
    return 0;
}

int units_parse_size(const char *s, uint64_t *out)
{
    double num;
    const char *suffix;
    int rc = split_number(s, &num, &suffix);
    if (rc)
        return rc;
    const unit_t *u = unit_find(size_units, sizeof size_units / sizeof *size_units, suffix);
    if (!u)
        return -EINVAL;
    if (!strchr(s, '.')) {
        /* Whole numbers are exact, beyond 2^53 too. */
        char digits[32];
        size_t len = (size_t)(suffix - s);
        if (len >= sizeof digits)
            return -ERANGE;
        memcpy(digits, s, len);
        digits[len] = '\0';
        uint64_t v;
        rc = units_parse_u64(digits, &v);
        if (rc)
            return rc;
        uint64_t scale = (uint64_t)u->scale;
        if (v && scale > UINT64_MAX / v)
            return -ERANGE;
        *out = v * scale;
        return 0;
    }
    double bytes = num * u->scale;
    if (bytes >= 18446744073709551616.0)
        return -ERANGE;
    if (bytes != floor(bytes))
        return -EINVAL;
    *out = (uint64_t)bytes;
    return 0;
}

int units_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !isdigit((unsigned char)*s))
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

int units_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return -EINVAL;
    const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
    if (!isdigit((unsigned char)*d))
        return -EINVAL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end)
        return -EINVAL;
    *out = v;
    return 0;
}

int units_parse_double(const char *s, double *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return -EINVAL;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno == ERANGE)
        return -ERANGE;
    if (*end || !isfinite(v))
        return -EINVAL;
    *out = v;
    return 0;
}

int units_parse_duration(const char *s, double *seconds)
{
    double num;
    const char *suffix;
    int rc = split_number(s, &num, &suffix);
    if (rc)
        return rc;
    const unit_t *u = unit_find(time_units, sizeof time_units / sizeof *time_units, suffix);
    if (!u)
        return -EINVAL;
    *seconds = num * u->scale;
    return 0;
}

void units_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const struct { const char *suffix; uint64_t scale; } fmt[] = {
        {"T", 1ULL << 40}, {"G", 1ULL << 30}, {"M", 1ULL << 20}, {"K", 1ULL << 10},
    };
    for (size_t i = 0; i < sizeof fmt / sizeof *fmt; i++) {
        if (bytes && bytes % fmt[i].scale == 0) {
            snprintf(buf, len, "%llu%s", (unsigned long long)(bytes / fmt[i].scale), fmt[i].suffix);
            return;
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)bytes);
}

int units_parse_choice(const char *choices, const char *s, uint64_t *index)
{
    size_t n = strlen(s);
    uint64_t idx = 0;
    for (const char *p = choices; p && *p; idx++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0) {
            *index = idx;
            return 0;
        }
        p = bar ? bar + 1 : NULL;
    }
    return -EINVAL;
}

void units_choice_name(const char *choices, uint64_t index, char *buf, size_t len)
{
    const char *p = choices;
    for (uint64_t i = 0; i < index && p; i++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p || !*p) {
        snprintf(buf, len, "?");
        return;
    }
    const char *bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    snprintf(buf, len, "%.*s", (int)n, p);
}
