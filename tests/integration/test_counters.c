/* test_counters.c - integration test of harness/sample/counters.c.  This binary
 * re-executes itself as the child ("child work|base"): the work run makes
 * exactly 100 madvise and 37 munmap calls and touches 1500 fresh pages, 500
 * of them in a second thread; the counts must differ from the base run by
 * exactly that; a forked child that touches pages and exits without exec
 * counts nothing (counters start at exec).  Exit 77 (skip) when
 * perf_event_open or tracefs is denied.
 * "test_counters measure work|base" prints the counts, to hold against
 * `perf stat -e ... test_counters child work|base -1 -1`. */
#include "../check.h"
#include "counters.h"
#include "mb_config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NMADVISE 100
#define NMUNMAP 37
#define NPAGES_MAIN 1000
#define NPAGES_THREAD 500
#define FAULT_SLACK 16          /* faults two runs differ by besides the work (seen: 2) */

/* The sanitizer runtime maps its own memory in the child, on its own schedule:
 * about 1 run in 100 it makes one more mmap before the thread is up (seen in
 * the sanitized build: 139 against 138).  Those counts are exact elsewhere. */
#if defined(__SANITIZE_ADDRESS__)
#define RUNTIME_MAPS 2
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RUNTIME_MAPS 2
#endif
#endif
#ifndef RUNTIME_MAPS
#define RUNTIME_MAPS 0
#endif

/* The fixed events that are syscall tracepoints, from counters.h. */
#define IS_TP_SW false
#define IS_TP_TP true
#define IS_TP(name, src, what, total, region, unit) [CNT_EV_##name] = IS_TP_##src,
static const bool fixed_is_tp[CNT_NFIXED] = {CNT_FIXED_EVENTS(IS_TP)};
#undef IS_TP

/* ---- the child ---- */

typedef struct {
    char *pages;
    long pagesz;
    int work;
    int release_fd;
    pthread_barrier_t *ready;
} child_thread_t;

/* Write one byte to each of n fresh pages: exactly n minor faults (no
 * sanitizer shadow writes to add to them). */
__attribute__((no_sanitize_address))
static void touch_pages(char *p, int n, long pg)
{
    for (int i = 0; i < n; i++)
        ((volatile char *)p)[(size_t)i * (size_t)pg] = 1;
}

static void *child_thread(void *p)
{
    child_thread_t *t = p;
    char c;
    if (t->work)
        touch_pages(t->pages, NPAGES_THREAD, t->pagesz);
    pthread_barrier_wait(t->ready);
    /* stay alive until the parent has read the counters once */
    if (t->release_fd >= 0 && read(t->release_fd, &c, 1) < 0)
        perror("child: read release");
    return NULL;
}

/* Both modes map and spawn the same; only the counted work differs. */
static int child_main(int work, int sync_fd, int release_fd)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t region_len = (size_t)(NPAGES_MAIN + NPAGES_THREAD) * (size_t)pg;
    char *one = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *region = mmap(NULL, region_len, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *small[NMUNMAP];
    pthread_barrier_t ready;
    pthread_t th;

    if (one == MAP_FAILED || region == MAP_FAILED)
        return 2;
    madvise(region, region_len, MADV_NOHUGEPAGE);   /* one fault per page, in both modes */
    for (int i = 0; i < NMUNMAP; i++) {
        small[i] = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (small[i] == MAP_FAILED)
            return 2;
    }
    if (work) {
        for (int i = 0; i < NMADVISE; i++)
            madvise(one, (size_t)pg, MADV_DONTNEED);
        touch_pages(region, NPAGES_MAIN, pg);
    }
    child_thread_t t = { region + (size_t)NPAGES_MAIN * (size_t)pg, pg, work, release_fd, &ready };
    pthread_barrier_init(&ready, NULL, 2);
    if (pthread_create(&th, NULL, child_thread, &t) != 0)
        return 2;
    pthread_barrier_wait(&ready);
    if (sync_fd >= 0 && write(sync_fd, "r", 1) != 1)
        return 2;
    pthread_join(th, NULL);
    if (work)
        for (int i = 0; i < NMUNMAP; i++)
            munmap(small[i], (size_t)pg);
    return 0;
}

