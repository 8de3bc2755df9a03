/* registry.h - the one table of allocators: for each, where Debian installs
 * it, how its tunables are spelt in the environment, how the probe reads
 * them back, and how its version is read.  No other file knows a library
 * name or a tunable.  Functions return 0 or -errno; messages go to err. */
#ifndef MB_ALLOC_REGISTRY_H
#define MB_ALLOC_REGISTRY_H
#include <stdbool.h>
#include <stddef.h>

typedef enum { ALLOC_GLIBC, ALLOC_JEMALLOC, ALLOC_TCMALLOC, ALLOC_MIMALLOC } alloc_family_t;
typedef enum { TUN_INT, TUN_UINT, TUN_SIZE, TUN_BOOL, TUN_DOUBLE, TUN_ENUM } tun_type_t;

typedef struct {
    const char *name;       /* the allocator's own name: "dirty_decay_ms" */
    tun_type_t type;
    const char *def;        /* documented default on Debian 12, as text */
    double min, max;        /* accepted range (inclusive); beyond it the allocator ignores or rejects */
    const char *choices;    /* TUN_ENUM: "|"-separated values */
    const char *env_key;    /* spelling in the environment (MALLOC_CONF key, glibc.malloc.x, TCMALLOC_X, MIMALLOC_X) */
    const char *readback;   /* probe key (see probe.h), or for glibc the --list-tunables name */
    const char *help;
} alloc_tunable_t;

typedef struct {
    const char *name;                 /* "jemalloc" */
    alloc_family_t family;
    const char *const *sonames;       /* candidates, first found wins; empty for glibc */
    const char *tested_version;       /* the version whose tunables this table describes */
    const char *conf_how;             /* how settings are passed, for `list` */
    const char *version_how;          /* how the version is read, for `list` */
    const alloc_tunable_t *tunables;
    size_t ntunables;
} alloc_info_t;

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
const char *alloc_family_name(alloc_family_t f);
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

/* The environment that applies settings: MALLOC_CONF, GLIBC_TUNABLES,
 * TCMALLOC_*, MIMALLOC_* (LD_PRELOAD is the runner's business). */
int alloc_build_env(const alloc_info_t *a, const alloc_setting_t *s, size_t n, alloc_env_t *env);

/* Is this variable one an allocator reads (so an inherited one must not leak in)? */
bool alloc_env_is_allocator_var(const char *name_eq_value);

/* The MB_PROBE_READ list for this allocator: every tunable with a read-back. */
void alloc_probe_keys(const alloc_info_t *a, char *buf, size_t len);

/* Compare a requested canonical value with the value read back: true if equal. */
bool alloc_value_matches(const alloc_tunable_t *t, const char *requested, const char *effective);

#endif
