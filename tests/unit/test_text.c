/* test_text.c - common/text.c: UTF-8 checks (valid, invalid, overlong,
 * surrogates, truncated, above U+10FFFF), control characters, the one-line
 * escape of error messages, the CSV formula guard and JSON strings. */
#include "../check.h"
#include "text.h"

#include <errno.h>
#include <stdlib.h>

static int utf8(const char *s, size_t *bad)
{
    *bad = 999;
    return text_utf8_check(s, bad);
}

static void test_utf8(void)
{
    size_t bad;
    CHECK_INT(utf8("", &bad), 0);
    CHECK_INT(utf8("plain ascii =+-@", &bad), 0);
    CHECK_INT(utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", &bad), 0); /* é € 😀 */
    CHECK_INT(utf8("\xef\xbf\xbf", &bad), 0);                             /* U+FFFF */
    CHECK_INT(utf8("\xf4\x8f\xbf\xbf", &bad), 0);                         /* U+10FFFF */
    CHECK_INT(utf8("ab\xff\xfe", &bad), -EILSEQ);
    CHECK_U64(bad, 2);
    CHECK_INT(utf8("\xc0\xaf", &bad), -EILSEQ);        /* overlong '/' */
    CHECK_U64(bad, 0);
    CHECK_INT(utf8("x\xe0\x80\xaf", &bad), -EILSEQ);   /* overlong, 3 bytes */
    CHECK_U64(bad, 1);
    CHECK_INT(utf8("\xf0\x80\x80\xaf", &bad), -EILSEQ); /* overlong, 4 bytes */
    CHECK_INT(utf8("\xed\xa0\x80", &bad), -EILSEQ);    /* surrogate U+D800 */
    CHECK_INT(utf8("\xed\xbf\xbf", &bad), -EILSEQ);    /* surrogate U+DFFF */
    CHECK_INT(utf8("\xf4\x90\x80\x80", &bad), -EILSEQ); /* U+110000 */
    CHECK_INT(utf8("ok\xe2\x82", &bad), -EILSEQ);      /* truncated at the end */
    CHECK_U64(bad, 2);
    CHECK_INT(utf8("\x80", &bad), -EILSEQ);            /* lone continuation */
    CHECK_INT(utf8("\xf8\x88\x80\x80\x80", &bad), -EILSEQ); /* 5-byte form */
    CHECK_INT(utf8("a\x01z", &bad), 0);                /* controls are UTF-8 */
}

static void test_controls(void)
{
    size_t bad = 999;
    CHECK_INT(text_check("MB/s", false, &bad), 0);
    CHECK_INT(text_check("a\tb", true, &bad), 0);
    CHECK_INT(text_check("a\tb", false, &bad), -EINVAL);
    CHECK_U64(bad, 1);
    CHECK_INT(text_check("ab\ncd", true, &bad), -EINVAL);
    CHECK_U64(bad, 2);
    CHECK_INT(text_check("\r", true, &bad), -EINVAL);
    CHECK_INT(text_check("x\x7f", true, &bad), -EINVAL);    /* DEL */
    CHECK_U64(bad, 1);
    CHECK_INT(text_check("\xc2\x85", true, &bad), -EINVAL); /* C1 NEL */
    CHECK_INT(text_check("\xc2\xa0", true, &bad), 0);       /* NBSP: printable */
    CHECK_INT(text_check("\xff", true, &bad), -EILSEQ);
    CHECK_STR(text_reason(-EILSEQ), "not UTF-8");
    CHECK_STR(text_reason(-EINVAL), "a control character");
}

static void test_escape(void)
{
    char out[64];
    text_escape("plain caf\xc3\xa9", out, sizeof out);
    CHECK_STR(out, "plain caf\xc3\xa9");
    text_escape("a\nb\r\x01\x7f\xff\xfe", out, sizeof out);
    CHECK_STR(out, "a\\x0ab\\x0d\\x01\\x7f\\xff\\xfe");
    text_escape("\xed\xa0\x80", out, sizeof out); /* a surrogate: byte by byte */
    CHECK_STR(out, "\\xed\\xa0\\x80");
    text_escape("abcdef\n", out, 8); /* cut before an escape, never inside one */
    CHECK_STR(out, "abcdef");
    text_escape("x", out, 1);
    CHECK_STR(out, "");
}

static void test_guard(void)
{
    CHECK(text_is_number("-1"));
    CHECK(text_is_number("+2.5e-3"));
    CHECK(text_is_number(".5"));
    CHECK(text_is_number("7."));
    CHECK(!text_is_number("-"));
    CHECK(!text_is_number("-1x"));
    CHECK(!text_is_number("1e"));
    CHECK(!text_is_number(""));
    CHECK(!text_is_number("-inf"));
    CHECK(!text_is_number(" 1"));
    const char *guarded[] = {"=1+1", "+x", "-x", "@SUM(A1)", "\tx", "\rx", "-", "'=x", "''-x", "'-1", "-inf"};
    for (size_t i = 0; i < sizeof guarded / sizeof *guarded; i++)
        if (!text_needs_guard(guarded[i], false)) {
            check_failures++;
            fprintf(stderr, "not guarded: '%s'\n", guarded[i]);
        }
    const char *plain[] = {"", "-1", "+3", "-2.5e3", "glibc", "a=-1", "'", "''", "'x", "x=", " =x"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        if (text_needs_guard(plain[i], false)) {
            check_failures++;
            fprintf(stderr, "guarded: '%s'\n", plain[i]);
        }
    /* raw: formulas stay as given; only a leading quote is doubled */
    CHECK(!text_needs_guard("=1+1", true));
    CHECK(!text_needs_guard("-x", true));
    CHECK(text_needs_guard("'=x", true));
    CHECK(!text_needs_guard("'x", true));
}

static void json(const char *s, const char *want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    text_json_write(f, s);
    fclose(f);
    CHECK_STR(buf, want);
    free(buf);
}

static void test_json(void)
{
    json("plain", "\"plain\"");
    json("q\"b\\", "\"q\\\"b\\\\\"");
    json("a\nb\x01\x7f", "\"a\\u000ab\\u0001\\u007f\"");
    json("caf\xc3\xa9", "\"caf\xc3\xa9\"");
    json("\xff\xfe", "\"\\udcff\\udcfe\"");
    json("\xed\xa0\x80", "\"\\udced\\udca0\\udc80\"");
    json("x\xe2\x82", "\"x\\udce2\\udc82\"");
    json(NULL, "null"); /* a missing fact (the sidecar's git_commit outside git) */
    json("", "\"\"");
}

int main(void)
{
    test_utf8();
    test_controls();
    test_escape();
    test_guard();
    test_json();
    CHECK_DONE();
}
