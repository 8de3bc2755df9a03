/* test_registry.c - the allocator table: setting validation with the valid
 * names listed, canonical values, the environment each allocator reads,
 * read-back comparison, mimalloc option indices against mimalloc.h; and
 * the workload table's spec parsing. */
#include "../check.h"
#include "registry.h"
#include "workload.h"

#include <errno.h>
#if __has_include(<mimalloc.h>)
#include <mimalloc.h>
#define HAVE_MIMALLOC_H 1
#endif

/* Each workload's traits are words of WL_TRAITS; each visible one has
 * smoke specs, and each spec ({fixtures}: tests/fixtures) parses as one of
 * its own. */
static void presentation(wl_args_t *a, char *err)
{
    for (size_t i = 0; i < wl_count(); i++) {
        const wl_t *w = wl_at(i);
        char list[256], *save = NULL;
        snprintf(list, sizeof list, "%s", w->traits ? w->traits : "");
        for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            char known[] = "," WL_TRAITS ",", word[64];
            snprintf(word, sizeof word, ",%s,", t);
            if (!strstr(known, word))
                fprintf(stderr, "%s: trait '%s' is not one of " WL_TRAITS "\n", w->name, t);
            CHECK(strstr(known, word) != NULL);
        }
        if (w->hidden)
            continue;
        CHECK(w->smoke && *w->smoke);
        snprintf(list, sizeof list, "%s", w->smoke ? w->smoke : "");
        for (char *sp = strtok_r(list, ";", &save); sp; sp = strtok_r(NULL, ";", &save)) {
            char spec[512], *f = strstr(sp, "{fixtures}");
            if (f)
                snprintf(spec, sizeof spec, "%.*s%s%s", (int)(f - sp), sp, MB_SOURCE_DIR "/tests/fixtures",
                         f + strlen("{fixtures}"));
            else
                snprintf(spec, sizeof spec, "%s", sp);
            if (wl_parse_spec(spec, a, err, 512))
                fprintf(stderr, "%s: smoke spec '%s': %s\n", w->name, spec, err);
            CHECK_INT(wl_parse_spec(spec, a, err, 512), 0);
            CHECK_STR(a->wl->name, w->name);
        }
    }
}

static int set(const char *alloc, const char *kv, alloc_setting_t *s, char *err)
{
    return alloc_parse_setting(alloc_find(alloc), kv, s, err, 512);
}

/* scudo and tbbmalloc, when their family files are in the table */
/* Issue 18: a value of any type that is not UTF-8 or holds a control
 * character is refused, naming workload, parameter and byte offset, and
 * never echoing the bytes; a tab only in text (a command). */
static void text_params(wl_args_t *a, char *err, size_t errsz)
{
    static const char *const bad[] = {
        "exec:cmd=/bin/echo '\xff\xfe'", "exec:cmd=echo \xc0\xaf", "exec:cmd=echo \xed\xa0\x80",
        "exec:cmd=echo \x1b[2J", "exec:metric=x\x7f", "exec:metric=([0-9]+),unit=M\xff" "B,cmd=true",
        "exec:metric=([0-9]+),unit=M\tB,cmd=true", "exec:metric=([0-9]+),unit=\x01,cmd=true",
        "tensor_copy:size=1\xff", "selftest:mode=\xffsegv", "exec:cmd=echo \r",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        int rc = wl_parse_spec(bad[i], a, err, errsz);
        if (rc != -EINVAL || !strstr(err, " at byte ") || strchr(err, '\xff') || strchr(err, '\x01')) {
            check_failures++;
            fprintf(stderr, "spec %zu: rc %d, '%s'\n", i, rc, err);
        }
    }
    /* exec's spec is "metric=RE,unit=U,better=B,cmd=WORDS": a unit or a word
     * holding ",NAME=" or ",," must not set another parameter or vanish */
    CHECK_INT(wl_parse_spec("exec:metric=([0-9]+),unit=Z\\,cmd=,better=higher,cmd=true", a, err, errsz), -EINVAL);
    CHECK_STR(err, "parameter exec:cmd given twice (a value holding \",cmd=\"?)");
    CHECK_INT(wl_parse_spec("exec:metric=,unit=,better=higher,cmd=echo x,metric=y", a, err, errsz), -EINVAL);
    CHECK_INT(wl_parse_spec("exec:metric=([0-9]+),unit=a,,better=higher,cmd=true", a, err, errsz), -EINVAL);
    CHECK_INT(wl_parse_spec("tensor_copy:,size=1M", a, err, errsz), -EINVAL);
    CHECK_INT(wl_parse_spec("tensor_copy:size=1M,", a, err, errsz), 0);
    CHECK_INT(wl_parse_spec("exec:cmd=/bin/echo '\xff\xfe'", a, err, errsz), -EINVAL);
    CHECK_STR(err, "bad value for exec:cmd: not UTF-8 at byte 11");
    CHECK_INT(wl_parse_spec("exec:cmd=printf 'a\tb\xc3\xa9'", a, err, errsz), 0);
    CHECK_STR(wl_get_str(a, "cmd"), "printf 'a\tb\xc3\xa9'");
    CHECK_INT(wl_parse_spec("exec:metric=([0-9]+),unit=-\xc2\xb5s,cmd=true", a, err, errsz), 0);
    CHECK_STR(wl_get_str(a, "unit"), "-\xc2\xb5s");
}

