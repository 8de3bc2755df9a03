/* test_ident.c - how diagnose recognises a process's allocator from outside
 * (harness/watch/ident.c), on hand-built input, no other process and no root: the mapped
 * files, program image and environment (ident_read: preloaded, linked, loaded, static,
 * built-in, libc, unknown, and which variables are kept); the environment block cut down to
 * what ident may keep (ident_keep_env: secrets dropped, the first of each name, the caps);
 * the load base from /proc/PID/maps text (ident_maps_base); a family's marks in a program
 * image (ident_marks); and a process's variables turned into `mallocbench exec -t` settings
 * (ident_exec_settings). */
#include "check.h"
#include "ident.h"
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JE "/opt/mb-test/lib/libjemalloc.so.2" /* a path no package owns: version unknown */
#define LIBC "/opt/mb-test/lib/libc.so.6"

static ident_t id;

static void ident(const char *const *files, size_t n, const ident_exe_t *exe, const char *env, size_t envlen)
{
    ident_input_t in = {files, n, exe, env, envlen, NULL};
    ident_read(&in, &id);
}

static void test_read_library(void)
{
    const char *files[] = {"/usr/bin/prog", LIBC, JE, "/opt/mb-test/lib/libtcmalloc.so.4"};
    static const char env[] = "HOME=/root\0LD_PRELOAD=/x/libjemalloc.so.2\0MALLOC_CONF=narenas:2\0"
                              "SECRET=hunter2\0MIMALLOC_VERBOSE=1";
    ident(files, 4, NULL, env, sizeof env - 1); /* the last variable without its NUL */
    CHECK(id.family == alloc_find("jemalloc")); /* the first family library mapped */
    CHECK(id.sure);
    CHECK_STR(id.how, "preloaded");
    CHECK_STR(id.path, JE);
    CHECK_STR(id.evidence, JE " is mapped (named in LD_PRELOAD)");
    CHECK_STR(id.version, "unknown");
    CHECK_STR(id.version_how, "no package owns the file");
    CHECK_INT(id.nvars, 2); /* allocator variables only: not HOME, SECRET or LD_PRELOAD */
    CHECK_STR(id.vars[0], "MALLOC_CONF=narenas:2");
    CHECK_STR(id.vars[1], "MIMALLOC_VERBOSE=1");

    ident_exe_t exe;
    memset(&exe, 0, sizeof exe);
    exe.read = exe.elf.elf = exe.elf.dynamic = true;
    snprintf(exe.name, sizeof exe.name, "/usr/bin/prog");
    exe.elf.nneeded = 2;
    snprintf(exe.elf.needed[0], sizeof exe.elf.needed[0], "libc.so.6");
    snprintf(exe.elf.needed[1], sizeof exe.elf.needed[1], "libjemalloc.so.2");
    ident(files, 4, &exe, "", 0);
    CHECK_STR(id.how, "linked");
    CHECK_STR(id.evidence, JE " is mapped (the program needs it)");
    CHECK_INT(id.nvars, 0);
    exe.elf.nneeded = 1;
    ident(files, 4, &exe, "LD_PRELOAD=/x/libother.so", 25);
    CHECK_STR(id.how, "loaded");
}

static void test_read_program(void)
{
    const char *files[] = {"/usr/bin/prog", LIBC};
    ident_exe_t exe;
    memset(&exe, 0, sizeof exe);
    exe.read = exe.elf.elf = true; /* static */
    snprintf(exe.name, sizeof exe.name, "/usr/bin/prog");
    exe.marks = alloc_find("jemalloc");
    exe.mark = "je_mallctl";
    ident(files, 1, &exe, NULL, 0);
    CHECK(id.family == alloc_find("jemalloc"));
    CHECK(id.sure);
    CHECK_STR(id.how, "static");
    CHECK_STR(id.path, "/usr/bin/prog");
    CHECK_STR(id.evidence, "the static program /usr/bin/prog carries \"je_mallctl\"");
    CHECK_STR(id.version, "unknown");
    CHECK_STR(id.version_how, "no version string is read from a program");

    exe.elf.dynamic = exe.elf.defines_malloc = true; /* its own malloc, of no family */
    exe.marks = NULL, exe.mark = NULL;
    ident(files, 2, &exe, NULL, 0);
    CHECK(id.family == NULL);
    CHECK(!id.sure);
    CHECK_STR(id.how, "built-in");
    CHECK_STR(id.evidence, "the program /usr/bin/prog has its own malloc, of no family known here");

    exe.elf.defines_malloc = false; /* dynamic, libc alone */
    ident(files, 2, &exe, NULL, 0);
    CHECK(id.family == alloc_system());
    CHECK(!id.sure);
    CHECK_STR(id.how, "libc");
    CHECK_STR(id.path, LIBC);

    ident(files, 1, NULL, NULL, 0); /* no libc, the program unread */
    CHECK(id.family == NULL);
    CHECK_STR(id.how, "unknown");
    CHECK_STR(id.evidence, "neither libc nor a known allocator is mapped (the program file could not be read)");
}

