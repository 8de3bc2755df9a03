/* test_pagemodel.c - diagnose's page model (harness/watch/pagemodel.c) on records built by
 * hand, no perf: every kind of fault from its history (first touch, a re-fault by its age and
 * the call that gave the page back, the zero page's second fault, later faults as other,
 * MADV_FREE reclaimed, copy-on-write after a fork in the parent and in a followed child,
 * file-backed), failed calls dropped, a shrinking brk, the allocator's calls told from the
 * program's by the code that made them, the kept-memory replay, mappings split again and
 * again by munmap (a heap overflow here once; the sanitizer build checks it), and fault samples
 * counted to the file they fell in however many files took one first; and the bounds a watched
 * process cannot push diagnose past (issue 43): the model's memory cap (give-backs of empty
 * gigabytes counted as untracked bytes, known pages still followed), 60,000 mappings added and
 * cut in any order found as a plain list finds them, and records dropped past a deadline or a
 * stop signal. */
#include "check.h"
#include "pagemodel.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000ull
#define PID 100
#define LIBC_LO 0x7f0000000000ull

static pm_model_t *m;

static void rec(int kind, int32_t pid, uint64_t t, int sys, uint64_t a0, uint64_t a1, uint64_t a2)
{
    pr_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = (uint8_t)kind, r.pid = pid, r.tid = pid, r.time = t, r.sys = (uint8_t)sys;
    r.a[0] = a0, r.a[1] = a1, r.a[2] = a2;
    pm_feed(m, &r);
}

static void fault(uint64_t t, uint64_t addr)
{
    rec(PR_FAULT, PID, t, 0, addr, 0, 0);
}

/* A call entered and returned at t; ip: the code that made it (0: unknown), ret: its result. */
static void call(uint64_t t, int sys, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t ip, int64_t ret)
{
    pr_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = PR_ENTER, r.pid = PID, r.tid = PID, r.time = t, r.sys = (uint8_t)sys;
    r.a[0] = a0, r.a[1] = a1, r.a[2] = a2, r.a[3] = a2, r.a[6] = ip;
    pm_feed(m, &r);
    memset(&r, 0, sizeof r);
    r.kind = PR_EXIT, r.pid = PID, r.tid = PID, r.time = t + 1, r.sys = (uint8_t)sys;
    r.a[0] = (uint64_t)ret;
    pm_feed(m, &r);
}

static const pm_proc_t *proc(int32_t pid)
{
    for (size_t i = pm_count(m); i-- > 0;)
        if (pm_at(m, i)->pid == pid)
            return pm_at(m, i);
    return NULL;
}

/* A cpu-clock sample of self under the fault entry, its user address at ip. */
static void fault_sample(int32_t self, uint64_t t, uint64_t ip)
{
    pr_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = PR_CPU, r.pid = r.tid = self, r.time = t, r.at = PR_AT_FAULT, r.a[0] = ip;
    pm_feed(m, &r);
}

/* Fault samples go to the file their address is in, however many files took one first: twelve
 * files mapped here each take one (a framework's libraries at import), then this program's own
 * code takes 50 (its loop).  A table of a few slots once counted the 50 to the last file to
 * take a slot, a file that had run once. */
