/* csv.c - the schema table, RFC 4180 quoting and a row writer that puts
 * each row in the file with one write(), so the file is valid at any time. */
#include "csv.h"
#include "fileio.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CSV_DEF(name, type, unit, desc) {#name, type, unit, desc},
const csv_column_t csv_columns[COL_COUNT] = {CSV_COLUMNS(CSV_DEF)};
#undef CSV_DEF

/* Whether column c holds text a user or the measured program controls
 * (labels, parameters, commands, units, messages, what a library reports):
 * csv_write_row puts a ' before such a cell when a spreadsheet would read
 * it as a formula (text_needs_guard: = + - @ tab CR, never a plain number);
 * scripts/mallocbench/mbcsv.py drops it again on exactly these columns ("guarded" in
 * `mallocbench schema --json`).  MALLOCBENCH_CSV_RAW=1 in the environment
 * writes such cells as given (a leading ' is still doubled, so that the
 * reader gives every value back).  docs/output.md. */
static bool csv_column_guarded(csv_col_t c)
{
    switch (c) {
    case COL_host: case COL_workload_params: case COL_config: case COL_lib_path: case COL_alloc_version:
    case COL_malloc_so: case COL_requested_tunables: case COL_effective_tunables: case COL_message:
    case COL_throughput_unit: case COL_metric: case COL_workload_metrics: case COL_alloc_stats:
    case COL_counter_notes:
        return true;
    default:
        return false; /* numbers, and text the harness picks from a fixed set */
    }
}

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

/* Remember what kind of file the writer has: a regular file can be cut back
 * after a short write, a pipe or a device cannot. */
static void writer_init(csv_writer_t *w, int fd, const char *const *extra_names, size_t nextra)
{
    struct stat st;
    w->fd = fd;
    w->regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const char *raw = getenv("MALLOCBENCH_CSV_RAW");
    w->raw = raw && *raw && strcmp(raw, "0") != 0;
    w->nextra = nextra;
    for (size_t i = 0; i < nextra; i++)
        snprintf(w->extra_names[i], sizeof w->extra_names[i], "%s", extra_names[i]);
}

/* Put one whole line (newline included) in the file with one write() where
 * the kernel allows; if any part of it fails, cut a regular file back to
 * where the line began, so the file never ends in half a row. */
static int write_line(csv_writer_t *w, const char *line, size_t len)
{
    off_t start = w->regular ? lseek(w->fd, 0, SEEK_END) : -1;
    int rc = write_all(w->fd, line, len);
    if (rc && start >= 0) {
        int saved = rc;
        while (ftruncate(w->fd, start) < 0 && errno == EINTR)
            ;
        rc = saved;
    }
    return rc;
}

int csv_open_fd(csv_writer_t *w, int fd, const char *const *extra_names, size_t nextra)
{
    w->fd = -1;
    if (nextra > CSV_EXTRA_MAX) {
        close(fd);
        return -E2BIG;
    }
    char *line = header_line(extra_names, nextra);
    if (!line) {
        close(fd);
        return -ENOMEM;
    }
    writer_init(w, fd, extra_names, nextra);
    size_t len = strlen(line);
    line[len++] = '\n'; /* header_line leaves room: line_add reserves 2 bytes */
    int rc = write_line(w, line, len);
    free(line);
    if (rc) {
        close(w->fd);
        w->fd = -1;
    }
    return rc;
}

int csv_open(csv_writer_t *w, const char *path, const char *const *extra_names, size_t nextra)
{
    w->fd = -1;
    if (nextra > CSV_EXTRA_MAX)
        return -E2BIG;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    return csv_open_fd(w, fd, extra_names, nextra);
}

int csv_write_row(csv_writer_t *w, const csv_row_t *r)
{
    char *line = NULL;
    size_t len = 0, cap = 0;
    int rc = 0;
    char guarded[CSV_FIELD_MAX + 1];
    for (size_t i = 0; i < COL_COUNT && !rc; i++) {
        const char *f = r->field[i];
        if (csv_column_guarded((csv_col_t)i) && text_needs_guard(f, w->raw)) {
            snprintf(guarded, sizeof guarded, "'%s", f); /* fields hold < CSV_FIELD_MAX bytes */
            f = guarded;
        }
        rc = line_add(&line, &len, &cap, f, i == 0);
    }
    for (size_t i = 0; i < w->nextra && !rc; i++)
        rc = line_add(&line, &len, &cap, i < r->nextra ? r->extra[i] : "", 0);
    if (!rc) {
        line[len++] = '\n';
        rc = write_line(w, line, len);
    }
    free(line);
    return rc;
}

/* Split one record starting at *p (may span lines inside quotes) into
 * *fields.  -EPROTO when a quoted field is not closed before the end of the
 * text or is followed by anything but a comma or the end of the line. */
