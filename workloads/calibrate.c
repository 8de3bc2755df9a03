/* calibrate.c - the machine's own limits, with no allocator in the way:
 * memcpy bandwidth into a buffer faulted in beforehand, the cost of one
 * minor page fault (map fresh memory, touch each page, unmap; divide), of
 * one re-fault whole (a buffer written after MADV_DONTNEED against the
 * same buffer written resident), and of one 2 MiB huge-page fault (an
 * aligned MADV_HUGEPAGE range written once per 2 MiB, timed only in rounds
 * where the range's AnonHugePages says every fault got a huge page).
 * `mallocbench calibrate` runs it; tensor_copy rows carry their own limit
 * (the same copies into buffers allocated once, see wl_t.limit). */
#include "dist.h"
#include "region.h"
#include "workload.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#define PAGE 4096
#define HUGE_PAGE (2u << 20)

/* The process's system time so far, s (the part of a re-fault the kernel's own clock sees). */
static double sys_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* /proc/vmstat's thp_fault_alloc and thp_fault_fallback (machine-wide) into v; -1 each when unread. */
static void vmstat_thp(long long v[2])
{
    v[0] = v[1] = -1;
    FILE *f = fopen("/proc/vmstat", "re");
    char line[128];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "thp_fault_alloc ", 16))
            v[0] = strtoll(line + 16, NULL, 10);
        else if (!strncmp(line, "thp_fault_fallback ", 19))
            v[1] = strtoll(line + 19, NULL, 10);
    }
    if (f)
        fclose(f);
}

/* AnonHugePages (KiB) of the mapping that holds addr, from /proc/self/smaps; -1 when unread. */
static long long smaps_huge_kib(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f)
        return -1;
    char line[512];
    uintptr_t a = (uintptr_t)addr;
    bool in = false;
    long long kib = -1;
    while (kib < 0 && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            in = lo <= a && a < hi;
        else if (in && !strncmp(line, "AnonHugePages:", 14))
            kib = strtoll(line + 14, NULL, 10);
    }
    fclose(f);
    return kib;
}

/* The huge-page phase's tally: time and count of the faults shown huge, the range's faults
 * that got no huge page, those neither smaps nor vmstat could tell, THP off for this process. */
typedef struct {
    double s;
    uint64_t huge, fallbacks, unknown;
    int off;
} huge_tally_t;

/* One round: n 2 MiB pages of a fresh aligned MADV_HUGEPAGE mapping, one byte written in
 * each (a read would map the zero page), timed together; counted huge only when the range's
 * AnonHugePages holds all n (or, smaps unread, Δthp_fault_alloc >= n with no fallback). */