static void check_blame(void)
{
    enum { NFILES = 12 };
    char dir[] = "/tmp/test_pagemodel_XXXXXX", path[NFILES][64];
    char *at[NFILES] = {0};
    CHECK(mkdtemp(dir) != NULL);
    for (int i = 0; i < NFILES; i++) {
        snprintf(path[i], sizeof path[i], "%s/lib%d.so", dir, i);
        FILE *f = fopen(path[i], "w");
        CHECK(f != NULL && fputs("x", f) >= 0 && fclose(f) == 0);
        int fd = open(path[i], O_RDONLY);
        at[i] = fd >= 0 ? mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        CHECK(at[i] != MAP_FAILED);
        if (fd >= 0)
            close(fd);
    }
    int32_t self = (int32_t)getpid();
    CHECK_INT(pm_new(&m, 0, false), 0);
    CHECK_INT(pm_watch(m, self, true, false), 0); /* our mappings, the twelve files among them */
    const pm_proc_t *p = proc(self);
    uint64_t t = 1 * MS, own = (uint64_t)(uintptr_t)&fault_sample;
    for (int i = 0; i < NFILES; i++)
        if (at[i] != MAP_FAILED)
            fault_sample(self, t++, (uint64_t)(uintptr_t)at[i] + 8);
    for (int k = 0; k < 50; k++)
        fault_sample(self, t++, own);
    const char *exe = pm_file_at(m, p, own);
    CHECK(exe[0] == '/');
    uint64_t mine = 0, sum = 0, most_other = 0;
    for (size_t i = 0; i < p->fault_libs.n; i++) {
        const pm_lib_t *l = &p->fault_libs.v[i];
        sum += l->samples;
        if (!strcmp(pm_lib_name(m, l->name), exe))
            mine = l->samples;
        else if (l->samples > most_other)
            most_other = l->samples;
    }
    CHECK_U64(mine, 50);
    CHECK_U64(most_other, 1);
    CHECK_U64(sum, NFILES + 50);
    CHECK_U64(p->fault_libs.n, NFILES + 1);
    CHECK_U64(p->at[PR_AT_FAULT], NFILES + 50);
    pm_free(m);
    for (int i = 0; i < NFILES; i++) {
        if (at[i] != MAP_FAILED)
            munmap(at[i], 4096);
        unlink(path[i]);
    }
    rmdir(dir);
}

/* Past its cap the model adds no page: a process that gives back empty gigabytes over and
 * over (munmap of nothing succeeds) costs it no memory, the bytes are counted as untracked,
 * and a page it held before the cap is still followed to its re-fault. */
static void check_cap(void)
{
    CHECK_INT(pm_new(&m, 0, false), 0);
    pm_limit(m, 4u << 20);
    CHECK_INT(pm_watch(m, PID, false, false), 0);
    const pm_proc_t *p = proc(PID);
    uint64_t a = 0x10000000;
    fault(1 * MS, a);
    const uint64_t calls = 200, gib = 1ull << 30;
    for (uint64_t i = 0; i < calls; i++)
        call((2 + i) * MS, PR_SYS_MUNMAP, 0x200000000000ull + i * gib, gib, 0, 0, 0);
    CHECK(pm_capped(m));
    CHECK(pm_bytes(m) <= (4u << 20));
    CHECK_U64(p->calls[PR_SYS_MUNMAP], calls);
    CHECK_U64(p->bytes[PR_SYS_MUNMAP], calls * gib);
    /* what was not tracked page by page is counted: most of the 200 GiB (4 MiB of map holds
     * far less than a GiB of pages) */
    CHECK(p->untracked_bytes > (calls - 2) * gib && p->untracked_bytes <= calls * gib);
    call(300 * MS, PR_SYS_MADVISE, a, 4096, MADV_DONTNEED, 0, 0); /* a page held before the cap */
    fault(301 * MS, a);
    CHECK_U64(p->cls[PM_REFAULT], 1);
    /* a MAP_FIXED over empty gigabytes looks at the chunks the model holds only */
    for (uint64_t i = 0; i < 50; i++)
        call((400 + i) * MS, PR_SYS_MMAP, 0x300000000000ull + i * gib, gib, 0, 0, 0);
    CHECK(pm_bytes(m) <= (4u << 20));
    pm_free(m);
}

/* A process with 25,000 file mappings (ours, one page of a file at every other page of a
 * reserved range: 50,000 mappings with the gaps), read at attach, then cut by 20,000 munmaps
 * of random ranges (binary search, one move per call): every probe answers as a plain page
 * array does. */
