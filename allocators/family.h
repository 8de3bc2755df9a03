/* family.h - what one allocator family is, as data: one `alloc_info_t` per
 * family, defined in its own file (allocators/<name>.c) and listed once in
 * allocators/families.c.  Everything the harness and the probe know about
 * an allocator comes from here: how it is found, how settings reach it and
 * how they are read back, what its complaints look like on stderr, and
 * (inside the child, through libmbprobe.so) how it is recognised, its
 * version, its effective settings and its statistics.
 *
 * This header is shared by the harness (core library) and the probe
 * (libmbprobe.so, libc/libdl only), so a family file may use libc and the
 * probe_ctx_t below, nothing else. */
#ifndef MB_ALLOC_FAMILY_H
#define MB_ALLOC_FAMILY_H
#include <stdbool.h>
#include <stddef.h>

typedef enum { TUN_INT, TUN_UINT, TUN_SIZE, TUN_BOOL, TUN_DOUBLE, TUN_ENUM } tun_type_t;

typedef struct {
    const char *name;       /* the allocator's own name: "dirty_decay_ms" */
    tun_type_t type;
    const char *def;        /* documented default on Debian 12, as text */
    double min, max;        /* accepted range (inclusive); beyond it the allocator ignores or rejects */
    const char *choices;    /* TUN_ENUM: "|"-separated values */
    const char *env_key;    /* its spelling in the environment (key in a joined variable, or a variable) */
    const char *readback;   /* ALLOC_CHECK_PROBE: the key the probe reads ("tun:<key>");
                             * ALLOC_CHECK_LOADER: the loader's name for it; ALLOC_CHECK_ENV: NULL */
    const char *help;
} alloc_tunable_t;

/* The search domain of one tunable for `mallocbench tune`: `values`
 * "V|V|V" (each a value the tunable accepts), or "LO..HI" a log range
 * (both ends accepted values, 0 < LO < HI; integers are rounded).  The
 * default is the tunable's own (`def`): the family with nothing set. */
typedef struct {
    const char *name, *values;
} alloc_domain_t;

/* How a setting is proven to have taken effect. */
typedef enum {
    ALLOC_CHECK_PROBE,      /* read back inside the child: probe_read, or a line of the
                             * allocator's own stderr report (alloc_output_t) */
    ALLOC_CHECK_LOADER,     /* the dynamic loader lists effective values (`ld.so --list-tunables`),
                             * checked before the run; the child must see the same variable */
    ALLOC_CHECK_ENV,        /* no read-back exists: the child must see the variable, and the
                             * allocator's own parser complains on stderr about a bad one */
} alloc_check_t;

/* A name some other release uses that the installed one ignores. */
typedef struct {
    const char *name, *reason;
} alloc_refusal_t;

/* Settings in the environment: joined into one variable (var != NULL,
 * "key<kv>value<sep>key<kv>value"), or one variable per setting named by
 * env_key (var == NULL).  Booleans are spelt yes/no as given. */
typedef struct {
    const char *var, *kv, *sep;
    const char *yes, *no;
} alloc_conf_t;

/* A line of the child's stderr that the allocator wrote: `prefix` starts
 * it; the rest of the line (trimmed) becomes the probe key `key`.  With
 * `map` ("text=value|text=value"), the text is translated first. */
typedef struct {
    const char *prefix, *key, *map;
} alloc_output_t;

/* What the probe offers a family's hooks inside the child. */
typedef struct probe_ctx {
    /* the definition of `name` in the object serving malloc, or NULL */
    void *(*sym)(const char *name);
    /* one report line, "key=value" */
    void (*line)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
    const char *malloc_path;    /* realpath of the object serving malloc */
} probe_ctx_t;

/* The calls by which an allocator gives memory back (alloc_info_t.keep_stops). */
#define ALLOC_GIVES_MADVISE 1u
#define ALLOC_GIVES_MUNMAP 2u
#define ALLOC_GIVES_BRK 4u

typedef struct alloc_info {
    const char *name;                 /* "jemalloc": the family, in CSV rows and on the command line */
    const char *colour;               /* its fixed colour in every plot (via the run's sidecar) */
    /* finding it: candidate file names, first found wins; NULL: part of libc (the
     * system allocator, never preloaded) */
    const char *const *sonames;
    const char *const *dirs;          /* searched before the system library directories; glob
                                       * patterns, the highest version (strverscmp) first */
    const char *tested_version;       /* the version whose tunables this file describes */
    const char *conf_how;             /* how settings are passed, for `list` */
    const char *version_how;          /* how the version is read, for `list` */
    const alloc_tunable_t *tunables;
    size_t ntunables;
    const alloc_domain_t *domains;    /* what `tune` searches (a subset of tunables) */
    size_t ndomains;
    /* a hand-picked setting others recommend, "name=value,..." and its label, or NULL */
    const char *known, *known_label;
    /* The setting that keeps freed memory instead of giving it back to the
     * kernel ("name=value,...", tunables of this family), for `diagnose`'s
     * fix; NULL: the family has none.  keep_stops: the calls it stops,
     * ALLOC_GIVES_* bits (what it leaves, e.g. scudo's munmap of large
     * blocks, is still paid after the fix). */
    const char *keep;
    unsigned keep_stops;
    /* Huge pages (-t LABEL:huge=never|advise|system, docs/thp.md).  huge_advise:
     * the family's own setting that asks the kernel for transparent huge pages
     * ("name=value"), what huge=advise sets; NULL: none, and huge_none says
     * why advise is refused.  huge_off: its huge-page tunables and the values
     * that ask for none ("name=v|v,name=v"): under huge=never any other value
     * of them contradicts the condition.  hugetlbfs: a setting ("name=value",
     * or "name=*": any value but 0) that needs reserved hugetlbfs pages
     * (vm.nr_hugepages), refused while none are reserved.  NULL: none. */
    const char *huge_advise, *huge_none, *huge_off, *hugetlbfs;
    /* The lists below end with a NULL entry; a family without one leaves the field out
     * (NULL: empty), so a descriptor states only what its family has. */
    const alloc_refusal_t *refused;   /* names other releases use that this one ignores */
    alloc_conf_t conf;
    const char *const *extra_env;     /* set in every child of this family: "NAME=VALUE" */
    const char *const *env_vars;      /* variables it reads: "NAME=" exactly, or a "PREFIX_" */
    const char *const *marks;         /* text only its code carries: how `diagnose` recognises
                                       * it linked into a static (or self-allocating) program */
    alloc_check_t check;
    const char *const *rejects;       /* stderr text meaning a setting was rejected or ignored */
    const alloc_output_t *outputs;    /* stderr lines read back as probe keys, {NULL}-terminated */
    const char *mismatch_key;         /* probe key that explains a family mismatch ... */
    const char *mismatch_hint;        /* ... with this text */
    /* inside the child (libmbprobe.so): */
    const char *const *ident;         /* symbols: one defined by the object serving malloc names the family */
    const char *const *report_syms;   /* also reported (api:<sym>=<object>), never decide */
    void (*probe_version)(const probe_ctx_t *p, char *out, size_t n);
    /* one read-back key (tunable->readback) into out, or "!reason" */
    void (*probe_read)(const probe_ctx_t *p, const char *key, char *out, size_t n);
    void (*probe_stats)(const probe_ctx_t *p);  /* stat:<name>=<value> lines at exit */
} alloc_info_t;

/* The table: allocators/families.c. */
extern const alloc_info_t *const alloc_families[];
extern const size_t alloc_nfamilies;

#define ALLOC_NELEM(a) (sizeof(a) / sizeof((a)[0]))

#endif
