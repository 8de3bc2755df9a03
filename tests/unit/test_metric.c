/* test_metric.c - launch_metric (harness/sample/launch.c), the one parser of the
 * figure a user's command prints (`exec --metric`, serve's, tune's): signed
 * and strict, a group one whole number, never inf or nan, within the range the
 * CSV's readers accept, and an error for a line that the kept window of output
 * cut. */
#include "launch.h"
#include "../check.h"

#include <errno.h>
#include <math.h>

static double got;
static char text[64];

static int m(const char *re, const char *out)
{
    got = NAN;
    return launch_metric(re, out, false, false, &got, text, sizeof text);
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
    CHECK_INT(m("x", "x 0x1p3\n"), -EDOM); /* no hex: not 0 */
    CHECK_STR(text, "0x1p3");
    /* a group is one whole number, or the row is an error quoting it (issue 29) */
    CHECK_INT(m("rate: (.*)", "rate:  42 \n"), 0);
    CHECK(got == 42);
    CHECK_INT(m("rate: (.*)", "rate: 42\r\n"), 0); /* a CRLF line */
    CHECK(got == 42);
    CHECK_INT(m("rate: (.*)", "rate: 1,234,567\n"), -EDOM);
    CHECK_STR(text, "1,234,567");
    CHECK_INT(m("rate: (.*)", "rate: \xe2\x88\x92" "5.5\n"), -EDOM); /* U+2212 */
    CHECK_INT(m("rate: (.*)", "rate: 12abc\n"), -EDOM);
    CHECK_INT(m("rate: (.*)", "rate: 1.5.3\n"), -EDOM);
    CHECK_INT(m("rate: (.*)", "rate: 0x10\n"), -EDOM);
    CHECK_INT(m("rate: (.*)", "rate: 1e5 ops\n"), -EDOM);
    CHECK_INT(m("rate: ([^ ]*)", "rate: 1e5 ops\n"), 0);
    CHECK(got == 1e5);
    CHECK_INT(m("rate: (.*)", "rate: inf\n"), -ERANGE);
    /* the range the readers accept: 0, or a magnitude in 1e-100..1e100 */
    CHECK_INT(m("rate: (.*)", "rate: 5e-400\n"), -ERANGE);
    CHECK_INT(m("rate: (.*)", "rate: 1e-200\n"), -ERANGE);
    CHECK_INT(m("rate: (.*)", "rate: 1e308\n"), -ERANGE);
    CHECK_INT(m("rate: (.*)", "rate: -1e100\n"), 0);
    CHECK_INT(m("rate: (.*)", "rate: 1e-100\n"), 0);
    CHECK_INT(m("rate: (.*)", "rate: 0e-999\n"), 0); /* zero is zero */
    CHECK(got == 0);
    /* without a group: the first number, whole; a unit may follow */
    CHECK_INT(m("rate:", "rate: 1,234,567 ops\n"), -EDOM);
    CHECK_STR(text, "1,234,567");
    CHECK_INT(m("v", "v 1.5.3\n"), -EDOM);
    CHECK_INT(m("x", "x \xe2\x88\x92" "5\n"), -EDOM);
    CHECK_INT(m("d", "delta: -0x10\n"), -EDOM); /* signed hex too */
    CHECK_INT(m("t", "time: inf\n"), -ERANGE);
    CHECK_STR(text, "inf");
    CHECK_INT(m("t", "t 2ms\n"), 0);
    CHECK(got == 2);
    CHECK_INT(m("t", "t 5e-400\n"), -ERANGE);
    /* no number, bad expression */
    CHECK_INT(m("x", "x none\n"), -ENOENT);
    CHECK_INT(m("y", "x 1\n"), -ENOENT);
    CHECK_INT(m("(", "x 1\n"), -EINVAL);
    /* a line at a cut edge of the window */
    CHECK_INT(launch_metric("n:", "3456\nn: 3456\n", true, false, &got, NULL, 0), 0);
    CHECK_INT(launch_metric("n", "n 3456\nrest\n", true, false, &got, NULL, 0), -EMSGSIZE);
    CHECK_INT(launch_metric("n", "head\nn 123", false, true, &got, NULL, 0), -EMSGSIZE);
    CHECK_INT(launch_metric("n", "head\nn 123\n", false, true, &got, NULL, 0), 0);
    CHECK(got == 123);
    CHECK_DONE();
}
