/* test_perfring.c - diagnose's perf record parser (harness/watch/perfparse.c, what perfring
 * reads its rings with) on records built by hand, laid out as the kernel writes them for
 * perfring's events, no perf and no root: page-fault samples, syscall enters (arguments from
 * the tracepoint's raw data, the user ip and stack word) and exits, cpu-clock samples placed by
 * their kernel chain, comm, fork, exit, mmap2, lost and throttle records; records of processes
 * not kept dropped (another's give-back calls counted); and bytes the kernel never writes --
 * a record cut short, a size of 0 or not a multiple of 8, a chain or raw size longer than its
 * record -- never read past (the sanitizer build checks that each record is read inside its
 * exact-size buffer). */
#include "check.h"
#include "perfparse.h"

#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KEPT 100   /* a process kept */
#define KEPT2 101
#define OTHER 200  /* one that is not */
#define ID(e) (5000u + (unsigned)(e))
#define KBASE 0xffffffff81000000ull

static uint64_t ids[PR_NEV];
static uint16_t arg_off[PR_NTP][PR_MAX_ARGS];
static uint8_t nargs[PR_NTP];
static const pr_ksym_t ksyms[] = {
    {"exc_page_fault", PR_AT_FAULT, 0, KBASE, KBASE + 0x100},
    {"__x64_sys_madvise", PR_AT_GIVEBACK, PR_SYS_MADVISE, KBASE + 0x100, KBASE + 0x200},
    {"__vm_munmap", PR_AT_GIVEBACK, PR_SYS_MUNMAP, KBASE + 0x200, KBASE + 0x300},
    {"flush_tlb_func", PR_AT_TLB, 0, KBASE + 0x300, KBASE + 0x400},
};

static pr_rec_t got[64];
static size_t ngot;
static strpool_t names;
static pr_stats_t st;

static bool want(void *ctx, int32_t pid)
{
    (void)ctx;
    return pid == KEPT || pid == KEPT2;
}

static void emit(void *ctx, const pr_rec_t *r)
{
    (void)ctx;
    if (ngot < sizeof got / sizeof got[0])
        got[ngot++] = *r;
}

static const pr_parser_t parser = {
    .arg_off = (const uint16_t (*)[PR_MAX_ARGS])arg_off, .nargs = nargs, .ksyms = ksyms,
    .nksyms = sizeof ksyms / sizeof ksyms[0], .want = want, .emit = emit, .names = &names, .st = &st};

/* The records being built, 8-byte words as in a ring. */
static uint64_t w[1024];
static size_t nw, open_at;

static void put(uint64_t v)
{
    w[nw++] = v;
}

static void put2(uint32_t lo, uint32_t hi)
{
    put((uint64_t)lo | (uint64_t)hi << 32);
}

/* Bytes as whole words, zero padded (a comm, a file name, raw data). */
static void put_bytes(const void *b, size_t n)
{
    size_t words = (n + 7) / 8;
    memset(w + nw, 0, words * 8);
    memcpy(w + nw, b, n);
    nw += words;
}

static void begin(uint32_t type, uint16_t misc)
{
    open_at = nw;
    put(0);
    struct perf_event_header h = {.type = type, .misc = misc, .size = 0};
    memcpy(w + open_at, &h, sizeof h);
}

static void end(void)
{
    struct perf_event_header h;
    memcpy(&h, w + open_at, sizeof h);
    h.size = (uint16_t)((nw - open_at) * 8);
    memcpy(w + open_at, &h, sizeof h);
}

static void set_size(size_t at, uint16_t size)
{
    struct perf_event_header h;
    memcpy(&h, w + at, sizeof h);
    h.size = size;
    memcpy(w + at, &h, sizeof h);
}

/* sample_id_all's trailer: pid/tid, time, cpu, identifier. */
static void trailer(int32_t pid, uint64_t time, uint32_t cpu)
{
    put2((uint32_t)pid, (uint32_t)pid + 1);
    put(time);
    put(cpu);
    put(ID(PR_EV_FAULT));
}

static void fault(int e, int32_t pid, uint64_t time, uint64_t addr)
{
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(e));
    put2((uint32_t)pid, (uint32_t)pid + 7); /* tid */
    put(time);
    put(addr);
    put(3); /* cpu */
    end();
}

