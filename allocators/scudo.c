/* scudo.c - LLVM 14's standalone scudo, the hardened allocator (Android's
 * default), from Debian's libclang-rt-14-dev: preloading
 * libclang_rt.scudo_standalone-<cpu>.so replaces malloc.  (The older
 * libclang_rt.scudo-<cpu>.so beside it is the deprecated sanitizer-based
 * scudo: not this one.)  Settings go through SCUDO_OPTIONS=name=value:...;
 * scudo has no API to read them back, so the child must see the variable
 * unchanged, and scudo's own parser is the check: an unknown name prints
 * "Scudo WARNING: found 1 unrecognized flag(s):" and runs on (an error
 * here), a malformed value aborts (a crashed row).  Our ranges are the C
 * int scudo parses each value into. */
#include "family.h"
#include "mb_config.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>

#define I32 2147483647.0

static const alloc_tunable_t tunables[] = {
    {"release_to_os_interval_ms", TUN_INT, "5000", -I32 - 1, I32, NULL, "release_to_os_interval_ms", NULL,
     "ms between attempts to release unused memory to the OS; negative: never"},
    {"quarantine_size_kb", TUN_UINT, "0", 0, I32, NULL, "quarantine_size_kb", NULL,
     "KiB of freed chunks held back before reuse (needs thread_local_quarantine_size_kb)"},
    {"thread_local_quarantine_size_kb", TUN_UINT, "0", 0, I32, NULL, "thread_local_quarantine_size_kb", NULL,
     "KiB of per-thread cache in front of the quarantine"},
    {"quarantine_max_chunk_size", TUN_UINT, "0", 0, I32, NULL, "quarantine_max_chunk_size", NULL,
     "largest chunk (bytes) that is quarantined"},
    {"zero_contents", TUN_BOOL, "false", 0, 1, NULL, "zero_contents", NULL,
     "zero every chunk on allocation (touches every page)"},
    {"pattern_fill_contents", TUN_BOOL, "false", 0, 1, NULL, "pattern_fill_contents", NULL,
     "pattern-fill every chunk on allocation"},
    {"dealloc_type_mismatch", TUN_BOOL, "false", 0, 1, NULL, "dealloc_type_mismatch", NULL,
     "abort on malloc/delete and new/free mismatches"},
    {"delete_size_mismatch", TUN_BOOL, "true", 0, 1, NULL, "delete_size_mismatch", NULL,
     "abort on a sized delete with the wrong size"},
    {"may_return_null", TUN_BOOL, "true", 0, 1, NULL, "may_return_null", NULL,
     "return NULL on non-fatal errors (e.g. out of memory) instead of aborting"},
};

/* what `mallocbench tune` searches: one line per tunable (family.h) */
static const alloc_domain_t domains[] = {
    {"release_to_os_interval_ms", "-1|0|1000|5000|30000"},
};

static const alloc_refusal_t refused[] = {
    {"allocator_release_to_os_interval_ms", "is the sanitizer-based scudo's spelling (use release_to_os_interval_ms)"},
    {"hard_rss_limit_mb", "belongs to the sanitizer-based scudo; the standalone one ignores it"},
    {"soft_rss_limit_mb", "belongs to the sanitizer-based scudo; the standalone one ignores it"},
    {NULL, NULL},
};

static const char *const sonames[] = {"libclang_rt.scudo_standalone-" MB_CPU ".so", NULL};
/* the versioned compiler-rt directory: clang-N -print-runtime-dir */
static const char *const dirs[] = {"/usr/lib/llvm-*/lib/clang/*/lib/linux", NULL};
static const char *const env_vars[] = {"SCUDO_OPTIONS=", "GWP_ASAN_OPTIONS=", NULL};
/* text only its code carries, for `diagnose` (family.h) */
static const char *const marks[] = {"SCUDO_OPTIONS", "scudo::", NULL};
static const char *const rejects[] = {"Scudo WARNING: ", NULL};
static const char *const ident[] = {"__scudo_print_stats", NULL};

/* compiler-rt's version is the directory it is installed in: .../clang/14.0.6/lib/... */
static void version(const probe_ctx_t *p, char *out, size_t n)
{
    const char *c = strstr(p->malloc_path, "/clang/");
    out[0] = '\0';
    if (c)
        snprintf(out, n, "%.*s", (int)strcspn(c + 7, "/"), c + 7);
}

static void read_key(const probe_ctx_t *p, const char *key, char *out, size_t n)
{
    (void)p;
    snprintf(out, n, "!scudo has no read-back API for '%s'", key);
}

typedef struct mallinfo2 (*mallinfo2_fn)(void);

static void stats(const probe_ctx_t *p)
{
    mallinfo2_fn f = NULL;
    void *a = p->sym("mallinfo2");
    memcpy(&f, &a, sizeof a);
    if (!f)
        return;
    struct mallinfo2 mi = f();
    p->line("stat:scudo.allocated=%zu", mi.uordblks);
    p->line("stat:scudo.free=%zu", mi.fordblks);
}

const alloc_info_t alloc_scudo = {
    .name = "scudo",
    .keep = "release_to_os_interval_ms=-1",
    .keep_stops = ALLOC_GIVES_MADVISE,
    .huge_none = "scudo (LLVM 14, standalone) has no huge-page setting",
    .colour = "#E69F00",
    .sonames = sonames,
    .dirs = dirs,
    .tested_version = "14.0.6",
    .conf_how = "SCUDO_OPTIONS=NAME=V:...",
    .version_how = "compiler-rt's directory (no version API)",
    .tunables = tunables,
    .ntunables = ALLOC_NELEM(tunables),
    .domains = domains,
    .ndomains = ALLOC_NELEM(domains),
    .refused = refused,
    .conf = {"SCUDO_OPTIONS", "=", ":", "true", "false"},
    .env_vars = env_vars,
    .marks = marks,
    .check = ALLOC_CHECK_ENV,
    .rejects = rejects,
    .ident = ident,
    .probe_version = version,
    .probe_read = read_key,
    .probe_stats = stats,
};
