/* test_matrix.c - the matrix parser (harness/plan/matrix.c) on texts in memory:
 * valid files read into the spec; every section header with a word too many
 * or too few, an unknown or repeated section, text after the ']', a key
 * outside any section or set twice, refused with "file:line: reason" naming
 * the header's line, never accepted silently. */
#include "../check.h"
#include "matrix.h"
#include "options.h"

#include <errno.h>

static run_spec_t s;

static int parse(const char *text, char *err, size_t len)
{
    opt_defaults(&s, NULL);
    err[0] = '\0';
    return matrix_parse("m.ini", text, strlen(text), &s, err, len);
}

static void accepted(const char *text)
{
    char err[512];
    int rc = parse(text, err, sizeof err);
    if (rc)
        fprintf(stderr, "refused: %s\n--- for ---\n%s\n", err, text);
    CHECK_INT(rc, 0);
}

/* Refused, the message starting "m.ini:LINE: " and holding `what`. */
static void refused(const char *text, unsigned line, const char *what)
{
    char err[512], want[32];
    int rc = parse(text, err, sizeof err);
    snprintf(want, sizeof want, "m.ini:%u: ", line);
    if (rc != -EINVAL || strncmp(err, want, strlen(want)) || !strstr(err, what))
        fprintf(stderr, "want -EINVAL, '%s...%s', got %d '%s'\n--- for ---\n%s\n", want, what, rc, err,
                text);
    CHECK_INT(rc, -EINVAL);
    CHECK(strncmp(err, want, strlen(want)) == 0);
    CHECK(strstr(err, what) != NULL);
}

static void test_valid(void)
{
    accepted("[run]\nrepetitions = 3\n\n[workload tensor_copy]\nsize = 1M\n");
    CHECK_INT(s.nw, 1);
    CHECK_STR(s.workload[0], "tensor_copy:size=1M");
    CHECK_INT(s.wline[0], 4);
    CHECK(s.reps_given);
    CHECK_INT(s.reps, 3);
    /* blanks inside the brackets, a comment after them, a label, CRLF */
    accepted("[ run ]  ; the run\r\nrepetitions = 2\r\n[workload  tensor_copy   big]\r\nsize = 2M\r\n");
    CHECK_INT(s.nw, 1);
    CHECK_STR(s.workload[0], "tensor_copy:size=2M");
    accepted("[workload tensor_copy]\n[tunables jemalloc]\n[workload arena_churn]\n");
    CHECK_INT(s.nw, 2);
    CHECK_STR(s.workload[1], "arena_churn");
}

static void test_headers(void)
{
    static const char wl[] = "[workload tensor_copy]\n";
    char text[512];
    /* a word too many after each kind of section, on line 2 */
    static const struct {
        const char *header, *what;
    } bad[] = {
        {"[run extra]", "run extra"},
        {"[run a b]", "run a b"},
        {"[runx]", "runx"},
        {"[run=1]", "run=1"},
        {"[workload tensor_copy label extra]", "tensor_copy label extra"},
        {"[tunables jemalloc extra]", "[tunables]"},
        {"[tunables]", "[tunables]"},
        {"[workload]", "[workload]"},
        {"[workloads tensor_copy]", "workloads tensor_copy"},
        {"[tunablesjemalloc]", "tunablesjemalloc"},
        {"[]", "empty section"},
        {"[run] x", "text after the section name"},
        {"[run", "must end with ']'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s%s\n%s", wl, bad[i].header, "[workload arena_churn]\n");
        refused(text, 2, bad[i].what);
    }
    /* a bad header is refused even with no key under it, and at the end of the file */
    refused("[workload tensor_copy]\n\n; note\n[run extra]", 4, "run extra");
    refused("[run extra]\nrepetitions = 3\n[workload tensor_copy]\n", 1, "run extra");
}

static void test_structure(void)
{
    refused("[run]\n[workload tensor_copy]\n[run]\n", 3, "appears twice (first at line 1)");
    refused("[workload tensor_copy]\n[workload tensor_copy]\n", 2, "appears twice");
    refused("repetitions = 3\n[workload tensor_copy]\n", 1, "outside any section");
    refused("[run]\nrepetitions = 3\nrepetitions = 4\n[workload tensor_copy]\n", 3, "set twice");
    refused("[workload tensor_copy]\nsize\n", 2, "expected [section] or key = value");
    char err[512];
    CHECK_INT(parse("[run]\nrepetitions = 3\n", err, sizeof err), -EINVAL);
    CHECK(strstr(err, "no [workload NAME] section") != NULL);
}

int main(void)
{
    test_valid();
    test_headers();
    test_structure();
    CHECK_DONE();
}
