/* perfring.c - the per-CPU events of perfring.h: opened system-wide on
 * every online CPU, one ring per CPU (every event of a CPU writes into its
 * page-fault event's ring), records parsed as they are read (perfparse.c) and
 * handed on sorted by their CLOCK_MONOTONIC stamps. */
#include "perfring.h"
#include "perfparse.h"
#include "strpool.h"
#include "tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

/* The events of one CPU, in perfparse.h's order (ev index). */
enum { EV_FAULT = PR_EV_FAULT, EV_MAJOR = PR_EV_MAJOR, EV_CPU = PR_EV_CPU, EV_TP0 = PR_EV_TP0 };
#define NTP PR_NTP                  /* enter and exit of each call */
#define NEV PR_NEV
#define MAX_ARGS PR_MAX_ARGS
#define REG_SP 7    /* PERF_REG_X86_SP */
#define REG_IP 8    /* PERF_REG_X86_IP */

static const char *const sys_names[PR_NSYS] = {"madvise", "munmap", "brk", "mremap", "mmap"};

/* The kernel functions a cpu-clock sample is classified by. */
static pr_ksym_t ksyms[] = {
    {"asm_exc_page_fault", PR_AT_FAULT, 0, 0, 0},
    {"exc_page_fault", PR_AT_FAULT, 0, 0, 0},
    {"handle_mm_fault", PR_AT_FAULT, 0, 0, 0},
    {"__x64_sys_madvise", PR_AT_GIVEBACK, PR_SYS_MADVISE, 0, 0},
    {"do_madvise", PR_AT_GIVEBACK, PR_SYS_MADVISE, 0, 0},
    {"__x64_sys_munmap", PR_AT_GIVEBACK, PR_SYS_MUNMAP, 0, 0},
    {"__vm_munmap", PR_AT_GIVEBACK, PR_SYS_MUNMAP, 0, 0},
    {"__x64_sys_brk", PR_AT_GIVEBACK, PR_SYS_BRK, 0, 0},
    {"__x64_sys_mremap", PR_AT_GIVEBACK, PR_SYS_MREMAP, 0, 0},
    {"flush_tlb_func", PR_AT_TLB, 0, 0, 0},
    {"sysvec_call_function", PR_AT_TLB, 0, 0, 0},
};
#define NKSYMS (sizeof ksyms / sizeof ksyms[0])

struct pr_watch {
    int ncpu;
    int *fd;                    /* ncpu x NEV, -1 where not open */
    uint64_t *id;               /* ncpu x NEV: the kernel's id of each */
    void **ring;                /* ncpu: the fault event's mapping, or NULL */
    size_t ring_len;
    uint16_t arg_off[NTP][MAX_ARGS]; /* raw-data offsets of each tracepoint's fields */
    uint8_t nargs[NTP];
    pr_parser_t parse;          /* the records' parser: these offsets, ksyms, want, into pend */
    unsigned fault_period;
    pr_rec_t *pend;             /* read, not yet handed on */
    size_t npend, cap;
    strpool_t names;            /* comms and mapped files */
    pr_stats_t st;
    bool oom;                   /* a record could not be kept */
    unsigned char *scratch;     /* a record that wraps the ring's end */
};

static void keep(void *ctx, const pr_rec_t *r);

uint64_t pr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The id of syscalls:sys_{enter,exit}_NAME and the offsets of its fields
 * past the common ones (the arguments, or `ret`): 0 or -errno. */
