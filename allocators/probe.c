/* probe.c - libmbprobe.so, preloaded behind the allocator under test: reports to
 * the descriptor MB_PROBE_FD which object serves malloc, the allocator family,
 * version, environment and the settings read back from it (contract: probe.h),
 * then "stat:" lines at exit.  Everything family-specific comes from the
 * family table (family.h: ident symbols, probe_version/read/stats hooks);
 * this file knows no allocator.  Links libc/libdl only: every allocator API
 * is found in the loaded objects' symbol tables (pb_resolve), without dlsym.
 * Output goes through static buffers; the probe itself allocates nothing
 * (what it measures must not move): the only heap use is what the
 * allocator APIs it calls do. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* dladdr1, dlinfo */
#endif
#include "probe.h"
#include "family.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

extern char **environ;

/* ---- when the report is written ----------------------------------------
 * Preloaded objects are initialised in reverse load order, so this
 * constructor runs BEFORE the allocator's own (seen with glibc 2.36:
 * "calling init: libmbprobe.so" precedes "libtcmalloc.so.4").  tcmalloc
 * applies TCMALLOC_* and registers its MallocExtension in C++ static
 * initialisers, so a read-back from the constructor sees zeros.  The
 * constructor therefore only arms the probe; the report is written from
 * __libc_start_main (interposed below), i.e. after every library
 * constructor and before main.  If that hook never runs (a program not
 * started by glibc's crt1), the destructor writes the report instead. */
enum { PB_OFF, PB_PENDING, PB_REPORTED };

static struct {
    int state;
    int fd;
    pid_t pid;                    /* process that armed the probe */
    const alloc_info_t *family;   /* NULL: unknown */
    bool identified;
    bool descendant;              /* started by the command, not by the harness */
    void *malloc_base;            /* load base of the object serving malloc */
    char malloc_name[PATH_MAX];   /* dli_fname as loaded */
    char malloc_path[PATH_MAX];   /* its realpath */
    char token[72];               /* prefix of every line: the sample's secret */
} pb = { .state = PB_OFF, .fd = -1 };

extern char **environ;

/* The value of the variable name, copied into out (at most len - 1 bytes). */
static void pb_take_env(const char *name, char *out, size_t len)
{
    size_t n = strlen(name);
    out[0] = '\0';
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, name, n) || (*e)[n] != '=')
            continue;
        const char *v = *e + n + 1;
        if (strlen(v) < len)
            memcpy(out, v, strlen(v) + 1);
    }
}

/* A variable's value from environ itself: a program may define its own
 * getenv (bash does, and before its main it finds nothing). */
static const char *pb_getenv(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

/* The secret of the process the harness started, which every image of it
 * needs: a wrapper (a shell script, pyenv's shim, env) execs the real
 * program in the same process, whose probe must sign its report too.  The
 * first image moves the secret out of the environment into a memfd left
 * open across exec, and overwrites the variable's value where it lies with
 * "@<fd>" (so neither environ nor /proc/PID/environ shows the secret); a
 * later image finds "@<fd>" and reads the secret back from the memfd. */
static void pb_take_token(char *out, size_t len)
{
    size_t n = strlen(MB_PROBE_TOKEN_ENV);
    out[0] = '\0';
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, MB_PROBE_TOKEN_ENV, n) || (*e)[n] != '=')
            continue;
        char *v = *e + n + 1;
        size_t vlen = strlen(v);
        if (v[0] == '@') {
            ssize_t got = pread((int)strtol(v + 1, NULL, 10), out, len - 1, 0);
            out[got > 0 ? got : 0] = '\0';
            return;
        }
        if (vlen >= len || vlen < 8)
            return;
        memcpy(out, v, vlen + 1);
        int fd = memfd_create("mb-probe-token", 0);
        if (fd < 0 || write(fd, out, vlen) != (ssize_t)vlen) {
            if (fd >= 0)
                close(fd);
            memset(v, 'x', vlen);   /* no later image can sign: it is reported forged */
            return;
        }
        memset(v, '\0', vlen);
        snprintf(v, vlen + 1, "@%d", fd);
        return;
    }
}

