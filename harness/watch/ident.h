/* ident.h - which allocator a process runs and the settings it was started
 * with, read from outside: the files it maps (a family's library; in a
 * static or self-allocating program, text only that family's code carries
 * -- allocators/family.h's marks), the package that owns the file (its
 * version), and of its environment ONLY the variables the families read
 * (allocators' env_vars): nothing else of a process's environment is kept,
 * printed or stored.  Settings changed at run time (mallopt, mallctl)
 * cannot be seen from outside; ident says so rather than guess. */
#ifndef MB_IDENT_H
#define MB_IDENT_H
#include "elfinfo.h"
#include "family.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define IDENT_MAX_VARS 16
#define IDENT_VAR_KEEP 4096   /* the most of one variable ident_capture_env keeps */
#define IDENT_ENV_KEEP 65536  /* the most of a process's variables it keeps in all */

typedef struct {
    const alloc_info_t *family; /* NULL: glibc or unrecognised */
    bool sure;                  /* false: nothing but libc found ("glibc or unrecognised") */
    char how[16];               /* preloaded | linked | loaded | static | built-in | libc | unknown */
    char evidence[PATH_MAX + 96]; /* in words: which file or text decided it */
    char path[PATH_MAX];        /* the library (or program) that holds it */
    char version[64], version_how[96]; /* "5.3.0", "package libjemalloc2" | "unknown" */
    char vars[IDENT_MAX_VARS][512]; /* its allocator variables, NAME=value, as it started */
    size_t nvars;
    char malloc_conf_file[PATH_MAX]; /* jemalloc: what /etc/malloc.conf names ("" none) */
    char malloc_conf_compiled[256];  /* the program's own `malloc_conf` string ("" none or unread) */
} ident_t;

/* What ident reads of a program file: always through a descriptor the kernel hands over
 * (/proc/PID/exe) or a path the user named, opened non-blocking and read only when fstat
 * says it is a regular file; never through a name the watched process could have put
 * something else at. */
typedef struct {
    bool read;                  /* false: not read (name may still say what it was) */
    char name[PATH_MAX];        /* its name, for words and for matching /proc/PID/maps lines */
    elf_info_t elf;
    const alloc_info_t *marks;  /* a static or self-allocating program: the family whose marks it carries */
    const char *mark;
} ident_exe_t;

/* What ident reads of a process: the files it maps (each once), its
 * program file, and its environment block (NUL-separated, as
 * /proc/PID/environ; environ_len 0: unknown). */
typedef struct {
    const char *const *files;
    size_t nfiles;
    const ident_exe_t *exe;     /* NULL: the program file was not read */
    const char *environ;
    size_t environ_len;
    const char *compiled_conf;  /* ident_compiled_conf's reading, or NULL */
} ident_input_t;

/* Recognises the allocator and its settings.  Never fails: what cannot be
 * known is said in the fields. */
void ident_read(const ident_input_t *in, ident_t *out);

/* A program file the user named (a command diagnose starts), read as a running process's
 * is through /proc/PID/exe: 0, or -errno (gone, not a regular file, unreadable). */
int ident_exe_path(const char *path, ident_exe_t *out);

/* Everything diagnose reads of a running process that the process could make slow (its
 * program file, its memory through /proc): taken while the image runs, by procread.h's
 * reader.  The command line keeps its program's name only, the number of further words
 * counted (they may carry secrets), unless full. */
typedef struct {
    int exe_rc;                 /* ident_exe's: 0 read */
    ident_exe_t exe;
    char conf[256];             /* ident_compiled_conf's string ("" none) */
    int env_rc;                 /* ident_capture_env's: 0 read */
    char *env;                  /* its block (malloc'd; NULL none) */
    size_t env_len;
    char cmdline[4096];         /* argv words, NUL-separated: argv[0] only unless full */
    size_t cmdline_len;
    unsigned hidden_args;       /* argv words left out */
} ident_capture_t;

int ident_capture(int pid, bool full_cmdline, ident_capture_t *out);
/* Frees (and wipes) what ident_capture allocated. */
void ident_capture_free(ident_capture_t *c);

/* What a family's variables the process started with (ident_t.vars, "NAME=value") set, as
 * `mallocbench exec -t` takes it: each into out[] as "tunable=value" (canonical, checked by the
 * registry), or, where it names no tunable of the family or a value the registry refuses, into
 * left[] as it was written ("NAME: key:value" for a part of a joined variable).  Variables of
 * other families are skipped (they do not reach this one).  *nout and *nleft: the counts kept. */
void ident_exec_settings(const alloc_info_t *a, const char (*vars)[512], size_t nvars, char (*out)[160],
                         size_t maxout, size_t *nout, char (*left)[512], size_t maxleft, size_t *nleft);

/* The pure steps of ident_capture's readings, on text and bytes already read (each of them
 * tested on hand-built input, tests/unit/test_ident.c): */
/* An environment block (env[0..n), NUL-separated, as /proc/PID/environ) cut down in place to
 * what ident keeps of it (ident_capture's block): the allocator variables and LD_PRELOAD, the
 * first of each name only, each at most IDENT_VAR_KEEP - 1 bytes, 4 x IDENT_MAX_VARS of them
 * and IDENT_ENV_KEEP bytes in all; the rest of env zeroed.  Returns the bytes kept. */
size_t ident_keep_env(char *env, size_t n);
/* Where the program file name is loaded, from /proc/PID/maps text: the start of the first
 * mapping of name at file offset 0, or 0 (none). */
uint64_t ident_maps_base(FILE *maps, const char *name);
/* The family whose marks (family.h) a program image carries, its mark in *mark; a system
 * family's only where no other's are there (a static program carries libc's malloc beside any
 * other).  A mark of 8 bytes or fewer counts only with its NUL.  NULL: none. */
const alloc_info_t *ident_marks(const void *image, size_t len, const char **mark);

#endif
