/* counters.c - perf_event_open counters on one child (see counters.h): fixed
 * software events and syscall tracepoints, plus user events resolved through
 * tracefs, libpfm4 or a small table of generic perf names.  A counter that
 * cannot be opened or read is reported unsupported with its reason, never 0.
 * Library functions return 0 or -errno and never exit. */
#include "counters.h"
#include "mb_config.h"
#include "tracefs.h"

#include <linux/perf_event.h>   /* before pfmlib: libpfm4 then skips its copy */

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if MB_HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h>
#endif

typedef enum { CNT_SRC_FIXED, CNT_SRC_TRACEPOINT, CNT_SRC_LIBPFM, CNT_SRC_GENERIC } cnt_src_t;

typedef struct {
    char *name;                       /* owned copy (fixed names too, for uniformity) */
    cnt_src_t src;
    bool resolved;                    /* attr is valid; otherwise reason says why not */
    struct perf_event_attr attr;      /* type/config as resolved; open adds the flags */
    unsigned long open_flags;         /* extra perf_event_open flags from libpfm4 */
    char reason[CNT_REASON_MAX];      /* why unresolved, or why the last open failed */
    int fd;
    int keep_fd;                      /* tracepoints: a disabled event on ourselves, see cnt_keep */
} cnt_ev_t;

struct cnt_set {
    size_t n;
    cnt_ev_t ev[CNT_MAX];
    bool is_open;
    bool excl_kernel;                 /* full counting was refused: user space only */
};

/* The fixed events (counters.h), indexed by CNT_EV_<name>. */
#define CNT_FIXED_SW(name, config) {#name, PERF_TYPE_SOFTWARE, config, NULL}
#define CNT_FIXED_TP(name, tracepoint) {#name, PERF_TYPE_TRACEPOINT, 0, #tracepoint}
#define CNT_FIXED_ROW(name, src, what, total, region, unit) [CNT_EV_##name] = CNT_FIXED_##src(name, what),
static const struct {
    const char *name;
    uint32_t type;                    /* PERF_TYPE_SOFTWARE or PERF_TYPE_TRACEPOINT */
    uint64_t config;                  /* software config, unused for tracepoints */
    const char *tracepoint;           /* syscalls:<this> */
} cnt_fixed[CNT_NFIXED] = {CNT_FIXED_EVENTS(CNT_FIXED_ROW)};
#undef CNT_FIXED_ROW

#define CNT_CACHE(c, op, res) ((uint64_t)(c) | ((uint64_t)(op) << 8) | ((uint64_t)(res) << 16))

