/* trace.h - the allocation trace (.mbt): what `mallocbench record` writes
 * (record/mbrecord.c, preloaded into the program) and what the `replay`
 * workload reads (workloads/replay.c).  The byte layout is documented for
 * users in docs/trace.md; this header is its one definition in code.
 *
 * Layout, all integers little-endian, no padding between records:
 *   file header   mbt_header_t, then header.text_len bytes of text
 *                 ("key=value\n" lines: command, allocator, machine, ...)
 *   chunks        mbt_chunk_t, then payload_len bytes, repeated to the end
 * The harness writes the file header; every recorded process appends its
 * chunks with O_APPEND, one write() per chunk, so chunks of different
 * threads and processes never interleave.  A thread's chunks appear in the
 * file in the order it wrote them (chunk.seq counts them per thread).
 *
 * Chunk kinds:
 *   MBT_CHUNK_EVENTS   payload: payload_len / sizeof(mbt_event_t) events of
 *                      one thread (pid, tid), in program order
 *   MBT_CHUNK_PROCESS  payload: mbt_process_t then exe path text; written
 *                      once by each process when the recorder starts in it
 *                      (at exec, or in the child after fork), before any
 *                      events chunk of that pid; seq 0, tid the writer's.
 *                      An exec keeps the pid: a second PROCESS chunk of a
 *                      pid starts a new image whose threads' seq restart
 *
 * The reader (trace.c) is strict: a bad magic, an unknown version, kind
 * or op, a length past the end, a truncated record, a thread's chunk seq out
 * of order, a thread's time going backwards are errors that name the byte
 * offset where the file breaks.  One exception: a cut tail (the recording
 * stopped, or the disk filled, inside the last chunk) is read up to the last
 * whole chunk, and the trace says where it stopped (truncated_at). */
#ifndef MB_TRACE_H
#define MB_TRACE_H
#include <stddef.h>
#include <stdint.h>

#define MBT_MAGIC "MBTRACE"     /* 8 bytes with its NUL */
#define MBT_VERSION 2         /* 2 added MBT_MADVISE; version 1 traces are read too */
#define MBT_VERSION_MIN 1
#define MBT_CHUNK_MAGIC 0x4b43424du /* "MBCK" as little-endian bytes */
#define MBT_TEXT_MAX 65536      /* longest header text */
#define MBT_PAYLOAD_MAX 131072u /* longest chunk payload a writer makes (the
                                 * recorder's 4096-event buffer); a longer
                                 * one past the end is corruption, not a cut */

typedef struct {
    char magic[8];              /* MBT_MAGIC */
    uint32_t version;           /* MBT_VERSION */
    uint32_t header_len;        /* sizeof(mbt_header_t): later versions may grow it */
    uint32_t page_size;         /* of the recording machine */
    uint32_t text_len;          /* bytes of text after the header */
    uint64_t start_ns;          /* CLOCK_MONOTONIC when recording began; event times are relative to it */
} mbt_header_t;

enum { MBT_CHUNK_EVENTS = 1, MBT_CHUNK_PROCESS = 2 };

typedef struct {
    uint32_t magic;             /* MBT_CHUNK_MAGIC */
    uint32_t kind;              /* MBT_CHUNK_* */
    uint32_t pid, tid;
    uint32_t seq;               /* per (pid, tid), from 0 */
    uint32_t payload_len;       /* bytes after this header */
} mbt_chunk_t;

typedef struct {
    uint32_t pid, ppid;
    uint64_t start_ns;          /* when the recorder started in this process
                                 * (CLOCK_MONOTONIC, absolute like header.start_ns) */
    uint32_t forked;            /* 1: a fork child (no exec), 0: started by exec */
    uint32_t exe_len;           /* bytes of exe path after this struct */
} mbt_process_t;

/* Operations.  ptr/size/arg per op:
 *   MALLOC, VALLOC, PVALLOC   ptr result, size requested, arg 0
 *   CALLOC                    ptr result, size nmemb*size, arg nmemb
 *   REALLOC                   ptr result, size requested, arg old pointer
 *   FREE                      ptr freed, size 0, arg: pages of the block the
 *                             program had touched (resident), 0 = unknown
 *   POSIX_MEMALIGN, ALIGNED_ALLOC, MEMALIGN
 *                             ptr result, size requested, arg alignment
 *   THREAD_START              ptr 0, size 0, arg tid of the creating thread
 *   THREAD_END                all 0
 *   MADVISE                   ptr the address the program advised, size its
 *                             length, arg the advice (MADV_*): the program's
 *                             own madvise calls (numpy asks for huge pages on
 *                             its large buffers), not its allocator's (version 2)
 * A failed allocation has ptr 0.  realloc(p, 0) that freed p has ptr 0. */
typedef enum {
    MBT_MALLOC = 1,
    MBT_CALLOC,
    MBT_REALLOC,
    MBT_FREE,
    MBT_POSIX_MEMALIGN,
    MBT_ALIGNED_ALLOC,
    MBT_MEMALIGN,
    MBT_VALLOC,
    MBT_PVALLOC,
    MBT_THREAD_START,
    MBT_THREAD_END,
    MBT_MADVISE,
    MBT_OP_COUNT
} mbt_op_t;

/* One event, 32 bytes.  t_op: nanoseconds since header.start_ns in the
 * high 56 bits, the op in the low 8. */