/* Room for a read-back value: a path plus a sentence. */
#define PB_VAL_MAX (PATH_MAX + 512)

/* ---- output: one static buffer, written with one write loop ------------ */
#define PB_RESERVE 512          /* kept free for the closing lines (and their tokens) */
static char pb_buf[64 * 1024];
static size_t pb_len;
static bool pb_truncated;
static char pb_tmp[PATH_MAX];   /* scratch for realpath */

/* The line's prefix: "<token> " (nothing when run by hand, without one). */
static size_t pb_prefix_len(void)
{
    size_t tl = strlen(pb.token);
    return tl ? tl + 1 : 0;
}

static void pb_put_prefix(void)
{
    size_t tl = strlen(pb.token);
    if (!tl)
        return;
    memcpy(pb_buf + pb_len, pb.token, tl);
    pb_len += tl;
    pb_buf[pb_len++] = ' ';
}

/* The settings digest (probe.h settings_digest): while pb_digesting, each
 * env: line is hashed as written; with pb_hash_only it is hashed and not
 * written (a descendant, which sends the digest alone).  The lines' hashes
 * are summed, so the order a shell passes its variables on in does not
 * count; the read-backs are not hashed (jemalloc's narenas follows the CPUs
 * a process may use), the variables that set them are. */
static uint64_t pb_digest;
static bool pb_digesting, pb_hash_only;

static void pb_digest_line(const char *line, size_t len)
{
    static const char skip[] = "env:LD_PRELOAD=";
    if (len < 4 || memcmp(line, "env:", 4) ||
        (len >= sizeof skip - 1 && !memcmp(line, skip, sizeof skip - 1)))
        return; /* where the probe sits in LD_PRELOAD is not a setting */
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)line[i];
        h *= 1099511628211ULL;
    }
    pb_digest += h;
}

/* Appends one "text\n" line, control characters turned into '?' so a value
 * can never break the line format; a line that does not fit is dropped. */