static void check_many_maps(void)
{
    enum { N = 25000, CUTS = 20000, PROBES = 20000 };
    char path[] = "/tmp/test_pagemodel_maps_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && ftruncate(fd, 4096) == 0);
    uint8_t *res = mmap(NULL, (size_t)2 * N * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t *truth = calloc((size_t)2 * N, 1); /* per page of the range: 1 = the file is mapped there */
    CHECK(res != MAP_FAILED && truth != NULL);
    if (fd < 0 || res == MAP_FAILED || !truth)
        return;
    size_t made = 0;
    for (size_t i = 0; i < N; i++)
        if (mmap(res + 2 * i * 4096, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED)
            truth[2 * i] = 1, made++;
    CHECK(made == N);
    CHECK_INT(pm_new(&m, 0, false), 0);
    int32_t self = (int32_t)getpid();
    CHECK_INT(pm_watch(m, self, true, false), 0);
    const pm_proc_t *p = proc(self);
    const uint64_t base = (uint64_t)(uintptr_t)res;
    uint64_t x = 88172645463325252ull;
    pr_rec_t r;
    for (int c = 0; c < CUTS; c++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t lo = x % (2 * N), len = 1 + (x >> 32) % 5;
        memset(&r, 0, sizeof r);
        r.kind = PR_ENTER, r.pid = r.tid = self, r.time = (10 + (uint64_t)c) * MS, r.sys = PR_SYS_MUNMAP;
        r.a[0] = base + lo * 4096, r.a[1] = len * 4096;
        pm_feed(m, &r);
        memset(&r, 0, sizeof r);
        r.kind = PR_EXIT, r.pid = r.tid = self, r.time = (10 + (uint64_t)c) * MS + 1, r.sys = PR_SYS_MUNMAP;
        pm_feed(m, &r);
        for (uint64_t q = lo; q < lo + len && q < 2 * N; q++)
            truth[q] = 0;
    }
    int wrong = 0;
    for (int k = 0; k < PROBES; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t q = x % (2 * N);
        bool mapped = strstr(pm_file_at(m, p, base + q * 4096 + 100), "test_pagemodel_maps_") != NULL;
        wrong += mapped != (truth[q] != 0);
    }
    CHECK_INT(wrong, 0);
    pm_free(m);
    munmap(res, (size_t)2 * N * 4096);
    close(fd);
    unlink(path);
    free(truth);
}

/* Records past the deadline, or 0.1 s after a stop signal, are dropped, not taken. */
static void check_stop(void)
{
    CHECK_INT(pm_new(&m, 0, false), 0);
    CHECK_INT(pm_watch(m, PID, false, false), 0);
    const pm_proc_t *p = proc(PID);
    pm_stop_when(m, NULL, 1); /* long past */
    for (uint64_t i = 0; i < 100; i++)
        fault((1 + i) * MS, 0x10000000 + i * 4096);
    CHECK_U64(p->faults, 0);
    CHECK_U64(pm_dropped(m), 100);
    pm_free(m);

    volatile sig_atomic_t flag = 0;
    CHECK_INT(pm_new(&m, 0, false), 0);
    CHECK_INT(pm_watch(m, PID, false, false), 0);
    p = proc(PID);
    pm_stop_when(m, &flag, 0);
    for (uint64_t i = 0; i < 1000; i++)
        fault((1 + i) * MS, 0x10000000 + i * 4096);
    CHECK_U64(p->faults, 1000); /* no signal: every record taken */
    flag = 1;
    for (uint64_t i = 0; i < 1000; i++) /* within the grace (a loaded machine may pass it: >= 256 taken) */
        fault((2000 + i) * MS, 0x20000000 + i * 4096);
    CHECK(p->faults >= 1256);
    uint64_t taken = p->faults;
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
    for (uint64_t i = 0; i < 1000; i++)
        fault((4000 + i) * MS, 0x30000000 + i * 4096);
    CHECK(p->faults <= taken + 256); /* noticed at the next check, every 256 records */
    CHECK(pm_dropped(m) >= 1000 - 256);
    pm_free(m);
}

/* One process, its children not followed: each kind of fault from the page's history, failed calls
 * dropped, a shrinking brk, copy-on-write after a fork; the kinds sum to the faults. */
static void check_one_process(uint64_t a)
{
    CHECK_INT(pm_new(&m, 0, false), 0);
    CHECK_INT(pm_watch(m, PID, false, false), 0);
    const pm_proc_t *p = proc(PID); /* no mappings known: every page anonymous */
    CHECK(p != NULL);

    fault(1 * MS, a);                                            /* first touch */
    call(2 * MS, PR_SYS_MADVISE, a, 4096, MADV_DONTNEED, 0, 0);  /* given back by the program */
    fault(7 * MS, a);                                            /* re-fault, <10 ms */
    fault(8 * MS, a);                                            /* the zero page written: with it */
    fault(9 * MS, a);                                            /* a later fault: other */
    CHECK_U64(p->cls[PM_FIRST], 1);
    CHECK_U64(p->cls[PM_REFAULT], 2);
    CHECK_U64(p->age[0], 2);
    CHECK_U64(p->refault_pages, 1);
    CHECK_U64(p->refault_by[PM_BY_MADVISE], 2);
    CHECK_U64(p->alloc_refault_by[PM_BY_MADVISE], 0); /* no code known made the call: not the allocator's */
    CHECK_U64(p->cls[PM_OTHER], 1);
    CHECK_U64(p->calls[PR_SYS_MADVISE], 1);

    /* a failed call gives nothing back */
    call(10 * MS, PR_SYS_MADVISE, a, 4096, MADV_DONTNEED, 0, -22);
    fault(11 * MS, a);
    CHECK_U64(p->failed, 1);
    CHECK_U64(p->cls[PM_REFAULT], 2);
    CHECK_U64(p->cls[PM_OTHER], 2);

    /* ages: 50 ms and 2 s after a munmap */
    uint64_t b = 0x200000;
    fault(12 * MS, b);
    fault(12 * MS, b + 4096);
    call(20 * MS, PR_SYS_MUNMAP, b, 8192, 0, 0, 0);
    fault(70 * MS, b);
    fault(2020 * MS, b + 4096);
    CHECK_U64(p->age[1], 1);
    CHECK_U64(p->age[3], 1);
    CHECK_U64(p->refault_by[PM_BY_MUNMAP], 2);

    /* MADV_FREE: lazily freed; a fault there after the kernel reclaimed it */
    uint64_t c = 0x300000;
    fault(3000 * MS, c);
    call(3001 * MS, PR_SYS_MADVISE, c, 4096, MADV_FREE, 0, 0);
    fault(3002 * MS, c);
    CHECK_U64(p->lazy_bytes, 4096);
    CHECK_U64(p->cls[PM_LAZY], 1);

    /* brk: the first call tells the break, a smaller one gives the difference back */
    uint64_t brk0 = 0x400000;
    call(3100 * MS, PR_SYS_BRK, 0, 0, 0, 0, (int64_t)(brk0 + 3 * 4096));
    fault(3101 * MS, brk0 + 2 * 4096);
    call(3102 * MS, PR_SYS_BRK, brk0 + 4096, 0, 0, 0, (int64_t)(brk0 + 4096));
    fault(3103 * MS, brk0 + 2 * 4096);
    CHECK_U64(p->calls[PR_SYS_BRK], 1);
    CHECK_U64(p->bytes[PR_SYS_BRK], 2 * 4096);
    CHECK_U64(p->refault_by[PM_BY_BRK], 1);

    /* a fork: the parent's writes to pages it had touched are copy-on-write (children not followed) */
    pr_rec_t f;
    memset(&f, 0, sizeof f);
    f.kind = PR_FORK, f.pid = 101, f.tid = 101, f.time = 3200 * MS, f.a[0] = PID, f.a[1] = PID;
    pm_feed(m, &f);
    fault(3201 * MS, b);
    CHECK_U64(p->cls[PM_COW], 1);
    CHECK(proc(101) == NULL);

    /* every kind sums to the faults */
    uint64_t sum = 0;
    for (int k = 0; k < PM_NCLASS; k++)
        sum += p->cls[k];
    CHECK_U64(sum, p->faults);
    pm_free(m);
}

/* followed children: their first writes to what the parent had touched are copy-on-write,
 * even after the parent wrote the page again; the allocator's calls told by their code */
static void check_followed_children(uint64_t a)
{
    CHECK_INT(pm_new(&m, 0, true), 0);
    CHECK_INT(pm_watch(m, PID, false, false), 0);
    const pm_proc_t *p = proc(PID);
    pr_rec_t f;
    memset(&f, 0, sizeof f);
    f.kind = PR_MMAP, f.pid = PID, f.tid = PID, f.time = 1, f.a[0] = LIBC_LO, f.a[1] = 0x200000;
    pm_feed(m, &f); /* no name: an anonymous mapping, which leaves nothing mapped there */
    fault(1 * MS, a);
    memset(&f, 0, sizeof f);
    f.kind = PR_FORK, f.pid = 101, f.tid = 101, f.time = 2 * MS, f.a[0] = PID, f.a[1] = PID;
    pm_feed(m, &f);
    fault(3 * MS, a); /* the parent first: copy-on-write */
    rec(PR_FAULT, 101, 4 * MS, 0, a, 0, 0);
    rec(PR_FAULT, 101, 5 * MS, 0, a + 4096, 0, 0); /* a page the parent never had */
    const pm_proc_t *kid = proc(101);
    CHECK(kid != NULL && kid->forked_child);
    if (kid) {
        CHECK_U64(kid->cls[PM_COW], 1);
        CHECK_U64(kid->cls[PM_FIRST], 1);
    }
    CHECK_U64(p->cls[PM_COW], 1);

    pm_finish(m, 20 * MS);
    CHECK(p->end_t >= p->start_t);
    pm_free(m);
}

/* our own mappings (a running process's, from /proc): a call made from libc's code is the
 * allocator's; munmap splitting libc's mapping again and again, each split one more entry */
static void check_own_mappings(uint64_t a)
{
    uint64_t lo = 0, hi = 0;
    char line[512];
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(line, sizeof line, maps) && !lo) {
        unsigned long long l, h;
        if (strstr(line, "/libc.so") && sscanf(line, "%llx-%llx", &l, &h) == 2 && h - l >= 128 * 4096)
            lo = l, hi = h;
    }
    if (maps)
        fclose(maps);
    CHECK(lo != 0);
    CHECK_INT(pm_new(&m, 0, false), 0);
    int32_t self = (int32_t)getpid();
    CHECK_INT(pm_watch(m, self, true, false), 0);
    const pm_proc_t *p = proc(self);
    CHECK(strstr(pm_file_at(m, p, lo), "/libc.so") != NULL);
    pr_rec_t r;
    memset(&r, 0, sizeof r);
    r.kind = PR_ENTER, r.pid = r.tid = self, r.time = 1 * MS, r.sys = PR_SYS_MADVISE;
    r.a[0] = a, r.a[1] = 4096, r.a[2] = MADV_DONTNEED, r.a[6] = lo + 64; /* made from libc's code */
    pm_feed(m, &r);
    memset(&r, 0, sizeof r);
    r.kind = PR_EXIT, r.pid = r.tid = self, r.time = 2 * MS, r.sys = PR_SYS_MADVISE;
    pm_feed(m, &r);
    CHECK_U64(p->alloc_calls[PR_SYS_MADVISE], 1);
    memset(&r, 0, sizeof r);
    r.kind = PR_FAULT, r.pid = r.tid = self, r.time = 3 * MS, r.a[0] = a;
    pm_feed(m, &r);
    CHECK_U64(p->alloc_refault_by[PM_BY_MADVISE], 1);
    size_t before = p->nmaps, splits = 0;
    for (uint64_t i = 0; i < 200 && lo + (2 * i + 2) * 4096 < hi; i++, splits++) {
        memset(&r, 0, sizeof r);
        r.kind = PR_ENTER, r.pid = r.tid = self, r.time = (10 + i) * MS, r.sys = PR_SYS_MUNMAP;
        r.a[0] = lo + (2 * i + 1) * 4096, r.a[1] = 4096;
        pm_feed(m, &r);
        memset(&r, 0, sizeof r);
        r.kind = PR_EXIT, r.pid = r.tid = self, r.time = (10 + i) * MS + 1, r.sys = PR_SYS_MUNMAP;
        pm_feed(m, &r);
    }
    CHECK(splits >= 60 && p->nmaps == before + splits);
    CHECK(strstr(pm_file_at(m, p, lo), "/libc.so") != NULL);
    CHECK_STR(pm_file_at(m, p, lo + 4096), ""); /* a hole where munmap cut */
    CHECK(strstr(pm_file_at(m, p, lo + 2 * 4096), "/libc.so") != NULL);
    pm_free(m);
}

int main(void)
{
    uint64_t a = 0x100000; /* a page each of the next three checks faults */

    check_one_process(a);
    check_followed_children(a);
    check_own_mappings(a);
    check_blame();
    check_cap();
    check_many_maps();
    check_stop();
    return check_failures ? 1 : 0;
}