static int tp_read(const char *tfs, const char *which, uint64_t *id, uint16_t *off, uint8_t *n)
{
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/events/syscalls/%s/id", tfs, which);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    int ok = fscanf(f, "%lu", id) == 1;
    fclose(f);
    if (!ok)
        return -EINVAL;
    snprintf(path, sizeof path, "%s/events/syscalls/%s/format", tfs, which);
    if (!(f = fopen(path, "re")))
        return -errno;
    *n = 0;
    while (fgets(line, sizeof line, f)) {
        const char *o = strstr(line, "offset:");
        if (!strstr(line, "field:") || strstr(line, "common_") || strstr(line, "__syscall_nr") || !o)
            continue;
        if (*n < MAX_ARGS)
            off[(*n)++] = (uint16_t)strtoul(o + 7, NULL, 10);
    }
    fclose(f);
    return *n ? 0 : -EINVAL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Each classifying function's range: its address to the next text symbol's.
 * False when kallsyms hides the addresses (all zero) or cannot be read. */
static bool ksyms_load(void)
{
    FILE *f = fopen("/proc/kallsyms", "re");
    if (!f)
        return false;
    size_t n = 0, cap = 1 << 16;
    uint64_t *addr = malloc(cap * sizeof *addr);
    char line[512], name[256], type;
    unsigned long long a;
    while (addr && fgets(line, sizeof line, f)) {
        if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || (type != 't' && type != 'T'))
            continue;
        if (n == cap) {
            uint64_t *g = realloc(addr, 2 * cap * sizeof *addr);
            if (!g)
                break;
            addr = g, cap *= 2;
        }
        addr[n++] = a;
        for (size_t k = 0; k < NKSYMS; k++)
            if (!strcmp(name, ksyms[k].name) && !strchr(line, '['))
                ksyms[k].lo = a;
    }
    fclose(f);
    if (!addr)
        return false;
    qsort(addr, n, sizeof *addr, cmp_u64);
    bool any = false;
    for (size_t k = 0; k < NKSYMS; k++) {
        if (!ksyms[k].lo)
            continue;
        size_t lo = 0, hi = n; /* the first address above lo */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (addr[mid] <= ksyms[k].lo)
                lo = mid + 1;
            else
                hi = mid;
        }
        ksyms[k].hi = lo < n ? addr[lo] : ksyms[k].lo + 4096;
        any = true;
    }
    free(addr);
    return any;
}

static int sys_open(struct perf_event_attr *a, int cpu, int group)
{
    return (int)syscall(SYS_perf_event_open, a, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static void attr_base(struct perf_event_attr *a, uint32_t type, uint64_t config, uint64_t period)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = type;
    a->config = config;
    a->sample_period = period;
    a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    a->disabled = 1;
    a->sample_id_all = 1;
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
}

/* Is CPU c offline (its online file says 0; cpu0 has none and is online)? */
static bool cpu_offline(int c)
{
    char path[64], v = '1';
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/online", c);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fread(&v, 1, 1, f) != 1)
            v = '1';
        fclose(f);
    }
    return v == '0';
}

/* err gets "WHAT on CPU c: <errno's text>": -errno (never 0). */
static int fail(char *err, size_t errlen, const char *what, int c)
{
    int e = errno ? errno : EIO;
    snprintf(err, errlen, "%s on CPU %d: %s", what, c, strerror(e));
    return -e;
}