/* every family's search domains are values its tunables accept; a bad
 * domain is refused with one line naming it */
static void domains(char *err)
{
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *a = alloc_at(i);
        CHECK(a->ndomains > 0);
        for (size_t d = 0; d < a->ndomains; d++)
            CHECK_INT(alloc_check_domain(a, a->domains[d].name, a->domains[d].values, err, 512), 0);
    }
    const alloc_info_t *je = alloc_find("jemalloc");
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "-1|0|x", err, 512), -EINVAL);
    CHECK(strstr(err, "'x'") != NULL);
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "-1||5", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "-1|", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "100..10", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "0..10", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "dirty_decay_ms", "1..100000", err, 512), 0);
    CHECK_INT(alloc_check_domain(je, "background_thread", "0..1", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "lg_dirty_mult", "1|2", err, 512), -EINVAL);
    CHECK_INT(alloc_check_domain(je, "tcache_max", "4K|16M", err, 512), -EINVAL); /* out of range */
}

static void new_families(char *err, alloc_setting_t *s, alloc_env_t *env)
{
    const alloc_info_t *sc = alloc_find("scudo"), *tb = alloc_find("tbbmalloc");
    char key[64], val[64];
    if (sc) {
        CHECK_INT(set("scudo", "release_to_os_interval_ms=-1", &s[0], err), 0);
        CHECK_INT(set("scudo", "zero_contents=yes", &s[1], err), 0);
        CHECK_INT(alloc_build_env(sc, s, 2, env), 0);
        CHECK_INT(env->n, 1);
        CHECK_STR(env->var[0], "SCUDO_OPTIONS=release_to_os_interval_ms=-1:zero_contents=true");
        CHECK_INT(set("scudo", "release_to_os_interval_ms=2147483648", &s[0], err), -ERANGE);
        CHECK_INT(set("scudo", "allocator_release_to_os_interval_ms=1", &s[0], err), -EINVAL);
        CHECK(strstr(err, "sanitizer-based") != NULL);
        CHECK(alloc_rejection(sc, "Scudo WARNING: found 1 unrecognized flag(s):\n    bogus=1\n") != NULL);
        CHECK(alloc_env_is_allocator_var("SCUDO_OPTIONS=x"));
        CHECK(sc->check == ALLOC_CHECK_ENV);
    }
    if (tb) {
        CHECK_INT(set("tbbmalloc", "use_huge_pages=1", &s[0], err), 0);
        CHECK_INT(alloc_build_env(tb, s, 1, env), 0);
        CHECK_INT(env->n, 2);
        CHECK_STR(env->var[0], "TBB_VERSION=1");
        CHECK_STR(env->var[1], "TBB_MALLOC_USE_HUGE_PAGES=1");
        CHECK_INT(alloc_build_env(tb, s, 0, env), 0);
        CHECK_INT(env->n, 1); /* the start-up report is always asked for */
        CHECK(alloc_output_line(tb, "TBBmalloc: huge pages\trequested", key, sizeof key, val, sizeof val));
        CHECK_STR(key, "tun:huge_pages");
        CHECK_STR(val, "1");
        CHECK(alloc_output_line(tb, "TBBmalloc: huge pages\tnot requested\n", key, sizeof key, val, sizeof val));
        CHECK_STR(val, "0");
        CHECK(alloc_output_line(tb, "TBBmalloc: VERSION\t\t2021.8", key, sizeof key, val, sizeof val));
        CHECK_STR(key, "version");
        CHECK_STR(val, "2021.8");
        CHECK(!alloc_output_line(tb, "TBBmalloc: INTERFACE VERSION\t12080", key, sizeof key, val, sizeof val));
        CHECK(alloc_env_is_allocator_var("TBB_MALLOC_USE_HUGE_PAGES=1"));
        CHECK_INT(set("tbbmalloc", "set_huge_size_threshold=1M", &s[0], err), -EINVAL);
        CHECK(strstr(err, "cannot be read back") != NULL);
    }
}

