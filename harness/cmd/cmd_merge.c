/* cmd_merge.c - `mallocbench merge`: join the CSVs of the shards of one plan
 * into one file, in plan order, with their sidecars: the RSS series are
 * concatenated and the .meta.json files kept inside one.  Refuses files of
 * another schema, another plan (matrix_id), samples present twice, and a
 * split with shards missing unless asked (--partial: it names them); rows
 * of several machines are merged (each block was measured on one; compare
 * shows each machine and the pooled answer).  RSS sidecars given as input
 * (a glob such as shard*.csv matches them) are recognised and left out.
 * The output is resolved once (outfile.h): a symbolic link -o names its
 * file, and the sidecars go beside that file, never beside the link.  A
 * shard's sidecar is read only when it is a regular file (opened
 * non-blocking and checked: a FIFO there would hang the merge). */
#include "cli.h"
#include "csv.h"
#include "fileio.h"
#include "outfile.h"
#include "output.h"
#include "plan.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char **fields;
    unsigned long block, attempt, position; /* attempt: the block's, 0 without the column */
} mrow_t;

static int by_plan(const void *a, const void *b)
{
    const mrow_t *x = a, *y = b;
    if (x->block != y->block)
        return x->block < y->block ? -1 : 1;
    if (x->attempt != y->attempt)
        return x->attempt < y->attempt ? -1 : 1;
    return (x->position > y->position) - (x->position < y->position);
}

/* A shard's sidecar opened for reading: an fd on a regular file, -ENOENT
 * when there is none, -EINVAL for a FIFO, device or folder (opened
 * O_NONBLOCK so that a FIFO with no writer cannot hang us; never read). */
static int open_sidecar(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* A shard's .meta.json whole (at most max bytes) into *buf: 0 or -errno. */
static int read_sidecar(const char *path, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open_sidecar(path);
    if (fd < 0)
        return fd;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        close(fd);
        return -ENOMEM;
    }
    size_t cap = 0;
    int rc = 0;
    for (;;) {
        if (*len + 4096 + 1 > cap) {
            if (cap > max) {
                rc = -EFBIG;
                break;
            }
            char *nb = realloc(*buf, cap = cap * 2 + 8192);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            *buf = nb;
        }
        size_t got = fread(*buf + *len, 1, cap - *len - 1, f);
        *len += got;
        if (!got)
            break;
    }
    if (!rc && ferror(f))
        rc = -EIO;
    fclose(f);
    if (rc) {
        free(*buf);
        *buf = NULL;
        *len = 0;
        return rc;
    }
    (*buf)[*len] = '\0';
    return 0;
}

/* OUT.meta.json: the first shard's sidecar, with every shard's own under
 * "shards" and the files merged under "merged_from". */
static int merge_meta(const char *out, char **in, int nin)
{
    char meta[4096], rss[4096], path[4096];
    char *first = NULL, *text = NULL;
    size_t flen = 0, tlen = 0;
    FILE *m = open_memstream(&text, &tlen);
    if (!m)
        return -ENOMEM;
    int nmeta = 0;
    for (int i = 0; i < nin; i++) {
        out_sidecar_paths(in[i], path, rss, sizeof path);
        size_t len;
        char *t;
        if (read_sidecar(path, 64u << 20, &t, &len) || !out_json_object(t, len)) {
            free(t); /* NULL where it could not be read */
            /* compare reads a row's machine from its run's sidecar: without one it cannot
             * tell this shard's machine from the others' (docs/fleet.md) */
            fprintf(stderr, "%s: merge: warning: '%s' has no readable sidecar (%s): its rows' machine is unknown\n",
                    prog, in[i], path);
            continue;
        }
        while (len && strchr(" \t\r\n", t[len - 1]))
            len--;
        fputs(nmeta++ ? ",\n    " : "    ", m);
        fwrite(t, 1, len, m);
        if (!first) {
            first = t;
            flen = len;
        } else {
            free(t);
        }
    }
    fclose(m);
    int rc = 0;
    if (first) {
        char *json = NULL;
        size_t jlen = 0;
        FILE *j = open_memstream(&json, &jlen);
        if (j) {
            fwrite(first, 1, flen - 1, j); /* less its closing brace */
            fputs(",\n  \"merged_from\": [", j);
            for (int i = 0; i < nin; i++) {
                text_json_write(j, in[i]);
                fputs(i + 1 < nin ? ", " : "", j);
            }
            fprintf(j, "],\n  \"shards\": [\n%s\n  ]\n}\n", text ? text : "");
            fclose(j);
            out_sidecar_paths(out, meta, rss, sizeof meta);
            rc = out_write_sidecar(meta, json, false);
            free(json);
        } else {
            rc = -ENOMEM;
        }
    }
    free(first);
    free(text);
    return rc;
}

