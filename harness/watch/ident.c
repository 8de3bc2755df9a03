/* ident.c - a running process's allocator and its start-up settings, from
 * outside (contract: ident.h).  Order of evidence: a family's library
 * among the mapped files; else the program itself carrying a family's
 * marks (static, or dynamic but defining malloc); else libc alone, which
 * is glibc's malloc or an allocator we do not know. */
#include "ident.h"
#include "elfinfo.h"
#include "registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define SCAN_MAX (512ull << 20) /* the most of a program file searched for marks */

static const char *base_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The process's environment block from /proc/PID/environ into a malloc'd
 * buffer (*len bytes): 0 or -errno. */
static int ident_environ(int pid, char **buf, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t cap = 65536, n = 0;
    char *b = malloc(cap + 1);
    ssize_t r;
    while (b && (r = read(fd, b + n, cap - n)) > 0) {
        n += (size_t)r;
        if (n == cap) { /* grow by copy, wiping the old buffer: none of it stays behind */
            char *g = malloc(2 * cap + 1);
            if (g)
                memcpy(g, b, n);
            memset(b, 0, n);
            free(b);
            b = g;
            cap *= 2;
        }
    }
    close(fd);
    if (!b)
        return -ENOMEM;
    b[n] = '\0'; /* the process wrote it: its last entry may lack its NUL */
    *buf = b;
    *len = n;
    return 0;
}

/* Was a variable of p's name (up to '=') kept before, in block[0..out)? */
static bool kept_before(const char *block, size_t out, const char *p)
{
    size_t n = strcspn(p, "=");
    for (const char *q = block; q < block + out; q += strlen(q) + 1)
        if (!strncmp(q, p, n) && q[n] == '=')
            return true;
    return false;
}

size_t ident_keep_env(char *env, size_t n)
{
    size_t out = 0;
    /* kept ones move down: the first of each name only (the one getenv finds), each at most
     * IDENT_VAR_KEEP bytes (a longer one is cut: more is never shown), IDENT_ENV_KEEP and
     * 4 x IDENT_MAX_VARS variables in all */
    unsigned nkept = 0;
    for (const char *p = env; p < env + n && nkept < 4 * IDENT_MAX_VARS; p += strnlen(p, (size_t)(env + n - p)) + 1)
        if ((alloc_env_owner(p) || !strncmp(p, "LD_PRELOAD=", 11)) && !kept_before(env, out, p)) {
            size_t l = strnlen(p, (size_t)(env + n - p));
            if (l > IDENT_VAR_KEEP - 1)
                l = IDENT_VAR_KEEP - 1;
            if (out + l + 1 > IDENT_ENV_KEEP)
                break;
            memmove(env + out, p, l);
            env[out + l] = '\0';
            out += l + 1;
            nkept++;
        }
    memset(env + out, 0, n - out); /* nothing else of it stays in memory */
    return out;
}

/* The part of pid's environment ident may keep: the allocator variables and
 * LD_PRELOAD (read to tell "preloaded", never printed), as a malloc'd
 * NUL-separated block (*len bytes; 0 when none): the first of each name only, each at most
 * IDENT_VAR_KEEP bytes, IDENT_ENV_KEEP in all (a process cannot make it hold more).  Read while the image
 * runs, so that one which execs or exits later is still recognised.  The
 * rest of the environment is dropped here, as it is read.  0 or -errno. */
static int ident_capture_env(int pid, char **block, size_t *len)
{
    char *env = NULL; /* set by ident_environ (initialized: gcc cannot see it once inlined) */
    size_t n = 0, out = 0;
    int rc = ident_environ(pid, &env, &n);
    if (rc)
        return rc;
    out = ident_keep_env(env, n);
    char *small = malloc(out + 1); /* the block, no bigger than what is kept */
    if (small) {
        memcpy(small, env, out);
        small[out] = '\0';
    }
    memset(env, 0, n);
    free(env);
    if (!small)
        return -ENOMEM;
    *block = small;
    *len = out;
    return 0;
}

uint64_t ident_maps_base(FILE *maps, const char *name)
{
    char line[PATH_MAX + 128];
    uint64_t base = 0;
    while (fgets(line, sizeof line, maps) && !base) {
        unsigned long long lo, off;
        int at = 0;
        if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %n", &lo, &off, &at) >= 2 && at && off == 0) {
            line[strcspn(line, "\n")] = '\0';
            if (!strcmp(line + at, name))
                base = lo;
        }
    }
    return base;
}

