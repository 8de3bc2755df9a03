/* test_metric.c - launch_metric (harness/sample/launch.c), the one parser of the
 * figure a user's command prints (`exec --metric`, serve's, tune's): signed
 * and strict, a group one whole number, never inf or nan, within the range the
 * CSV's readers accept, and an error for a line that the kept window of output
 * cut; the figure printed last, read by length (NULs), as a \r-rewritten line
 * shows it, and over a window whose middle was lost (launch_window_metric). */
#include "launch.h"
#include "../check.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static double got;
static char text[64];

static int m(const char *re, const char *out)
{
    got = NAN;
    return launch_metric(re, out, strlen(out), false, false, &got, text, sizeof text);
}

/* out[0..len), NULs and all; MN: a literal's bytes, its terminator not */
#define MN(re, lit) mn(re, lit, sizeof lit - 1)
/* a literal as a window's cut piece: cut before its first line / after its last */
#define CUT(re, lit, cut_start, cut_end) launch_metric(re, lit, sizeof lit - 1, cut_start, cut_end, &got, NULL, 0)
static int mn(const char *re, const char *out, size_t len)
{
    got = NAN;
    return launch_metric(re, out, len, false, false, &got, text, sizeof text);
}

/* The output written in chunks of step bytes to a window of cap bytes
 * (cap-1 kept at each end), then the window's figure. */
static char whead[32], wtail[32];
static int win(const char *re, const char *out, size_t cap, size_t step)
{
    launch_window_t w = {.head = whead, .tail = wtail, .cap = cap};
    size_t len = strlen(out);
    for (size_t at = 0; at < len; at += step)
        launch_window_add(&w, out + at, len - at < step ? len - at : step);
    got = NAN;
    return launch_window_metric(&w, re, &got, text, sizeof text);
}

/* valid: signs, fractions, exponents, the group or the rest of the line */
static void check_valid(void)
{
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
}

/* not finite */
static void check_not_finite(void)
{
    CHECK_INT(m("x", "x 1e999\n"), -ERANGE);
    CHECK_INT(m("x", "x -1e400\n"), -ERANGE);
    CHECK_INT(m("x", "x inf\n"), -ERANGE);
    CHECK_INT(m("x", "x: -Infinity\n"), -ERANGE);
    CHECK_INT(m("x", "x NaN\n"), -ERANGE);
    CHECK_INT(m("x", "x information 5\n"), 0); /* a word that starts with inf is a word */
    CHECK(got == 5);
    CHECK_INT(m("x", "x 0x1p3\n"), -EDOM); /* no hex: not 0 */
    CHECK_STR(text, "0x1p3");
}

/* a group is one whole number, or the row is an error quoting it (issue 29) */
static void check_group(void)
{
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
}

/* the range the readers accept: 0, or a magnitude in 1e-100..1e100 */
static void check_range(void)
{
    CHECK_INT(m("rate: (.*)", "rate: 5e-400\n"), -ERANGE);
    CHECK_INT(m("rate: (.*)", "rate: 1e-200\n"), -ERANGE);
    CHECK_INT(m("rate: (.*)", "rate: 1e308\n"), -ERANGE);
    CHECK_INT(m("rate: (.*)", "rate: -1e100\n"), 0);
    CHECK_INT(m("rate: (.*)", "rate: 1e-100\n"), 0);
    CHECK_INT(m("rate: (.*)", "rate: 0e-999\n"), 0); /* zero is zero */
    CHECK(got == 0);
}

/* without a group: the first number, whole; a unit may follow */
static void check_no_group(void)
{
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
}

/* no number, bad expression */
static void check_no_number(void)
{
    CHECK_INT(m("x", "x none\n"), -ENOENT);
    CHECK_INT(m("y", "x 1\n"), -ENOENT);
    CHECK_INT(m("(", "x 1\n"), -EINVAL);
}

/* a line at a cut edge of the window */
static void check_cut_edges(void)
{
    CHECK_INT(CUT("n:", "3456\nn: 3456\n", true, false), 0);
    CHECK_INT(CUT("n", "n 3456\nrest\n", true, false), -EMSGSIZE);
    CHECK_INT(CUT("n", "head\nn 123", false, true), -EMSGSIZE);
    CHECK_INT(CUT("n", "head\nn 123\n", false, true), 0);
    CHECK(got == 123);
    /* the cut first line's text after a \r began inside the window: whole */
    CHECK_INT(CUT("n", "3456\rn 7\nrest\n", true, false), 0);
    CHECK(got == 7);
    CHECK_INT(CUT("n", "n 3\r\nrest\n", true, false), -EMSGSIZE); /* CRLF */
}

