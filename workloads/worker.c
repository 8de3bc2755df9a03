/* worker.c - mallocbench-worker: runs one workload in its own process, the
 * process the harness counts.  Usage: mallocbench-worker WORKLOAD [NAME=VALUE...]
 * Exit codes: 0 ok, 2 bad arguments, 3 the workload failed (e.g. ENOMEM) or
 * left its result incomplete. */
#include "region.h"
#include "sysmem.h"
#include "workload.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    /* the worker's own bookkeeping (a trace read, a replay's plan, a map)
     * never passes through the allocator it measures (common/sysmem.h) */
    sysmem_use_kernel();
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fprintf(stderr, "usage: mallocbench-worker WORKLOAD [NAME=VALUE ...]\n"
                        "runs one workload; normally started by `mallocbench run`\n");
        return argc < 2 ? 2 : 0;
    }
    char err[512];
    wl_args_t args;
    if (wl_parse_spec(argv[1], &args, err, sizeof err)) {
        fprintf(stderr, "mallocbench-worker: %s\n", err);
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (wl_set(&args, argv[i], err, sizeof err)) {
            fprintf(stderr, "mallocbench-worker: %s\n", err);
            return 2;
        }
    }
    if (!args.wl->run) {
        fprintf(stderr, "mallocbench-worker: workload %s is run by the harness, not the worker\n",
                args.wl->name);
        return 2;
    }
    wl_result_t res;
    wl_result_init(&res);
    int rc = args.wl->run(&args, &res);
    if (rc) {
        if (!region_failed()) { /* a workload that said why keeps its own message */
            snprintf(err, sizeof err, "workload %s failed: %s", args.wl->name, strerror(-rc));
            region_fail(err);
        }
        return 3;
    }
    return region_report(&args, &res) ? 3 : 0;
}
