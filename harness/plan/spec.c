/* spec.c - where a spec entry came from (contract: spec.h): errors found
 * after parsing, by resolve.c and configs.c, still point at the matrix line
 * of the entry they are about. */
#include "spec.h"
#include "error.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>

/* "file:line: " of the matrix entry being resolved, or "" (command line), so
 * that errors found after parsing still point at their line. */
static char spec_where[PATH_MAX + 32];

void spec_at(const run_spec_t *sp, unsigned line)
{
    if (sp->matrix[0] && line)
        snprintf(spec_where, sizeof spec_where, "%s:%u: ", sp->matrix, line);
    else
        spec_where[0] = '\0';
}

int die_spec(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return die_usage("%s%s", spec_where, msg);
}
