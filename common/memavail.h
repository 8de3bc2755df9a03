/* memavail.h - the memory a run can still take: MemAvailable (/proc/meminfo),
 * or the RLIMIT_AS soft limit or the cgroup v2 memory.max less memory.current
 * where lower; used to refuse a trace whose peak live bytes cannot fit
 * before anything is allocated (`mallocbench trace`, the replay's check). */
#ifndef MB_MEMAVAIL_H
#define MB_MEMAVAIL_H
#include <stddef.h>
#include <stdint.h>

/* Bytes available and what bounds them ("MemAvailable", "RLIMIT_AS",
 * "cgroup memory.max"): 0, or -ENOENT when no figure can be read. */
int mem_available(uint64_t *bytes, const char **what);
/* The kB figure of key in a /proc/meminfo text, in bytes: 0, -ENOENT, -EINVAL. */
int mem_parse_meminfo(const char *text, const char *key, uint64_t *bytes);
/* peak (bytes) against mem_available: 0 when it fits or nothing is known;
 * -ENOMEM with one line in msg naming both figures when it does not. */
int mem_check_peak(uint64_t peak, char *msg, size_t len);

#endif