static void test_keep_env(void)
{
    static const char in[] = "PATH=/bin\0MALLOC_CONF=narenas:1\0AWS_SECRET_ACCESS_KEY=abc\0MALLOC_CONF=narenas:9\0"
                             "LD_PRELOAD=/l/libjemalloc.so.2\0TCMALLOC_RELEASE_RATE=5\0MALLOC_CONFX=1\0MIMALLOC_X";
    char env[sizeof in];
    memcpy(env, in, sizeof in);
    size_t n = ident_keep_env(env, sizeof in - 1);
    static const char want[] = "MALLOC_CONF=narenas:1\0LD_PRELOAD=/l/libjemalloc.so.2\0TCMALLOC_RELEASE_RATE=5\0";
    CHECK_U64(n, sizeof want - 1);
    CHECK(!memcmp(env, want, sizeof want - 1));
    size_t nonzero = 0;
    for (size_t i = n; i < sizeof in - 1; i++)
        nonzero += env[i] != '\0';
    CHECK_U64(nonzero, 0); /* nothing else of it left in memory */

    /* a variable longer than IDENT_VAR_KEEP - 1 bytes cut to that; many: IDENT_ENV_KEEP bytes in all */
    size_t big = 2 * IDENT_ENV_KEEP, at;
    char *e = calloc(1, big);
    const size_t lens[] = {IDENT_VAR_KEEP - 1, IDENT_VAR_KEEP, 2 * IDENT_VAR_KEEP};
    for (size_t i = 0; i < 3; i++) {
        memset(e, 0, big);
        at = lens[i];
        memcpy(e, "MALLOC_CONF=", 12);
        memset(e + 12, 'x', at - 12);
        e[at++] = '\0';
        CHECK_U64(ident_keep_env(e, at), IDENT_VAR_KEEP);
        CHECK_U64(strlen(e), IDENT_VAR_KEEP - 1);
        CHECK(e[at - 2] == (i ? '\0' : 'x'));
    }
    memset(e, 0, big);
    at = 0;
    for (int v = 0; at + IDENT_VAR_KEEP < big; v++) { /* 31 variables of 4 KiB: 16 fit */
        at += (size_t)sprintf(e + at, "MIMALLOC_V%d=", v);
        memset(e + at, 'y', IDENT_VAR_KEEP - 20);
        at += IDENT_VAR_KEEP - 20 + 1;
    }
    size_t kept = ident_keep_env(e, at);
    CHECK(kept <= IDENT_ENV_KEEP && kept > IDENT_ENV_KEEP - IDENT_VAR_KEEP);
    memset(e, 0, big);
    at = 0;
    for (int v = 0; v < 100; v++) /* 100 short ones: 4 x IDENT_MAX_VARS kept */
        at += (size_t)sprintf(e + at, "MIMALLOC_V%d=1", v) + 1;
    kept = ident_keep_env(e, at);
    unsigned nvars = 0;
    for (size_t i = 0; i < kept; i += strlen(e + i) + 1)
        nvars++;
    CHECK_INT(nvars, 4 * IDENT_MAX_VARS);
    CHECK_STR(e, "MIMALLOC_V0=1");
    free(e);
}

