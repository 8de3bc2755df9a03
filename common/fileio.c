/* fileio.c - see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

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
