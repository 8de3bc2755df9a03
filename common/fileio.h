/* fileio.h - a whole file in memory, for the parsers of users' files
 * (matrix, CSV, shapes) and the sidecars: one reader, one size cap. */
#ifndef MB_FILEIO_H
#define MB_FILEIO_H
#include <stddef.h>

/* Read path into a malloc'd buffer (NUL-terminated, *len bytes before the
 * NUL).  0, or -errno (-EFBIG past max bytes); the caller frees *buf. */
int file_read_all(const char *path, size_t max, char **buf, size_t *len);

#endif
