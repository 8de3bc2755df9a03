/* mimalloc.c - mimalloc 2.0.9 (Debian's libmimalloc2.0).  Settings through
 * MIMALLOC_<NAME>, read back with mi_option_get(index); the indices are
 * mi_option_t of 2.0.x (tests/unit/test_registry.c checks them against
 * mimalloc.h), and 2.1 renumbers them, so another version is refused. */
#include "family.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const alloc_tunable_t tunables[] = {
    {"eager_commit", TUN_BOOL, "1", 0, 1, NULL, "MIMALLOC_EAGER_COMMIT", "eager_commit/3",
     "commit segments eagerly"},
    {"large_os_pages", TUN_BOOL, "0", 0, 1, NULL, "MIMALLOC_LARGE_OS_PAGES", "large_os_pages/6",
     "use 2 MiB OS pages"},
    {"reserve_huge_os_pages", TUN_UINT, "0", 0, 1e6, NULL, "MIMALLOC_RESERVE_HUGE_OS_PAGES",
     "reserve_huge_os_pages/7", "1 GiB pages reserved at start"},
    {"page_reset", TUN_BOOL, "0", 0, 1, NULL, "MIMALLOC_PAGE_RESET", "page_reset/11",
     "reset (MADV_FREE) free pages"},
    {"abandoned_page_decommit", TUN_BOOL, "0", 0, 1, NULL, "MIMALLOC_ABANDONED_PAGE_DECOMMIT",
     "abandoned_page_decommit/12", "decommit pages of exited threads"},
    {"eager_commit_delay", TUN_UINT, "1", 0, 1e6, NULL, "MIMALLOC_EAGER_COMMIT_DELAY",
     "eager_commit_delay/14", "segments per thread before eager commit"},
    {"decommit_delay", TUN_INT, "25", -1, 1e9, NULL, "MIMALLOC_DECOMMIT_DELAY", "decommit_delay/15",
     "ms before free memory is decommitted (MADV_DONTNEED)"},
    {"use_numa_nodes", TUN_UINT, "0", 0, 1024, NULL, "MIMALLOC_USE_NUMA_NODES", "use_numa_nodes/16",
     "NUMA nodes to use; 0 all"},
    {"max_segment_reclaim", TUN_UINT, "8", 0, 1e9, NULL, "MIMALLOC_MAX_SEGMENT_RECLAIM",
     "max_segment_reclaim/21", "abandoned segments reclaimed per allocation"},
    {"allow_decommit", TUN_BOOL, "1", 0, 1, NULL, "MIMALLOC_ALLOW_DECOMMIT", "allow_decommit/22",
     "decommit free memory at all"},
    {"segment_decommit_delay", TUN_INT, "500", -1, 1e9, NULL, "MIMALLOC_SEGMENT_DECOMMIT_DELAY",
     "segment_decommit_delay/23", "ms before free segment parts are decommitted"},
    {"decommit_extend_delay", TUN_INT, "1", 0, 1e9, NULL, "MIMALLOC_DECOMMIT_EXTEND_DELAY",
     "decommit_extend_delay/24", "ms the decommit delay grows per purge"},
};

/* what `mallocbench tune` searches: one line per tunable (family.h) */
static const alloc_domain_t domains[] = {
    /* 2.0.9's purge delay (2.1: purge_delay); -1 is not "never" in 2.0.9 */
    {"decommit_delay", "0|25|250|1000|1000000"},
    /* 2.0.9 has no arena_eager_commit and no allow_large_os_pages (2.1 names):
     * the nearest options it reads back */
    {"eager_commit", "0|1"},
    {"large_os_pages", "0|1"},
    /* purge_decommits (2.1) is allow_decommit in 2.0.9 */
    {"allow_decommit", "0|1"},
};

static const alloc_refusal_t refused[] = {
    {"purge_delay", "is a mimalloc 2.1 option; 2.0.9 ignores it (use decommit_delay)"},
    {"purge_decommits", "is a mimalloc 2.1 option; 2.0.9 ignores it (use allow_decommit)"},
    {"allow_large_os_pages", "is a mimalloc 2.1 option; 2.0.9 ignores it (use large_os_pages)"},
    {"reset_decommits", "is a mimalloc 2.1 option; 2.0.9 ignores it"},
    {"reset_delay", "is deprecated in 2.0.9 (use decommit_delay)"},
    {NULL, NULL},
};

static const char *const sonames[] = {"libmimalloc.so.2", NULL};
static const char *const env_vars[] = {"MIMALLOC_", NULL};
/* text only its code carries, for `diagnose` (family.h) */
static const char *const marks[] = {"mimalloc_", "mi_malloc", NULL};
static const char *const ident[] = {"mi_version", NULL};

/* ---- inside the child -------------------------------------------------------
 * Option indices of mimalloc 2.0.x (enum mi_option_e of 2.0.9), with the
 * names MIMALLOC_<NAME> takes and the legacy alias; 2.1 renumbers them. */
