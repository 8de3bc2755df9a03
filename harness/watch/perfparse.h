/* perfparse.h - perf ring-buffer records, parsed into pr_rec_t (what perfring hands on): the samples of
 * a CPU's events (page faults, cpu-clock with its call chain, the syscall tracepoints with
 * their raw payload, user registers and stack word), mmap2, comm, fork, exit, lost and
 * throttle records.  Pure: bytes in, records out through a callback, no descriptor or file,
 * so that perfring's reader, tests/unit/test_perfring.c and tests/fuzz/fuzz_perfring.c call
 * the same code.  The records are laid out as perfring.c's attributes ask (sample_id_all;
 * sample_type IDENTIFIER, TID, TIME, CPU, and ADDR, IP and CALLCHAIN, or RAW, REGS_USER and
 * STACK_USER by event); bytes of any other shape are never read past the record's size. */
#ifndef MB_PERFPARSE_H
#define MB_PERFPARSE_H
#include "strpool.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PR_USER_IPS 4               /* user addresses kept from a cpu-clock sample's chain */

typedef enum {
    PR_FAULT,       /* a[0] the address */
    PR_MAJOR,       /* a[0] the address */
    PR_ENTER,       /* sys; a[0..5] the arguments; a[6] the user ip, a[7] the word at the
                     * user stack's top (a leaf syscall wrapper's return address) */
    PR_EXIT,        /* sys; a[0] the result */
    PR_CPU,         /* at; a[0..3] user addresses, innermost first (0: none) */
    PR_COMM,        /* name; sys 1: the comm of an exec */
    PR_FORK,        /* a[0] parent pid, a[1] parent tid */
    PR_GONE,        /* a thread ended */
    PR_MMAP,        /* a[0] addr, a[1] len, a[2] pgoff, a[3] prot, a[4] flags; name */
} pr_kind_t;

typedef enum { PR_SYS_MADVISE, PR_SYS_MUNMAP, PR_SYS_BRK, PR_SYS_MREMAP, PR_SYS_MMAP, PR_NSYS } pr_sys_t;

/* Where a cpu-clock sample found the CPU. */
typedef enum {
    PR_AT_USER,     /* in user space */
    PR_AT_KERNEL,   /* in the kernel, none of the below */
    PR_AT_FAULT,    /* under the page-fault entry */
    PR_AT_GIVEBACK, /* under one of the give-back calls (sys says which) */
    PR_AT_TLB,      /* a TLB-flush IPI (another CPU changed a shared mm) */
    PR_NAT
} pr_at_t;

typedef struct {
    uint64_t time;      /* CLOCK_MONOTONIC, ns */
    int32_t pid, tid;
    uint8_t kind, sys, at, pad;
    uint32_t cpu;
    uint64_t a[8];
    uint32_t name;      /* COMM, MMAP: pr_name()'s handle; 0 none */
} pr_rec_t;

/* Which processes' records to keep (the rest are dropped as they are read):
 * want(ctx, pid).  A cpu-clock sample of another process is kept only when
 * it is a TLB-flush IPI; another process's give-back calls are only counted. */
typedef bool (*pr_want_fn)(void *ctx, int32_t pid);

typedef struct {
    uint64_t records, lost, throttled;  /* read; lost (PERF_RECORD_LOST); throttle records */
    uint64_t other_calls[PR_NSYS];      /* give-back calls entered by processes not kept */
    unsigned ncpus;
    bool ksyms;                         /* /proc/kallsyms was readable: cpu samples classified */
} pr_stats_t;

/* The events of one CPU, in this order (their ids in pr_parse's ids[]): minor and major
 * faults, cpu-clock, then the enter and exit tracepoint of each pr_sys_t. */
enum { PR_EV_FAULT, PR_EV_MAJOR, PR_EV_CPU, PR_EV_TP0 };
#define PR_NTP (2 * PR_NSYS)
#define PR_NEV (PR_EV_TP0 + PR_NTP)
#define PR_MAX_ARGS 6 /* a tracepoint's fields read past the common ones */

/* A kernel function a cpu-clock sample is classified by: [lo, hi) its text (0, 0: unknown). */
typedef struct {
    const char *name;
    uint8_t at, sys;    /* pr_at_t; the pr_sys_t of a give-back call */
    uint64_t lo, hi;
} pr_ksym_t;

/* What the parser knows of the events, and where what it reads goes. */
typedef struct {
    const uint16_t (*arg_off)[PR_MAX_ARGS]; /* PR_NTP rows: each tracepoint's field offsets in its raw data */
    const uint8_t *nargs;                   /* PR_NTP: how many of them */
    const pr_ksym_t *ksyms;
    size_t nksyms;
    pr_want_fn want;                        /* which processes' records to keep */
    void *want_ctx;
    void (*emit)(void *ctx, const pr_rec_t *r); /* each record kept, in the order read */
    void *emit_ctx;
    strpool_t *names;                       /* comms and mapped files: pr_rec_t.name's handles */
    pr_stats_t *st;                         /* records, lost, throttled, other_calls: added to */
} pr_parser_t;

/* Parses the records in buf[0..len), one after another by their headers' sizes, as they came
 * from the ring of the CPU whose events have the kernel's ids ids[PR_NEV].  buf 8-byte aligned,
 * as the kernel writes records.  Returns the bytes read: short of len where the next record is
 * cut (its header, or its size past len) or malformed (a size under a header's, or not a
 * multiple of 8); that one is left unread and uncounted. */
size_t pr_parse(const pr_parser_t *p, const uint64_t *ids, const void *buf, size_t len);

#endif