/* The string a running program's own `malloc_conf` points to (jemalloc reads it before its
 * environment): the symbol's address from the program file (exe, read by ident_exe), its load
 * base from /proc/PID/maps, the pointer and the string read through /proc/PID/mem (root; the
 * process is not stopped).  0 with the string in out, or -ENOENT (the program defines none, or
 * it is NULL) or -errno. */
static int ident_compiled_conf(int pid, const ident_exe_t *exe, char *out, size_t len)
{
    char link[64];
    out[0] = '\0';
    if (!exe || !exe->read || !exe->elf.elf || !exe->elf.malloc_conf || len < 2)
        return -ENOENT;
    uint64_t base = 0;
    if (exe->elf.pie) { /* the lowest mapping of the program file, at file offset 0 (names compared, none opened) */
        snprintf(link, sizeof link, "/proc/%d/maps", pid);
        FILE *f = fopen(link, "re");
        if (f) {
            base = ident_maps_base(f, exe->name);
            fclose(f);
        }
        if (!base)
            return -ENOENT;
    }
    snprintf(link, sizeof link, "/proc/%d/mem", pid);
    int fd = open(link, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    uint64_t ptr = 0;
    ssize_t got = pread(fd, &ptr, sizeof ptr, (off_t)(base + exe->elf.malloc_conf));
    if (got == (ssize_t)sizeof ptr && ptr)
        got = pread(fd, out, len - 1, (off_t)ptr);
    close(fd);
    if (!ptr || got <= 0) {
        out[0] = '\0';
        return -ENOENT;
    }
    out[got] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static int ident_exe(int pid, ident_exe_t *out); /* below, beside ident_exe_path */

int ident_capture(int pid, bool full_cmdline, ident_capture_t *out)
{
    memset(out, 0, sizeof *out);
    out->exe_rc = ident_exe(pid, &out->exe);
    (void)ident_compiled_conf(pid, &out->exe, out->conf, sizeof out->conf);
    out->env_rc = ident_capture_env(pid, &out->env, &out->env_len);
    if (out->env_rc)
        out->env = NULL, out->env_len = 0;
    char path[64], buf[sizeof out->cmdline];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    size_t len = n > 0 ? (size_t)n : 0;
    if (len && buf[len - 1] != '\0')
        buf[len++] = '\0'; /* cut, or a process that rewrote its own: end the last word */
    size_t keep = 0;
    unsigned words = 0;
    for (size_t at = 0; at < len; at += strlen(buf + at) + 1, words++)
        if (full_cmdline || words == 0)
            keep = at + strlen(buf + at) + 1;
    memcpy(out->cmdline, buf, keep);
    out->cmdline_len = keep;
    out->hidden_args = full_cmdline || !words ? 0 : words - 1;
    memset(buf, 0, sizeof buf);
    return out->exe_rc;
}

void ident_capture_free(ident_capture_t *c)
{
    if (c->env)
        memset(c->env, 0, c->env_len);
    free(c->env);
    c->env = NULL;
    c->env_len = 0;
}

/* The value of NAME in an environment block, or NULL. */
static const char *env_get(const ident_input_t *in, const char *name)
{
    size_t n = strlen(name);
    const char *end = in->environ ? in->environ + in->environ_len : NULL; /* NULL: none read */
    for (const char *p = in->environ; p && p < end; p += strnlen(p, (size_t)(end - p)) + 1)
        if ((size_t)(end - p) > n && !strncmp(p, name, n) && p[n] == '=')
            return p + n + 1;
    return NULL;
}

/* The package list (/var/lib/dpkg/info/NAME.list) that holds path or alt, its name in pkg: only
 * lists whose name starts with prefix ("" every list).  true when found. */
static bool find_list(const char *prefix, const char *path, const char *alt, char *pkg, size_t pkglen)
{
    char line[PATH_MAX + 8];
    DIR *d = opendir("/var/lib/dpkg/info");
    if (!d)
        return false;
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".list") || strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        char lp[PATH_MAX];
        snprintf(lp, sizeof lp, "/var/lib/dpkg/info/%s", e->d_name);
        FILE *f = fopen(lp, "re");
        while (f && fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = '\0';
            if (!strcmp(line, path) || !strcmp(line, alt)) {
                snprintf(pkg, pkglen, "%.*s", (int)(l - 5), e->d_name);
                found = true;
                break;
            }
        }
        if (f)
            fclose(f);
    }
    closedir(d);
    return found;
}

