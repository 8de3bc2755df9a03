/* csv.h - the one CSV schema.  Every column is defined once, in CSV_COLUMNS
 * below, with its unit and meaning; the header, results/SCHEMA.md
 * (`mallocbench schema`) and the row writer all come from it.  An empty
 * field means "not measured" (the row's status or counter_notes says why),
 * never 0.  Each row reaches the file in one write(), and a write that
 * fails part-way is cut back, so the file always ends in a whole row. */
#ifndef MB_CSV_H
#define MB_CSV_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CSV_SCHEMA_VERSION "9"

/* X(name, type, unit, description): type CSV_NUM (empty or a finite number)
 * or CSV_TEXT; `mallocbench schema --json` gives the scripts this table. */
#define CSV_COLUMNS(X) \
    X(schema_version, CSV_TEXT, "", "version of this schema; scripts refuse versions they do not know") \
    X(run_id, CSV_TEXT, "", "one invocation of `mallocbench run` (UTC time and random suffix)") \
    X(sample, CSV_NUM, "", "index of the sample within this invocation, from 0, in execution order") \
    X(matrix_id, CSV_TEXT, "hex", "identity of the run plan (its workloads, configurations and seed): equal across shards and resumed runs of one plan") \
    X(plan_seed, CSV_NUM, "", "seed of the block order; the same seed gives the same order") \
    X(block, CSV_NUM, "", "block of the plan, from 0: every configuration runs once per block") \
    X(position, CSV_NUM, "", "position within the block, from 0 (the shuffled order of the block's attempt); (block, attempt, position) names a sample") \
    X(attempt, CSV_NUM, "", "the block's measurement: 0 first; 1, 2 when the block was measured again whole because a sample of it was disturbed from outside (steal, run-queue wait beyond its own threads); readers use each block's last attempt") \
    X(shard, CSV_TEXT, "", "K/N when run with --shard, else empty") \
    X(timestamp, CSV_TEXT, "ISO 8601 UTC", "when the sample started") \
    X(host, CSV_TEXT, "", "host name") \
    X(workload, CSV_TEXT, "", "workload name") \
    X(workload_params, CSV_TEXT, "", "every workload parameter, defaults included: name=value,... (as asked, before --min-time scaling)") \
    X(work_scale, CSV_NUM, "", "factor --min-time applied to the workload's amount of work (steps, ops or bytes) so its measured region lasts long enough; fixed per configuration; 1 when not scaled") \
    X(allocator, CSV_TEXT, "", "allocator family asked for (`mallocbench list allocators`)") \
    X(config, CSV_TEXT, "", "the configuration's label (the allocator, or LABEL of -a LABEL=FAMILY[:PATH]) plus requested tunables, e.g. jemalloc[dirty_decay_ms=-1]: the unit compared") \
    X(lib_path, CSV_TEXT, "", "library preloaded (empty for the system allocator, part of libc)") \
    X(alloc_version, CSV_TEXT, "", "version the allocator reported from inside the child") \
    X(malloc_so, CSV_TEXT, "", "shared object that served malloc in the child (dladdr), proving the allocator") \
    X(requested_tunables, CSV_TEXT, "", "tunables asked for, canonical values (bytes, 0/1): name=value;...") \
    X(effective_tunables, CSV_TEXT, "", "every tunable the allocator reported back from inside the child: name=value;...") \
    X(huge, CSV_TEXT, "", "the configuration's huge-page condition (-t LABEL:huge=...): never (transparent huge pages off for the whole process tree, prctl PR_SET_THP_DISABLE), advise (the family's own huge-page setting on, see docs/thp.md) or system (the kernel's own mode, the default)") \
    X(huge_proof, CSV_TEXT, "", "THP_enabled as /proc/PID/status gave it for the tree's processes at each reading (every --tree-interval, and at the end of a workload's region), e.g. 'THP_enabled 0 in 12 of 12 process readings'; under huge=never a process read with it on makes the sample an error") \
    X(repetition, CSV_NUM, "", "repetition of this configuration, from 0") \
    X(status, CSV_TEXT, "", "ok | error | crashed | timeout") \
    X(message, CSV_TEXT, "", "why the status is not ok (signal, exit code, stderr, failed check)") \
    X(total_wall_s, CSV_NUM, "s", "whole process: wall time from exec to exit") \
    X(total_user_s, CSV_NUM, "s", "whole process: user CPU time (wait4 rusage, threads and children included)") \
    X(total_sys_s, CSV_NUM, "s", "whole process: system CPU time (wait4 rusage)") \
    X(total_task_clock_s, CSV_NUM, "s", "whole process: perf task-clock (CPU time on all threads)") \
    X(total_minor_faults, CSV_NUM, "count", "whole process: minor page faults (perf software event)") \
    X(total_major_faults, CSV_NUM, "count", "whole process: major page faults (perf software event)") \
    X(total_context_switches, CSV_NUM, "count", "whole process: context switches (perf)") \
    X(total_cpu_migrations, CSV_NUM, "count", "whole process: CPU migrations (perf)") \
    X(total_madvise_calls, CSV_NUM, "count", "whole process: madvise system calls (tracepoint syscalls:sys_enter_madvise)") \
    X(total_mmap_calls, CSV_NUM, "count", "whole process: mmap system calls (tracepoint)") \
    X(total_munmap_calls, CSV_NUM, "count", "whole process: munmap system calls (tracepoint)") \
    X(total_brk_calls, CSV_NUM, "count", "whole process: brk system calls (tracepoint)") \
    X(total_mremap_calls, CSV_NUM, "count", "whole process: mremap system calls (tracepoint)") \
    X(total_mprotect_calls, CSV_NUM, "count", "whole process: mprotect system calls (tracepoint)") \
    X(ru_maxrss_kib, CSV_NUM, "KiB", "whole process: peak resident set size (wait4 rusage)") \
    X(ru_minflt, CSV_NUM, "count", "whole process: minor faults as wait4 rusage counts them") \
    X(ru_majflt, CSV_NUM, "count", "whole process: major faults as wait4 rusage counts them") \
    X(region_wall_s, CSV_NUM, "s", "measured region (after warm-up): wall time, timed by the workload") \
    X(region_user_s, CSV_NUM, "s", "measured region: user CPU time (/proc/PID/stat, clock-tick resolution)") \
    X(region_sys_s, CSV_NUM, "s", "measured region: system CPU time (/proc/PID/stat, clock-tick resolution)") \
    X(region_task_clock_s, CSV_NUM, "s", "measured region: perf task-clock") \
    X(region_minor_faults, CSV_NUM, "count", "measured region: minor page faults") \
    X(region_major_faults, CSV_NUM, "count", "measured region: major page faults") \
    X(region_context_switches, CSV_NUM, "count", "measured region: context switches") \
    X(region_cpu_migrations, CSV_NUM, "count", "measured region: CPU migrations") \
    X(region_madvise_calls, CSV_NUM, "count", "measured region: madvise calls") \
    X(region_mmap_calls, CSV_NUM, "count", "measured region: mmap calls") \
    X(region_munmap_calls, CSV_NUM, "count", "measured region: munmap calls") \
    X(region_brk_calls, CSV_NUM, "count", "measured region: brk calls") \
    X(region_mremap_calls, CSV_NUM, "count", "measured region: mremap calls") \
    X(region_mprotect_calls, CSV_NUM, "count", "measured region: mprotect calls") \
    X(throughput, CSV_NUM, "throughput_unit", "measured region: the workload's primary figure (see metric, metric_better)") \
    X(throughput_unit, CSV_TEXT, "", "unit of throughput, e.g. B/s (bytes copied per second)") \
    X(metric, CSV_TEXT, "", "what throughput measures: the workload's primary figure, e.g. copy bandwidth") \
    X(metric_better, CSV_TEXT, "", "higher or lower: which way the primary figure (throughput) is better") \
    X(region_bytes, CSV_NUM, "bytes", "measured region: bytes the workload touched (copied)") \
    X(region_ops, CSV_NUM, "count", "measured region: allocations made") \
    X(checksum, CSV_TEXT, "hex", "workload checksum: equal across allocators for the same parameters") \
    X(limit_throughput, CSV_NUM, "throughput_unit", "the machine's limit for this workload: the same copies into buffers allocated once, before the loop, measured under glibc at the start of this row's block, or of the last block before it that measured it (every --limit-every blocks, default 5); empty when the workload has none") \
    X(fraction_of_limit, CSV_NUM, "ratio", "throughput / limit_throughput: how far from the machine's memcpy limit") \
    X(latency_what, CSV_TEXT, "", "what one latency value times: op (one allocation and its work) or step; empty when none") \
    X(latency_p50_us, CSV_NUM, "us", "measured region: median latency (HDR histogram, < 0.8% error)") \
    X(latency_p99_us, CSV_NUM, "us", "measured region: 99th percentile latency") \
    X(latency_p999_us, CSV_NUM, "us", "measured region: 99.9th percentile latency") \
    X(latency_max_us, CSV_NUM, "us", "measured region: largest latency") \
    X(latency_count, CSV_NUM, "count", "latencies recorded (sampled workloads time 1 in N)") \
    X(workload_metrics, CSV_TEXT, "", "workload-specific figures: name=value;... (see docs/workloads.md)") \
    X(rss_peak_kib, CSV_NUM, "KiB", "peak of the RSS sampled from /proc/PID/statm during the run") \
    X(rss_final_kib, CSV_NUM, "KiB", "RSS at the end of the measured region (what the allocator kept)") \
    X(rss_samples, CSV_NUM, "count", "RSS samples taken (time series in <output>.rss.csv)") \
    X(tree_pss_peak_kib, CSV_NUM, "KiB", "commands and servers: peak of the process tree's memory, the Pss of the process started and its descendants summed (/proc/PID/smaps_rollup, the tree listed again at each reading, every --tree-interval); a peak between two readings is missed; empty for workloads (one process: rss_peak_kib)") \
    X(region_run_delay_s, CSV_NUM, "s", "measured region: time the child's threads waited on a run queue for a CPU (/proc/PID/task/*/schedstat), summed over threads, for commands and servers over every process of the tree at each reading of the tree (--tree-interval); a thread that ended early counts to its last reading (every 10th RSS sample); the whole process for a command without a region") \
    X(region_involuntary_switches, CSV_NUM, "count", "measured region: the child's threads' involuntary context switches (preempted: /proc/PID/task/*/status), summed as region_run_delay_s (over the tree for commands and servers)") \
    X(steal_s, CSV_NUM, "s", "over the sample, machine-wide: CPU time the hypervisor gave to others (/proc/stat steal, all CPUs)") \
    X(khugepaged_collapses, CSV_NUM, "count", "over the sample, machine-wide: huge pages khugepaged collapsed (/proc/vmstat thp_collapse_alloc)") \
    X(compactions, CSV_NUM, "count", "over the sample, machine-wide: memory compactions (/proc/vmstat compact_stall + compact_daemon_wake)") \
    X(anon_huge_peak_kib, CSV_NUM, "KiB", "the process tree's anonymous memory in transparent huge pages (AnonHugePages of /proc/PID/smaps_rollup, summed over the tree) at the reading where its Anonymous was largest (readings every --tree-interval, and at the end of a workload's region; a workload is read alone); empty when never read") \
    X(huge_share_peak, CSV_NUM, "ratio", "anon_huge_peak_kib / the tree's Anonymous at that reading: the share of its anonymous memory in huge pages at its peak (0..1)") \
    X(thp_faults, CSV_NUM, "count", "over the sample, machine-wide: page faults that got a transparent huge page (/proc/vmstat thp_fault_alloc); no per-process counter exists without kprobes, so another task's count here adds to it (others_cpu_s)") \
    X(thp_fallbacks, CSV_NUM, "count", "over the sample, machine-wide: faults that asked for a huge page and got small ones (/proc/vmstat thp_fault_fallback)") \
    X(thp_pmd_splits, CSV_NUM, "count", "over the sample, machine-wide: huge-page mappings split into small ones (/proc/vmstat thp_split_pmd: what a MADV_DONTNEED or munmap on part of a huge page does)") \
    X(thp_page_splits, CSV_NUM, "count", "over the sample, machine-wide: huge pages split into small pages (/proc/vmstat thp_split_page; thp_deferred_split_page, a page queued for a split, is counted again here when it is split, and thp_underused_split_page is part of it)") \
    X(others_cpu_s, CSV_NUM, "s", "over the sample, machine-wide: CPU time of every task but the harness and its children (/proc/stat busy time less their own, clock ticks): above 0, other tasks ran and could have added to the machine-wide counts (thp_*, khugepaged_collapses, compactions)") \
    X(stragglers_killed, CSV_NUM, "count", "processes of the sample still running when it ended (a daemon, a setsid'd or double-forked grandchild: they reparent to the harness, its child subreaper), killed then so they cannot compete with later samples") \
    X(alloc_stats, CSV_TEXT, "", "allocator statistics at exit, from inside the child: name=value;...") \
    X(counter_notes, CSV_TEXT, "", "counters not counted and why, or scaled because multiplexed: name: reason;...")

