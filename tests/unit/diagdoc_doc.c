/* diagdoc_doc.c - diagnose's document (harness/watch/diagdoc.c) from a window built by hand, no
 * perf, no root: this process watched (its real mappings, so its files and libc are named), a
 * child it forks, every kind of fault, give-back call, madvise advice and cpu-clock sample, a
 * reading with a command line, /proc at both ends.  `diagdoc_doc pid|all|command` prints the
 * document of that mode; tests/unit/test_diagnose_keys.py holds its keys to the key table. */
#include "diagdoc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MS 1000000ull

static pm_model_t *m;

static void rec(int kind, int32_t pid, uint64_t t, int sys, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t ip)
{
    pr_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = (uint8_t)kind, r.pid = r.tid = pid, r.time = t, r.sys = (uint8_t)sys;
    r.a[0] = a0, r.a[1] = a1, r.a[2] = a2, r.a[3] = a2, r.a[6] = ip;
    pm_feed(m, &r);
}

/* A give-back call entered and returned at t, made by the code at ip. */
static void call(int32_t pid, uint64_t t, int sys, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t ip, int64_t ret)
{
    rec(PR_ENTER, pid, t, sys, a0, a1, a2, ip);
    rec(PR_EXIT, pid, t + 1, sys, (uint64_t)ret, 0, 0, 0);
}

static void sample(int32_t pid, uint64_t t, int at, int sys, uint64_t ip)
{
    pr_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = PR_CPU, r.pid = r.tid = pid, r.time = t, r.at = (uint8_t)at, r.sys = (uint8_t)sys, r.a[0] = ip;
    pm_feed(m, &r);
}

static ident_capture_t cap;

static const ident_capture_t *capture(void *ctx, uint32_t idx)
{
    (void)ctx;
    return idx == 0 ? &cap : NULL;
}

/* The window: faults, re-faults after each give-back call (the allocator's: libc made them),
 * MADV_FREE, an unnamed advice, a fork, samples of every place. */
