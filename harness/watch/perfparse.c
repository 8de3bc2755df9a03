/* perfparse.c - perf records into pr_rec_t (contract: perfparse.h).  Every read is bounded
 * by the record's own size: a sample cut short, a call chain or raw payload longer than its
 * record, is dropped, never read past. */
#include "perfparse.h"

#include <linux/perf_event.h>
#include <string.h>

/* The event (index within its CPU's set) an id belongs to, or -1. */
static int event_of(const uint64_t *ids, uint64_t id)
{
    for (int e = 0; e < PR_NEV; e++)
        if (ids[e] == id)
            return e;
    return -1;
}

/* A cpu-clock sample's place, from its kernel chain: a give-back call over
 * the fault entry over a TLB-flush IPI over any other kernel code. */
static void classify_chain(const pr_parser_t *p, pr_rec_t *r, const uint64_t *ips, uint64_t nr)
{
    bool kernel = false, user = false, fault = false, tlb = false, gb = false;
    unsigned nuser = 0;
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t ip = ips[i];
        if (ip >= PERF_CONTEXT_MAX) {
            kernel = ip == PERF_CONTEXT_KERNEL;
            user = ip == PERF_CONTEXT_USER;
            continue;
        }
        if (user) {
            if (nuser < PR_USER_IPS)
                r->a[nuser++] = ip;
            continue;
        }
        if (!kernel)
            continue;
        for (size_t k = 0; k < p->nksyms; k++)
            if (ip >= p->ksyms[k].lo && ip < p->ksyms[k].hi) {
                if (p->ksyms[k].at == PR_AT_GIVEBACK && !gb)
                    gb = true, r->sys = p->ksyms[k].sys;
                fault |= p->ksyms[k].at == PR_AT_FAULT;
                tlb |= p->ksyms[k].at == PR_AT_TLB;
            }
    }
    r->at = gb ? PR_AT_GIVEBACK : fault ? PR_AT_FAULT : tlb ? PR_AT_TLB : PR_AT_KERNEL;
}

/* A tracepoint sample's payload past its cpu (p: its raw size; end: the record's end): the
 * call's fields, and for an enter, regs_user {abi, sp, ip} and stack_user {size, 8 bytes,
 * dyn_size}: the user ip and the word at the stack's top.  false: cut short. */
static bool parse_tracepoint(const pr_parser_t *pp, int t, const uint64_t *p, const uint64_t *end, pr_rec_t *r)
{
    if (p >= end)
        return false;
    uint32_t size = (uint32_t)*p;
    const unsigned char *raw = (const unsigned char *)p + 4;
    if (size > (size_t)((const unsigned char *)end - raw))
        return false;
    r->kind = (t & 1) ? PR_EXIT : PR_ENTER;
    r->sys = (uint8_t)(t / 2);
    for (int k = 0; k < pp->nargs[t] && k < PR_MAX_ARGS; k++)
        if ((size_t)pp->arg_off[t][k] + 8 <= size)
            memcpy(&r->a[k], raw + pp->arg_off[t][k], 8);
    if (!(t & 1)) {
        const uint64_t *q = p + (4 + (size_t)size + 7) / 8;
        if (q < end && *q != PERF_SAMPLE_REGS_ABI_NONE && end - q >= 3) {
            r->a[6] = q[2];
            q += 3;
            if (end - q >= 2 && q[0] >= 8)
                r->a[7] = q[1];
        }
    }
    return true;
}

/* One PERF_RECORD_SAMPLE of event e (body past the header, len bytes, 8 at least). */
static void parse_sample(const pr_parser_t *pp, int e, const uint64_t *p, size_t len)
{
    const uint64_t *end = p + len / 8;
    p++; /* identifier */
    uint64_t ip = 0;
    if (e == PR_EV_CPU) {
        if (p >= end)
            return;
        ip = *p++;
    }
    bool has_addr = e == PR_EV_FAULT || e == PR_EV_MAJOR;
    if (end - p < 3 + has_addr)
        return;
    int32_t pid = (int32_t)(uint32_t)p[0], tid = (int32_t)(uint32_t)(p[0] >> 32);
    uint64_t time = p[1];
    p += 2;
    uint64_t addr = 0;
    if (has_addr)
        addr = *p++;
    uint32_t cpu = (uint32_t)*p++;
    bool want = pp->want(pp->want_ctx, pid);
    if (e >= PR_EV_TP0 && !want) {
        int t = e - PR_EV_TP0;
        if (!(t & 1))
            pp->st->other_calls[t / 2]++;
        return;
    }
    if (!want && e != PR_EV_CPU)
        return;
    pr_rec_t r = {.time = time, .pid = pid, .tid = tid, .cpu = cpu};
    if (has_addr) {
        r.kind = e == PR_EV_FAULT ? PR_FAULT : PR_MAJOR;
        r.a[0] = addr;
    } else if (e == PR_EV_CPU) {
        if (p >= end)
            return;
        uint64_t nr = *p++;
        if (nr > (uint64_t)(end - p))
            return;
        r.kind = PR_CPU;
        classify_chain(pp, &r, p, nr);
        if (!nr)
            r.at = ip >= 0x800000000000ull ? PR_AT_KERNEL : PR_AT_USER;
        else if (r.at == PR_AT_KERNEL && ip < 0x800000000000ull)
            r.at = PR_AT_USER;
        if (!want && r.at != PR_AT_TLB)
            return;
    } else if (!parse_tracepoint(pp, e - PR_EV_TP0, p, end, &r)) {
        return;
    }
    pp->emit(pp->emit_ctx, &r);
}