__attribute__((format(printf, 1, 2)))
static void pb_line(const char *fmt, ...)
{
    static char line[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        pb_truncated = true;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
            line[i] = '?';
    if (pb_digesting)
        pb_digest_line(line, len);
    if (pb_hash_only)
        return;
    size_t room = sizeof pb_buf - PB_RESERVE;
    if (pb_len + pb_prefix_len() + len + 1 > room) {
        pb_truncated = true;
        return;
    }
    pb_put_prefix();
    memcpy(pb_buf + pb_len, line, len);
    pb_len += len;
    pb_buf[pb_len++] = '\n';
}

/* Closing line: always fits thanks to PB_RESERVE. */
static void pb_close_line(const char *text)
{
    if (pb_truncated) {
        static const char t[] = "probe_truncated=1\n";
        pb_put_prefix();
        memcpy(pb_buf + pb_len, t, sizeof t - 1);
        pb_len += sizeof t - 1;
        pb_truncated = false;
    }
    pb_put_prefix();
    size_t len = strlen(text);
    memcpy(pb_buf + pb_len, text, len);
    pb_len += len;
}

/* Writes the buffer to the probe descriptor, looping on partial writes. */
static void pb_flush(void)
{
    size_t off = 0;
    while (off < pb_len) {
        ssize_t w = write(pb.fd, pb_buf + off, pb_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    pb_len = 0;
}

/* ---- helpers ------------------------------------------------------------ */
/* dlsym into a function pointer without an object-to-function cast. */
#define PB_FN(dst, addr) do { void *a_ = (addr); memcpy(&(dst), &a_, sizeof a_); } while (0)

/* Path of the object at dli_fname: realpath when possible; the main
 * program may be reported with an empty name. */
static void pb_object_path(const char *fname, char *out, size_t n)
{
    if (!fname || !*fname)
        fname = "/proc/self/exe";
    if (realpath(fname, pb_tmp))
        snprintf(out, n, "%s", pb_tmp);
    else
        snprintf(out, n, "%s", fname);
}

static bool pb_starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- symbols, without the allocator ---------------------------------------
 * The probe must not change what it measures.  dlsym and dlopen allocate:
 * a failed dlsym builds its error string with malloc, and three such calls
 * before main were enough to move tcmalloc's page heap so that a program
 * of 5-25 MiB buffers faulted 75% more (mimalloc-bench's malloc-large:
 * 223k against 127k faults).  So symbols are looked up here by reading each
 * loaded object's dynamic symbol table (dl_iterate_phdr, its GNU or SysV
 * hash table), which takes no memory, and named with dladdr, which takes
 * none either. */
typedef struct {
    const char *name;
    uint32_t gnu, sysv;         /* the name's two hashes */
    void *found;
} pb_lookup_t;

static uint32_t pb_gnu_hash(const char *s)
{
    uint32_t h = 5381;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = h * 33 + *p;
    return h;
}

static uint32_t pb_sysv_hash(const char *s)
{
    uint32_t h = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h = (h << 4) + *p;
        uint32_t g = h & 0xf0000000u;
        h ^= g >> 24;
        h &= ~g;
    }
    return h;
}

/* The object's dynamic tables: glibc relocates their addresses in place,
 * the vDSO's stay offsets. */
typedef struct {
    const ElfW(Sym) *sym;
    const char *str;
    const uint32_t *gnu, *sysv;
    const ElfW(Half) *versym;
} pb_dyn_t;

static const void *pb_dptr(ElfW(Addr) base, ElfW(Addr) d)
{
    return (const void *)(d < base ? base + d : d);
}

/* Symbol i of the object, if it defines name (a default version). */
static void *pb_defines(const pb_dyn_t *t, ElfW(Addr) base, uint32_t i, const char *name)
{
    const ElfW(Sym) *es = &t->sym[i];
    if (es->st_shndx == SHN_UNDEF || !es->st_value || strcmp(t->str + es->st_name, name))
        return NULL;
    if (ELF64_ST_BIND(es->st_info) != STB_GLOBAL && ELF64_ST_BIND(es->st_info) != STB_WEAK)
        return NULL;
    if (t->versym && (t->versym[i] & 0x8000))
        return NULL; /* a hidden (non-default) version */
    return (void *)(base + es->st_value);
}

static void *pb_find_in(const pb_dyn_t *t, ElfW(Addr) base, const pb_lookup_t *q)
{
    void *p = NULL;
    if (t->gnu) {
        uint32_t nb = t->gnu[0], off = t->gnu[1], nbloom = t->gnu[2];
        const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(t->gnu + 4) + nbloom);
        const uint32_t *chain = buckets + nb;
        uint32_t i = nb ? buckets[q->gnu % nb] : 0;
        for (; i >= off && i; i++) {
            uint32_t h = chain[i - off];
            if ((h | 1) == (q->gnu | 1) && (p = pb_defines(t, base, i, q->name)))
                return p;
            if (h & 1)
                break;
        }
        return NULL;
    }
    if (t->sysv) {
        uint32_t nb = t->sysv[0];
        const uint32_t *bucket = t->sysv + 2, *chain = bucket + nb;
        for (uint32_t i = nb ? bucket[q->sysv % nb] : 0; i; i = chain[i])
            if ((p = pb_defines(t, base, i, q->name)))
                return p;
    }
    return NULL;
}

/* dl_iterate_phdr's callback: objects come in load order, the program first. */
static int pb_lookup_one(struct dl_phdr_info *info, size_t size, void *data)
{
    pb_lookup_t *q = data;
    (void)size;
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn)
        return 0;
    pb_dyn_t t = {0};
    ElfW(Addr) b = info->dlpi_addr;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        if (dyn->d_tag == DT_SYMTAB)
            t.sym = pb_dptr(b, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_STRTAB)
            t.str = pb_dptr(b, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_GNU_HASH)
            t.gnu = pb_dptr(b, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_HASH)
            t.sysv = pb_dptr(b, dyn->d_un.d_ptr);
        else if (dyn->d_tag == DT_VERSYM)
            t.versym = pb_dptr(b, dyn->d_un.d_ptr);
    }
    if (!t.sym || !t.str)
        return 0;
    q->found = pb_find_in(&t, b, q);
    return q->found != NULL; /* the first definition wins, as for the dynamic linker */
}

