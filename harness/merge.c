/* merge.c - `mallocbench merge`: join the CSVs of the shards of one plan
 * into one file, in plan order.  Refuses files of another schema, another
 * plan (matrix_id), samples present twice, and a mixture of machines
 * unless asked. */
#include "cli.h"
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char **fields;
    unsigned long block, position;
} mrow_t;

static int by_plan(const void *a, const void *b)
{
    const mrow_t *x = a, *y = b;
    if (x->block != y->block)
        return x->block < y->block ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

int cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"allow-mixed-hosts", no_argument, NULL, 'H'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    bool mixed = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'H': mixed = true; break;
        case 'h':
            printf("usage: mallocbench merge -o OUT.csv SHARD.csv...\n"
                   "joins the CSVs of the shards of one plan (run with --shard K/N) into one file in\n"
                   "plan order; refuses other schemas, other plans, samples present twice, and rows\n"
                   "from several hosts unless --allow-mixed-hosts.\n");
            return 0;
        default: return 2;
        }
    }
    if (!out)
        return die_usage("merge: -o OUT.csv is required");
    int nin = argc - optind;
    if (nin < 1)
        return die_usage("merge: no input CSV");
    csv_table_t *t = calloc((size_t)nin, sizeof *t);
    char err[1024];
    size_t total = 0;
    int rc = 0;
    for (int i = 0; i < nin && !rc; i++) {
        if (csv_read(argv[optind + i], &t[i], err, sizeof err)) {
            rc = die_usage("merge: %s", err);
            break;
        }
        if (strcmp(t[i].header_line, t[0].header_line) != 0)
            rc = die_usage("merge: '%s' has other columns than '%s' (another schema or --events)",
                           argv[optind + i], argv[optind]);
        total += t[i].nrows;
    }
    int cm = rc ? -1 : csv_col(&t[0], "matrix_id"), cb = csv_col(&t[0], "block"),
        cp = csv_col(&t[0], "position"), ch = csv_col(&t[0], "host"), cv = csv_col(&t[0], "schema_version");
    if (!rc && (cm < 0 || cb < 0 || cp < 0 || ch < 0 || cv < 0))
        rc = die_usage("merge: '%s' is not a mallocbench CSV of schema %s", argv[optind], CSV_SCHEMA_VERSION);
    mrow_t *rows = calloc(total ? total : 1, sizeof *rows);
    size_t n = 0;
    const char *plan = NULL, *host = NULL;
    for (int i = 0; i < nin && !rc; i++) {
        for (size_t k = 0; k < t[i].nrows && !rc; k++) {
            char **f = t[i].rows[k];
            if (strcmp(f[cv], CSV_SCHEMA_VERSION))
                rc = die_usage("merge: '%s' has schema_version %s, this program writes %s", argv[optind + i],
                               f[cv], CSV_SCHEMA_VERSION);
            else if (plan && strcmp(plan, f[cm]))
                rc = die_usage("merge: '%s' holds plan %s, '%s' plan %s: not shards of one run",
                               argv[optind + i], f[cm], argv[optind], plan);
            else if (host && strcmp(host, f[ch]) && !mixed)
                rc = die_usage("merge: rows from hosts '%s' and '%s' (use --allow-mixed-hosts to merge "
                               "them anyway)", host, f[ch]);
            plan = f[cm];
            host = f[ch];
            rows[n].fields = f;
            rows[n].block = strtoul(f[cb], NULL, 10);
            rows[n].position = strtoul(f[cp], NULL, 10);
            n++;
        }
    }
    if (!rc) {
        qsort(rows, n, sizeof *rows, by_plan);
        for (size_t i = 1; i < n && !rc; i++)
            if (rows[i].block == rows[i - 1].block && rows[i].position == rows[i - 1].position)
                rc = die_usage("merge: sample (block %lu, position %lu) is in the input twice",
                               rows[i].block, rows[i].position);
    }
    if (!rc) {
        /* the header is the first file's, extra event columns included;
         * written under a temporary name, renamed when complete */
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.tmp", out);
        csv_writer_t w = {.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
        size_t hl = strlen(t[0].header_line);
        if (w.fd < 0 || write(w.fd, t[0].header_line, hl) != (ssize_t)hl || write(w.fd, "\n", 1) != 1)
            rc = die_usage("cannot write '%s': %s", tmp, strerror(errno));
        for (size_t i = 0; i < n && !rc; i++)
            if (csv_write_fields(&w, rows[i].fields, t[0].ncols))
                rc = die_usage("cannot write '%s': %s", tmp, strerror(errno));
        if (w.fd >= 0)
            csv_close(&w);
        if (!rc && rename(tmp, out))
            rc = die_usage("cannot write '%s': %s", out, strerror(errno));
        if (rc)
            unlink(tmp);
        else
            fprintf(stderr, "%s: merged %zu samples of plan %s from %d files into %s\n", prog, n,
                    plan ? plan : "-", nin, out);
    }
    for (int i = 0; i < nin; i++)
        csv_table_free(&t[i]);
    free(t);
    free(rows);
    return rc;
}
