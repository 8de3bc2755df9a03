/* pagemodel.c - the page model of pagemodel.h.  Each 4 KiB page a watched
 * image touched or gave back has one entry, keyed by (image, page):
 *   state (4 bits) | detail (12 bits) | time (48 bits, ns since the window began: 78 hours)
 * TOUCHED after a fault; GONE(by, counted) after a give-back call; LAZY
 * after MADV_FREE; REFAULTED(age, by) after a fault on a GONE page, so the
 * second fault of one re-touch (a read maps the zero page, the write
 * faults again) counts with it. */
#include "pagemodel.h"
#include "hashmap.h"
#include "registry.h"
#include "strpool.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>

#define PAGE 4096ull
#define USER_TOP 0x800000000000ull
#define CHUNK_PAGES 512ull          /* 2 MiB */
#define STOP_GRACE_NS 100000000ull  /* records still taken after a stop signal */
enum { ST_NONE, ST_TOUCHED, ST_GONE, ST_LAZY, ST_REFAULTED };
#define TIME_MASK ((1ull << 48) - 1)
#define PACK(st, detail, t) (((uint64_t)(st) << 60) | ((uint64_t)(detail) << 48) | ((t) & TIME_MASK))
#define ST_OF(v) ((unsigned)((v) >> 60))
#define DETAIL_OF(v) ((unsigned)(((v) >> 48) & 0xfff))
#define TIME_OF(v) ((v) & TIME_MASK)
/* GONE's detail: how (pm_by_t), whether its bytes count as kept, whether the allocator gave it,
 * whether the call gave back its whole 2 MiB-aligned block (what a huge page could have held) */
#define GONE_DETAIL(by, counted, alloc) ((unsigned)(by) | ((counted) ? 4u : 0u) | ((alloc) ? 8u : 0u))
#define GONE_ALLOC(d) (((d) & 8u) != 0)
#define GONE_WHOLE 16u
/* REFAULTED's: the age bucket, how it had been given back, by the allocator or not; whole block */
#define REFAULT_DETAIL(age, by, alloc) ((unsigned)(age) | ((unsigned)(by) << 3) | ((alloc) ? 32u : 0u))
#define REFAULT_WHOLE 64u
/* a `chunks` value: the time the allocator gave the whole block back, and whether a re-fault
 * has touched it since (the first one is the block's one huge fault) */
#define CHUNK_WHOLE (1ull << 62)
#define CHUNK_RETOUCHED (1ull << 61)

struct pm_map {
    uint64_t lo, hi;
    uint32_t name;      /* the model's own name handle */
    bool file;          /* file-backed (faults there are page-cache work) */
};

typedef struct {
    uint8_t sys, valid;
    uint64_t a[8];
} pending_t;

struct pm_model {
    uint64_t t0;
    bool follow, all;
    int32_t self, ignored;  /* ours, and our reader's (procread.h): never watched */
    /* the bound on the model's memory: past it no page is added, its bytes are untracked */
    uint64_t limit, other_bytes; /* other_bytes: what is not in the maps below (images, mappings, replay) */
    bool capped;
    /* when to stop taking records: a flag set (a signal), then STOP_GRACE_NS more; or stop_at */
    volatile sig_atomic_t *stop_flag;
    uint64_t stop_seen, stop_at, checks;
    bool stopped;
    uint64_t dropped;       /* records not taken once stopped */
    hmap_t chunks;          /* (image, 2 MiB chunk) -> pages of it in `pages`: give-backs skip empty ones */
    pm_read_fn read;        /* how /proc/PID/maps is read (NULL: here) */
    hmap_t pages;           /* (image, page) -> state */
    hmap_t by_pid;          /* pid -> index + 1 of its current image */
    hmap_t others;          /* pids known not to be watched (follow mode) */
    hmap_t by_tid;          /* tid -> index + 1 of its pending call */
    pending_t *pend;
    size_t npend, pend_cap;
    pm_proc_t **procs;
    size_t nprocs, procs_cap;
    bool *exec_first;       /* per image: nothing counts until its exec */
    strpool_t names;        /* the mapped files' names */
    const pr_watch_t *w;
    uint64_t tlb_other;     /* TLB-flush IPI samples in processes not watched (idle included) */
    hmap_t refaulted;       /* (image, page) -> 1: re-faulted at least once */
    uint64_t *rpages;       /* the same as pairs (pid, page address), in the order first seen */
    size_t nrpages, rpages_cap;
};

/* The age bucket of a re-fault `ns` after its give-back (0..PM_NAGES-1). */
static int pm_age_bucket(uint64_t ns)
{
    static const uint64_t limit[PM_NAGES - 1] = {10000000ull, 100000000ull, 1000000000ull, 10000000000ull};
    for (int b = 0; b < PM_NAGES - 1; b++)
        if (ns < limit[b])
            return b;
    return PM_NAGES - 1;
}

const char *pm_lib_name(const pm_model_t *m, uint32_t name)
{
    return strpool_get(&m->names, name);
}

int pm_new(pm_model_t **out, uint64_t t0, bool follow)
{
    pm_model_t *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    strpool_init(&m->names);
    m->t0 = t0, m->follow = follow;
    m->limit = PM_DEFAULT_LIMIT;
    m->ignored = -1;
    hmap_init(&m->pages, NULL);
    hmap_init(&m->chunks, NULL);
    hmap_init(&m->by_pid, NULL);
    hmap_init(&m->others, NULL);
    hmap_init(&m->by_tid, NULL);
    hmap_init(&m->refaulted, NULL);
    *out = m;
    return 0;
}

