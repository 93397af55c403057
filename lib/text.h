/* Text from outside the process made safe to print: server messages, table
 * names, close reasons, file names found in a directory. Such text may hold
 * control characters that would forge a log line (a newline), drive the
 * terminal (ESC, CSI) or reorder what is shown (bidirectional overrides); the
 * escaped form shows each of them as a visible escape and keeps everything
 * else, so the reader sees the bytes that came in (docs/ERRORS.md, "Text from
 * outside"). */
#ifndef QSF_TEXT_H
#define QSF_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Room for the escaped form of n bytes, NUL included: no byte grows beyond
 * four ("\x1b"), no sequence beyond twice its length plus two ("\u0085"). */
#define QSF_TEXT_ESCAPED_MAX(n) (4 * (size_t) (n) + 1)

/* Writes the escaped form of src[0..len) into dst (snprintf semantics: at most
 * cap - 1 bytes and a NUL when cap > 0) and returns its full length, so a
 * return >= cap means it was cut. A cut never splits an escape or a UTF-8
 * sequence. Escaped:
 *   \n \r \t               those three C0 controls
 *   \xNN                   every other C0 control, DEL, and each byte that is
 *                          not part of valid UTF-8 (so raw C1 bytes too)
 *   \uNNNN                 C1 controls written as UTF-8 (U+0080..U+009F), the
 *                          line and paragraph separators U+2028/U+2029, and the
 *                          bidirectional embeddings, overrides and isolates
 *                          (U+202A..U+202E, U+2066..U+2069)
 * Everything else (printable ASCII and the backslash, valid UTF-8) is copied
 * unchanged. The output holds no character that is escaped, so escaping it
 * again changes nothing: text may be escaped where it enters and again where
 * it is printed. (The price: a server may write a literal "\x1b"; it shows as
 * what it is, four harmless characters.) */
size_t qsf_text_escape(char *dst, size_t cap, const char *src, size_t len);

/* Length of the valid UTF-8 sequence at s[0..n) (RFC 3629: no overlong forms,
 * no surrogates, nothing past U+10FFFF), 0 if there is none; *cp receives the
 * code point. */
size_t qsf_text_utf8_step(const unsigned char *s, size_t n, uint32_t *cp);

#endif
