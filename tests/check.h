/* check.h - a tiny assert header for the C tests: each failed check prints
 * file, line, the expression and both values; exit 77 means "skipped"
 * (meson reports it as SKIP, never as a pass). */
#ifndef MB_CHECK_H
#define MB_CHECK_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond) do { if (!(cond)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_INT(a, b) do { long long va_ = (long long)(a), vb_ = (long long)(b); \
    if (va_ != vb_) { check_failures++; fprintf(stderr, \
    "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, va_, vb_); } } while (0)
#define CHECK_U64(a, b) do { uint64_t va_ = (uint64_t)(a), vb_ = (uint64_t)(b); \
    if (va_ != vb_) { check_failures++; fprintf(stderr, \
    "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", __FILE__, __LINE__, #a, #b, va_, vb_); } } while (0)
#define CHECK_STR(a, b) do { const char *va_ = (a), *vb_ = (b); \
    if (!va_ || !vb_ || strcmp(va_, vb_) != 0) { check_failures++; fprintf(stderr, \
    "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b, \
    va_ ? va_ : "(null)", vb_ ? vb_ : "(null)"); } } while (0)
#define SKIP(why) do { fprintf(stderr, "SKIP: %s\n", why); exit(77); } while (0)
#define CHECK_DONE() do { if (check_failures) { fprintf(stderr, "%d check(s) failed\n", \
    check_failures); return 1; } return 0; } while (0)
#endif