static void window(int32_t self)
{
    uint64_t libc = (uint64_t)(uintptr_t)&free, own = (uint64_t)(uintptr_t)&window, a = 0x100000, t = MS;
    for (int i = 0; i < 4; i++)
        rec(PR_FAULT, self, t++, 0, a + 4096ull * (uint64_t)i, 0, 0, 0);
    call(self, t++, PR_SYS_MADVISE, a, 4096, MADV_DONTNEED, libc, 0);
    call(self, t++, PR_SYS_MADVISE, a + 4096, 4096, MADV_FREE, libc, 0);
    call(self, t++, PR_SYS_MADVISE, a + 8192, 4096, 99, own, 0);
    call(self, t++, PR_SYS_MUNMAP, a + 12288, 4096, 0, libc, 0);
    call(self, t++, PR_SYS_MUNMAP, a, 4096, 0, own, -22);
    rec(PR_FAULT, self, 20 * MS, 0, a, 0, 0, 0);
    rec(PR_MAJOR, self, 21 * MS, 0, a + 12288, 0, 0, 0);
    call(self, 30 * MS, PR_SYS_BRK, 0, 0, 0, libc, 0x400000 + 3 * 4096);
    rec(PR_FAULT, self, 31 * MS, 0, 0x400000 + 2 * 4096, 0, 0, 0);
    call(self, 32 * MS, PR_SYS_BRK, 0x400000 + 4096, 0, 0, libc, 0x400000 + 4096);
    rec(PR_FAULT, self, 33 * MS, 0, 0x400000 + 2 * 4096, 0, 0, 0);
    /* a whole 2 MiB-aligned block given back by the allocator, two of its pages re-faulted (one
     * block touched again), and a block's part given back and re-faulted (not whole) */
    uint64_t blk = 0x40000000;
    call(self, 34 * MS, PR_SYS_MADVISE, blk, 2ull << 20, MADV_DONTNEED, libc, 0);
    rec(PR_FAULT, self, 35 * MS, 0, blk + 4096, 0, 0, 0);
    rec(PR_FAULT, self, 36 * MS, 0, blk + 8192, 0, 0, 0);
    call(self, 37 * MS, PR_SYS_MADVISE, blk + (4ull << 20), 1ull << 20, MADV_DONTNEED, libc, 0);
    rec(PR_FAULT, self, 38 * MS, 0, blk + (4ull << 20), 0, 0, 0);
    t = 40 * MS;
    for (int at = 0; at < PR_NAT; at++)
        sample(self, t++, at, at == PR_AT_GIVEBACK ? PR_SYS_MUNMAP : 0, at == PR_AT_FAULT ? own : libc);
    pr_rec_t f;
    memset(&f, 0, sizeof f);
    f.kind = PR_FORK, f.pid = f.tid = self + 1, f.time = 50 * MS, f.a[0] = f.a[1] = (uint64_t)self;
    pm_feed(m, &f);
    rec(PR_FAULT, self + 1, 51 * MS, 0, a + 4096, 0, 0, 0);
    sample(self + 1, 52 * MS, PR_AT_FAULT, 0, libc);
    pm_finish(m, 100 * MS);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "pid";
    int32_t self = (int32_t)getpid();
    if (pm_new(&m, 0, true) || pm_watch(m, self, true, false))
        return 1;
    window(self);
    static char *cmd[] = {"env", "MALLOC_CONF=narenas:2", "LANG=C", "prog", "--port", "80", NULL};
    static const char *exec_cmd[] = {"env", "LANG=C", "prog", "--port", "80"}, *dropped[] = {"MALLOC_CONF=narenas:2"};
    static const char *tun[] = {"jemalloc:narenas=2"};
    static char *envp[] = {"MALLOC_CONF=narenas:2", "HOME=/root", NULL};
    memcpy(cap.cmdline, "prog\0--port", 12);
    cap.cmdline_len = 12, cap.hidden_args = 1, cap.exe_rc = -2;
    pr_stats_t ps = {.records = 40, .lost = 0, .throttled = 1, .other_calls = {5, 4, 3, 2, 1}, .ncpus = 2,
                     .ksyms = true};
    diagdoc_in_t in = {.mode = DIAGDOC_PID, .pid = self, .exe_path = "/bin/true", .envp = envp,
                       .fault_period = 1, .model_limit = 64ull << 20, .exit_status = -1, .started = 1700000000,
                       .seconds = 0.1, .end_reason = "duration", .calib_ns = NAN, .calib_refault_ns = 12000.5,
                       .calib_refault_sys_ns = NAN, .calib_huge_ns = 250000.5, .self_cpu_s = 0.25,
                       .thp_faults = 3, .thp_fallbacks = NAN, .thp_pmd_splits = 1,
                       .st0 = {true, 1.5, 0.25, 2048, 0, 1024}, .st1 = {false, 0, 0, 0, 0, 0},
                       .peak = {true, 1.5, 0.25, 4096, 2048, 3072}, .capture = capture};
    if (!strcmp(mode, "command")) {
        in.mode = DIAGDOC_COMMAND, in.cmd = cmd, in.ncmd = 6, in.exec_cmd = exec_cmd, in.nexec = 5;
        in.dropped = dropped, in.ndropped = 1, in.family = "jemalloc", in.tunables = tun, in.ntun = 1;
        in.exit_status = 3, in.end_reason = "exit";
        in.st1 = (diagdoc_pstat_t){true, 2.0, 0.5, 4096, 2048, 3072}; /* an end reading, so that every key is written */
    } else if (!strcmp(mode, "all")) {
        in.mode = DIAGDOC_ALL, in.pid = 0, in.fault_period = 8;
    } else if (strcmp(mode, "pid")) {
        fprintf(stderr, "usage: diagdoc_doc pid|all|command\n");
        return 2;
    }
    diagdoc_write(stdout, m, &ps, &in);
    pm_free(m);
    return 0;
}
