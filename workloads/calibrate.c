/* calibrate.c - the machine's own limits, with no allocator in the way:
 * memcpy bandwidth into a buffer faulted in beforehand, the cost of one
 * minor page fault (map fresh memory, touch each page, unmap; divide), and
 * of one re-fault whole (a buffer written after MADV_DONTNEED against the
 * same buffer written resident).
 * `mallocbench calibrate` runs it; tensor_copy rows carry their own limit
 * (the same copies into buffers allocated once, see wl_t.limit). */
#include "dist.h"
#include "region.h"
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define PAGE 4096

/* The process's system time so far, s (the part of a re-fault the kernel's own clock sees). */
static double sys_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
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
    snprintf(res->extra, sizeof res->extra,
             "memcpy_Bps=%.4g;fault_ns=%.1f;faults_timed=%llu;refault_ns=%.1f;refault_sys_ns=%.1f",
             res->throughput, fault_s / (double)pages * 1e9, (unsigned long long)pages,
             refaulted ? refault_s / (double)refaulted * 1e9 : 0.0,
             refaulted ? refault_sys_s / (double)refaulted * 1e9 : 0.0);
    return 0;
}

static const wl_param_t calibrate_params[] = {
    {"size", WLP_SIZE, "64M", 1 << 20, 1ULL << 36, NULL, "bytes", "buffer copied and mapping faulted"},
    {"rounds", WLP_UINT, "20", 1, 1000000, NULL, "rounds", "copies, and fresh mappings faulted"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the data"},
};

const wl_t wl_calibrate = {
    .name = "calibrate",
    .help = "the machine's limits: memcpy bandwidth on a pre-faulted buffer, and ns per minor page fault",
    .params = calibrate_params,
    .nparams = sizeof calibrate_params / sizeof *calibrate_params,
    .run = calibrate_run,
    .metric = "memcpy bandwidth",
    .smoke = "calibrate:size=1M,rounds=2",
};
