/* execs.c - the images a sample's tree started, from the kernel's exec
 * tracepoint (contract: execs.h).  A per-task inherited event cannot be
 * mapped, so each CPU gets its own event on the child (as perf record does
 * without -a), inherited, one sample per exec: pid, time and the raw
 * record, whose filename field (a __data_loc string) is located from the
 * tracepoint's format file. */
#include "execs.h"
#include "counters.h"
#include "tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXECS_CPUS_MAX 1024
#define EXECS_RING_PAGES 4   /* data pages per CPU: about 150 execs between drains */

struct execs {
    int ncpu;
    int fd[EXECS_CPUS_MAX];
    void *ring[EXECS_CPUS_MAX];
    size_t page, ring_len;
    unsigned file_off;          /* the filename field's offset in the raw record */
    size_t nimg;
    execs_image_t img[EXECS_NAMES_MAX];
};

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The offset of "field:__data_loc char[] filename;" in the format file, 8
 * (every kernel since 3.4) when it cannot be read. */
static unsigned filename_offset(void)
{
    const char *tfs = tracefs_dir();
    char path[512], line[256];
    unsigned off = 8;
    if (!tfs)
        return off;
    snprintf(path, sizeof path, "%s/events/sched/sched_process_exec/format", tfs);
    FILE *f = fopen(path, "re");
    if (!f)
        return off;
    while (fgets(line, sizeof line, f)) {
        const char *o = strstr(line, "offset:");
        if (strstr(line, " filename;") && o)
            off = (unsigned)strtoul(o + 7, NULL, 10);
    }
    fclose(f);
    return off;
}

/* Closing the last event of a tracepoint unregisters it (an RCU wait of
 * tens of ms): one disabled event on ourselves keeps it registered. */
static void keep_registered(const struct perf_event_attr *attr)
{
    static int keep = -1;
    if (keep >= 0)
        return;
    struct perf_event_attr a = *attr;
    a.disabled = 1;
    a.inherit = 0;
    a.enable_on_exec = 0;
    a.sample_period = 0;
    a.sample_type = 0;
    keep = (int)perf_open(&a, 0, -1);
}

int execs_open(execs_t **out, pid_t pid, char *why, size_t whylen)
{
    *out = NULL;
    uint64_t id;
    int rc = cnt_tracepoint_id("sched", "sched_process_exec", &id);
    if (rc) {
        snprintf(why, whylen, "tracepoint sched:sched_process_exec: %s", strerror(-rc));
        return rc;
    }
    execs_t *x = calloc(1, sizeof *x);
    if (!x)
        return -ENOMEM;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    x->ncpu = n < 1 ? 1 : n > EXECS_CPUS_MAX ? EXECS_CPUS_MAX : (int)n;
    x->page = (size_t)sysconf(_SC_PAGESIZE);
    x->ring_len = x->page * (1 + EXECS_RING_PAGES);
    x->file_off = filename_offset();
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = id;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
    a.disabled = 1;
    a.enable_on_exec = 1;
    a.inherit = 1;
    keep_registered(&a);
    int opened = 0, err = 0;
    for (int c = 0; c < x->ncpu; c++) {
        x->ring[c] = NULL;
        x->fd[c] = (int)perf_open(&a, pid, c);
        if (x->fd[c] < 0) {
            if (errno != ENODEV && !err) /* an offline CPU runs nothing */
                err = errno;
            continue;
        }
        opened++;
        void *r = mmap(NULL, x->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, x->fd[c], 0);
        x->ring[c] = r == MAP_FAILED ? NULL : r; /* counted, not named */
    }
    if (!opened || err) {
        snprintf(why, whylen, "sched:sched_process_exec on pid %d: %s", (int)pid, strerror(err ? err : ENODEV));
        execs_close(x);
        return -(err ? err : ENODEV);
    }
    *out = x;
    return 0;
}

static void ring_copy(const char *data, size_t size, uint64_t at, void *dst, size_t len)
{
    for (size_t i = 0; i < len; i++)
        ((char *)dst)[i] = data[(at + i) % size];
}

static void add_sample(execs_t *x, const char *rec, size_t len)
{
    /* u32 pid, tid; u64 time; u32 raw size; raw[] */
    if (x->nimg >= EXECS_NAMES_MAX || len < 20)
        return;
    uint32_t pid, rawsz, loc;
    uint64_t time;
    memcpy(&pid, rec, 4);
    memcpy(&time, rec + 8, 8);
    memcpy(&rawsz, rec + 16, 4);
    const char *raw = rec + 20;
    if (rawsz > len - 20 || x->file_off + 4 > rawsz)
        return;
    memcpy(&loc, raw + x->file_off, 4);
    size_t off = loc & 0xffff, flen = loc >> 16;
    execs_image_t *im = &x->img[x->nimg++];
    im->pid = (pid_t)pid;
    im->time = time;
    if (off + flen > rawsz)
        flen = 0;
    size_t keep = flen < sizeof im->file ? flen : sizeof im->file - 1;
    memcpy(im->file, raw + off, keep);
    im->file[keep] = '\0';
    im->file[strcspn(im->file, "\n")] = '\0';
}

void execs_drain(execs_t *x)
{
    if (!x)
        return;
    for (int c = 0; c < x->ncpu; c++) {
        struct perf_event_mmap_page *pg = x->ring[c];
        if (!pg)
            continue;
        const char *data = (const char *)pg + x->page;
        size_t size = x->ring_len - x->page;
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = pg->data_tail;
        while (tail + sizeof(struct perf_event_header) <= head) {
            struct perf_event_header h;
            ring_copy(data, size, tail, &h, sizeof h);
            if (h.size < sizeof h || tail + h.size > head)
                break;
            if (h.type == PERF_RECORD_SAMPLE) {
                char rec[512];
                size_t len = h.size - sizeof h < sizeof rec ? h.size - sizeof h : sizeof rec;
                ring_copy(data, size, tail + sizeof h, rec, len);
                add_sample(x, rec, len);
            }
            tail += h.size;
        }
        __atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
    }
}

long execs_count(const execs_t *x)
{
    if (!x)
        return -1;
    uint64_t sum = 0;
    for (int c = 0; c < x->ncpu; c++) {
        uint64_t v;
        if (x->fd[c] < 0)
            continue;
        if (read(x->fd[c], &v, sizeof v) != (ssize_t)sizeof v)
            return -1;
        sum += v;
    }
    return (long)sum;
}

static int by_time(const void *a, const void *b)
{
    const execs_image_t *x = a, *y = b;
    return x->time < y->time ? -1 : x->time > y->time;
}

const execs_image_t *execs_images(execs_t *x, size_t *n)
{
    qsort(x->img, x->nimg, sizeof *x->img, by_time);
    *n = x->nimg;
    return x->img;
}

void execs_close(execs_t *x)
{
    if (!x)
        return;
    for (int c = 0; c < x->ncpu; c++) {
        if (x->ring[c])
            munmap(x->ring[c], x->ring_len);
        if (x->fd[c] >= 0)
            close(x->fd[c]);
    }
    free(x);
}