/* The first definition of sym in load order (what the dynamic linker
 * binds), with the object holding it in *di; NULL when none defines it.
 * A program's undefined entry (a non-PIE program's "canonical PLT" stub for
 * an imported function it takes the address of, as Debian's python3.11 does
 * for malloc) is no definition, so it is passed over. */
static void *pb_resolve(const char *sym, Dl_info *di)
{
    pb_lookup_t q = {sym, pb_gnu_hash(sym), pb_sysv_hash(sym), NULL};
    dl_iterate_phdr(pb_lookup_one, &q);
    if (q.found && !dladdr(q.found, di))
        memset(di, 0, sizeof *di);
    return q.found;
}

/* The definition of `name` in the object serving malloc, or NULL: the
 * only way a family's hooks reach its allocator, so a second allocator
 * loaded beside it is never asked. */
static void *pb_sym(const char *name)
{
    Dl_info di;
    void *p = pb_resolve(name, &di);
    return p && pb.malloc_base && di.dli_fbase == pb.malloc_base ? p : NULL;
}

static const probe_ctx_t pb_ctx = { pb_sym, pb_line, pb.malloc_path };

/* Finds what serves malloc and the family whose ident symbol it defines. */
static void pb_identify(void)
{
    Dl_info di;
    if (pb.identified)
        return;
    pb.identified = true;
    void *m = pb_resolve("malloc", &di);
    if (m && di.dli_fbase) {
        pb.malloc_base = di.dli_fbase;
        snprintf(pb.malloc_name, sizeof pb.malloc_name, "%s",
                 di.dli_fname && *di.dli_fname ? di.dli_fname : "/proc/self/exe");
        pb_object_path(di.dli_fname, pb.malloc_path, sizeof pb.malloc_path);
    }
    pb.family = NULL;
    for (size_t f = 0; f < alloc_nfamilies && !pb.family; f++)
        for (const char *const *sym = alloc_families[f]->ident; *sym && !pb.family; sym++)
            if (pb_sym(*sym))
                pb.family = alloc_families[f];
}

/* ---- environment -------------------------------------------------------- */
/* The variables any family reads (family.h env_vars), and LD_PRELOAD. */
static bool pb_env_wanted(const char *kv)
{
    if (pb_starts(kv, "LD_PRELOAD="))
        return true;
    for (size_t f = 0; f < alloc_nfamilies; f++)
        for (const char *const *v = alloc_families[f]->env_vars; *v; v++) {
            size_t l = strlen(*v);
            if (strncmp(kv, *v, l) == 0 && ((*v)[l - 1] == '=' || strchr(kv + l, '=')))
                return true;
        }
    return false;
}

static void pb_report_env(void)
{
    if (!environ)
        return;
    for (char **e = environ; *e; e++)
        if (pb_env_wanted(*e))
            pb_line("env:%s", *e);
}

/* api:<sym>=<object> for every family's ident and report symbols found. */
static void pb_report_apis(void)
{
    for (size_t f = 0; f < alloc_nfamilies; f++) {
        const alloc_info_t *a = alloc_families[f];
        for (int list = 0; list < 2; list++)
            for (const char *const *sym = list ? a->report_syms : a->ident; sym && *sym; sym++) {
                Dl_info di;
                char path[PATH_MAX];
                void *p = pb_resolve(*sym, &di);
                if (!p)
                    continue;
                if (dladdr(p, &di))
                    pb_object_path(di.dli_fname, path, sizeof path);
                else
                    snprintf(path, sizeof path, "?");
                pb_line("api:%s=%s", *sym, path);
            }
    }
}

/* ---- tun: lines ----------------------------------------------------------- */
static void pb_read_key(const char *key, char *out, size_t n)
{
    if (strchr(key, '=')) {
        snprintf(out, n, "!invalid key: contains '='");
        return;
    }
    if (!pb.family) {
        snprintf(out, n, "!allocator family unknown (malloc served by %s)",
                 *pb.malloc_path ? pb.malloc_path : "?");
        return;
    }
    pb.family->probe_read(&pb_ctx, key, out, n);
}