void pm_free(pm_model_t *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nprocs; i++) {
        free(m->procs[i]->series);
        free(m->procs[i]->maps);
        free(m->procs[i]->fault_libs.v);
        free(m->procs[i]->giveback_libs.v);
        free(m->procs[i]);
    }
    free(m->procs);
    free(m->exec_first);
    free(m->pend);
    strpool_free(&m->names);
    hmap_free(&m->pages);
    hmap_free(&m->chunks);
    hmap_free(&m->by_pid);
    hmap_free(&m->others);
    hmap_free(&m->by_tid);
    hmap_free(&m->refaulted);
    free(m->rpages);
    free(m);
}

void pm_set_names(pm_model_t *m, const pr_watch_t *w)
{
    m->w = w;
}

static bool room_for(pm_model_t *m, size_t more);

void pm_limit(pm_model_t *m, uint64_t bytes)
{
    m->limit = bytes;
}

void pm_stop_when(pm_model_t *m, volatile sig_atomic_t *flag, uint64_t at)
{
    m->stop_flag = flag;
    m->stop_at = at;
}

void pm_ignore(pm_model_t *m, pid_t pid)
{
    m->ignored = (int32_t)pid;
}

static size_t hmap_bytes(const hmap_t *h)
{
    return h->cap * 2 * sizeof(uint64_t);
}

uint64_t pm_bytes(const pm_model_t *m)
{
    return hmap_bytes(&m->pages) + hmap_bytes(&m->chunks) + hmap_bytes(&m->refaulted) + hmap_bytes(&m->by_pid) +
           hmap_bytes(&m->others) + hmap_bytes(&m->by_tid) + m->rpages_cap * sizeof *m->rpages +
           m->pend_cap * sizeof *m->pend + m->procs_cap * (sizeof *m->procs + sizeof *m->exec_first) +
           m->names.cap + hmap_bytes(&m->names.index) + m->other_bytes;
}

bool pm_room(pm_model_t *m, size_t more)
{
    return room_for(m, more);
}

void pm_account(pm_model_t *m, int64_t bytes)
{
    m->other_bytes = bytes < 0 && (uint64_t)-bytes > m->other_bytes ? 0 : m->other_bytes + (uint64_t)bytes;
}

bool pm_capped(const pm_model_t *m)
{
    return m->capped;
}

bool pm_stopped(const pm_model_t *m)
{
    return m->stopped;
}

uint64_t pm_dropped(const pm_model_t *m)
{
    return m->dropped;
}

/* Has the time to stop come (a stop signal STOP_GRACE_NS ago, or stop_at)?  Checked every
 * 256th time only: reading the clock costs. */
static bool should_stop(pm_model_t *m)
{
    if (m->stopped)
        return true;
    if ((m->checks++ & 255) || (!m->stop_at && !(m->stop_flag && *m->stop_flag)))
        return false;
    uint64_t now = pr_now();
    if (m->stop_flag && *m->stop_flag && !m->stop_seen)
        m->stop_seen = now;
    m->stopped = (m->stop_seen && now > m->stop_seen + STOP_GRACE_NS) || (m->stop_at && now > m->stop_at);
    return m->stopped;
}

/* May h take one key more without the model passing its limit (a growth holds old and new)? */
static bool room_in(pm_model_t *m, const hmap_t *h)
{
    if (h->cap && (h->n + 1) * 4 <= h->cap * 3)
        return true;
    size_t grown = (h->cap ? h->cap * 2 : 64) * 2 * sizeof(uint64_t);
    if (pm_bytes(m) + grown <= m->limit)
        return true;
    m->capped = true;
    return false;
}

/* Memory for the lists that grow by realloc (mappings, replay, series): within the limit? */
static bool room_for(pm_model_t *m, size_t more)
{
    if (pm_bytes(m) + more <= m->limit)
        return true;
    m->capped = true;
    return false;
}

static uint64_t rel(const pm_model_t *m, uint64_t t)
{
    return t > m->t0 ? t - m->t0 : 0;
}

static pm_proc_t *proc_of(const pm_model_t *m, int32_t pid)
{
    uint64_t *v = hmap_get(&m->by_pid, (uint64_t)(uint32_t)pid);
    return v ? m->procs[*v - 1] : NULL;
}

/* A new image of pid, watched from t (ns since the window began). */
static pm_proc_t *image_new(pm_model_t *m, int32_t pid, uint64_t t, bool exec_first)
{
    if (m->nprocs == m->procs_cap) {
        size_t cap = m->procs_cap ? 2 * m->procs_cap : 16;
        pm_proc_t **g = realloc(m->procs, cap * sizeof *g);
        bool *e = realloc(m->exec_first, cap * sizeof *e);
        if (g)
            m->procs = g;
        if (e)
            m->exec_first = e;
        if (!g || !e)
            return NULL;
        m->procs_cap = cap;
    }
    pm_proc_t *p = room_for(m, sizeof *p) ? calloc(1, sizeof *p) : NULL;
    if (!p || hmap_put(&m->by_pid, (uint64_t)(uint32_t)pid, m->nprocs + 1)) {
        free(p);
        return NULL;
    }
    p->pid = pid;
    p->idx = (uint32_t)m->nprocs;
    p->parent_idx = -1;
    p->start_t = t;
    p->series_step = 1;
    m->exec_first[m->nprocs] = exec_first;
    p->before_exec = exec_first;
    m->other_bytes += sizeof *p;
    m->procs[m->nprocs++] = p;
    return p;
}

