/* test_env_words.c - launch_env_word (harness/sample/launch.c), the one
 * reading of env(1)'s arguments that exec's refusal and diagnose's Verify
 * line share: each group's kind, its words, the variable it names and
 * whether an allocator (or the probe) reads that variable. */
#include "launch.h"
#include "../check.h"

static launch_env_word_t w;

static void word(const char *const *argv, size_t i)
{
    launch_env_word((char *const *)argv, i, &w);
}

static void check_set(void)
{
    const char *set[] = {"env", "MALLOC_CONF=narenas:1", "prog", NULL};
    word(set, 1);
    CHECK_INT(w.kind, LAUNCH_ENV_SET);
    CHECK_INT(w.words, 1);
    CHECK_STR(w.name, "MALLOC_CONF");
    CHECK_STR(w.value, "narenas:1");
    CHECK(w.allocator);
    word(set, 2);
    CHECK_INT(w.kind, LAUNCH_ENV_PROGRAM);
    CHECK_INT(w.words, 0);
}

/* every family's variables and the preload, by name or by prefix */
static void check_allocator_names(void)
{
    const char *const names[] = {"LD_PRELOAD=x", "GLIBC_TUNABLES=x", "TCMALLOC_RELEASE_RATE=1",
                                 "MIMALLOC_PURGE_DELAY=0", "SCUDO_OPTIONS=x", "TBB_MALLOC_USE_HUGE_PAGES=1",
                                 "MALLOC_ARENA_MAX=1", "MB_PROBE_FD=4"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *argv[] = {"env", names[i], "prog", NULL};
        word(argv, 1);
        CHECK(w.kind == LAUNCH_ENV_SET && w.allocator);
        if (!w.allocator)
            fprintf(stderr, "  not an allocator's: %s\n", names[i]);
    }
    const char *other[] = {"env", "FOO=1", "MALLOC=1", "=x", NULL};
    word(other, 1);
    CHECK(w.kind == LAUNCH_ENV_SET && !w.allocator);
    word(other, 2);
    CHECK(w.kind == LAUNCH_ENV_SET && !w.allocator); /* not a prefix of anyone's */
    word(other, 3);
    CHECK_INT(w.kind, LAUNCH_ENV_PROGRAM);   /* "=x" names no variable: env runs it */
}

/* -u in its three spellings, each taking its words */
static void check_unset(void)
{
    const char *u1[] = {"env", "-u", "MALLOC_CONF", "prog", NULL};
    word(u1, 1);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 2 && w.allocator);
    CHECK_STR(w.name, "MALLOC_CONF");
    const char *u2[] = {"env", "-uGLIBC_TUNABLES", "--unset=FOO", "prog", NULL};
    word(u2, 1);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 1 && w.allocator);
    CHECK_STR(w.name, "GLIBC_TUNABLES");
    word(u2, 2);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 1 && !w.allocator);
    CHECK_STR(w.name, "FOO");
}

/* clearing, in every spelling, clears the preload too */
static void check_clear(void)
{
    const char *const clears[] = {"-i", "-", "--ignore-environment", "-vi", "-0i"};
    for (size_t i = 0; i < sizeof clears / sizeof *clears; i++) {
        const char *argv[] = {"env", clears[i], "prog", NULL};
        word(argv, 1);
        CHECK(w.kind == LAUNCH_ENV_CLEAR && w.allocator && w.words == 1);
    }
}

/* options that touch no variable; -C and -S take their value */
static void check_other_options(void)
{
    const char *c[] = {"env", "-C", "/tmp/it", "-v", "--default-signal=PIPE", "-S", "a b", "--", "prog", NULL};
    word(c, 1);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 2 && !w.allocator);
    word(c, 3);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 1);
    word(c, 4);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 1);
    word(c, 5);
    CHECK(w.kind == LAUNCH_ENV_SPLIT && w.words == 2);
    CHECK_STR(w.value, "a b");
    word(c, 7);
    CHECK_INT(w.kind, LAUNCH_ENV_END);
    /* -C's value with an i in it is a directory, not -i */
    const char *ci[] = {"env", "-C/tmp/i", "prog", NULL};
    word(ci, 1);
    CHECK_INT(w.kind, LAUNCH_ENV_OTHER);
    /* a word that only contains u= is an assignment, not -u */
    const char *xu[] = {"env", "xu=1", "prog", NULL};
    word(xu, 1);
    CHECK(w.kind == LAUNCH_ENV_SET && !w.allocator);
    CHECK_STR(w.name, "xu");
}

/* getopt's ways: short options in one word, long ones by any unambiguous prefix */
static void check_getopt_spellings(void)
{
    const char *cl[] = {"env", "-vuMALLOC_CONF", "-0u", "GLIBC_TUNABLES", "-vC/tmp/bin", "-vS", "A=1 x", NULL};
    word(cl, 1);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 1 && w.allocator);
    CHECK_STR(w.name, "MALLOC_CONF");
    word(cl, 2);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 2 && w.allocator);
    CHECK_STR(w.name, "GLIBC_TUNABLES");
    word(cl, 4);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 1 && !w.allocator); /* the i is the directory's */
    word(cl, 5);
    CHECK(w.kind == LAUNCH_ENV_SPLIT && w.words == 2);
    CHECK_STR(w.value, "A=1 x");
    const char *ab[] = {"env", "--ignore-env", "--uns=LD_PRELOAD", "--unse", "MIMALLOC_X", "--i", "--sp=a=b",
                        "--ch", "/tmp", "--nosuch", NULL};
    word(ab, 1);
    CHECK(w.kind == LAUNCH_ENV_CLEAR && w.allocator);
    word(ab, 2);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 1 && w.allocator);
    CHECK_STR(w.name, "LD_PRELOAD");
    word(ab, 3);
    CHECK(w.kind == LAUNCH_ENV_UNSET && w.words == 2 && w.allocator);
    CHECK_STR(w.name, "MIMALLOC_X");
    word(ab, 5); /* --i: --ignore-environment or --ignore-signal: env refuses it */
    CHECK(w.kind == LAUNCH_ENV_OTHER && !w.allocator);
    word(ab, 6);
    CHECK(w.kind == LAUNCH_ENV_SPLIT && w.words == 1);
    CHECK_STR(w.value, "a=b");
    word(ab, 7);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 2);
    word(ab, 9);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 1);
    /* --ignore-signal=PIPE takes its value only after '=' */
    const char *sig[] = {"env", "--ignore-signal", "prog", NULL};
    word(sig, 1);
    CHECK(w.kind == LAUNCH_ENV_OTHER && w.words == 1);
}

static void check_is_env(void)
{
    CHECK(launch_is_env("env") && launch_is_env("/usr/bin/env") && !launch_is_env("envy") &&
          !launch_is_env("/usr/bin/printenv"));
}

int main(void)
{
    check_set();
    check_allocator_names();
    check_unset();
    check_clear();
    check_other_options();
    check_getopt_spellings();
    check_is_env();
    CHECK_DONE();
}