/* OUT.rss.csv: every shard's series, one header, whole lines only,
 * through outfile_open. */
static int merge_rss(const char *out, char **in, int nin)
{
    char meta[4096], rss[4096], dst[4096], err[4200];
    out_sidecar_paths(out, meta, dst, sizeof dst);
    outfile_t of = {.fd = -1};
    FILE *o = NULL;
    int rc = 0, nfound = 0;
    for (int i = 0; i < nin && !rc; i++) {
        out_sidecar_paths(in[i], meta, rss, sizeof rss);
        int fd = open_sidecar(rss);
        FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (!f) {
            if (fd >= 0)
                close(fd);
            continue;
        }
        if (!o && (rc = outfile_fopen(&of, dst, &o, err, sizeof err))) {
            fclose(f);
            break;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        for (long k = 0; (n = getline(&line, &cap, f)) > 0; k++) {
            if (line[n - 1] != '\n')
                break; /* a torn last line */
            if (k == 0 && nfound)
                continue; /* the header once */
            fwrite(line, 1, (size_t)n, o);
        }
        nfound++;
        free(line);
        fclose(f);
    }
    if (o)
        rc = outfile_fclose(&of, o, err, sizeof err);
    return rc;
}

static int merge_usage(FILE *out)
{
    fprintf(out, "usage: mallocbench merge [--force] [--partial] -o OUT.csv SHARD.csv...\n"
                 "joins the CSVs of the shards of one plan (run with --shard K/N) into one file in\n"
                 "plan order, with OUT.meta.json (every shard's sidecar inside) and OUT.rss.csv (their\n"
                 "RSS series); refuses other schemas, other plans, samples present twice, and a\n"
                 "split with shards missing (named) unless --partial.  Shards from several machines\n"
                 "merge: each block was measured on one, and compare shows each machine's answer\n"
                 "and the pooled one (docs/fleet.md).  RSS sidecars among the inputs (as `shard*.csv`\n"
                 "matches them) are left out with a note.  An existing OUT is replaced only with\n"
                 "--force.\n");
    return out == stdout ? 0 : 2;
}

/* The input CSVs among argv[first..]: RSS sidecars left out with a note, the
 * output refused as an input and, without --force, when it exists; a
 * shard's sidecar that is there and not a regular file refused.  out is the
 * resolved output (a device or FIFO as given).  0 or the exit code. */
static int merge_inputs(int argc, char **argv, int first, const char *out, bool force, char **in, int *nin)
{
    int skipped = 0;
    *nin = 0;
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], out) || outfile_same_file(argv[i], out)) /* by name, or another name of it */
            return die_usage("merge: the output '%s' is also an input ('%s')", out, argv[i]);
        if (out_is_rss_sidecar(argv[i]))
            skipped++;
        else
            in[(*nin)++] = argv[i];
    }
    if (skipped)
        fprintf(stderr, "%s: merge: left out %d RSS series sidecar%s among the inputs (merged into the "
                "output's own)\n", prog, skipped, skipped > 1 ? "s" : "");
    if (*nin < 1)
        return die_usage("merge: no input CSV");
    for (int i = 0; i < *nin; i++) {
        char meta[PATH_MAX], rss[PATH_MAX];
        out_sidecar_paths(in[i], meta, rss, sizeof meta);
        for (int k = 0; k < 2; k++) {
            int fd = open_sidecar(k ? rss : meta);
            if (fd == -EINVAL)
                return die_usage("merge: '%s', the sidecar of '%s', is not a regular file (a FIFO, device or "
                                 "folder); remove it", k ? rss : meta, in[i]);
            if (fd >= 0)
                close(fd);
        }
    }
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return die_usage("merge: cannot write '%s': it is a directory", out);
    if (!force && access(out, F_OK) == 0)
        return die_usage("merge: '%s' exists: add --force to replace it", out);
    if (!outfile_is_special(out)) { /* its sidecars, which the user did not name */
        char meta[PATH_MAX], rss[PATH_MAX], err[PATH_MAX + 160];
        out_sidecar_paths(out, meta, rss, sizeof meta);
        if (outfile_check_sidecar(meta, force, err, sizeof err) || outfile_check_sidecar(rss, force, err, sizeof err))
            return die_usage("merge: %s", err);
    }
    return 0;
}

/* Read every input; all must have the first one's columns. */
static int read_tables(char **in, int nin, csv_table_t *t, size_t *total)
{
    char err[1024];
    *total = 0;
    for (int i = 0; i < nin; i++) {
        int rc = csv_read(in[i], &t[i], err, sizeof err);
        if (rc)
            return die_for(rc, "merge: %s", err);
        if (strcmp(t[i].header_line, t[0].header_line) != 0)
            return die_usage("merge: '%s' has other columns than '%s' (another schema or --events)", in[i], in[0]);
        *total += t[i].nrows;
    }
    return 0;
}

