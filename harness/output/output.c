/* output.c - the run's output files: refuse before the proof, create or
 * repair after it, write each sample's RSS lines and row, and keep the CSV
 * and its RSS series ending in whole samples whatever happens (see
 * output.h). */
#include "output.h"
#include "fileio.h"
#include "text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RSS_HEADER "run_id,sample,t_s,rss_kib\n"

static void with_suffix(const char *csv, const char *suffix, char *out, size_t len)
{
    size_t n = strlen(csv);
    if (n > 4 && !strcmp(csv + n - 4, ".csv"))
        n -= 4;
    snprintf(out, len, "%.*s%s", (int)n, csv, suffix);
}

static void set_sidecars(out_t *o, const char *base)
{
    with_suffix(base, ".meta.json", o->meta, sizeof o->meta);
    with_suffix(base, ".rss.csv", o->rss, sizeof o->rss);
}

/* The directory a new file goes in must exist and be writable. */
static int check_dir(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "cannot write '%s': %s: %s", path, dir, strerror(errno));
        return -errno;
    }
    return 0;
}

static void default_name(char *out, size_t len, unsigned attempt)
{
    char ts[32];
    time_t now = time(NULL);
    strftime(ts, sizeof ts, "%Y%m%d-%H%M%S", gmtime(&now));
    if (attempt)
        snprintf(out, len, "results/run-%s-%u.csv", ts, attempt + 1);
    else
        snprintf(out, len, "results/run-%s.csv", ts);
}

/* -o in folders that do not exist yet (results/today/run.csv): the nearest one that
 * exists must be a folder this process may write in; the missing ones are named
 * plainly (no "." or ".." among them) and made by out_open, after the proof.  0 when
 * the CSV's folder exists or was found makeable (*made set), else -errno with err. */
static int missing_dirs(out_t *o, const char *output, char *err, size_t errlen)
{
    char dir[PATH_MAX], probe[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", output);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0)
        return 0;
    if (errno != ENOENT && errno != ENOTDIR)
        return 0; /* outfile_resolve says why */
    snprintf(probe, sizeof probe, "%s", dir);
    for (;;) {
        char *s = strrchr(probe, '/');
        const char *part = s ? s + 1 : probe;
        if (!strcmp(part, ".") || !strcmp(part, "..") || !part[0]) {
            snprintf(err, errlen, "cannot write '%s': its folder '%s' does not exist", output, dir);
            return -ENOENT;
        }
        if (!s) {
            snprintf(probe, sizeof probe, ".");
            break;
        }
        if (s == probe) {
            probe[1] = '\0';
            break;
        }
        *s = '\0';
        if (stat(probe, &st) == 0)
            break;
    }
    if (stat(probe, &st) || !S_ISDIR(st.st_mode) || access(probe, W_OK | X_OK)) {
        snprintf(err, errlen, "cannot write '%s': its folder '%s' does not exist and '%s' %s", output, dir, probe,
                 stat(probe, &st) || !S_ISDIR(st.st_mode) ? "is not a folder" : "cannot be written");
        return -EACCES;
    }
    snprintf(o->mkdirs, sizeof o->mkdirs, "%s", dir);
    return 0;
}

/* mkdir -p of o->mkdirs (out_check found them makeable). */
static int make_dirs(out_t *o, char *err, size_t errlen)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", o->mkdirs);
    for (char *p = path + 1; ; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(path, 0777) && errno != EEXIST) {
            int e = errno;
            snprintf(err, errlen, "cannot create the folder '%s': %s", path, strerror(e));
            return -e;
        }
        if (!c)
            return 0;
        *p = c;
    }
}

