/* UTF-8 validation (RFC 3629: no overlongs, no surrogates, <= U+10FFFF). Used for
 * table/column names, VARCHAR values and symbols by the row buffer and the decoder. */
#ifndef QSF_QWP_UTF8_H
#define QSF_QWP_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is well-formed UTF-8. A fast path skips ASCII 8 bytes at a
 * time. s may point to char or uint8_t data. */
bool qsf_utf8_valid(const void *s, size_t len);

/* Offset of the first byte that starts an invalid sequence, or len when valid. */
size_t qsf_utf8_error_offset(const void *s, size_t len);

#endif
