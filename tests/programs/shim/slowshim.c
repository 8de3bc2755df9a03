/* slowshim.c - test-only preload library: a real allocator made truly slower.
 * Built once per family (-DSHIM_JEMALLOC, -DSHIM_TCMALLOC, -DSHIM_MIMALLOC) and
 * linked (DT_NEEDED) against that family's library.  It defines malloc & co.
 * and the family's own API, forwarding every call to the real library, so the
 * harness's proof sees malloc, and the API that identifies the family, read
 * its version and tunables, served by this one file.  Every call that
 * allocates or resizes (malloc, calloc, realloc, posix_memalign, aligned_alloc,
 * memalign, valloc, pvalloc and the family's own allocating calls) first
 * busy-waits MB_SHIM_DELAY_NS nanoseconds on CLOCK_MONOTONIC (read once at
 * load; default SHIM_DEFAULT_DELAY_NS, 0 unless compiled in); frees, size
 * queries and introspection are never delayed.  A malformed MB_SHIM_DELAY_NS
 * stops the process: a silently undelayed shim would invalidate the test. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef SHIM_DEFAULT_DELAY_NS
#define SHIM_DEFAULT_DELAY_NS 0
#endif

#define SHIM_API __attribute__((visibility("default")))

/* ---- the forwarded entry points ----------------------------------------
 * X(name, return type, (parameters), (arguments), delayed).  The marker is
 * the symbol that only the real library defines: it leads to that object. */
#define SHIM_COMMON(X)                                                                        \
    X(malloc, void *, (size_t n), (n), 1)                                                     \
    X(calloc, void *, (size_t k, size_t n), (k, n), 1)                                        \
    X(realloc, void *, (void *p, size_t n), (p, n), 1)                                        \
    X(posix_memalign, int, (void **pp, size_t a, size_t n), (pp, a, n), 1)                    \
    X(aligned_alloc, void *, (size_t a, size_t n), (a, n), 1)                                 \
    X(memalign, void *, (size_t a, size_t n), (a, n), 1)                                      \
    X(valloc, void *, (size_t n), (n), 1)                                                     \
    X(malloc_usable_size, size_t, (void *p), (p), 0)

#if defined(SHIM_JEMALLOC)
#define SHIM_MARKER "mallctl"
#define SHIM_FAMILY "jemalloc"
#define SHIM_FAMILY_API(X)                                                                    \
    X(mallocx, void *, (size_t n, int f), (n, f), 1)                                          \
    X(rallocx, void *, (void *p, size_t n, int f), (p, n, f), 1)                              \
    X(xallocx, size_t, (void *p, size_t n, size_t e, int f), (p, n, e, f), 1)                 \
    X(sallocx, size_t, (const void *p, int f), (p, f), 0)                                     \
    X(mallctl, int, (const char *k, void *o, size_t *ol, void *v, size_t vl),                 \
      (k, o, ol, v, vl), 0)                                                                   \
    X(mallctlnametomib, int, (const char *k, size_t *m, size_t *ml), (k, m, ml), 0)           \
    X(mallctlbymib, int, (const size_t *m, size_t ml, void *o, size_t *ol, void *v,           \
                          size_t vl), (m, ml, o, ol, v, vl), 0)                               \
    X(nallocx, size_t, (size_t n, int f), (n, f), 0)
#define SHIM_FAMILY_VOID(X)                                                                   \
    X(malloc_stats_print, (void (*cb)(void *, const char *), void *a, const char *o), (cb, a, o)) \
    X(dallocx, (void *p, int f), (p, f))                                                      \
    X(sdallocx, (void *p, size_t n, int f), (p, n, f))
#elif defined(SHIM_TCMALLOC)
#define SHIM_MARKER "tc_version"
#define SHIM_FAMILY "tcmalloc"
#define SHIM_FAMILY_API(X)                                                                    \
    X(pvalloc, void *, (size_t n), (n), 1)                                                    \
    X(tc_version, const char *, (int *a, int *b, const char **c), (a, b, c), 0)               \
    X(MallocExtension_GetNumericProperty, int, (const char *k, size_t *v), (k, v), 0)         \
    X(MallocExtension_SetNumericProperty, int, (const char *k, size_t v), (k, v), 0)          \
    X(MallocExtension_GetAllocatedSize, size_t, (const void *p), (p), 0)                      \
    X(tc_malloc, void *, (size_t n), (n), 1)                                                  \
    X(tc_calloc, void *, (size_t k, size_t n), (k, n), 1)                                     \
    X(tc_realloc, void *, (void *p, size_t n), (p, n), 1)                                     \
    X(tc_memalign, void *, (size_t a, size_t n), (a, n), 1)                                   \
    X(tc_posix_memalign, int, (void **pp, size_t a, size_t n), (pp, a, n), 1)                 \
    X(tc_valloc, void *, (size_t n), (n), 1)                                                  \
    X(tc_pvalloc, void *, (size_t n), (n), 1)                                                 \
    X(tc_malloc_size, size_t, (void *p), (p), 0)
