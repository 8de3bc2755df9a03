/* diagdoc.h - diagnose's document (schema mallocbench-diagnose-raw/1): what the page model
 * (pagemodel.h) and the rings (perfring.h) measured of a window, each image's allocator
 * (ident.h), as one JSON document for mallocbench.diagnose.  Every key is defined once, in
 * DIAGDOC_KEYS below, with its type and meaning; the writer names keys only through it, and
 * `mallocbench schema --diagnose` prints it (the scripts' tests hold diagnose.py to it). */
#ifndef MB_DIAGDOC_H
#define MB_DIAGDOC_H
#include "ident.h"
#include "pagemodel.h"
#include "perfring.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define DIAGDOC_SCHEMA "mallocbench-diagnose-raw/1"

/* Key sets: a key written "{set}" in DIAGDOC_KEYS stands for each name of its set, in order. */
#define DIAGDOC_CALLS(X) X(madvise) X(munmap) X(brk) X(mremap) X(mmap_fixed)  /* pr_sys_t */
#define DIAGDOC_CLASSES(X) X(first_touch) X(refault) X(lazy_reclaimed) X(cow) X(file) X(other) /* pm_class_t */
#define DIAGDOC_BYS(X) X(madvise) X(munmap) X(brk)                             /* pm_by_t */
#define DIAGDOC_ATS(X) X(user) X(kernel) X(fault) X(giveback) X(tlb)           /* pr_at_t */
#define DIAGDOC_KEPTS(X) X(madvise) X(any)                                     /* pm_proc_t.kept[] */

/* X(id, parent, key, type, meaning): parent is another id (root: the document); the keys of
 * an object are written in this order.  Types: DD_TEXT, DD_INT, DD_NUM (a number), DD_NUM_NULL
 * (a number or null), DD_BOOL, DD_OBJECT, DD_OBJECT_NULL (an object or null), DD_LIST (of
 * objects: its children are their keys), DD_TEXTS, DD_INTS, DD_SERIES (of [s, bytes, bytes]). */
