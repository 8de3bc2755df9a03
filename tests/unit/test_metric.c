/* test_metric.c - launch_metric (harness/launch.c), the parser of the figure
 * a user's command prints (`exec --metric`): signed and strict, never inf or
 * nan, and an error for a line that the kept window of output cut. */
#include "launch.h"
#include "../check.h"

#include <errno.h>
#include <math.h>

static double got;

static int m(const char *re, const char *out)
{
    got = NAN;
    return launch_metric(re, out, false, false, &got);
}

int main(void)
{
    /* valid: signs, fractions, exponents, the group or the rest of the line */
    CHECK_INT(m("x:", "x: -2.5\n"), 0);
    CHECK(got == -2.5);
    CHECK_INT(m("x: (.*)", "x: +7\n"), 0);
    CHECK(got == 7);
    CHECK_INT(m("rate", "rate .5e3 ops\n"), 0);
    CHECK(got == 500);
    CHECK_INT(m("took", "took 1E-3s"), 0);
    CHECK(got == 0.001);
    CHECK_INT(m("run", "run-3 took 2\n"), 0); /* a hyphen in a word is no sign */
    CHECK(got == 3);
    CHECK_INT(m("a", "a 1\na 2\nb 3\n"), 0); /* the last matching line wins */
    CHECK(got == 2);
    CHECK_INT(m("v", "v 12e\n"), 0); /* an 'e' without digits ends the number */
    CHECK(got == 12);
    /* not finite */
    CHECK_INT(m("x", "x 1e999\n"), -ERANGE);
    CHECK_INT(m("x", "x -1e400\n"), -ERANGE);
    CHECK_INT(m("x", "x inf\n"), -ERANGE);
    CHECK_INT(m("x", "x: -Infinity\n"), -ERANGE);
    CHECK_INT(m("x", "x NaN\n"), -ERANGE);
    CHECK_INT(m("x", "x information 5\n"), 0); /* a word that starts with inf is a word */
    CHECK(got == 5);
    CHECK_INT(m("x", "x 0x1p3\n"), 0); /* no hex floats: 0, then junk */
    CHECK(got == 0);
    /* no number, bad expression */
    CHECK_INT(m("x", "x none\n"), -ENOENT);
    CHECK_INT(m("y", "x 1\n"), -ENOENT);
    CHECK_INT(m("(", "x 1\n"), -EINVAL);
    /* a line at a cut edge of the window */
    CHECK_INT(launch_metric("n:", "3456\nn: 3456\n", true, false, &got), 0);
    CHECK_INT(launch_metric("n", "n 3456\nrest\n", true, false, &got), -EMSGSIZE);
    CHECK_INT(launch_metric("n", "head\nn 123", false, true, &got), -EMSGSIZE);
    CHECK_INT(launch_metric("n", "head\nn 123\n", false, true, &got), 0);
    CHECK(got == 123);
    CHECK_DONE();
}