/* A syscall tracepoint t (2 x sys + exit): raw {size, 8 common bytes, nr, fields}, and for an
 * enter regs_user {abi, sp, ip} and stack_user {8, the word, dyn_size}. */
static void call(int t, int32_t pid, uint64_t time, const uint64_t *f, int nf, uint64_t ip, uint64_t top)
{
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_TP0 + t));
    put2((uint32_t)pid, (uint32_t)pid);
    put(time);
    put(1); /* cpu */
    unsigned char raw[4 + 16 + 8 * 8] = {0};
    uint32_t size = 16 + 8 * (uint32_t)nf + 4; /* 4 + size a multiple of 8, as the kernel pads it */
    memcpy(raw, &size, 4);
    memcpy(raw + 4 + 8, &(uint64_t){28}, 8); /* __syscall_nr */
    for (int k = 0; k < nf; k++)
        memcpy(raw + 4 + 16 + 8 * k, &f[k], 8);
    put_bytes(raw, 4 + size);
    if (!(t & 1)) {
        put(ip ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE);
        if (ip) {
            put(0x7ffc0000); /* sp */
            put(ip);
            put(8);
            put(top);
            put(8);
        }
    }
    end();
}

static void cpu_sample(int32_t pid, uint64_t time, uint64_t ip, const uint64_t *chain, uint64_t nr)
{
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_CPU));
    put(ip);
    put2((uint32_t)pid, (uint32_t)pid);
    put(time);
    put(2);
    put(nr);
    for (uint64_t i = 0; i < nr; i++)
        put(chain[i]);
    end();
}

static void reset(void)
{
    nw = 0, ngot = 0;
    memset(&st, 0, sizeof st);
}

/* The records built, parsed from a buffer of exactly their size: bytes read. */
static size_t parse_built(void)
{
    size_t len = nw * 8;
    void *b = malloc(len ? len : 8);
    memcpy(b, w, len);
    size_t n = pr_parse(&parser, ids, b, len);
    free(b);
    return n;
}

static void test_faults(void)
{
    reset();
    fault(PR_EV_FAULT, KEPT, 1000, 0x7f0000001234ull);
    fault(PR_EV_MAJOR, KEPT2, 1001, 0x5000);
    fault(PR_EV_FAULT, OTHER, 1002, 0x6000);  /* not kept */
    fault(PR_EV_FAULT, KEPT, 1003, 0x7000);
    w[nw - 5] = 999;                          /* an id of none of this CPU's events */
    CHECK_U64(parse_built(), nw * 8);
    CHECK_U64(st.records, 4);
    CHECK_U64(ngot, 2);
    CHECK_INT(got[0].kind, PR_FAULT);
    CHECK_INT(got[0].pid, KEPT);
    CHECK_INT(got[0].tid, KEPT + 7);
    CHECK_U64(got[0].time, 1000);
    CHECK_U64(got[0].a[0], 0x7f0000001234ull);
    CHECK_U64(got[0].cpu, 3);
    CHECK_INT(got[1].kind, PR_MAJOR);
    CHECK_INT(got[1].pid, KEPT2);
    CHECK_U64(got[1].a[0], 0x5000);
}