/* ---- the parent ---- */

/* Fork a child blocked before exec, open s on it, let it exec this binary
 * in mode, snapshot while its thread is alive (mid) and after exit (fin). */
static int run_child(cnt_set_t *s, const char *mode, cnt_value_t *mid, cnt_value_t *fin)
{
    int start[2], sync[2], release[2], st, rc;
    char c = 'x';
    pid_t pid;

    if (pipe2(start, O_CLOEXEC) || pipe2(sync, O_CLOEXEC) || pipe2(release, O_CLOEXEC))
        return -errno;
    pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        char a_sync[16], a_rel[16];
        close(start[1]);
        close(sync[0]);
        close(release[1]);
        if (read(start[0], &c, 1) != 1)
            _exit(1);           /* the parent gave up */
        fcntl(sync[1], F_SETFD, 0);
        fcntl(release[0], F_SETFD, 0);
        snprintf(a_sync, sizeof a_sync, "%d", sync[1]);
        snprintf(a_rel, sizeof a_rel, "%d", release[0]);
        execl("/proc/self/exe", "test_counters", "child", mode, a_sync, a_rel, (char *)NULL);
        _exit(127);
    }
    close(start[0]);
    close(sync[1]);
    close(release[0]);
    rc = cnt_open(s, pid);
    if (rc == 0 && write(start[1], &c, 1) != 1)
        rc = -errno;
    close(start[1]);
    if (rc == 0 && read(sync[0], &c, 1) != 1)
        rc = -EPIPE;
    if (rc == 0)
        rc = cnt_read(s, mid);
    if (write(release[1], &c, 1) != 1 && rc == 0)
        rc = -errno;
    close(sync[0]);
    close(release[1]);
    if (waitpid(pid, &st, 0) != pid)
        rc = rc ? rc : -errno;
    else if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && rc == 0) {
        fprintf(stderr, "child %s: status 0x%x\n", mode, st);
        rc = -ECHILD;
    }
    if (rc == 0)
        rc = cnt_read(s, fin);
    cnt_close(s);
    return rc;
}

/* Counters start at exec (enable_on_exec), not at perf_event_open: a child
 * that touches NPAGES_NOEXEC fresh pages and exits without exec must read 0
 * on every counter, and never have been enabled.  -errno when the harness
 * side fails; the values land in fin. */
#define NPAGES_NOEXEC 500
static int run_child_noexec(cnt_set_t *s, cnt_value_t *fin)
{
    int start[2], st, rc;
    char c = 'x';
    pid_t pid;

    if (pipe2(start, O_CLOEXEC))
        return -errno;
    pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        long pg = sysconf(_SC_PAGESIZE);
        close(start[1]);
        if (read(start[0], &c, 1) != 1)
            _exit(1);           /* the parent gave up */
        char *p = mmap(NULL, (size_t)NPAGES_NOEXEC * (size_t)pg, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            _exit(2);
        madvise(p, (size_t)NPAGES_NOEXEC * (size_t)pg, MADV_NOHUGEPAGE);
        touch_pages(p, NPAGES_NOEXEC, pg);
        munmap(p, (size_t)NPAGES_NOEXEC * (size_t)pg);
        _exit(0);
    }
    close(start[0]);
    rc = cnt_open(s, pid);
    if (write(start[1], &c, 1) != 1 && rc == 0)
        rc = -errno;
    close(start[1]);
    if (waitpid(pid, &st, 0) != pid)
        rc = rc ? rc : -errno;
    else if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && rc == 0) {
        fprintf(stderr, "child without exec: status 0x%x\n", st);
        rc = -ECHILD;
    }
    if (rc == 0)
        rc = cnt_read(s, fin);
    cnt_close(s);
    return rc;
}

static void test_no_exec(cnt_set_t *s)
{
    static cnt_value_t fin[CNT_MAX];
    int rc = run_child_noexec(s, fin);
    CHECK_INT(rc, 0);
    if (rc)
        return;
    for (size_t i = 0; i < cnt_count(s); i++) {
        if (!fin[i].supported)
            continue;
        if (fin[i].value || fin[i].enabled)
            fprintf(stderr, "without exec, %s counted %llu (enabled %llu ns): enabled before exec\n",
                    fin[i].name, (unsigned long long)fin[i].value,
                    (unsigned long long)fin[i].enabled);
        CHECK_U64(fin[i].value, 0);
        CHECK_U64(fin[i].enabled, 0);
    }
    CHECK(fin[CNT_EV_minor_faults].supported);
}