static void test_maps_base(void)
{
    static const char maps[] =
        "55d0c0a00000-55d0c0a01000 r--p 00000000 08:01 1234  /usr/bin/progx\n"
        "55d0c0b00000-55d0c0b01000 r-xp 00001000 08:01 1234                       /usr/bin/prog\n"
        "55d0c0c00000-55d0c0c01000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
        "55d0c0d00000-55d0c0d01000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
        "7f0000000000-7f0000001000 r--p 00000000 08:01 99                         /my dir/a prog (deleted)\n";
    FILE *f = fmemopen((void *)maps, sizeof maps - 1, "r");
    CHECK_U64(ident_maps_base(f, "/usr/bin/prog"), 0x55d0c0c00000ull); /* the first at offset 0 */
    fclose(f);
    f = fmemopen((void *)maps, sizeof maps - 1, "r");
    CHECK_U64(ident_maps_base(f, "/my dir/a prog (deleted)"), 0x7f0000000000ull);
    fclose(f);
    f = fmemopen((void *)maps, sizeof maps - 1, "r");
    CHECK_U64(ident_maps_base(f, "/usr/bin/pro"), 0);
    fclose(f);
    static const char junk[] = "not a maps line\n7f00-7f01 r--p\n\n";
    f = fmemopen((void *)junk, sizeof junk - 1, "r");
    CHECK_U64(ident_maps_base(f, "/usr/bin/prog"), 0);
    fclose(f);
}

static void test_marks(void)
{
    const char *mark = NULL;
    static const char je[] = "\x7f" "ELF....<jemalloc>: \0....";
    CHECK(ident_marks(je, sizeof je - 1, &mark) == alloc_find("jemalloc"));
    CHECK_STR(mark, "<jemalloc>: ");
    /* libc's mark beside mimalloc's: mimalloc (the system's only where no other's are) */
    static const char both[] = "glibc.malloc.mmap_threshold\0..mi_malloc\0..";
    mark = NULL;
    CHECK(ident_marks(both, sizeof both - 1, &mark) == alloc_find("mimalloc"));
    CHECK_STR(mark, "mi_malloc");
    static const char libc[] = "..glibc.malloc.mmap_threshold\0";
    CHECK(ident_marks(libc, sizeof libc - 1, &mark) == alloc_system());
    /* a short mark inside a longer word is no mark; with its NUL it is */
    static const char part[] = "xx_mallctl_foo mallctlx";
    mark = NULL;
    CHECK(ident_marks(part, sizeof part - 1, &mark) == NULL);
    CHECK(mark == NULL);
    static const char whole[] = "xx mallctl\0";
    CHECK(ident_marks(whole, sizeof whole - 1, &mark) == alloc_find("jemalloc"));
    /* a long mark counts without its NUL */
    static const char longer[] = "..TCMALLOC_RELEASE_RATE_X";
    CHECK(ident_marks(longer, sizeof longer - 1, &mark) == alloc_find("tcmalloc"));
    CHECK(ident_marks("", 0, &mark) == NULL);
}

static void test_exec_settings(void)
{
    char vars[6][512] = {"MALLOC_CONF=narenas:2,dirty_decay_ms:0,bogus:1,,background_thread:true",
                         "JE_MALLOC_CONF=narenas:4", "TCMALLOC_RELEASE_RATE=5", "MALLOC_CONF=narenas:0"};
    char out[16][160], left[16][512];
    size_t nout, nleft;
    ident_exec_settings(alloc_find("jemalloc"), (const char (*)[512])vars, 4, out, 16, &nout, left, 16, &nleft);
    CHECK_INT(nout, 3);
    CHECK_STR(out[0], "narenas=2");
    CHECK_STR(out[1], "dirty_decay_ms=0");
    CHECK_STR(out[2], "background_thread=1"); /* canonical */
    CHECK_INT(nleft, 3); /* no such tunable; an alias none reads as one; a value out of range */
    CHECK_STR(left[0], "MALLOC_CONF: bogus:1");
    CHECK_STR(left[1], "JE_MALLOC_CONF=narenas:4");
    CHECK_STR(left[2], "MALLOC_CONF: narenas:0");
    ident_exec_settings(alloc_find("tcmalloc"), (const char (*)[512])vars, 4, out, 16, &nout, left, 16, &nleft);
    CHECK_INT(nout, 1); /* a variable of its own per setting; jemalloc's skipped */
    CHECK_STR(out[0], "release_rate=5");
    CHECK_INT(nleft, 0);
    ident_exec_settings(alloc_find("jemalloc"), (const char (*)[512])vars, 1, out, 2, &nout, left, 16, &nleft);
    CHECK_INT(nout, 2); /* no more than room for */
    ident_exec_settings(NULL, (const char (*)[512])vars, 4, out, 16, &nout, left, 16, &nleft);
    CHECK_INT(nout + nleft, 0);
}

int main(void)
{
    test_read_library();
    test_read_program();
    test_keep_env();
    test_maps_base();
    test_marks();
    test_exec_settings();
    CHECK_DONE();
}
