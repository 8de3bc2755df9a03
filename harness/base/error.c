/* error.c - the one-line error printers of the harness (contract: error.h).
 * Every message is "mallocbench: <what failed, quoting its subject>". */
#include "error.h"
#include "text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

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
