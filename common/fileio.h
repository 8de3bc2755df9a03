/* fileio.h - a whole file in memory, for the parsers of users' files
 * (matrix, CSV, shapes) and the sidecars: one reader, one size cap; and the
 * one way a new file is made beside a name (every writer's temporary). */
#ifndef MB_FILEIO_H
#define MB_FILEIO_H
#include <stddef.h>

/* Read path into a malloc'd buffer (NUL-terminated, *len bytes before the
 * NUL).  0, or -errno (-EFBIG past max bytes); the caller frees *buf. */
int file_read_all(const char *path, size_t max, char **buf, size_t *len);

/* A new temporary BASE.XXXXXX.tmp beside base, created O_CREAT|O_EXCL
 * (mkostemps: never an existing name, nor a link's target), mode 0666 less
 * the umask: an fd with its name in tmp, or -errno (nothing left behind). */
int file_temp(const char *base, char *tmp, size_t len);

#endif
