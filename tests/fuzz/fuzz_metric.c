/* fuzz_metric.c - libFuzzer target: launch_metric (harness/sample/launch.c), the
 * parser of the figure a user's command prints.  The input's first byte
 * picks the window flags (bits 0, 1) and one of a few regular expressions
 * (bits 2-4: the target is the number parser, not glibc's regcomp, which a
 * pathological expression of the user's own can drive out of memory); the
 * rest is the output.  Checks: no crash, a success is a finite number, any
 * failure one of the documented codes. */
#include "launch.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const res[] = {
    "x:", "x: (.*)", "^([0-9]+)$", "rate", "([-+0-9.eE]+)", "took ([^ ]*) s", "n", "[0-9]",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 16384)
        return 0;
    char *out = malloc(size);
    if (!out)
        return 0;
    memcpy(out, data + 1, size - 1);
    out[size - 1] = '\0';
    double v = NAN;
    char text[64];
    int rc = launch_metric(res[(data[0] >> 2) & 7], out, size - 1, data[0] & 1, data[0] & 2, &v, text,
                           sizeof text); /* by length: the output's NULs too */
    if (rc == 0 && !(v == 0 || (fabs(v) >= 1e-100 && fabs(v) <= 1e100))) /* the readers' range */
        abort();
    if (rc && rc != -ENOENT && rc != -ERANGE && rc != -EMSGSIZE && rc != -EDOM)
        abort();
    if ((rc == -EDOM || rc == -ERANGE) && strlen(text) >= sizeof text)
        abort();
    free(out);
    return 0;
}