/* Every family's keep setting (diagnose's fix) is settings the family accepts, with the
 * calls it stops named; and an environment variable is owned by the family that reads it. */
static void test_keep(void)
{
    char err[512];
    size_t with = 0;
    for (size_t f = 0; f < alloc_count(); f++) {
        const alloc_info_t *a = alloc_at(f);
        if (!a->keep)
            continue;
        with++;
        CHECK(a->keep_stops != 0 && (a->keep_stops & ~(ALLOC_GIVES_MADVISE | ALLOC_GIVES_MUNMAP | ALLOC_GIVES_BRK)) == 0);
        char buf[256], *save = NULL;
        snprintf(buf, sizeof buf, "%s", a->keep);
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            alloc_setting_t s;
            err[0] = '\0';
            int rc = alloc_parse_setting(a, tok, &s, err, sizeof err);
            if (rc)
                fprintf(stderr, "%s keep '%s': %s\n", a->name, tok, err);
            CHECK_INT(rc, 0);
        }
    }
    CHECK(with >= 5); /* all but tbbmalloc, which caches and has no release tunable */
    CHECK(alloc_env_owner("MALLOC_CONF=narenas:2") == alloc_find("jemalloc"));
    CHECK(alloc_env_owner("GLIBC_TUNABLES=glibc.malloc.arena_max=2") == alloc_find("glibc"));
    CHECK(alloc_env_owner("MIMALLOC_ALLOW_DECOMMIT=0") == alloc_find("mimalloc"));
    CHECK(alloc_env_owner("SECRET=1") == NULL);
    CHECK(alloc_env_owner("LD_PRELOAD=/x.so") == NULL); /* the harness's own, not a family's */
}

/* a name as long as the parser's buffer or longer: refused in one line, never copied past it */
static void check_long_names(void)
{
    char err[512];
    alloc_setting_t s[4];
    for (size_t len = 62; len <= 66; len++) {
        char kv[80];
        memset(kv, 'n', len);
        snprintf(kv + len, sizeof kv - len, "=1");
        err[0] = '\0';
        CHECK_INT(set("jemalloc", kv, &s[0], err), -EINVAL);
        CHECK(strstr(err, "jemalloc") != NULL);
    }
}

/* jemalloc: MALLOC_CONF key:value joined by commas */
static void check_jemalloc(void)
{
    char err[512];
    alloc_setting_t s[4];
    alloc_env_t env;
    CHECK_INT(set("jemalloc", "dirty_decay_ms=-1", &s[0], err), 0);
    CHECK_STR(s[0].value, "-1");
    CHECK_INT(set("jemalloc", "oversize_threshold=16M", &s[1], err), 0);
    CHECK_STR(s[1].value, "16777216");
    CHECK_INT(alloc_build_env(alloc_find("jemalloc"), s, 2, &env), 0);
    CHECK_INT(env.n, 1);
    CHECK_STR(env.var[0], "MALLOC_CONF=dirty_decay_ms:-1,oversize_threshold:16777216");
    CHECK_INT(set("jemalloc", "background_thread=true", &s[0], err), 0);
    CHECK_STR(s[0].value, "1");
    CHECK_INT(set("jemalloc", "retain=0", &s[1], err), 0);
    CHECK_INT(alloc_build_env(alloc_find("jemalloc"), s, 2, &env), 0);
    CHECK_STR(env.var[0], "MALLOC_CONF=background_thread:true,retain:false"); /* not 1/0 */
    CHECK_INT(set("jemalloc", "thp=never", &s[0], err), 0);
    CHECK_STR(s[0].value, "never");
    CHECK_INT(set("jemalloc", "thp=sometimes", &s[0], err), -EINVAL);
    CHECK(strstr(err, "default|always|never") != NULL);
    CHECK_INT(set("jemalloc", "bogus=1", &s[0], err), -EINVAL);
    CHECK(strstr(err, "'bogus'") && strstr(err, "dirty_decay_ms") && strstr(err, "muzzy_decay_ms"));
    CHECK_INT(set("jemalloc", "dirty_decay_ms=abc", &s[0], err), -EINVAL);
    CHECK(strstr(err, "'abc'") != NULL);
    CHECK_INT(set("jemalloc", "dirty_decay_ms=-2", &s[0], err), -ERANGE);
    CHECK_INT(set("jemalloc", "dirty_decay_ms=5x", &s[0], err), -EINVAL);
    CHECK_INT(set("jemalloc", "lg_dirty_mult=3", &s[0], err), -EINVAL);
    CHECK(strstr(err, "removed") != NULL);
    CHECK_INT(set("jemalloc", "novalue", &s[0], err), -EINVAL);
}