/* "pkg" "version" of the Debian package whose file list holds path.  The lists named like the
 * file are read first (libjemalloc.so.2 in libjemalloc2's, libc.so.6 in libc6's,
 * libtcmalloc_minimal.so.4 in libtcmalloc-minimal4's): reading all of them (thousands) takes
 * most of a second, which a report after ^C has not got. */
static int ident_package(const char *path, char *pkg, size_t pkglen, char *version, size_t verlen)
{
    char alt[PATH_MAX + 8], line[PATH_MAX + 8], stem[128];
    /* merged /usr: the list names /lib/..., the mapping /usr/lib/... (or the other way) */
    if (!strncmp(path, "/usr/", 5))
        snprintf(alt, sizeof alt, "%s", path + 4);
    else
        snprintf(alt, sizeof alt, "/usr%s", path);
    snprintf(stem, sizeof stem, "%.*s", (int)strcspn(base_of(path), "."), base_of(path));
    for (char *c = stem; *c; c++)
        *c = *c == '_' ? '-' : *c;
    if (!(stem[0] && find_list(stem, path, alt, pkg, pkglen)) && !find_list("", path, alt, pkg, pkglen))
        return -ENOENT;
    char *colon = strchr(pkg, ':'); /* libjemalloc2:amd64 */
    size_t plen = colon ? (size_t)(colon - pkg) : strlen(pkg);
    FILE *f = fopen("/var/lib/dpkg/status", "re");
    bool in = false;
    version[0] = '\0';
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "Package: ", 9))
            in = strlen(line + 9) == plen + 1 && !strncmp(line + 9, pkg, plen);
        else if (in && !strncmp(line, "Version: ", 9)) {
            line[strcspn(line, "\n")] = '\0';
            snprintf(version, verlen, "%s", line + 9);
            break;
        }
    }
    if (f)
        fclose(f);
    return 0;
}

const alloc_info_t *ident_marks(const void *image, size_t len, const char **mark)
{
    const alloc_info_t *found = NULL;
    /* the system's last: a static program carries libc's malloc beside any other */
    for (int pass = 0; pass < 2 && !found; pass++)
        for (size_t f = 0; f < alloc_nfamilies && !found; f++) {
            if (alloc_is_system(alloc_families[f]) != (pass == 1))
                continue;
            for (const char *const *k = alloc_families[f]->marks; k && *k && !found; k++)
                if (memmem(image, len, *k, strlen(*k) + 1) ||
                    (strlen(*k) > 8 && memmem(image, len, *k, strlen(*k))))
                    found = alloc_families[f], *mark = *k;
        }
    return found;
}

/* The first family whose marks are in the open file: its mark in *mark. */
static const alloc_info_t *scan_marks(int fd, const char **mark)
{
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0)
        return NULL;
    size_t len = (size_t)st.st_size < SCAN_MAX ? (size_t)st.st_size : SCAN_MAX;
    void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED)
        return NULL;
    const alloc_info_t *found = ident_marks(m, len, mark);
    munmap(m, len);
    return found;
}

/* Everything ident needs of an open program file (fd), named name in words. */
static int exe_from_fd(int fd, const char *name, ident_exe_t *out)
{
    char err[PATH_MAX + 64];
    snprintf(out->name, sizeof out->name, "%s", name);
    int rc = elf_inspect_fd(fd, name, &out->elf, err, sizeof err);
    if (rc)
        return rc;
    out->read = true;
    if (out->elf.elf && (!out->elf.dynamic || out->elf.defines_malloc))
        out->marks = scan_marks(fd, &out->mark);
    return 0;
}

/* pid's program file, opened through /proc/PID/exe: 0, or -errno (gone, not a regular
 * file, unreadable). */
