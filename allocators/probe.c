/* probe.c - libmbprobe.so, preloaded behind the allocator under test: reports to
 * the descriptor MB_PROBE_FD which object serves malloc, the allocator family,
 * version, environment and the settings read back from it (contract: probe.h),
 * then "stat:" lines at exit.  Links libc/libdl only: every allocator API is
 * found with dlsym.  Output goes through static buffers; the only heap use is
 * glibc's own (dlsym error strings) and what the allocator APIs do. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* dladdr1, dlinfo, strerrorname_np, mallinfo2 */
#endif
#include "probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <link.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <unistd.h>

extern char **environ;

/* ---- when the report is written ----------------------------------------
 * Preloaded objects are initialised in reverse load order, so this
 * constructor runs BEFORE the allocator's own (seen with glibc 2.36:
 * "calling init: libmbprobe.so" precedes "libtcmalloc.so.4").  tcmalloc
 * applies TCMALLOC_* and registers its MallocExtension in C++ static
 * initialisers, so a read-back from the constructor sees zeros.  The
 * constructor therefore only arms the probe; the report is written from
 * __libc_start_main (interposed below), i.e. after every library
 * constructor and before main.  If that hook never runs (a program not
 * started by glibc's crt1), the destructor writes the report instead. */
enum { PB_OFF, PB_PENDING, PB_REPORTED };

typedef enum {
    PB_FAM_UNKNOWN, PB_FAM_GLIBC, PB_FAM_JEMALLOC, PB_FAM_TCMALLOC, PB_FAM_MIMALLOC
} pb_family_t;

static const char *const pb_family_names[] = {
    "unknown", "glibc", "jemalloc", "tcmalloc", "mimalloc"
};

typedef int (*pb_mallctl_fn)(const char *, void *, size_t *, void *, size_t);
typedef const char *(*pb_tc_version_fn)(int *, int *, const char **);
typedef int (*pb_tc_prop_fn)(const char *, size_t *);
typedef int (*pb_mi_version_fn)(void);
typedef long (*pb_mi_option_get_fn)(int);
typedef void (*pb_mi_process_info_fn)(size_t *, size_t *, size_t *, size_t *,
                                      size_t *, size_t *, size_t *, size_t *);

/* The allocator APIs probed for, in the order they are reported. */
static const struct {
    const char *sym;
    pb_family_t family;     /* PB_FAM_UNKNOWN: reported, never decides */
} pb_apis[] = {
    { "mallctl", PB_FAM_JEMALLOC },
    { "je_mallctl", PB_FAM_UNKNOWN },
    { "je_malloc", PB_FAM_UNKNOWN },
    { "tc_version", PB_FAM_TCMALLOC },
    { "MallocExtension_GetNumericProperty", PB_FAM_TCMALLOC },
    { "mi_version", PB_FAM_MIMALLOC },
};
#define PB_NAPIS (sizeof pb_apis / sizeof pb_apis[0])

static struct {
    int state;
    int fd;
    pid_t pid;                    /* process that armed the probe */
    pb_family_t family;
    bool identified;
    void *malloc_base;            /* load base of the object serving malloc */
    char malloc_name[PATH_MAX];   /* dli_fname as loaded */
    char malloc_path[PATH_MAX];   /* its realpath */
    void *api_addr[PB_NAPIS];
    void *api_base[PB_NAPIS];
    /* usable only when they live in the object serving malloc */
    pb_mallctl_fn mallctl;
    pb_tc_version_fn tc_version;
    pb_tc_prop_fn tc_prop;
    pb_mi_version_fn mi_version;
    pb_mi_option_get_fn mi_option_get;
    pb_mi_process_info_fn mi_process_info;
} pb = { .state = PB_OFF, .fd = -1 };

/* Room for a read-back value: a path plus a sentence. */
#define PB_VAL_MAX (PATH_MAX + 512)

/* ---- output: one static buffer, written with one write loop ------------ */
#define PB_RESERVE 128          /* kept free for the closing lines */
static char pb_buf[64 * 1024];
static size_t pb_len;
static bool pb_truncated;
static char pb_tmp[PATH_MAX];   /* scratch for realpath */

