/* csv.c - the schema table, RFC 4180 quoting and a row writer that puts
 * each row in the file with one write(), so the file is valid at any time. */
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CSV_DEF(name, unit, desc) {#name, unit, desc},
const csv_column_t csv_columns[COL_COUNT] = {CSV_COLUMNS(CSV_DEF)};
#undef CSV_DEF

void csv_quote(const char *in, char *out, size_t len)
{
    if (len == 0)
        return;
    if (!strpbrk(in, ",\"\r\n")) {
        snprintf(out, len, "%s", in);
        return;
    }
    size_t o = 0;
    out[o++] = '"';
    for (const char *p = in; *p && o + 3 < len; p++) {
        if (*p == '"')
            out[o++] = '"';
        out[o++] = *p;
    }
    if (o + 1 < len)
        out[o++] = '"';
    out[o] = '\0';
}

void csv_row_clear(csv_row_t *r)
{
    for (size_t i = 0; i < COL_COUNT; i++)
        r->field[i][0] = '\0';
    r->nextra = 0;
}

void csv_set(csv_row_t *r, csv_col_t c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->field[c], CSV_FIELD_MAX, fmt, ap);
    va_end(ap);
}

static int write_all(int fd, const char *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        off += (size_t)n;
    }
    return 0;
}

/* Append a quoted field to a growing line. */
static int line_add(char **line, size_t *len, size_t *cap, const char *field, int first)
{
    size_t need = strlen(field) * 2 + 4;
    if (*len + need + 2 > *cap) {
        size_t ncap = (*cap + need) * 2;
        char *n = realloc(*line, ncap);
        if (!n)
            return -ENOMEM;
        *line = n;
        *cap = ncap;
    }
    if (!first)
        (*line)[(*len)++] = ',';
    csv_quote(field, *line + *len, *cap - *len);
    *len += strlen(*line + *len);
    return 0;
}

/* The header line csv_open writes, without the newline; caller frees. */
static char *header_line(const char *const *extra_names, size_t nextra)
{
    char *line = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < COL_COUNT && !rc; i++)
        rc = line_add(&line, &len, &cap, csv_columns[i].name, i == 0);
    for (size_t i = 0; i < nextra && !rc; i++)
        rc = line_add(&line, &len, &cap, extra_names[i], 0);
    if (rc) {
        free(line);
        return NULL;
    }
    return line;
}

int csv_open(csv_writer_t *w, const char *path, const char *const *extra_names, size_t nextra)
{
    if (nextra > CSV_EXTRA_MAX)
        return -E2BIG;
    char *line = header_line(extra_names, nextra);
    if (!line)
        return -ENOMEM;
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        int rc = -errno;
        free(line);
        return rc;
    }
    w->nextra = nextra;
    for (size_t i = 0; i < nextra; i++)
        snprintf(w->extra_names[i], sizeof w->extra_names[i], "%s", extra_names[i]);
    size_t len = strlen(line);
    line[len++] = '\n'; /* header_line leaves room: line_add reserves 2 bytes */
    int rc = write_all(w->fd, line, len);
    free(line);
    if (rc) {
        close(w->fd);
        w->fd = -1;
    }
    return rc;
}

int csv_write_row(csv_writer_t *w, const csv_row_t *r)
{
    char *line = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < COL_COUNT && !rc; i++)
        rc = line_add(&line, &len, &cap, r->field[i], i == 0);
    for (size_t i = 0; i < w->nextra && !rc; i++)
        rc = line_add(&line, &len, &cap, i < r->nextra ? r->extra[i] : "", 0);
    if (!rc) {
        line[len++] = '\n';
        rc = write_all(w->fd, line, len);
    }
    free(line);
    return rc;
}

int csv_open_append(csv_writer_t *w, const char *path, const char *const *extra_names, size_t nextra,
                    char *err, size_t errlen)
{
    if (nextra > CSV_EXTRA_MAX)
        return -E2BIG;
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "cannot resume '%s': %s", path, strerror(errno));
        return -errno;
    }
    char *have = NULL;
    size_t cap = 0;
    ssize_t n = getline(&have, &cap, f);
    fclose(f);
    char *want = header_line(extra_names, nextra);
    int rc = 0;
    if (n <= 0 || !want) {
        snprintf(err, errlen, "cannot resume '%s': it has no header", path);
        rc = -EPROTO;
    } else {
        have[strcspn(have, "\r\n")] = '\0';
        if (strcmp(have, want) != 0) {
            snprintf(err, errlen, "cannot resume '%s': its columns differ from this run's "
                     "(another schema version or other --events)", path);
            rc = -EPROTO;
        }
    }
    free(have);
    free(want);
    if (rc)
        return rc;
    w->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (w->fd < 0) {
        snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
        return -errno;
    }
    w->nextra = nextra;
    for (size_t i = 0; i < nextra; i++)
        snprintf(w->extra_names[i], sizeof w->extra_names[i], "%s", extra_names[i]);
    return 0;
}

int csv_write_fields(csv_writer_t *w, char *const *fields, size_t n)
{
    char *line = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++)
        rc = line_add(&line, &len, &cap, fields[i] ? fields[i] : "", i == 0);
    if (!rc) {
        if (!line && (rc = line_add(&line, &len, &cap, "", 1)))
            return rc;
        line[len++] = '\n';
        rc = write_all(w->fd, line, len);
    }
    free(line);
    return rc;
}