/* ---- mappings ------------------------------------------------------------ */

/* Room for two more mappings: 0, or -ENOMEM (out of memory, or past the model's limit). */
static int maps_reserve(pm_model_t *m, pm_proc_t *p)
{
    if (p->nmaps + 2 <= p->maps_cap)
        return 0;
    size_t cap = p->maps_cap ? 2 * p->maps_cap : 64;
    struct pm_map *g = room_for(m, (cap - p->maps_cap) * sizeof *g) ? realloc(p->maps, cap * sizeof *g) : NULL;
    if (!g)
        return -ENOMEM;
    m->other_bytes += (cap - p->maps_cap) * sizeof *g;
    p->maps = g, p->maps_cap = cap;
    return 0;
}

/* The first mapping of p that ends after addr (p->nmaps: none). */
static size_t map_index(const pm_proc_t *p, uint64_t addr)
{
    size_t lo = 0, hi = p->nmaps;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->maps[mid].hi <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Removes [lo, hi) from p's mappings, splitting any that straddle it (one may become two).
 * Found by binary search: a call that removes nothing (anonymous memory) costs log n. */
static void maps_remove(pm_model_t *m, pm_proc_t *p, uint64_t lo, uint64_t hi)
{
    size_t i = map_index(p, lo), j = i;
    while (j < p->nmaps && p->maps[j].lo < hi)
        j++;
    if (i == j)
        return; /* nothing mapped there */
    struct pm_map left = p->maps[i], right = p->maps[j - 1];
    struct pm_map keep[2];
    size_t nkeep = 0;
    if (left.lo < lo)
        left.hi = lo, keep[nkeep++] = left;
    if (right.hi > hi)
        right.lo = hi, keep[nkeep++] = right;
    if (nkeep > j - i && maps_reserve(m, p))
        nkeep = j - i; /* no room for a split: the part past hi is forgotten */
    memmove(p->maps + i + nkeep, p->maps + j, (p->nmaps - j) * sizeof *p->maps);
    memcpy(p->maps + i, keep, nkeep * sizeof *keep);
    p->nmaps = p->nmaps - (j - i) + nkeep;
}

static void maps_add(pm_model_t *m, pm_proc_t *p, uint64_t lo, uint64_t hi, const char *name)
{
    maps_remove(m, p, lo, hi);
    bool named = name[0] == '/' && name[1] != '/'; /* perf names anonymous memory "//anon" */
    bool file = named && strncmp(name, "/dev/zero", 9) && strncmp(name, "/memfd:", 7);
    if (!named || hi <= lo)
        return; /* anonymous: the removal was the news */
    if (maps_reserve(m, p))
        return;
    uint32_t handle = strpool_add(&m->names, name, SIZE_MAX);
    const char *b = strrchr(name, '/');
    if (b && !strncmp(b + 1, "libc.so", 7))
        p->has_libc = true;
    size_t i = map_index(p, lo); /* in address order: /proc/PID/maps' order appends */
    memmove(p->maps + i + 1, p->maps + i, (p->nmaps - i) * sizeof *p->maps);
    p->maps[i] = (struct pm_map){lo, hi, handle, file};
    p->nmaps++;
}

static const struct pm_map *map_at(const pm_proc_t *p, uint64_t addr)
{
    size_t i = map_index(p, addr);
    return i < p->nmaps && p->maps[i].lo <= addr ? &p->maps[i] : NULL;
}

const char *pm_file_at(const pm_model_t *m, const pm_proc_t *p, uint64_t addr)
{
    const struct pm_map *x = map_at(p, addr);
    return x ? pm_lib_name(m, x->name) : "";
}

void pm_files(const pm_model_t *m, const pm_proc_t *p, void (*fn)(void *ctx, const char *path), void *ctx)
{
    uint32_t last = 0;
    for (size_t i = 0; i < p->nmaps; i++)
        if (p->maps[i].name != last)
            fn(ctx, pm_lib_name(m, last = p->maps[i].name));
}

/* /proc/PID/NAME whole, read here (when no reader was given). */
static int read_direct(int pid, const char *name, char **buf, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
    FILE *f = fopen(path, "re");
    if (!f)
        return -errno;
    size_t cap = 1u << 16, n = 0;
    char *b = malloc(cap + 1);
    for (size_t r; b && (r = fread(b + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            char *g = realloc(b, 2 * cap + 1);
            if (!g)
                break;
            b = g, cap *= 2;
        }
    }
    fclose(f);
    if (!b)
        return -ENOMEM;
    b[n] = '\0';
    *buf = b, *len = n;
    return 0;
}

void pm_set_reader(pm_model_t *m, pm_read_fn fn)
{
    m->read = fn;
}

/* p's mappings as /proc/PID/maps lists them now (read by the model's reader: reading maps
 * takes the process's memory-map lock, which the process can hold). */
static void maps_read(pm_model_t *m, pm_proc_t *p)
{
    char *buf = NULL;
    size_t len = 0;
    if ((m->read ? m->read : read_direct)((int)p->pid, "maps", &buf, &len) || !buf)
        return;
    for (char *line = buf, *end; line < buf + len; line = end + 1) {
        end = memchr(line, '\n', (size_t)(buf + len - line));
        if (!end)
            end = buf + len;
        *end = '\0';
        unsigned long long lo, hi;
        int off = 0;
        if (sscanf(line, "%llx-%llx %*s %*s %*s %*s %n", &lo, &hi, &off) < 2 || !off)
            continue;
        if (line[off] == '/')
            maps_add(m, p, lo, hi, line + off);
    }
    free(buf);
}

static void read_comm(pm_proc_t *p)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)p->pid);
    FILE *f = fopen(path, "re");
    if (f) {
        if (fgets(p->comm, sizeof p->comm, f))
            p->comm[strcspn(p->comm, "\n")] = '\0';
        fclose(f);
    }
}