static int ident_exe(int pid, ident_exe_t *out)
{
    char link[64];
    memset(out, 0, sizeof *out);
    snprintf(link, sizeof link, "/proc/%d/exe", pid);
    /* the file the kernel runs, opened through its own link: never a name the process could
     * have put something else at ("prog (deleted)" in a folder of its owner's) */
    int fd = open(link, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    ssize_t n = readlink(link, out->name, sizeof out->name - 1); /* its name, for words only */
    out->name[n > 0 ? n : 0] = '\0';
    char name[PATH_MAX];
    snprintf(name, sizeof name, "%s", out->name);
    int rc = exe_from_fd(fd, name, out);
    close(fd);
    return rc;
}

int ident_exe_path(const char *path, ident_exe_t *out)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    int rc = exe_from_fd(fd, path, out);
    close(fd);
    return rc;
}

static void settings(const ident_input_t *in, ident_t *out)
{
    const char *end = in->environ ? in->environ + in->environ_len : NULL; /* NULL: none read */
    for (const char *p = in->environ; p && p < end; p += strnlen(p, (size_t)(end - p)) + 1)
        if (alloc_env_owner(p) && out->nvars < IDENT_MAX_VARS)
            snprintf(out->vars[out->nvars++], sizeof out->vars[0], "%s", p);
    if (in->compiled_conf)
        snprintf(out->malloc_conf_compiled, sizeof out->malloc_conf_compiled, "%s", in->compiled_conf);
    if (out->family && !strcmp(out->family->name, "jemalloc")) {
        ssize_t n = readlink("/etc/malloc.conf", out->malloc_conf_file, sizeof out->malloc_conf_file - 1);
        out->malloc_conf_file[n > 0 ? n : 0] = '\0';
    }
}

/* One "key<kv>value" (a joined variable's part) or a variable's value, for tunable t of a. */
static void exec_setting(const alloc_info_t *a, const alloc_tunable_t *t, const char *value, const char *as_written,
                         char (*out)[160], size_t maxout, size_t *nout, char (*left)[512], size_t maxleft,
                         size_t *nleft)
{
    char kv[192], err[512];
    alloc_setting_t st;
    snprintf(kv, sizeof kv, "%s=%s", t ? t->name : "", value);
    if (t && !alloc_parse_setting(a, kv, &st, err, sizeof err)) {
        if (*nout < maxout)
            snprintf(out[(*nout)++], sizeof out[0], "%s=%s", t->name, st.value);
    } else if (*nleft < maxleft) {
        snprintf(left[(*nleft)++], sizeof left[0], "%s", as_written);
    }
}

static const alloc_tunable_t *tunable_by_key(const alloc_info_t *a, const char *key, size_t keylen)
{
    for (size_t i = 0; i < a->ntunables; i++)
        if (a->tunables[i].env_key && strlen(a->tunables[i].env_key) == keylen &&
            !strncmp(a->tunables[i].env_key, key, keylen))
            return &a->tunables[i];
    return NULL;
}

void ident_exec_settings(const alloc_info_t *a, const char (*vars)[512], size_t nvars, char (*out)[160],
                         size_t maxout, size_t *nout, char (*left)[512], size_t maxleft, size_t *nleft)
{
    *nout = *nleft = 0;
    for (size_t v = 0; a && v < nvars; v++) {
        const char *eq = strchr(vars[v], '=');
        if (!eq || alloc_env_owner(vars[v]) != a)
            continue;
        size_t nlen = (size_t)(eq - vars[v]);
        const char *value = eq + 1;
        if (!a->conf.var || strlen(a->conf.var) != nlen || strncmp(a->conf.var, vars[v], nlen)) {
            /* a variable of its own per setting (TCMALLOC_RELEASE_RATE), or an alias none reads as one */
            const alloc_tunable_t *t = a->conf.var ? NULL : tunable_by_key(a, vars[v], nlen);
            exec_setting(a, t, value, vars[v], out, maxout, nout, left, maxleft, nleft);
            continue;
        }
        size_t seplen = strlen(a->conf.sep), kvlen = strlen(a->conf.kv);
        for (const char *part = value; *part;) {
            const char *end = strstr(part, a->conf.sep);
            size_t plen = end ? (size_t)(end - part) : strlen(part);
            char item[512], written[512];
            snprintf(item, sizeof item, "%.*s", (int)plen, part);
            snprintf(written, sizeof written, "%.*s: %s", (int)nlen, vars[v], item);
            char *k = strstr(item, a->conf.kv);
            if (plen) {
                const alloc_tunable_t *t = k ? tunable_by_key(a, item, (size_t)(k - item)) : NULL;
                exec_setting(a, t, k ? k + kvlen : "", written, out, maxout, nout, left, maxleft, nleft);
            }
            part += plen + (end ? seplen : 0);
        }
    }
}

