/* tensor_copy.c - tensor-sized buffers allocated, filled by memcpy (every
 * page touched), checked and freed, step after step: the pattern under
 * which an allocator that hands freed buffers back to the kernel re-faults
 * every page.  Sizes are fixed, a list, log-uniform or a model's shapes
 * file (dist.h).  reuse=yes allocates the buffers once, before the loop:
 * the same copies with no allocator in the way, i.e. the machine's limit.
 * align=N asks for each buffer with posix_memalign(N), as PyTorch does for
 * every CPU tensor (64); align=trace with the alignment its recorded call
 * asked for: an allocator may serve the two paths differently (mimalloc
 * 2.0.9 caches an exact 16 MiB malloc but unmaps the aligned one). */
#include "dist.h"
#include "region.h"
#include "units.h"
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096

/* One word per page: touches no new memory, keeps the copies alive. */
static uint64_t buf_checksum(const unsigned char *b, size_t size, uint64_t h)
{
    for (size_t off = 0; off + sizeof(uint64_t) <= size; off += PAGE) {
        uint64_t w;
        memcpy(&w, b + off, sizeof w);
        h = (h ^ w) * 0x100000001b3ULL;
    }
    return h;
}

typedef struct {
    dist_t dist;
    uint64_t rng;
    unsigned char *src;
    unsigned char **bufs;
    size_t *sizes;
    size_t count, max;
    uint64_t align;  /* posix_memalign's alignment; 0: malloc */
    bool from_trace; /* align=trace: each size's own (dist_align) */
    bool reuse;
    uint64_t h;
} tc_t;

/* align=: "0" or "" (malloc), "trace", or a power of two from sizeof(void *)
 * to 1G; 0 and *from_trace, or -EINVAL with one line in err. */
static int parse_align(const char *s, uint64_t *align, bool *from_trace, char *err, size_t errlen)
{
    *align = 0;
    *from_trace = false;
    if (!s || !*s)
        return 0;
    if (strcmp(s, "trace") == 0) {
        *from_trace = true;
        return 0;
    }
    if (units_parse_size(s, align) ||
        (*align && (*align < sizeof(void *) || *align > (1ULL << 30) || (*align & (*align - 1))))) {
        snprintf(err, errlen,
                 "bad align '%s' (expected 0, trace, or a power of two from %zu to 1G, e.g. 64)", s,
                 sizeof(void *));
        return -EINVAL;
    }
    return 0;
}

static int tc_check(const wl_args_t *a, char *err, size_t errlen)
{
    uint64_t align;
    bool from_trace;
    if (parse_align(wl_get_str(a, "align"), &align, &from_trace, err, errlen))
        return -EINVAL;
    if (from_trace && strncmp(wl_get_str(a, "size"), "trace:", 6) != 0) {
        snprintf(err, errlen, "align=trace takes each buffer's alignment from size=trace:FILE, and size is '%s'",
                 wl_get_str(a, "size"));
        return -EINVAL;
    }
    return 0;
}

/* A buffer of size bytes by the call align= names. */
static unsigned char *tc_alloc(const tc_t *t, size_t size)
{
    uint64_t align = t->from_trace ? dist_align(&t->dist) : t->align;
    if (!align)
        return malloc(size);
    /* glibc's memalign takes any alignment and rounds it up; posix_memalign
     * wants a power of two, at least a pointer's size */
    while (align & (align - 1))
        align += align & -align;
    if (align < sizeof(void *))
        align = sizeof(void *);
    void *p;
    return posix_memalign(&p, (size_t)align, size) ? NULL : p;
}

/* One step: COUNT buffers allocated (unless reused), copied, checked, freed. */
static int tc_step(tc_t *t, uint64_t step, uint64_t *bytes)
{
    for (size_t i = 0; i < t->count; i++) {
        size_t size = (size_t)dist_next(&t->dist, &t->rng);
        t->sizes[i] = size;
        if (!t->reuse) {
            t->bufs[i] = tc_alloc(t, size);
            if (!t->bufs[i])
                return -ENOMEM;
        }
        memcpy(t->bufs[i], t->src, size);
        t->bufs[i][(step + i) % size] ^= (unsigned char)i; /* copies differ; still deterministic */
        *bytes += size;
    }
    for (size_t i = 0; i < t->count; i++)
        t->h = buf_checksum(t->bufs[i], t->sizes[i], t->h);
    if (!t->reuse) {
        for (size_t i = 0; i < t->count; i++) {
            free(t->bufs[i]);
            t->bufs[i] = NULL;
        }
    }
    return 0;
}

static void tc_free(tc_t *t)
{
    if (t->bufs)
        for (size_t i = 0; i < t->count; i++)
            free(t->bufs[i]);
    free(t->bufs);
    free(t->sizes);
    free(t->src);
    free(t);
}