int pm_watch(pm_model_t *m, pid_t pid, bool read_maps, bool exec_first)
{
    pm_proc_t *p = image_new(m, (int32_t)pid, 0, exec_first);
    if (!p)
        return -ENOMEM;
    if (read_maps) {
        maps_read(m, p);
        read_comm(p);
    }
    if (m->follow) { /* every process now running and not watched stays unwatched */
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (isdigit((unsigned char)e->d_name[0])) {
                long q = strtol(e->d_name, NULL, 10);
                if (q != pid)
                    hmap_put(&m->others, (uint64_t)q, 1);
            }
        if (d)
            closedir(d);
    }
    return 0;
}

int pm_watch_all(pm_model_t *m, pid_t self)
{
    m->all = true;
    m->self = (int32_t)self;
    DIR *d = opendir("/proc");
    if (!d)
        return -errno;
    struct dirent *e;
    while ((e = readdir(d)))
        if (isdigit((unsigned char)e->d_name[0])) {
            int32_t q = (int32_t)strtol(e->d_name, NULL, 10);
            if (q == self || q == m->ignored)
                continue;
            pm_proc_t *p = image_new(m, q, 0, false);
            if (!p) {
                closedir(d);
                return -ENOMEM;
            }
            maps_read(m, p);
            read_comm(p);
        }
    closedir(d);
    return 0;
}

bool pm_wants(void *ctx, int32_t pid)
{
    pm_model_t *m = ctx;
    if (pid == m->ignored)
        return false;
    if (m->all)
        return pid > 0 && pid != m->self;
    if (hmap_get(&m->by_pid, (uint64_t)(uint32_t)pid))
        return true;
    return m->follow && pid > 0 && !hmap_get(&m->others, (uint64_t)(uint32_t)pid);
}

/* ---- the replay ------------------------------------------------------------ */

static void series_note(pm_model_t *m, pm_proc_t *p, uint64_t t)
{
    for (int k = 0; k < 2; k++)
        if (p->kept[k] > p->peak[k])
            p->peak[k] = p->kept[k];
    if (p->nseries && t < p->series[p->nseries - 1].t + 10000000ull * p->series_step)
        return;
    if (!p->series) {
        if (!room_for(m, PM_SERIES * sizeof *p->series) || !(p->series = malloc(PM_SERIES * sizeof *p->series)))
            return;
        m->other_bytes += PM_SERIES * sizeof *p->series;
    }
    if (p->nseries == PM_SERIES) { /* keep every other point, twice as far apart from now on */
        for (size_t i = 0; i < PM_SERIES / 2; i++)
            p->series[i] = p->series[2 * i];
        p->nseries = PM_SERIES / 2;
        p->series_step *= 2;
    }
    p->series[p->nseries++] = (pm_point_t){t, {p->kept[0], p->kept[1]}};
}

/* ---- give-back ------------------------------------------------------------- */

static uint64_t key_of(uint32_t idx, uint64_t page)
{
    return ((uint64_t)idx << 36) | (page & ((1ull << 36) - 1));
}

/* A page new to the model: false (nothing added) past the model's limit.  *chunk_known: its
 * 2 MiB chunk is in `chunks` already (found once per chunk by a give-back's loop; NULL: look). */
static bool page_new(pm_model_t *m, pm_proc_t *p, uint64_t pg, uint64_t val, bool *chunk_known)
{
    uint64_t ck = key_of(p->idx, pg / CHUNK_PAGES);
    bool known = chunk_known ? *chunk_known : hmap_get(&m->chunks, ck) != NULL;
    if (!room_in(m, &m->pages) || (!known && !room_in(m, &m->chunks)))
        return false;
    if (hmap_put(&m->pages, key_of(p->idx, pg), val))
        return m->capped = true, false;
    if (!p->pg_hi || pg < p->pg_lo)
        p->pg_lo = pg;
    if (pg + 1 > p->pg_hi)
        p->pg_hi = pg + 1;
    if (!known && hmap_put(&m->chunks, ck, 1))
        m->capped = true;
    if (chunk_known)
        *chunk_known = true;
    return true;
}