/* The sample_id trailer (pid/tid, time, cpu, identifier) at a record's end. */
static void trailer(const unsigned char *rec, size_t size, pr_rec_t *r)
{
    const uint64_t *t = (const uint64_t *)(rec + size - 32);
    r->pid = (int32_t)(uint32_t)t[0];
    r->tid = (int32_t)(uint32_t)(t[0] >> 32);
    r->time = t[1];
    r->cpu = (uint32_t)t[2];
}

/* An mmap2 record of size bytes (112 at least): pid, tid, addr, len, pgoff, maj/min, ino,
 * ino_generation, prot, flags, a name, the trailer. */
static void parse_mmap(const pr_parser_t *p, const unsigned char *rec, size_t size, const uint32_t *u, pr_rec_t *r)
{
    const uint64_t *q = (const uint64_t *)(u + 2);
    r->kind = PR_MMAP;
    r->pid = (int32_t)u[0], r->tid = (int32_t)u[1];
    r->a[0] = q[0], r->a[1] = q[1], r->a[2] = q[2];
    const uint32_t *pf = (const uint32_t *)(q + 3 + 1 + 2); /* maj, min; ino; ino_generation */
    r->a[3] = pf[0], r->a[4] = pf[1];
    const char *fname = (const char *)(pf + 2);
    size_t room = (size_t)(rec + size - 32 - (const unsigned char *)fname);
    /* anonymous memory needs no name: its record only clears what was mapped there */
    r->name = strncmp(fname, "//anon", room < 7 ? room : 7) ? strpool_add(p->names, fname, room) : 0;
}

static void parse_record(const pr_parser_t *p, const uint64_t *ids, const struct perf_event_header *h)
{
    const unsigned char *rec = (const unsigned char *)h;
    const unsigned char *body = rec + sizeof *h;
    size_t size = h->size;
    p->st->records++;
    if (h->type == PERF_RECORD_SAMPLE) {
        if (size < sizeof *h + 8)
            return;
        int e = event_of(ids, *(const uint64_t *)body);
        if (e >= 0)
            parse_sample(p, e, (const uint64_t *)body, size - sizeof *h);
        return;
    }
    if (h->type == PERF_RECORD_LOST) {
        if (size >= sizeof *h + 16)
            p->st->lost += ((const uint64_t *)body)[1];
        return;
    }
    if (h->type == PERF_RECORD_THROTTLE) {
        p->st->throttled++;
        return;
    }
    if (size < sizeof *h + 40)
        return;
    pr_rec_t r = {0};
    trailer(rec, size, &r);
    const uint32_t *u = (const uint32_t *)body;
    if (h->type == PERF_RECORD_COMM) {
        if (!p->want(p->want_ctx, (int32_t)u[0]))
            return;
        r.kind = PR_COMM;
        r.pid = (int32_t)u[0], r.tid = (int32_t)u[1];
        r.sys = (h->misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
        r.name = strpool_add(p->names, (const char *)(u + 2), 16);
    } else if (h->type == PERF_RECORD_FORK || h->type == PERF_RECORD_EXIT) {
        /* a new process is kept while its parent is: want() learns of it here */
        if (!p->want(p->want_ctx, (int32_t)u[0]) && !p->want(p->want_ctx, (int32_t)u[1]))
            return;
        r.kind = h->type == PERF_RECORD_FORK ? PR_FORK : PR_GONE;
        r.pid = (int32_t)u[0], r.tid = (int32_t)u[2];
        r.a[0] = u[1], r.a[1] = u[3];
        r.time = *(const uint64_t *)(u + 4);
    } else if (h->type == PERF_RECORD_MMAP2) {
        if (size < sizeof *h + 8 + 6 * 8 + 8 + 8 + 32 || !p->want(p->want_ctx, (int32_t)u[0]))
            return;
        parse_mmap(p, rec, size, u, &r);
    } else {
        return;
    }
    p->emit(p->emit_ctx, &r);
}

size_t pr_parse(const pr_parser_t *p, const uint64_t *ids, const void *buf, size_t len)
{
    const unsigned char *b = buf;
    size_t at = 0;
    if ((uintptr_t)b % 8)
        return 0;
    while (len - at >= sizeof(struct perf_event_header)) {
        const struct perf_event_header *h = (const void *)(b + at);
        if (h->size < sizeof *h || h->size % 8 || h->size > len - at)
            break;
        parse_record(p, ids, h);
        at += h->size;
    }
    return at;
}