static long long diff(const cnt_value_t *w, const cnt_value_t *b, int i)
{
    return (long long)w[i].value - (long long)b[i].value;
}

/* Can this process count hardware cycles at all?  The module must agree. */
static int probe_cycles(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_CPU_CYCLES;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

static void test_pure(void)
{
    cnt_value_t a = { .name = "x", .supported = true, .value = 100, .enabled = 50, .running = 50 };
    cnt_value_t b = a;

    CHECK(cnt_scaled(&a) == 100.0);
    a.running = 25;
    CHECK(cnt_scaled(&a) == 200.0);
    a.running = 0;
    CHECK(isnan(cnt_scaled(&a)));
    a.running = 25;
    a.supported = false;
    CHECK(isnan(cnt_scaled(&a)));
    CHECK(isnan(cnt_scaled(NULL)));
    /* exact when the interval ran all the time; large values stay exact */
    a = (cnt_value_t){ .supported = true, .value = 1000, .enabled = 10, .running = 10 };
    b = (cnt_value_t){ .supported = true, .value = (1ull << 53) + 1001, .enabled = 20, .running = 20 };
    CHECK(cnt_delta(&a, &b) == (double)((1ull << 53) + 1));
    b = (cnt_value_t){ .supported = true, .value = 1100, .enabled = 30, .running = 20 };
    CHECK(cnt_delta(&a, &b) == 200.0);   /* 100 over half the interval */
    b.running = 10;
    CHECK(isnan(cnt_delta(&a, &b)));      /* enabled but never ran */
    b = a;
    CHECK(cnt_delta(&a, &b) == 0.0);      /* not enabled in between: exactly 0 */
    b.supported = false;
    CHECK(isnan(cnt_delta(&a, &b)));
    b = a;
    b.value = 999;
    CHECK(isnan(cnt_delta(&a, &b)));      /* counters do not go backwards */
}

static void test_names(void)
{
    char err[256];
    cnt_set_t *s = (cnt_set_t *)1;
    static const char *const fixed[] = { "task_clock_ns", "context_switches", "cpu_migrations",
        "minor_faults", "major_faults", "madvise", "mmap", "munmap", "brk", "mremap",
        "mprotect" };

    const char *bad[] = { "no-such-event-xyz" };
    CHECK(cnt_set_new(&s, bad, 1, err, sizeof err) == -EINVAL);
    CHECK(s == NULL);
    CHECK(strstr(err, "'no-such-event-xyz'") != NULL);
    CHECK(strchr(err, '\n') == NULL);
    fprintf(stderr, "refused as expected: %s\n", err);

    const char *trav[] = { "../../../etc:passwd" };
    CHECK(cnt_set_new(&s, trav, 1, err, sizeof err) < 0);
    CHECK(strstr(err, "../../../etc:passwd") != NULL);
    const char *notp[] = { "syscalls:sys_enter_no_such_call" };
    CHECK(cnt_set_new(&s, notp, 1, err, sizeof err) < 0);
    const char *dup[] = { "cycles", "cycles" };
    CHECK(cnt_set_new(&s, dup, 2, err, sizeof err) == -EINVAL);
    CHECK(strstr(err, "duplicate") != NULL);
    const char *empty[] = { "" };
    CHECK(cnt_set_new(&s, empty, 1, err, sizeof err) == -EINVAL);
    const char *nl[] = { "cyc\nles" };
    CHECK(cnt_set_new(&s, nl, 1, err, sizeof err) == -EINVAL);
    CHECK(strchr(err, '\n') == NULL);
    const char *many[CNT_MAX];
    for (int i = 0; i < CNT_MAX; i++)
        many[i] = "cycles";
    CHECK(cnt_set_new(&s, many, CNT_MAX, err, sizeof err) == -E2BIG);
    CHECK(cnt_set_new(NULL, NULL, 0, err, sizeof err) == -EINVAL);

    /* the order counters.h documents, and `list events` shows */
    CHECK_INT(sizeof fixed / sizeof *fixed, CNT_NFIXED);
    CHECK_INT(cnt_set_new(&s, NULL, 0, NULL, 0), 0);
    CHECK_INT(cnt_count(s), CNT_NFIXED);
    for (int i = 0; i < CNT_NFIXED; i++)
        CHECK_STR(cnt_name(s, (size_t)i), fixed[i]);
    CHECK(cnt_name(s, CNT_NFIXED) == NULL);
    cnt_value_t v[CNT_MAX];
    CHECK_INT(cnt_read(s, v), -EBADF);    /* not open */
    cnt_close(s);                         /* harmless when not open */
    cnt_set_free(s);
    cnt_set_free(NULL);
    CHECK(cnt_count(NULL) == 0);
}

static void test_describe_list(void)
{
    char line[512];
    char *buf = NULL;
    size_t len = 0, lines = 0;
    FILE *f;

    cnt_describe(line, sizeof line);
    fprintf(stderr, "describe: %s\n", line);
    CHECK(strstr(line, "perf_event_paranoid=") == line);
    CHECK(strstr(line, " exclude_kernel=") != NULL);
    CHECK(strstr(line, " tracefs=") != NULL);
    CHECK(strstr(line, " pmu=") != NULL);
    CHECK(strchr(line, '\n') == NULL);
    cnt_describe(line, 8);                 /* truncates, never overflows */
    CHECK(strlen(line) == 7);

    f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    CHECK_INT(cnt_list_events(f), 0);
    fclose(f);
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    CHECK(strstr(buf, "task_clock_ns") != NULL);
    CHECK(strstr(buf, "madvise") != NULL);
    CHECK(lines > 12 && lines < 80);
    fputs(buf, stderr);
    free(buf);
}

static const char *extra_ev[] = { "cycles", "page-faults", "syscalls:sys_enter_mremap" };

static int measure(const char *mode)
{
    char err[256];
    cnt_set_t *s;
    cnt_value_t mid[CNT_MAX] = { 0 }, fin[CNT_MAX] = { 0 };
    int rc = cnt_set_new(&s, extra_ev, 2, err, sizeof err);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    rc = run_child(s, mode, mid, fin);
    if (rc) {
        fprintf(stderr, "run: %s\n", strerror(-rc));
        return 1;
    }
    for (size_t i = 0; i < cnt_count(s); i++) {
        if (fin[i].supported)
            printf("%-18s %12llu  (mid %llu) enabled %llu running %llu\n", fin[i].name,
                   (unsigned long long)fin[i].value, (unsigned long long)mid[i].value,
                   (unsigned long long)fin[i].enabled, (unsigned long long)fin[i].running);
        else
            printf("%-18s <not supported> %s\n", fin[i].name, fin[i].reason);
    }
    cnt_set_free(s);
    return 0;
}

/* The runs main makes (base, work, a second base), each read at the child's middle (its
 * thread alive) and at its exit. */
static cnt_value_t bmid[CNT_MAX], bfin[CNT_MAX], wmid[CNT_MAX], wfin[CNT_MAX];
static cnt_value_t b2mid[CNT_MAX], b2fin[CNT_MAX];

/* the extra tracepoint only when tracefs is there: an unknown name is refused */
static int open_set(cnt_set_t **set, size_t *n_extra)
{
    char err[256];
    cnt_set_t *s = NULL;
    size_t nextra;
    int rc;

    rc = cnt_set_new(&s, extra_ev, 3, err, sizeof err);
    nextra = 3;
    if (rc) {
        fprintf(stderr, "without the extra tracepoint: %s\n", err);
        nextra = 2;
        rc = cnt_set_new(&s, extra_ev, 2, err, sizeof err);
    }
    CHECK_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", err);
        return rc;
    }
    CHECK_INT(cnt_count(s), CNT_NFIXED + nextra);
    CHECK_STR(cnt_name(s, CNT_NFIXED), "cycles");
    *set = s;
    *n_extra = nextra;
    return 0;
}

