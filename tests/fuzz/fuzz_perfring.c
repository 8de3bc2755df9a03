/* fuzz_perfring.c - libFuzzer target: the input is the bytes of a perf ring, read as diagnose
 * reads each CPU's ring (pr_parse, harness/watch/perfparse.c), with the events' ids 1 to
 * PR_NEV (easy for the search to hit; tests/fuzz/perfring/ holds one record of each kind) and
 * the even pids kept.  Checks: no crash, leak or read past the input (the sanitizers); the
 * bytes read are a multiple of 8 within the input; every record handed on is of a known kind,
 * of a kept process unless it is a TLB-flush IPI or a fork from a kept parent, and names a
 * string the pool holds; no more records than the bytes read could carry.  Each record is then
 * parsed again alone, from a copy of its exact size (as perfring's reader hands over a record
 * that wraps the ring's end), so that a read past a record, not only past the input, is caught,
 * and the two readings must agree. */
#include "perfparse.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool want(void *ctx, int32_t pid)
{
    (void)ctx;
    return !(pid & 1);
}

typedef struct {
    strpool_t *names;
    size_t n;
} seen_t;

static void emit(void *ctx, const pr_rec_t *r)
{
    seen_t *s = ctx;
    s->n++;
    if (r->kind > PR_MMAP || r->sys >= PR_NSYS || r->at >= PR_NAT)
        abort();
    bool kept = want(NULL, r->pid) || (r->kind == PR_CPU && r->at == PR_AT_TLB) ||
                ((r->kind == PR_FORK || r->kind == PR_GONE) && want(NULL, (int32_t)r->a[0]));
    if (!kept)
        abort();
    const char *name = strpool_get(s->names, r->name);
    if (!name || (r->name && !name[0]))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const pr_ksym_t ksyms[] = {
        {"exc_page_fault", PR_AT_FAULT, 0, 0xffffffff81000000ull, 0xffffffff81000100ull},
        {"__x64_sys_madvise", PR_AT_GIVEBACK, PR_SYS_MADVISE, 0xffffffff81000100ull, 0xffffffff81000200ull},
        {"flush_tlb_func", PR_AT_TLB, 0, 0xffffffff81000200ull, 0xffffffff81000300ull},
    };
    uint64_t ids[PR_NEV];
    uint16_t arg_off[PR_NTP][PR_MAX_ARGS];
    uint8_t nargs[PR_NTP];
    for (int e = 0; e < PR_NEV; e++)
        ids[e] = (uint64_t)e + 1;
    for (int t = 0; t < PR_NTP; t++) { /* as the kernel's formats have them: 16, 24, ... */
        nargs[t] = (t & 1) ? 1 : PR_MAX_ARGS;
        for (int k = 0; k < PR_MAX_ARGS; k++)
            arg_off[t][k] = (uint16_t)(16 + 8 * k);
    }
    uint64_t *buf = malloc(size ? size : 1); /* the ring's alignment; its exact size, for ASan */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    strpool_t names;
    strpool_init(&names);
    pr_stats_t st;
    memset(&st, 0, sizeof st);
    seen_t seen = {&names, 0};
    pr_parser_t p = {.arg_off = (const uint16_t (*)[PR_MAX_ARGS])arg_off, .nargs = nargs, .ksyms = ksyms,
                     .nksyms = sizeof ksyms / sizeof ksyms[0], .want = want, .emit = emit, .emit_ctx = &seen,
                     .names = &names, .st = &st};
    size_t n = pr_parse(&p, ids, buf, size);
    if (n > size || n % 8 || st.records > n / 8 || seen.n > st.records)
        abort();
    pr_stats_t whole = st;
    size_t nwhole = seen.n;
    memset(&st, 0, sizeof st);
    seen.n = 0;
    for (size_t at = 0; at < n;) { /* each record alone */
        uint16_t len;
        memcpy(&len, (const unsigned char *)buf + at + 6, 2); /* perf_event_header.size */
        void *one = malloc(len);
        if (!one)
            abort();
        memcpy(one, (const unsigned char *)buf + at, len);
        if (pr_parse(&p, ids, one, len) != len)
            abort();
        free(one);
        at += len;
    }
    if (whole.records != st.records || whole.lost != st.lost || whole.throttled != st.throttled ||
        memcmp(whole.other_calls, st.other_calls, sizeof st.other_calls) || nwhole != seen.n)
        abort();
    strpool_free(&names);
    free(buf);
    return 0;
}