static void huge_round(size_t n, huge_tally_t *t, uint64_t *h)
{
    size_t len = n * HUGE_PAGE;
    unsigned char *raw = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return;
    unsigned char *m = (unsigned char *)(((uintptr_t)raw + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (m > raw) /* the slack unmapped: the mapping is the aligned range alone */
        munmap(raw, (size_t)(m - raw));
    if (raw + len + HUGE_PAGE > m + len)
        munmap(m + len, (size_t)(raw + len + HUGE_PAGE - (m + len)));
    if (madvise(m, len, MADV_HUGEPAGE)) { /* EINVAL: a kernel without THP */
        t->off = 1;
        munmap(m, len);
        return;
    }
    long long v0[2], v1[2];
    vmstat_thp(v0);
    double t0 = region_now();
    for (size_t off = 0; off < len; off += HUGE_PAGE)
        m[off] = (unsigned char)(off >> 21 | 1);
    double dt = region_now() - t0;
    vmstat_thp(v1);
    long long kib = smaps_huge_kib(m);
    bool vm = v0[0] >= 0 && v0[1] >= 0 && v1[0] >= 0 && v1[1] >= 0;
    uint64_t got = kib >= 0 ? (uint64_t)kib / 2048 : 0;
    if (kib < 0 && vm && v1[0] - v0[0] >= (long long)n && v1[1] == v0[1])
        got = n;
    got = got > n ? n : got;
    if (got == n) {
        t->s += dt;
        t->huge += n;
    } else if (kib >= 0 || (vm && v1[1] > v0[1])) {
        t->fallbacks += n - got;
    } else {
        t->unknown += n;
    }
    *h += m[len - HUGE_PAGE];
    munmap(m, len);
}

static int calibrate_run(const wl_args_t *a, wl_result_t *res)
{
    size_t size = (size_t)wl_get(a, "size");
    uint64_t rounds = wl_get(a, "rounds");
    int flags = MAP_PRIVATE | MAP_ANONYMOUS;
    unsigned char *src = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
    unsigned char *dst = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
    if (src == MAP_FAILED || dst == MAP_FAILED) {
        if (src != MAP_FAILED)
            munmap(src, size);
        if (dst != MAP_FAILED)
            munmap(dst, size);
        return -ENOMEM;
    }
    /* no transparent huge pages: a fault is one 4 KiB page, as for the workloads */
    madvise(src, size, MADV_NOHUGEPAGE);
    madvise(dst, size, MADV_NOHUGEPAGE);
    uint64_t rng = rng_seed(wl_get(a, "seed"));
    for (size_t off = 0; off + 8 <= size; off += 8) {
        uint64_t w = rng_next(&rng);
        memcpy(src + off, &w, 8);
    }
    memset(dst, 0, size);
    memcpy(dst, src, size); /* warm */

    region_begin();
    double t0 = region_now();
    for (uint64_t r = 0; r < rounds; r++)
        memcpy(dst, src, size);
    double copy_s = region_now() - t0;

    /* fault cost: fresh mappings, one write per page */
    uint64_t h = 0, pages = 0;
    double fault_s = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        unsigned char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
        if (m == MAP_FAILED)
            break;
        madvise(m, size, MADV_NOHUGEPAGE);
        double t1 = region_now();
        for (size_t off = 0; off < size; off += PAGE)
            m[off] = (unsigned char)off;
        fault_s += region_now() - t1;
        pages += size / PAGE;
        h += m[size / 2];
        munmap(m, size);
    }
    /* a re-fault, whole: writing every byte of a buffer given back (MADV_DONTNEED) against
     * writing it resident; the difference per page is all a re-fault costs the writer, the
     * kernel's fault and what its samples do not see (a VM host's own fault, the caches) */
    double refault_s = 0, refault_sys_s = 0;
    uint64_t refaulted = 0;
    for (uint64_t r = 0; r < rounds; r++) {
        double s0 = sys_seconds(), t1 = region_now();
        memset(dst, (int)(r & 0xff), size);
        double resident = region_now() - t1, resident_sys = sys_seconds() - s0;
        if (madvise(dst, size, MADV_DONTNEED))
            break;
        s0 = sys_seconds();
        t1 = region_now();
        memset(dst, (int)(r & 0xff), size);
        refault_s += (region_now() - t1) - resident;
        refault_sys_s += (sys_seconds() - s0) - resident_sys; /* the part the kernel's own time shows */
        refaulted += size / PAGE;
    }
    huge_tally_t ht = {.off = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) > 0};
    for (uint64_t r = 0; r < rounds && !ht.off && wl_get(a, "huge_pages"); r++)
        huge_round((size_t)wl_get(a, "huge_pages"), &ht, &h);
    region_end();
    for (size_t off = 0; off < size; off += PAGE)
        h = (h ^ dst[off]) * 0x100000001b3ULL;
    munmap(src, size);
    munmap(dst, size);
    if (!pages)
        return -ENOMEM;
    res->region_s = region_seconds();
    res->bytes = size * rounds;
    res->throughput = copy_s > 0 ? (double)res->bytes / copy_s : 0;
    res->unit = "B/s";
    res->checksum = h;
    int len = snprintf(res->extra, sizeof res->extra,
                       "memcpy_Bps=%.4g;fault_ns=%.1f;faults_timed=%llu;refault_ns=%.1f;refault_sys_ns=%.1f;",
                       res->throughput, fault_s / (double)pages * 1e9, (unsigned long long)pages,
                       refaulted ? refault_s / (double)refaulted * 1e9 : 0.0,
                       refaulted ? refault_sys_s / (double)refaulted * 1e9 : 0.0);
    if (ht.huge) /* a huge fault's cost only where one was shown huge: never a guess */
        len += snprintf(res->extra + len, sizeof res->extra - (size_t)len, "huge_fault_ns=%.1f;",
                        ht.s / (double)ht.huge * 1e9);
    snprintf(res->extra + len, sizeof res->extra - (size_t)len,
             "huge_faults=%llu;huge_fallbacks=%llu;huge_unknown=%llu;huge_off=%d", (unsigned long long)ht.huge,
             (unsigned long long)ht.fallbacks, (unsigned long long)ht.unknown, ht.off);
    return 0;
}

static const wl_param_t calibrate_params[] = {
    {"size", WLP_SIZE, "64M", 1 << 20, 1ULL << 36, NULL, "bytes", "buffer copied and mapping faulted"},
    {"rounds", WLP_UINT, "20", 1, 1000000, NULL, "rounds", "copies, and fresh mappings faulted"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the data"},
    {"huge_pages", WLP_UINT, "8", 0, 4096, NULL, "pages", "2 MiB huge pages faulted per round (0: none)"},
};

const wl_t wl_calibrate = {
    .name = "calibrate",
    .help = "the machine's limits: memcpy bandwidth on a pre-faulted buffer, ns per minor and per 2 MiB huge fault",
    .params = calibrate_params,
    .nparams = sizeof calibrate_params / sizeof *calibrate_params,
    .run = calibrate_run,
    .metric = "memcpy bandwidth",
    .smoke = "calibrate:size=1M,rounds=2",
    .quiet_defaults = "huge_pages",
};
