/* pagemodel.h - what the records of perfring.h mean for the processes
 * watched: every fault classified (first touch; a re-fault on a range given
 * back, by its age; copy-on-write after fork; file-backed; other), every
 * give-back call that succeeded counted with its bytes, the cpu-clock
 * samples split by where they fell, and the window's give-back and
 * re-touch stream replayed as if the memory had been kept (the extra RSS a
 * keep setting would cost).  Each give-back call is told the allocator's or
 * other code's by the code that made it.  Records must come in time order.  Pages are
 * tracked at 4 KiB, keyed by process and page, so a process's exec or
 * exit never mixes with another's. */
#ifndef MB_PAGEMODEL_H
#define MB_PAGEMODEL_H
#include "perfring.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PM_NAGES 5      /* re-fault ages: <10 ms, <100 ms, <1 s, <10 s, older */
#define PM_NADVICE 32   /* madvise advice values counted by number; larger ones as "other" */
#define PM_SERIES 4096  /* points of the replay kept per process (then every other one) */
#define PM_RANGE_MAX (1ull << 30) /* a give-back above this is counted, not tracked page by page */
#define PM_DEFAULT_LIMIT (192ull << 20) /* the model's memory unless pm_limit says otherwise */

/* What the fault breakdown sums: every fault of the window is one of these. */
typedef enum { PM_FIRST, PM_REFAULT, PM_LAZY, PM_COW, PM_FILE, PM_OTHER, PM_NCLASS } pm_class_t;

/* How memory was given back: the keep settings stop some of these. */
typedef enum { PM_BY_MADVISE, PM_BY_MUNMAP, PM_BY_BRK, PM_NBY } pm_by_t;

typedef struct {
    uint32_t name;      /* the model's name handle of the mapped file (0: anonymous or unknown) */
    uint64_t samples;
} pm_lib_t;

/* cpu-clock samples by the mapped file their user address fell in: one entry per file, however
 * many files took a sample first (a loop's file is never folded into one that ran once at
 * start-up); unkept: samples no entry could be made for (out of memory). */
typedef struct {
    pm_lib_t *v;
    size_t n, cap;
    uint64_t unkept;
} pm_libs_t;

typedef struct {
    uint64_t t;         /* ns since the window began */
    uint64_t kept[2];   /* bytes given back and not re-touched: [0] by madvise only, [1] by any call */
} pm_point_t;

typedef struct pm_proc {
    int32_t pid;
    uint32_t idx;                 /* this image of the process (an exec starts another) */
    char comm[16];
    bool ended, forked_child;     /* exited in the window; born in it by fork */
    bool before_exec;             /* a command's first image: not its own yet (pm_watch exec_first) */
    int32_t parent_idx;           /* forked_child: the image it was copied from, else -1 */
    uint64_t fork_t, last_fork_t; /* when it was forked, when it last forked (0: not in the window) */
    uint64_t start_t, end_t;      /* watched from, to (ns since the window began) */
    uint64_t brk;                 /* its break as the last brk call returned (0: not seen) */
    /* faults */
    uint64_t faults, majors, cls[PM_NCLASS], age[PM_NAGES], refault_pages, refault_by[PM_NBY];
    /* give-back calls that succeeded, and their bytes; failed calls; MADV_FREE apart */
    uint64_t calls[PR_NSYS], bytes[PR_NSYS], failed;
    /* the part of them the allocator made (its library, or libc, called the kernel), and the
     * re-faults on what it gave back: what its keep setting can remove */
    uint64_t alloc_calls[PR_NSYS], alloc_bytes[PR_NSYS], alloc_refault_by[PM_NBY], alloc_refault_pages;
    /* of those re-faults, the ones on pages the allocator gave back with their whole 2 MiB-aligned
     * block in one call (what its huge-page setting could turn into one huge fault a block), and
     * the blocks they touched again (each block's first re-fault after such a give-back) */
    uint64_t alloc_refault_whole, alloc_whole_blocks;
    /* first touches of new memory while as many bytes the allocator unmapped had not come back:
     * memory given back returning at another address (mimalloc's huge blocks), a part of
     * first_touch; unmapped_debt: those bytes now */
    uint64_t first_after_unmap, unmapped_debt;
    uint64_t advice_calls[PM_NADVICE + 1], advice_bytes[PM_NADVICE + 1];
    uint64_t lazy_bytes, untracked_bytes;
    /* cpu-clock samples by place, give-back ones by call */
    uint64_t samples, at[PR_NAT], at_sys[PR_NSYS];
    pm_libs_t fault_libs, giveback_libs;
    /* the replay */
    uint64_t kept[2], peak[2];
    pm_point_t *series;
    size_t nseries, series_step;
    /* mappings: file-backed and executable ranges, sorted, not overlapping */
    struct pm_map *maps;
    size_t nmaps, maps_cap;
    bool has_libc;                /* libc.so is mapped (else a static program: its own code may allocate) */
    uint64_t pg_lo, pg_hi;        /* the lowest page the model holds of it, and past its highest (0, 0: none) */
} pm_proc_t;