static const struct { const char *name, *legacy; } options[] = {
    {"show_errors", NULL}, {"show_stats", NULL}, {"verbose", NULL},
    {"eager_commit", NULL}, {"deprecated_eager_region_commit", "eager_region_commit"},
    {"deprecated_reset_decommits", "reset_decommits"}, {"large_os_pages", NULL},
    {"reserve_huge_os_pages", NULL}, {"reserve_huge_os_pages_at", NULL},
    {"reserve_os_memory", NULL}, {"deprecated_segment_cache", "segment_cache"},
    {"page_reset", NULL}, {"abandoned_page_decommit", "abandoned_page_reset"},
    {"deprecated_segment_reset", "segment_reset"}, {"eager_commit_delay", NULL},
    {"decommit_delay", "reset_delay"}, {"use_numa_nodes", NULL},
    {"limit_os_alloc", NULL}, {"os_tag", NULL}, {"max_errors", NULL},
    {"max_warnings", NULL}, {"max_segment_reclaim", NULL},
    {"allow_decommit", NULL}, {"segment_decommit_delay", NULL},
    {"decommit_extend_delay", NULL}, {"destroy_on_exit", NULL},
};
#define NOPTIONS (long)ALLOC_NELEM(options)

typedef int (*version_fn)(void);
typedef long (*option_get_fn)(int);
typedef void (*process_info_fn)(size_t *, size_t *, size_t *, size_t *, size_t *, size_t *, size_t *,
                                size_t *);

#define SYM(p, type, name) ({ type f_ = NULL; void *a_ = (p)->sym(name); memcpy(&f_, &a_, sizeof a_); f_; })

static void version(const probe_ctx_t *p, char *out, size_t n)
{
    version_fn f = SYM(p, version_fn, "mi_version");
    out[0] = '\0';
    if (f) {
        int v = f();
        snprintf(out, n, "%d.%d.%d", v / 100, (v % 100) / 10, v % 10);
    }
}

static bool same_option(long i, const char *name)
{
    if (strncmp(name, "mi_option_", 10) == 0)
        name += 10;
    return strcasecmp(name, options[i].name) == 0 ||
           (options[i].legacy && strcasecmp(name, options[i].legacy) == 0) ||
           (strncmp(options[i].name, "deprecated_", 11) == 0 && strcasecmp(name, options[i].name + 11) == 0);
}

/* key: "decommit_delay/15" = option name / mi_option_t index */
static void read_key(const probe_ctx_t *p, const char *key, char *out, size_t n)
{
    char name[128], ver[32];
    const char *slash = strrchr(key, '/');
    version_fn mi_version = SYM(p, version_fn, "mi_version");
    option_get_fn get = SYM(p, option_get_fn, "mi_option_get");
    if (!slash) {
        snprintf(out, n, "!missing index: want name/mi_option_t index");
        return;
    }
    if ((size_t)(slash - key) >= sizeof name) {
        snprintf(out, n, "!key too long");
        return;
    }
    memcpy(name, key, (size_t)(slash - key));
    name[slash - key] = '\0';
    if (!mi_version || !get) {
        snprintf(out, n, "!mi_option_get not found in %s", p->malloc_path);
        return;
    }
    int v = mi_version();
    if (!(v / 100 == 2 && (v % 100) / 10 == 0)) {
        version(p, ver, sizeof ver);
        snprintf(out, n, "!cannot verify: option indices are for mimalloc 2.0, loaded %s", ver);
        return;
    }
    const char *idx = slash + 1;
    char *end;
    errno = 0;
    long i = strtol(idx, &end, 10);
    if (!*idx || *end || errno) {
        snprintf(out, n, "!bad option index '%s' (want name/index)", idx);
        return;
    }
    if (i < 0 || i >= NOPTIONS) {
        snprintf(out, n, "!option index %ld out of range 0..%ld", i, NOPTIONS - 1);
        return;
    }
    if (!same_option(i, name)) {
        snprintf(out, n, "!index %ld is %s in mimalloc 2.0, not %s", i, options[i].name, name);
        return;
    }
    snprintf(out, n, "%ld", get((int)i));
}

static void stats(const probe_ctx_t *p)
{
    process_info_fn info = SYM(p, process_info_fn, "mi_process_info");
    if (!info)
        return;
    size_t el = 0, ut = 0, st = 0, rss = 0, prss = 0, com = 0, pcom = 0, pf = 0;
    info(&el, &ut, &st, &rss, &prss, &com, &pcom, &pf);
    /* mimalloc 2.0 on Linux reports its commit as "current rss": not printed, it would mislead */
    p->line("stat:mi.peak_rss=%zu", prss);
    p->line("stat:mi.current_commit=%zu", com);
    p->line("stat:mi.peak_commit=%zu", pcom);
    p->line("stat:mi.page_faults=%zu", pf);
}

const alloc_info_t alloc_mimalloc = {
    .name = "mimalloc",
    .keep = "decommit_delay=1000000",
    .keep_stops = ALLOC_GIVES_MADVISE,
    /* 2.0.9 treats large OS pages as pinned: it also stops giving them back */
    .huge_advise = "large_os_pages=1",
    .huge_off = "large_os_pages=0,reserve_huge_os_pages=0",
    .hugetlbfs = "reserve_huge_os_pages=*", /* 1 GiB hugetlbfs pages reserved at start */
    .colour = "#CC79A7",
    .sonames = sonames,
    .tested_version = "2.0.9",
    .conf_how = "MIMALLOC_NAME=V",
    .version_how = "mi_version()",
    .tunables = tunables,
    .ntunables = ALLOC_NELEM(tunables),
    .domains = domains,
    .ndomains = ALLOC_NELEM(domains),
    .refused = refused,
    .conf = {NULL, NULL, NULL, "1", "0"},
    .env_vars = env_vars,
    .marks = marks,
    .check = ALLOC_CHECK_PROBE,
    .ident = ident,
    .probe_version = version,
    .probe_read = read_key,
    .probe_stats = stats,
};
