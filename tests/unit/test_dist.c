/* test_dist.c - size distributions: fixed, list order, log-uniform bounds
 * and determinism per seed, shapes files with bad lines rejected by line
 * number; recorded traces (trace:FILE[:min=]) filtered, ordered and
 * subsampled; the seeded generator. */
#include "../check.h"
#include "dist.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static dist_t d;

static const char *write_file(const char *text)
{
    static char path[] = "/tmp/mb-test-shapes-XXXXXX";
    strcpy(path, "/tmp/mb-test-shapes-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        return NULL;
    close(fd);
    return path;
}

/* A trace of one process, thread tid == pid, of n events (op, size, ptr
 * nonzero unless size is 7: a failed call), chunked as the recorder does. */
static const char *write_trace(const mbt_event_t *ev, size_t n)
{
    static char path[] = "/tmp/mb-test-trace-XXXXXX";
    strcpy(path, "/tmp/mb-test-trace-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    mbt_header_t h = {.magic = MBT_MAGIC, .version = MBT_VERSION, .header_len = MBT_HEADER_SIZE,
                      .page_size = 4096, .text_len = 0, .start_ns = 1};
    mbt_process_t p = {.pid = 10, .ppid = 1, .start_ns = 1, .forked = 0, .exe_len = 1};
    mbt_chunk_t c = {MBT_CHUNK_MAGIC, MBT_CHUNK_PROCESS, 10, 10, 0, MBT_PROCESS_SIZE + 1};
    int ok = write(fd, &h, sizeof h) == sizeof h && write(fd, &c, sizeof c) == sizeof c &&
             write(fd, &p, sizeof p) == sizeof p && write(fd, "x", 1) == 1;
    for (size_t i = 0, seq = 0; ok && i < n; i += 4096, seq++) {
        size_t k = n - i < 4096 ? n - i : 4096;
        mbt_chunk_t e = {MBT_CHUNK_MAGIC, MBT_CHUNK_EVENTS, 10, 10, (uint32_t)seq,
                         (uint32_t)(k * MBT_EVENT_SIZE)};
        ok = write(fd, &e, sizeof e) == sizeof e &&
             write(fd, ev + i, k * MBT_EVENT_SIZE) == (ssize_t)(k * MBT_EVENT_SIZE);
    }
    close(fd);
    return ok ? path : NULL;
}

static mbt_event_t ev_of(unsigned op, uint64_t size, uint64_t t)
{
    return (mbt_event_t){MBT_T_OP(t, op), size == 7 ? 0 : 0x1000 * (t + 1), size, 0};
}

static void test_trace(void)
{
    char err[512], spec[600];
    uint64_t rng = 0;
    /* every allocation op counts, in order; frees, thread events, failed
     * calls (ptr 0) and sizes under the bound do not */
    static const unsigned ops[] = {MBT_THREAD_START, MBT_MALLOC, MBT_FREE, MBT_CALLOC, MBT_MALLOC,
                                   MBT_REALLOC, MBT_POSIX_MEMALIGN, MBT_ALIGNED_ALLOC, MBT_MEMALIGN,
                                   MBT_VALLOC, MBT_PVALLOC, MBT_MALLOC};
    static const uint64_t sz[] = {0, 1 << 20, 0, 3 << 20, 16 << 10, 5 << 16, 64 << 10, 7 << 20,
                                  9 << 16, 1 << 17, 7, 2 << 20};
    mbt_event_t ev[12];
    for (int i = 0; i < 12; i++)
        ev[i] = ev_of(ops[i], sz[i], (uint64_t)i);
    ev[6].arg = 64;   /* posix_memalign's alignment */
    ev[7].arg = 4096; /* aligned_alloc's */
    ev[8].arg = 256;  /* memalign's */
    const char *path = write_trace(ev, 12);
    CHECK(path != NULL);
    snprintf(spec, sizeof spec, "trace:%s", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), 0);
    static const uint64_t want[] = {1 << 20, 3 << 20, 5 << 16, 64 << 10, 7 << 20, 9 << 16, 1 << 17,
                                    2 << 20};
    CHECK_INT(d.kind, DIST_LIST);
    CHECK_U64(d.n, 8); /* default bound 64K: 16K out, 64K in, the failed call out */
    /* each size keeps its call's alignment: malloc, calloc and realloc none,
     * valloc the trace's page */
    static const uint64_t want_align[] = {0, 0, 0, 64, 4096, 256, 4096, 0};
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 8; i++) {
            CHECK_U64(dist_next(&d, &rng), want[i]); /* in order, cycling */
            CHECK_U64(dist_align(&d), want_align[i]);
        }
    CHECK_U64(dist_max(&d), 7 << 20);
    snprintf(spec, sizeof spec, "trace:%s:min=1", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), 0);
    CHECK_U64(d.n, 9);
    CHECK_U64(d.v[2], 16 << 10);
    snprintf(spec, sizeof spec, "trace:%s:min=2M", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), 0);
    CHECK_INT(d.aligned, 1);
    CHECK_U64(d.n, 3);
    {
        dist_t l = d; /* a list parsed over a trace keeps none of its alignments */
        CHECK_INT(dist_parse("7M/2M", &l, err, sizeof err), 0);
        CHECK_U64(dist_next(&l, &rng), 7 << 20);
        CHECK_U64(dist_align(&l), 0);
    }
    CHECK_U64(d.v[0], 3 << 20);
    CHECK_U64(d.v[1], 7 << 20);
    CHECK_U64(d.v[2], 2 << 20);
    snprintf(spec, sizeof spec, "trace:%s:min=7M", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), 0);
    CHECK_INT(d.kind, DIST_FIXED);
    char want_err[700];
    snprintf(spec, sizeof spec, "trace:%s:min=8M", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), -EINVAL);
    snprintf(want_err, sizeof want_err, "trace '%s': no allocation of at least 8M (lower it with :min=)",
             path);
    CHECK_STR(err, want_err);
    snprintf(spec, sizeof spec, "trace:%s:min=0", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "bad bound '0'") != NULL);
    snprintf(spec, sizeof spec, "trace:%s:min=4Q", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "bad bound '4Q'") != NULL);
    CHECK_INT(dist_parse("trace:", &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "expected trace:FILE") != NULL);
    CHECK_INT(dist_parse("trace:/nonexistent/t.mbt", &d, err, sizeof err), -ENOENT);
    CHECK_STR(err, "cannot open trace '/nonexistent/t.mbt': No such file or directory");
    /* a broken file: the reader's byte offset, one line */
    int fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, "MBTRACF", 8) == 8);
    close(fd);
    snprintf(spec, sizeof spec, "trace:%s", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), -EINVAL);
    CHECK(strncmp(err, "cannot read trace '", 19) == 0 && strstr(err, "byte 0") && !strchr(err, '\n'));
    unlink(path);

    /* 10000 kept of 20000: a strided subsample of DIST_MAX in order, from
     * the first; sizes 64K + i so the index shows */
    size_t n = 20000;
    mbt_event_t *big = calloc(n, sizeof *big);
    for (size_t i = 0; i < n; i++)
        big[i] = ev_of(i % 2 ? MBT_FREE : MBT_MALLOC, i % 2 ? 0 : (64 << 10) + i / 2, i);
    path = write_trace(big, n);
    CHECK(path != NULL);
    snprintf(spec, sizeof spec, "trace:%s", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), 0);
    CHECK_U64(d.n, DIST_MAX);
    int ok = 1;
    for (size_t i = 0; i < DIST_MAX; i++) /* kept index floor(i * 10000 / 4096) */
        ok &= d.v[i] == (64 << 10) + i * 10000 / DIST_MAX;
    CHECK(ok);
    CHECK_U64(d.v[0], 64 << 10);
    CHECK_U64(d.v[DIST_MAX - 1], (64 << 10) + 9997);
    unlink(path);
    free(big);
}

