/* test_merge.c - `mallocbench merge` (harness/cmd/cmd_merge.c) on shard files
 * written here, one row each: every shard K of N missing from the inputs is
 * named, the first, a middle one and the last (N/N) alike, and refused
 * unless --partial, which merges what there is and names them in a warning;
 * all N shards merge with no word of a missing one. */
#include "../check.h"
#include "cli.h"
#include "csv.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/mb-test-merge-XXXXXX";
static char msg[8192];

/* shard K of N as DIR/sK-N.csv: one row, block K - 1, in the plan "p1". */
static void shard_file(unsigned k, unsigned n, char *path, size_t len)
{
    snprintf(path, len, "%s/s%u-%u.csv", dir, k, n);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    for (int c = 0; c < COL_COUNT; c++)
        fprintf(f, "%s%s", c ? "," : "", csv_columns[c].name);
    fputc('\n', f);
    for (int c = 0; c < COL_COUNT; c++) {
        const char *v = "";
        char num[32];
        if (c == COL_schema_version)
            v = CSV_SCHEMA_VERSION;
        else if (c == COL_matrix_id)
            v = "p1";
        else if (c == COL_host)
            v = "h";
        else if (c == COL_block || c == COL_position) {
            snprintf(num, sizeof num, "%u", c == COL_block ? k - 1 : 0);
            v = num;
        } else if (c == COL_shard) {
            snprintf(num, sizeof num, "%u/%u", k, n);
            v = num;
        }
        fprintf(f, "%s%s", c ? "," : "", v);
    }
    fputc('\n', f);
    fclose(f);
}

/* cmd_merge on argv (NULL-terminated), its stderr in msg; the exit code. */
static int merge(const char **args)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"merge";
    for (; *args && argc < 15; args++)
        argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    char errpath[PATH_MAX];
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(errpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    int rc = cmd_merge(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, msg, sizeof msg - 1, 0);
    msg[n > 0 ? n : 0] = '\0';
    close(fd);
    return rc;
}

static void clean_out(const char *out)
{
    char p[PATH_MAX + 16];
    unlink(out);
    snprintf(p, sizeof p, "%.*s.meta.json", (int)strlen(out) - 4, out);
    unlink(p);
    snprintf(p, sizeof p, "%.*s.rss.csv", (int)strlen(out) - 4, out);
    unlink(p);
}

/* Shards `have` (a string of digits) of n merged: refused naming the
 * shards `missing` ("2/3, 3/3"), or merged with --partial, its warning
 * naming them. */
static void missing_named(unsigned n, const char *have, const char *missing)
{
    char paths[9][PATH_MAX], out[PATH_MAX];
    const char *args[16];
    int a = 0;
    snprintf(out, sizeof out, "%s/out.csv", dir);
    args[a++] = "-o";
    args[a++] = out;
    for (const char *h = have; *h; h++) {
        shard_file((unsigned)(*h - '0'), n, paths[h - have], sizeof paths[0]);
        args[a++] = paths[h - have];
    }
    args[a] = NULL;
    int rc = merge(args);
    if (rc != 2 || !strstr(msg, missing) || !strstr(msg, "no rows"))
        fprintf(stderr, "shards %s of %u: want exit 2 naming %s, got %d: %s", have, n, missing, rc, msg);
    CHECK_INT(rc, 2);
    CHECK(strstr(msg, missing) != NULL && strstr(msg, "no rows") != NULL);
    CHECK(strstr(msg, "--partial") != NULL);
    CHECK(access(out, F_OK) != 0);
    args[a++] = "--partial";
    args[a] = NULL;
    rc = merge(args);
    if (rc != 0 || !strstr(msg, missing) || !strstr(msg, "warning"))
        fprintf(stderr, "shards %s of %u --partial: want exit 0 warning of %s, got %d: %s", have, n, missing,
                rc, msg);
    CHECK_INT(rc, 0);
    CHECK(strstr(msg, "warning") != NULL && strstr(msg, missing) != NULL);
    clean_out(out);
}

static void all_there(unsigned n)
{
    char paths[9][PATH_MAX], out[PATH_MAX];
    const char *args[16];
    int a = 0;
    snprintf(out, sizeof out, "%s/out.csv", dir);
    args[a++] = "-o";
    args[a++] = out;
    for (unsigned k = 1; k <= n; k++) {
        shard_file(k, n, paths[k - 1], sizeof paths[0]);
        args[a++] = paths[k - 1];
    }
    args[a] = NULL;
    int rc = merge(args);
    if (rc != 0 || strstr(msg, "missing") || strstr(msg, "no rows"))
        fprintf(stderr, "all %u shards: got %d: %s", n, rc, msg);
    CHECK_INT(rc, 0);
    CHECK(strstr(msg, "missing") == NULL);
    char want[64];
    snprintf(want, sizeof want, "merged %u samples", n);
    CHECK(strstr(msg, want) != NULL);
    clean_out(out);
}

int main(void)
{
    if (!mkdtemp(dir))
        SKIP("cannot make a scratch directory in /tmp");
    missing_named(3, "12", "shard 3/3");
    missing_named(3, "23", "shard 1/3");
    missing_named(3, "13", "shard 2/3");
    missing_named(3, "1", "shards 2/3, 3/3");
    missing_named(2, "1", "shard 2/2");
    missing_named(4, "124", "shard 3/4");
    missing_named(4, "4", "shards 1/4, 2/4, 3/4");
    all_there(3);
    all_there(2);

    char p[PATH_MAX + 32];
    for (unsigned n = 2; n <= 4; n++)
        for (unsigned k = 1; k <= n; k++) {
            snprintf(p, sizeof p, "%s/s%u-%u.csv", dir, k, n);
            unlink(p);
        }
    snprintf(p, sizeof p, "%s/stderr", dir);
    unlink(p);
    CHECK_INT(rmdir(dir), 0);
    CHECK_DONE();
}
