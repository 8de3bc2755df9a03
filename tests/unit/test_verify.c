/* test_verify.c - unit test of harness/verdict/verify.c's verify_sample: a probe
 * report built by hand (probe_key/probe_val) against a configuration built
 * by hand.  Accepted: the right family from the requested file, or from a
 * link to it.  Refused, each with its reason: another family, the right
 * family from another file (a user's library or the located default), no
 * report, a setting not read back, not verifiable, or not in effect. */
#include "../check.h"
#include "registry.h"
#include "sample.h"
#include "verify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[] = "/tmp/mb-test-verify-XXXXXX";
static char lib_a[PATH_MAX], lib_b[PATH_MAX], link_a[PATH_MAX];

static void probe_set(run_sample_t *s, const char *key, const char *val)
{
    for (size_t i = 0; i < s->nprobe; i++)
        if (strcmp(s->probe_key[i], key) == 0) {
            snprintf(s->probe_val[i], sizeof s->probe_val[i], "%s", val);
            return;
        }
    if (s->nprobe >= RUN_PROBE_MAX)
        return;
    snprintf(s->probe_key[s->nprobe], sizeof s->probe_key[0], "%s", key);
    snprintf(s->probe_val[s->nprobe], sizeof s->probe_val[0], "%s", val);
    s->nprobe++;
}

/* A sample as the probe reports it: done, malloc from so, of family. */
static void sample_init(run_sample_t *s, const char *so, const char *family)
{
    memset(s, 0, sizeof *s);
    s->status = RUN_OK;
    if (so)
        probe_set(s, "malloc_so", so);
    if (family)
        probe_set(s, "family", family);
    probe_set(s, "probe", "done");
}

/* A configuration of allocator name, library lib ("" for glibc), settings
 * "name=value" (NULL-terminated). */
static int config_init(run_config_t *c, const char *name, const char *lib, bool user_lib,
                       const char *const *settings)
{
    char err[256];
    memset(c, 0, sizeof *c);
    c->alloc = alloc_find(name);
    if (!c->alloc) {
        fprintf(stderr, "no allocator '%s' in the registry\n", name);
        return -ENOENT;
    }
    snprintf(c->lib, sizeof c->lib, "%s", lib);
    c->user_lib = user_lib;
    for (size_t i = 0; settings && settings[i]; i++) {
        int rc = alloc_parse_setting(c->alloc, settings[i], &c->settings[i], err, sizeof err);
        if (rc) {
            fprintf(stderr, "%s: %s\n", settings[i], err);
            return rc;
        }
        c->nsettings++;
    }
    snprintf(c->label, sizeof c->label, "%s", name);
    return alloc_build_env(c->alloc, c->settings, c->nsettings, &c->env);
}

/* verify_sample must refuse s with a message holding want (and its subject). */
#define REFUSED(c, s, want) do { char eff_[2048]; \
    CHECK_INT(verify_sample((c), (s), eff_, sizeof eff_), -1); \
    CHECK_INT((s)->status, RUN_ERROR); \
    CHECK((s)->untrusted); \
    if (!strstr((s)->message, (want))) { check_failures++; \
        fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, \
                (s)->message, (want)); } \
    else fprintf(stderr, "refused as expected: %s\n", (s)->message); } while (0)

#define ACCEPTED(c, s, eff) do { \
    int rc_ = verify_sample((c), (s), (eff), sizeof (eff)); \
    if (rc_) fprintf(stderr, "%s:%d: refused: %s\n", __FILE__, __LINE__, (s)->message); \
    CHECK_INT(rc_, 0); \
    CHECK_INT((s)->status, RUN_OK); \
    CHECK(!(s)->untrusted); } while (0)

static void make_file(char *path, const char *name, const char *text)
{
    snprintf(path, PATH_MAX, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
        close(fd);
    }
}

/* Which file served malloc: the requested one, or the same file by another
 * name; never another file of the right family. */
static void test_library(void)
{
    run_config_t *c = malloc(sizeof *c);
    run_sample_t *s = malloc(sizeof *s);
    char eff[2048];

    for (int user = 0; user <= 1; user++) {
        /* user: -a jemalloc=PATH; else the library the registry located */
        fprintf(stderr, "-- library %s\n", user ? "given by the user" : "located");
        CHECK_INT(config_init(c, "jemalloc", lib_a, user, NULL), 0);

        sample_init(s, lib_a, "jemalloc");
        ACCEPTED(c, s, eff);
        sample_init(s, link_a, "jemalloc");   /* the same file through a link */
        ACCEPTED(c, s, eff);

        sample_init(s, lib_b, "jemalloc");    /* right family, another file */
        REFUSED(c, s, "not by the requested");
        CHECK(strstr(s->message, lib_b) != NULL);
        CHECK(strstr(s->message, lib_a) != NULL);

        sample_init(s, lib_a, "mimalloc");    /* the requested file, another family */
        REFUSED(c, s, "(mimalloc), not by jemalloc");
        sample_init(s, lib_a, NULL);          /* family not reported */
        REFUSED(c, s, "(unknown), not by jemalloc");
        sample_init(s, lib_a, "glibc");
        probe_set(s, "api:je_malloc", "/usr/lib/libjemalloc_prefixed.so");
        REFUSED(c, s, "je_-prefixed");
    }

    /* a path that does not exist is compared by name: another name, refused */
    CHECK_INT(config_init(c, "jemalloc", "/nonexistent/libjemalloc.so.2", true, NULL), 0);
    sample_init(s, "/nonexistent/libjemalloc.so.2", "jemalloc");
    ACCEPTED(c, s, eff);
    sample_init(s, "/nonexistent/other/libjemalloc.so.2", "jemalloc");
    REFUSED(c, s, "not by the requested");
    sample_init(s, NULL, "jemalloc");         /* malloc_so not reported */
    REFUSED(c, s, "(unknown), not by the requested");

    /* glibc: no library, any object of the family */
    CHECK_INT(config_init(c, "glibc", "", false, NULL), 0);
    sample_init(s, "/lib/x86_64-linux-gnu/libc.so.6", "glibc");
    ACCEPTED(c, s, eff);
    sample_init(s, lib_a, "jemalloc");
    REFUSED(c, s, "(jemalloc), not by glibc");
    free(c);
    free(s);
}