static void test_calls(void)
{
    reset();
    const uint64_t madv[3] = {0x7f0000000000ull, 1ull << 21, 4 /* MADV_DONTNEED */};
    call(2 * PR_SYS_MADVISE, KEPT, 2000, madv, 3, 0x7f1234500000ull, 0x7f1234600000ull);
    call(2 * PR_SYS_MADVISE + 1, KEPT, 2001, (const uint64_t[]){0}, 1, 0, 0);
    call(2 * PR_SYS_MUNMAP, OTHER, 2002, madv, 2, 0x1000, 0);     /* counted, not kept */
    call(2 * PR_SYS_MUNMAP + 1, OTHER, 2003, (const uint64_t[]){0}, 1, 0, 0);
    call(2 * PR_SYS_MUNMAP + 1, OTHER, 2003, (const uint64_t[]){0}, 1, 0, 0); /* exits: not counted */
    call(2 * PR_SYS_MUNMAP, KEPT, 2004, madv, 1, 0, 0);          /* no user registers; one field */
    call(2 * PR_SYS_MMAP + 1, KEPT, 2005, (const uint64_t[]){(uint64_t)-12}, 1, 0, 0);
    CHECK_U64(parse_built(), nw * 8);
    CHECK_U64(st.records, 7);
    CHECK_U64(st.other_calls[PR_SYS_MUNMAP], 1);
    CHECK_U64(st.other_calls[PR_SYS_MADVISE], 0);
    CHECK_U64(ngot, 4);
    CHECK_INT(got[0].kind, PR_ENTER);
    CHECK_INT(got[0].sys, PR_SYS_MADVISE);
    CHECK_U64(got[0].a[0], madv[0]);
    CHECK_U64(got[0].a[1], madv[1]);
    CHECK_U64(got[0].a[2], madv[2]);
    CHECK_U64(got[0].a[6], 0x7f1234500000ull);
    CHECK_U64(got[0].a[7], 0x7f1234600000ull);
    CHECK_INT(got[1].kind, PR_EXIT);
    CHECK_INT(got[1].sys, PR_SYS_MADVISE);
    CHECK_U64(got[1].a[0], 0);
    CHECK_INT(got[2].kind, PR_ENTER);
    CHECK_INT(got[2].sys, PR_SYS_MUNMAP);
    CHECK_U64(got[2].a[0], madv[0]);
    CHECK_U64(got[2].a[1], 0); /* past the raw data's size: not read */
    CHECK_U64(got[2].a[6], 0);
    CHECK_U64(got[2].a[7], 0);
    CHECK_INT(got[3].kind, PR_EXIT);
    CHECK_INT(got[3].sys, PR_SYS_MMAP);
    CHECK_U64(got[3].a[0], (uint64_t)-12);
}

static void test_cpu(void)
{
    reset();
    const uint64_t user = PERF_CONTEXT_USER, kernel = PERF_CONTEXT_KERNEL;
    /* under madvise and the fault entry, five user frames (four kept) */
    cpu_sample(KEPT, 3000, KBASE + 0x10,
               (const uint64_t[]){kernel, KBASE + 0x10, KBASE + 0x150, user, 11, 12, 13, 14, 15}, 9);
    cpu_sample(KEPT, 3001, KBASE + 0x10, (const uint64_t[]){kernel, KBASE + 0x10, user, 21}, 4);
    cpu_sample(OTHER, 3002, KBASE + 0x310, (const uint64_t[]){kernel, KBASE + 0x310}, 2); /* an IPI: kept */
    cpu_sample(OTHER, 3003, KBASE + 0x10, (const uint64_t[]){kernel, KBASE + 0x10}, 2);   /* dropped */
    cpu_sample(KEPT, 3004, 0x401000, NULL, 0);                       /* no chain: by its ip */
    cpu_sample(KEPT, 3005, KBASE + 0x900, NULL, 0);
    cpu_sample(KEPT, 3006, 0x401000, (const uint64_t[]){kernel, KBASE + 0x900}, 2); /* ip in user space */
    cpu_sample(KEPT, 3007, KBASE + 0x250, (const uint64_t[]){kernel, KBASE + 0x250, KBASE + 0x20}, 3);
    CHECK_U64(parse_built(), nw * 8);
    CHECK_U64(ngot, 7);
    CHECK_INT(got[0].kind, PR_CPU);
    CHECK_INT(got[0].at, PR_AT_GIVEBACK);
    CHECK_INT(got[0].sys, PR_SYS_MADVISE);
    CHECK_U64(got[0].a[0], 11);
    CHECK_U64(got[0].a[3], 14);
    CHECK_U64(got[0].a[4], 0);
    CHECK_INT(got[1].at, PR_AT_FAULT);
    CHECK_U64(got[1].a[0], 21);
    CHECK_INT(got[2].at, PR_AT_TLB);
    CHECK_INT(got[2].pid, OTHER);
    CHECK_INT(got[3].at, PR_AT_USER);
    CHECK_INT(got[4].at, PR_AT_KERNEL);
    CHECK_INT(got[5].at, PR_AT_USER);
    CHECK_INT(got[6].at, PR_AT_GIVEBACK); /* a give-back call over the fault entry */
    CHECK_INT(got[6].sys, PR_SYS_MUNMAP);
    CHECK_U64(got[6].time, 3007);
}

