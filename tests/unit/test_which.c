/* test_which.c - common/elfinfo.c's one PATH lookup: elf_which finds what execvp would run
 * (an empty PATH entry is the current directory), elf_which_tool, for the tools the harness
 * runs itself (perf, python3), searches only absolute entries, so a `perf` in the folder the
 * harness was started in is never run; a match that cannot run says why (-EACCES), as execvp. */
#include "../check.h"
#include "elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void put(const char *path, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, "#!/bin/sh\n", 10) == 10);
        close(fd);
    }
    CHECK(chmod(path, mode) == 0);
}

int main(void)
{
    char dir[] = "/tmp/test_which.XXXXXX", bin[PATH_MAX], out[PATH_MAX], here[PATH_MAX];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(bin, sizeof bin, "%s/bin", dir);
    CHECK(mkdir(bin, 0700) == 0);
    char f[PATH_MAX + 32];
    snprintf(f, sizeof f, "%s/mbtool", dir); /* in the current directory only */
    put(f, 0700);
    snprintf(f, sizeof f, "%s/mbboth", dir); /* in both: the current directory comes first */
    put(f, 0700);
    snprintf(f, sizeof f, "%s/mbboth", bin);
    put(f, 0700);
    snprintf(f, sizeof f, "%s/mbnox", bin); /* on PATH, not executable */
    put(f, 0600);
    CHECK(getcwd(here, sizeof here) != NULL);
    CHECK(chdir(dir) == 0);

    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, ":%s", bin); /* an empty entry first: the current directory */
    setenv("PATH", path, 1);
    CHECK_INT(elf_which("mbtool", out, sizeof out), 0);
    CHECK_STR(out, "./mbtool");
    CHECK_INT(elf_which_tool("mbtool", out, sizeof out), -ENOENT);
    CHECK_INT(elf_which("mbboth", out, sizeof out), 0);
    CHECK_STR(out, "./mbboth");
    CHECK_INT(elf_which_tool("mbboth", out, sizeof out), 0);
    snprintf(f, sizeof f, "%s/mbboth", bin);
    CHECK_STR(out, f);
    snprintf(path, sizeof path, ".:%s", bin); /* a relative entry: the same for a tool */
    setenv("PATH", path, 1);
    CHECK_INT(elf_which_tool("mbtool", out, sizeof out), -ENOENT);
    CHECK_INT(elf_which("mbtool", out, sizeof out), 0);
    CHECK_INT(elf_which_tool("mbnox", out, sizeof out), -EACCES);
    snprintf(f, sizeof f, "%s/mbnox", bin);
    CHECK_STR(out, f);
    CHECK_INT(elf_which("mb-none-such", out, sizeof out), -ENOENT);
    CHECK_INT(elf_which_tool("./mbtool", out, sizeof out), 0); /* a path is as given */

    CHECK(chdir(here) == 0);
    const char *names[] = {"mbtool", "mbboth", "bin/mbboth", "bin/mbnox", "bin"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(f, sizeof f, "%s/%s", dir, names[i]);
        i + 1 < sizeof names / sizeof *names ? unlink(f) : rmdir(f);
    }
    rmdir(dir);
    CHECK_DONE();
}
