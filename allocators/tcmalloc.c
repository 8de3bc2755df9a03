/* tcmalloc.c - gperftools 2.10 (Debian's libtcmalloc / libtcmalloc_minimal).
 * TCMALLOC_* variables are read once at start-up into FLAGS_* globals; the
 * probe reads those globals (exported data symbols) or MallocExtension's
 * numeric properties. */
#include "family.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BIG 9.0e18

static const alloc_tunable_t tunables[] = {
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

/* what `mallocbench tune` searches: one line per tunable (family.h) */
static const alloc_domain_t domains[] = {
    {"release_rate", "0|0.1|1|10"},
    {"aggressive_decommit", "false|true"},
    {"max_total_thread_cache_bytes", "8M|32M|128M|512M"},
};

static const alloc_refusal_t refused[] = {{NULL, NULL}};
static const char *const sonames[] = {"libtcmalloc.so.4", "libtcmalloc_minimal.so.4", NULL};
static const char *const env_vars[] = {"TCMALLOC_", "HEAPCHECK=", "HEAPPROFILE=", "CPUPROFILE=", NULL};
/* text only its code carries, for `diagnose` (family.h) */
static const char *const marks[] = {"TCMALLOC_RELEASE_RATE", "tc_malloc", NULL};
static const char *const ident[] = {"tc_version", "MallocExtension_GetNumericProperty", NULL};

/* ---- inside the child -------------------------------------------------------
 * gperftools 2.10 has no C API for the release rate, but its gflags-style
 * flags are exported data symbols, e.g. (nm -D libtcmalloc.so.4)
 *   FLAG__namespace_do_not_use_directly_use_DECLARE_double_instead::
 *       FLAGS_tcmalloc_release_rate          (double)
 * TCMallocImplementation::GetMemoryReleaseRate() is literally a load of that
 * double through the GOT and SetMemoryReleaseRate a store, and the page heap
 * reads it on every scavenge: the symbol IS the effective value.  Exported
 * likewise: tcmalloc_heap_limit_mb, tcmalloc_large_alloc_report_threshold,
 * tcmalloc_sample_parameter (int64), malloc_skip_sbrk, malloc_skip_mmap,
 * malloc_disable_memory_release (bool), verbose (int32).  Not exported:
 * max_total_thread_cache_bytes and aggressive_memory_decommit, which are
 * numeric properties instead. */
typedef int (*prop_fn)(const char *, size_t *);
typedef const char *(*version_fn)(int *, int *, const char **);

static prop_fn get_prop(const probe_ctx_t *p)
{
    prop_fn f = NULL;
    void *a = p->sym("MallocExtension_GetNumericProperty");
    memcpy(&f, &a, sizeof a);
    return f;
}

static const char *const flag_types[] = {"double", "int64", "int32", "bool"};

/* Reads flag `name` of type `tname` ("" = whichever type exists). */
static void tc_flag(const probe_ctx_t *p, const char *name, const char *tname, char *out, size_t n)
{
    char sym[256], ns[96];
    if (strncmp(name, "FLAGS_", 6) == 0)
        name += 6;
    if (!*name) {
        snprintf(out, n, "!empty flag name");
        return;
    }
    bool known = !*tname;
    for (size_t t = 0; t < ALLOC_NELEM(flag_types); t++) {
        const char *ty = flag_types[t];
        if (*tname && strcmp(tname, ty) != 0)
            continue;
        known = true;
        int nl = snprintf(ns, sizeof ns, "FLAG__namespace_do_not_use_directly_use_DECLARE_%s_instead", ty);
        int sl = snprintf(sym, sizeof sym, "_ZN%d%s%zuFLAGS_%sE", nl, ns, strlen(name) + 6, name);
        if (nl < 0 || sl < 0 || (size_t)sl >= sizeof sym)
            break;
        void *v = p->sym(sym);
        if (!v)
            continue;
        switch (t) {
        case 0: { double d; memcpy(&d, v, sizeof d); snprintf(out, n, "%.17g", d); break; }
        case 1: { int64_t x; memcpy(&x, v, sizeof x); snprintf(out, n, "%lld", (long long)x); break; }
        case 2: { int32_t x; memcpy(&x, v, sizeof x); snprintf(out, n, "%d", (int)x); break; }
        default: { unsigned char b; memcpy(&b, v, 1); snprintf(out, n, "%d", b ? 1 : 0); break; }
        }
        return;
    }
    if (!known) {
        snprintf(out, n, "!unknown flag type '%s' (double, int64, int32, bool)", tname);
        return;
    }
    snprintf(out, n, "!no exported flag FLAGS_%s%s%s in %s", name, *tname ? " of type " : "", tname,
             p->malloc_path);
}

/* key: "flag:<name>/<type>", "release_rate", or a numeric property name */
static void read_key(const probe_ctx_t *p, const char *key, char *out, size_t n)
{
    if (strcmp(key, "release_rate") == 0) {
        tc_flag(p, "tcmalloc_release_rate", "double", out, n);
        return;
    }
    if (strncmp(key, "flag:", 5) == 0) {
        char name[128];
        const char *slash = strchr(key + 5, '/');
        size_t len = slash ? (size_t)(slash - (key + 5)) : strlen(key + 5);
        if (len >= sizeof name) {
            snprintf(out, n, "!flag name too long");
            return;
        }
        memcpy(name, key + 5, len);
        name[len] = '\0';
        tc_flag(p, name, slash ? slash + 1 : "", out, n);
        return;
    }
    prop_fn prop = get_prop(p);
    size_t v = 0;
    if (!prop) {
        snprintf(out, n, "!MallocExtension_GetNumericProperty not found in %s", p->malloc_path);
        return;
    }
    if (!prop("generic.heap_size", &v)) {
        snprintf(out, n, "!tcmalloc not initialised yet (no MallocExtension registered)");
        return;
    }
    if (prop(key, &v))
        snprintf(out, n, "%zu", v);
    else
        snprintf(out, n, "!unknown property");
}

static void version(const probe_ctx_t *p, char *out, size_t n)
{
    version_fn f = NULL;
    void *a = p->sym("tc_version");
    memcpy(&f, &a, sizeof a);
    out[0] = '\0';
    if (f) {
        int maj = 0, min = 0;
        const char *patch = NULL;
        f(&maj, &min, &patch);
        snprintf(out, n, "%d.%d%s", maj, min, patch ? patch : "");
    }
}

static void stats(const probe_ctx_t *p)
{
    static const char *const names[] = {
        "generic.current_allocated_bytes", "generic.heap_size",
        "tcmalloc.pageheap_free_bytes", "tcmalloc.pageheap_unmapped_bytes",
    };
    prop_fn prop = get_prop(p);
    for (size_t i = 0; i < ALLOC_NELEM(names); i++) {
        size_t v = 0;
        if (prop && prop(names[i], &v))
            p->line("stat:%s=%zu", names[i], v);
        else
            p->line("stat:%s=!unknown property", names[i]);
    }
}

const alloc_info_t alloc_tcmalloc = {
    .name = "tcmalloc",
    .keep = "release_rate=0",
    .keep_stops = ALLOC_GIVES_MADVISE,
    .huge_none = "gperftools 2.10 has no transparent-huge-page setting",
    .colour = "#009E73",
    .sonames = sonames,
    .tested_version = "2.10",
    .conf_how = "TCMALLOC_NAME=V",
    .version_how = "tc_version()",
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