/* The shards of one split: the N of every row's "K/N" (an unsharded row is
 * 1/1) must agree; the K missing among them are named, and refused unless
 * partial.  0 or the exit code. */
static int check_shards(char **in, const csv_table_t *t, int nin, bool partial)
{
    int cs = csv_col(&t[0], "shard"), cb = csv_col(&t[0], "block");
    unsigned n = 0;
    char *seen = NULL;
    for (int i = 0; i < nin; i++)
        for (size_t r = 0; r < t[i].nrows; r++) {
            unsigned k = 1, m = 1;
            const char *f = cs >= 0 ? t[i].rows[r][cs] : "";
            if (f[0] && plan_parse_shard(f, &k, &m)) {
                free(seen);
                return die_usage("merge: %s: row %zu has shard '%s', not K/N", in[i], r + 1, f);
            }
            unsigned long blk = cb >= 0 ? strtoul(t[i].rows[r][cb], NULL, 10) : 0;
            if (f[0] && m > 1 && blk % m != k - 1) { /* a shard keeps whole blocks: b mod N = K - 1 */
                free(seen);
                return die_usage("merge: %s: row %zu is block %lu in shard %s, which holds blocks %u, %u + %u, ...: "
                                 "not a shard of whole blocks (written before shards kept them?)", in[i], r + 1, blk,
                                 f, k - 1, k - 1, m);
            }
            if (n && m != n) {
                free(seen);
                return die_usage("merge: '%s' holds shards of %u, another input shards of %u: not one split",
                                 in[i], m, n);
            }
            if (!seen && !(seen = calloc((size_t)m + 1, 1)))
                return die_io("out of memory");
            n = m;
            seen[k] = 1;
        }
    char missing[512] = "";
    size_t len = 0;
    unsigned nmiss = 0;
    for (unsigned k = 1; k <= n; k++)
        if (!seen[k] && ++nmiss && len + 24 < sizeof missing)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%u/%u", len ? ", " : "", k, n);
    free(seen);
    if (!nmiss)
        return 0;
    if (!partial)
        return die_usage("merge: shard%s %s %s no rows (a task that failed, or a file not given): add --partial "
                         "to merge the %u of %u there are", nmiss > 1 ? "s" : "", missing,
                         nmiss > 1 ? "have" : "has", n - nmiss, n);
    fprintf(stderr, "%s: merge: warning: shard%s %s missing: the merged file holds %u of %u shards\n", prog,
            nmiss > 1 ? "s" : "", missing, n - nmiss, n);
    return 0;
}

/* Every row of every input, checked (one schema, one plan, a block and
 * position each) and sorted in plan order (block, its attempt, position: a
 * block measured again keeps every attempt's rows), no sample twice.  *plan is the
 * plan's matrix_id (NULL when there are no rows); *hosts the hosts seen. */
static int collect_rows(char **in, int nin, const csv_table_t *t, mrow_t *rows, size_t *n, const char **plan,
                        unsigned *hosts)
{
    int cm = csv_col(&t[0], "matrix_id"), cb = csv_col(&t[0], "block"), cp = csv_col(&t[0], "position");
    int ch = csv_col(&t[0], "host"), cv = csv_col(&t[0], "schema_version"), ca = csv_col(&t[0], "attempt");
    if (cm < 0 || cb < 0 || cp < 0 || ch < 0 || cv < 0)
        return die_usage("merge: '%s' is not a mallocbench CSV of schema %s", in[0], CSV_SCHEMA_VERSION);
    const char *host = NULL;
    *hosts = 0;
    *n = 0;
    *plan = NULL;
    for (int i = 0; i < nin; i++) {
        for (size_t k = 0; k < t[i].nrows; k++) {
            char **f = t[i].rows[k];
            char *e1, *e2;
            rows[*n].fields = f;
            rows[*n].block = strtoul(f[cb], &e1, 10);
            rows[*n].position = strtoul(f[cp], &e2, 10);
            rows[*n].attempt = ca >= 0 ? strtoul(f[ca], NULL, 10) : 0;
            if (strcmp(f[cv], CSV_SCHEMA_VERSION))
                return die_usage("merge: '%s' has schema_version %s, this program writes %s", in[i], f[cv],
                                 CSV_SCHEMA_VERSION);
            if (*plan && strcmp(*plan, f[cm]))
                return die_usage("merge: '%s' holds plan %s, '%s' plan %s: not shards of one run", in[i],
                                 f[cm], in[0], *plan);
            *hosts += !host || strcmp(host, f[ch]); /* changes of host, in input order */
            if (!f[cb][0] || *e1 || !f[cp][0] || *e2)
                return die_usage("merge: %s: row %zu has block '%s', position '%s'", in[i], k + 1, f[cb],
                                 f[cp]);
            *plan = f[cm];
            host = f[ch];
            (*n)++;
        }
    }
    qsort(rows, *n, sizeof *rows, by_plan);
    for (size_t i = 1; i < *n; i++)
        if (rows[i].block == rows[i - 1].block && rows[i].attempt == rows[i - 1].attempt &&
            rows[i].position == rows[i - 1].position)
            return die_usage("merge: sample (block %lu, attempt %lu, position %lu) is in the input twice",
                             rows[i].block, rows[i].attempt, rows[i].position);
    return 0;
}