static int parse_record(char **p, char ***fields, size_t *nf)
{
    size_t cap = 16, n = 0;
    char **f = malloc(cap * sizeof *f);
    char *field = NULL;
    int rc = 0;
    if (!f)
        return -ENOMEM;
    char *s = *p;
    for (;;) {
        size_t fcap = 64, flen = 0;
        field = malloc(fcap);
        if (!field) {
            rc = -ENOMEM;
            goto fail;
        }
        bool quoted = *s == '"', closed = false;
        if (quoted)
            s++;
        for (;;) {
            char c = *s;
            if (!c)
                break;
            if (closed) {
                if (c != ',' && c != '\n' && c != '\r') {
                    rc = -EPROTO;
                    goto fail;
                }
                break;
            }
            if (quoted) {
                if (c == '"' && s[1] == '"') {
                    s += 2;
                } else if (c == '"') {
                    s++;
                    closed = true;
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
                    rc = -ENOMEM;
                    goto fail;
                }
                field = nfield;
            }
            field[flen++] = c;
        }
        if (quoted && !closed) {
            rc = -EPROTO;
            goto fail;
        }
        field[flen] = '\0';
        if (n == cap) {
            char **nf2 = realloc(f, (cap *= 2) * sizeof *f);
            if (!nf2) {
                rc = -ENOMEM;
                goto fail;
            }
            f = nf2;
        }
        f[n++] = field;
        field = NULL;
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
fail:
    free(field);
    for (size_t i = 0; i < n; i++)
        free(f[i]);
    free(f);
    return rc;
}

static void free_fields(char **f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(f[i]);
    free(f);
}

/* Lines from the start of text to p, for messages. */
static size_t line_of(const char *text, const char *p)
{
    size_t line = 1;
    for (const char *q = text; q < p; q++)
        line += *q == '\n';
    return line;
}

/* The parser behind csv_parse and csv_read.  With torn_ok a last record
 * that the text cuts short (no final newline and too few fields, or an
 * open quote) is left out and its length put in t->torn_bytes: what a
 * writer killed in the middle of a row, or a full disk, leaves behind. */
static int parse_text(const char *name, const char *buf, size_t len, bool torn_ok, csv_table_t *t,
                      char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        snprintf(err, errlen, "%s: byte %zu is a NUL: not a text CSV file", name, (size_t)(nul - buf));
        return -EPROTO;
    }
    char *text = malloc(len + 1);
    if (!text) {
        snprintf(err, errlen, "cannot read '%s': out of memory", name);
        return -ENOMEM;
    }
    memcpy(text, buf, len);
    text[len] = '\0';
    char *p = text;
    int rc = 0;
    if (!*p) {
        snprintf(err, errlen, "'%s' is empty or not CSV", name);
        rc = -EPROTO;
        goto out;
    }
    t->header_line = strndup(text, strcspn(text, "\r\n"));
    rc = t->header_line ? parse_record(&p, &t->header, &t->ncols) : -ENOMEM;
    if (rc) {
        snprintf(err, errlen, rc == -ENOMEM ? "cannot read '%s': out of memory"
                                            : "'%s': the header is not CSV (a quote is not closed)", name);
        goto out;
    }
    size_t rcap = 64;
    t->rows = malloc(rcap * sizeof *t->rows);
    if (!t->rows) {
        snprintf(err, errlen, "cannot read '%s': out of memory", name);
        rc = -ENOMEM;
        goto out;
    }
    while (*p) {
        char *start = p;
        char **fields;
        size_t nf;
        rc = parse_record(&p, &fields, &nf);
        bool last = !*p, ended = p > start && (p[-1] == '\n' || p[-1] == '\r');
        if (rc == -ENOMEM) {
            snprintf(err, errlen, "cannot read '%s': out of memory", name);
            goto out;
        }
        if (!rc && nf == 1 && !fields[0][0]) { /* blank line */
            free_fields(fields, nf);
            continue;
        }
        if ((rc || nf < t->ncols) && last && !ended && torn_ok) {
            if (!rc)
                free_fields(fields, nf);
            t->torn_bytes = (size_t)(p - start) + strlen(p);
            rc = 0;
            break;
        }
        if (rc) {
            snprintf(err, errlen, "%s: row %zu (line %zu): a quoted field is not closed", name, t->nrows + 1,
                     line_of(text, start));
            goto out;
        }
        if (nf != t->ncols) {
            snprintf(err, errlen, "%s: row %zu (line %zu) has %zu fields, the header %zu", name, t->nrows + 1,
                     line_of(text, start), nf, t->ncols);
            free_fields(fields, nf);
            rc = -EPROTO;
            goto out;
        }
        if (t->nrows == rcap) {
            char ***nr = realloc(t->rows, (rcap *= 2) * sizeof *t->rows);
            if (!nr) {
                free_fields(fields, nf);
                snprintf(err, errlen, "cannot read '%s': out of memory", name);
                rc = -ENOMEM;
                goto out;
            }
            t->rows = nr;
        }
        t->rows[t->nrows++] = fields;
        t->ends_with_newline = ended;
    }
out:
    free(text);
    if (rc)
        csv_table_free(t);
    return rc;
}

