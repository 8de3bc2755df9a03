/* text.c - UTF-8 and control-character checks, one-line escapes for error
 * messages, the CSV formula guard and JSON strings (contract: text.h). */
#include "text.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (1..4), its code point in *cp; 0
 * when p does not start one. */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    size_t n;
    uint32_t c, min;
    if ((p[0] & 0xe0) == 0xc0) {
        n = 2, c = p[0] & 0x1f, min = 0x80;
    } else if ((p[0] & 0xf0) == 0xe0) {
        n = 3, c = p[0] & 0x0f, min = 0x800;
    } else if ((p[0] & 0xf8) == 0xf0) {
        n = 4, c = p[0] & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        c = c << 6 | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return n;
}

static bool is_control(uint32_t c, bool allow_tab)
{
    if (c == '\t')
        return !allow_tab;
    return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

static int check(const char *s, bool controls, bool allow_tab, size_t *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; p[i];) {
        uint32_t c;
        size_t n = utf8_seq(p + i, &c);
        if (!n || (controls && is_control(c, allow_tab))) {
            if (bad)
                *bad = i;
            return n ? -EINVAL : -EILSEQ;
        }
        i += n;
    }
    return 0;
}

int text_utf8_check(const char *s, size_t *bad)
{
    return check(s, false, false, bad);
}

int text_check(const char *s, bool allow_tab, size_t *bad)
{
    return check(s, true, allow_tab, bad);
}

const char *text_reason(int rc)
{
    return rc == -EILSEQ ? "not UTF-8" : rc == -EINVAL ? "a control character" : "bad text";
}

void text_escape(const char *s, char *out, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    if (!len)
        return;
    for (size_t i = 0; p[i];) {
        uint32_t c;
        size_t n = utf8_seq(p + i, &c);
        bool esc = !n || c < 0x20 || c == 0x7f;
        size_t need = esc ? 4 : n;
        if (o + need >= len)
            break;
        if (esc) {
            out[o++] = '\\', out[o++] = 'x', out[o++] = hex[p[i] >> 4], out[o++] = hex[p[i] & 15];
            i++;
        } else {
            memcpy(out + o, p + i, n);
            o += n, i += n;
        }
    }
    out[o] = '\0';
}

bool text_is_number(const char *s)
{
    const char *p = s + (*s == '+' || *s == '-');
    size_t ip = strspn(p, "0123456789"), fp = 0;
    p += ip;
    if (*p == '.') {
        fp = strspn(p + 1, "0123456789");
        p += 1 + fp;
    }
    if (!ip && !fp)
        return false;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '+' || p[1] == '-');
        size_t ep = strspn(p, "0123456789");
        if (!ep)
            return false;
        p += ep;
    }
    return *p == '\0';
}

static bool formula_char(char c)
{
    return c && strchr("=+-@\t\r", c);
}

bool text_needs_guard(const char *s, bool raw)
{
    if (*s == '\'')
        return formula_char(s[strspn(s, "'")]);
    return !raw && formula_char(*s) && !text_is_number(s);
}

void text_json_write(FILE *out, const char *s)
{
    if (!s) {
        fputs("null", out);
        return;
    }
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; p[i];) {
        uint32_t c;
        size_t n = utf8_seq(p + i, &c);
        if (!n) {
            fprintf(out, "\\udc%02x", p[i++]);
            continue;
        }
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", (int)c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", (unsigned)c);
        else
            fwrite(p + i, 1, n, out);
        i += n;
    }
    fputc('"', out);
}
