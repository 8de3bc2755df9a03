/* registry.c - the allocator table (Debian 12 versions; see
 * ../shared/ALLOCATORS.md) and the pure functions around it: locating a
 * library, checking and canonicalising a setting, building its environment. */
#include "registry.h"
#include "mb_config.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define BIG 9.0e18
#define RUN_SETTINGS_MAX_REG 32

/* jemalloc 5.3.0: MALLOC_CONF="key:value,...", read back with mallctl("opt.<key>"). */
static const alloc_tunable_t je_tunables[] = {
    {"dirty_decay_ms", TUN_INT, "10000", -1, BIG, NULL, "dirty_decay_ms", "opt.dirty_decay_ms/ssize",
     "ms before unused dirty pages are purged; -1 never, 0 at once"},
    {"muzzy_decay_ms", TUN_INT, "0", -1, BIG, NULL, "muzzy_decay_ms", "opt.muzzy_decay_ms/ssize",
     "ms before muzzy (MADV_FREE'd) pages are purged; 0 = dirty pages are force-purged (MADV_DONTNEED)"},
    {"oversize_threshold", TUN_SIZE, "8M", 0, BIG, NULL, "oversize_threshold", "opt.oversize_threshold/size",
     "requests at or above this go to the huge arena and are purged on free"},
    {"background_thread", TUN_BOOL, "false", 0, 1, NULL, "background_thread", "opt.background_thread/bool",
     "purge from background threads instead of on the allocating thread"},
    {"narenas", TUN_UINT, "4 x ncpus", 1, 4294967295.0, NULL, "narenas", "opt.narenas/unsigned",
     "number of arenas"},
    {"tcache", TUN_BOOL, "true", 0, 1, NULL, "tcache", "opt.tcache/bool", "thread caches"},
    {"tcache_max", TUN_SIZE, "32K", 0, 8388608, NULL, "tcache_max", "opt.tcache_max/size",
     "largest size class held in thread caches"},
    {"retain", TUN_BOOL, "true", 0, 1, NULL, "retain", "opt.retain/bool",
     "keep virtual memory mapped (MADV) instead of munmap"},
    {"thp", TUN_ENUM, "default", 0, 0, "default|always|never", "thp", "opt.thp/string",
     "transparent huge pages for jemalloc's extents"},
    {"metadata_thp", TUN_ENUM, "disabled", 0, 0, "disabled|auto|always", "metadata_thp",
     "opt.metadata_thp/string", "transparent huge pages for metadata"},
    {"percpu_arena", TUN_ENUM, "disabled", 0, 0, "disabled|percpu|phycpu", "percpu_arena",
     "opt.percpu_arena/string", "one arena per CPU instead of round-robin threads"},
};

/* glibc 2.36: GLIBC_TUNABLES=glibc.malloc.NAME=V:...; unknown names and
 * out-of-range values are ignored silently, so ranges here are the ones
 * malloc.c accepts and every run is checked with `ld.so --list-tunables`. */
