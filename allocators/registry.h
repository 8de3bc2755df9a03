/* registry.h - what the harness does with the allocator families of
 * family.h: find one by name, locate its library, check and canonicalise a
 * setting, build the environment that applies settings, and read the
 * allocator's own stderr.  Generic code: no family is named here or in
 * registry.c.  Functions return 0 or -errno; messages go to err. */
#ifndef MB_ALLOC_REGISTRY_H
#define MB_ALLOC_REGISTRY_H
#include "family.h"

#include <stdbool.h>
#include <stddef.h>

/* Most settings one configuration can carry. */
#define ALLOC_SETTINGS_MAX 16

/* One requested setting, its value in canonical form (bytes, 0/1, ...). */
typedef struct {
    const alloc_tunable_t *t;
    char value[64];
} alloc_setting_t;

#define ALLOC_ENV_MAX 24
#define ALLOC_ENV_LEN 1024
typedef struct {
    size_t n;
    char var[ALLOC_ENV_MAX][ALLOC_ENV_LEN]; /* "NAME=VALUE" */
} alloc_env_t;

size_t alloc_count(void);
const alloc_info_t *alloc_at(size_t i);
const alloc_info_t *alloc_find(const char *name);
/* The allocator that is part of libc (no library to preload): the one
 * the machine's limits are measured under. */
const alloc_info_t *alloc_system(void);
bool alloc_is_system(const alloc_info_t *a);
const alloc_tunable_t *alloc_find_tunable(const alloc_info_t *a, const char *name);

/* A name known to be refused by this version, with the reason (e.g.
 * mimalloc 2.1's purge_delay on 2.0.9); NULL when not such a name. */
const char *alloc_refused_reason(const alloc_info_t *a, const char *name);

/* Find the library in the system directories: 0 and path, or -ENOENT. */
int alloc_locate(const alloc_info_t *a, char *path, size_t len);

/* "name=value" for one allocator: checks name, type and range, and writes
 * the canonical value.  err gets one line listing valid names on an unknown one. */
int alloc_parse_setting(const alloc_info_t *a, const char *text, alloc_setting_t *out,
                        char *err, size_t errlen);

/* A search domain (family.h, alloc_domain_t) for tunable `name`: 0 when
 * every value (or both ends of a LO..HI log range, 0 < LO < HI, numeric
 * tunables only) is one the tunable accepts; else -EINVAL and one line. */
int alloc_check_domain(const alloc_info_t *a, const char *name, const char *values, char *err, size_t errlen);

/* The environment that applies settings (the family's conf) plus its
 * extra_env (LD_PRELOAD is the runner's business). */
int alloc_build_env(const alloc_info_t *a, const alloc_setting_t *s, size_t n, alloc_env_t *env);

/* Is this variable one an allocator reads (so an inherited one must not leak in)? */
bool alloc_env_is_allocator_var(const char *name_eq_value);

/* The family whose library this file is: its name one of the family's sonames, or a
 * soname and a further version (libmimalloc.so.2.0, the file libmimalloc.so.2 links to);
 * the soname in *soname when not NULL.  NULL: none. */
const alloc_info_t *alloc_by_library(const char *path, const char **soname);

/* The family that reads this variable ("NAME=value"), by its env_vars; NULL: none. */
const alloc_info_t *alloc_env_owner(const char *name_eq_value);

/* The MB_PROBE_READ list for this allocator: every tunable with a read-back. */
void alloc_probe_keys(const alloc_info_t *a, char *buf, size_t len);

/* Compare a requested canonical value with the value read back: true if equal. */
bool alloc_value_matches(const alloc_tunable_t *t, const char *requested, const char *effective);

/* The first place in the child's output where the allocator says it
 * rejected or ignored a setting (one of a->rejects), or NULL. */
const char *alloc_rejection(const alloc_info_t *a, const char *output);

/* If `line` (one line of the child's stderr) is one of a->outputs, write
 * its probe key and (mapped) value and return true. */
bool alloc_output_line(const alloc_info_t *a, const char *line, char *key, size_t klen, char *val,
                       size_t vlen);

#endif
