/* jemalloc.c - jemalloc 5.3.0 (Debian's libjemalloc2).  Settings through
 * MALLOC_CONF="key:value,...", read back inside the child with
 * mallctl("opt.<key>"); a bad pair makes jemalloc print "<jemalloc>: ..."
 * and carry on, which is an error here. */
#include "family.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define BIG 9.0e18

static const alloc_tunable_t tunables[] = {
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

/* what `mallocbench tune` searches: one line per tunable (family.h) */
static const alloc_domain_t domains[] = {
    {"dirty_decay_ms", "-1|0|1000|10000|100000"},
    {"muzzy_decay_ms", "-1|0|1000|10000"},
    {"narenas", "1|2|4|8|16"},
    {"background_thread", "false|true"},
    {"oversize_threshold", "0|1M|8M|64M"},
    {"metadata_thp", "disabled|auto|always"},
    {"tcache_max", "4K|16K|32K|256K|1M"},
};

static const alloc_refusal_t refused[] = {
    {"lg_dirty_mult", "was removed in jemalloc 5 (use dirty_decay_ms)"},
    {"decay_time", "was removed in jemalloc 5 (use dirty_decay_ms)"},
    {"lg_tcache_max", "was replaced by tcache_max in jemalloc 5.3"},
    {NULL, NULL},
};

static const char *const sonames[] = {"libjemalloc.so.2", NULL};
static const char *const env_vars[] = {"MALLOC_CONF=", "JE_MALLOC_CONF=", NULL};
/* text only its code carries, for `diagnose` (family.h) */
static const char *const marks[] = {"<jemalloc>: ", "je_mallctl", "mallctl", NULL};
static const char *const rejects[] = {"<jemalloc>: ", NULL};
static const char *const ident[] = {"mallctl", NULL};
/* a je_-prefixed build exports these instead: it does not replace malloc */
static const char *const report_syms[] = {"je_mallctl", "je_malloc", NULL};

/* ---- inside the child ---------------------------------------------------- */
typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static mallctl_fn get_mallctl(const probe_ctx_t *p)
{
    mallctl_fn f = NULL;
    void *a = p->sym("mallctl");
    memcpy(&f, &a, sizeof a);
    return f;
}

typedef enum { JT_BOOL, JT_UNSIGNED, JT_SIZE, JT_SSIZE, JT_U64, JT_STRING } jtype_t;

static const struct {
    const char *name;
    jtype_t type;
    size_t size;
} jtypes[] = {
    {"bool", JT_BOOL, sizeof(bool)},       {"unsigned", JT_UNSIGNED, sizeof(unsigned)},
    {"size", JT_SIZE, sizeof(size_t)},     {"size_t", JT_SIZE, sizeof(size_t)},
    {"ssize", JT_SSIZE, sizeof(ssize_t)},  {"ssize_t", JT_SSIZE, sizeof(ssize_t)},
    {"u64", JT_U64, sizeof(uint64_t)},     {"uint64_t", JT_U64, sizeof(uint64_t)},
    {"string", JT_STRING, sizeof(const char *)},
};

static const char *mallctl_reason(int err)
{
    switch (err) {
    case ENOENT: return "no such mallctl name";
    case EINVAL: return "wrong type for this mallctl name";
    case EPERM: return "not readable";
    case EAGAIN: return "allocator not initialised";
    case EFAULT: return "read failed";
    default: return "mallctl failed";
    }
}

/* Reads one mallctl `name` of type `tname` into out (or "!reason"). */
static void je_read(const probe_ctx_t *p, const char *name, const char *tname, char *out, size_t n)
{
    size_t t;
    for (t = 0; t < ALLOC_NELEM(jtypes); t++)
        if (strcmp(jtypes[t].name, tname) == 0)
            break;
    if (t == ALLOC_NELEM(jtypes)) {
        snprintf(out, n, "!unknown type '%s' (bool, unsigned, size, ssize, u64, string)", tname);
        return;
    }
    mallctl_fn mallctl = get_mallctl(p);
    if (!mallctl) {
        snprintf(out, n, "!mallctl not found in %s", p->malloc_path);
        return;
    }
    union { bool b; unsigned u; size_t z; ssize_t s; uint64_t q; const char *str; } v;
    memset(&v, 0, sizeof v);
    size_t sz = jtypes[t].size;
    int err = mallctl(name, &v, &sz, NULL, 0);
    if (err != 0) {
        const char *en = strerrorname_np(err);
        snprintf(out, n, "!%s: %s", mallctl_reason(err), en ? en : "unknown errno");
        return;
    }
    if (sz != jtypes[t].size) {
        snprintf(out, n, "!size mismatch: mallctl returned %zu bytes", sz);
        return;
    }
    switch (jtypes[t].type) {
    case JT_BOOL: snprintf(out, n, "%d", v.b ? 1 : 0); break;
    case JT_UNSIGNED: snprintf(out, n, "%u", v.u); break;
    case JT_SIZE: snprintf(out, n, "%zu", v.z); break;
    case JT_SSIZE: snprintf(out, n, "%zd", v.s); break;
    case JT_U64: snprintf(out, n, "%llu", (unsigned long long)v.q); break;
    case JT_STRING: snprintf(out, n, "%s", v.str ? v.str : "(null)"); break;
    }
}

/* key: "opt.dirty_decay_ms/ssize" = mallctl name / type */
static void read_key(const probe_ctx_t *p, const char *key, char *out, size_t n)
{
    char name[256];
    const char *slash = strrchr(key, '/');
    if (!slash) {
        snprintf(out, n, "!missing type: want name/type (bool, unsigned, size, ssize, u64, string)");
        return;
    }
    if ((size_t)(slash - key) >= sizeof name) {
        snprintf(out, n, "!key too long");
        return;
    }
    memcpy(name, key, (size_t)(slash - key));
    name[slash - key] = '\0';
    je_read(p, name, slash + 1, out, n);
}

static void version(const probe_ctx_t *p, char *out, size_t n)
{
    const char *v = NULL;
    size_t sz = sizeof v;
    mallctl_fn mallctl = get_mallctl(p);
    out[0] = '\0';
    if (mallctl && mallctl("version", &v, &sz, NULL, 0) == 0 && v)
        snprintf(out, n, "%s", v);
}

static void stats(const probe_ctx_t *p)
{
    static const char *const sz_names[] = {
        "stats.allocated", "stats.active", "stats.metadata", "stats.resident", "stats.mapped", "stats.retained",
    };
    static const char *const u64_names[] = {
        "stats.arenas.4096.dirty_npurge", "stats.arenas.4096.dirty_nmadvise",
        "stats.arenas.4096.dirty_purged", "stats.arenas.4096.muzzy_npurge",
        "stats.arenas.4096.muzzy_nmadvise", "stats.arenas.4096.muzzy_purged",
    };
    static char val[512];
    mallctl_fn mallctl = get_mallctl(p);
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    if (mallctl) /* refresh the statistics snapshot */
        (void)mallctl("epoch", &epoch, &sz, &epoch, sz);
    for (size_t i = 0; i < ALLOC_NELEM(sz_names); i++) {
        je_read(p, sz_names[i], "size", val, sizeof val);
        p->line("stat:%s=%s", sz_names[i], val);
    }
    for (size_t i = 0; i < ALLOC_NELEM(u64_names); i++) {
        je_read(p, u64_names[i], "u64", val, sizeof val);
        p->line("stat:%s=%s", u64_names[i], val);
    }
}

const alloc_info_t alloc_jemalloc = {
    .name = "jemalloc",
    .keep = "dirty_decay_ms=-1,muzzy_decay_ms=-1",
    .keep_stops = ALLOC_GIVES_MADVISE,
    .huge_advise = "thp=always", /* MADV_HUGEPAGE on its extents */
    .huge_off = "thp=default|never,metadata_thp=disabled",
    .colour = "#D55E00",
    .sonames = sonames,
    .tested_version = "5.3.0",
    .conf_how = "MALLOC_CONF=NAME:V,...",
    .version_how = "mallctl(\"version\")",
    .tunables = tunables,
    .ntunables = ALLOC_NELEM(tunables),
    .domains = domains,
    .ndomains = ALLOC_NELEM(domains),
    /* the PyTorch CPU launcher's / Intel tuning guide's MALLOC_CONF, with
     * oversize_threshold 0 (what jemalloc 5.3 makes of their 1; see
     * matrices/frameworks.ini) */
    .known = "oversize_threshold=0,background_thread=true,metadata_thp=auto,"
             "dirty_decay_ms=9000000000,muzzy_decay_ms=9000000000",
    .known_label = "je-intel",
    .refused = refused,
    /* MALLOC_CONF spells booleans true/false; 1/0 are "Invalid conf value" */
    .conf = {"MALLOC_CONF", ":", ",", "true", "false"},
    .env_vars = env_vars,
    .marks = marks,
    .check = ALLOC_CHECK_PROBE,
    .rejects = rejects,
    .mismatch_key = "api:je_malloc",
    .mismatch_hint = "(a je_-prefixed jemalloc build: it does not replace malloc and ignores MALLOC_CONF)",
    .ident = ident,
    .report_syms = report_syms,
    .probe_version = version,
    .probe_read = read_key,
    .probe_stats = stats,
};
