/* fileio.c - see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int file_temp(const char *base, char *tmp, size_t len)
{
    if ((size_t)snprintf(tmp, len, "%s.XXXXXX.tmp", base) >= len)
        return -ENAMETOOLONG;
    int fd = mkostemps(tmp, 4, O_CLOEXEC); /* O_CREAT|O_EXCL: never an existing name, nor a link's target */
    if (fd < 0) {
        int e = errno;
        tmp[0] = '\0';
        return -e;
    }
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask)) {
        int e = errno;
        close(fd);
        unlink(tmp);
        tmp[0] = '\0';
        return -e;
    }
    return fd;
}

int file_read_all(const char *path, size_t max, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t cap = 1 << 14, n = 0;
    char *b = malloc(cap + 1);
    int rc = 0;
    while (b) {
        if (n == cap) {
            if (cap >= max) {
                rc = -EFBIG;
                break;
            }
            char *nb = realloc(b, (cap *= 2) + 1);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            b = nb;
        }
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -errno;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (!b)
        return -ENOMEM;
    if (rc || n > max) {
        free(b);
        return rc ? rc : -EFBIG;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}
