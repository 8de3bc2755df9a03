/* test_output_lock.c - the lock on the CSV a run writes (harness/output/output.c):
 * held from out_open to out_close whichever way the file was opened (new,
 * --force, --resume), so a second writer, another process, is refused
 * naming this one's pid; after out_close the same second writer gets it.
 * The second writer is a forked child taking outfile_lock as a run does
 * (fcntl locks are per process: this process could always take its own). */
#include "../check.h"
#include "output.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/mb-test-output-lock-XXXXXX";
static char csv[PATH_MAX], lockname[PATH_MAX + 8];

/* A second process tries to lock the CSV: its outfile_lock's return, and
 * the holder it names in *holder. */
static int second_writer(pid_t *holder)
{
    int p[2];
    if (pipe(p))
        return -errno;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        outfile_lock_t l;
        char err[PATH_MAX + 256];
        pid_t h = 0;
        int res[2];
        res[0] = outfile_lock(&l, csv, &h, err, sizeof err);
        res[1] = (int)h;
        if (write(p[1], res, sizeof res) != (ssize_t)sizeof res)
            _exit(3);
        if (res[0] == 0)
            outfile_unlock(&l);
        _exit(0);
    }
    close(p[1]);
    int res[2] = {1, 0};
    ssize_t n = pid > 0 ? read(p[0], res, sizeof res) : -1;
    close(p[0]);
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    CHECK(n == (ssize_t)sizeof res && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    *holder = res[1];
    return n == (ssize_t)sizeof res ? res[0] : -EIO;
}

/* Open the CSV (resume / force as the flags say), check that a second
 * writer is refused while it is open and let in once it is closed. */
static void open_and_probe(const char *what, bool resume, bool force)
{
    out_t o;
    char err[PATH_MAX + 256] = "";
    int rc = out_check(&o, csv, "", resume, force, err, sizeof err);
    CHECK_INT(rc, 0);
    if (!rc)
        rc = out_open(&o, NULL, 0, err, sizeof err);
    CHECK_INT(rc, 0);
    if (rc) {
        fprintf(stderr, "%s: %s\n", what, err);
        return;
    }
    pid_t holder = 0;
    rc = second_writer(&holder);
    if (rc != -EWOULDBLOCK || holder != getpid())
        fprintf(stderr, "%s: a second writer while the CSV is open\n", what);
    CHECK_INT(rc, -EWOULDBLOCK);
    CHECK_INT(holder, getpid());
    CHECK(access(lockname, F_OK) == 0);
    out_close(&o);
    rc = second_writer(&holder);
    if (rc != 0)
        fprintf(stderr, "%s: a second writer after out_close\n", what);
    CHECK_INT(rc, 0);
    CHECK(access(lockname, F_OK) != 0); /* the lock file goes with the lock */
}

int main(void)
{
    if (!mkdtemp(dir))
        SKIP("cannot make a scratch directory in /tmp");
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    snprintf(lockname, sizeof lockname, "%s.lock", csv);

    open_and_probe("new", false, false);
    struct stat st;
    CHECK(stat(csv, &st) == 0 && st.st_size > 0); /* the header was written: a file to resume */
    open_and_probe("--resume", true, false);
    open_and_probe("--resume again", true, false);
    open_and_probe("--force", false, true);

    const char *const names[] = {"run.csv", "run.meta.json", "run.rss.csv", "run.csv.lock"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[PATH_MAX + 32];
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    CHECK_INT(rmdir(dir), 0);
    CHECK_DONE();
}