#define SHIM_FAMILY_VOID(X)                                                                   \
    X(MallocExtension_ReleaseFreeMemory, (void), ())                                          \
    X(MallocExtension_GetStats, (char *b, int n), (b, n))                                     \
    X(tc_free, (void *p), (p))                                                                \
    X(tc_cfree, (void *p), (p))                                                               \
    X(cfree, (void *p), (p))
#elif defined(SHIM_MIMALLOC)
#define SHIM_MARKER "mi_version"
#define SHIM_FAMILY "mimalloc"
#define SHIM_FAMILY_API(X)                                                                    \
    X(pvalloc, void *, (size_t n), (n), 1)                                                    \
    X(reallocarray, void *, (void *p, size_t k, size_t n), (p, k, n), 1)                      \
    X(mi_version, int, (void), (), 0)                                                         \
    X(mi_option_get, long, (int o), (o), 0)                                                   \
    X(mi_malloc, void *, (size_t n), (n), 1)                                                  \
    X(mi_calloc, void *, (size_t k, size_t n), (k, n), 1)                                     \
    X(mi_realloc, void *, (void *p, size_t n), (p, n), 1)                                     \
    X(mi_usable_size, size_t, (const void *p), (p), 0)
#define SHIM_FAMILY_VOID(X)                                                                   \
    X(mi_process_info, (size_t *a, size_t *b, size_t *c, size_t *d, size_t *e, size_t *f,     \
                        size_t *g, size_t *h), (a, b, c, d, e, f, g, h))                      \
    X(mi_stats_print_out, (void (*o)(const char *, void *), void *a), (o, a))                 \
    X(mi_collect, (bool force), (force))                                                      \
    X(mi_free, (void *p), (p))                                                                \
    X(cfree, (void *p), (p))
#else
#error "build with -DSHIM_JEMALLOC, -DSHIM_TCMALLOC or -DSHIM_MIMALLOC"
#endif

#define SHIM_VOID(X) X(free, (void *p), (p)) SHIM_FAMILY_VOID(X)

/* Prototypes of what <malloc.h> and the allocators' headers declare (their
 * headers are not included: their attributes and const-ness differ). */
#define SHIM_PROTO(name, ret, params, args, delayed) SHIM_API ret name params;
#define SHIM_PROTO_VOID(name, params, args) SHIM_API void name params;
SHIM_COMMON(SHIM_PROTO)
SHIM_FAMILY_API(SHIM_PROTO)
SHIM_VOID(SHIM_PROTO_VOID)

/* ---- the real functions -------------------------------------------------- */
#define SHIM_FIELD(name, ret, params, args, delayed) ret (*name) params;
#define SHIM_FIELD_VOID(name, params, args) void (*name) params;
static struct {
    SHIM_COMMON(SHIM_FIELD)
    SHIM_FAMILY_API(SHIM_FIELD)
    SHIM_VOID(SHIM_FIELD_VOID)
} real;

static int shim_state;          /* 0 unresolved, 1 resolving, 2 ready */
static uint64_t shim_delay_ns = SHIM_DEFAULT_DELAY_NS;

/* Writes a message and stops: only for a shim that cannot do its job. */
static void shim_die(const char *what, const char *subject)
{
    static const char head[] = "slowshim-" SHIM_FAMILY ": ";
    (void)!write(2, head, sizeof head - 1);
    (void)!write(2, what, strlen(what));
    if (subject) {
        (void)!write(2, " '", 2);
        (void)!write(2, subject, strlen(subject));
        (void)!write(2, "'", 1);
    }
    (void)!write(2, "\n", 1);
    _exit(127);
}

/* ---- bootstrap heap: serves calls made while resolving (dlsym, dladdr) ---- */
#define SHIM_BOOT_SIZE (256 * 1024)
#define SHIM_BOOT_HDR 16
static _Alignas(4096) unsigned char shim_boot[SHIM_BOOT_SIZE];
static size_t shim_boot_used;

static bool shim_is_boot(const void *p)
{
    return (const unsigned char *)p >= shim_boot && (const unsigned char *)p < shim_boot + SHIM_BOOT_SIZE;
}

