/* sysinfo.h - the machine a run was measured on, for the JSON sidecar:
 * CPU, cores, memory, kernel, THP mode, NUMA nodes, the cgroup's memory limit,
 * the boot, glibc, perf_event_paranoid, the machine's calibrated costs and the
 * project's git commit.  Missing facts are null, never guessed. */
#ifndef MB_SYSINFO_H
#define MB_SYSINFO_H
#include <stdbool.h>
#include <stdio.h>

/* The machine's own costs, from `calibrate` (cached per boot; calibrate.h):
 * what decides an allocator's result and differs across a fleet. */
typedef struct {
    bool have;                /* false: not measured (why says) */
    bool cached;              /* read from this boot's cache, not measured now */
    double fault_ns;          /* one minor fault on fresh memory, zeroing included */
    double refault_ns;        /* one re-fault on memory given back (MADV_DONTNEED), whole */
    double refault_sys_ns;    /* its system time */
    double memcpy_bps;        /* memcpy bandwidth into a resident buffer, B/s */
    double load1;             /* the 1-minute load average when it was measured */
    double steal;             /* the share of the CPUs' time the host stole while it was measured */
    double huge_fault_ns;     /* one 2 MiB huge-page fault, written; NaN: no fault was shown huge */
    double huge_faults;       /* the faults it was timed over (each shown huge by the range's AnonHugePages) */
    double huge_fallbacks;    /* faults of the advised range given 4 KiB pages instead */
    long long measured_at;    /* Unix time */
    char thp_enabled[16];     /* THP's enabled and defrag words as it was measured ("": no THP in the kernel) */
    char thp_defrag[16];
    char why[160];
    char huge_why[160];       /* why huge_fault_ns is NaN, in one line ("" when measured) */
} machine_calib_t;

/* The calibration's figures, one list for the sidecar's JSON and the per-boot cache:
 * X(key, member of machine_calib_t, the sidecar's printf format). */
#define MACHINE_CALIB_FIGURES(X)                                                                    \
    X("fault_ns", fault_ns, "%.0f")                                                                 \
    X("refault_ns", refault_ns, "%.0f")                                                             \
    X("refault_sys_ns", refault_sys_ns, "%.0f")                                                     \
    X("memcpy_bytes_per_s", memcpy_bps, "%.4g")                                                     \
    X("load1", load1, "%.2f")                                                                       \
    X("steal", steal, "%.4f")                                                                       \
    X("huge_fault_ns", huge_fault_ns, "%.0f")                                                       \
    X("huge_faults", huge_faults, "%.0f")                                                           \
    X("huge_fallbacks", huge_fallbacks, "%.0f")

/* The "machine" object's members (no braces), indented by two, cal (or NULL) as its
 * "calibration" member: JSON text for the sidecar (sidecar.h), malloc'd; NULL when out of memory. */
char *sysinfo_machine_json(const machine_calib_t *cal);
/* This boot's id (/proc/sys/kernel/random/boot_id), or "". */
void sysinfo_boot_id(char *buf, size_t len);
/* The 1-minute load average, or NAN. */
double sysinfo_load1(void);
/* The source tree's commit ("<sha>" or "<sha>-dirty"), or "" outside git. */
void sysinfo_git_commit(char *buf, size_t len);
void sysinfo_hostname(char *buf, size_t len);
/* /proc/cpuinfo's "model name", or "unknown cpu". */
void sysinfo_cpu_model(char *buf, size_t len);

#endif
