/* units.h - one table of size and time units, used both to parse user input
 * ("16M", "64KiB", "500ms") and to print it back.  Parsers are pure: they
 * return 0 or -EINVAL (malformed, trailing junk) / -ERANGE (out of range).
 * Lives in common/: the harness, the workloads and the allocators use it,
 * and it includes nothing of theirs.  Also the one monotonic clock and the
 * one splitmix64. */
#ifndef MB_UNITS_H
#define MB_UNITS_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* Bytes: a whole number with an optional binary suffix K, M, G, T (also
 * KB/KiB, ...; case-insensitive), e.g. "16M" = 16777216.  A decimal point
 * is allowed when the result is a whole number of bytes ("1.5K"). */
int units_parse_size(const char *s, uint64_t *out);
/* Plain integers: decimal, no suffix, no sign for u64. */
int units_parse_u64(const char *s, uint64_t *out);
int units_parse_i64(const char *s, int64_t *out);
int units_parse_double(const char *s, double *out);
/* Durations in seconds: "90", "1.5s", "500ms", "2m", "1h". */
int units_parse_duration(const char *s, double *seconds);
/* One of "a|b|c": 0 and its index, or -EINVAL. */
int units_parse_choice(const char *choices, const char *s, uint64_t *index);
/* The choice at index ("?" when out of range). */
void units_choice_name(const char *choices, uint64_t index, char *buf, size_t len);
/* Shortest exact form of a byte count: 16777216 -> "16M", 1000 -> "1000". */
void units_format_size(uint64_t bytes, char *buf, size_t len);

/* CLOCK_MONOTONIC, the one clock every elapsed time is read from: in
 * nanoseconds, and in seconds. */
static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64: advances *state and returns its next output; scrambles
 * nearby seeds apart (the block order, the workloads' generators). */
static inline uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