/* Appends one "text\n" line, control characters turned into '?' so a value
 * can never break the line format; a line that does not fit is dropped. */
__attribute__((format(printf, 1, 2)))
static void pb_line(const char *fmt, ...)
{
    static char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        pb_truncated = true;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    size_t room = sizeof pb_buf - PB_RESERVE;
    if (pb_len + len + 1 > room) {
        pb_truncated = true;
        return;
    }
    memcpy(pb_buf + pb_len, line, len);
    pb_len += len;
    pb_buf[pb_len++] = '\n';
}

/* Closing line: always fits thanks to PB_RESERVE. */
static void pb_close_line(const char *text)
{
    if (pb_truncated) {
        static const char t[] = "probe_truncated=1\n";
        memcpy(pb_buf + pb_len, t, sizeof t - 1);
        pb_len += sizeof t - 1;
        pb_truncated = false;
    }
    size_t len = strlen(text);
    memcpy(pb_buf + pb_len, text, len);
    pb_len += len;
}

/* Writes the buffer to the probe descriptor, looping on partial writes. */
static void pb_flush(void)
{
    size_t off = 0;
    while (off < pb_len) {
        ssize_t w = write(pb.fd, pb_buf + off, pb_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    pb_len = 0;
}

/* ---- helpers ------------------------------------------------------------ */
/* dlsym into a function pointer without an object-to-function cast. */
#define PB_FN(dst, addr) do { void *a_ = (addr); memcpy(&(dst), &a_, sizeof a_); } while (0)

/* A static name for an errno value; never allocates (unlike strerror). */
static const char *pb_errname(int err)
{
    const char *s = strerrorname_np(err);
    return s ? s : "unknown errno";
}

/* Path of the object at dli_fname: realpath when possible; the main
 * program may be reported with an empty name. */
static void pb_object_path(const char *fname, char *out, size_t n)
{
    if (!fname || !*fname)
        fname = "/proc/self/exe";
    if (realpath(fname, pb_tmp))
        snprintf(out, n, "%s", pb_tmp);
    else
        snprintf(out, n, "%s", fname);
}

static bool pb_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* dlsym(RTLD_DEFAULT, sym) for a function, returning its definition and the
 * object holding it in *di.  In a non-PIE program that takes the address of
 * an imported function (Debian's python3.11 does, for malloc) the lookup
 * yields the program's "canonical PLT" stub instead, which dladdr names by
 * the program's undefined (SHN_UNDEF) symbol.  Then the objects are searched
 * in load order, skipping the program, as the dynamic linker does. */
static void *pb_resolve(const char *sym, Dl_info *di)
{
    const ElfW(Sym) *es = NULL;
    void *p = dlsym(RTLD_DEFAULT, sym);
    if (!p)
        return NULL;
    if (dladdr1(p, di, (void **)&es, RTLD_DL_SYMENT) && di->dli_saddr == p &&
        es && es->st_shndx != SHN_UNDEF)
        return p;
    struct link_map *main_map = NULL;
    void *self = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
    if (self && dlinfo(self, RTLD_DI_LINKMAP, &main_map) != 0)
        main_map = NULL;
    for (struct link_map *l = main_map ? main_map->l_next : NULL; l; l = l->l_next) {
        if (!l->l_name || !*l->l_name)
            continue;
        void *h = dlopen(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        void *q = dlsym(h, sym);
        struct link_map *ql = NULL;
        bool own = q && dladdr1(q, di, (void **)&ql, RTLD_DL_LINKMAP) && ql == l;
        dlclose(h);
        if (own) {
            p = q;
            break;
        }
    }
    if (self)
        dlclose(self);
    if (!dladdr(p, di))
        memset(di, 0, sizeof *di);
    return p;
}

/* Finds what serves malloc and which allocator APIs live in that object.
 * A failed dlsym makes glibc build an error message with malloc: a few
 * small allocations, once. */
static void pb_identify(void)
{
    Dl_info di;
    if (pb.identified)
        return;
    pb.identified = true;
    void *m = pb_resolve("malloc", &di);
    if (m && di.dli_fbase) {
        pb.malloc_base = di.dli_fbase;
        snprintf(pb.malloc_name, sizeof pb.malloc_name, "%s",
                 di.dli_fname && *di.dli_fname ? di.dli_fname : "/proc/self/exe");
        pb_object_path(di.dli_fname, pb.malloc_path, sizeof pb.malloc_path);
    }
    pb.family = PB_FAM_UNKNOWN;
    for (size_t i = 0; i < PB_NAPIS; i++) {
        void *p = pb_resolve(pb_apis[i].sym, &di);
        pb.api_addr[i] = p;
        if (p)
            pb.api_base[i] = di.dli_fbase;
        if (p && pb.malloc_base && pb.api_base[i] == pb.malloc_base &&
            pb_apis[i].family != PB_FAM_UNKNOWN && pb.family == PB_FAM_UNKNOWN)
            pb.family = pb_apis[i].family;
    }
    if (pb.family == PB_FAM_UNKNOWN && pb.malloc_base) {
        const char *slash = strrchr(pb.malloc_path, '/');
        const char *base = slash ? slash + 1 : pb.malloc_path;
        const char *lslash = strrchr(pb.malloc_name, '/');
        const char *lbase = lslash ? lslash + 1 : pb.malloc_name;
        if (pb_starts(base, "libc.so") || pb_starts(lbase, "libc.so") ||
            pb_starts(base, "libc-"))
            pb.family = PB_FAM_GLIBC;
    }
    /* Resolve only the entry points of the allocator serving malloc. */
    for (size_t i = 0; i < PB_NAPIS; i++) {
        if (!pb.api_addr[i] || pb.api_base[i] != pb.malloc_base)
            continue;
        if (pb.family == PB_FAM_JEMALLOC && strcmp(pb_apis[i].sym, "mallctl") == 0)
            PB_FN(pb.mallctl, pb.api_addr[i]);
        if (pb.family == PB_FAM_TCMALLOC && strcmp(pb_apis[i].sym, "tc_version") == 0)
            PB_FN(pb.tc_version, pb.api_addr[i]);
        if (pb.family == PB_FAM_TCMALLOC &&
            strcmp(pb_apis[i].sym, "MallocExtension_GetNumericProperty") == 0)
            PB_FN(pb.tc_prop, pb.api_addr[i]);
        if (pb.family == PB_FAM_MIMALLOC && strcmp(pb_apis[i].sym, "mi_version") == 0)
            PB_FN(pb.mi_version, pb.api_addr[i]);
    }
    if (pb.family == PB_FAM_MIMALLOC) {
        void *p = pb_resolve("mi_option_get", &di);
        if (p && di.dli_fbase == pb.malloc_base)
            PB_FN(pb.mi_option_get, p);
        p = pb_resolve("mi_process_info", &di);
        if (p && di.dli_fbase == pb.malloc_base)
            PB_FN(pb.mi_process_info, p);
    }
}

/* ---- version ------------------------------------------------------------ */
static void pb_version(char *out, size_t n)
{
    out[0] = '\0';
    switch (pb.family) {
    case PB_FAM_JEMALLOC: {
        const char *v = NULL;
        size_t sz = sizeof v;
        if (pb.mallctl && pb.mallctl("version", &v, &sz, NULL, 0) == 0 && v)
            snprintf(out, n, "%s", v);
        break;
    }
    case PB_FAM_TCMALLOC: {
        int maj = 0, min = 0;
        const char *patch = NULL;
        if (pb.tc_version) {
            pb.tc_version(&maj, &min, &patch);
            snprintf(out, n, "%d.%d%s", maj, min, patch ? patch : "");
        }
        break;
    }
    case PB_FAM_MIMALLOC:
        if (pb.mi_version) {
            int v = pb.mi_version();
            snprintf(out, n, "%d.%d.%d", v / 100, (v % 100) / 10, v % 10);
        }
        break;
    case PB_FAM_GLIBC:
        snprintf(out, n, "%s", gnu_get_libc_version());
        break;
    case PB_FAM_UNKNOWN:
        break;
    }
}

/* ---- environment -------------------------------------------------------- */
/* MALLOC_* covers MALLOC_CONF and glibc's legacy MALLOC_ARENA_MAX & co. */
static bool pb_env_wanted(const char *kv)
{
    static const char *const exact[] = {
        "JE_MALLOC_CONF=", "GLIBC_TUNABLES=", "LD_PRELOAD=",
    };
    static const char *const prefix[] = { "MALLOC_", "TCMALLOC_", "MIMALLOC_" };
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (pb_starts(kv, exact[i]))
            return true;
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (pb_starts(kv, prefix[i]) && strchr(kv, '='))
            return true;
    return false;
}

static void pb_report_env(void)
{
    if (!environ)
        return;
    for (char **e = environ; *e; e++)
        if (pb_env_wanted(*e))
            pb_line("env:%s", *e);
}

/* ---- jemalloc read-back -------------------------------------------------- */
typedef enum { PB_JT_BOOL, PB_JT_UNSIGNED, PB_JT_SIZE, PB_JT_SSIZE, PB_JT_U64,
               PB_JT_STRING } pb_jtype_t;

static const struct {
    const char *name;
    pb_jtype_t type;
    size_t size;
} pb_jtypes[] = {
    { "bool", PB_JT_BOOL, sizeof(bool) },
    { "unsigned", PB_JT_UNSIGNED, sizeof(unsigned) },
    { "size", PB_JT_SIZE, sizeof(size_t) },
    { "size_t", PB_JT_SIZE, sizeof(size_t) },
    { "ssize", PB_JT_SSIZE, sizeof(ssize_t) },
    { "ssize_t", PB_JT_SSIZE, sizeof(ssize_t) },
    { "u64", PB_JT_U64, sizeof(uint64_t) },
    { "uint64_t", PB_JT_U64, sizeof(uint64_t) },
    { "string", PB_JT_STRING, sizeof(const char *) },
};

static const char *pb_mallctl_reason(int err)
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

/* Reads one mallctl "name" of type "tname" into out (or "!reason"). */
static void pb_je_read(const char *name, const char *tname, char *out, size_t n)
{
    size_t t;
    for (t = 0; t < sizeof pb_jtypes / sizeof pb_jtypes[0]; t++)
        if (strcmp(pb_jtypes[t].name, tname) == 0)
            break;
    if (t == sizeof pb_jtypes / sizeof pb_jtypes[0]) {
        snprintf(out, n, "!unknown type '%s' (bool, unsigned, size, ssize, u64, string)",
                 tname);
        return;
    }
    if (!pb.mallctl) {
        snprintf(out, n, "!mallctl not found in %s", pb.malloc_path);
        return;
    }
    union { bool b; unsigned u; size_t z; ssize_t s; uint64_t q; const char *str; } v;
    memset(&v, 0, sizeof v);
    size_t sz = pb_jtypes[t].size;
    int err = pb.mallctl(name, &v, &sz, NULL, 0);
    if (err != 0) {
        snprintf(out, n, "!%s: %s", pb_mallctl_reason(err), pb_errname(err));
        return;
    }
    if (sz != pb_jtypes[t].size) {
        snprintf(out, n, "!size mismatch: mallctl returned %zu bytes", sz);
        return;
    }
    switch (pb_jtypes[t].type) {
    case PB_JT_BOOL: snprintf(out, n, "%d", v.b ? 1 : 0); break;
    case PB_JT_UNSIGNED: snprintf(out, n, "%u", v.u); break;
    case PB_JT_SIZE: snprintf(out, n, "%zu", v.z); break;
    case PB_JT_SSIZE: snprintf(out, n, "%zd", v.s); break;
    case PB_JT_U64: snprintf(out, n, "%llu", (unsigned long long)v.q); break;
    case PB_JT_STRING: snprintf(out, n, "%s", v.str ? v.str : "(null)"); break;
    }
}

/* Refreshes jemalloc's statistics snapshot (needed for stats.*). */
static void pb_je_epoch(void)
{
    uint64_t epoch = 1;
    size_t sz = sizeof epoch;
    if (pb.mallctl)
        (void)pb.mallctl("epoch", &epoch, &sz, &epoch, sz);
}

/* ---- tcmalloc read-back ---------------------------------------------------
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
static const char *const pb_flag_types[] = { "double", "int64", "int32", "bool" };

/* Reads flag "name" of type "tname" ("" = whichever type exists). */
static void pb_tc_flag(const char *name, const char *tname, char *out, size_t n)
{
    char sym[256], ns[96];
    Dl_info di;
    if (pb_starts(name, "FLAGS_"))
        name += 6;
    if (!*name) {
        snprintf(out, n, "!empty flag name");
        return;
    }
    for (size_t t = 0; t < sizeof pb_flag_types / sizeof pb_flag_types[0]; t++) {
        const char *ty = pb_flag_types[t];
        if (*tname && strcmp(tname, ty) != 0)
            continue;
        int nl = snprintf(ns, sizeof ns,
                          "FLAG__namespace_do_not_use_directly_use_DECLARE_%s_instead", ty);
        int sl = snprintf(sym, sizeof sym, "_ZN%d%s%zuFLAGS_%sE", nl, ns,
                          strlen(name) + 6, name);
        if (nl < 0 || sl < 0 || (size_t)sl >= sizeof sym)
            break;
        void *p = dlsym(RTLD_DEFAULT, sym);
        if (!p)
            continue;
        if (!dladdr(p, &di) || di.dli_fbase != pb.malloc_base) {
            snprintf(out, n, "!flag %s found outside %s", name, pb.malloc_path);
            return;
        }
        switch (t) {
        case 0: { double d; memcpy(&d, p, sizeof d); snprintf(out, n, "%.17g", d); break; }
        case 1: { int64_t v; memcpy(&v, p, sizeof v); snprintf(out, n, "%lld", (long long)v); break; }
        case 2: { int32_t v; memcpy(&v, p, sizeof v); snprintf(out, n, "%d", (int)v); break; }
        default: { unsigned char b; memcpy(&b, p, 1); snprintf(out, n, "%d", b ? 1 : 0); break; }
        }
        return;
    }
    if (*tname) {
        bool known = false;
        for (size_t t = 0; t < sizeof pb_flag_types / sizeof pb_flag_types[0]; t++)
            known |= strcmp(tname, pb_flag_types[t]) == 0;
        if (!known) {
            snprintf(out, n, "!unknown flag type '%s' (double, int64, int32, bool)", tname);
            return;
        }
    }
    snprintf(out, n, "!no exported flag FLAGS_%s%s%s in %s", name,
             *tname ? " of type " : "", tname, pb.malloc_path);
}

static bool pb_tc_ready(void)
{
    size_t v = 0;
    return pb.tc_prop && pb.tc_prop("generic.heap_size", &v);
}

static void pb_tc_read(const char *key, char *out, size_t n)
{
    if (strcmp(key, "release_rate") == 0) {
        pb_tc_flag("tcmalloc_release_rate", "double", out, n);
        return;
    }
    if (pb_starts(key, "flag:")) {
        char name[128];
        const char *slash = strchr(key + 5, '/');
        size_t len = slash ? (size_t)(slash - (key + 5)) : strlen(key + 5);
        if (len >= sizeof name) {
            snprintf(out, n, "!flag name too long");
            return;
        }
        memcpy(name, key + 5, len);
        name[len] = '\0';
        pb_tc_flag(name, slash ? slash + 1 : "", out, n);
        return;
    }
    if (!pb.tc_prop) {
        snprintf(out, n, "!MallocExtension_GetNumericProperty not found in %s",
                 pb.malloc_path);
        return;
    }
    if (!pb_tc_ready()) {
        snprintf(out, n, "!tcmalloc not initialised yet (no MallocExtension registered)");
        return;
    }
    size_t v = 0;
    if (pb.tc_prop(key, &v))
        snprintf(out, n, "%zu", v);
    else
        snprintf(out, n, "!unknown property");
}

/* ---- mimalloc read-back ---------------------------------------------------
 * Option indices of mimalloc 2.0.x (enum mi_option_e of 2.0.9), with the
 * names MIMALLOC_<NAME> takes and the legacy alias; 2.1 renumbers them. */
static const struct { const char *name, *legacy; } pb_mi_options[] = {
    { "show_errors", NULL }, { "show_stats", NULL }, { "verbose", NULL },
    { "eager_commit", NULL }, { "deprecated_eager_region_commit", "eager_region_commit" },
    { "deprecated_reset_decommits", "reset_decommits" }, { "large_os_pages", NULL },
    { "reserve_huge_os_pages", NULL }, { "reserve_huge_os_pages_at", NULL },
    { "reserve_os_memory", NULL }, { "deprecated_segment_cache", "segment_cache" },
    { "page_reset", NULL }, { "abandoned_page_decommit", "abandoned_page_reset" },
    { "deprecated_segment_reset", "segment_reset" }, { "eager_commit_delay", NULL },
    { "decommit_delay", "reset_delay" }, { "use_numa_nodes", NULL },
    { "limit_os_alloc", NULL }, { "os_tag", NULL }, { "max_errors", NULL },
    { "max_warnings", NULL }, { "max_segment_reclaim", NULL },
    { "allow_decommit", NULL }, { "segment_decommit_delay", NULL },
    { "decommit_extend_delay", NULL }, { "destroy_on_exit", NULL },
};
#define PB_MI_NOPTIONS (long)(sizeof pb_mi_options / sizeof pb_mi_options[0])

static void pb_mi_read(const char *name, const char *idx, char *out, size_t n)
{
    char ver[32];
    if (!pb.mi_version || !pb.mi_option_get) {
        snprintf(out, n, "!mi_option_get not found in %s", pb.malloc_path);
        return;
    }
    int v = pb.mi_version();
    if (!(v / 100 == 2 && (v % 100) / 10 == 0)) {
        pb_version(ver, sizeof ver);
        snprintf(out, n, "!cannot verify: option indices are for mimalloc 2.0, loaded %s", ver);
        return;
    }
    char *end;
    errno = 0;
    long i = strtol(idx, &end, 10);
    if (!*idx || *end || errno) {
        snprintf(out, n, "!bad option index '%s' (want name/index)", idx);
        return;
    }
    if (i < 0 || i >= PB_MI_NOPTIONS) {
        snprintf(out, n, "!option index %ld out of range 0..%ld", i, PB_MI_NOPTIONS - 1);
        return;
    }
    if (pb_starts(name, "mi_option_"))
        name += 10;
    if (strcasecmp(name, pb_mi_options[i].name) != 0 &&
        !(pb_mi_options[i].legacy && strcasecmp(name, pb_mi_options[i].legacy) == 0) &&
        !(pb_starts(pb_mi_options[i].name, "deprecated_") &&
          strcasecmp(name, pb_mi_options[i].name + 11) == 0)) {
        snprintf(out, n, "!index %ld is %s in mimalloc 2.0, not %s", i,
                 pb_mi_options[i].name, name);
        return;
    }
    snprintf(out, n, "%ld", pb.mi_option_get((int)i));
}

/* ---- tun: lines ----------------------------------------------------------- */
static void pb_read_key(const char *key, char *out, size_t n)
{
    char name[256];
    const char *slash = strrchr(key, '/');
    size_t len = slash ? (size_t)(slash - key) : strlen(key);
    if (strchr(key, '=')) {
        snprintf(out, n, "!invalid key: contains '='");
        return;
    }
    if (len >= sizeof name) {
        snprintf(out, n, "!key too long");
        return;
    }
    memcpy(name, key, len);
    name[len] = '\0';
    switch (pb.family) {
    case PB_FAM_JEMALLOC:
        if (!slash)
            snprintf(out, n, "!missing type: want name/type (bool, unsigned, size, ssize, u64, string)");
        else
            pb_je_read(name, slash + 1, out, n);
        break;
    case PB_FAM_TCMALLOC:
        pb_tc_read(key, out, n);
        break;
    case PB_FAM_MIMALLOC:
        if (!slash)
            snprintf(out, n, "!missing index: want name/mi_option_t index");
        else
            pb_mi_read(name, slash + 1, out, n);
        break;
    case PB_FAM_GLIBC:
        snprintf(out, n, "!no read-back API in glibc malloc (check GLIBC_TUNABLES with ld.so --list-tunables)");
        break;
    case PB_FAM_UNKNOWN:
        snprintf(out, n, "!allocator family unknown (malloc served by %s)",
                 *pb.malloc_path ? pb.malloc_path : "?");
        break;
    }
}

static void pb_report_tun(void)
{
    static char list[4096];
    static char val[PB_VAL_MAX];
    const char *env = getenv(MB_PROBE_READ_ENV);
    if (!env || !*env)
        return;
    if (strlen(env) >= sizeof list) {
        pb_line("tun:%s=!list too long", MB_PROBE_READ_ENV);
        return;
    }
    strcpy(list, env);
    if (pb.family == PB_FAM_JEMALLOC)
        pb_je_epoch();
    for (char *p = list; p && *p;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        while (*p == ' ')
            p++;
        size_t l = strlen(p);
        while (l > 0 && p[l - 1] == ' ')
            p[--l] = '\0';
        if (*p) {
            pb_read_key(p, val, sizeof val);
            for (char *q = p; *q; q++)     /* keep the key=value split unambiguous */
                if (*q == '=')
                    *q = '?';
            pb_line("tun:%s=%s", p, val);
        }
        p = comma ? comma + 1 : NULL;
    }
}

/* ---- the report ------------------------------------------------------------ */
static void pb_report(const char *when)
{
    char ver[256];
    pb_identify();
    pb_line("probe_at=%s", when);
    pb_line("pid=%ld", (long)getpid());
    ssize_t l = readlink("/proc/self/exe", pb_tmp, sizeof pb_tmp - 1);
    if (l > 0) {
        pb_tmp[l] = '\0';
        pb_line("exe=%s", pb_tmp);
    }
    pb_line("malloc_so=%s", pb.malloc_path);
    pb_line("malloc_so_name=%s", pb.malloc_name);
    pb_line("family=%s", pb_family_names[pb.family]);
    pb_version(ver, sizeof ver);
    pb_line("version=%s", ver);
    bool je = false;
    for (size_t i = 0; i < PB_NAPIS; i++) {
        if (!pb.api_addr[i])
            continue;
        Dl_info di;
        char path[PATH_MAX];
        if (dladdr(pb.api_addr[i], &di))
            pb_object_path(di.dli_fname, path, sizeof path);
        else
            snprintf(path, sizeof path, "?");
        pb_line("api:%s=%s", pb_apis[i].sym, path);
        je |= pb_starts(pb_apis[i].sym, "je_");
    }
    if (je)                 /* contract: the line's presence means "prefixed" */
        pb_line("je_prefixed=1");
    pb_report_env();
    pb_report_tun();
    pb_close_line("probe=done\n");
    pb.state = PB_REPORTED;
}

/* ---- end-of-run statistics -------------------------------------------------- */
static void pb_stats(void)
{
    static char val[PB_VAL_MAX];
    switch (pb.family) {
    case PB_FAM_JEMALLOC: {
        static const char *const sz_names[] = {
            "stats.allocated", "stats.active", "stats.metadata",
            "stats.resident", "stats.mapped", "stats.retained",
        };
        static const char *const u64_names[] = {
            "stats.arenas.4096.dirty_npurge", "stats.arenas.4096.dirty_nmadvise",
            "stats.arenas.4096.dirty_purged", "stats.arenas.4096.muzzy_npurge",
            "stats.arenas.4096.muzzy_nmadvise", "stats.arenas.4096.muzzy_purged",
        };
        pb_je_epoch();
        for (size_t i = 0; i < sizeof sz_names / sizeof sz_names[0]; i++) {
            pb_je_read(sz_names[i], "size", val, sizeof val);
            pb_line("stat:%s=%s", sz_names[i], val);
        }
        for (size_t i = 0; i < sizeof u64_names / sizeof u64_names[0]; i++) {
            pb_je_read(u64_names[i], "u64", val, sizeof val);
            pb_line("stat:%s=%s", u64_names[i], val);
        }
        break;
    }
    case PB_FAM_TCMALLOC: {
        static const char *const names[] = {
            "generic.current_allocated_bytes", "generic.heap_size",
            "tcmalloc.pageheap_free_bytes", "tcmalloc.pageheap_unmapped_bytes",
        };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            size_t v = 0;
            if (pb.tc_prop && pb.tc_prop(names[i], &v))
                pb_line("stat:%s=%zu", names[i], v);
            else
                pb_line("stat:%s=!unknown property", names[i]);
        }
        break;
    }
    case PB_FAM_MIMALLOC:
        if (pb.mi_process_info) {
            size_t el = 0, ut = 0, st = 0, rss = 0, prss = 0, com = 0, pcom = 0, pf = 0;
            pb.mi_process_info(&el, &ut, &st, &rss, &prss, &com, &pcom, &pf);
            /* mimalloc 2.0 on Linux reports its commit as "current rss":
             * not printed, it would mislead */
            pb_line("stat:mi.peak_rss=%zu", prss);
            pb_line("stat:mi.current_commit=%zu", com);
            pb_line("stat:mi.peak_commit=%zu", pcom);
            pb_line("stat:mi.page_faults=%zu", pf);
        }
        break;
    case PB_FAM_GLIBC: {
        struct mallinfo2 mi = mallinfo2();
        pb_line("stat:mallinfo2.arena=%zu", mi.arena);
        pb_line("stat:mallinfo2.hblks=%zu", mi.hblks);
        pb_line("stat:mallinfo2.hblkhd=%zu", mi.hblkhd);
        pb_line("stat:mallinfo2.uordblks=%zu", mi.uordblks);
        pb_line("stat:mallinfo2.fordblks=%zu", mi.fordblks);
        pb_line("stat:mallinfo2.keepcost=%zu", mi.keepcost);
        break;
    }
    case PB_FAM_UNKNOWN:
        break;
    }
}

/* ---- entry points ------------------------------------------------------------ */
/* Arms the probe when MB_PROBE_FD names a writable descriptor; otherwise
 * does nothing at all. */
__attribute__((constructor))
static void pb_constructor(void)
{
    const char *s = getenv(MB_PROBE_FD_ENV);
    if (!s || !*s)
        return;
    char *end;
    errno = 0;
    long fd = strtol(s, &end, 10);
    if (*end || errno || fd < 0 || fd > INT_MAX)
        return;
    int fl = fcntl((int)fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
        return;
    pb.fd = (int)fd;
    pb.pid = getpid();
    pb.state = PB_PENDING;
}

/* Writes the statistics (and the report, if the start hook never ran) in the
 * process that armed the probe, not in forked children that exit(). */
__attribute__((destructor))
static void pb_destructor(void)
{
    if (pb.state == PB_OFF || getpid() != pb.pid)
        return;
    if (pb.state == PB_PENDING) {
        pb_report("exit");
        pb_flush();
    }
    pb_stats();
    pb_close_line("probe=end\n");
    pb_flush();
}

typedef int (*pb_main_fn)(int, char **, char **);
typedef int (*pb_start_fn)(pb_main_fn, int, char **, void (*)(void), void (*)(void),
                           void (*)(void), void *);

int __libc_start_main(pb_main_fn main_fn, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* glibc's crt1 calls this after every library constructor has run: the
 * earliest point at which all allocators have applied their settings. */
__attribute__((visibility("default")))
int __libc_start_main(pb_main_fn main_fn, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    pb_start_fn real = NULL;
    PB_FN(real, dlsym(RTLD_NEXT, "__libc_start_main"));
    if (pb.state == PB_PENDING && getpid() == pb.pid) {
        pb_report("start");
        pb_flush();
    }
    if (!real) {
        static const char msg[] = "libmbprobe: cannot find the next __libc_start_main\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(127);
    }
    return real(main_fn, argc, argv, init, fini, rtld_fini, stack_end);
}