static int tensor_copy_run(const wl_args_t *a, wl_result_t *res)
{
    char err[512];
    tc_t *t = calloc(1, sizeof *t);
    if (!t)
        return -ENOMEM;
    if (dist_parse(wl_get_str(a, "size"), &t->dist, err, sizeof err)) {
        free(t);
        return -EINVAL; /* the harness checked the spec already */
    }
    if (parse_align(wl_get_str(a, "align"), &t->align, &t->from_trace, err, sizeof err)) {
        free(t);
        return -EINVAL; /* tc_check refused it already */
    }
    t->count = (size_t)wl_get(a, "count");
    t->reuse = wl_get(a, "reuse") == 1;
    t->max = (size_t)dist_max(&t->dist);
    t->rng = rng_seed(wl_get(a, "seed"));
    uint64_t steps = wl_get(a, "steps"), warmup = wl_get(a, "warmup"), want = wl_get(a, "bytes");

    t->src = malloc(t->max);
    t->bufs = calloc(t->count, sizeof *t->bufs);
    t->sizes = calloc(t->count, sizeof *t->sizes);
    if (!t->src || !t->bufs || !t->sizes) {
        tc_free(t);
        return -ENOMEM;
    }
    uint64_t fill = rng_seed(wl_get(a, "seed") ^ 0x5eed);
    for (size_t off = 0; off < t->max; off += sizeof(uint64_t)) {
        uint64_t w = rng_next(&fill);
        memcpy(t->src + off, &w, t->max - off < sizeof w ? t->max - off : sizeof w);
    }
    if (t->reuse) {
        for (size_t i = 0; i < t->count; i++) {
            t->bufs[i] = tc_alloc(t, t->max);
            if (!t->bufs[i]) {
                tc_free(t);
                return -ENOMEM;
            }
            memset(t->bufs[i], 0, t->max); /* pre-faulted */
        }
    }

    t->h = 0xcbf29ce484222325ULL;
    uint64_t warm_bytes = 0, bytes = 0, done = 0;
    int rc = 0;
    for (uint64_t step = 0; step < warmup && !rc; step++)
        rc = tc_step(t, step, &warm_bytes);
    if (!rc) {
        region_begin();
        /* bytes=N: as many steps as it takes to copy N bytes (for sweeps) */
        while (!rc && (want ? bytes < want : done < steps)) {
            rc = tc_step(t, warmup + done, &bytes);
            done++;
        }
        region_end();
    }
    uint64_t h = t->h;
    size_t count = t->count;
    bool reuse = t->reuse;
    tc_free(t);
    if (rc)
        return rc;
    res->region_s = region_seconds();
    res->bytes = bytes;
    res->ops = reuse ? 0 : (uint64_t)count * done;
    res->throughput = res->region_s > 0 ? (double)bytes / res->region_s : 0;
    res->unit = "B/s";
    res->checksum = h;
    snprintf(res->extra, sizeof res->extra, "steps=%llu", (unsigned long long)done);
    return 0;
}

static const wl_param_t tensor_copy_params[] = {
    {"size", WLP_SIZES, "16M", 1, 1ULL << 40, NULL, "bytes",
     "bytes per buffer: 16M, a list 1M/4M/16M (in order), 64K..64M (log-uniform), @shapes.txt or "
     "trace:t.mbt[:min=64K] (a recording's allocation sizes, in order)"},
    {"count", WLP_UINT, "4", 1, 65536, NULL, "buffers", "buffers live at once in each step"},
    {"steps", WLP_UINT, "50", 1, 1000000000, NULL, "steps", "measured steps"},
    {"warmup", WLP_UINT, "5", 0, 1000000000, NULL, "steps", "steps run before the measured region"},
    {"bytes", WLP_SIZE, "0", 0, 1ULL << 50, NULL, "bytes",
     "when not 0: measure as many steps as it takes to copy this many bytes (instead of steps)"},
    {"reuse", WLP_ENUM, "no", 0, 0, "no|yes", "",
     "yes: allocate the buffers once, before the loop (the machine's limit, no allocator in the way)"},
    {"align", WLP_STRING, "0", 0, 0, NULL, "",
     "0: each buffer by malloc; N: by posix_memalign(N), a power of two (PyTorch's CPU tensors: "
     "64); trace: by the call size=trace:FILE recorded, posix_memalign with its alignment or "
     "malloc"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the data and of random sizes"},
};

const wl_t wl_tensor_copy = {
    .name = "tensor_copy",
    .help = "allocate COUNT buffers of SIZE, memcpy into each (every page touched), free; repeat",
    .params = tensor_copy_params,
    .nparams = sizeof tensor_copy_params / sizeof *tensor_copy_params,
    .run = tensor_copy_run,
    .check = tc_check,
    .quiet_defaults = "align",
    .limit = "reuse=yes",
    .metric = "copy bandwidth",
    .scale = "bytes,steps",
    .traits = "size_curve",
    .smoke = "tensor_copy:size=1M,count=2,steps=3,warmup=1;"
             "tensor_copy:size=64K..2M,count=3,steps=4,warmup=1,seed=7;"
             "tensor_copy:size=@{fixtures}/shapes-small.txt,count=4,steps=3,warmup=1",
};
