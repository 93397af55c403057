/* Escaping of text from outside (text.h). One pass; each input character
 * becomes one piece (itself or its escape), and a piece is written whole or
 * not at all. */
#include "text.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

size_t qsf_text_utf8_step(const unsigned char *s, size_t n, uint32_t *cp) {
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t need;
    uint32_t v;
    if (n == 0)
        return 0;
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    } else if ((s[0] & 0xE0) == 0xC0) {
        need = 2, v = s[0] & 0x1F;
    } else if ((s[0] & 0xF0) == 0xE0) {
        need = 3, v = s[0] & 0x0F;
    } else if ((s[0] & 0xF8) == 0xF0) {
        need = 4, v = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    /* overlong forms, UTF-16 surrogates and values past U+10FFFF are invalid */
    if (v < min_cp[need] || (v >= 0xD800 && v <= 0xDFFF) || v > 0x10FFFF)
        return 0;
    *cp = v;
    return need;
}

/* Code points shown as \uNNNN: C1 controls, line/paragraph separators, and the
 * bidirectional controls that reorder the text around them. */
static bool escaped_as_u(uint32_t cp) {
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of the byte at s[0] when it is not printed as is (ASCII only):
 * its length in esc, 0 if the byte is printed unchanged. */
static size_t ascii_escape(unsigned char ch, char esc[8]) {
    switch (ch) {
    case '\n':
        return (size_t) snprintf(esc, 8, "\\n");
    case '\r':
        return (size_t) snprintf(esc, 8, "\\r");
    case '\t':
        return (size_t) snprintf(esc, 8, "\\t");
    default:
        return ch < 0x20 || ch == 0x7F ? (size_t) snprintf(esc, 8, "\\x%02x", ch) : 0;
    }
}

struct out {
    char *dst;
    size_t cap;
    size_t len; /* the full length so far */
    bool cut;   /* a piece did not fit: nothing more is written */
};

static void put(struct out *o, const char *p, size_t n) {
    if (!o->cut && o->cap > 0 && o->len + n < o->cap) {
        memcpy(o->dst + o->len, p, n);
        o->dst[o->len + n] = '\0';
    } else {
        o->cut = true;
    }
    o->len += n;
}

/* Appends the piece for the character at s[0..n) and returns its input length. */
static size_t put_char(struct out *o, const unsigned char *s, size_t n) {
    char esc[8];
    uint32_t cp = 0;
    size_t step = qsf_text_utf8_step(s, n, &cp);
    if (step == 0) {
        put(o, esc, (size_t) snprintf(esc, sizeof esc, "\\x%02x", s[0]));
        return 1;
    }
    size_t en = step == 1 ? ascii_escape(s[0], esc) : 0;
    if (step > 1 && escaped_as_u(cp))
        en = (size_t) snprintf(esc, sizeof esc, "\\u%04x", (unsigned) cp);
    if (en)
        put(o, esc, en);
    else
        put(o, (const char *) s, step);
    return step;
}

size_t qsf_text_escape(char *dst, size_t cap, const char *src, size_t len) {
    struct out o = {dst, cap, 0, false};
    if (cap > 0)
        dst[0] = '\0';
    const unsigned char *s = (const unsigned char *) src;
    for (size_t i = 0; i < len;)
        i += put_char(&o, s + i, len - i);
    return o.len;
}
