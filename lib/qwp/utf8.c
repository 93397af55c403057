/* UTF-8 validation (RFC 3629). ASCII runs are skipped 32 bytes at a time; other
 * sequences are checked against the well-formed byte ranges of RFC 3629 §4, which
 * excludes overlong forms, surrogates (ED A0..BF) and code points over U+10FFFF. */
#include "qwp/utf8.h"

#include <stdint.h>
#include <string.h>

/* Length of the valid sequence starting at p (1..4), or 0 if it is invalid or
 * truncated before end. */
static size_t seq_len(const unsigned char *p, const unsigned char *end) {
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c < 0xC2)
        return 0;
    if (c < 0xE0)
        n = 2;
    else if (c < 0xF0) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c < 0xF5) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if ((size_t) (end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

/* Bytes at the start of [p, end) that are plain ASCII, counted in 32-byte then
 * 8-byte steps (may stop short of the first non-ASCII byte, never past it).
 * One test per 32 bytes keeps long text columns off the per-byte path. */
static size_t ascii_run(const unsigned char *p, const unsigned char *end) {
    const uint64_t hi = 0x8080808080808080ull;
    const unsigned char *q = p;
    for (; end - q >= 32; q += 32) {
        uint64_t a, b, c, d;
        memcpy(&a, q, 8);
        memcpy(&b, q + 8, 8);
        memcpy(&c, q + 16, 8);
        memcpy(&d, q + 24, 8);
        if ((a | b | c | d) & hi)
            break;
    }
    for (; end - q >= 8; q += 8) {
        uint64_t w;
        memcpy(&w, q, 8);
        if (w & hi)
            break;
    }
    return (size_t) (q - p);
}

size_t qsf_utf8_error_offset(const void *s, size_t len) {
    const unsigned char *p = s, *end = p + len;
    while (p < end) {
        p += ascii_run(p, end);
        if (p == end)
            break;
        size_t n = seq_len(p, end);
        if (n == 0)
            return (size_t) (p - (const unsigned char *) s);
        p += n;
    }
    return len;
}

bool qsf_utf8_valid(const void *s, size_t len) {
    return qsf_utf8_error_offset(s, len) == len;
}
