/* glibc.c - glibc 2.36's malloc (ptmalloc2): part of libc, so never
 * preloaded; the system allocator.  Settings go through GLIBC_TUNABLES,
 * which ld.so parses and which malloc ignores silently when a name or a
 * value is wrong, so the effective values are read from the loader itself
 * (`ld.so --list-tunables` under the same environment) before the run, and
 * the child must have seen the same variable.  The ranges below are the
 * ones malloc.c accepts. */
#include "family.h"

#include <gnu/libc-version.h>
#include <malloc.h>
#include <stdio.h>

#define BIG 9.0e18

static const alloc_tunable_t tunables[] = {
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

/* what `mallocbench tune` searches: one line per tunable (family.h) */
static const alloc_domain_t domains[] = {
    {"mmap_threshold", "128K..32M"},
    {"trim_threshold", "128K..1G"},
    {"arena_max", "1|2|4|8|16"},
    {"top_pad", "0|64K|1M|16M|64M"},
    {"tcache_count", "0|7|16|64|256"},
};

static const alloc_refusal_t refused[] = {{NULL, NULL}};
static const char *const env_vars[] = {
    "GLIBC_TUNABLES=", "MALLOC_ARENA_MAX=", "MALLOC_ARENA_TEST=", "MALLOC_TOP_PAD_=",
    "MALLOC_TRIM_THRESHOLD_=", "MALLOC_MMAP_THRESHOLD_=", "MALLOC_MMAP_MAX_=", "MALLOC_PERTURB_=",
    "MALLOC_CHECK_=", "MALLOC_TCACHE_MAX_=", "MALLOC_TCACHE_COUNT_=", NULL};
/* text only its code carries, for `diagnose` (family.h): the tunables a static program holds */
static const char *const marks[] = {"glibc.malloc.mmap_threshold", NULL};
/* gnu_get_libc_version is libc's own: found in the object serving malloc
 * only when that object is libc */
static const char *const ident[] = {"gnu_get_libc_version", NULL};

static void version(const probe_ctx_t *p, char *out, size_t n)
{
    (void)p;
    snprintf(out, n, "%s", gnu_get_libc_version());
}

static void read_key(const probe_ctx_t *p, const char *key, char *out, size_t n)
{
    (void)p;
    (void)key;
    snprintf(out, n, "!no read-back API in glibc malloc (check GLIBC_TUNABLES with ld.so --list-tunables)");
}

static void stats(const probe_ctx_t *p)
{
    struct mallinfo2 mi = mallinfo2();
    p->line("stat:mallinfo2.arena=%zu", mi.arena);
    p->line("stat:mallinfo2.hblks=%zu", mi.hblks);
    p->line("stat:mallinfo2.hblkhd=%zu", mi.hblkhd);
    p->line("stat:mallinfo2.uordblks=%zu", mi.uordblks);
    p->line("stat:mallinfo2.fordblks=%zu", mi.fordblks);
    p->line("stat:mallinfo2.keepcost=%zu", mi.keepcost);
}

const alloc_info_t alloc_glibc = {
    .name = "glibc",
    .keep = "mmap_threshold=32M,trim_threshold=256M",
    .keep_stops = ALLOC_GIVES_MADVISE | ALLOC_GIVES_MUNMAP | ALLOC_GIVES_BRK,
    .huge_advise = "hugetlb=1", /* madvise(MADV_HUGEPAGE) on its heaps and mmap'd chunks */
    .huge_off = "hugetlb=0",
    .hugetlbfs = "hugetlb=2",
    .colour = "#0072B2",
    .sonames = NULL,
    .tested_version = "2.36",
    .conf_how = "GLIBC_TUNABLES=glibc.malloc.NAME=V:...",
    .version_how = "gnu_get_libc_version()",
    .tunables = tunables,
    .ntunables = ALLOC_NELEM(tunables),
    .domains = domains,
    .ndomains = ALLOC_NELEM(domains),
    .refused = refused,
    .conf = {"GLIBC_TUNABLES", "=", ":", "1", "0"},
    .env_vars = env_vars,
    .marks = marks,
    .check = ALLOC_CHECK_LOADER,
    .ident = ident,
    .probe_version = version,
    .probe_read = read_key,
    .probe_stats = stats,
};
