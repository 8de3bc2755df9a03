/* output.h - where a run's results go, and the rule that nothing already
 * measured is lost: an existing CSV is never truncated or deleted unless
 * --force, and only once the proof has passed; a resumed file is repaired
 * (a torn last row dropped) and appended to; sidecars are written to a
 * temporary name and renamed.  `-o -` streams the CSV to stdout and a
 * device or FIFO gets the CSV only: sidecars then go where --sidecars says.
 *
 * Used in two steps: out_check() before the proof (refuse what would fail
 * or destroy something, having touched nothing), out_open() after it. */
#ifndef MB_OUTPUT_H
#define MB_OUTPUT_H
#include "csv.h"
#include "outfile.h"
#include "types.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

typedef enum { OUT_FILE, OUT_STDOUT, OUT_DEVICE } out_kind_t;

typedef struct {
    out_kind_t kind;
    bool chosen;                 /* no -o: a fresh results/run-<time>.csv */
    bool resume, force;
    bool exists;                 /* the CSV exists (resume: rows to keep) */
    bool empty;                  /* --resume of an empty file (a failed start): replaced */
    char csv[PATH_MAX];
    bool sidecars;               /* .meta.json and .rss.csv are written */
    char meta[PATH_MAX], rss[PATH_MAX];
    char mkdirs[PATH_MAX];       /* -o in folders that do not exist yet: made by out_open, "" none */
    /* after out_open */
    outfile_lock_t lock;         /* held on the CSV from out_open to out_close */
    bool locked;
    csv_writer_t w;
    FILE *series;
    off_t series_good;           /* the RSS series ends in whole samples up to here */
} out_t;

/* Decide the paths and refuse, with one line in err, an output that exists
 * (naming --resume and --force), a resume of nothing resumable, or a
 * directory that cannot be written.  output "" = the default name;
 * sidecars "" = beside the CSV (a file) or none (stdout, a device). */
int out_check(out_t *o, const char *output, const char *sidecars, bool resume, bool force,
              char *err, size_t errlen);

/* Lock the CSV (outfile_lock: a second writer, --resume included, is
 * refused naming the holder's pid; a device is not locked), then create
 * (O_EXCL), replace (--force) or reopen (--resume) it and the RSS series.  For a default name that another run took meanwhile, the
 * next free name is chosen.  Notes on a repaired file go to stderr. */
int out_open(out_t *o, const char *const *extra_names, size_t nextra, char *err, size_t errlen);

/* One judged sample: its RSS lines ("run_id,sample,t_s,rss_kib", one per
 * reading kept in s) and then its row, both or neither: a failed write
 * leaves both files ending at the last whole sample.  0, or -errno with
 * *failed naming the file that could not be written. */
int out_write_sample(out_t *o, const char *run_id, size_t sample, const run_sample_t *s, const csv_row_t *row,
                     const char **failed);

/* Write text to path through path.tmp and a rename (outfile_open: a
 * device or FIFO is written in place).  When keep_previous is
 * set and path holds a JSON object, it is kept inside the new one under
 * "previous" (a resumed run keeps the first run's machine and command). */
int out_write_sidecar(const char *path, const char *json, bool keep_previous);

void out_close(out_t *o);

/* The sidecar names of a CSV: BASE.meta.json and BASE.rss.csv. */
void out_sidecar_paths(const char *csv, char *meta, char *rss, size_t len);
/* Is this file an RSS series sidecar (by name, or by its header)? */
bool out_is_rss_sidecar(const char *path);
/* Does text look like one JSON object (so it can be embedded as a value)? */
bool out_json_object(const char *text, size_t len);

#endif
