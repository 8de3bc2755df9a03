/* dist.h - size distributions for the workloads, and their deterministic
 * random numbers.  A spec is one of:
 *   "16M"             fixed
 *   "1M/4M/16M"       a list, taken in order, cycling
 *   "64K..64M"        log-uniform between two bounds (inclusive), seeded
 *   "@shapes.txt"     a file: one tensor per line, "1024x1024x4 float32"
 *                     (dims x dtype size), '#' comments, taken in order
 *   "trace:t.mbt"     a recorded trace (common/trace.h): the sizes of its
 *   "trace:t.mbt:min=4K"  successful allocations of at least min (default
 *                     64K), thread by thread in file order, each in program
 *                     order, cycling as a list; over DIST_MAX of them, an
 *                     evenly strided subsample in the same order; each
 *                     size keeps the alignment its call asked for
 *                     (posix_memalign, aligned_alloc, memalign: its
 *                     argument; valloc, pvalloc: the page), read back with
 *                     dist_align
 * Parsing is pure except for reading the file; errors name the file, the
 * line and the reason: "shapes.txt:3: unknown dtype 'float8'". */
#ifndef MB_DIST_H
#define MB_DIST_H
#include <stddef.h>
#include <stdint.h>

#define DIST_MAX 4096

typedef enum { DIST_FIXED, DIST_LIST, DIST_LOGUNIFORM, DIST_SHAPES } dist_kind_t;

typedef struct {
    dist_kind_t kind;
    size_t n;                /* sizes in v (fixed: 1) */
    int aligned;             /* trace: align[0..n) holds some alignment */
    size_t last;             /* list and shapes: the index dist_next gave last */
    /* dist_parse clears the fields above; those below are written as used */
    uint64_t v[DIST_MAX];
    uint64_t align[DIST_MAX]; /* trace: the alignment asked for with v[i], 0 for malloc */
    uint64_t lo, hi;         /* log-uniform bounds */
    size_t next;             /* cursor for list and shapes */
} dist_t;

int dist_parse(const char *spec, dist_t *d, char *err, size_t errlen);
/* One line of a shapes file: bytes of "1024x1024x4 float32"; 0 and
 * *bytes = 0 for a blank or comment line. */
int dist_parse_shape(const char *line, uint64_t *bytes, char *err, size_t errlen);
/* The content of a shapes file (len bytes, not NUL-terminated), one
 * dist_parse_shape line per line; errors as "name:line: reason". */
int dist_parse_shapes_text(const char *name, const char *buf, size_t len, dist_t *d, char *err,
                           size_t errlen);
/* The next size; rng is only used (and advanced) by log-uniform. */
uint64_t dist_next(dist_t *d, uint64_t *rng);
/* The alignment the trace's call asked for with the size dist_next gave
 * last: 0 for a plain malloc (calloc, realloc) and for every spec that is
 * not a trace. */
uint64_t dist_align(const dist_t *d);
/* The largest size the distribution can give. */
uint64_t dist_max(const dist_t *d);

/* xorshift64*: fast, deterministic for a seed; never returns the same
 * sequence for two seeds; the state must not be 0 (rng_seed sees to it). */
uint64_t rng_seed(uint64_t seed);
uint64_t rng_next(uint64_t *state);
/* Uniform in [0, n). */
uint64_t rng_below(uint64_t *state, uint64_t n);

#endif