static const alloc_tunable_t glibc_tunables[] = {
    {"trim_threshold", TUN_SIZE, "128K (dynamic)", 0, 1.8e19, NULL, "glibc.malloc.trim_threshold",
     "glibc.malloc.trim_threshold", "free memory at the top of the main heap above this is returned with brk"},
    {"top_pad", TUN_SIZE, "0", 0, 1.8e19, NULL, "glibc.malloc.top_pad", "glibc.malloc.top_pad",
     "extra bytes asked of the kernel on each heap growth"},
    {"mmap_threshold", TUN_SIZE, "128K (dynamic, up to 32M)", 0, 33554432, NULL,
     "glibc.malloc.mmap_threshold", "glibc.malloc.mmap_threshold",
     "requests at or above this are mmapped and munmapped on free (malloc ignores > 32M)"},
    {"mmap_max", TUN_UINT, "65536", 0, 2147483647, NULL, "glibc.malloc.mmap_max", "glibc.malloc.mmap_max",
     "most chunks mmapped at once; 0 disables mmap for large requests"},
    {"arena_max", TUN_UINT, "8 x cores", 1, BIG, NULL, "glibc.malloc.arena_max", "glibc.malloc.arena_max",
     "most arenas"},
    {"arena_test", TUN_UINT, "8", 1, BIG, NULL, "glibc.malloc.arena_test", "glibc.malloc.arena_test",
     "arenas created before arena_max is checked"},
    {"tcache_max", TUN_SIZE, "1032", 0, 1032, NULL, "glibc.malloc.tcache_max", "glibc.malloc.tcache_max",
     "largest request served from the thread cache (malloc ignores > 1032)"},
    {"tcache_count", TUN_UINT, "7", 0, 65535, NULL, "glibc.malloc.tcache_count", "glibc.malloc.tcache_count",
     "chunks per thread-cache bin (malloc ignores > 65535)"},
    {"tcache_unsorted_limit", TUN_UINT, "0", 0, BIG, NULL, "glibc.malloc.tcache_unsorted_limit",
     "glibc.malloc.tcache_unsorted_limit", "unsorted chunks moved to tcache per malloc; 0 no limit"},
    {"mxfast", TUN_SIZE, "128", 0, 160, NULL, "glibc.malloc.mxfast", "glibc.malloc.mxfast",
     "largest fastbin chunk (malloc ignores > 160)"},
    {"hugetlb", TUN_UINT, "0", 0, 2, NULL, "glibc.malloc.hugetlb", "glibc.malloc.hugetlb",
     "1: madvise(MADV_HUGEPAGE) when THP is in madvise mode; 2: MAP_HUGETLB"},
    {"perturb", TUN_UINT, "0", 0, 255, NULL, "glibc.malloc.perturb", "glibc.malloc.perturb",
     "fill allocated and freed memory with this byte (touches every page)"},
};

/* gperftools 2.10: TCMALLOC_* read once at start-up into FLAGS_* globals,
 * read back by the probe from those globals or from numeric properties. */
static const alloc_tunable_t tc_tunables[] = {
    {"release_rate", TUN_DOUBLE, "1.0", 0, 1000, NULL, "TCMALLOC_RELEASE_RATE",
     "flag:tcmalloc_release_rate/double", "rate of returning free pages to the kernel; 0 never"},
    {"max_total_thread_cache_bytes", TUN_SIZE, "32M", 0, BIG, NULL,
     "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES", "tcmalloc.max_total_thread_cache_bytes",
     "bound on all thread caches together"},
    {"aggressive_decommit", TUN_BOOL, "false", 0, 1, NULL, "TCMALLOC_AGGRESSIVE_DECOMMIT",
     "tcmalloc.aggressive_memory_decommit", "release every free span at once"},
    {"heap_limit_mb", TUN_UINT, "0", 0, BIG, NULL, "TCMALLOC_HEAP_LIMIT_MB",
     "flag:tcmalloc_heap_limit_mb/int64", "heap size limit in MiB; 0 none"},
    {"large_alloc_report_threshold", TUN_SIZE, "1G", 0, BIG, NULL,
     "TCMALLOC_LARGE_ALLOC_REPORT_THRESHOLD", "flag:tcmalloc_large_alloc_report_threshold/int64",
     "print a report for allocations above this"},
    {"skip_sbrk", TUN_BOOL, "false", 0, 1, NULL, "TCMALLOC_SKIP_SBRK", "flag:malloc_skip_sbrk/bool",
     "never grow the heap with sbrk"},
    {"skip_mmap", TUN_BOOL, "false", 0, 1, NULL, "TCMALLOC_SKIP_MMAP", "flag:malloc_skip_mmap/bool",
     "never grow the heap with mmap"},
    {"disable_memory_release", TUN_BOOL, "false", 0, 1, NULL, "TCMALLOC_DISABLE_MEMORY_RELEASE",
     "flag:malloc_disable_memory_release/bool", "never release memory to the kernel"},
};

/* mimalloc 2.0.9: MIMALLOC_<NAME>, read back with mi_option_get(index);
 * the indices are mi_option_t of 2.0.x (tests check them against mimalloc.h). */
