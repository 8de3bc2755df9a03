/* elfinfo.h - what a program file says about whether an allocator can be
 * preloaded into it: a script's interpreter, a static binary (no program
 * interpreter: the dynamic loader never runs, LD_PRELOAD is ignored), a
 * setuid or setgid one (the loader ignores LD_PRELOAD in secure mode), the
 * libraries it needs (DT_NEEDED) and whether it defines malloc itself.
 * Pure file reading, no execution. */
#ifndef MB_ELFINFO_H
#define MB_ELFINFO_H
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELFINFO_NEEDED_MAX 64

typedef struct {
    bool script;                    /* starts with "#!" */
    char interp[PATH_MAX];          /* a script's interpreter (as written) */
    char interp_arg[256];           /* its first argument ("python3" after /usr/bin/env) */
    bool elf;
    bool dynamic;                   /* has PT_INTERP */
    bool setid;                     /* setuid or setgid bit */
    size_t nneeded;
    char needed[ELFINFO_NEEDED_MAX][128];
    bool defines_malloc;            /* a defined, exported malloc in .dynsym */
    bool pie;                       /* position-independent (ET_DYN): addresses are from its load base */
    uint64_t malloc_conf;           /* the address of a `malloc_conf` it defines (jemalloc's compiled-in
                                     * settings, .dynsym or .symtab), relative to its base when pie; 0 none */
} elf_info_t;

/* Inspect the file at path: 0, or -errno (ENOEXEC: neither ELF nor a
 * script, or not a regular file) with one line in err.  Opened
 * non-blocking: a FIFO or device at the name is refused, never waited on. */
int elf_inspect(const char *path, elf_info_t *out, char *err, size_t errlen);
/* The same of a file already open (a program image the kernel handed over:
 * /proc/PID/exe); name is only for err.  Refused unless fstat says it is a
 * regular file. */
int elf_inspect_fd(int fd, const char *name, elf_info_t *out, char *err, size_t errlen);

/* The file execvp would run for name (a path with '/' as is, else the
 * first executable match on PATH): 0, or -ENOENT (none), -EISDIR (a
 * directory), -EACCES (not executable, or not a regular file); with a
 * match on PATH that cannot run, out names it. */
int elf_which(const char *name, char *out, size_t len);
/* The same for a tool the harness runs itself (perf, python3): only absolute PATH entries are
 * searched, never the current directory that an empty or relative entry names. */
int elf_which_tool(const char *name, char *out, size_t len);

#endif