/* Bump allocation with the size stored in front; never freed. */
static void *shim_boot_alloc(size_t align, size_t n)
{
    if (align < SHIM_BOOT_HDR)
        align = SHIM_BOOT_HDR;
    size_t cur = __atomic_load_n(&shim_boot_used, __ATOMIC_RELAXED), start, end;
    do {
        start = (cur + SHIM_BOOT_HDR + align - 1) / align * align;
        end = start + n;
        if (n > SHIM_BOOT_SIZE || end > SHIM_BOOT_SIZE)
            return NULL;
    } while (!__atomic_compare_exchange_n(&shim_boot_used, &cur, end, false, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    memcpy(shim_boot + start - sizeof n, &n, sizeof n);
    return shim_boot + start;
}

static size_t shim_boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - sizeof n, sizeof n);
    return n;
}

/* ---- resolution ------------------------------------------------------------ */
/* The real library is the next object defining SHIM_MARKER.  Each entry
 * point is looked up in that object's own dynamic symbol table (GNU or SysV
 * hash), never through dlopen: dlopen(RTLD_NOLOAD) of a library whose
 * constructors have not run yet runs them from inside this malloc (seen with
 * tcmalloc, whose constructor calls tc_malloc), and dlsym on a handle would
 * also find glibc's definitions through the library's dependencies.  A name
 * the object lacks stays NULL. */
static uintptr_t shim_dyn_ptr(const struct link_map *lm, uintptr_t v)
{
    /* glibc relocates the dynamic section in place on most targets */
    return v < (uintptr_t)lm->l_addr ? v + (uintptr_t)lm->l_addr : v;
}

static bool shim_sym_matches(const ElfW(Sym) *s, const char *strtab, const char *name)
{
    unsigned type = s->st_info & 0xf; /* ELF_ST_TYPE, same in 32 and 64 bits */
    return s->st_shndx != SHN_UNDEF && s->st_value != 0 &&
           (type == STT_FUNC || type == STT_NOTYPE) && strcmp(strtab + s->st_name, name) == 0;
}

static void *shim_lookup(const struct link_map *lm, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++) {
        uintptr_t p = shim_dyn_ptr(lm, (uintptr_t)d->d_un.d_ptr);
        if (d->d_tag == DT_SYMTAB)
            symtab = (const ElfW(Sym) *)p;
        else if (d->d_tag == DT_STRTAB)
            strtab = (const char *)p;
        else if (d->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)p;
        else if (d->d_tag == DT_HASH)
            sysv = (const uint32_t *)p;
    }
    if (!symtab || !strtab)
        return NULL;
    if (gnu) {
        uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom_size = gnu[2];
        const ElfW(Addr) *bloom = (const ElfW(Addr) *)(gnu + 4);
        const uint32_t *buckets = (const uint32_t *)(bloom + bloom_size);
        const uint32_t *chain = buckets + nbuckets;
        uint32_t h = 5381;
        for (const unsigned char *c = (const unsigned char *)name; *c; c++)
            h = h * 33 + *c;
        if (!nbuckets)
            return NULL;
        for (uint32_t i = buckets[h % nbuckets]; i >= symoffset && i; i++) {
            uint32_t ch = chain[i - symoffset];
            if ((ch | 1) == (h | 1) && shim_sym_matches(&symtab[i], strtab, name))
                return (void *)(lm->l_addr + symtab[i].st_value);
            if (ch & 1)
                break;
        }
        return NULL;
    }
    if (sysv) {
        uint32_t nbucket = sysv[0], h = 0;
        const uint32_t *bucket = sysv + 2, *chain = bucket + nbucket;
        for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
            h = (h << 4) + *c;
            uint32_t g = h & 0xf0000000u;
            if (g)
                h ^= g >> 24;
            h &= ~g;
        }
        for (uint32_t i = nbucket ? bucket[h % nbucket] : 0; i; i = chain[i])
            if (shim_sym_matches(&symtab[i], strtab, name))
                return (void *)(lm->l_addr + symtab[i].st_value);
    }
    return NULL;
}

/* Returns true when the real functions are usable; false while resolving
 * (the caller then uses the bootstrap heap). */