#define DIAGDOC_KEYS(X) \
    X(schema, root, "schema", DD_TEXT, DIAGDOC_SCHEMA " (mallocbench.diagnose --json: mallocbench-diagnose/1)") \
    X(mode, root, "mode", DD_TEXT, "pid (-p), all (--all) or command (-- CMD)") \
    X(target, root, "target", DD_OBJECT, "what was watched, as asked") \
    X(target_pid, target, "pid", DD_INT, "-p's process, or the command's (0: --all)") \
    X(target_children, target, "children", DD_BOOL, "--children: the processes it starts watched too") \
    X(target_command, target, "command", DD_TEXTS, "the command as given (-- CMD ARGS; empty otherwise)") \
    X(target_exec_command, target, "exec_command", DD_TEXTS, "the command as `mallocbench exec` takes it: an env(1) in front without its allocator variables") \
    X(target_exec_dropped, target, "exec_dropped", DD_TEXTS, "the names of the allocator variables exec_command left out (never their values)") \
    X(target_allocator, target, "allocator", DD_TEXT, "-a, as exec takes it (\"\": the command's own allocator)") \
    X(target_tunables, target, "tunables", DD_TEXTS, "-t FAMILY:NAME=VALUE, as given") \
    X(target_exit_status, target, "exit_status", DD_INT, "the command's exit code, 128+signal; -1 unknown or not a command") \
    X(window, root, "window", DD_OBJECT, "the window watched") \
    X(window_started_unix, window, "started_unix", DD_INT, "when it started, s since 1970") \
    X(window_seconds, window, "seconds", DD_NUM, "how long it lasted, s") \
    X(window_ended, window, "ended", DD_TEXT, "why it ended: duration, exit, interrupted, terminated, out of memory...") \
    X(window_thp_faults, window, "thp_faults", DD_NUM_NULL, "machine-wide: faults that got a transparent huge page (Δ/proc/vmstat thp_fault_alloc; null: unreadable)") \
    X(window_thp_fallbacks, window, "thp_fallbacks", DD_NUM_NULL, "machine-wide: huge-page faults that fell back to small pages (Δthp_fault_fallback)") \
    X(window_thp_pmd_splits, window, "thp_pmd_splits", DD_NUM_NULL, "machine-wide: huge pages split in a mapping (Δthp_split_pmd: a give-back of part of one)") \
    X(watch, root, "watch", DD_OBJECT, "the events and the page model: what bounds the counts") \
    X(watch_cpus, watch, "cpus", DD_INT, "CPUs watched (one ring each)") \
    X(watch_records, watch, "records", DD_INT, "records read from the rings") \
    X(watch_lost, watch, "lost", DD_INT, "records the kernel lost (the rings were full): the counts are lower bounds") \
    X(watch_throttled, watch, "throttled", DD_INT, "times the kernel throttled the events") \
    X(watch_kernel_symbols, watch, "kernel_symbols", DD_BOOL, "kernel symbols were read: CPU samples are split by place") \
    X(watch_cpu_period_ns, watch, "cpu_period_ns", DD_INT, "one cpu-clock sample per this many ns of a CPU") \
    X(watch_fault_period, watch, "fault_period", DD_INT, "one minor fault recorded in this many (--light; 1: every one)") \
    X(watch_other_calls, watch, "other_calls", DD_OBJECT, "give-back calls entered by processes not watched, by call") \
    X(watch_other_call, watch_other_calls, "{call}", DD_INT, "calls") \
    X(watch_tlb_other_samples, watch, "tlb_other_samples", DD_INT, "TLB-flush IPI samples in processes not watched (the idle task included)") \
    X(watch_model_bytes, watch, "model_bytes", DD_INT, "the page model's memory at the end, bytes") \
    X(watch_model_limit, watch, "model_limit", DD_INT, "its cap (--max-memory less the rings and diagnose's own), bytes") \
    X(watch_capped, watch, "capped", DD_BOOL, "the cap was reached: pages past it counted in untracked_bytes") \
    X(watch_dropped_records, watch, "dropped_records", DD_INT, "records after the window's end or a stop signal, not taken") \
    X(watch_lower_bounds, watch, "lower_bounds", DD_BOOL, "capped, dropped or lost records: every count is a lower bound") \
    X(calibrate_fault_ns, root, "calibrate_fault_ns", DD_NUM_NULL, "--calibrate: a first-touch fault on this machine, ns (null: not measured)") \
    X(calibrate_refault_ns, root, "calibrate_refault_ns", DD_NUM_NULL, "--calibrate: a re-fault after MADV_DONTNEED, whole, ns") \
    X(calibrate_refault_sys_ns, root, "calibrate_refault_sys_ns", DD_NUM_NULL, "--calibrate: the system time of that re-fault, ns") \
    X(calibrate_huge_fault_ns, root, "calibrate_huge_fault_ns", DD_NUM_NULL, "--calibrate: a 2 MiB huge-page fault, ns (null: not measured, or the kernel gave no huge page)") \
    X(self_cpu_s, root, "self_cpu_s", DD_NUM_NULL, "diagnose's own CPU over the window, s") \
    X(procs, root, "processes", DD_LIST, "the images watched (an exec starts another; --all: the busiest 200, most lost first)") \
    X(proc_pid, procs, "pid", DD_INT, "its process id") \
    X(proc_image, procs, "image", DD_INT, "its index among the images (an exec starts another)") \
    X(proc_comm, procs, "comm", DD_TEXT, "its name (/proc/PID/comm)") \
    X(proc_cmdline, procs, "cmdline", DD_TEXTS, "its command line: the program's name, the arguments only with --show-args") \
    X(proc_args_hidden, procs, "args_hidden", DD_INT, "arguments left out of cmdline") \
    X(proc_forked, procs, "forked", DD_BOOL, "born in the window by fork") \
    X(proc_parent_image, procs, "parent_image", DD_INT, "forked: the image it was copied from, else -1") \
    X(proc_ended, procs, "ended", DD_BOOL, "it exited in the window") \
    X(proc_seconds, procs, "seconds", DD_NUM, "how long it was watched, s") \
    X(proc_faults, procs, "faults", DD_OBJECT, "its faults (recorded: one minor in fault_period)") \
    X(proc_faults_minor, proc_faults, "minor", DD_INT, "minor faults") \
    X(proc_faults_major, proc_faults, "major", DD_INT, "major faults") \
    X(proc_faults_class, proc_faults, "{class}", DD_INT, "faults of each class; the classes sum to minor + major") \
    X(proc_faults_refault_age, proc_faults, "refault_age", DD_INTS, "re-faults by the age of their give-back: <10 ms, <100 ms, <1 s, <10 s, older") \
    X(proc_faults_refault_pages, proc_faults, "refault_pages", DD_INT, "distinct 4 KiB pages re-faulted") \
    X(proc_faults_alloc_refault_pages, proc_faults, "alloc_refault_pages", DD_INT, "of them, pages the allocator had given back") \
    X(proc_faults_alloc_refault_whole, proc_faults, "alloc_refault_whole", DD_INT, "of the allocator's re-faults, those on pages it gave back with their whole 2 MiB-aligned block in one call") \
    X(proc_faults_alloc_whole_blocks, proc_faults, "alloc_whole_blocks", DD_INT, "the 2 MiB blocks those re-faults touched again (one a give-back): a huge page's faults in their place") \
    X(proc_faults_first_after_unmap, proc_faults, "first_after_unmap", DD_INT, "first touches of new memory while memory the allocator unmapped had not come back") \
    X(proc_faults_refault_by, proc_faults, "refault_by", DD_OBJECT, "re-faults by the call that gave the page back") \
    X(proc_faults_refault_by_call, proc_faults_refault_by, "{by}", DD_INT, "re-faults") \
    X(proc_faults_alloc_refault_by, proc_faults, "alloc_refault_by", DD_OBJECT, "the allocator's part of refault_by: what its keep setting can remove") \
    X(proc_faults_alloc_refault_by_call, proc_faults_alloc_refault_by, "{by}", DD_INT, "re-faults") \
    X(proc_calls, procs, "calls", DD_OBJECT, "give-back calls that succeeded, by call") \
    X(proc_call, proc_calls, "{call}", DD_OBJECT, "one call") \
    X(proc_call_calls, proc_call, "calls", DD_INT, "calls") \
    X(proc_call_bytes, proc_call, "bytes", DD_INT, "bytes given back") \
    X(proc_call_alloc_calls, proc_call, "alloc_calls", DD_INT, "calls the allocator made (its library, or libc, called the kernel)") \
    X(proc_call_alloc_bytes, proc_call, "alloc_bytes", DD_INT, "bytes the allocator gave back") \
    X(proc_advice, procs, "advice", DD_LIST, "madvise calls by advice, those made only") \
    X(proc_advice_advice, proc_advice, "advice", DD_TEXT, "MADV_... (other: a value past 32 or unnamed)") \
    X(proc_advice_calls, proc_advice, "calls", DD_INT, "calls") \
    X(proc_advice_bytes, proc_advice, "bytes", DD_INT, "bytes") \
    X(proc_failed_calls, procs, "failed_calls", DD_INT, "give-back calls that failed (not counted in calls)") \
    X(proc_lazy_bytes, procs, "lazy_bytes", DD_INT, "bytes freed lazily (MADV_FREE)") \
    X(proc_untracked_bytes, procs, "untracked_bytes", DD_INT, "bytes given back past the model's cap or PM_RANGE_MAX: counted, not followed") \
    X(proc_cpu, procs, "cpu_samples", DD_OBJECT, "its cpu-clock samples, by where they fell") \
    X(proc_cpu_all, proc_cpu, "all", DD_INT, "every sample") \
    X(proc_cpu_at, proc_cpu, "{at}", DD_INT, "samples in user space, the kernel (none below), the fault entry, the give-back calls, TLB-flush IPIs") \
    X(proc_cpu_giveback_by, proc_cpu, "giveback_by", DD_OBJECT, "the give-back samples by call") \
    X(proc_cpu_giveback_call, proc_cpu_giveback_by, "{call}", DD_INT, "samples") \
    X(proc_fault_libs, procs, "fault_libs", DD_LIST, "fault-path samples by the mapped file of the code that touched the page, the most first") \
    X(proc_fault_libs_lib, proc_fault_libs, "lib", DD_TEXT, "the file (or why none)") \
    X(proc_fault_libs_samples, proc_fault_libs, "samples", DD_INT, "samples") \
    X(proc_giveback_libs, procs, "giveback_libs", DD_LIST, "give-back samples by the mapped file of the code that made the call, the most first") \
    X(proc_giveback_libs_lib, proc_giveback_libs, "lib", DD_TEXT, "the file (or why none)") \
    X(proc_giveback_libs_samples, proc_giveback_libs, "samples", DD_INT, "samples") \
    X(proc_kept, procs, "kept_memory", DD_OBJECT, "the replay: bytes given back and not re-touched, as if kept") \
    X(proc_kept_peak, proc_kept, "peak_bytes", DD_OBJECT, "the most over the window") \
    X(proc_kept_peak_by, proc_kept_peak, "{kept}", DD_INT, "bytes: given back by madvise only, or by any call") \
    X(proc_kept_end, proc_kept, "end_bytes", DD_OBJECT, "at the window's end") \
    X(proc_kept_end_by, proc_kept_end, "{kept}", DD_INT, "bytes: given back by madvise only, or by any call") \
    X(proc_kept_series, proc_kept, "series", DD_SERIES, "[s, madvise bytes, any bytes], at most 200 points") \
    X(proc_alloc, procs, "allocator", DD_OBJECT, "its allocator and the settings it started with (ident.h)") \
    X(proc_alloc_family, proc_alloc, "family", DD_TEXT, "the family (\"\": none recognised)") \
    X(proc_alloc_sure, proc_alloc, "sure", DD_BOOL, "recognised by its own evidence (else: glibc or unrecognised)") \
    X(proc_alloc_how, proc_alloc, "how", DD_TEXT, "how it is there: preloaded, linked, static, built-in...") \
    X(proc_alloc_evidence, proc_alloc, "evidence", DD_TEXT, "what showed it") \
    X(proc_alloc_path, proc_alloc, "path", DD_TEXT, "its file") \
    X(proc_alloc_version, proc_alloc, "version", DD_TEXT, "its version (unknown: none found)") \
    X(proc_alloc_version_how, proc_alloc, "version_how", DD_TEXT, "where the version came from") \
    X(proc_alloc_environment_read, proc_alloc, "environment_read", DD_BOOL, "its environment was read") \
    X(proc_alloc_environment_from, proc_alloc, "environment_from", DD_TEXT, "process (read while it ran), command (the one diagnose gave it) or none") \
    X(proc_alloc_vars, proc_alloc, "vars", DD_TEXTS, "its allocator variables, NAME=value (no other variable is kept)") \
    X(proc_alloc_malloc_conf_file, proc_alloc, "malloc_conf_file", DD_TEXT, "what /etc/malloc.conf names") \
    X(proc_alloc_malloc_conf_compiled, proc_alloc, "malloc_conf_compiled", DD_TEXT, "the malloc_conf compiled into its program") \
    X(proc_alloc_as_exec, proc_alloc, "as_exec", DD_OBJECT, "how `mallocbench exec` would start it as it started") \
    X(proc_alloc_as_exec_library, proc_alloc_as_exec, "library", DD_TEXT, "its library where not the family's own (exec -a FAMILY:PATH), else \"\"") \
    X(proc_alloc_as_exec_settings, proc_alloc_as_exec, "settings", DD_TEXTS, "the settings its variables gave, as -t takes them") \
    X(proc_alloc_as_exec_not_settable, proc_alloc_as_exec, "not_settable", DD_TEXTS, "what of its variables no tunable says") \
    X(proc_alloc_keep, proc_alloc, "keep", DD_OBJECT_NULL, "the family's keep setting (null: none known)") \
    X(proc_alloc_keep_setting, proc_alloc_keep, "setting", DD_TEXT, "as the registry has it") \
    X(proc_alloc_keep_settings, proc_alloc_keep, "settings", DD_TEXTS, "NAME=VALUE, each tunable") \
    X(proc_alloc_keep_joined_by, proc_alloc_keep, "joined_by", DD_TEXT, "what joins it to a variable the process set already") \
    X(proc_alloc_keep_env, proc_alloc_keep, "env", DD_TEXTS, "the variables that set it") \
    X(proc_alloc_keep_stops, proc_alloc_keep, "stops", DD_TEXTS, "the calls it stops (madvise, munmap, brk)") \
    X(proc_alloc_huge_advise, proc_alloc, "huge_advise", DD_TEXT, "the family's huge-page setting, NAME=VALUE as -t takes it (\"\": none)") \
    X(proc_alloc_huge_none, proc_alloc, "huge_none", DD_TEXT, "why the family has none (\"\": it has one, or no family)") \
    X(proc_start, procs, "proc_start", DD_OBJECT_NULL, "-p's process only: /proc at the window's start (null: unreadable)") \
    X(proc_start_utime_s, proc_start, "utime_s", DD_NUM, "user CPU time, s") \
    X(proc_start_stime_s, proc_start, "stime_s", DD_NUM, "system CPU time, s") \
    X(proc_start_rss_kib, proc_start, "rss_kib", DD_INT, "RSS, KiB") \
    X(proc_start_anon_huge_kib, proc_start, "anon_huge_kib", DD_INT, "of it in transparent huge pages, KiB") \
    X(proc_start_anon_kib, proc_start, "anon_kib", DD_INT, "its anonymous memory (smaps_rollup Anonymous), KiB") \
    X(proc_end, procs, "proc_end", DD_OBJECT_NULL, "-p's process only: /proc at the window's end (null: unreadable)") \
    X(proc_end_utime_s, proc_end, "utime_s", DD_NUM, "user CPU time, s") \
    X(proc_end_stime_s, proc_end, "stime_s", DD_NUM, "system CPU time, s") \
    X(proc_end_rss_kib, proc_end, "rss_kib", DD_INT, "RSS, KiB") \
    X(proc_end_anon_huge_kib, proc_end, "anon_huge_kib", DD_INT, "of it in transparent huge pages, KiB") \
    X(proc_end_anon_kib, proc_end, "anon_kib", DD_INT, "its anonymous memory (smaps_rollup Anonymous), KiB") \
    X(proc_peak, procs, "proc_peak", DD_OBJECT_NULL, "-p's process or the command's: /proc read every 200 ms, the reading with the most anonymous memory (null: none read)") \
    X(proc_peak_anon_kib, proc_peak, "anon_kib", DD_INT, "its anonymous memory, KiB") \
    X(proc_peak_anon_huge_kib, proc_peak, "anon_huge_kib", DD_INT, "of it in transparent huge pages, KiB")