/* glibc: GLIBC_TUNABLES glibc.malloc.name=value joined by colons */
static void check_glibc(void)
{
    char err[512];
    alloc_setting_t s[4];
    alloc_env_t env;
    CHECK_INT(set("glibc", "trim_threshold=64M", &s[0], err), 0);
    CHECK_INT(set("glibc", "mmap_threshold=32M", &s[1], err), 0);
    CHECK_INT(alloc_build_env(alloc_find("glibc"), s, 2, &env), 0);
    CHECK_STR(env.var[0], "GLIBC_TUNABLES=glibc.malloc.trim_threshold=67108864:"
                          "glibc.malloc.mmap_threshold=33554432");
    CHECK_INT(set("glibc", "mmap_threshold=64M", &s[0], err), -ERANGE); /* malloc ignores > 32M */
    CHECK_INT(set("glibc", "tcache_max=2000", &s[0], err), -ERANGE);
    CHECK_INT(set("glibc", "arena_max=0", &s[0], err), -ERANGE);
}

/* tcmalloc and mimalloc: one variable per setting */
static void check_tcmalloc_mimalloc(void)
{
    char err[512];
    alloc_setting_t s[4];
    alloc_env_t env;
    CHECK_INT(set("tcmalloc", "release_rate=2.5", &s[0], err), 0);
    CHECK_INT(set("tcmalloc", "aggressive_decommit=on", &s[1], err), 0);
    CHECK_INT(alloc_build_env(alloc_find("tcmalloc"), s, 2, &env), 0);
    CHECK_INT(env.n, 2);
    CHECK_STR(env.var[0], "TCMALLOC_RELEASE_RATE=2.5");
    CHECK_STR(env.var[1], "TCMALLOC_AGGRESSIVE_DECOMMIT=1");
    CHECK_INT(set("tcmalloc", "release_rate=-1", &s[0], err), -ERANGE);
    CHECK_INT(set("mimalloc", "decommit_delay=0", &s[0], err), 0);
    CHECK_INT(alloc_build_env(alloc_find("mimalloc"), s, 1, &env), 0);
    CHECK_STR(env.var[0], "MIMALLOC_DECOMMIT_DELAY=0");
    CHECK_INT(set("mimalloc", "purge_delay=0", &s[0], err), -EINVAL);
    CHECK(strstr(err, "2.1") != NULL);
    CHECK_INT(alloc_build_env(alloc_find("mimalloc"), s, 0, &env), 0);
    CHECK_INT(env.n, 0);
}

/* read-back comparison: hex from ld.so, booleans, doubles */
static void check_readback(void)
{
    const alloc_tunable_t *t = alloc_find_tunable(alloc_find("glibc"), "trim_threshold");
    CHECK(alloc_value_matches(t, "67108864", "0x4000000"));
    CHECK(!alloc_value_matches(t, "67108864", "0x20000"));
    CHECK(!alloc_value_matches(t, "67108864", "!no read-back"));
    CHECK(!alloc_value_matches(t, "67108864", ""));
    t = alloc_find_tunable(alloc_find("jemalloc"), "background_thread");
    CHECK(alloc_value_matches(t, "1", "true"));
    CHECK(!alloc_value_matches(t, "1", "false"));
    t = alloc_find_tunable(alloc_find("tcmalloc"), "release_rate");
    CHECK(alloc_value_matches(t, "2.5", "2.5"));
    CHECK(!alloc_value_matches(t, "2.5", "1"));
}

/* the environment of the allocators never leaks into a child */
static void check_allocator_vars(void)
{
    CHECK(alloc_env_is_allocator_var("MALLOC_CONF=x"));
    CHECK(alloc_env_is_allocator_var("TCMALLOC_RELEASE_RATE=0"));
    CHECK(alloc_env_is_allocator_var("LD_PRELOAD=/x.so"));
    CHECK(!alloc_env_is_allocator_var("PATH=/bin"));
    CHECK(!alloc_env_is_allocator_var("MALLOC_CONFIG=x"));
}