int csv_parse(const char *name, const char *buf, size_t len, csv_table_t *t, char *err, size_t errlen)
{
    return parse_text(name, buf, len, false, t, err, errlen);
}

static int read_file(const char *path, bool torn_ok, csv_table_t *t, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    memset(t, 0, sizeof *t);
    int rc = file_read_all(path, (size_t)1 << 32, &buf, &len);
    if (rc) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-rc));
        return rc;
    }
    rc = parse_text(path, buf, len, torn_ok, t, err, errlen);
    free(buf);
    return rc;
}

int csv_read(const char *path, csv_table_t *t, char *err, size_t errlen)
{
    return read_file(path, false, t, err, errlen);
}

int csv_read_torn(const char *path, csv_table_t *t, char *err, size_t errlen)
{
    return read_file(path, true, t, err, errlen);
}

int csv_continue(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int rc = -errno;
        if (rc != -ENOENT)
            snprintf(err, errlen, "cannot continue '%s': %s", path,
                     rc == -ELOOP ? "it is a symbolic link" : strerror(-rc));
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        snprintf(err, errlen, "cannot continue '%s': %s", path,
                 S_ISREG(st.st_mode) ? "it has other names (hard links)" : "not a regular file");
        close(fd);
        return -EMLINK;
    }
    return fd;
}

int csv_open_append(csv_writer_t *w, const char *path, const char *const *extra_names, size_t nextra,
                    char *err, size_t errlen)
{
    w->fd = -1;
    w->repaired_bytes = 0;
    w->added_newline = false;
    if (nextra > CSV_EXTRA_MAX)
        return -E2BIG;
    /* an empty file (a start that failed before its header) continues with a header */
    int fd = csv_continue(path, err, errlen);
    if (fd == -ENOENT)
        snprintf(err, errlen, "cannot continue '%s': %s", path, strerror(ENOENT));
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st)) {
        int rc = -errno;
        close(fd);
        snprintf(err, errlen, "cannot continue '%s': %s", path, strerror(-rc));
        return rc;
    }
    if (st.st_size == 0) {
        int hrc = csv_open_fd(w, fd, extra_names, nextra);
        if (hrc)
            snprintf(err, errlen, "cannot write '%s': %s", path, strerror(-hrc));
        return hrc;
    }
    csv_table_t t;
    int rc = csv_read_torn(path, &t, err, errlen);
    if (rc) {
        close(fd);
        return rc;
    }
    char *want = header_line(extra_names, nextra);
    if (!want) {
        csv_table_free(&t);
        close(fd);
        snprintf(err, errlen, "cannot resume '%s': out of memory", path);
        return -ENOMEM;
    }
    if (strcmp(t.header_line, want) != 0) {
        snprintf(err, errlen, "cannot resume '%s': its columns differ from this run's "
                 "(another schema version or other --events)", path);
        rc = -EPROTO;
    }
    free(want);
    size_t torn = t.torn_bytes;
    bool newline = t.nrows ? !t.ends_with_newline : false;
    csv_table_free(&t);
    if (rc) {
        close(fd);
        return rc;
    }
    writer_init(w, fd, extra_names, nextra);
    /* a row cut short by a kill or a full disk is dropped (its sample runs
     * again); a last row without its newline gets one, so rows never glue */
    off_t size = lseek(fd, 0, SEEK_END);
    if (torn && size >= (off_t)torn && ftruncate(fd, size - (off_t)torn) == 0)
        w->repaired_bytes = torn;
    else if (torn)
        rc = errno ? -errno : -EIO;
    if (!rc && newline) {
        rc = write_all(fd, "\n", 1);
        w->added_newline = rc == 0;
    }
    if (rc) {
        snprintf(err, errlen, "cannot repair the end of '%s': %s", path, strerror(-rc));
        close(fd);
        w->fd = -1;
    }
    return rc;
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
        rc = write_line(w, line, len);
    }
    free(line);
    return rc;
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

void csv_print_schema_json(FILE *out)
{
    fprintf(out, "{\n  \"schema_version\": ");
    text_json_write(out, CSV_SCHEMA_VERSION);
    fprintf(out, ",\n  \"columns\": [\n");
    for (size_t i = 0; i < COL_COUNT; i++) {
        fprintf(out, "    {\"name\": ");
        text_json_write(out, csv_columns[i].name);
        fprintf(out, ", \"type\": \"%s\", \"unit\": ", csv_columns[i].type == CSV_NUM ? "number" : "text");
        text_json_write(out, csv_columns[i].unit);
        fprintf(out, ", \"meaning\": ");
        text_json_write(out, csv_columns[i].desc);
        fprintf(out, ", \"guarded\": %s}%s\n", csv_column_guarded((csv_col_t)i) ? "true" : "false",
                i + 1 < COL_COUNT ? "," : "");
    }
    fprintf(out, "  ]\n}\n");
}