/* Page pg of p given back at t (see give_back). */
static void give_page(pm_model_t *m, pm_proc_t *p, uint64_t pg, pm_by_t by, bool lazy, bool alloc, uint64_t t,
                      bool *chunk_known, bool whole)
{
    uint64_t *v = hmap_get(&m->pages, key_of(p->idx, pg));
    unsigned st = v ? ST_OF(*v) : ST_NONE;
    if (lazy) {
        if (st != ST_GONE && v)
            *v = PACK(ST_LAZY, 0, t);
        else if (!v && !page_new(m, p, pg, PACK(ST_LAZY, 0, t), chunk_known))
            p->untracked_bytes += PAGE;
        return;
    }
    if (st == ST_GONE) { /* given back twice: a madvise'd page now unmapped leaves the madvise-only keep */
        unsigned d = DETAIL_OF(*v);
        if ((d & 3u) == PM_BY_MADVISE && by != PM_BY_MADVISE && (d & 4u)) {
            p->kept[0] -= PAGE;
            *v = PACK(ST_GONE, GONE_DETAIL(by, 1, GONE_ALLOC(d)), TIME_OF(*v));
        }
        return;
    }
    /* a page is kept by the setting if it was in use: all madvise'd pages (allocators
     * advise what they dirtied), unmapped ones only where the window saw them touched */
    bool counted = alloc && (by == PM_BY_MADVISE || st == ST_TOUCHED || st == ST_REFAULTED);
    uint64_t val = PACK(ST_GONE, GONE_DETAIL(by, counted, alloc) | (whole ? GONE_WHOLE : 0u), t);
    if (v) {
        *v = val;
    } else if (!page_new(m, p, pg, val, chunk_known)) {
        p->untracked_bytes += PAGE; /* past the limit: neither kept nor told apart when it returns */
        return;
    }
    if (counted) {
        p->kept[1] += PAGE;
        if (by == PM_BY_MADVISE)
            p->kept[0] += PAGE;
    }
}

/* [lo, hi) of p given back at t, by `by` (lazy: MADV_FREE), by its allocator or other code.
 * Past the model's limit only pages it holds already are followed: a 2 MiB chunk it holds
 * none of is counted as untracked in one step, so a call costs its chunks, not its pages. */
static void give_back(pm_model_t *m, pm_proc_t *p, uint64_t lo, uint64_t hi, pm_by_t by, bool lazy, bool alloc,
                      uint64_t t)
{
    if (hi <= lo || lo >= USER_TOP)
        return;
    if (hi > USER_TOP)
        hi = USER_TOP;
    if (hi - lo > PM_RANGE_MAX) {
        p->untracked_bytes += hi - lo;
        return;
    }
    uint64_t first = lo / PAGE, end = (hi + PAGE - 1) / PAGE;
    if (m->capped) { /* only pages the model holds can change: those between p's lowest and highest */
        uint64_t in_lo = first > p->pg_lo ? first : p->pg_lo, in_hi = end < p->pg_hi ? end : p->pg_hi;
        if (in_hi <= in_lo) {
            p->untracked_bytes += (end - first) * PAGE;
            series_note(m, p, t);
            return;
        }
        p->untracked_bytes += ((in_lo - first) + (end - in_hi)) * PAGE;
        first = in_lo, end = in_hi;
    }
    for (uint64_t c = first / CHUNK_PAGES; c <= (end - 1) / CHUNK_PAGES; c++) {
        uint64_t a = c * CHUNK_PAGES > first ? c * CHUNK_PAGES : first;
        uint64_t b = (c + 1) * CHUNK_PAGES < end ? (c + 1) * CHUNK_PAGES : end;
        bool known = hmap_get(&m->chunks, key_of(p->idx, c)) != NULL;
        if (should_stop(m) || (m->capped && !known)) {
            p->untracked_bytes += (b - a) * PAGE;
            continue;
        }
        /* the allocator's call covered the whole aligned block: a huge page could have held it */
        bool whole = alloc && !lazy && b - a == CHUNK_PAGES;
        for (uint64_t pg = a; pg < b; pg++)
            give_page(m, p, pg, by, lazy, alloc, t, &known, whole);
        uint64_t *cv = whole ? hmap_get(&m->chunks, key_of(p->idx, c)) : NULL;
        if (cv)
            *cv = CHUNK_WHOLE | (t & TIME_MASK);
    }
    series_note(m, p, t);
}

static void on_madvise(pm_model_t *m, pm_proc_t *p, const uint64_t *a, bool alloc, uint64_t t)
{
    uint64_t start = a[0], len = (a[1] + PAGE - 1) & ~(PAGE - 1);
    unsigned adv = (unsigned)a[2];
    unsigned slot = adv < PM_NADVICE ? adv : PM_NADVICE;
    p->advice_calls[slot]++;
    p->advice_bytes[slot] += len;
    if (adv == MADV_FREE) {
        p->lazy_bytes += len;
        give_back(m, p, start, start + len, PM_BY_MADVISE, true, alloc, t);
    } else if (adv == MADV_DONTNEED || adv == MADV_REMOVE || adv == 24 /* MADV_DONTNEED_LOCKED */ ||
               adv == 21 /* MADV_PAGEOUT */) {
        give_back(m, p, start, start + len, PM_BY_MADVISE, false, alloc, t);
    }
}

static bool is_allocator_lib(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    if (!strncmp(b, "libc.so", 7))
        return true; /* glibc's malloc; a program's own call of libc's wrapper is told apart by the caller */
    return alloc_by_library(b, NULL) != NULL;
}

/* Did p's allocator make this call?  The code that entered the kernel (ip), or, where that is a
 * libc wrapper, its caller (the return address a leaf wrapper leaves on the stack top).  In a
 * process without libc (a static program) its own code may be the allocator: counted as it. */
static bool by_allocator(pm_model_t *m, pm_proc_t *p, const uint64_t *a)
{
    const struct pm_map *at = a[6] ? map_at(p, a[6]) : NULL, *ret = a[7] ? map_at(p, a[7]) : NULL;
    const char *lib = at ? pm_lib_name(m, at->name) : "";
    const char *b = strrchr(lib, '/');
    if (b && !strncmp(b + 1, "libc.so", 7) && ret && ret->name != at->name)
        lib = pm_lib_name(m, ret->name);
    if (!lib[0])
        return false;
    if (is_allocator_lib(lib))
        return true;
    return !p->has_libc; /* no libc mapped: a static program */
}

