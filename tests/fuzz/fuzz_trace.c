/* fuzz_trace.c - libFuzzer target: the input is a whole .mbt trace, read as
 * `mallocbench trace` and the replay workload read it (mbt_parse).  Checks:
 * no crash or leak; a refusal is one "byte N: ..." line with N inside the
 * input and leaves the trace empty; on success every event has a known op,
 * the threads hold all events, each points at a process of its pid, the
 * text is the header's, the images of a pid are chained and each image's
 * threads are its slice of proc_thread, and the stats of every process can
 * be taken, the same by pid as by image. */
#include "trace.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_cut(const mbt_trace_t *t, size_t size, const char *err)
{
    unsigned long long at;
    if (!t->truncated_at) {
        if (err[0])
            abort();
        return;
    }
    if (t->truncated_at < MBT_HEADER_SIZE || t->truncated_at >= size ||
        sscanf(err, "byte %llu: ", &at) != 1 || at != t->truncated_at || strchr(err, '\n'))
        abort();
}

static void check_ok(const mbt_trace_t *t, size_t size)
{
    uint64_t n = 0;
    for (size_t i = 0; i < t->nthread; i++) {
        const mbt_thread_t *th = &t->thread[i];
        if (th->proc >= t->nproc || t->proc[th->proc].pid != th->pid)
            abort();
        for (size_t j = 0; j < th->nev; j++)
            if (!mbt_op_name(MBT_OP(&th->ev[j])) ||
                (j && MBT_T(&th->ev[j]) < MBT_T(&th->ev[j - 1])))
                abort();
        n += th->nev;
    }
    if (n != t->nevents || n * sizeof(mbt_event_t) > size || !t->text || strlen(t->text) > size)
        abort();
    size_t nth = 0;
    for (size_t k = 0; k < t->nproc; k++) {
        const mbt_proc_t *p = &t->proc[k];
        size_t f = p->first_image, x = p->next_image;
        if (f > k || t->proc[f].pid != p->pid || t->proc[f].first_image != f ||
            (x && (x <= k || t->proc[x].pid != p->pid || t->proc[x].first_image != f)))
            abort(); /* the images of a pid, chained in file order */
        if (p->thread0 != nth || nth + p->nthreads > t->nthread)
            abort();
        for (size_t i = 0; i < p->nthreads; i++)
            if (t->thread[t->proc_thread[p->thread0 + i]].proc != k)
                abort();
        nth += p->nthreads;
        mbt_stats_t s, s2;
        if (mbt_stats_proc(t, k, &s))
            abort();
        if (s.live_bytes_end > s.peak_live_bytes || s.peak_live_bytes > s.bytes_allocated)
            abort();
        if (f == k && (mbt_stats(t, p->pid, &s2) || memcmp(&s, &s2, sizeof s)))
            abort();
    }
    if (nth != t->nthread)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mbt_trace_t t;
    char err[256];
    int rc = mbt_parse(data, size, &t, err, sizeof err);
    if (rc == 0) {
        check_cut(&t, size, err);
        check_ok(&t, size);
        mbt_free(&t);
        return 0;
    }
    unsigned long long at;
    if (rc != -EINVAL || sscanf(err, "byte %llu: ", &at) != 1 || at > size || strchr(err, '\n'))
        abort();
    if (t.nthread || t.nproc || t.thread || t.proc || t.text)
        abort(); /* freed on error */
    return 0;
}