typedef struct pm_model pm_model_t;

/* A model of the window that began at t0 (perfring's clock).  follow: the
 * processes a watched one forks are watched too. */
int pm_new(pm_model_t **out, uint64_t t0, bool follow);
void pm_free(pm_model_t *m);
/* Watch pid from now (its mappings read from /proc/PID/maps when
 * read_maps: a process already running).  exec_first: count nothing of it
 * until it execs (a command diagnose starts: its first image is ours). */
int pm_watch(pm_model_t *m, pid_t pid, bool read_maps, bool exec_first);
/* Every process on the host but ours, each with its mappings (--all). */
int pm_watch_all(pm_model_t *m, pid_t self);
/* Is pid watched (or possibly a new child of a watched one): perfring's want(). */
bool pm_wants(void *m, int32_t pid);
/* One record, in time order (perfring's fn). */
void pm_feed(void *m, const pr_rec_t *r);
/* The most memory the model may hold (its maps and lists, not what the allocator keeps
 * around them): past it no page is added, and what would have been is counted in
 * untracked_bytes (pm_capped says so: the counts are lower bounds then). */
void pm_limit(pm_model_t *m, uint64_t bytes);
/* What the model holds now, bytes. */
uint64_t pm_bytes(const pm_model_t *m);
bool pm_capped(const pm_model_t *m);
/* Memory the caller keeps for the model's processes (diagnose's readings of them), counted in
 * the same cap: pm_room says whether `more` fits (past it the model is capped), pm_account adds
 * (or, negative, takes off) what was kept. */
bool pm_room(pm_model_t *m, size_t more);
void pm_account(pm_model_t *m, int64_t bytes);
/* Stop taking records (every later one is counted in pm_dropped) 0.1 s after *flag turns
 * non-zero (a signal), or once perfring's clock passes at (0: never).  Checked inside every
 * long step, so that no record stream can hold the model past it. */
void pm_stop_when(pm_model_t *m, volatile sig_atomic_t *flag, uint64_t at);
uint64_t pm_dropped(const pm_model_t *m);
/* Has it stopped taking records (pm_stop_when's time came)? */
bool pm_stopped(const pm_model_t *m);
/* How the model reads /proc/PID/NAME ("maps"): 0 with a malloc'd NUL-ended buffer, or -errno.
 * diagnose's reader (procread.h), which no process can hold up; unset, the model reads it. */
typedef int (*pm_read_fn)(int pid, const char *name, char **buf, size_t *len);
void pm_set_reader(pm_model_t *m, pm_read_fn fn);
/* A process never watched, --all included (diagnose's own reader). */
void pm_ignore(pm_model_t *m, pid_t pid);
/* perfring's names, for the records' name handles. */
void pm_set_names(pm_model_t *m, const pr_watch_t *w);
/* The window ends at t (perfring's clock): closes the replay. */
void pm_finish(pm_model_t *m, uint64_t t);

/* The images watched, in the order they appeared. */
size_t pm_count(const pm_model_t *m);
const pm_proc_t *pm_at(const pm_model_t *m, size_t i);
/* The file mapped at addr in p ("" none): for a library's name. */
const char *pm_file_at(const pm_model_t *m, const pm_proc_t *p, uint64_t addr);
/* Every distinct file p mapped (for recognising its allocator): calls fn. */
void pm_files(const pm_model_t *m, const pm_proc_t *p, void (*fn)(void *ctx, const char *path), void *ctx);
/* The name of a library handle in pm_lib_t. */
const char *pm_lib_name(const pm_model_t *m, uint32_t name);

/* Every page re-faulted in the window, once each: *n entries of (pid, page address), valid
 * until the model is freed (for --stacks: which sampled faults touched re-faulted pages). */
const uint64_t *pm_refaulted_pages(const pm_model_t *m, size_t *n);

/* TLB-flush IPI samples that fell in processes not watched (the idle task
 * included): another CPU's flush, perhaps a watched process's. */
uint64_t pm_tlb_other(const pm_model_t *m);

#endif
