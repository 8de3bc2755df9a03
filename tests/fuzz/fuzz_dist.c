/* fuzz_dist.c - libFuzzer target: the input is the content of a shapes file
 * (dist_parse_shapes_text) and its first line a size spec (dist_parse, never
 * "@file" or "trace:file": the fuzzer must not read files it names).
 * Checks: no crash, and on success counts and sizes in range. */
#include "dist.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static dist_t d;

static void check(const dist_t *dd)
{
    if (dd->n > DIST_MAX)
        abort();
    for (size_t i = 0; i < dd->n; i++)
        if (!dd->v[i])
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    if (dist_parse_shapes_text("fuzz", (const char *)data, size, &d, err, sizeof err) == 0) {
        check(&d);
        if (d.kind != DIST_SHAPES || d.n < 1)
            abort();
        uint64_t rng = rng_seed(1), m = dist_max(&d);
        for (size_t i = 0; i < d.n + 1; i++)
            if (dist_next(&d, &rng) > m)
                abort();
    } else if (!err[0]) {
        abort(); /* an error always says why */
    }

    char spec[1024];
    const uint8_t *nl = memchr(data, '\n', size);
    size_t n = nl ? (size_t)(nl - data) : size;
    if (n >= sizeof spec || (n && data[0] == '@') || (n >= 6 && !memcmp(data, "trace:", 6)) ||
        memchr(data, '\0', n))
        return 0;
    memcpy(spec, data, n);
    spec[n] = '\0';
    if (dist_parse(spec, &d, err, sizeof err) == 0) {
        check(&d);
        if (d.kind == DIST_LOGUNIFORM ? d.lo > d.hi || !d.lo : d.n < 1)
            abort();
        uint64_t rng = rng_seed(2);
        for (int i = 0; i < 4; i++) {
            uint64_t v = dist_next(&d, &rng);
            if (!v || v > dist_max(&d))
                abort();
        }
    }
    return 0;
}
