/* fuzz_csv.c - libFuzzer target: the input is a whole CSV file, read as
 * merge reads it (csv_parse) and as --resume reads it (csv_read_torn, from a
 * memfd).  Checks: no crash or leak, csv_table_free after success and
 * failure alike, a refusal says why, and on success a header and every row
 * of exactly ncols readable fields, no more text than the input held. */
#include "csv.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void check(const csv_table_t *t, size_t size)
{
    if (!t->ncols || !t->header || !t->header_line || t->torn_bytes > size)
        abort();
    size_t total = 0;
    for (size_t c = 0; c < t->ncols; c++)
        total += strlen(t->header[c]);
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++)
            total += strlen(t->rows[r][c]);
    if (total > size)
        abort(); /* fields only lose quotes and separators */
    int c0 = csv_col(t, t->header[0]);
    if (c0 < 0 || strcmp(t->header[c0], t->header[0]))
        abort();
}

static int memfd = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    csv_table_t t;
    char err[256] = "";
    if (csv_parse("fuzz.csv", (const char *)data, size, &t, err, sizeof err) == 0)
        check(&t, size);
    else if (!err[0])
        abort();
    csv_table_free(&t);

    if (memfd < 0 && (memfd = memfd_create("fuzz.csv", MFD_CLOEXEC)) < 0)
        abort();
    if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    err[0] = '\0';
    if (csv_read_torn(path, &t, err, sizeof err) == 0)
        check(&t, size);
    else if (!err[0])
        abort();
    csv_table_free(&t);
    return 0;
}
