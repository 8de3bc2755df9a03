/* test_strpool.c - the string pool (common/strpool.c): one handle per string, "" as 0,
 * maxlen honoured, a string taken from the pool itself added while the pool grows, and
 * thousands of strings kept apart and found again. */
#include "check.h"
#include "strpool.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    strpool_t p;
    strpool_init(&p);
    CHECK_INT(strpool_add(&p, "", 10), 0);
    CHECK_STR(strpool_get(&p, 0), "");
    uint32_t a = strpool_add(&p, "/usr/lib/libc.so.6", 100);
    uint32_t b = strpool_add(&p, "/usr/lib/libjemalloc.so.2", 100);
    CHECK(a != 0 && b != 0 && a != b);
    CHECK_INT(strpool_add(&p, "/usr/lib/libc.so.6", 100), a);
    CHECK_STR(strpool_get(&p, a), "/usr/lib/libc.so.6");
    uint32_t c = strpool_add(&p, "python3.11xxxxxx", 9); /* a comm field: 9 bytes of it */
    CHECK_STR(strpool_get(&p, c), "python3.1");
    CHECK_STR(strpool_get(&p, 1u << 30), "");
    char name[64];
    uint32_t h[5000];
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "/lib/lib%d.so", i);
        h[i] = strpool_add(&p, name, sizeof name);
        /* one of the pool's own strings, added again while the pool grows */
        CHECK_INT(strpool_add(&p, strpool_get(&p, b), 100), b);
    }
    for (int i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "/lib/lib%d.so", i);
        CHECK_STR(strpool_get(&p, h[i]), name);
        CHECK_INT(strpool_add(&p, name, sizeof name), h[i]);
    }
    CHECK_STR(strpool_get(&p, b), "/usr/lib/libjemalloc.so.2");
    strpool_free(&p);
    return check_failures ? 1 : 0;
}
