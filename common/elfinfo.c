/* elfinfo.c - reading a program's ELF headers (contract: elfinfo.h).  The
 * file is mapped read-only and every offset is checked against its size
 * before use: a damaged file is "not an ELF program", never a crash. */
#include "elfinfo.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* 0 when path is a regular file we may execute, else why not:
 * -ENOENT, -EISDIR, -EACCES (not executable, or not a regular file). */
static int runnable(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    if (S_ISDIR(st.st_mode))
        return -EISDIR;
    if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
        return -EACCES;
    return 0;
}

/* elf_which and elf_which_tool: a tool's search skips an empty or relative PATH entry (the
 * current directory, where execvp would look), so that the harness, often root, never runs a
 * perf or python3 that the folder it was started in holds. */
static int which(const char *name, char *out, size_t len, bool tool)
{
    if (!*name)
        return -ENOENT;
    if (strchr(name, '/')) {
        snprintf(out, len, "%s", name);
        return runnable(name);
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int why = -ENOENT; /* as execvp: a match that cannot run says why */
    char first[PATH_MAX] = "";
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, len, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", name);
        int rc = tool && out[0] != '/' ? -ENOENT : runnable(out);
        if (rc == 0)
            return 0;
        if (rc != -ENOENT && why == -ENOENT) {
            why = rc;
            snprintf(first, sizeof first, "%s", out);
        }
        p += n;
        if (*p == ':')
            p++;
    }
    if (first[0])
        snprintf(out, len, "%s", first);
    return why;
}

int elf_which(const char *name, char *out, size_t len)
{
    return which(name, out, len, false);
}

int elf_which_tool(const char *name, char *out, size_t len)
{
    return which(name, out, len, true);
}

static bool in_file(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}

/* A NUL-terminated string at off inside [base, base + lim), or NULL. */
static const char *str_at(const uint8_t *m, size_t size, uint64_t base, uint64_t lim, uint64_t off)
{
    if (!in_file(size, base, lim) || off >= lim)
        return NULL;
    const char *s = (const char *)m + base + off;
    return memchr(s, '\0', lim - off) ? s : NULL;
}

/* The same walk for 32- and 64-bit files: program headers for PT_INTERP,
 * sections for .dynamic (DT_NEEDED), .dynsym (a defined malloc) and both
 * symbol tables (a defined malloc_conf). */
#define ELF_WALK(B)                                                                            \
    static void walk##B(const uint8_t *m, size_t size, elf_info_t *out)                        \
    {                                                                                          \
        const Elf##B##_Ehdr *eh = (const void *)m;                                             \
        out->pie = eh->e_type == ET_DYN;                                                       \
        if (!in_file(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf##B##_Phdr)))       \
            return;                                                                            \
        const Elf##B##_Phdr *ph = (const void *)(m + eh->e_phoff);                             \
        for (unsigned i = 0; i < eh->e_phnum; i++)                                             \
            if (ph[i].p_type == PT_INTERP)                                                     \
                out->dynamic = true;                                                           \
        if (eh->e_shentsize != sizeof(Elf##B##_Shdr) ||                                        \
            !in_file(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf##B##_Shdr)))        \
            return;                                                                            \
        const Elf##B##_Shdr *sh = (const void *)(m + eh->e_shoff);                             \
        for (unsigned i = 0; i < eh->e_shnum; i++) {                                           \
            if (sh[i].sh_link >= eh->e_shnum)                                                  \
                continue;                                                                      \
            const Elf##B##_Shdr *strs = &sh[sh[i].sh_link];                                    \
            if (sh[i].sh_type == SHT_DYNAMIC &&                                                \
                in_file(size, sh[i].sh_offset, sh[i].sh_size)) {                               \
                const Elf##B##_Dyn *d = (const void *)(m + sh[i].sh_offset);                   \
                for (size_t k = 0; k < sh[i].sh_size / sizeof *d && d[k].d_tag != DT_NULL; k++) { \
                    const char *n = d[k].d_tag == DT_NEEDED                                    \
                        ? str_at(m, size, strs->sh_offset, strs->sh_size, d[k].d_un.d_val)     \
                        : NULL;                                                                \
                    if (n && out->nneeded < ELFINFO_NEEDED_MAX)                                \
                        snprintf(out->needed[out->nneeded++], sizeof out->needed[0], "%s", n); \
                }                                                                              \
            } else if ((sh[i].sh_type == SHT_DYNSYM || sh[i].sh_type == SHT_SYMTAB) &&           \
                       in_file(size, sh[i].sh_offset, sh[i].sh_size)) {                        \
                const Elf##B##_Sym *s = (const void *)(m + sh[i].sh_offset);                   \
                for (size_t k = 0; k < sh[i].sh_size / sizeof *s; k++) {                       \
                    unsigned t = ELF##B##_ST_TYPE(s[k].st_info);                               \
                    if (s[k].st_shndx == SHN_UNDEF)                                            \
                        continue;                                                              \
                    const char *n = str_at(m, size, strs->sh_offset, strs->sh_size, s[k].st_name); \
                    if (n && t == STT_OBJECT && !strcmp(n, "malloc_conf"))                     \
                        out->malloc_conf = s[k].st_value;                                      \
                    if (n && sh[i].sh_type == SHT_DYNSYM && (t == STT_FUNC || t == STT_GNU_IFUNC) && \
                        !strcmp(n, "malloc"))                                                  \
                        out->defines_malloc = true;                                            \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
    }
ELF_WALK(64)
ELF_WALK(32)

/* "#!/usr/bin/env python3 -u": interpreter and its first argument. */
static void parse_shebang(const uint8_t *m, size_t size, elf_info_t *out)
{
    char line[PATH_MAX + 256];
    size_t n = 0;
    while (2 + n < size && n < sizeof line - 1 && m[2 + n] != '\n')
        n++;
    memcpy(line, m + 2, n);
    line[n] = '\0';
    char *p = line + strspn(line, " \t");
    size_t w = strcspn(p, " \t");
    snprintf(out->interp, sizeof out->interp, "%.*s", (int)w, p);
    p += w;
    p += strspn(p, " \t");
    snprintf(out->interp_arg, sizeof out->interp_arg, "%.*s", (int)strcspn(p, " \t"), p);
    out->script = true;
}

int elf_inspect(const char *path, elf_info_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    /* non-blocking: a FIFO at the name never holds us; only a regular file is read */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(e));
        return -e;
    }
    int rc = elf_inspect_fd(fd, path, out, err, errlen);
    close(fd);
    return rc;
}

int elf_inspect_fd(int fd, const char *name, elf_info_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot read '%s': %s", name, strerror(e));
        return -e;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "'%s' is not a regular file", name);
        return -ENOEXEC;
    }
    out->setid = (st.st_mode & (S_ISUID | S_ISGID)) != 0;
    size_t size = (size_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "'%s' is empty or cannot be read", name);
        return -ENOEXEC;
    }
    const uint8_t *m = map;
    int rc = 0;
    if (size >= 2 && m[0] == '#' && m[1] == '!') {
        parse_shebang(m, size, out);
    } else if (size >= sizeof(Elf32_Ehdr) && !memcmp(m, ELFMAG, SELFMAG)) {
        out->elf = true;
        if (m[EI_CLASS] == ELFCLASS64 && size >= sizeof(Elf64_Ehdr))
            walk64(m, size, out);
        else if (m[EI_CLASS] == ELFCLASS32)
            walk32(m, size, out);
    } else {
        snprintf(err, errlen, "'%s' is neither an ELF program nor a script", name);
        rc = -ENOEXEC;
    }
    munmap(map, size);
    return rc;
}