static void check_fixed(void)
{
    char err[512];
    uint64_t rng = rng_seed(1);
    CHECK_INT(dist_parse("16M", &d, err, sizeof err), 0);
    CHECK_INT(d.kind, DIST_FIXED);
    CHECK_U64(dist_next(&d, &rng), 16777216);
    CHECK_U64(dist_max(&d), 16777216);
}

static void check_list(void)
{
    char err[512];
    uint64_t rng = rng_seed(1);
    CHECK_INT(dist_parse("1M/4K/16M", &d, err, sizeof err), 0);
    CHECK_INT(d.kind, DIST_LIST);
    CHECK_U64(dist_next(&d, &rng), 1048576);
    CHECK_U64(dist_next(&d, &rng), 4096);
    CHECK_U64(dist_next(&d, &rng), 16777216);
    CHECK_U64(dist_next(&d, &rng), 1048576); /* cycles */
    CHECK_U64(dist_max(&d), 16777216);
}

/* log-uniform: in bounds, both ends reached roughly as often per octave */
static void check_log_uniform(void)
{
    char err[512];
    CHECK_INT(dist_parse("64K..64M", &d, err, sizeof err), 0);
    CHECK_INT(d.kind, DIST_LOGUNIFORM);
    uint64_t a = rng_seed(42), b = rng_seed(42), c = rng_seed(43);
    int low_octave = 0, high_octave = 0, differ = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t x = dist_next(&d, &a), y = dist_next(&d, &b), z = dist_next(&d, &c);
        CHECK(x >= 65536 && x <= 67108864);
        if (x != y) {
            CHECK_U64(x, y);
            break;
        }
        differ += x != z;
        low_octave += x < 131072;
        high_octave += x >= 33554432;
    }
    CHECK(differ > 99000);                           /* another seed, another sequence */
    CHECK(low_octave > 9000 && low_octave < 11000);  /* 10 octaves: ~10% each */
    CHECK(high_octave > 9000 && high_octave < 11000);
}