static void pb_report_tun(void)
{
    static char list[4096];
    static char val[PB_VAL_MAX];
    const char *env = pb_getenv(MB_PROBE_READ_ENV);
    if (!env || !*env)
        return;
    if (strlen(env) >= sizeof list) {
        pb_line("tun:%s=!list too long", MB_PROBE_READ_ENV);
        return;
    }
    strcpy(list, env);
    for (char *p = list; p && *p;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        while (*p == ' ')
            p++;
        size_t l = strlen(p);
        while (l > 0 && p[l - 1] == ' ')
            p[--l] = '\0';
        if (*p) {
            pb_read_key(p, val, sizeof val);
            for (char *q = p; *q; q++)     /* keep the key=value split unambiguous */
                if (*q == '=')
                    *q = '?';
            pb_line("tun:%s=%s", p, val);
        }
        p = comma ? comma + 1 : NULL;
    }
}

/* ---- the report ------------------------------------------------------------ */
static void pb_report(const char *when)
{
    char ver[256];
    pb_identify();
    pb_line("probe_at=%s", when);
    pb_line("pid=%ld", (long)getpid());
    ssize_t l = readlink("/proc/self/exe", pb_tmp, sizeof pb_tmp - 1);
    if (l > 0) {
        pb_tmp[l] = '\0';
        pb_line("exe=%s", pb_tmp);
    }
    pb_line("malloc_so=%s", pb.malloc_path);
    pb_line("malloc_so_name=%s", pb.malloc_name);
    pb_line("family=%s", pb.family ? pb.family->name : "unknown");
    ver[0] = '\0';
    if (pb.family)
        pb.family->probe_version(&pb_ctx, ver, sizeof ver);
    pb_line("version=%s", ver);
    pb_report_apis();
    pb_digesting = true;
    pb_report_env();
    pb_digesting = false;
    pb_report_tun();
    pb_line("settings_digest=%016llx", (unsigned long long)pb_digest);
    pb_close_line("probe=done\n");
    pb.state = PB_REPORTED;
}

/* A descendant of the command: one line, written with one write() (under
 * PIPE_BUF, so it never interleaves with another process's lines). */
static void pb_report_descendant(void)
{
    pb_identify();
    char exe[256] = "";
    ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[l > 0 ? l : 0] = '\0';
    pb_digesting = pb_hash_only = true;
    pb_report_env(); /* the digest is of the allocator's variables alone */
    pb_digesting = pb_hash_only = false;
    pb_line("proc:%ld=%s|%s|%016llx|%s", (long)getpid(), pb.family ? pb.family->name : "unknown",
            pb.malloc_path, (unsigned long long)pb_digest, exe);
    pb.state = PB_REPORTED;
}

/* ---- the pipe to the harness ------------------------------------------------- */
/* Is fd the sample's probe pipe (MB_PROBE_PIPE's inode)?  Without the
 * variable (a hand-run command), any writable descriptor is. */
static bool pb_our_pipe(int fd)
{
    const char *v = pb_getenv(MB_PROBE_PIPE_ENV), *colon = v ? strchr(v, ':') : NULL;
    struct stat st;
    if (!colon)
        return true;
    return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode) &&
           (unsigned long long)st.st_ino == strtoull(colon + 1, NULL, 10);
}

/* A descendant whose descriptor was closed on the way (or reused) reopens
 * the harness's end of the pipe for writing: the descriptor, or -1. */