#define CSV_ENUM(name, type, unit, desc) COL_##name,
typedef enum { CSV_COLUMNS(CSV_ENUM) COL_COUNT } csv_col_t;
#undef CSV_ENUM

typedef enum { CSV_TEXT, CSV_NUM } csv_type_t;

typedef struct {
    const char *name;
    csv_type_t type;
    const char *unit, *desc;
} csv_column_t;

extern const csv_column_t csv_columns[COL_COUNT];

/* Quote a field for RFC 4180 CSV when it holds a comma, quote, CR or LF. */
void csv_quote(const char *in, char *out, size_t len);

/* A row: fixed columns then extra ones (one per extra event and figure). */
#define CSV_FIELD_MAX 2048
#define CSV_EXTRA_MAX 64
typedef struct {
    char field[COL_COUNT][CSV_FIELD_MAX];
    size_t nextra;
    char extra[CSV_EXTRA_MAX][64];
} csv_row_t;

void csv_row_clear(csv_row_t *r);
void csv_set(csv_row_t *r, csv_col_t c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

typedef struct {
    int fd;
    bool regular;             /* a regular file: a failed write is cut back */
    bool raw;                 /* MALLOCBENCH_CSV_RAW: no formula guard (csv_column_guarded) */
    size_t nextra;
    char extra_names[CSV_EXTRA_MAX][96];
    size_t repaired_bytes;    /* csv_open_append: bytes of a torn last row dropped */
    bool added_newline;       /* csv_open_append: the last row lacked its newline */
} csv_writer_t;

/* Open (create or truncate) path and write the header, fixed columns then
 * extra_names.  -errno when the file cannot be written. */
int csv_open(csv_writer_t *w, const char *path, const char *const *extra_names, size_t nextra);
/* The same on a descriptor the caller opened (O_EXCL file, stdout, a
 * device); the writer owns fd from here, also on failure. */
int csv_open_fd(csv_writer_t *w, int fd, const char *const *extra_names, size_t nextra);
/* Append one row in a single write(); if the write fails part-way (disk
 * full, file size limit) a regular file is cut back to the last whole row
 * and -errno returned. */
int csv_write_row(csv_writer_t *w, const csv_row_t *r);
void csv_close(csv_writer_t *w);

/* A growing CSV to continue (a run's CSV, its RSS series): opened for
 * appending without following a link, refused unless a regular file with one
 * name.  The fd, or -errno with err filled in (-ENOENT: not there, err
 * untouched). */
int csv_continue(const char *path, char *err, size_t errlen);

/* Open an existing file to add rows (--resume): its header must be the one
 * csv_open would write, else -EPROTO with the reason in err.  A last row cut
 * short (a kill, a full disk) is dropped (repaired_bytes); a last row
 * without its newline gets one (added_newline), so rows never glue. */
int csv_open_append(csv_writer_t *w, const char *path, const char *const *extra_names, size_t nextra,
                    char *err, size_t errlen);

/* A whole CSV file in memory (RFC 4180: quoted fields, "" for a quote). */
typedef struct {
    size_t ncols, nrows;
    char **header;      /* ncols names */
    char ***rows;       /* nrows x ncols fields */
    char *header_line;  /* the header as written, for comparing files */
    size_t torn_bytes;  /* csv_read_torn: bytes of a torn last row left out */
    bool ends_with_newline;
} csv_table_t;

/* Parse CSV text (len bytes, not NUL-terminated; a NUL byte is refused).
 * Every row must have the header's number of fields.  -EPROTO / -ENOMEM
 * with "name: row N (line L): reason" in err; t is always left freeable
 * (and empty on failure). */
int csv_parse(const char *name, const char *buf, size_t len, csv_table_t *t, char *err, size_t errlen);
/* csv_parse of a whole file. */
int csv_read(const char *path, csv_table_t *t, char *err, size_t errlen);
/* The same, but a last row cut short (no newline, too few fields or an open
 * quote) is left out and counted in t->torn_bytes instead of refused. */
int csv_read_torn(const char *path, csv_table_t *t, char *err, size_t errlen);
void csv_table_free(csv_table_t *t);
/* Index of a column by name, or -1. */
int csv_col(const csv_table_t *t, const char *name);
/* Write one row of fields (ncols of them) in a single write(). */
int csv_write_fields(csv_writer_t *w, char *const *fields, size_t n);

/* results/SCHEMA.md content. */
void csv_print_schema(FILE *out);
/* The same table as JSON for the scripts: {"schema_version": "4", "columns":
 * [{"name", "type": "number"|"text", "unit", "meaning", "guarded"}, ...]} in
 * header order; guarded: csv_column_guarded. */
void csv_print_schema_json(FILE *out);

#endif
