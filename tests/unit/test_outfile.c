/* test_outfile.c - outfile_temp and outfile_place (harness/output/outfile.c)
 * on a scratch directory: a temporary is a fresh name beside its target, never
 * an existing file; placed without replace it never takes a name that is
 * there already (RENAME_NOREPLACE, or link where that is missing), even one
 * that appeared after any check a caller made; with replace it does. */
#include "check.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static const char *get(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    buf[0] = '\0';
    if (f) {
        size_t n = fread(buf, 1, len - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    return buf;
}

int main(void)
{
    char dir[] = "/tmp/test_outfile.XXXXXX", dst[PATH_MAX], tmp[PATH_MAX + 16], tmp2[PATH_MAX + 16], buf[64];
    if (!mkdtemp(dir))
        SKIP("no scratch directory");
    snprintf(dst, sizeof dst, "%s/out.csv", dir);

    /* a fresh temporary beside the target, not the target, one each time */
    int fd = outfile_temp(dst, tmp, sizeof tmp);
    CHECK(fd >= 0);
    int fd2 = outfile_temp(dst, tmp2, sizeof tmp2);
    CHECK(fd2 >= 0 && strcmp(tmp, tmp2) != 0);
    CHECK(strncmp(tmp, dst, strlen(dst)) == 0 && strcmp(tmp, dst) != 0);
    CHECK(write(fd, "new\n", 4) == 4);

    /* a file that took the target's name after the caller's check stays: placing fails */
    put(dst, "theirs\n");
    CHECK_INT(outfile_place(fd, tmp, dst, false), -EEXIST);
    CHECK_STR(get(dst, buf, sizeof buf), "theirs\n");
    CHECK(access(tmp, F_OK) == 0); /* the temporary is the caller's to remove */

    /* with replace (--force) it goes over */
    CHECK_INT(outfile_place(fd, tmp, dst, true), 0);
    CHECK_STR(get(dst, buf, sizeof buf), "new\n");
    CHECK(access(tmp, F_OK) != 0);

    /* a free name is taken, and the temporary goes */
    char other[PATH_MAX + 8];
    snprintf(other, sizeof other, "%s/fresh.csv", dir);
    CHECK(write(fd2, "fresh\n", 6) == 6);
    CHECK_INT(outfile_place(fd2, tmp2, other, false), 0);
    CHECK_STR(get(other, buf, sizeof buf), "fresh\n");
    CHECK(access(tmp2, F_OK) != 0);
    close(fd);
    close(fd2);

    unlink(dst);
    unlink(other);
    rmdir(dir);
    CHECK_DONE();
}