/* bad specs */
static void check_bad_specs(void)
{
    char err[512];
    CHECK_INT(dist_parse("", &d, err, sizeof err), -EINVAL);
    CHECK_INT(dist_parse("16Q", &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "'16Q'") != NULL);
    CHECK_INT(dist_parse("0", &d, err, sizeof err), -EINVAL);
    CHECK_INT(dist_parse("64M..64K", &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "low bound") != NULL);
    CHECK_INT(dist_parse("1M//2M", &d, err, sizeof err), 0); /* empty items are skipped... */
    CHECK_INT(dist_parse("1M/", &d, err, sizeof err), -EINVAL); /* ...but not a dangling one */
    CHECK_INT(dist_parse("64K..", &d, err, sizeof err), -EINVAL);
}

/* shapes */
static void check_shapes(void)
{
    char err[512];
    uint64_t bytes;
    CHECK_INT(dist_parse_shape("1024x1024x4 float32", &bytes, err, sizeof err), 0);
    CHECK_U64(bytes, 16777216);
    CHECK_INT(dist_parse_shape("  64 bfloat16   # bias", &bytes, err, sizeof err), 0);
    CHECK_U64(bytes, 128);
    CHECK_INT(dist_parse_shape("# comment", &bytes, err, sizeof err), 0);
    CHECK_U64(bytes, 0);
    CHECK_INT(dist_parse_shape("", &bytes, err, sizeof err), 0);
    CHECK_INT(dist_parse_shape("1024x1024 float8", &bytes, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "'float8'") != NULL);
    CHECK_INT(dist_parse_shape("1024x float32", &bytes, err, sizeof err), -EINVAL);
    CHECK_INT(dist_parse_shape("1024x1024", &bytes, err, sizeof err), -EINVAL);
    CHECK_INT(dist_parse_shape("0x16 float32", &bytes, err, sizeof err), -EINVAL);
    CHECK_INT(dist_parse_shape("99999999999x99999999999 float64", &bytes, err, sizeof err), -ERANGE);
    CHECK_INT(dist_parse_shape("16 float32 extra", &bytes, err, sizeof err), -EINVAL);
}