static const alloc_tunable_t mi_tunables[] = {
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

static const char *const no_libs[] = {NULL};
static const char *const je_libs[] = {"libjemalloc.so.2", NULL};
static const char *const tc_libs[] = {"libtcmalloc.so.4", "libtcmalloc_minimal.so.4", NULL};
static const char *const mi_libs[] = {"libmimalloc.so.2", NULL};

static const alloc_info_t allocators[] = {
    {"glibc", ALLOC_GLIBC, no_libs, "2.36", "GLIBC_TUNABLES=glibc.malloc.NAME=V:...",
     "gnu_get_libc_version()", glibc_tunables, NELEM(glibc_tunables)},
    {"jemalloc", ALLOC_JEMALLOC, je_libs, "5.3.0", "MALLOC_CONF=NAME:V,...",
     "mallctl(\"version\")", je_tunables, NELEM(je_tunables)},
    {"tcmalloc", ALLOC_TCMALLOC, tc_libs, "2.10", "TCMALLOC_NAME=V", "tc_version()",
     tc_tunables, NELEM(tc_tunables)},
    {"mimalloc", ALLOC_MIMALLOC, mi_libs, "2.0.9", "MIMALLOC_NAME=V", "mi_version()",
     mi_tunables, NELEM(mi_tunables)},
};

/* Names a newer or older release uses that the installed one ignores. */
static const struct {
    alloc_family_t family;
    const char *name, *reason;
} refused[] = {
    {ALLOC_MIMALLOC, "purge_delay", "is a mimalloc 2.1 option; 2.0.9 ignores it (use decommit_delay)"},
    {ALLOC_MIMALLOC, "purge_decommits", "is a mimalloc 2.1 option; 2.0.9 ignores it (use allow_decommit)"},
    {ALLOC_MIMALLOC, "allow_large_os_pages", "is a mimalloc 2.1 option; 2.0.9 ignores it (use large_os_pages)"},
    {ALLOC_MIMALLOC, "reset_decommits", "is a mimalloc 2.1 option; 2.0.9 ignores it"},
    {ALLOC_MIMALLOC, "reset_delay", "is deprecated in 2.0.9 (use decommit_delay)"},
    {ALLOC_JEMALLOC, "lg_dirty_mult", "was removed in jemalloc 5 (use dirty_decay_ms)"},
    {ALLOC_JEMALLOC, "decay_time", "was removed in jemalloc 5 (use dirty_decay_ms)"},
    {ALLOC_JEMALLOC, "lg_tcache_max", "was replaced by tcache_max in jemalloc 5.3"},
};

size_t alloc_count(void) { return NELEM(allocators); }
const alloc_info_t *alloc_at(size_t i) { return i < NELEM(allocators) ? &allocators[i] : NULL; }

const alloc_info_t *alloc_find(const char *name)
{
    for (size_t i = 0; i < NELEM(allocators); i++)
        if (strcmp(allocators[i].name, name) == 0)
            return &allocators[i];
    return NULL;
}

const char *alloc_family_name(alloc_family_t f)
{
    static const char *const names[] = {"glibc", "jemalloc", "tcmalloc", "mimalloc"};
    return (unsigned)f < NELEM(names) ? names[f] : "unknown";
}

const alloc_tunable_t *alloc_find_tunable(const alloc_info_t *a, const char *name)
{
    for (size_t i = 0; i < a->ntunables; i++)
        if (strcmp(a->tunables[i].name, name) == 0)
            return &a->tunables[i];
    return NULL;
}

const char *alloc_refused_reason(const alloc_info_t *a, const char *name)
{
    for (size_t i = 0; i < NELEM(refused); i++)
        if (refused[i].family == a->family && strcmp(refused[i].name, name) == 0)
            return refused[i].reason;
    return NULL;
}

int alloc_locate(const alloc_info_t *a, char *path, size_t len)
{
    static const char *const dirs[] = {"/usr/local/lib", "/usr/lib/" MB_MULTIARCH,
                                       "/lib/" MB_MULTIARCH, "/usr/lib64", "/usr/lib"};
    for (const char *const *so = a->sonames; *so; so++) {
        for (size_t d = 0; d < NELEM(dirs); d++) {
            snprintf(path, len, "%s/%s", dirs[d], *so);
            if (access(path, R_OK) == 0)
                return 0;
        }
    }
    path[0] = '\0';
    return -ENOENT;
}

static void list_names(const alloc_info_t *a, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < a->ntunables && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", a->tunables[i].name);
}

int alloc_parse_setting(const alloc_info_t *a, const char *text, alloc_setting_t *out,
                        char *err, size_t errlen)
{
    const char *eq = strchr(text, '=');
    char name[64];
    if (!eq || eq == text || (size_t)(eq - text) >= sizeof name) {
        snprintf(err, errlen, "bad tunable '%s' for %s: expected NAME=VALUE", text, a->name);
        return -EINVAL;
    }
    memcpy(name, text, (size_t)(eq - text));
    name[eq - text] = '\0';
    const char *val = eq + 1;
    const alloc_tunable_t *t = alloc_find_tunable(a, name);
    if (!t) {
        const char *why = alloc_refused_reason(a, name);
        char names[1024];
        list_names(a, names, sizeof names);
        if (why)
            snprintf(err, errlen, "%s tunable '%s' %s", a->name, name, why);
        else
            snprintf(err, errlen, "unknown %s tunable '%s' (valid: %s)", a->name, name, names);
        return -EINVAL;
    }
    out->t = t;
    double num = 0;
    int rc = 0;
    switch (t->type) {
    case TUN_SIZE: {
        uint64_t v;
        rc = units_parse_size(val, &v);
        num = (double)v;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%llu", (unsigned long long)v);
        break;
    }
    case TUN_UINT: {
        uint64_t v;
        rc = units_parse_u64(val, &v);
        num = (double)v;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%llu", (unsigned long long)v);
        break;
    }
    case TUN_INT: {
        int64_t v;
        rc = units_parse_i64(val, &v);
        num = (double)v;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%lld", (long long)v);
        break;
    }
    case TUN_DOUBLE:
        rc = units_parse_double(val, &num);
        if (!rc)
            snprintf(out->value, sizeof out->value, "%.17g", num);
        break;
    case TUN_BOOL:
        /* the spellings a matrix file's yes/no keys accept, so the two agree */
        if (!strcasecmp(val, "1") || !strcasecmp(val, "true") || !strcasecmp(val, "on") ||
            !strcasecmp(val, "yes"))
            num = 1;
        else if (!strcasecmp(val, "0") || !strcasecmp(val, "false") || !strcasecmp(val, "off") ||
                 !strcasecmp(val, "no"))
            num = 0;
        else
            rc = -EINVAL;
        if (!rc)
            snprintf(out->value, sizeof out->value, "%d", (int)num);
        break;
    case TUN_ENUM: {
        uint64_t idx;
        if (units_parse_choice(t->choices, val, &idx)) {
            snprintf(err, errlen, "bad value '%s' for %s:%s (one of %s)", val, a->name, name, t->choices);
            return -EINVAL;
        }
        snprintf(out->value, sizeof out->value, "%s", val);
        return 0;
    }
    }
    if (rc) {
        static const char *const what[] = {"an integer", "a non-negative integer",
                                           "a size such as 64K or 16M", "true or false (1/0, yes/no, on/off)", "a number", ""};
        snprintf(err, errlen, "bad value '%s' for %s:%s (expected %s)", val, a->name, name, what[t->type]);
        return -EINVAL;
    }
    if (num < t->min || num > t->max) {
        snprintf(err, errlen, "value '%s' for %s:%s is out of range [%.15g, %.15g]", val, a->name,
                 name, t->min, t->max);
        return -ERANGE;
    }
    return 0;
}

static int env_append(alloc_env_t *env, const char *fmt, const char *k, const char *v)
{
    if (env->n >= ALLOC_ENV_MAX)
        return -E2BIG;
    int n = snprintf(env->var[env->n], ALLOC_ENV_LEN, fmt, k, v);
    if (n < 0 || n >= ALLOC_ENV_LEN)
        return -E2BIG;
    env->n++;
    return 0;
}

/* Join settings into one variable: prefix, then key<kv>value joined by sep. */
static int env_join(alloc_env_t *env, const char *var, const alloc_setting_t *s, size_t n,
                    const char *kv, const char *sep)
{
    char buf[ALLOC_ENV_LEN];
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + off, sizeof buf - off, "%s%s%s%s", i ? sep : "", s[i].t->env_key, kv,
                         s[i].value);
        if (w < 0 || (size_t)w >= sizeof buf - off)
            return -E2BIG;
        off += (size_t)w;
    }
    return env_append(env, "%s=%s", var, buf);
}