/* each counter: named as the set names it, supported in both runs or in neither (then with a
 * reason and nothing counted), its readings in order */
static void check_each_counter(cnt_set_t *s)
{
    for (size_t i = 0; i < cnt_count(s); i++) {
        fprintf(stderr, "%-26s base %10llu work %10llu (mid %llu) %s\n", wfin[i].name,
                (unsigned long long)bfin[i].value, (unsigned long long)wfin[i].value,
                (unsigned long long)wmid[i].value, wfin[i].supported ? "" : wfin[i].reason);
        CHECK_STR(wfin[i].name, cnt_name(s, i));
        CHECK(wfin[i].supported == bfin[i].supported);
        if (!wfin[i].supported) {
            CHECK(wfin[i].reason[0] != '\0');
            CHECK(wfin[i].value == 0 && wfin[i].enabled == 0 && wfin[i].running == 0);
            CHECK(isnan(cnt_scaled(&wfin[i])));
            continue;
        }
        CHECK(wfin[i].enabled >= wfin[i].running);
        CHECK(wfin[i].value >= wmid[i].value);
        CHECK(wfin[i].enabled >= wmid[i].enabled);
    }
}

/* software events must count everywhere perf_event_open works */
static void check_software(void)
{
    CHECK(wfin[CNT_EV_task_clock_ns].supported && wfin[CNT_EV_task_clock_ns].value > 0);
    CHECK(bfin[CNT_EV_task_clock_ns].value > 0);
    CHECK(wfin[CNT_EV_minor_faults].supported);
    CHECK(wfin[CNT_EV_task_clock_ns].running > 0);
    CHECK(cnt_scaled(&wfin[CNT_EV_minor_faults]) == (double)wfin[CNT_EV_minor_faults].value);
    long long minor = diff(wfin, bfin, CNT_EV_minor_faults);
    long long minor_mid = diff(wmid, bmid, CNT_EV_minor_faults);
    fprintf(stderr, "minor faults: work - base = %lld at exit, %lld with the thread alive\n",
            minor, minor_mid);
    CHECK(wfin[CNT_EV_minor_faults].value >= NPAGES_MAIN + NPAGES_THREAD);
    CHECK(llabs(minor - (NPAGES_MAIN + NPAGES_THREAD)) <= FAULT_SLACK);
    /* inherit: a read sums the live thread's counter in (else about 1000) */
    CHECK(wmid[CNT_EV_minor_faults].value >= NPAGES_MAIN + NPAGES_THREAD);
    CHECK(llabs(minor_mid - (NPAGES_MAIN + NPAGES_THREAD)) <= FAULT_SLACK);
    long long base_noise = (long long)b2fin[CNT_EV_minor_faults].value - (long long)bfin[CNT_EV_minor_faults].value;
    CHECK(llabs(base_noise) <= FAULT_SLACK);
}

