/* text.h - checks and escapes for text the user gives (labels, units,
 * commands, parameters, paths) on its way into CSV, JSON and error lines.
 * Pure functions of their arguments: no I/O but text_json_write's stream.
 * Checks return 0, -EILSEQ (not UTF-8) or -EINVAL (a control character),
 * with the byte offset of the first bad byte in *bad. */
#ifndef MB_TEXT_H
#define MB_TEXT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Valid UTF-8: no overlong forms, no surrogates (U+D800..U+DFFF), nothing
 * above U+10FFFF, no truncated sequence. */
int text_utf8_check(const char *s, size_t *bad);
/* text_utf8_check, and no control character: C0 (tab only when allow_tab),
 * DEL and C1 (U+0080..U+009F) are refused with -EINVAL. */
int text_check(const char *s, bool allow_tab, size_t *bad);
/* What a check's error means, for messages: "not UTF-8", "a control character". */
const char *text_reason(int rc);

/* s on one printable line for an error message: control bytes, DEL and bytes
 * that are not UTF-8 become \xHH; valid UTF-8 is kept.  Always terminated. */
void text_escape(const char *s, char *out, size_t len);

/* A plain decimal number: [+-]digits[.digits][e[+-]digits] (or .digits). */
bool text_is_number(const char *s);
/* Whether a CSV cell must get a leading ' so that a spreadsheet does not
 * read it as a formula (OWASP CSV injection): it starts with = + - @ tab
 * or CR and is not a plain number, or it starts with ' followed (after more
 * quotes) by one of those, so that the reader's undo (drop one leading '
 * when quotes are followed by a formula character) gives back the value.
 * raw: only the second case (cells stay as given, yet still round-trip). */
bool text_needs_guard(const char *s, bool raw);

/* s as a JSON string literal: " and \ escaped, control characters and DEL
 * as \u00XX, each byte that is not UTF-8 as \udcXX (Python's surrogateescape:
 * os.fsencode gives the bytes back); never raw control or invalid bytes.  NULL is
 * written null.  The harness's one JSON string writer. */
void text_json_write(FILE *out, const char *s);

#endif