/* No report from inside the child: an error, unless the child crashed first. */
static void test_no_report(void)
{
    run_config_t *c = malloc(sizeof *c);
    run_sample_t *s = malloc(sizeof *s);
    char eff[2048];

    CHECK_INT(config_init(c, "jemalloc", lib_a, true, NULL), 0);
    sample_init(s, lib_a, "jemalloc");
    probe_set(s, "probe", "started");
    REFUSED(c, s, "the probe did not report from inside the child");
    CHECK(strstr(s->message, lib_a) != NULL);
    memset(s, 0, sizeof *s);                  /* nothing at all */
    REFUSED(c, s, "the probe did not report");

    memset(s, 0, sizeof *s);
    s->status = RUN_CRASHED;                  /* the status says enough */
    snprintf(s->message, sizeof s->message, "killed by SIGSEGV");
    CHECK_INT(verify_sample(c, s, eff, sizeof eff), 0);
    CHECK_INT(s->status, RUN_CRASHED);
    CHECK_STR(s->message, "killed by SIGSEGV");
    free(c);
    free(s);
}

/* Requested settings: read back, verifiable, and equal to the request. */
static void test_settings(void)
{
    run_config_t *c = malloc(sizeof *c);
    run_sample_t *s = malloc(sizeof *s);
    char eff[2048];
    static const char *const je[] = {"dirty_decay_ms=-1", "narenas=3", NULL};

    CHECK_INT(config_init(c, "jemalloc", lib_a, true, je), 0);
    CHECK_INT(c->nsettings, 2);

    sample_init(s, lib_a, "jemalloc");
    probe_set(s, "tun:opt.dirty_decay_ms/ssize", "-1");
    probe_set(s, "tun:opt.narenas/unsigned", "3");
    probe_set(s, "tun:opt.muzzy_decay_ms/ssize", "0");
    probe_set(s, "tun:opt.tcache/bool", "!mallctl not found");   /* unread: left out */
    ACCEPTED(c, s, eff);
    fprintf(stderr, "effective: %s\n", eff);
    CHECK(strstr(eff, "dirty_decay_ms=-1") != NULL);
    CHECK(strstr(eff, "narenas=3") != NULL);
    CHECK(strstr(eff, "muzzy_decay_ms=0") != NULL);
    CHECK(strstr(eff, "tcache=") == NULL);

    /* a requested setting the child did not report */
    sample_init(s, lib_a, "jemalloc");
    probe_set(s, "tun:opt.dirty_decay_ms/ssize", "-1");
    REFUSED(c, s, "jemalloc:narenas could not be read back from the child");

    /* the probe could not read it: its reason is passed on */
    sample_init(s, lib_a, "jemalloc");
    probe_set(s, "tun:opt.dirty_decay_ms/ssize", "!mallctl: ENOENT");
    probe_set(s, "tun:opt.narenas/unsigned", "3");
    REFUSED(c, s, "jemalloc:dirty_decay_ms could not be verified: mallctl: ENOENT");

    /* read back, but another value */
    sample_init(s, lib_a, "jemalloc");
    probe_set(s, "tun:opt.dirty_decay_ms/ssize", "-1");
    probe_set(s, "tun:opt.narenas/unsigned", "4");
    REFUSED(c, s, "jemalloc:narenas=3 did not take effect: the allocator reports 4");

    /* glibc: the child must have seen GLIBC_TUNABLES with the setting */
    static const char *const gl[] = {"mmap_threshold=32M", NULL};
    CHECK_INT(config_init(c, "glibc", "", false, gl), 0);
    sample_init(s, "/lib/x86_64-linux-gnu/libc.so.6", "glibc");
    REFUSED(c, s, "glibc: the settings did not reach the child (GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432, the child saw it unset)");
    sample_init(s, "/lib/x86_64-linux-gnu/libc.so.6", "glibc");
    probe_set(s, "env:GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=1048576");
    REFUSED(c, s, "did not reach the child");
    sample_init(s, "/lib/x86_64-linux-gnu/libc.so.6", "glibc");
    probe_set(s, "env:GLIBC_TUNABLES", "glibc.malloc.mmap_threshold=33554432");
    ACCEPTED(c, s, eff);
    CHECK_STR(eff, "mmap_threshold=33554432");
    free(c);
    free(s);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    make_file(lib_a, "liba.so", "a\n");
    make_file(lib_b, "libb.so", "b\n");
    snprintf(link_a, sizeof link_a, "%s/link-to-a.so", dir);
    CHECK_INT(symlink(lib_a, link_a), 0);

    test_library();
    test_no_report();
    test_settings();

    unlink(link_a);
    unlink(lib_a);
    unlink(lib_b);
    rmdir(dir);
    CHECK_DONE();
}