#ifdef HAVE_MIMALLOC_H
/* the indices the probe passes to mi_option_get are mimalloc.h's */
static void check_mimalloc_indices(void)
{
    static const struct { const char *name; int idx; } mi[] = {
        {"eager_commit", mi_option_eager_commit}, {"large_os_pages", mi_option_large_os_pages},
        {"reserve_huge_os_pages", mi_option_reserve_huge_os_pages}, {"page_reset", mi_option_page_reset},
        {"abandoned_page_decommit", mi_option_abandoned_page_decommit},
        {"eager_commit_delay", mi_option_eager_commit_delay}, {"decommit_delay", mi_option_decommit_delay},
        {"use_numa_nodes", mi_option_use_numa_nodes}, {"max_segment_reclaim", mi_option_max_segment_reclaim},
        {"allow_decommit", mi_option_allow_decommit},
        {"segment_decommit_delay", mi_option_segment_decommit_delay},
        {"decommit_extend_delay", mi_option_decommit_extend_delay},
    };
    const alloc_info_t *m = alloc_find("mimalloc");
    CHECK_INT(m->ntunables, sizeof mi / sizeof *mi);
    for (size_t i = 0; i < sizeof mi / sizeof *mi; i++) {
        const alloc_tunable_t *mt = alloc_find_tunable(m, mi[i].name);
        CHECK(mt != NULL);
        char want[96];
        snprintf(want, sizeof want, "%s/%d", mi[i].name, mi[i].idx);
        if (mt)
            CHECK_STR(mt->readback, want);
    }
}
#endif

/* every family is complete: a read-back key for each tunable exactly when
 * its check reads them back (ENV: none exists), a help line, the hooks the
 * probe calls, an identifying symbol, a colour; one system allocator */
static void check_families_complete(void)
{
    size_t systems = 0;
    for (size_t i = 0; i < alloc_count(); i++) {
        const alloc_info_t *f = alloc_at(i);
        for (size_t k = 0; k < f->ntunables; k++) {
            CHECK((f->tunables[k].readback != NULL) == (f->check != ALLOC_CHECK_ENV));
            CHECK(f->tunables[k].help != NULL);
            CHECK(alloc_find_tunable(f, f->tunables[k].name) == &f->tunables[k]);
        }
        CHECK(f->ident && f->ident[0] && f->probe_version && f->probe_read && f->probe_stats);
        CHECK(f->colour && f->colour[0] == '#' && strlen(f->colour) == 7);
        CHECK(f->env_vars && f->env_vars[0]);
        /* the optional lists a family leaves out read as empty */
        char k[64], v[64];
        if (!f->rejects)
            CHECK(alloc_rejection(f, "<jemalloc>: Invalid conf pair\nScudo WARNING: x\n") == NULL);
        if (!f->outputs)
            CHECK(!alloc_output_line(f, "version: 1", k, sizeof k, v, sizeof v));
        if (!f->refused)
            CHECK(alloc_refused_reason(f, "anything") == NULL);
        CHECK(alloc_find(f->name) == f);
        systems += alloc_is_system(f);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(alloc_at(j)->colour, f->colour) != 0);
    }
    CHECK_INT(systems, 1);
    CHECK(alloc_system() && alloc_is_system(alloc_system()));
    /* glibc states no rejects, outputs, extra variables or reported symbols */
    const alloc_info_t *gl = alloc_find("glibc");
    CHECK(gl && !gl->rejects && !gl->outputs && !gl->extra_env && !gl->report_syms);
}

/* stderr: complaints are found, start-up reports become probe keys */
static void check_stderr(void)
{
    const alloc_info_t *je = alloc_find("jemalloc");
    CHECK(alloc_rejection(je, "x\n<jemalloc>: Invalid conf pair: bogus:1\n") != NULL);
    CHECK(alloc_rejection(je, "all fine\n") == NULL);
    char key[64], val[64];
    CHECK(!alloc_output_line(je, "TBBmalloc: VERSION\t\t2021.8", key, sizeof key, val, sizeof val));
    CHECK(alloc_env_is_allocator_var("MIMALLOC_X=1"));
}