int alloc_build_env(const alloc_info_t *a, const alloc_setting_t *s, size_t n, alloc_env_t *env)
{
    env->n = 0;
    if (n == 0)
        return 0;
    switch (a->family) {
    case ALLOC_JEMALLOC: {
        /* MALLOC_CONF spells booleans true/false; 1/0 are "Invalid conf value" */
        alloc_setting_t je[RUN_SETTINGS_MAX_REG];
        if (n > RUN_SETTINGS_MAX_REG)
            return -E2BIG;
        for (size_t i = 0; i < n; i++) {
            je[i] = s[i];
            if (s[i].t->type == TUN_BOOL)
                snprintf(je[i].value, sizeof je[i].value, "%s", strcmp(s[i].value, "1") ? "false" : "true");
        }
        return env_join(env, "MALLOC_CONF", je, n, ":", ",");
    }
    case ALLOC_GLIBC:
        return env_join(env, "GLIBC_TUNABLES", s, n, "=", ":");
    case ALLOC_TCMALLOC:
    case ALLOC_MIMALLOC:
        for (size_t i = 0; i < n; i++) {
            int rc = env_append(env, "%s=%s", s[i].t->env_key, s[i].value);
            if (rc)
                return rc;
        }
        return 0;
    }
    return -EINVAL;
}