static int pb_open_pipe(const char *harness)
{
    const char *v = pb_getenv(MB_PROBE_PIPE_ENV);
    if (!v || !harness)
        return -1;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd/%ld", strtol(harness, NULL, 10), strtol(v, NULL, 10));
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (!pb_our_pipe(fd) || fcntl(fd, F_SETFL, 0) != 0) { /* blocking writes, as on the inherited one */
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- who is the process started ---------------------------------------------- */
/* The process the harness started, whose images write full reports, is the
 * one whose pid MB_PROBE_ROOT holds: its first image writes it there, in
 * place of the zeros the harness put (so every image after it, and every
 * descendant, inherits it).  An orphan the harness adopted (it is a
 * subreaper) has the harness for its parent too, and is a descendant. */
static bool pb_is_descendant(const char *parent)
{
    char *v = (char *)pb_getenv(MB_PROBE_ROOT_ENV);
    bool harness_child = parent && *parent && strtol(parent, NULL, 10) == (long)getppid();
    if (!v) /* run by hand, or by a harness before this variable */
        return parent && *parent && !harness_child;
    long root = strtol(v, NULL, 10);
    size_t room = strlen(v);
    if (root == 0 && harness_child && room >= 10) {
        char pid[24];
        snprintf(pid, sizeof pid, "%0*ld", (int)room, (long)getpid());
        memcpy(v, pid, room);
        return false;
    }
    return root != (long)getpid();
}

/* A descendant closes the memfd that holds the started process's secret
 * (inherited through fork and exec: MB_PROBE_TOKEN=@<fd>), so that it
 * cannot sign a report as that process; only a descriptor that is that
 * memfd is closed. */
static void pb_close_root_token(void)
{
    const char *v = pb_getenv(MB_PROBE_TOKEN_ENV);
    char path[64], target[64];
    if (!v || v[0] != '@')
        return;
    long fd = strtol(v + 1, NULL, 10);
    snprintf(path, sizeof path, "/proc/self/fd/%ld", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    target[n > 0 ? n : 0] = '\0';
    if (!strncmp(target, "/memfd:mb-probe-token", 21))
        close((int)fd);
}

/* ---- entry points ------------------------------------------------------------ */
/* Arms the probe when MB_PROBE_FD names a writable descriptor; otherwise
 * does nothing at all. */
__attribute__((constructor))
static void pb_constructor(void)
{
    const char *s = pb_getenv(MB_PROBE_FD_ENV);
    if (!s || !*s)
        return;
    char *end;
    errno = 0;
    long fd = strtol(s, &end, 10);
    if (*end || errno || fd < 0 || fd > INT_MAX)
        return;
    /* a process the harness did not start itself (the command's children) */
    const char *parent = pb_getenv(MB_PROBE_PARENT_ENV);
    pb.descendant = pb_is_descendant(parent);
    int fl = fcntl((int)fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || !pb_our_pipe((int)fd)) {
        if (!pb.descendant || (fd = pb_open_pipe(parent)) < 0)
            return;
    }
    pb.fd = (int)fd;
    pb.pid = getpid();
    /* the process the harness started takes its secret out of the
     * environment before main; a descendant's stays for its own children */
    if (pb.descendant) {
        pb_take_env(MB_PROBE_DTOKEN_ENV, pb.token, sizeof pb.token);
        pb_close_root_token();
    } else
        pb_take_token(pb.token, sizeof pb.token);
    pb.state = PB_PENDING;
}

/* Writes the statistics (and the report, if the start hook never ran) in the
 * process that armed the probe, not in forked children that exit(). */
__attribute__((destructor))
static void pb_destructor(void)
{
    if (pb.state == PB_OFF || getpid() != pb.pid)
        return;
    if (pb.descendant) {
        if (pb.state == PB_PENDING) {
            pb_report_descendant();
            pb_flush();
        }
        return;
    }
    if (pb.state == PB_PENDING) {
        pb_report("exit");
        pb_flush();
    }
    if (pb.family)
        pb.family->probe_stats(&pb_ctx);
    pb_close_line("probe=end\n");
    pb_flush();
}

typedef int (*pb_main_fn)(int, char **, char **);
typedef int (*pb_start_fn)(pb_main_fn, int, char **, void (*)(void), void (*)(void),
                           void (*)(void), void *);

int __libc_start_main(pb_main_fn main_fn, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* glibc's crt1 calls this after every library constructor has run: the
 * earliest point at which all allocators have applied their settings. */
__attribute__((visibility("default")))
int __libc_start_main(pb_main_fn main_fn, int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    pb_start_fn real = NULL;
    PB_FN(real, dlsym(RTLD_NEXT, "__libc_start_main"));
    if (pb.state == PB_PENDING && getpid() == pb.pid) {
        if (pb.descendant)
            pb_report_descendant();
        else
            pb_report("start");
        pb_flush();
    }
    if (!real) {
        static const char msg[] = "libmbprobe: cannot find the next __libc_start_main\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(127);
    }
    return real(main_fn, argc, argv, init, fini, rtld_fini, stack_end);
}
