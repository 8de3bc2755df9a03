/* tensor_copy.c - tensor-sized buffers allocated, filled by memcpy (every
 * page touched), checked and freed, step after step: the pattern under
 * which an allocator that hands freed buffers back to the kernel re-faults
 * every page.  Reports bytes copied per second over the measured steps. */
#include "region.h"
#include "workload.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

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

static int tensor_copy_run(const wl_args_t *a, wl_result_t *res)
{
    size_t size = (size_t)wl_get(a, "size");
    size_t count = (size_t)wl_get(a, "count");
    uint64_t steps = wl_get(a, "steps"), warmup = wl_get(a, "warmup");
    uint64_t seed = wl_get(a, "seed") | 1;

    unsigned char *src = malloc(size);
    unsigned char **bufs = calloc(count, sizeof *bufs);
    if (!src || !bufs) {
        free(src);
        free(bufs);
        return -ENOMEM;
    }
    for (size_t off = 0; off < size; off += sizeof(uint64_t)) {
        uint64_t w = xorshift(&seed);
        memcpy(src + off, &w, size - off < sizeof w ? size - off : sizeof w);
    }

    uint64_t h = 0xcbf29ce484222325ULL;
    int rc = 0;
    for (uint64_t step = 0; step < warmup + steps && !rc; step++) {
        if (step == warmup)
            region_begin();
        for (size_t i = 0; i < count; i++) {
            bufs[i] = malloc(size);
            if (!bufs[i]) {
                rc = -ENOMEM;
                break;
            }
            memcpy(bufs[i], src, size);
            bufs[i][(step + i) % size] ^= (unsigned char)i; /* copies differ; still deterministic */
        }
        for (size_t i = 0; i < count && bufs[i]; i++)
            h = buf_checksum(bufs[i], size, h);
        for (size_t i = 0; i < count; i++) {
            free(bufs[i]);
            bufs[i] = NULL;
        }
    }
    if (warmup + steps > warmup)
        region_end();
    free(bufs);
    free(src);
    if (rc)
        return rc;
    res->region_s = region_seconds();
    res->bytes = (uint64_t)size * count * steps;
    res->ops = (uint64_t)count * steps;
    res->throughput = res->region_s > 0 ? (double)res->bytes / res->region_s : 0;
    res->unit = "B/s";
    res->checksum = h;
    return 0;
}

static const wl_param_t tensor_copy_params[] = {
    {"size", WLP_SIZE, "16M", 1, 1ULL << 40, NULL, "bytes", "bytes per tensor buffer"},
    {"count", WLP_UINT, "4", 1, 65536, NULL, "buffers", "buffers live at once in each step"},
    {"steps", WLP_UINT, "50", 1, 1000000000, NULL, "steps", "measured steps"},
    {"warmup", WLP_UINT, "5", 0, 1000000000, NULL, "steps", "steps run before the measured region"},
    {"seed", WLP_UINT, "1", 0, UINT64_MAX, NULL, "", "seed of the source data"},
};

const wl_t wl_tensor_copy = {
    .name = "tensor_copy",
    .help = "allocate COUNT buffers of SIZE, memcpy into each (every page touched), free; repeat",
    .params = tensor_copy_params,
    .nparams = sizeof tensor_copy_params / sizeof *tensor_copy_params,
    .run = tensor_copy_run,
};