static void check_shapes_file(void)
{
    char err[512], spec[600];
    uint64_t rng = rng_seed(1);
    const char *path = write_file("# a tiny model\n1024x1024x4 float32\n\n4096 int8\n");
    CHECK(path != NULL);
    snprintf(spec, sizeof spec, "@%s", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), 0);
    CHECK_INT(d.kind, DIST_SHAPES);
    CHECK_INT(d.n, 2);
    CHECK_U64(dist_next(&d, &rng), 16777216);
    CHECK_U64(dist_next(&d, &rng), 4096);
    CHECK_U64(dist_next(&d, &rng), 16777216);
    unlink(path);

    path = write_file("1024 float32\n# ok so far\n1024x1024 float8\n");
    snprintf(spec, sizeof spec, "@%s", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), -EINVAL);
    char want[600];
    snprintf(want, sizeof want, "%s:3: unknown dtype 'float8'", path);
    CHECK_STR(err, want);
    unlink(path);
    path = write_file("# nothing\n");
    snprintf(spec, sizeof spec, "@%s", path);
    CHECK_INT(dist_parse(spec, &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "no tensor shapes") != NULL);
    unlink(path);
    CHECK(dist_parse("@/nonexistent/shapes.txt", &d, err, sizeof err) < 0);
    CHECK(strstr(err, "/nonexistent/shapes.txt") != NULL);
}

/* the shapes text itself: not NUL-terminated, last line without a
 * newline, line numbers, long lines, NUL bytes, too many tensors */
static void check_shapes_text(void)
{
    char err[512];
    static const char text[] = "16 float32\n\n# c\n4 int8XXXX";
    CHECK_INT(dist_parse_shapes_text("t", text, strlen(text) - 4, &d, err, sizeof err), 0);
    CHECK_INT(d.n, 2);
    CHECK_U64(d.v[0], 64);
    CHECK_U64(d.v[1], 4);
    CHECK_INT(dist_parse_shapes_text("t", text, strlen(text), &d, err, sizeof err), -EINVAL);
    CHECK_STR(err, "t:4: unknown dtype 'int8XXXX'");
    CHECK_INT(dist_parse_shapes_text("t", "", 0, &d, err, sizeof err), -EINVAL);
    CHECK_STR(err, "t: no tensor shapes");
    CHECK_INT(dist_parse_shapes_text("t", "1 int8\n2 in\0t8\n", 15, &d, err, sizeof err), -EINVAL);
    CHECK(strstr(err, "t:2: a NUL byte") != NULL);
    static char big[DIST_MAX * 8 + 600];
    size_t n = 0;
    for (int i = 0; i <= DIST_MAX; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "1 int8\n");
    CHECK_INT(dist_parse_shapes_text("t", big, n - 7, &d, err, sizeof err), 0);
    CHECK_INT(d.n, DIST_MAX);
    CHECK_INT(dist_parse_shapes_text("t", big, n, &d, err, sizeof err), -E2BIG);
    memset(big, ' ', 510);
    memcpy(big + 510 - 6, "1 int8\n", 7);
    CHECK_INT(dist_parse_shapes_text("t", big, 511, &d, err, sizeof err), 0); /* 510 + newline */
    memset(big, ' ', 511);
    memcpy(big + 511 - 6, "1 int8\n", 7);
    CHECK_INT(dist_parse_shapes_text("t", big, 512, &d, err, sizeof err), -EINVAL);
    CHECK_STR(err, "t:1: line too long");
}

/* the generator: 0 is never a state, seeds are scrambled apart */
static void check_rng(void)
{
    CHECK(rng_seed(0) != 0);
    CHECK(rng_seed(1) != rng_seed(2));
    uint64_t s = rng_seed(7);
    for (int i = 0; i < 1000; i++)
        CHECK(rng_below(&s, 10) < 10);
    CHECK_U64(rng_below(&s, 1), 0);
}

int main(void)
{
    check_fixed();
    check_list();
    check_log_uniform();
    check_bad_specs();
    check_shapes();
    check_shapes_file();
    check_shapes_text();
    check_rng();
    test_trace();
    CHECK_DONE();
}