/* A call that returned: apply it (failed calls are only counted). */
static void on_call(pm_model_t *m, pm_proc_t *p, const pending_t *c, int64_t ret, uint64_t t)
{
    const uint64_t *a = c->a;
    if (ret < 0 && ret > -4096 && c->sys != PR_SYS_BRK) {
        p->failed++;
        return;
    }
    bool alloc = by_allocator(m, p, a);
    uint64_t bytes = 0;
    switch (c->sys) {
    case PR_SYS_MADVISE:
        bytes = (a[1] + PAGE - 1) & ~(PAGE - 1);
        on_madvise(m, p, a, alloc, t);
        break;
    case PR_SYS_MUNMAP:
        bytes = a[1];
        if (alloc)
            p->unmapped_debt += (a[1] + PAGE - 1) & ~(PAGE - 1);
        give_back(m, p, a[0], a[0] + a[1], PM_BY_MUNMAP, false, alloc, t);
        maps_remove(m, p, a[0], a[0] + a[1]);
        break;
    case PR_SYS_BRK: {
        uint64_t nb = (uint64_t)ret;
        if (p->brk && nb < p->brk) {
            uint64_t lo = (nb + PAGE - 1) & ~(PAGE - 1);
            bytes = p->brk - lo;
            give_back(m, p, lo, p->brk, PM_BY_BRK, false, alloc, t);
        }
        p->brk = nb;
        break;
    }
    case PR_SYS_MREMAP: /* shrunk in place: the tail is given back; a move keeps the pages */
        if ((uint64_t)ret == a[0] && a[2] < a[1]) {
            bytes = a[1] - a[2];
            give_back(m, p, a[0] + a[2], a[0] + a[1], PM_BY_MUNMAP, false, alloc, t);
        }
        break;
    case PR_SYS_MMAP: /* MAP_FIXED over pages in use discards them (only chunks the model holds are looked at) */
        if ((a[3] & MAP_FIXED) && a[1] <= PM_RANGE_MAX && a[0] < USER_TOP) {
            uint64_t first = a[0] / PAGE, end = (a[0] + a[1] + PAGE - 1) / PAGE;
            for (uint64_t c = first / CHUNK_PAGES; end > first && c <= (end - 1) / CHUNK_PAGES; c++) {
                if (should_stop(m) || !hmap_get(&m->chunks, key_of(p->idx, c)))
                    continue;
                uint64_t lo = c * CHUNK_PAGES > first ? c * CHUNK_PAGES : first;
                uint64_t hi = (c + 1) * CHUNK_PAGES < end ? (c + 1) * CHUNK_PAGES : end;
                for (uint64_t pg = lo; pg < hi; pg++) {
                    uint64_t *v = hmap_get(&m->pages, key_of(p->idx, pg));
                    if (v && (ST_OF(*v) == ST_TOUCHED || ST_OF(*v) == ST_REFAULTED)) {
                        bytes += PAGE;
                        give_back(m, p, pg * PAGE, (pg + 1) * PAGE, PM_BY_MUNMAP, false, alloc, t);
                    }
                }
            }
        }
        break;
    default:
        break;
    }
    /* a call counts where it gave memory back (every madvise and munmap; brk, mremap and
     * mmap only when they did) */
    if (bytes || c->sys == PR_SYS_MADVISE || c->sys == PR_SYS_MUNMAP) {
        p->calls[c->sys]++;
        p->bytes[c->sys] += bytes;
        p->alloc_calls[c->sys] += alloc;
        p->alloc_bytes[c->sys] += alloc ? bytes : 0;
    }
}

/* ---- faults ------------------------------------------------------------------ */

/* Remembers a re-faulted page once (its first re-fault). */
static void note_refaulted(pm_model_t *m, const pm_proc_t *p, uint64_t key, uint64_t addr)
{
    if (hmap_get(&m->refaulted, key) || !room_in(m, &m->refaulted) || hmap_put(&m->refaulted, key, 1))
        return;
    if (m->nrpages + 2 > m->rpages_cap) {
        size_t cap = m->rpages_cap ? 2 * m->rpages_cap : 4096;
        uint64_t *g = room_for(m, cap * sizeof *g) ? realloc(m->rpages, cap * sizeof *g) : NULL;
        if (!g)
            return;
        m->rpages = g, m->rpages_cap = cap;
    }
    m->rpages[m->nrpages++] = (uint64_t)(uint32_t)p->pid;
    m->rpages[m->nrpages++] = addr & ~(PAGE - 1);
}

const uint64_t *pm_refaulted_pages(const pm_model_t *m, size_t *n)
{
    *n = m->nrpages / 2;
    return m->rpages;
}

/* A re-fault on a page the allocator gave back (at vt) with its whole 2 MiB block: counted; the
 * block's first re-fault since that give-back also counts the block (its one huge fault, had a
 * huge page held it). */
static void whole_refault(pm_model_t *m, pm_proc_t *p, uint64_t addr, uint64_t vt)
{
    p->alloc_refault_whole++;
    uint64_t *cv = hmap_get(&m->chunks, key_of(p->idx, addr / PAGE / CHUNK_PAGES));
    if (cv && (*cv & CHUNK_WHOLE) && !(*cv & CHUNK_RETOUCHED) && (*cv & TIME_MASK) == (vt & TIME_MASK)) {
        p->alloc_whole_blocks++;
        *cv |= CHUNK_RETOUCHED;
    }
}