/* the output by its length: a NUL ends nothing (issue 43) */
static void check_nul_bytes(void)
{
    CHECK_INT(MN("rate: (.*)", "rate: 5\0\nrate: 7\n"), 0);
    CHECK(got == 7);
    CHECK_INT(MN("rate:", "rate: 5\0rate: 7\n"), 0); /* one line: its first match, as a terminal shows it */
    CHECK(got == 5);
    CHECK_INT(MN("rate: (.*)", "rate: 1\0002\n"), 0); /* a NUL shows as nothing: "rate: 12" */
    CHECK(got == 12);
    CHECK_INT(MN("rate: (.*)", "\0\0rate: 3\n\0"), 0);
    CHECK(got == 3);
    CHECK_INT(MN("x", "x 1\n\0x 2"), 0); /* the last line, after a NUL, unterminated */
    CHECK(got == 2);
    CHECK_INT(MN("x: (.*)", "x: 1,2\0\n"), -EDOM);
}

/* a line rewritten with \r: the text after its last \r is what was printed last */
static void check_rewritten_lines(void)
{
    CHECK_INT(m("rate: (.*)", "rate: 12.0\rrate: 15.0\n"), 0);
    CHECK(got == 15.0);
    CHECK_INT(m("rate:", "\rrate: 1\rrate: 2\rrate: 3\r\n"), 0); /* a trailing \r (CRLF) rewrites nothing */
    CHECK(got == 3);
    CHECK_INT(m("rate: ([0-9.]+)", "rate: 12.0\r15.0\n"), -ENOENT); /* the shown "15.0" is no match */
    CHECK_INT(m("rate: ([0-9.]+)", "rate: 9\nrate: 12.0\r15.0\n"), 0); /* so the last shown match is 9 */
    CHECK(got == 9);
    CHECK_INT(m("step ([0-9]+)", "step 1\rstep 2\r\0\n"), 0); /* NULs after the rewrite show nothing */
    CHECK(got == 2);
}

/* a window: the figure printed last, or an error saying why not */
static void check_window(void)
{
    CHECK_INT(win("n", "n 1\nn 2\nn 3\n", 64, 5), 0); /* all kept */
    CHECK(got == 3);
    /* 7 of 8 kept at each end, head and tail meeting or overlapping: nothing lost,
     * a line across their seam whole */
    CHECK_INT(win("n", "n 1\nn 22\nx\n", 8, 3), 0); /* the tail alone: "n 22" cut */
    CHECK(got == 22);
    CHECK_INT(win("n", "n 1\nn 22\nx\n", 8, 1), 0); /* written a byte at a time */
    CHECK(got == 22);
    CHECK_INT(win("n", "n 1\nn 2\nxxxxx\n", 8, 5), 0); /* they meet: "n 2" ends the head */
    CHECK(got == 2);
    /* a gap: the head's figure is not known to be the last (issue 43) */
    CHECK_INT(win("n", "n 1\nxxxxxxxxxxx\nyyyyyy\n", 8, 4), -ENODATA);
    CHECK_INT(win("n", "n 1\nn 99999\nyyyyyy\n", 8, 4), -ENODATA); /* the later figure was lost */
    CHECK_INT(win("n", "n 1\nxxxxxxxxxxx\nn 5\ny\n", 8, 4), 0); /* the tail's own whole line */
    CHECK(got == 5);
    CHECK_INT(win("n", "n 1\nxxxxxxxxxxxxxn 12\n", 8, 4), -EMSGSIZE); /* the tail's cut first line */
    CHECK_INT(win("n", "xxxxxxxxxxxxxxx\rn 12\n", 8, 4), 0); /* its text after a \r is whole */
    CHECK(got == 12);
    CHECK_INT(win("q", "n 1\nxxxxxxxxxxx\nyyyyyy\n", 8, 4), -ENOENT);
    /* by length: a NUL in the tail hides nothing after it */
    {
        launch_window_t w = {.head = whead, .tail = wtail, .cap = 8};
        static const char out[] = "n 1\nxxxxxxxxxxx\n\0n 4\n";
        launch_window_add(&w, out, sizeof out - 1);
        CHECK_INT(launch_window_metric(&w, "n", &got, text, sizeof text), 0);
        CHECK(got == 4);
    }
}

int main(void)
{
    check_valid();
    check_not_finite();
    check_group();
    check_range();
    check_no_group();
    check_no_number();
    check_cut_edges();
    check_nul_bytes();
    check_rewritten_lines();
    check_window();
    CHECK_DONE();
}
