/* selftest.c - a hidden workload that misbehaves on request, so the tests
 * can check that a crash, an abort, a hang or a failure becomes a row with
 * its status and does not stop the other runs. */
#include "region.h"
#include "workload.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int selftest_run(const wl_args_t *a, wl_result_t *res)
{
    uint64_t mode = wl_get(a, "mode");
    volatile char *p = malloc(4096);
    if (p)
        p[0] = 1;
    region_begin();
    switch (mode) {
    case 1: /* segv */
        raise(SIGSEGV);
        break;
    case 2: /* abort */
        abort();
    case 3: /* hang */
        for (;;)
            pause();
    case 4: /* fail */
        region_fail("selftest asked to fail");
        free((void *)p);
        exit(3);
    default:
        break;
    }
    region_end();
    free((void *)p);
    res->region_s = region_seconds();
    res->throughput = 1.0 / (res->region_s > 0 ? res->region_s : 1e-9);
    res->unit = "runs/s";
    res->ops = 1;
    return 0;
}

static const wl_param_t selftest_params[] = {
    {"mode", WLP_ENUM, "ok", 0, 0, "ok|segv|abort|hang|fail", "", "how to end"},
};

const wl_t wl_selftest = {
    .name = "selftest",
    .help = "test-only: end normally, crash, abort, hang or fail",
    .params = selftest_params,
    .nparams = 1,
    .run = selftest_run,
    .hidden = true,
    .metric = "none",
};
