/* test_units.c - the size, integer and duration parsers: valid, invalid,
 * out-of-range and trailing-junk input, and printing sizes back. */
#include "../check.h"
#include "units.h"

#include <errno.h>

static uint64_t size_of(const char *s, int *rc)
{
    uint64_t v = 0;
    *rc = units_parse_size(s, &v);
    return v;
}

int main(void)
{
    int rc;
    CHECK_U64(size_of("16M", &rc), 16777216ULL); CHECK_INT(rc, 0);
    CHECK_U64(size_of("4096", &rc), 4096); CHECK_INT(rc, 0);
    CHECK_U64(size_of("64KiB", &rc), 65536); CHECK_INT(rc, 0);
    CHECK_U64(size_of("64kb", &rc), 65536); CHECK_INT(rc, 0);
    CHECK_U64(size_of("1G", &rc), 1073741824ULL); CHECK_INT(rc, 0);
    CHECK_U64(size_of("2T", &rc), 2199023255552ULL); CHECK_INT(rc, 0);
    CHECK_U64(size_of("1.5K", &rc), 1536); CHECK_INT(rc, 0);
    CHECK_U64(size_of("0", &rc), 0); CHECK_INT(rc, 0);
    CHECK_U64(size_of("18446744073709551615", &rc), UINT64_MAX); CHECK_INT(rc, 0);
    size_of("18446744073709551616", &rc); CHECK_INT(rc, -ERANGE);
    size_of("17179869184G", &rc); CHECK_INT(rc, -ERANGE);
    size_of("1.3", &rc); CHECK_INT(rc, -EINVAL);      /* not a whole number of bytes */
    size_of("16Q", &rc); CHECK_INT(rc, -EINVAL);
    size_of("16Mx", &rc); CHECK_INT(rc, -EINVAL);
    size_of("", &rc); CHECK_INT(rc, -EINVAL);
    size_of("-1M", &rc); CHECK_INT(rc, -EINVAL);
    size_of(" 1M", &rc); CHECK_INT(rc, -EINVAL);
    size_of("M", &rc); CHECK_INT(rc, -EINVAL);
    size_of("1 M", &rc); CHECK_INT(rc, -EINVAL);

    uint64_t u;
    CHECK_INT(units_parse_u64("42", &u), 0); CHECK_U64(u, 42);
    CHECK_INT(units_parse_u64("42x", &u), -EINVAL);
    CHECK_INT(units_parse_u64("-1", &u), -EINVAL);
    CHECK_INT(units_parse_u64("99999999999999999999", &u), -ERANGE);
    int64_t i;
    CHECK_INT(units_parse_i64("-1", &i), 0); CHECK_INT(i, -1);
    CHECK_INT(units_parse_i64("+7", &i), 0); CHECK_INT(i, 7);
    CHECK_INT(units_parse_i64("--1", &i), -EINVAL);
    CHECK_INT(units_parse_i64("1e3", &i), -EINVAL);
    double d;
    CHECK_INT(units_parse_double("0.5", &d), 0); CHECK(d == 0.5);
    CHECK_INT(units_parse_double("nan", &d), -EINVAL);
    CHECK_INT(units_parse_double("1.0x", &d), -EINVAL);

    CHECK_INT(units_parse_duration("90", &d), 0); CHECK(d == 90.0);
    CHECK_INT(units_parse_duration("500ms", &d), 0); CHECK(d == 0.5);
    CHECK_INT(units_parse_duration("2m", &d), 0); CHECK(d == 120.0);
    CHECK_INT(units_parse_duration("1.5s", &d), 0); CHECK(d == 1.5);
    CHECK_INT(units_parse_duration("5x", &d), -EINVAL);
    CHECK_INT(units_parse_duration("", &d), -EINVAL);

    char buf[32];
    units_format_size(16777216, buf, sizeof buf); CHECK_STR(buf, "16M");
    units_format_size(1000, buf, sizeof buf); CHECK_STR(buf, "1000");
    units_format_size(1536, buf, sizeof buf); CHECK_STR(buf, "1536");
    units_format_size(65536, buf, sizeof buf); CHECK_STR(buf, "64K");
    units_format_size(0, buf, sizeof buf); CHECK_STR(buf, "0");
    units_format_size(1ULL << 40, buf, sizeof buf); CHECK_STR(buf, "1T");
    uint64_t idx;
    CHECK_INT(units_parse_choice("ok|segv|abort", "segv", &idx), 0); CHECK_U64(idx, 1);
    CHECK_INT(units_parse_choice("ok|segv|abort", "abort", &idx), 0); CHECK_U64(idx, 2);
    CHECK_INT(units_parse_choice("ok|segv|abort", "seg", &idx), -EINVAL);
    CHECK_INT(units_parse_choice("ok|segv|abort", "", &idx), -EINVAL);
    units_choice_name("ok|segv|abort", 2, buf, sizeof buf); CHECK_STR(buf, "abort");
    units_choice_name("ok|segv|abort", 3, buf, sizeof buf); CHECK_STR(buf, "?");
    CHECK_DONE();
}