static void test_task_records(void)
{
    reset();
    begin(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
    put2(KEPT, KEPT + 1);
    put_bytes("prog\0\0\0\0\0\0\0\0\0\0\0", 16);
    trailer(KEPT, 4000, 5);
    end();
    begin(PERF_RECORD_COMM, 0);
    put2(OTHER, OTHER);
    put_bytes("other\0\0\0\0\0\0\0\0\0\0", 16);
    trailer(OTHER, 4001, 5);
    end();
    begin(PERF_RECORD_FORK, 0); /* a child of a kept process: kept */
    put2(300, KEPT);            /* pid, ppid */
    put2(301, KEPT + 1);        /* tid, ptid */
    put(4002);
    trailer(KEPT, 4099, 5);
    end();
    begin(PERF_RECORD_EXIT, 0);
    put2(KEPT2, KEPT2);
    put2(KEPT2 + 3, KEPT2);
    put(4003);
    trailer(KEPT2, 4098, 5);
    end();
    begin(PERF_RECORD_MMAP2, 0);
    put2(KEPT, KEPT);
    put(0x7f0000100000ull), put(0x21000), put(0x3000); /* addr, len, pgoff */
    put2(8, 1), put(123456), put(1);                     /* maj, min, ino, ino_generation */
    put2(5 /* PROT_READ|PROT_EXEC */, 2 /* MAP_PRIVATE */);
    put_bytes("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", 43);
    trailer(KEPT, 4004, 5);
    end();
    begin(PERF_RECORD_MMAP2, 0);
    put2(KEPT, KEPT);
    put(0x10000), put(0x1000), put(0), put(0), put(0), put(0);
    put2(3, 0x22);
    put_bytes("//anon", 7);
    trailer(KEPT, 4005, 5);
    end();
    begin(PERF_RECORD_LOST, 0);
    put(ID(PR_EV_FAULT)), put(17);
    trailer(KEPT, 4006, 5);
    end();
    begin(PERF_RECORD_THROTTLE, 0);
    put(4007), put(ID(PR_EV_FAULT)), put(0);
    trailer(KEPT, 4007, 5);
    end();
    CHECK_U64(parse_built(), nw * 8);
    CHECK_U64(st.records, 8);
    CHECK_U64(st.lost, 17);
    CHECK_U64(st.throttled, 1);
    CHECK_U64(ngot, 5);
    CHECK_INT(got[0].kind, PR_COMM);
    CHECK_INT(got[0].pid, KEPT);
    CHECK_INT(got[0].tid, KEPT + 1);
    CHECK_INT(got[0].sys, 1);
    CHECK_U64(got[0].time, 4000);
    CHECK_U64(got[0].cpu, 5);
    CHECK_STR(strpool_get(&names, got[0].name), "prog");
    CHECK_INT(got[1].kind, PR_FORK);
    CHECK_INT(got[1].pid, 300);
    CHECK_INT(got[1].tid, 301);
    CHECK_U64(got[1].a[0], KEPT);
    CHECK_U64(got[1].a[1], KEPT + 1);
    CHECK_U64(got[1].time, 4002); /* the record's own time, not the trailer's */
    CHECK_INT(got[2].kind, PR_GONE);
    CHECK_INT(got[2].pid, KEPT2);
    CHECK_INT(got[2].tid, KEPT2 + 3);
    CHECK_INT(got[3].kind, PR_MMAP);
    CHECK_U64(got[3].a[0], 0x7f0000100000ull);
    CHECK_U64(got[3].a[1], 0x21000);
    CHECK_U64(got[3].a[2], 0x3000);
    CHECK_U64(got[3].a[3], 5);
    CHECK_U64(got[3].a[4], 2);
    CHECK_U64(got[3].time, 4004);
    CHECK_STR(strpool_get(&names, got[3].name), "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
    CHECK_INT(got[4].kind, PR_MMAP);
    CHECK_U64(got[4].name, 0);
    CHECK_U64(got[4].a[3], 3);
}

/* The record built, read whole and dropped; the next is built alone. */
static void dropped(void)
{
    size_t n = ngot;
    CHECK_U64(parse_built(), nw * 8);
    CHECK_U64(ngot, n);
    nw = 0;
}

/* Bytes the kernel never writes: each parsed from a buffer of its exact size. */
static void test_malformed(void)
{
    reset();
    fault(PR_EV_FAULT, KEPT, 1, 0x1000);
    size_t one = nw * 8;
    fault(PR_EV_FAULT, KEPT, 2, 0x2000);
    nw--; /* the second cut short by a word: its header says more than there is */
    CHECK_U64(parse_built(), one);
    CHECK_U64(st.records, 1);
    CHECK_U64(ngot, 1);

    reset();
    fault(PR_EV_FAULT, KEPT, 1, 0x1000);
    fault(PR_EV_FAULT, KEPT, 2, 0x2000);
    set_size(one / 8, 0); /* a size of 0: no endless loop */
    CHECK_U64(parse_built(), one);
    set_size(one / 8, 20); /* not a multiple of 8 */
    CHECK_U64(parse_built(), one);
    CHECK_U64(st.records, 2);
    /* a bare header: counted, nothing in it; the word after it read as a header of size 0 */
    set_size(one / 8, 8);
    CHECK_U64(parse_built(), one + 8);
    CHECK_U64(st.records, 4);
    CHECK_U64(ngot, 3);

    /* samples shorter than their event's fields: dropped, never read past (each alone in a
     * buffer of its size) */
    reset();
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_CPU)); /* a cpu-clock sample of its identifier alone */
    end();
    dropped();
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_FAULT)), put2(KEPT, KEPT), put(5), put(0x1000); /* no cpu */
    end();
    dropped();
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_CPU)), put(0x401000), put2(KEPT, KEPT), put(6), put(0);
    put(UINT64_MAX); /* a chain longer than anything */
    put(PERF_CONTEXT_KERNEL);
    end();
    dropped();
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_CPU)), put(0x401000), put2(KEPT, KEPT), put(6), put(0);
    put(2), put(PERF_CONTEXT_KERNEL); /* one word short */
    end();
    dropped();
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_TP0)), put2(KEPT, KEPT), put(7), put(0);
    put(0xfffffff0u); /* a raw size past the record */
    end();
    dropped();
    begin(PERF_RECORD_SAMPLE, 0);
    put(ID(PR_EV_TP0 + 1)), put2(KEPT, KEPT), put(7), put(0);
    put(29), put(0), put(0), put(0); /* a raw size one byte past the record (28 there) */
    end();
    dropped();
    begin(PERF_RECORD_COMM, 0); /* a comm too short for its fields and trailer */
    put2(KEPT, KEPT), put_bytes("prog\0\0\0", 8), put(0), put(1);
    end();
    dropped();
    begin(PERF_RECORD_MMAP2, 0); /* an mmap2 too short for its fields and trailer */
    put2(KEPT, KEPT), put(1), put(2), put(3), put(4), put(5), put(6), put(7), put(8);
    end();
    dropped();
    CHECK_U64(st.records, 8);
    CHECK_U64(ngot, 0);

    /* a buffer not 8-byte aligned is not read */
    reset();
    fault(PR_EV_FAULT, KEPT, 1, 0x1000);
    unsigned char *b = malloc(nw * 8 + 1);
    memcpy(b + 1, w, nw * 8);
    CHECK_U64(pr_parse(&parser, ids, b + 1, nw * 8), 0);
    CHECK_U64(st.records, 0);
    free(b);
    CHECK_U64(pr_parse(&parser, ids, w, 7), 0); /* under a header */
}

int main(void)
{
    for (int e = 0; e < PR_NEV; e++)
        ids[e] = ID(e);
    /* each call's fields past the 8 common bytes and the syscall number: at 16, 24, ... */
    for (int t = 0; t < PR_NTP; t++) {
        nargs[t] = (t & 1) ? 1 : PR_MAX_ARGS;
        for (int k = 0; k < nargs[t]; k++)
            arg_off[t][k] = (uint16_t)(16 + 8 * k);
    }
    strpool_init(&names);
    test_faults();
    test_calls();
    test_cpu();
    test_task_records();
    test_malformed();
    strpool_free(&names);
    CHECK_DONE();
}
