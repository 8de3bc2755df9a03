/* result.h - the worker's result line, written from wl_result_t and read
 * back by the harness, both from WL_RESULT_FIELDS (workload.h), so the two
 * ends cannot disagree.  One line, words separated by one space:
 *   result workload=W params=P name=value ...\n
 * in the fields' order.  Reading is strict: an unknown or repeated name, a
 * malformed value, a missing field is an error naming it, never skipped. */
#ifndef MB_RESULT_H
#define MB_RESULT_H
#include "workload.h"

/* The longest line, newline included, either end handles. */
#define WL_RESULT_LINE_MAX 4096
/* Longest LIT string + 1. */
#define WL_RESULT_LIT_MAX 32

/* WLR_<name>: a field's index; the sent column's always / optional. */
#define WL_RESULT_INDEX(name, kind, fmt, sent, col) WLR_##name,
enum { WLR_always = -2, WLR_optional = -1, WL_RESULT_FIELDS(WL_RESULT_INDEX) WLR_COUNT };
#undef WL_RESULT_INDEX
#define WLR_BIT(i) (1u << (i))

/* A result as the harness received it: the strings copied. */
#define WL_REPORT_CTYPE_F64 double
#define WL_REPORT_CTYPE_U64 uint64_t
#define WL_REPORT_CTYPE_HEX64 uint64_t
#define WL_REPORT_CTYPE_LIT char
#define WL_REPORT_CTYPE_TEXT char
#define WL_REPORT_DIM_F64
#define WL_REPORT_DIM_U64
#define WL_REPORT_DIM_HEX64
#define WL_REPORT_DIM_LIT [WL_RESULT_LIT_MAX]
#define WL_REPORT_DIM_TEXT [WL_RESULT_TEXT_MAX]
#define WL_REPORT_MEMBER(name, kind, fmt, sent, col) WL_REPORT_CTYPE_##kind name WL_REPORT_DIM_##kind;
typedef struct {
    unsigned present;            /* WLR_BIT(WLR_<name>): the field was on the line */
    WL_RESULT_FIELDS(WL_REPORT_MEMBER)
} wl_report_t;
#undef WL_REPORT_MEMBER

/* The line for r (newline included) into line[len]; -EINVAL with one line
 * in err when a field that must be sent is not set, a string does not fit
 * or holds a space, a number is not finite, or the line is too long. */
int wl_result_format(const wl_args_t *a, const wl_result_t *r, char *line, size_t len, char *err,
                     size_t errlen);

/* Parse one line (without its newline) into out; -EINVAL with one line in
 * err naming the field and the reason.  out->present says what came. */
int wl_result_parse(const char *line, wl_report_t *out, char *err, size_t errlen);

/* Name of field i (WLR_<name>), or NULL: for tests and messages. */
const char *wl_result_field_name(int i);

#endif