/* workloads */
static void check_workload_specs(void)
{
    char err[512];
    wl_args_t a;
    CHECK_INT(wl_parse_spec("tensor_copy", &a, err, sizeof err), 0);
    CHECK_STR(wl_get_str(&a, "size"), "16M");
    CHECK_U64(wl_get(&a, "count"), 4);
    CHECK_INT(wl_parse_spec("tensor_copy:size=1M,count=2,steps=3", &a, err, sizeof err), 0);
    CHECK_STR(wl_get_str(&a, "size"), "1M");
    char buf[256];
    wl_format_args(&a, ',', buf, sizeof buf);
    CHECK_STR(buf, "size=1M,count=2,steps=3,warmup=5,bytes=0,reuse=no,seed=1");
    wl_format_args(&a, ' ', buf, sizeof buf);
    CHECK_STR(buf, "size=1M count=2 steps=3 warmup=5 bytes=0 reuse=no seed=1");
    /* align came after rows were written: named only when not its default,
     * so those rows and today's name the same workload */
    CHECK_INT(wl_parse_spec("tensor_copy:size=1M,count=2,steps=3,align=0", &a, err, sizeof err), 0);
    wl_format_args(&a, ',', buf, sizeof buf);
    CHECK_STR(buf, "size=1M,count=2,steps=3,warmup=5,bytes=0,reuse=no,seed=1");
    CHECK_INT(wl_parse_spec("tensor_copy:size=1M,count=2,steps=3,align=64", &a, err, sizeof err), 0);
    wl_format_args(&a, ',', buf, sizeof buf);
    CHECK_STR(buf, "size=1M,count=2,steps=3,warmup=5,bytes=0,reuse=no,align=64,seed=1");
    wl_format_args(&a, ' ', buf, sizeof buf);
    CHECK_STR(buf, "size=1M count=2 steps=3 warmup=5 bytes=0 reuse=no align=64 seed=1");
    /* distributions and their errors, checked before any run */
    CHECK_INT(wl_parse_spec("tensor_copy:size=64K..64M", &a, err, sizeof err), 0);
    CHECK_STR(wl_get_str(&a, "size"), "64K..64M");
    CHECK_INT(wl_parse_spec("tensor_copy:size=1M/4M", &a, err, sizeof err), 0);
    CHECK_INT(wl_parse_spec("tensor_copy:size=64M..64K", &a, err, sizeof err), -EINVAL);
    CHECK_INT(wl_parse_spec("tensor_copy:size=@/nonexistent/shapes", &a, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "/nonexistent/shapes") != NULL);
    CHECK_INT(wl_parse_spec("tensor_copy:size=2T", &a, err, sizeof err), -ERANGE);
    CHECK_INT(wl_parse_spec("tensor_copy:reuse=maybe", &a, err, sizeof err), -EINVAL);
    CHECK_INT(wl_parse_spec("nope", &a, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "'nope'") && strstr(err, "tensor_copy") && !strstr(err, "selftest"));
    CHECK_INT(wl_parse_spec("tensor_copy:bogus=1", &a, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "'bogus'") && strstr(err, "size"));
    CHECK_INT(wl_parse_spec("tensor_copy:size=16Q", &a, err, sizeof err), -EINVAL);
    CHECK_INT(wl_parse_spec("tensor_copy:count=0", &a, err, sizeof err), -ERANGE);
    CHECK_INT(wl_parse_spec("tensor_copy:size", &a, err, sizeof err), -EINVAL);
    CHECK_INT(wl_parse_spec("selftest:mode=segv", &a, err, sizeof err), 0);
    CHECK_U64(wl_get(&a, "mode"), 1);
    CHECK_INT(wl_parse_spec("selftest:mode=explode", &a, err, sizeof err), -EINVAL);
    /* every default parses and lies in its range */
    for (size_t i = 0; i < wl_count(); i++)
        CHECK_INT(wl_defaults(wl_at(i), &a), 0);
}

int main(void)
{
    char err[512];
    alloc_setting_t s[4];
    alloc_env_t env;
    wl_args_t a;

    test_keep();
    check_long_names();
    check_jemalloc();
    check_glibc();
    check_tcmalloc_mimalloc();
    check_readback();
    check_allocator_vars();
#ifdef HAVE_MIMALLOC_H
    check_mimalloc_indices();
#endif
    check_families_complete();
    check_stderr();
    new_families(err, s, &env);
    check_workload_specs();
    presentation(&a, err);
    text_params(&a, err, sizeof err);
    domains(err);
    CHECK_DONE();
}