typedef enum { DD_TEXT, DD_INT, DD_NUM, DD_NUM_NULL, DD_BOOL, DD_OBJECT, DD_OBJECT_NULL, DD_LIST, DD_TEXTS, DD_INTS,
               DD_SERIES } diagdoc_type_t;

#define DIAGDOC_ENUM(id, parent, key, type, meaning) DK_##id,
typedef enum { DK_root = -1, DIAGDOC_KEYS(DIAGDOC_ENUM) DK_COUNT } diagdoc_key_t;
#undef DIAGDOC_ENUM

/* What /proc says of a process at one end of the window. */
typedef struct {
    bool ok;
    double utime_s, stime_s;
    uint64_t rss_kib, anon_huge_kib, anon_kib;
} diagdoc_pstat_t;

typedef enum { DIAGDOC_PID, DIAGDOC_ALL, DIAGDOC_COMMAND } diagdoc_mode_t;

/* Everything of the document the model and the rings do not hold: the command's
 * options, its window, and each image's reading (ident_capture, taken while it ran). */
typedef struct {
    diagdoc_mode_t mode;
    pid_t pid;                       /* -p's process or the command's */
    bool children;
    char *const *cmd;                /* the command as given, ncmd words */
    int ncmd;
    const char *const *exec_cmd;     /* as exec takes it (the words of cmd it keeps) */
    size_t nexec;
    const char *const *dropped;      /* the NAME=VALUE words exec_cmd left out (their names are written) */
    size_t ndropped;
    const char *family;              /* -a (NULL: none) */
    const char *const *tunables;     /* -t */
    size_t ntun;
    const char *exe_path;            /* the file the command runs (its first image's program, if not read) */
    char *const *envp;               /* the command's environment */
    unsigned fault_period;           /* --light's N, or 1 */
    uint64_t model_limit;            /* the page model's cap, bytes */
    int exit_status;                 /* the command's: its exit code, 128+signal; -1 unknown */
    time_t started;
    double seconds;
    const char *end_reason;
    double calib_ns, calib_refault_ns, calib_refault_sys_ns, calib_huge_ns; /* NAN: not measured */
    double self_cpu_s;
    double thp_faults, thp_fallbacks, thp_pmd_splits; /* machine-wide over the window; NAN: unreadable */
    diagdoc_pstat_t st0, st1;        /* -p's process at the window's ends */
    diagdoc_pstat_t peak;            /* -p's or the command's process: the reading with the most Anonymous */
    /* image idx's reading, or NULL (not read) */
    const ident_capture_t *(*capture)(void *ctx, uint32_t idx);
    void *capture_ctx;
} diagdoc_in_t;

/* The document of window `in`, measured by m and the rings (ps: pr_stats's), to f. */
void diagdoc_write(FILE *f, const pm_model_t *m, const pr_stats_t *ps, const diagdoc_in_t *in);

/* The key table as Markdown (`mallocbench schema --diagnose`), or as JSON for the scripts
 * (--json: every key's path, each {set} written out: "processes[].calls.madvise.bytes"). */
void diagdoc_print_keys(FILE *out);
void diagdoc_print_keys_json(FILE *out);

#endif