typedef struct {
    uint64_t t_op;
    uint64_t ptr;
    uint64_t size;
    uint64_t arg;
} mbt_event_t;

/* The on-disk sizes of the records: the reader (trace.c) steps through a
 * file by these, and the writers write the structs whole, so the two must
 * agree; a struct that grows or gains padding fails the build here. */
#define MBT_HEADER_SIZE 32u
#define MBT_CHUNK_SIZE 24u
#define MBT_PROCESS_SIZE 24u
#define MBT_EVENT_SIZE 32u
_Static_assert(sizeof(mbt_header_t) == MBT_HEADER_SIZE, "mbt_header_t is 32 bytes on disk");
_Static_assert(sizeof(mbt_chunk_t) == MBT_CHUNK_SIZE, "mbt_chunk_t is 24 bytes on disk");
_Static_assert(sizeof(mbt_process_t) == MBT_PROCESS_SIZE, "mbt_process_t is 24 bytes on disk");
_Static_assert(sizeof(mbt_event_t) == MBT_EVENT_SIZE, "mbt_event_t is 32 bytes on disk");

#define MBT_T(e) ((e)->t_op >> 8)
#define MBT_OP(e) ((mbt_op_t)((e)->t_op & 0xff))
#define MBT_T_OP(t, op) (((uint64_t)(t) << 8) | (uint64_t)(op))

/* Name of an op ("malloc"), or NULL. */
const char *mbt_op_name(unsigned op);

/* ---- reading --------------------------------------------------------------- */

typedef struct {
    uint32_t pid, tid;
    size_t nev;
    mbt_event_t *ev;            /* in program order */
    size_t proc;                /* index in mbt_trace_t.proc of its process */
} mbt_thread_t;

typedef struct {
    uint32_t pid, ppid;
    uint32_t forked;
    uint64_t start_ns;
    char *exe;
    size_t first_image;         /* index in mbt_trace_t.proc of its pid's first image */
    size_t next_image;          /* of the pid's next image (after an exec); 0: none */
    size_t thread0, nthreads;   /* its threads: mbt_trace_t.proc_thread[thread0..+nthreads] */
} mbt_proc_t;

typedef struct {
    uint32_t version, page_size;
    uint64_t start_ns;
    char *text;                 /* the header text, NUL-terminated */
    size_t nproc;
    mbt_proc_t *proc;           /* in file order: proc[0] is the recorded command */
    size_t nthread;
    mbt_thread_t *thread;       /* grouped by (pid, tid), in order of first chunk;
                                 * a pid that exec'd again (a second PROCESS
                                 * chunk) starts new threads */
    size_t *proc_thread;        /* thread indices by process image, in thread order */
    uint64_t nevents;
    size_t truncated_at;        /* 0: read to the end; else the byte where the
                                 * file's cut last chunk begins (read up to it) */
} mbt_trace_t;

/* Parse a whole trace held in memory; 0, or -EINVAL with one line in err:
 * "byte N: <what is wrong>" (or -ENOMEM).  t is freed on error.  A file whose
 * last chunk is cut (its header, or a payload of at most MBT_PAYLOAD_MAX
 * bytes, runs past the end) parses up to that chunk: 0, t->truncated_at set
 * and err holding the warning "byte N: ..."; otherwise err is "" on 0. */
int mbt_parse(const void *buf, size_t len, mbt_trace_t *t, char *err, size_t errlen);
/* Read and parse a file: as mbt_parse, err prefixed with "'path': ". */
int mbt_read(const char *path, mbt_trace_t *t, char *err, size_t errlen);
void mbt_free(mbt_trace_t *t);
/* Value of a header text key ("command"), copied into out; -ENOENT. */
int mbt_text_get(const mbt_trace_t *t, const char *key, char *out, size_t len);

/* Totals of one process: events per op, frees (and reallocs) of addresses
 * never allocated in the trace, and the bytes the program held: its
 * threads' events merged by time, each live block counted at its requested
 * size.  A pid that exec'd is counted image by image (live blocks end at an
 * exec); live_bytes_end is the last image's.
 *
 * replay_peak_bytes is what a replay of the process holds at most (the
 * accounting of workloads/replay.c, which the memory check before a replay
 * and `trace` use): a block made again at a live address adds (the replay
 * keeps the first, whose free it never sees), and a new exec image adds to
 * what the images before it left live (the replay runs them all in one
 * process).  It is never less than peak_live_bytes. */
typedef struct {
    uint64_t count[MBT_OP_COUNT];   /* by op; [0] unused */
    uint64_t unknown_free;
    uint64_t peak_live_bytes, live_bytes_end, bytes_allocated;
    uint64_t replay_peak_bytes, replay_live_bytes;
    uint64_t nthreads;
} mbt_stats_t;

/* Stats of process pid (0: proc[0]'s, the recorded command): 0, -ENOENT
 * when no process has that pid, -ENOMEM.  Finding pid reads the process
 * list; the rest costs as many steps as the process has events. */
int mbt_stats(const mbt_trace_t *t, uint32_t pid, mbt_stats_t *s);
/* The same for the pid of image proc[k] (all its images): no search, so a
 * pass over every process costs as many steps as the trace has events. */
int mbt_stats_proc(const mbt_trace_t *t, size_t k, mbt_stats_t *s);

#endif
