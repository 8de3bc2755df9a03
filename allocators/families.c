/* families.c - the one table of allocator families, in the order `list`,
 * plots and reports show them.  Adding a family: its file
 * (allocators/<name>.c, see family.h), one X(<name>) line here, and its
 * Debian package in scripts/deps.sh. */
#include "family.h"

#define FAMILIES(X) \
    X(glibc)        \
    X(jemalloc)     \
    X(tcmalloc)     \
    X(mimalloc)     \
    X(scudo)        \
    X(tbbmalloc)    \
    /* end of the table */

#define DECLARE(n) extern const alloc_info_t alloc_##n;
#define ENTRY(n) &alloc_##n,
FAMILIES(DECLARE)
const alloc_info_t *const alloc_families[] = {FAMILIES(ENTRY)};
const size_t alloc_nfamilies = ALLOC_NELEM(alloc_families);