int out_check(out_t *o, const char *output, const char *sidecars, bool resume, bool force,
              char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->w.fd = -1;
    o->resume = resume;
    o->force = force;
    if (resume && force) {
        snprintf(err, errlen, "--resume and --force do not mix: continue the file or replace it");
        return -EINVAL;
    }
    if (!output[0]) {
        if (resume) {
            snprintf(err, errlen, "--resume needs the output to continue (-o FILE)");
            return -EINVAL;
        }
        o->chosen = true;
        if (mkdir("results", 0777) && errno != EEXIST) {
            snprintf(err, errlen, "cannot create 'results': %s (or give -o FILE)", strerror(errno));
            return -errno;
        }
        default_name(o->csv, sizeof o->csv, 0);
        o->sidecars = true;
        set_sidecars(o, o->csv);
        return check_dir(o->csv, err, errlen);
    }
    snprintf(o->csv, sizeof o->csv, "%s", output);
    struct stat st;
    if (!strcmp(output, "-")) {
        o->kind = OUT_STDOUT;
    } else if (stat(output, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            snprintf(err, errlen, "cannot write '%s': it is a directory", output);
            return -EISDIR;
        }
        o->kind = OUT_DEVICE;
    }
    if (o->kind != OUT_FILE) {
        if (resume) {
            snprintf(err, errlen, "cannot resume '%s': only a regular file can be continued", output);
            return -EINVAL;
        }
        o->sidecars = sidecars[0] != '\0';
        if (o->sidecars)
            set_sidecars(o, sidecars);
    } else {
        int rc = missing_dirs(o, output, err, errlen);
        if (rc)
            return rc;
        if (o->mkdirs[0] && resume) {
            snprintf(err, errlen, "cannot resume '%s': it does not exist", output);
            return -ENOENT;
        }
        /* one path for the lock and the writes: a symbolic link resolved once (in folders still
         * to be made, the path as given: nothing there can be a link yet) */
        if (!o->mkdirs[0] && (rc = outfile_resolve(output, o->csv, sizeof o->csv, err, errlen)))
            return rc;
        o->sidecars = true;
        set_sidecars(o, sidecars[0] ? sidecars : o->csv);
        if (!o->mkdirs[0] && (rc = outfile_check_links(o->csv, err, errlen)))
            return rc;
        for (int i = 0; i < 2; i++) /* a sidecar is never written through a link (existing: checked above) */
                if ((rc = outfile_check_sidecar(i ? o->rss : o->meta, true, err, errlen)))
                    return rc;
        struct stat cs;
        o->exists = stat(o->csv, &cs) == 0;
        if (o->exists && resume && cs.st_size == 0) {
            /* left by a start that failed before its header: nothing to keep, taken over */
            o->exists = false;
            o->empty = true;
        }
        if (!resume && !force) {
            const char *const mine[] = {o->csv, o->meta, o->rss};
            for (int i = 0; i < 3; i++)
                if (access(mine[i], F_OK) == 0) {
                    snprintf(err, errlen,
                             "'%s' exists: add --resume to continue its plan, or --force to replace it "
                             "(the old results are deleted once the new run's proof has passed)", mine[i]);
                    return -EEXIST;
                }
        }
        if (o->exists && access(o->csv, R_OK | W_OK) != 0) {
            snprintf(err, errlen, "cannot %s '%s': %s", resume ? "resume" : "replace", output,
                     strerror(errno));
            return -errno;
        }
        rc = o->mkdirs[0] ? 0 : check_dir(o->csv, err, errlen);
        if (rc)
            return rc;
    }
    if (o->sidecars && sidecars[0]) {
        int rc = check_dir(o->meta, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* A new growing file: its header in a fresh temporary, put in place whole
 * (over an existing one only with --force), so that a failed start leaves
 * nothing at path.  The fd (still open, at the end of the header) or -errno. */
static int create_growing(const char *path, bool replace, int (*header)(int fd, void *arg), void *arg)
{
    char tmp[PATH_MAX + 16];
    int fd = outfile_temp(path, tmp, sizeof tmp);
    if (fd < 0)
        return fd;
    int rc = header(fd, arg);
    if (rc) { /* header() closed fd */
        unlink(tmp);
        return rc;
    }
    if ((rc = outfile_place(fd, tmp, path, replace))) {
        close(fd);
        unlink(tmp);
        return rc;
    }
    return fd;
}

static int series_header(int fd, void *arg)
{
    (void)arg;
    size_t n = strlen(RSS_HEADER);
    if (write(fd, RSS_HEADER, n) != (ssize_t)n) {
        int rc = errno ? -errno : -EIO;
        close(fd);
        return rc;
    }
    return 0;
}

typedef struct {
    csv_writer_t *w;
    const char *const *extra;
    size_t nextra;
} csv_header_arg_t;

static int csv_header(int fd, void *arg)
{
    csv_header_arg_t *a = arg;
    return csv_open_fd(a->w, fd, a->extra, a->nextra); /* closes fd on failure */
}

static int open_series(out_t *o, char *err, size_t errlen)
{
    err[0] = '\0';
    int fd = o->resume ? csv_continue(o->rss, err, errlen) : -ENOENT;
    if (fd == -ENOENT)
        fd = create_growing(o->rss, o->force, series_header, NULL);
    if (fd < 0) {
        if (!err[0])
            snprintf(err, errlen, "cannot write '%s': %s", o->rss, strerror(-fd));
        return fd;
    }
    o->series = fdopen(fd, "a");
    if (!o->series) {
        int rc = -errno;
        close(fd);
        snprintf(err, errlen, "cannot write '%s': %s", o->rss, strerror(-rc));
        return rc;
    }
    off_t size = lseek(fd, 0, SEEK_END);
    if (size > 0) {
        /* a resumed series keeps its whole lines: a torn last one is cut */
        char c = '\n';
        off_t end = size;
        while (end > 0 && pread(fd, &c, 1, end - 1) == 1 && c != '\n')
            end--;
        if (end < size && ftruncate(fd, end) == 0)
            size = end;
    }
    if (size <= 0 && fputs(RSS_HEADER, o->series) < 0) { /* an empty series left by a failed start */
        snprintf(err, errlen, "cannot write '%s': %s", o->rss, strerror(errno));
        return -EIO;
    }
    if (fflush(o->series)) {
        int rc = -errno;
        snprintf(err, errlen, "cannot write '%s': %s", o->rss, strerror(errno));
        return rc;
    }
    o->series_good = lseek(fd, 0, SEEK_END);
    return 0;
}

/* The lock on the CSV, held until out_close: taken before anything is
 * truncated, repaired or appended, so a second run (--force or --resume)
 * is refused naming the first's pid.  A device is not locked. */
static int out_lock(out_t *o, char *err, size_t errlen)
{
    pid_t holder;
    int rc = outfile_lock(&o->lock, o->csv, &holder, err, errlen);
    o->locked = rc == 0;
    return rc;
}

static void out_unlock(out_t *o)
{
    if (o->locked)
        outfile_unlock(&o->lock);
    o->locked = false;
}

int out_open(out_t *o, const char *const *extra_names, size_t nextra, char *err, size_t errlen)
{
    int rc;
    if (o->mkdirs[0] && (rc = make_dirs(o, err, errlen)))
        return rc;
    if (o->kind == OUT_STDOUT || o->kind == OUT_DEVICE) {
        int fd = o->kind == OUT_STDOUT ? fcntl(1, F_DUPFD_CLOEXEC, 3)
                                       : open(o->csv, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
            rc = -errno;
            snprintf(err, errlen, "cannot write '%s': %s", o->csv, strerror(errno));
            return rc;
        }
        rc = csv_open_fd(&o->w, fd, extra_names, nextra);
        if (rc)
            snprintf(err, errlen, "cannot write '%s': %s", o->csv, strerror(-rc));
    } else if (o->resume && o->exists) {
        if ((rc = out_lock(o, err, errlen)))
            return rc;
        rc = csv_open_append(&o->w, o->csv, extra_names, nextra, err, errlen);
        if (!rc && o->w.repaired_bytes)
            fprintf(stderr, "mallocbench: %s: dropped a torn last row (%zu bytes, cut short by a kill or a "
                    "full disk); its sample runs again\n", o->csv, o->w.repaired_bytes);
        if (!rc && o->w.added_newline)
            fprintf(stderr, "mallocbench: %s: its last row had no newline; added one\n", o->csv);
    } else {
        /* new: never over an existing file unless --force; a default name
         * another run took in the same second becomes the next free one */
        for (unsigned attempt = 0;; attempt++) {
            rc = out_lock(o, err, errlen);
            if (rc == -EWOULDBLOCK && o->chosen && attempt < 1000) {
                default_name(o->csv, sizeof o->csv, attempt + 1); /* another run's */
                set_sidecars(o, o->csv);
                continue;
            }
            if (rc)
                return rc;
            struct stat cs;
            if (o->empty && (stat(o->csv, &cs) || cs.st_size != 0)) {
                out_unlock(o);
                snprintf(err, errlen, "cannot resume '%s': it changed while the proof ran", o->csv);
                return -EAGAIN;
            }
            csv_header_arg_t ha = {&o->w, extra_names, nextra};
            int fd = create_growing(o->csv, o->force || o->empty, csv_header, &ha);
            if (fd == -EEXIST && o->chosen && attempt < 1000) {
                o->w.fd = -1; /* closed by create_growing */
                out_unlock(o);
                default_name(o->csv, sizeof o->csv, attempt + 1);
                set_sidecars(o, o->csv);
                continue;
            }
            if (fd < 0) {
                rc = fd;
                o->w.fd = -1;
                out_unlock(o);
                snprintf(err, errlen, rc == -EEXIST ? "'%s' appeared while the proof ran: add --resume or "
                                                        "--force" : "cannot write '%s': %s",
                         o->csv, strerror(-rc));
                return rc;
            }
            break;
        }
    }
    if (rc) {
        out_unlock(o);
        return rc;
    }
    if (o->sidecars) {
        rc = open_series(o, err, errlen);
        if (rc) {
            csv_close(&o->w);
            out_unlock(o);
            return rc;
        }
    }
    return 0;
}

static void series_rollback(out_t *o);

/* Push the series' lines to the file; on failure cut it back to the last
 * whole sample.  -errno. */
static int series_flush(out_t *o)
{
    if (!o->series || fflush(o->series) == 0)
        return 0;
    int rc = errno ? -errno : -EIO;
    series_rollback(o);
    return rc;
}

/* A row is written: the series is whole up to here. */
static void series_mark(out_t *o)
{
    if (o->series)
        o->series_good = lseek(fileno(o->series), 0, SEEK_END);
}

/* Undo the lines since the last mark (the row could not be written). */
static void series_rollback(out_t *o)
{
    if (!o->series)
        return;
    /* drop what is buffered, then cut what reached the file */
    int fd = fileno(o->series);
    int keep = dup(fd);
    fclose(o->series);
    o->series = NULL;
    if (keep >= 0) {
        if (ftruncate(keep, o->series_good) == 0)
            o->series = fdopen(keep, "a");
        if (!o->series)
            close(keep);
    }
}

int out_write_sample(out_t *o, const char *run_id, size_t sample, const run_sample_t *s, const csv_row_t *row,
                     const char **failed)
{
    *failed = NULL;
    for (size_t i = 0; o->series && i < s->nrss; i++)
        fprintf(o->series, "%s,%zu,%.4f,%ld\n", run_id, sample, s->rss[i].t, s->rss[i].rss_kib);
    int rc = series_flush(o);
    if (rc) {
        *failed = o->rss;
        return rc;
    }
    if ((rc = csv_write_row(&o->w, row))) {
        series_rollback(o);
        *failed = o->csv;
        return rc;
    }
    series_mark(o);
    return 0;
}

void out_sidecar_paths(const char *csv, char *meta, char *rss, size_t len)
{
    with_suffix(csv, ".meta.json", meta, len);
    with_suffix(csv, ".rss.csv", rss, len);
}

bool out_is_rss_sidecar(const char *path)
{
    size_t n = strlen(path);
    if (n >= 8 && !strcmp(path + n - 8, ".rss.csv"))
        return true;
    char head[sizeof RSS_HEADER];
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t got = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[got] = '\0';
    return !strcmp(head, RSS_HEADER);
}

bool out_json_object(const char *t, size_t n)
{
    while (n && strchr(" \t\r\n", t[n - 1]))
        n--;
    while (n && strchr(" \t\r\n", *t))
        t++, n--;
    return n >= 2 && t[0] == '{' && t[n - 1] == '}' && !memchr(t, '\0', n);
}

int out_write_sidecar(const char *path, const char *json, bool keep_previous)
{
    char *prev = NULL;
    size_t plen = 0;
    if (keep_previous && file_read_all(path, 64u << 20, &prev, &plen))
        prev = NULL;
    outfile_t of;
    char err[PATH_MAX + 128];
    FILE *f = NULL;
    int rc = outfile_fopen(&of, path, &f, err, sizeof err);
    if (rc) {
        free(prev);
        return rc;
    }
    size_t n = strlen(json);
    if (prev && plen) {
        /* the new object, less its closing brace, then "previous": the old */
        size_t end = n;
        while (end && json[end - 1] != '}')
            end--;
        size_t body = end ? end - 1 : 0;
        while (body && strchr(" \t\r\n", json[body - 1]))
            body--;
        fwrite(json, 1, body, f);
        fputs(",\n  \"previous\": ", f);
        if (out_json_object(prev, plen)) {
            while (plen && strchr(" \t\r\n", prev[plen - 1]))
                plen--;
            fwrite(prev, 1, plen, f);
        } else {
            text_json_write(f, prev); /* not JSON: kept as text */
        }
        fputs("\n}\n", f);
    } else {
        fwrite(json, 1, n, f);
    }
    free(prev);
    return outfile_fclose(&of, f, err, sizeof err);
}

void out_close(out_t *o)
{
    csv_close(&o->w);
    if (o->series)
        fclose(o->series);
    o->series = NULL;
    out_unlock(o);
}
