/* test_sync_fd.c - include/mallocbench.h writes a region marker only to the
 * harness's socket (issue 43): MB_SYNC_FD's descriptor must be the socket
 * whose st_dev:st_ino MB_SYNC_ID names.  A descendant whose descriptor of
 * that number is another file (a closed and reused number), another socket
 * or a pipe, or a process without MB_SYNC_ID, writes nothing anywhere. */
#include "mallocbench.h"
#include "../check.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define FD 7 /* the number the variable names */

static void set_id(int fd)
{
    struct stat st;
    char id[64];
    if (fstat(fd, &st))
        SKIP("fstat failed");
    snprintf(id, sizeof id, "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
    setenv("MB_SYNC_ID", id, 1);
}

/* What the harness's end read (nonblocking): bytes, or 0. */
static ssize_t drain(int fd, char *buf, size_t len)
{
    ssize_t n = recv(fd, buf, len - 1, MSG_DONTWAIT);
    buf[n > 0 ? n : 0] = '\0';
    return n > 0 ? n : 0;
}

int main(void)
{
    int sp[2], other[2], pp[2];
    char buf[64];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) || socketpair(AF_UNIX, SOCK_STREAM, 0, other) || pipe(pp))
        SKIP("no socketpair or pipe");
    setenv("MB_SYNC_FD", "7", 1);

    /* the harness's socket at FD, MB_SYNC_ID naming it: the marker goes there */
    dup2(sp[1], FD);
    set_id(sp[1]);
    CHECK_INT(mb_sync_fd_(), FD);
    CHECK_INT(write(sp[0], "gg", 2), 2); /* the answers, ahead */
    mb_region_begin();
    mb_region_end();
    CHECK_INT(drain(sp[0], buf, sizeof buf), 10);
    CHECK_STR(buf, "begin\nend\n");

    /* a descendant whose FD is a file it opened (the number reused): nothing written */
    char path[] = "/tmp/mb-sync-fd-XXXXXX";
    int file = mkstemp(path);
    if (file < 0)
        SKIP("mkstemp failed");
    unlink(path);
    dup2(file, FD);
    CHECK_INT(mb_sync_fd_(), -1);
    mb_region_begin();
    struct stat st;
    CHECK(fstat(file, &st) == 0 && st.st_size == 0);

    /* another socket, a pipe, the number closed: none is the harness's */
    dup2(other[1], FD);
    CHECK_INT(mb_sync_fd_(), -1);
    mb_region_begin();
    CHECK_INT(drain(other[0], buf, sizeof buf), 0);
    dup2(pp[1], FD);
    CHECK_INT(mb_sync_fd_(), -1);
    close(FD);
    CHECK_INT(mb_sync_fd_(), -1);

    /* the socket again, but the identity missing or malformed: nothing */
    dup2(sp[1], FD);
    CHECK_INT(mb_sync_fd_(), FD);
    unsetenv("MB_SYNC_ID");
    CHECK_INT(mb_sync_fd_(), -1);
    mb_region_begin();
    CHECK_INT(drain(sp[0], buf, sizeof buf), 0);
    static const char *const bad[] = {"1", "1:", ":1", "1:2x", "x:1", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("MB_SYNC_ID", bad[i], 1);
        CHECK_INT(mb_sync_fd_(), -1);
    }
    set_id(sp[1]);
    setenv("MB_SYNC_FD", "7x", 1); /* trailing junk in the number */
    CHECK_INT(mb_sync_fd_(), -1);
    setenv("MB_SYNC_FD", "-1", 1);
    CHECK_INT(mb_sync_fd_(), -1);
    CHECK_DONE();
}
