/* tbbmalloc.c - oneTBB 2021.8's scalable allocator, from Debian's
 * libtbbmalloc2: preloading libtbbmalloc_proxy.so.2 replaces malloc and
 * forwards to libtbbmalloc.so.2.  Its settings are environment switches
 * read once at start-up.  tbbmalloc has no getter, but with TBB_VERSION=1
 * (set in every child of this family) it writes its version and its huge
 * page mode to stderr at initialisation ("TBBmalloc: huge pages<TAB>
 * requested"); those lines are the read-back.  Not offered:
 * TBB_MALLOC_SET_HUGE_SIZE_THRESHOLD and scalable_allocation_mode's soft
 * heap limit, which take effect silently and cannot be read back. */
#include "family.h"

#include <stdio.h>

static const alloc_tunable_t tunables[] = {
    {"use_huge_pages", TUN_BOOL, "0", 0, 1, NULL, "TBB_MALLOC_USE_HUGE_PAGES", "huge_pages",
     "back large blocks with huge pages (when the kernel has them)"},
};

/* what `mallocbench tune` searches: one line per tunable (family.h) */
static const alloc_domain_t domains[] = {
    {"use_huge_pages", "0|1"},
};

static const alloc_refusal_t refused[] = {
    {"set_huge_size_threshold", "takes effect silently and cannot be read back, so it is not offered"},
    {NULL, NULL},
};

static const char *const sonames[] = {"libtbbmalloc_proxy.so.2", NULL};
static const char *const env_vars[] = {"TBB_MALLOC_", "TBB_VERSION=", NULL};
/* text only its code carries, for `diagnose` (family.h) */
static const char *const marks[] = {"TBB_MALLOC_USE_HUGE_PAGES", "scalable_malloc", NULL};
static const char *const extra_env[] = {"TBB_VERSION=1", NULL};
static const alloc_output_t outputs[] = {
    {"TBBmalloc: VERSION", "version", NULL},
    {"TBBmalloc: huge pages", "tun:huge_pages", "requested=1|not requested=0"},
    {NULL, NULL, NULL},
};
static const char *const ident[] = {"__TBB_malloc_proxy", NULL};

static void version(const probe_ctx_t *p, char *out, size_t n)
{
    (void)p;
    snprintf(out, n, "(from its start-up report)");
}

static void read_key(const probe_ctx_t *p, const char *key, char *out, size_t n)
{
    (void)p;
    snprintf(out, n, "!'%s' is read from tbbmalloc's start-up report on stderr, which was not seen", key);
}

static void stats(const probe_ctx_t *p)
{
    (void)p; /* no statistics API */
}

const alloc_info_t alloc_tbbmalloc = {
    .name = "tbbmalloc",
    .huge_none = "its huge pages (use_huge_pages=1) need the kernel's THP mode always or reserved hugetlbfs "
                 "pages (vm.nr_hugepages), which the harness never sets",
    .huge_off = "use_huge_pages=0",
    .colour = "#56B4E9",
    .sonames = sonames,
    .tested_version = "2021.8",
    .conf_how = "TBB_MALLOC_NAME=V",
    .version_how = "TBB_VERSION=1 start-up report on stderr",
    .tunables = tunables,
    .ntunables = ALLOC_NELEM(tunables),
    .domains = domains,
    .ndomains = ALLOC_NELEM(domains),
    .refused = refused,
    .conf = {NULL, NULL, NULL, "1", "0"},
    .extra_env = extra_env,
    .env_vars = env_vars,
    .marks = marks,
    .check = ALLOC_CHECK_PROBE,
    .outputs = outputs,
    .ident = ident,
    .probe_version = version,
    .probe_read = read_key,
    .probe_stats = stats,
};