static void on_fault(pm_model_t *m, pm_proc_t *p, uint64_t addr, bool major, uint64_t t)
{
    p->faults++;
    p->majors += major;
    if (addr >= USER_TOP || addr < PAGE) {
        p->cls[PM_OTHER]++;
        return;
    }
    const struct pm_map *x = map_at(p, addr);
    if (x && x->file) {
        p->cls[PM_FILE]++;
        return;
    }
    uint64_t key = key_of(p->idx, addr / PAGE), *v = hmap_get(&m->pages, key);
    unsigned st = v ? ST_OF(*v) : ST_NONE;
    uint64_t vt = v ? TIME_OF(*v) : 0;
    if (st == ST_GONE) {
        unsigned d = DETAIL_OF(*v), by = d & 3u;
        int b = pm_age_bucket(t - vt);
        p->cls[PM_REFAULT]++;
        p->age[b]++;
        p->refault_pages++;
        p->refault_by[by]++;
        if (GONE_ALLOC(d))
            p->alloc_refault_by[by]++, p->alloc_refault_pages++;
        if (d & GONE_WHOLE)
            whole_refault(m, p, addr, vt);
        if (GONE_ALLOC(d) && by == PM_BY_MUNMAP && p->unmapped_debt >= PAGE)
            p->unmapped_debt -= PAGE; /* it came back at the same address */
        if (d & 4u) {
            p->kept[1] -= PAGE;
            if (by == PM_BY_MADVISE)
                p->kept[0] -= PAGE;
        }
        *v = PACK(ST_REFAULTED, REFAULT_DETAIL(b, by, GONE_ALLOC(d)) | (d & GONE_WHOLE ? REFAULT_WHOLE : 0u), t);
        series_note(m, p, t);
        note_refaulted(m, p, key, addr);
        return;
    }
    if (st == ST_REFAULTED && !(p->last_fork_t > vt)) {
        unsigned d = DETAIL_OF(*v);
        p->cls[PM_REFAULT]++;
        p->age[d & 7u]++;
        p->refault_by[(d >> 3) & 3u]++;
        if (d & 32u)
            p->alloc_refault_by[(d >> 3) & 3u]++;
        if (d & REFAULT_WHOLE)
            p->alloc_refault_whole++;
        *v = PACK(ST_TOUCHED, 0, t); /* one re-touch has two faults at most: later ones are other */
        return;
    }
    if (st == ST_LAZY) {
        p->cls[PM_LAZY]++;
    } else if ((st == ST_TOUCHED || st == ST_REFAULTED) && p->last_fork_t > vt) {
        p->cls[PM_COW]++;
        return; /* its time stays the first touch's: a child forked since still inherited it */
    } else if (st == ST_TOUCHED) {
        p->cls[PM_OTHER]++;
    } else if (st == ST_NONE && p->parent_idx >= 0) {
        uint64_t *pv = hmap_get(&m->pages, key_of((uint32_t)p->parent_idx, addr / PAGE));
        bool inherited = pv && (ST_OF(*pv) == ST_TOUCHED || ST_OF(*pv) == ST_REFAULTED) && TIME_OF(*pv) < p->fork_t;
        p->cls[inherited ? PM_COW : PM_FIRST]++;
    } else {
        p->cls[PM_FIRST]++;
        if (p->unmapped_debt >= PAGE) {
            p->unmapped_debt -= PAGE;
            p->first_after_unmap++;
        }
    }
    if (v)
        *v = PACK(ST_TOUCHED, 0, t);
    else
        (void)page_new(m, p, addr / PAGE, PACK(ST_TOUCHED, 0, t), NULL); /* past the limit: a later re-fault reads as first */
}

/* ---- cpu samples ---------------------------------------------------------- */

/* One sample more for the file `name`: its own entry, made on its first sample. */
static void lib_count(pm_libs_t *libs, uint32_t name)
{
    for (size_t i = 0; i < libs->n; i++)
        if (libs->v[i].name == name) {
            libs->v[i].samples++;
            return;
        }
    if (libs->n == libs->cap) {
        size_t cap = libs->cap ? 2 * libs->cap : 16;
        pm_lib_t *g = realloc(libs->v, cap * sizeof *g);
        if (!g) {
            libs->unkept++;
            return;
        }
        libs->v = g, libs->cap = cap;
    }
    libs->v[libs->n++] = (pm_lib_t){name, 1};
}

static uint32_t lib_of(const pm_proc_t *p, uint64_t ip)
{
    const struct pm_map *x = ip ? map_at(p, ip) : NULL;
    return x ? x->name : 0;
}

static void on_cpu(pm_model_t *m, pm_proc_t *p, const pr_rec_t *r)
{
    p->samples++;
    p->at[r->at]++;
    if (r->at == PR_AT_FAULT) {
        lib_count(&p->fault_libs, lib_of(p, r->a[0]));
    } else if (r->at == PR_AT_GIVEBACK) {
        p->at_sys[r->sys]++;
        /* the caller past libc's syscall wrapper, where the chain reaches it */
        uint32_t name = lib_of(p, r->a[0]);
        for (int k = 1; k < PR_USER_IPS && r->a[k]; k++) {
            uint32_t n = lib_of(p, r->a[k]);
            if (n && !strstr(pm_lib_name(m, n), "/libc.so")) {
                name = n;
                break;
            }
        }
        lib_count(&p->giveback_libs, name);
    }
}