/* Split one record starting at *p (may span lines inside quotes). */
static int parse_record(char **p, char ***fields, size_t *nf)
{
    size_t cap = 16, n = 0;
    char **f = malloc(cap * sizeof *f);
    if (!f)
        return -ENOMEM;
    char *s = *p;
    for (;;) {
        size_t fcap = 64, flen = 0;
        char *field = malloc(fcap);
        if (!field)
            return -ENOMEM;
        bool quoted = *s == '"';
        if (quoted)
            s++;
        for (;;) {
            char c = *s;
            if (!c)
                break;
            if (quoted) {
                if (c == '"' && s[1] == '"') {
                    s += 2;
                } else if (c == '"') {
                    s++;
                    quoted = false;
                    continue;
                } else {
                    s++;
                }
            } else {
                if (c == ',' || c == '\n' || c == '\r')
                    break;
                s++;
            }
            if (flen + 2 > fcap) {
                char *nfield = realloc(field, fcap *= 2);
                if (!nfield) {
                    free(field);
                    return -ENOMEM;
                }
                field = nfield;
            }
            field[flen++] = c;
        }
        field[flen] = '\0';
        if (n == cap) {
            char **nf2 = realloc(f, (cap *= 2) * sizeof *f);
            if (!nf2)
                return -ENOMEM;
            f = nf2;
        }
        f[n++] = field;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r')
            s++;
        if (*s == '\n')
            s++;
        break;
    }
    *p = s;
    *fields = f;
    *nf = n;
    return 0;
}

int csv_read(const char *path, csv_table_t *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return -errno;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 >= cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "cannot read '%s': out of memory", path);
        return -ENOMEM;
    }
    buf[len] = '\0';
    char *p = buf;
    char *nl = strchr(buf, '\n');
    t->header_line = strndup(buf, nl ? (size_t)(nl - buf) : len);
    if (!*p || parse_record(&p, &t->header, &t->ncols) || !t->header_line) {
        snprintf(err, errlen, "'%s' is empty or not CSV", path);
        free(buf);
        return -EPROTO;
    }
    size_t rcap = 64;
    t->rows = malloc(rcap * sizeof *t->rows);
    while (*p && t->rows) {
        char **fields;
        size_t nf;
        if (parse_record(&p, &fields, &nf)) {
            free(buf);
            return -ENOMEM;
        }
        if (nf == 1 && !fields[0][0]) { /* blank line */
            free(fields[0]);
            free(fields);
            continue;
        }
        if (nf != t->ncols) {
            snprintf(err, errlen, "%s: row %zu has %zu fields, the header %zu", path, t->nrows + 1, nf,
                     t->ncols);
            for (size_t i = 0; i < nf; i++)
                free(fields[i]);
            free(fields);
            free(buf);
            return -EPROTO;
        }
        if (t->nrows == rcap) {
            char ***nr = realloc(t->rows, (rcap *= 2) * sizeof *t->rows);
            if (!nr) {
                free(buf);
                return -ENOMEM;
            }
            t->rows = nr;
        }
        t->rows[t->nrows++] = fields;
    }
    free(buf);
    return 0;
}

void csv_table_free(csv_table_t *t)
{
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++)
            free(t->rows[r][c]);
        free(t->rows[r]);
    }
    for (size_t c = 0; c < t->ncols; c++)
        free(t->header[c]);
    free(t->header);
    free(t->rows);
    free(t->header_line);
    memset(t, 0, sizeof *t);
}

int csv_col(const csv_table_t *t, const char *name)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (!strcmp(t->header[c], name))
            return (int)c;
    return -1;
}

void csv_close(csv_writer_t *w)
{
    if (w->fd >= 0)
        close(w->fd);
    w->fd = -1;
}

void csv_print_schema(FILE *out)
{
    fprintf(out, "# mallocbench CSV schema, version %s\n\n", CSV_SCHEMA_VERSION);
    fprintf(out, "Generated by `mallocbench schema`; do not edit by hand (a test compares them).\n\n");
    fprintf(out, "One row per process run (sample). An empty field means *not measured*: the row's\n"
                 "`status`/`message` or `counter_notes` says why; it never means 0. Columns that\n"
                 "start with `total_` cover the whole process, from exec to exit, as `perf stat` of\n"
                 "the printed command would; columns that start with `region_` cover only the\n"
                 "measured region after warm-up.\n\n");
    fprintf(out, "| column | unit | meaning |\n|---|---|---|\n");
    for (size_t i = 0; i < COL_COUNT; i++)
        fprintf(out, "| `%s` | %s | %s |\n", csv_columns[i].name, csv_columns[i].unit,
                csv_columns[i].desc);
    fprintf(out,
            "\nWith `--events E1,E2`, each extra event adds three columns at the end:\n"
            "`total_<E>` (count over the whole process, scaled if multiplexed),\n"
            "`region_<E>` (over the measured region) and `note_<E>` (empty, `scaled x<ratio>`,\n"
            "or why it was not counted, e.g. `not supported: ...` on a machine without a PMU).\n"
            "\nBeside `<name>.csv` the run writes `<name>.meta.json` (machine, kernel, THP mode,\n"
            "glibc, perf_event_paranoid, git commit, command line) and `<name>.rss.csv`\n"
            "(`run_id,sample,t_s,rss_kib`: the RSS time series of every sample).\n");
}
