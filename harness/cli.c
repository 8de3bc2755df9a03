/* cli.c - the one-line error printers of the commands (contract: cli.h).
 * Every message is "mallocbench: <what failed, quoting its subject>". */
#include "cli.h"
#include "text.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *prog = "mallocbench";

/* One line whatever the subjects quoted: a newline, a control byte or a byte
 * that is not UTF-8 in a user's text is printed as \xHH. */
static void vreport(const char *fmt, va_list ap)
{
    char msg[4096], line[4 * sizeof msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    text_escape(msg, line, sizeof line);
    fprintf(stderr, "%s: %s\n", prog, line);
}

int die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    return 2;
}

int die_io(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    return 1;
}

int die_for(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport(fmt, ap);
    va_end(ap);
    switch (-rc) {
    case EINVAL: case ERANGE: case EPROTO: case E2BIG: case EEXIST: case ENOENT: case ENOTDIR:
    case EISDIR: case EACCES: case EFBIG: case ENAMETOOLONG: case ELOOP:
        return 2;
    default:
        return 1;
    }
}

/* ---- where a spec entry came from ----------------------------------------- */

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

const char *cli_take(const char *name, int argc, char **argv, int *i)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] || *i + 1 >= argc)
        return NULL;
    return argv[++*i];
}