/* ---- records ---------------------------------------------------------------- */

static pending_t *pending_for(pm_model_t *m, int32_t tid, bool make)
{
    uint64_t *v = hmap_get(&m->by_tid, (uint64_t)(uint32_t)tid);
    if (v)
        return &m->pend[*v - 1];
    if (!make)
        return NULL;
    if (m->npend == m->pend_cap) {
        size_t cap = m->pend_cap ? 2 * m->pend_cap : 256;
        pending_t *g = realloc(m->pend, cap * sizeof *g);
        if (!g)
            return NULL;
        m->pend = g, m->pend_cap = cap;
    }
    if (hmap_put(&m->by_tid, (uint64_t)(uint32_t)tid, m->npend + 1))
        return NULL;
    pending_t *c = &m->pend[m->npend++];
    memset(c, 0, sizeof *c);
    return c;
}

/* The image a record belongs to, made when a fork or --all brings a new one. */
static pm_proc_t *image_for(pm_model_t *m, const pr_rec_t *r, uint64_t t)
{
    pm_proc_t *p = proc_of(m, r->pid);
    if (r->kind == PR_FORK && r->pid != (int32_t)r->a[0]) {
        pm_proc_t *parent = proc_of(m, (int32_t)r->a[0]);
        if (!parent || m->exec_first[parent->idx])
            return NULL;
        parent->last_fork_t = t; /* its own copy-on-write faults count, children followed or not */
        if (!m->follow && !m->all)
            return NULL;
        pm_proc_t *c = image_new(m, r->pid, t, false);
        if (!c)
            return NULL;
        c->forked_child = true;
        c->parent_idx = (int32_t)parent->idx;
        c->fork_t = t;
        c->brk = parent->brk;
        memcpy(c->comm, parent->comm, sizeof c->comm);
        c->has_libc = parent->has_libc;
        if (parent->nmaps && room_for(m, (parent->nmaps + 2) * sizeof *c->maps) &&
            (c->maps = malloc((parent->nmaps + 2) * sizeof *c->maps))) {
            memcpy(c->maps, parent->maps, parent->nmaps * sizeof *c->maps);
            c->nmaps = parent->nmaps, c->maps_cap = parent->nmaps + 2;
            m->other_bytes += c->maps_cap * sizeof *c->maps;
        }
        return NULL; /* nothing more to do with the fork itself */
    }
    if (!p && m->all && r->pid > 0 && r->pid != m->self && r->pid != m->ignored)
        p = image_new(m, r->pid, t, false);
    return p;
}

void pm_feed(void *ctx, const pr_rec_t *r)
{
    pm_model_t *m = ctx;
    if (should_stop(m)) {
        m->dropped++;
        return;
    }
    uint64_t t = rel(m, r->time);
    pm_proc_t *p = image_for(m, r, t);
    if (!p) {
        m->tlb_other += r->kind == PR_CPU && r->at == PR_AT_TLB;
        return;
    }
    if (m->exec_first[p->idx]) {
        if (r->kind != PR_COMM || !r->sys)
            return;
        m->exec_first[p->idx] = false;
        p->before_exec = false;
        p->start_t = t;
    } else if (r->kind == PR_COMM && r->sys) { /* an exec: a new image of the same pid */
        p->ended = true;
        p->end_t = t;
        p = image_new(m, r->pid, t, false);
        if (!p)
            return;
    }
    if (p->ended)
        return;
    switch (r->kind) {
    case PR_FAULT:
    case PR_MAJOR:
        on_fault(m, p, r->a[0], r->kind == PR_MAJOR, t);
        break;
    case PR_ENTER: {
        pending_t *c = pending_for(m, r->tid, true);
        if (c) {
            c->sys = r->sys, c->valid = 1;
            memcpy(c->a, r->a, sizeof c->a);
        }
        break;
    }
    case PR_EXIT: {
        pending_t *c = pending_for(m, r->tid, false);
        if (c && c->valid && c->sys == r->sys) {
            c->valid = 0;
            on_call(m, p, c, (int64_t)r->a[0], t);
        }
        break;
    }
    case PR_CPU:
        on_cpu(m, p, r);
        break;
    case PR_COMM:
        snprintf(p->comm, sizeof p->comm, "%s", m->w ? pr_name(m->w, r->name) : "");
        break;
    case PR_MMAP:
        maps_add(m, p, r->a[0], r->a[0] + r->a[1], m->w ? pr_name(m->w, r->name) : "");
        break;
    case PR_GONE:
        if (r->pid == r->tid) {
            p->ended = true;
            p->end_t = t;
        }
        break;
    default:
        break;
    }
}

void pm_finish(pm_model_t *m, uint64_t t)
{
    for (size_t i = 0; i < m->nprocs; i++) {
        pm_proc_t *p = m->procs[i];
        if (!p->ended)
            p->end_t = rel(m, t);
        if (p->end_t < p->start_t)
            p->end_t = p->start_t;
        p->series_step = 0; /* the last point, whatever the spacing */
        if (p->nseries < PM_SERIES && p->series)
            p->series[p->nseries++] = (pm_point_t){p->end_t, {p->kept[0], p->kept[1]}};
    }
}

uint64_t pm_tlb_other(const pm_model_t *m)
{
    return m->tlb_other;
}

size_t pm_count(const pm_model_t *m)
{
    return m->nprocs;
}

const pm_proc_t *pm_at(const pm_model_t *m, size_t i)
{
    return i < m->nprocs ? m->procs[i] : NULL;
}