/* page-faults (an extra, through libpfm4 or the generic table) covers minor+major */
static void check_page_faults(void)
{
    CHECK(wfin[CNT_NFIXED + 1].supported);
    CHECK(wfin[CNT_NFIXED + 1].value >= wfin[CNT_EV_minor_faults].value + wfin[CNT_EV_major_faults].value);
}

/* cycles: counted for real, or unsupported with a reason; never a silent 0 */
static void check_cycles(void)
{
    int cyc = probe_cycles();
    const cnt_value_t *cv = &wfin[CNT_NFIXED];
    if (cyc == 0) {
        CHECK(cv->supported && cv->value > 0 && cv->running > 0);
    } else {
        fprintf(stderr, "cycles: %s (direct probe: %s)\n", cv->reason, strerror(-cyc));
        CHECK(!cv->supported);
        CHECK(strstr(cv->reason, "not supported") != NULL || strstr(cv->reason, "denied"));
    }
}

/* the syscall tracepoints count the child's calls, or say why they are not there; true when
 * they are */
static bool check_tracepoints(size_t nextra)
{
    bool have_tp = wfin[CNT_EV_madvise].supported;
    if (have_tp) {
        CHECK_INT(diff(wfin, bfin, CNT_EV_madvise), NMADVISE);
        CHECK_INT(diff(wmid, bmid, CNT_EV_madvise), NMADVISE);
        CHECK(llabs(diff(wfin, bfin, CNT_EV_munmap) - NMUNMAP) <= RUNTIME_MAPS);
        CHECK(llabs(diff(wmid, bmid, CNT_EV_munmap)) <= RUNTIME_MAPS); /* the munmaps come after release */
        CHECK(fabs(cnt_delta(&wmid[CNT_EV_munmap], &wfin[CNT_EV_munmap]) -
                   (cnt_delta(&bmid[CNT_EV_munmap], &bfin[CNT_EV_munmap]) + NMUNMAP)) <= RUNTIME_MAPS);
        CHECK(llabs(diff(wfin, bfin, CNT_EV_mmap)) <= RUNTIME_MAPS);
        CHECK_INT(diff(b2fin, bfin, CNT_EV_madvise), 0);
        CHECK(llabs(diff(b2fin, bfin, CNT_EV_mmap)) <= RUNTIME_MAPS);
        CHECK(llabs(diff(b2fin, bfin, CNT_EV_munmap)) <= RUNTIME_MAPS);
        fprintf(stderr, "mmap/munmap: work - base = %lld/%lld, base - base = %lld/%lld (slack %d)\n",
                diff(wfin, bfin, CNT_EV_mmap), diff(wfin, bfin, CNT_EV_munmap) - NMUNMAP,
                diff(b2fin, bfin, CNT_EV_mmap), diff(b2fin, bfin, CNT_EV_munmap), RUNTIME_MAPS);
        CHECK(bfin[CNT_EV_mmap].value >= NMUNMAP + 2);      /* the child's own mappings */
        CHECK(bfin[CNT_EV_madvise].value >= 1);             /* MADV_NOHUGEPAGE */
        for (int i = 0; i < CNT_NFIXED; i++)
            CHECK(!fixed_is_tp[i] || wfin[i].supported);
        if (nextra == 3)
            CHECK_U64(wfin[CNT_NFIXED + 2].value, wfin[CNT_EV_mremap].value);
    } else {
        fprintf(stderr, "tracepoints unavailable: %s\n", wfin[CNT_EV_madvise].reason);
        CHECK(strstr(wfin[CNT_EV_madvise].reason, "tracefs") != NULL ||
              strstr(wfin[CNT_EV_madvise].reason, "tracepoint") != NULL);
    }
    return have_tp;
}

