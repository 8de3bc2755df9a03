/* matrix.h - a run specification (spec.h) from a matrix file that describes
 * a whole experiment (INI, parsed here):
 *
 *   [run]                      KEY = VALUE: the matrix keys of the options
 *                              (options.c; `mallocbench run --help` lists them)
 *   [workload NAME [LABEL]]    one workload: PARAM = VALUE lines, and
 *                              sweep = PARAM=LO..HI to expand it
 *   [tunables ALLOCATOR]       NAME = V1,V2 (a list sweeps; the cross product
 *                              of all lines of all sections is run)
 *
 * Lines are at most MATRIX_LINE_MAX bytes; ';' or '#' starts a comment line
 * and " ;" an end-of-line comment.  A key set twice in one section, the
 * same section twice, a key outside any section and an over-long line are
 * errors.  Every entry keeps its line, so errors found later (an unknown
 * workload parameter, a tunable typo) still name "file:line: reason";
 * the first error is reported and nothing runs then.  The [run] keys are
 * options of options.h's table, checked there exactly as their flags are. */
#ifndef MB_MATRIX_H
#define MB_MATRIX_H
#include "spec.h"

#include <stddef.h>

#define MATRIX_LINE_MAX 1024

/* Load a matrix file into s (on top of opt_defaults).  -EINVAL with
 * "file:line: reason" in err. */
int matrix_load(const char *path, run_spec_t *s, char *err, size_t errlen);
/* The same on the text of a matrix (len bytes, not NUL-terminated; a NUL
 * byte is an error); name is used in messages.  A pure function. */
int matrix_parse(const char *name, const char *text, size_t len, run_spec_t *s, char *err, size_t errlen);

#endif