/* Generic perf names, used when libpfm4 is absent or does not know a name. */
static const struct {
    const char *name;
    uint32_t type;
    uint64_t config;
} cnt_generic[] = {
    { "cycles",                  PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
    { "cpu-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
    { "instructions",            PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
    { "cache-references",        PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
    { "cache-misses",            PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
    { "branches",                PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
    { "branch-instructions",     PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
    { "branch-misses",           PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
    { "ref-cycles",              PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
    { "stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
    { "stalled-cycles-backend",  PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
    { "L1-dcache-loads",         PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_L1D,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS) },
    { "L1-dcache-load-misses",   PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_L1D,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
    { "L1-icache-load-misses",   PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_L1I,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
    { "LLC-loads",               PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_LL,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS) },
    { "LLC-load-misses",         PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_LL,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
    { "dTLB-loads",              PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_DTLB,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS) },
    { "dTLB-load-misses",        PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_DTLB,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
    { "iTLB-load-misses",        PERF_TYPE_HW_CACHE, CNT_CACHE(PERF_COUNT_HW_CACHE_ITLB,
        PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
    { "cpu-clock",               PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
    { "task-clock",              PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
    { "page-faults",             PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
    { "faults",                  PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
    { "minor-faults",            PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
    { "major-faults",            PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
    { "context-switches",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
    { "cs",                      PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
    { "cpu-migrations",          PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
    { "migrations",              PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
    { "alignment-faults",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS },
    { "emulation-faults",        PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS },
};

/* ---- process-wide discovery: libpfm4, last privilege level (tracefs: tracefs.h) ---- */

static int cnt_last_excl = -1;                  /* exclude_kernel of the last open, -1: none yet */

#if MB_HAVE_LIBPFM
static pthread_once_t cnt_pfm_once = PTHREAD_ONCE_INIT;
static int cnt_pfm_status = PFM_ERR_NOINIT;
#endif

/* A tracepoint category or name: letters, digits, '_' and '-' only, so that
 * it can never leave the events/ directory. */
static bool cnt_tp_token(const char *s, size_t len)
{
    if (len == 0 || len > 64)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
            return false;
    return true;
}

/* Read the id of tracepoint cat:name from tracefs; 0 or -errno. */
static int cnt_tp_id(const char *cat, size_t catlen, const char *name, uint64_t *id)
{
    const char *tfs = tracefs_dir();
    char path[PATH_MAX], buf[32], *end;
    FILE *f;
    size_t n;

    if (!tfs)
        return -ENOENT;
    snprintf(path, sizeof path, "%s/events/%.*s/%s/id", tfs, (int)catlen, cat, name);
    f = fopen(path, "re");
    if (!f)
        return errno ? -errno : -EIO;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    errno = 0;
    *id = strtoull(buf, &end, 10);
    if (errno || end == buf || (*end != '\n' && *end != '\0'))
        return -EINVAL;
    return 0;
}

int cnt_tracepoint_id(const char *cat, const char *name, uint64_t *id)
{
    if (!cnt_tp_token(cat, strlen(cat)) || !cnt_tp_token(name, strlen(name)))
        return -EINVAL;
    return cnt_tp_id(cat, strlen(cat), name, id);
}

#if MB_HAVE_LIBPFM
static void cnt_pfm_init(void)
{
    cnt_pfm_status = pfm_initialize();
}
#endif

static int cnt_paranoid(void)
{
    FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
    int v = 99;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = 99;
        fclose(f);
    }
    return v;
}

static int cnt_sys_open(struct perf_event_attr *a, pid_t pid, unsigned long flags)
{
    long fd = syscall(SYS_perf_event_open, a, pid, -1, -1, flags | PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : (int)fd;
}

/* ---- the set ---- */

__attribute__((format(printf, 3, 4)))
static void cnt_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Resolve one user event name into ev; 0 or -errno with err filled. */
static int cnt_resolve(cnt_ev_t *ev, const char *name, char *err, size_t errlen)
{
    const char *colon = strchr(name, ':');
    uint64_t id = 0;

    bool tp_form = colon && !strchr(colon + 1, ':') &&
                   cnt_tp_token(name, (size_t)(colon - name)) &&
                   cnt_tp_token(colon + 1, strlen(colon + 1));

    /* category:name under tracefs events/ is a tracepoint */
    if (tp_form && cnt_tp_id(name, (size_t)(colon - name), colon + 1, &id) == 0) {
        ev->src = CNT_SRC_TRACEPOINT;
        ev->attr.type = PERF_TYPE_TRACEPOINT;
        ev->attr.config = id;
        ev->resolved = true;
        return 0;
    }

    const char *why = "not a tracepoint or generic perf event name (built without libpfm4)";
#if MB_HAVE_LIBPFM
    pthread_once(&cnt_pfm_once, cnt_pfm_init);
    if (cnt_pfm_status == PFM_SUCCESS) {
        struct perf_event_attr attr;
        pfm_perf_encode_arg_t arg;
        memset(&attr, 0, sizeof attr);
        attr.size = sizeof attr;
        memset(&arg, 0, sizeof arg);
        arg.attr = &attr;
        arg.size = sizeof arg;
        int r = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
        if (r == PFM_SUCCESS) {
            ev->src = CNT_SRC_LIBPFM;
            ev->attr = attr;
            ev->open_flags = (unsigned long)arg.flags;
            ev->resolved = true;
            return 0;
        }
        why = pfm_strerror(r);
    } else {
        why = "libpfm4 failed to initialize";
    }
#endif
    for (size_t i = 0; i < sizeof cnt_generic / sizeof cnt_generic[0]; i++) {
        if (strcmp(name, cnt_generic[i].name) == 0) {
            ev->src = CNT_SRC_GENERIC;
            ev->attr.type = cnt_generic[i].type;
            ev->attr.config = cnt_generic[i].config;
            ev->resolved = true;
            return 0;
        }
    }
    if (tp_form && !tracefs_dir())
        cnt_set_err(err, errlen, "unknown event '%s': %s (and %s)", name, why, tracefs_why());
    else if (tp_form)
        cnt_set_err(err, errlen, "unknown event '%s': %s, and no such tracepoint", name, why);
    else
        cnt_set_err(err, errlen, "unknown event '%s': %s", name, why);
    return -EINVAL;
}

int cnt_set_new(cnt_set_t **out, const char *const *extra, size_t nextra,
                char *err, size_t errlen)
{
    cnt_set_t *s;
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!out || (nextra && !extra)) {
        cnt_set_err(err, errlen, "cnt_set_new: invalid arguments");
        return -EINVAL;
    }
    *out = NULL;
    if (nextra > CNT_MAX - CNT_NFIXED) {
        cnt_set_err(err, errlen, "too many events: %zu (at most %d)", nextra,
                    CNT_MAX - CNT_NFIXED);
        return -E2BIG;
    }
    s = calloc(1, sizeof *s);
    if (!s)
        return -ENOMEM;

    for (size_t i = 0; i < CNT_NFIXED; i++) {
        cnt_ev_t *ev = &s->ev[s->n++];
        ev->fd = -1;
        ev->keep_fd = -1;
        ev->src = CNT_SRC_FIXED;
        ev->name = strdup(cnt_fixed[i].name);
        if (!ev->name) {
            rc = -ENOMEM;
            goto fail;
        }
        ev->attr.type = cnt_fixed[i].type;
        ev->attr.config = cnt_fixed[i].config;
        ev->resolved = true;
        if (cnt_fixed[i].tracepoint) {
            uint64_t id = 0;
            int r;
            ev->resolved = false;
            if (!tracefs_dir())
                snprintf(ev->reason, sizeof ev->reason, "%s", tracefs_why());
            else if ((r = cnt_tp_id("syscalls", 8, cnt_fixed[i].tracepoint, &id)) != 0)
                snprintf(ev->reason, sizeof ev->reason, "tracepoint syscalls:%s: %s",
                         cnt_fixed[i].tracepoint, strerror(-r));
            else {
                ev->attr.config = id;
                ev->resolved = true;
            }
        }
    }

    for (size_t i = 0; i < nextra; i++) {
        const char *name = extra[i];
        if (!name || !name[0]) {
            cnt_set_err(err, errlen, "empty event name");
            rc = -EINVAL;
            goto fail;
        }
        for (const char *p = name; *p; p++) {
            if (iscntrl((unsigned char)*p)) {
                cnt_set_err(err, errlen, "event name with a control character");
                rc = -EINVAL;
                goto fail;
            }
        }
        for (size_t j = 0; j < s->n; j++) {
            if (strcmp(s->ev[j].name, name) == 0) {
                cnt_set_err(err, errlen, "duplicate event '%s'", name);
                rc = -EINVAL;
                goto fail;
            }
        }
        cnt_ev_t *ev = &s->ev[s->n++];
        ev->fd = -1;
        ev->keep_fd = -1;
        ev->name = strdup(name);
        if (!ev->name) {
            rc = -ENOMEM;
            goto fail;
        }
        rc = cnt_resolve(ev, name, err, errlen);
        if (rc)
            goto fail;
    }
    *out = s;
    return 0;

fail:
    cnt_set_free(s);
    return rc;
}

void cnt_set_free(cnt_set_t *s)
{
    if (!s)
        return;
    cnt_close(s);
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].keep_fd >= 0)
            close(s->ev[i].keep_fd);
        free(s->ev[i].name);
    }
    free(s);
}

size_t cnt_count(const cnt_set_t *s)
{
    return s ? s->n : 0;
}

const char *cnt_name(const cnt_set_t *s, size_t i)
{
    return s && i < s->n ? s->ev[i].name : NULL;
}

static bool cnt_is_hw(uint32_t type)
{
    return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW ||
           type >= PERF_TYPE_MAX;
}

/* Software events the kernel raises with kernel registers: with
 * exclude_kernel they open fine and then always read 0. */
static bool cnt_kernel_only(const struct perf_event_attr *a)
{
    return a->type == PERF_TYPE_SOFTWARE && (a->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
                                              a->config == PERF_COUNT_SW_CPU_MIGRATIONS);
}

static void cnt_open_reason(cnt_ev_t *ev, int err, bool excl)
{
    if (err == EACCES || err == EPERM)
        snprintf(ev->reason, sizeof ev->reason,
                 "permission denied: %s (perf_event_paranoid=%d%s)", strerror(err),
                 cnt_paranoid(), excl ? ", user space only" : "");
    else if (cnt_is_hw(ev->attr.type) &&
             (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL))
        snprintf(ev->reason, sizeof ev->reason, "not supported: %s (no hardware PMU?)",
                 strerror(err));
    else
        snprintf(ev->reason, sizeof ev->reason, "not supported: %s", strerror(err));
}

/* Closing the last perf event of a tracepoint unregisters it, and the
 * kernel then waits for RCU grace periods: ~40 ms per tracepoint here, so
 * ~0.25 s per sample for six syscalls.  A disabled event on ourselves keeps
 * each tracepoint registered for the life of the set; it never counts. */
static void cnt_keep(cnt_ev_t *ev, bool excl)
{
    if (ev->keep_fd >= 0 || ev->attr.type != PERF_TYPE_TRACEPOINT)
        return;
    struct perf_event_attr a = ev->attr;
    a.size = sizeof a;
    a.disabled = 1;
    a.exclude_kernel = excl;
    a.exclude_hv = excl;
    ev->keep_fd = cnt_sys_open(&a, 0, ev->open_flags);
    if (ev->keep_fd < 0)
        ev->keep_fd = -1;
}

/* Open every resolved counter with the given privilege level.  Returns the
 * number opened, or -1 when full counting was refused and the caller should
 * retry user space only (everything opened is closed again then). */
static int cnt_open_pass(cnt_set_t *s, pid_t pid, bool excl, int *first_err)
{
    int nopen = 0;

    for (size_t i = 0; i < s->n; i++) {
        cnt_ev_t *ev = &s->ev[i];
        ev->fd = -1;
        if (!ev->resolved)
            continue;
        if (excl && cnt_kernel_only(&ev->attr)) {
            snprintf(ev->reason, sizeof ev->reason, "not counted: the kernel records it in "
                     "kernel mode and only user space may be counted (perf_event_paranoid=%d)",
                     cnt_paranoid());
            continue;
        }
        struct perf_event_attr a = ev->attr;
        a.size = sizeof a;
        a.disabled = 1;
        a.enable_on_exec = 1;
        a.inherit = 1;
        a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        if (excl) {
            a.exclude_kernel = 1;
            a.exclude_hv = 1;
        }
        int fd = cnt_sys_open(&a, pid, ev->open_flags);
        if (fd >= 0) {
            cnt_keep(ev, excl);
            ev->fd = fd;
            ev->reason[0] = '\0';
            nopen++;
            continue;
        }
        if ((fd == -EACCES || fd == -EPERM) && !excl && !a.exclude_kernel) {
            for (size_t j = 0; j < i; j++) {
                if (s->ev[j].fd >= 0)
                    close(s->ev[j].fd);
                s->ev[j].fd = -1;
            }
            return -1;
        }
        cnt_open_reason(ev, -fd, excl);
        if (!*first_err)
            *first_err = fd;
    }
    return nopen;
}

int cnt_open(cnt_set_t *s, pid_t pid)
{
    int first_err = 0, nopen;

    if (!s)
        return -EINVAL;
    if (s->is_open)
        return -EBUSY;
    nopen = cnt_open_pass(s, pid, s->excl_kernel, &first_err);
    if (nopen < 0) {
        first_err = 0;
        s->excl_kernel = true;
        nopen = cnt_open_pass(s, pid, true, &first_err);
    }
    cnt_last_excl = s->excl_kernel;
    if (nopen <= 0)
        return first_err ? first_err : -ENOENT;
    s->is_open = true;
    return 0;
}

int cnt_read(const cnt_set_t *s, cnt_value_t *out)
{
    if (!s || !out)
        return -EINVAL;
    if (!s->is_open)
        return -EBADF;
    for (size_t i = 0; i < s->n; i++) {
        const cnt_ev_t *ev = &s->ev[i];
        cnt_value_t *v = &out[i];
        memset(v, 0, sizeof *v);
        v->name = ev->name;
        if (ev->fd < 0) {
            snprintf(v->reason, sizeof v->reason, "%s", ev->reason);
            continue;
        }
        uint64_t buf[3];
        ssize_t r = read(ev->fd, buf, sizeof buf);
        if (r != (ssize_t)sizeof buf) {
            snprintf(v->reason, sizeof v->reason, "not counted: read: %s",
                     r < 0 ? strerror(errno) : "short read");
            continue;
        }
        cnt_from_read(buf, v);
    }
    return 0;
}

void cnt_from_read(const uint64_t buf[3], cnt_value_t *v)
{
    v->supported = true;
    v->value = buf[0];
    v->enabled = buf[1];
    v->running = buf[2];
}

void cnt_close(cnt_set_t *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        if (s->ev[i].fd >= 0)
            close(s->ev[i].fd);
        s->ev[i].fd = -1;
    }
    s->is_open = false;
}

double cnt_scaled(const cnt_value_t *v)
{
    if (!v || !v->supported || v->running == 0)
        return NAN;
    if (v->enabled == v->running)
        return (double)v->value;
    return (double)v->value * ((double)v->enabled / (double)v->running);
}

double cnt_delta(const cnt_value_t *before, const cnt_value_t *after)
{
    if (!before || !after || !before->supported || !after->supported ||
        after->value < before->value || after->enabled < before->enabled ||
        after->running < before->running)
        return NAN;
    uint64_t dv = after->value - before->value;
    uint64_t de = after->enabled - before->enabled;
    uint64_t dr = after->running - before->running;
    if (de == dr)
        return (double)dv;
    if (dr == 0)
        return NAN;
    return (double)dv * ((double)de / (double)dr);
}

/* ---- description and listing ---- */

/* libpfm4 reports only its API version (4.0); the release is in the name of
 * the shared object it was loaded from. */
static void cnt_pfm_version(char *buf, size_t len)
{
#if MB_HAVE_LIBPFM
    Dl_info info;
    char real[PATH_MAX];
    const char *so;
    if (dladdr((void *)pfm_initialize, &info) && info.dli_fname &&
        realpath(info.dli_fname, real) && (so = strstr(real, ".so.")) && so[4]) {
        snprintf(buf, len, "%s", so + 4);
        return;
    }
    int v = pfm_get_version();
    snprintf(buf, len, "api%d.%d", PFM_MAJ_VERSION(v), PFM_MIN_VERSION(v));
#else
    snprintf(buf, len, "no");
#endif
}

/* Name of the kernel's CPU PMU when it can count cycles here, else "none". */
static void cnt_kernel_pmu(char *buf, size_t len, int *err)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = cnt_sys_open(&a, 0, 0);
    snprintf(buf, len, "none");
    *err = fd < 0 ? -fd : 0;
    if (fd < 0)
        return;
    close(fd);
    snprintf(buf, len, "present");
    DIR *d = opendir("/sys/bus/event_source/devices");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char path[PATH_MAX];
        unsigned type;
        snprintf(path, sizeof path, "/sys/bus/event_source/devices/%.255s/type", de->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        if (fscanf(f, "%u", &type) == 1 && type == PERF_TYPE_RAW)
            snprintf(buf, len, "%.63s", de->d_name);
        fclose(f);
    }
    if (d)
        closedir(d);
}

/* exclude_kernel of the last open, or what an open would use now. */
static const char *cnt_excl_state(void)
{
    if (cnt_last_excl >= 0)
        return cnt_last_excl ? "1" : "0";
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.disabled = 1;
    int fd = cnt_sys_open(&a, 0, 0);
    if (fd >= 0) {
        close(fd);
        return "0";
    }
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    fd = cnt_sys_open(&a, 0, 0);
    if (fd >= 0) {
        close(fd);
        return "1";
    }
    return "denied";
}

void cnt_describe(char *buf, size_t len)
{
    char pfm[32], pmu[64];
    const char *tfs = tracefs_dir();
    int pmu_err;

    if (!buf || !len)
        return;
    cnt_pfm_version(pfm, sizeof pfm);
    cnt_kernel_pmu(pmu, sizeof pmu, &pmu_err);
    snprintf(buf, len, "perf_event_paranoid=%d euid=%u exclude_kernel=%s tracefs=%s "
             "libpfm4=%s pmu=%s", cnt_paranoid(), (unsigned)geteuid(), cnt_excl_state(),
             tfs ? tfs : "none", pfm, pmu);
}

static const char *cnt_what(const cnt_set_t *s, size_t i, char *buf, size_t len)
{
    const cnt_ev_t *ev = &s->ev[i];
    if (i < CNT_NFIXED && cnt_fixed[i].tracepoint)
        snprintf(buf, len, "syscalls:%s", cnt_fixed[i].tracepoint);
    else if (ev->src == CNT_SRC_TRACEPOINT)
        snprintf(buf, len, "tracepoint %llu", (unsigned long long)ev->attr.config);
    else if (ev->attr.type == PERF_TYPE_SOFTWARE)
        snprintf(buf, len, "software %llu", (unsigned long long)ev->attr.config);
    else
        snprintf(buf, len, "type %u config 0x%llx", ev->attr.type,
                 (unsigned long long)ev->attr.config);
    return buf;
}

int cnt_list_events(FILE *out)
{
    static const char *const probe[] = { "cycles", "instructions", "dTLB-load-misses" };
    cnt_set_t *s = NULL;
    char err[CNT_REASON_MAX], what[64], line[256];
    cnt_value_t v[CNT_MAX];
    int rc;

    if (!out)
        return -EINVAL;
    rc = cnt_set_new(&s, probe, sizeof probe / sizeof probe[0], err, sizeof err);
    if (rc) {
        fprintf(out, "counters: %s\n", err);
        return rc;
    }
    rc = cnt_open(s, 0);        /* on ourselves: can this process count it? */
    if (rc == 0)
        cnt_read(s, v);
    fprintf(out, "counter events (fixed ones always collected, then hardware examples):\n");
    for (size_t i = 0; i < s->n; i++) {
        const char *status = "countable";
        if (!s->ev[i].resolved)
            status = s->ev[i].reason;
        else if (rc)
            status = strerror(-rc);
        else if (!v[i].supported)
            status = v[i].reason;
        else if (s->excl_kernel)
            status = "countable (user space only)";
        fprintf(out, "  %-18s %-28s %s\n", s->ev[i].name, cnt_what(s, i, what, sizeof what),
                status);
    }
    cnt_set_free(s);

    cnt_describe(line, sizeof line);
    fprintf(out, "counting here: %s\n", line);
#if MB_HAVE_LIBPFM
    pthread_once(&cnt_pfm_once, cnt_pfm_init);
    if (cnt_pfm_status != PFM_SUCCESS) {
        fprintf(out, "libpfm4: initialization failed: %s\n", pfm_strerror(cnt_pfm_status));
    } else {
        pfm_pmu_t p;
        fprintf(out, "libpfm4 PMU tables present (detected from CPUID; the kernel must "
                "also offer the PMU to count them):\n");
        pfm_for_all_pmus(p) {
            pfm_pmu_info_t info;
            memset(&info, 0, sizeof info);
            info.size = sizeof info;
            if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
                continue;
            fprintf(out, "  %-24s %5d events  %s\n", info.name, info.nevents,
                    info.desc ? info.desc : "");
        }
    }
    fprintf(out, "--events takes any libpfm4 event name (e.g. cycles, dTLB-load-misses, "
            "perf::PERF_COUNT_HW_CACHE_MISSES) or tracepoint category:name ");
#else
    fprintf(out, "built without libpfm4: --events takes generic perf names (cycles, "
            "instructions, cache-misses, dTLB-load-misses, ...) or tracepoint category:name ");
#endif
    {
        const char *tfs = tracefs_dir();
        if (tfs)
            fprintf(out, "(see %s/available_events, e.g. syscalls:sys_enter_mremap)\n", tfs);
        else
            fprintf(out, "(%s)\n", tracefs_why());
    }
    fflush(out);
    return ferror(out) ? -EIO : 0;
}