/* The merged CSV through outfile_open (a temporary name renamed when
 * complete, under the output's lock; a device or FIFO written in place);
 * the header is the first file's, extra event columns included. */
static int write_merged(const char *out, const csv_table_t *t0, const mrow_t *rows, size_t n)
{
    outfile_t f;
    char err[PATH_MAX + 128];
    int rc = outfile_open(&f, out, err, sizeof err);
    if (rc)
        return die_for(rc, "%s", err);
    csv_writer_t w = {.fd = f.fd};
    const char *name = f.direct ? out : f.tmp;
    size_t hl = strlen(t0->header_line);
    if (write(w.fd, t0->header_line, hl) != (ssize_t)hl || write(w.fd, "\n", 1) != 1)
        rc = die_io("cannot write '%s': %s", name, strerror(errno));
    for (size_t i = 0; i < n && !rc; i++)
        if ((rc = csv_write_fields(&w, rows[i].fields, t0->ncols)))
            rc = die_io("cannot write '%s': %s", name, strerror(-rc));
    if (rc)
        outfile_abort(&f);
    else if ((rc = outfile_commit(&f, err, sizeof err)))
        rc = die_io("%s", err);
    return rc;
}

int cmd_merge(int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"allow-mixed-hosts", no_argument, NULL, 'H'}, /* the default now */
                                         {"partial", no_argument, NULL, 'P'},
                                         {"force", no_argument, NULL, 'F'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *out = NULL;
    bool partial = false, force = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'H': break;
        case 'P': partial = true; break;
        case 'F': force = true; break;
        case 'h': return merge_usage(stdout);
        default: return merge_usage(stderr);
        }
    }
    if (!out)
        return die_usage("merge: -o OUT.csv is required");
    /* resolved once (outfile.h): the CSV and its sidecars in one place, beside the file a link
     * names, so that it never keeps another run's .meta.json (a device or FIFO: as given) */
    char real[PATH_MAX], rerr[PATH_MAX + 160];
    if (!outfile_is_special(out)) {
        if (outfile_resolve(out, real, sizeof real, rerr, sizeof rerr))
            return die_usage("merge: %s", rerr);
        out = real;
    }
    char **in = calloc((size_t)(argc - optind) + 1, sizeof *in);
    csv_table_t *t = calloc((size_t)(argc - optind) + 1, sizeof *t);
    mrow_t *rows = NULL;
    int nin = 0, rc = in && t ? merge_inputs(argc, argv, optind, out, force, in, &nin) : die_io("out of memory");
    size_t total = 0, n = 0;
    const char *plan = NULL;
    unsigned hosts = 0;
    if (!rc)
        rc = read_tables(in, nin, t, &total);
    if (!rc && !(rows = calloc(total ? total : 1, sizeof *rows)))
        rc = die_io("out of memory");
    if (!rc)
        rc = collect_rows(in, nin, t, rows, &n, &plan, &hosts);
    if (!rc)
        rc = check_shards(in, t, nin, partial);
    if (!rc)
        rc = write_merged(out, &t[0], rows, n);
    if (!rc && !outfile_is_special(out)) { /* a device or FIFO gets the CSV only, as with run */
        int src = merge_meta(out, in, nin);
        if (!src)
            src = merge_rss(out, in, nin);
        if (src)
            fprintf(stderr, "%s: merge: warning: cannot write the sidecars of '%s': %s\n", prog, out,
                    strerror(-src));
    }
    if (!rc) {
        fprintf(stderr, "%s: merged %zu samples of plan %s from %d files into %s%s\n", prog, n, plan ? plan : "-",
                nin, out, hosts > 1 ? " (rows of several hosts: compare shows each machine and the pooled answer)" : "");
    }
    for (int i = 0; t && i < nin; i++)
        csv_table_free(&t[i]);
    free(t);
    free(rows);
    free(in);
    return rc;
}
