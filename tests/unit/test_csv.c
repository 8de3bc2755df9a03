/* test_csv.c - RFC 4180 quoting, the header from the one column table, and
 * rows that land whole in the file, each in one write(). */
#include "../check.h"
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* One row, one write(): through a packet-mode pipe (O_DIRECT: each write()
 * is one packet and each read() returns one), a row of ~2 KiB (under
 * PIPE_BUF, which the kernel never splits) must come back from one read()
 * whole, ending in its newline. */
static void test_one_write(void)
{
    int p[2];
    if (pipe2(p, O_DIRECT | O_CLOEXEC)) {
        fprintf(stderr, "SKIP one-write check: pipe2(O_DIRECT): %s\n", strerror(errno));
        return;
    }
    csv_writer_t w;
    memset(&w, 0, sizeof w);
    w.fd = p[1];
    w.nextra = 0;
    csv_row_t *r = malloc(sizeof *r);
    csv_row_clear(r);
    char msg[2000];
    memset(msg, 'm', sizeof msg - 1);
    msg[sizeof msg - 1] = '\0';
    msg[100] = ',';                                   /* quoted */
    csv_set(r, COL_schema_version, "%s", CSV_SCHEMA_VERSION);
    csv_set(r, COL_message, "%s", msg);
    csv_set(r, COL_counter_notes, "%s", "last");
    CHECK_INT(csv_write_row(&w, r), 0);
    CHECK_INT(csv_write_row(&w, r), 0);
    close(p[1]);
    static char buf[65536];
    for (int row = 0; row < 2; row++) {
        ssize_t n = read(p[0], buf, sizeof buf);      /* one packet */
        CHECK(n > 0);
        if (n <= 0)
            break;
        fprintf(stderr, "row %d: one read() of %zd bytes\n", row, n);
        CHECK(n > (ssize_t)sizeof msg && n < 4096);
        CHECK_INT(buf[n - 1], '\n');
        CHECK(memchr(buf, '\n', (size_t)n - 1) == NULL);
        CHECK(strncmp(buf, CSV_SCHEMA_VERSION ",", 2) == 0);
        CHECK(memmem(buf, (size_t)n, ",last", 5) != NULL);  /* the field after the long one */
    }
    CHECK_INT(read(p[0], buf, sizeof buf), 0);         /* nothing more */
    close(p[0]);
    free(r);
}

/* The reader on fields of every length up to 300 bytes (each power of two and its
 * neighbours among them), bare and quoted: each read back whole, nothing written past
 * the field's room (the sanitizer build runs this). */
static void test_field_lengths(void)
{
    enum { MAXLEN = 300 };
    size_t cap = 16 + MAXLEN * (2 * MAXLEN + 8);
    char *text = malloc(cap), *want = malloc(MAXLEN + 1);
    size_t n = (size_t)snprintf(text, cap, "bare,quoted\n");
    for (size_t len = 1; len <= MAXLEN; len++) {
        memset(want, 'a' + (int)(len % 26), len);
        want[len] = '\0';
        n += (size_t)snprintf(text + n, cap - n, "%s,\"%s\"\n", want, want);
    }
    csv_table_t t;
    char err[256];
    CHECK_INT(csv_parse("lengths", text, n, &t, err, sizeof err), 0);
    CHECK_INT(t.nrows, MAXLEN);
    for (size_t len = 1; len <= MAXLEN && len <= t.nrows; len++) {
        memset(want, 'a' + (int)(len % 26), len);
        want[len] = '\0';
        CHECK_STR(t.rows[len - 1][0], want);
        CHECK_STR(t.rows[len - 1][1], want);
    }
    csv_table_free(&t);
    free(text);
    free(want);
}

int main(void)
{
    char out[256];
    csv_quote("plain", out, sizeof out); CHECK_STR(out, "plain");
    csv_quote("a,b", out, sizeof out); CHECK_STR(out, "\"a,b\"");
    csv_quote("say \"hi\"", out, sizeof out); CHECK_STR(out, "\"say \"\"hi\"\"\"");
    csv_quote("two\nlines", out, sizeof out); CHECK_STR(out, "\"two\nlines\"");
    csv_quote("", out, sizeof out); CHECK_STR(out, "");
    /* a bare CR ends a record for many readers: quoted like LF */
    csv_quote("cr\ronly", out, sizeof out); CHECK_STR(out, "\"cr\ronly\"");
    csv_quote("\r", out, sizeof out); CHECK_STR(out, "\"\r\"");

    CHECK_STR(csv_columns[0].name, "schema_version");
    CHECK_STR(csv_columns[COL_status].name, "status");
    for (size_t i = 0; i < COL_COUNT; i++)
        for (size_t k = i + 1; k < COL_COUNT; k++)
            CHECK(strcmp(csv_columns[i].name, csv_columns[k].name) != 0);

    char path[] = "/tmp/mb-test-csv-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    csv_writer_t w;
    const char *extra[] = {"total_cycles"};
    CHECK_INT(csv_open(&w, path, extra, 1), 0);
    csv_row_t *r = malloc(sizeof *r);
    csv_row_clear(r);
    csv_set(r, COL_schema_version, "%s", CSV_SCHEMA_VERSION);
    csv_set(r, COL_message, "%s", "exit code 3: a, \"b\"");
    r->nextra = 1;
    snprintf(r->extra[0], sizeof r->extra[0], "123");
    CHECK_INT(csv_write_row(&w, r), 0);
    csv_close(&w);
    FILE *f = fopen(path, "r");
    char line[8192];
    CHECK(fgets(line, sizeof line, f) != NULL);
    CHECK(strncmp(line, "schema_version,run_id,sample,", 29) == 0);
    CHECK(strstr(line, ",total_cycles\n") != NULL);
    CHECK(fgets(line, sizeof line, f) != NULL);
    CHECK(strncmp(line, CSV_SCHEMA_VERSION ",", 2) == 0);
    CHECK(strstr(line, ",\"exit code 3: a, \"\"b\"\"\",") != NULL);
    CHECK(strstr(line, ",123\n") != NULL);
    /* as many fields as header columns: COL_COUNT + 1, commas outside quotes */
    int commas = 0, inq = 0;
    for (char *p = line; *p; p++) {
        if (*p == '"')
            inq = !inq;
        else if (*p == ',' && !inq)
            commas++;
    }
    CHECK_INT(commas, COL_COUNT);
    CHECK(fgets(line, sizeof line, f) == NULL);
    fclose(f);
    unlink(path);
    free(r);
    CHECK_INT(csv_open(&w, "/nonexistent-dir/x.csv", NULL, 0), -ENOENT);
    test_one_write();
    test_field_lengths();
    CHECK_DONE();
}