/* a pid that is gone: nothing opens, an error comes back, no crash */
static void check_dead_pid(cnt_set_t *s)
{
    pid_t dead = fork();
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    CHECK(cnt_open(s, dead) == -ESRCH);
    CHECK_INT(cnt_read(s, wfin), -EBADF);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "child") == 0)
        return child_main(strcmp(argv[2], "work") == 0, atoi(argv[3]), atoi(argv[4]));
    if (argc == 3 && strcmp(argv[1], "measure") == 0)
        return measure(argv[2]);

    cnt_set_t *s = NULL;
    bool have_tp;
    size_t nextra;
    int rc;

    test_pure();
    test_names();
    test_describe_list();

    if (open_set(&s, &nextra))
        CHECK_DONE();
    rc = run_child(s, "base", bmid, bfin);
    if (rc == -EACCES || rc == -EPERM || rc == -ENOSYS) {
        fprintf(stderr, "SKIP: perf_event_open: %s\n", strerror(-rc));
        cnt_set_free(s);
        if (check_failures)
            CHECK_DONE();
        return 77;
    }
    CHECK_INT(rc, 0);
    CHECK_INT(run_child(s, "work", wmid, wfin), 0);
    /* the set can be opened again after cnt_close: a second base run */
    CHECK_INT(run_child(s, "base", b2mid, b2fin), 0);
    if (check_failures) {
        cnt_set_free(s);
        CHECK_DONE();
    }

    check_each_counter(s);
    check_software();
    check_page_faults();
    check_cycles();
    have_tp = check_tracepoints(nextra);

    /* a child that never execs is never counted */
    test_no_exec(s);

    check_dead_pid(s);
    cnt_set_free(s);

    if (check_failures)
        CHECK_DONE();
    if (!have_tp)
        SKIP("syscall tracepoint assertions skipped (tracefs not available)");
    return 0;
}