static void version_of(ident_t *out)
{
    char pkg[256];
    if (out->path[0] && !ident_package(out->path, pkg, sizeof pkg, out->version, sizeof out->version) &&
        out->version[0]) {
        char *colon = strchr(pkg, ':');
        if (colon)
            *colon = '\0';
        snprintf(out->version_how, sizeof out->version_how, "package %s", pkg);
        return;
    }
    snprintf(out->version, sizeof out->version, "unknown");
    snprintf(out->version_how, sizeof out->version_how, "%s", out->path[0] ? "no package owns the file" : "");
}

void ident_read(const ident_input_t *in, ident_t *out)
{
    memset(out, 0, sizeof *out);
    const char *libc = NULL, *soname = NULL;
    for (size_t i = 0; i < in->nfiles; i++) { /* the first family library, and libc */
        if (!libc && !strncmp(base_of(in->files[i]), "libc.so", 7))
            libc = in->files[i];
        const alloc_info_t *a = out->family ? NULL : alloc_by_library(in->files[i], &soname);
        if (a) {
            out->family = a;
            out->sure = true;
            snprintf(out->path, sizeof out->path, "%s", in->files[i]);
        }
    }
    const elf_info_t *ei = in->exe && in->exe->read && in->exe->elf.elf ? &in->exe->elf : NULL;
    bool elf = ei != NULL;
    if (out->family) {
        const char *pre = env_get(in, "LD_PRELOAD"); /* read to decide, never printed */
        bool needed = false;
        for (size_t k = 0; elf && k < ei->nneeded; k++)
            needed |= !strcmp(ei->needed[k], soname) || !strcmp(ei->needed[k], base_of(out->path));
        snprintf(out->how, sizeof out->how, "%s",
                 pre && (strstr(pre, soname) || strstr(pre, base_of(out->path))) ? "preloaded"
                 : needed                                                        ? "linked"
                                                                                 : "loaded");
        snprintf(out->evidence, sizeof out->evidence, "%s is mapped (%s)", out->path,
                 !strcmp(out->how, "preloaded") ? "named in LD_PRELOAD"
                 : !strcmp(out->how, "linked")  ? "the program needs it"
                                                : "loaded by a library or dlopen");
    } else if (elf && (!ei->dynamic || ei->defines_malloc)) {
        const char *mark = in->exe->mark;
        out->family = in->exe->marks;
        snprintf(out->how, sizeof out->how, "%s", ei->dynamic ? "built-in" : "static");
        snprintf(out->path, sizeof out->path, "%s", in->exe->name);
        out->sure = out->family && !alloc_is_system(out->family); /* libc's: unless it was replaced */
        if (out->family)
            snprintf(out->evidence, sizeof out->evidence, "%s program %s carries \"%s\"",
                     ei->dynamic ? "the" : "the static", in->exe->name, mark);
        else
            snprintf(out->evidence, sizeof out->evidence, "%s program %s has its own malloc, of no family known here",
                     ei->dynamic ? "the" : "the static", in->exe->name);
    } else if (libc) {
        out->family = alloc_system();
        out->sure = false;
        snprintf(out->how, sizeof out->how, "libc");
        snprintf(out->path, sizeof out->path, "%s", libc);
        snprintf(out->evidence, sizeof out->evidence,
                 "no allocator library is mapped beside %s: glibc's malloc, or one not recognised here", libc);
    } else {
        snprintf(out->how, sizeof out->how, "unknown");
        snprintf(out->evidence, sizeof out->evidence, "neither libc nor a known allocator is mapped%s",
                 elf ? "" : " (the program file could not be read)");
    }
    if (out->family && strcmp(out->how, "static") && strcmp(out->how, "built-in"))
        version_of(out);
    else
        snprintf(out->version, sizeof out->version, "unknown"),
            snprintf(out->version_how, sizeof out->version_how, "%s", "no version string is read from a program");
    settings(in, out);
}