bool alloc_env_is_allocator_var(const char *nv)
{
    static const char *const exact[] = {"MALLOC_CONF=", "JE_MALLOC_CONF=", "GLIBC_TUNABLES=",
                                        "LD_PRELOAD=", "MALLOC_ARENA_MAX=", "MALLOC_ARENA_TEST=",
                                        "MALLOC_TOP_PAD_=", "MALLOC_TRIM_THRESHOLD_=",
                                        "MALLOC_MMAP_THRESHOLD_=", "MALLOC_MMAP_MAX_=",
                                        "MALLOC_PERTURB_=", "MALLOC_CHECK_=", "HEAPCHECK=",
                                        "HEAPPROFILE=", "CPUPROFILE="};
    static const char *const prefix[] = {"TCMALLOC_", "MIMALLOC_", "MB_PROBE_", "MB_SYNC_"};
    for (size_t i = 0; i < NELEM(exact); i++)
        if (strncmp(nv, exact[i], strlen(exact[i])) == 0)
            return true;
    for (size_t i = 0; i < NELEM(prefix); i++)
        if (strncmp(nv, prefix[i], strlen(prefix[i])) == 0)
            return true;
    return false;
}

void alloc_probe_keys(const alloc_info_t *a, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    if (a->family == ALLOC_GLIBC)
        return;
    for (size_t i = 0; i < a->ntunables && off < len; i++)
        if (a->tunables[i].readback)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "," : "",
                                    a->tunables[i].readback);
}

/* Parse a read-back number: decimal, 0x hex (ld.so), or true/false. */
static int effective_number(const char *s, double *out)
{
    if (!strcmp(s, "true")) { *out = 1; return 0; }
    if (!strcmp(s, "false")) { *out = 0; return 0; }
    char *end;
    errno = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        *out = (double)strtoull(s, &end, 16);
    } else {
        *out = strtod(s, &end);
    }
    return (errno || end == s || *end) ? -EINVAL : 0;
}

bool alloc_value_matches(const alloc_tunable_t *t, const char *requested, const char *effective)
{
    if (!effective || !*effective || effective[0] == '!')
        return false;
    if (t->type == TUN_ENUM)
        return strcmp(requested, effective) == 0;
    double want, got;
    if (effective_number(requested, &want) || effective_number(effective, &got))
        return false;
    if (t->type == TUN_DOUBLE)
        return fabs(want - got) <= 1e-9 * fmax(1.0, fabs(want));
    return want == got;
}