static bool shim_ready(void)
{
    int st = __atomic_load_n(&shim_state, __ATOMIC_ACQUIRE);
    if (st == 2)
        return true;
    int zero = 0;
    if (st == 1 || !__atomic_compare_exchange_n(&shim_state, &zero, 1, false, __ATOMIC_ACQ_REL,
                                                __ATOMIC_ACQUIRE))
        return __atomic_load_n(&shim_state, __ATOMIC_ACQUIRE) == 2;
    Dl_info di;
    struct link_map *lm = NULL;
    void *marker = dlsym(RTLD_NEXT, SHIM_MARKER);
    if (!marker || !dladdr1(marker, &di, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
        shim_die("no " SHIM_FAMILY " library defining " SHIM_MARKER " is loaded after the shim", NULL);
#define SHIM_RESOLVE(name, ...) \
    { void *p_ = shim_lookup(lm, #name); memcpy(&real.name, &p_, sizeof p_); }
    SHIM_COMMON(SHIM_RESOLVE)
    SHIM_FAMILY_API(SHIM_RESOLVE)
    SHIM_VOID(SHIM_RESOLVE)
    if (!real.malloc || !real.free || !real.realloc || !real.calloc)
        shim_die("malloc, calloc, realloc or free not found in", lm->l_name);
    __atomic_store_n(&shim_state, 2, __ATOMIC_RELEASE);
    return true;
}

/* Reads MB_SHIM_DELAY_NS once; runs after the real library's constructor
 * (it is a DT_NEEDED dependency), before main. */
__attribute__((constructor))
static void shim_init(void)
{
    const char *s = getenv("MB_SHIM_DELAY_NS");
    if (s) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (!*s || *end || errno || s[0] == '-' || v > 10000000000ULL)
            shim_die("MB_SHIM_DELAY_NS is not a count of nanoseconds (0..1e10):", s);
        shim_delay_ns = v;
    }
    (void)shim_ready();
}

/* Spends shim_delay_ns on the CPU: time truly passes in the caller. */
static inline void shim_delay(void)
{
    uint64_t d = shim_delay_ns;
    if (!d)
        return;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    uint64_t end = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec + d;
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec < end);
}

/* ---- the definitions ----------------------------------------------------- */
/* Calls that come while resolving: malloc-like ones use the bootstrap heap,
 * anything else is a bug of this shim. */
void *malloc(size_t n)
{
    if (!shim_ready())
        return shim_boot_alloc(16, n);
    shim_delay();
    return real.malloc(n);
}

void *calloc(size_t k, size_t n)
{
    if (!shim_ready()) {
        if (n && k > SIZE_MAX / n)
            return NULL;
        return shim_boot_alloc(16, k * n); /* static storage: already zero */
    }
    shim_delay();
    return real.calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    if (!shim_ready() || shim_is_boot(p)) {
        void *q = shim_ready() ? malloc(n) : shim_boot_alloc(16, n);
        if (q && p) {
            size_t old = shim_boot_size(p);
            memcpy(q, p, old < n ? old : n);
        }
        return q;
    }
    shim_delay();
    return real.realloc(p, n);
}

void free(void *p)
{
    if (!p || shim_is_boot(p))
        return;
    if (!shim_ready())
        shim_die("free() of a foreign pointer while resolving", NULL);
    real.free(p);
}

int posix_memalign(void **pp, size_t a, size_t n)
{
    if (!shim_ready()) {
        void *q = shim_boot_alloc(a, n);
        if (!q)
            return ENOMEM;
        *pp = q;
        return 0;
    }
    shim_delay();
    return real.posix_memalign(pp, a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
    if (!shim_ready())
        return shim_boot_alloc(a, n);
    shim_delay();
    return real.aligned_alloc ? real.aligned_alloc(a, n) : real.memalign(a, n);
}

void *memalign(size_t a, size_t n)
{
    if (!shim_ready())
        return shim_boot_alloc(a, n);
    shim_delay();
    return real.memalign(a, n);
}

void *valloc(size_t n)
{
    if (!shim_ready())
        return shim_boot_alloc(4096, n);
    shim_delay();
    return real.valloc(n);
}

size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (shim_is_boot(p))
        return shim_boot_size(p);
    return shim_ready() ? real.malloc_usable_size(p) : 0;
}

#if !defined(SHIM_TCMALLOC) && !defined(SHIM_MIMALLOC)
/* jemalloc has no pvalloc: glibc's would be handed jemalloc's memory, so it
 * is answered here with the real memalign (page-rounded, as glibc does). */
SHIM_API void *pvalloc(size_t n);
void *pvalloc(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX - pg)
        return NULL;
    n = n ? (n + pg - 1) / pg * pg : pg;
    if (!shim_ready())
        return shim_boot_alloc(pg, n);
    shim_delay();
    return real.memalign(pg, n);
}
#endif

/* The family's own API: forwarded as is (delayed where it allocates);
 * void functions (frees, statistics) are never delayed. */
#define SHIM_DEFINE(name, ret, params, args, delayed)        \
    ret name params                                          \
    {                                                        \
        if (!shim_ready() || !real.name)                     \
            shim_die("not available in the real library:", #name); \
        if (delayed)                                         \
            shim_delay();                                    \
        return real.name args;                               \
    }
#define SHIM_DEFINE_VOID(name, params, args)                 \
    void name params                                         \
    {                                                        \
        if (!shim_ready() || !real.name)                     \
            shim_die("not available in the real library:", #name); \
        real.name args;                                      \
    }
SHIM_FAMILY_API(SHIM_DEFINE)
SHIM_FAMILY_VOID(SHIM_DEFINE_VOID)