/* One CPU's events; the fault event owns the ring, the rest write into it. */
static int open_cpu(pr_watch_t *w, int c, const uint64_t *tp_id, char *err, size_t errlen)
{
    struct perf_event_attr a;
    int *fd = w->fd + (size_t)c * NEV;
    for (int e = 0; e < NEV; e++) {
        if (e == EV_FAULT || e == EV_MAJOR) {
            attr_base(&a, PERF_TYPE_SOFTWARE, e == EV_FAULT ? PERF_COUNT_SW_PAGE_FAULTS_MIN
                                                             : PERF_COUNT_SW_PAGE_FAULTS_MAJ,
                      e == EV_FAULT ? w->fault_period : 1);
            a.sample_type |= PERF_SAMPLE_ADDR;
            if (e == EV_FAULT)
                a.task = a.comm = a.comm_exec = a.mmap = a.mmap2 = a.mmap_data = 1;
        } else if (e == EV_CPU) {
            attr_base(&a, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, PR_CPU_PERIOD_NS);
            a.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
            a.sample_max_stack = 64;
        } else {
            attr_base(&a, PERF_TYPE_TRACEPOINT, tp_id[e - EV_TP0], 1);
            a.sample_type |= PERF_SAMPLE_RAW;
            if (!((e - EV_TP0) & 1)) { /* an enter: who called (ip, and the return address on the stack) */
                a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
                a.sample_regs_user = (1ull << REG_SP) | (1ull << REG_IP);
                a.sample_stack_user = 8;
            }
        }
        fd[e] = sys_open(&a, c, -1);
        if (fd[e] < 0) {
            int rc = -errno;
            if (e == EV_FAULT && (rc == -ENODEV || rc == -EINVAL) && cpu_offline(c))
                return 1; /* an offline CPU: nothing to watch there */
            snprintf(err, errlen, "perf_event_open (%s event on CPU %d): %s%s",
                     e == EV_FAULT ? "page-fault" : e == EV_CPU ? "cpu-clock" : "tracepoint", c,
                     strerror(-rc), rc == -EACCES || rc == -EPERM ? " (diagnose needs root)" : "");
            return rc;
        }
        if (ioctl(fd[e], PERF_EVENT_IOC_ID, &w->id[(size_t)c * NEV + e]) != 0)
            return fail(err, errlen, "PERF_EVENT_IOC_ID", c);
        if (e == EV_FAULT) {
            void *m = mmap(NULL, w->ring_len + (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                           MAP_SHARED, fd[e], 0);
            if (m == MAP_FAILED)
                return fail(err, errlen, "mapping the ring", c);
            w->ring[c] = m;
        } else if (ioctl(fd[e], PERF_EVENT_IOC_SET_OUTPUT, fd[EV_FAULT]) != 0) {
            return fail(err, errlen, "PERF_EVENT_IOC_SET_OUTPUT", c);
        }
    }
    return 0;
}

static int tp_setup(pr_watch_t *w, uint64_t *tp_id, char *err, size_t errlen)
{
    const char *tfs = tracefs_dir();
    if (!tfs) {
        snprintf(err, errlen, "%s: the syscall tracepoints need it", tracefs_why());
        return -ENOENT;
    }
    for (int s = 0; s < PR_NSYS; s++)
        for (int x = 0; x < 2; x++) {
            char which[64];
            snprintf(which, sizeof which, "sys_%s_%s", x ? "exit" : "enter", sys_names[s]);
            int t = 2 * s + x;
            int rc = tp_read(tfs, which, &tp_id[t], w->arg_off[t], &w->nargs[t]);
            if (rc) {
                snprintf(err, errlen, "tracepoint syscalls:%s: %s/events/syscalls/%s: %s", which, tfs, which,
                         strerror(-rc));
                return rc;
            }
        }
    return 0;
}

int pr_open(pr_watch_t **out, unsigned fault_period, pr_want_fn want, void *ctx, char *err, size_t errlen)
{
    *out = NULL;
    pr_watch_t *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    w->parse = (pr_parser_t){.arg_off = (const uint16_t (*)[MAX_ARGS])w->arg_off, .nargs = w->nargs,
                             .ksyms = ksyms, .nksyms = NKSYMS, .want = want, .want_ctx = ctx,
                             .emit = keep, .emit_ctx = w, .names = &w->names, .st = &w->st};
    w->fault_period = fault_period ? fault_period : 1;
    w->ncpu = get_nprocs_conf();
    w->ring_len = (size_t)PR_RING_PAGES * (size_t)sysconf(_SC_PAGESIZE);
    w->fd = malloc((size_t)w->ncpu * NEV * sizeof *w->fd);
    w->id = calloc((size_t)w->ncpu * NEV, sizeof *w->id);
    w->ring = calloc((size_t)w->ncpu, sizeof *w->ring);
    w->scratch = malloc(65536);
    strpool_init(&w->names);
    if (!w->fd || !w->id || !w->ring || !w->scratch) {
        pr_close(w);
        return -ENOMEM;
    }
    for (size_t i = 0; i < (size_t)w->ncpu * NEV; i++)
        w->fd[i] = -1;
    uint64_t tp_id[NTP];
    int rc = tp_setup(w, tp_id, err, errlen);
    for (int c = 0; !rc && c < w->ncpu; c++) {
        int r = open_cpu(w, c, tp_id, err, errlen);
        if (r < 0)
            rc = r;
        else if (r == 0)
            w->st.ncpus++;
    }
    if (!rc && !w->st.ncpus) {
        snprintf(err, errlen, "no CPU could be watched: every page-fault event was refused");
        rc = -ENODEV;
    }
    if (rc) {
        pr_close(w);
        return rc;
    }
    w->st.ksyms = ksyms_load();
    *out = w;
    return 0;
}

void pr_enable(pr_watch_t *w)
{
    for (size_t i = 0; i < (size_t)w->ncpu * NEV; i++)
        if (w->fd[i] >= 0)
            ioctl(w->fd[i], PERF_EVENT_IOC_ENABLE, 0);
}

void pr_close(pr_watch_t *w)
{
    if (!w)
        return;
    for (int c = 0; w->ring && c < w->ncpu; c++)
        if (w->ring[c])
            munmap(w->ring[c], w->ring_len + (size_t)sysconf(_SC_PAGESIZE));
    for (size_t i = 0; w->fd && i < (size_t)w->ncpu * NEV; i++)
        if (w->fd[i] >= 0)
            close(w->fd[i]);
    free(w->fd);
    free(w->id);
    free(w->ring);
    free(w->pend);
    strpool_free(&w->names);
    free(w->scratch);
    free(w);
}

const char *pr_name(const pr_watch_t *w, uint32_t name)
{
    return strpool_get(&w->names, name);
}

void pr_stats(const pr_watch_t *w, pr_stats_t *st)
{
    *st = w->st;
}

static pr_rec_t *pend_new(pr_watch_t *w)
{
    if (w->npend == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 65536;
        pr_rec_t *g = realloc(w->pend, cap * sizeof *g);
        if (!g) {
            w->oom = true;
            return NULL;
        }
        w->pend = g, w->cap = cap;
    }
    pr_rec_t *r = &w->pend[w->npend++];
    memset(r, 0, sizeof *r);
    return r;
}

/* The parser's records, kept until pr_poll hands them on in time order. */
static void keep(void *ctx, const pr_rec_t *r)
{
    pr_rec_t *slot = pend_new(ctx);
    if (slot)
        *slot = *r;
}

/* Everything in CPU c's ring, parsed into the pending records. */
static void drain(pr_watch_t *w, int c)
{
    struct perf_event_mmap_page *mp = w->ring[c];
    if (!mp)
        return;
    unsigned char *data = (unsigned char *)mp + (mp->data_offset ? mp->data_offset : (uint64_t)sysconf(_SC_PAGESIZE));
    uint64_t dsize = mp->data_size ? mp->data_size : w->ring_len;
    uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = mp->data_tail;
    while (tail + sizeof(struct perf_event_header) <= head) {
        uint64_t off = tail % dsize;
        struct perf_event_header hh;
        for (size_t i = 0; i < sizeof hh; i++)
            ((unsigned char *)&hh)[i] = data[(off + i) % dsize];
        if (hh.size < sizeof hh || tail + hh.size > head)
            break;
        const struct perf_event_header *h = (const void *)(data + off);
        if (off + hh.size > dsize) { /* wraps: copy it out whole */
            size_t first = (size_t)(dsize - off);
            memcpy(w->scratch, data + off, first);
            memcpy(w->scratch + first, data, hh.size - first);
            h = (const void *)w->scratch;
        }
        pr_parse(&w->parse, w->id + (size_t)c * NEV, h, hh.size);
        tail += hh.size;
    }
    __atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

static int cmp_rec(const void *a, const void *b)
{
    const pr_rec_t *x = a, *y = b;
    return (x->time > y->time) - (x->time < y->time);
}

int pr_poll(pr_watch_t *w, uint64_t upto, void (*fn)(void *ctx, const pr_rec_t *r), void *ctx)
{
    size_t before = w->npend;
    for (int c = 0; c < w->ncpu; c++)
        drain(w, c);
    if (w->npend > before || upto == UINT64_MAX)
        qsort(w->pend, w->npend, sizeof *w->pend, cmp_rec);
    size_t i = 0;
    while (i < w->npend && (upto == UINT64_MAX || w->pend[i].time < upto))
        fn(ctx, &w->pend[i++]);
    memmove(w->pend, w->pend + i, (w->npend - i) * sizeof *w->pend);
    w->npend -= i;
    return w->oom ? -ENOMEM : 0;
}

void pr_disable(pr_watch_t *w)
{
    for (size_t i = 0; i < (size_t)w->ncpu * NEV; i++)
        if (w->fd[i] >= 0)
            ioctl(w->fd[i], PERF_EVENT_IOC_DISABLE, 0);
}
