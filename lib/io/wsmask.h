/* Client WebSocket framing for the fast send path (RFC 6455 §5.2-§5.3).
 *
 *   byte 0   FIN=1, RSV=0, opcode 0x2 (binary)             = 0x82
 *   byte 1   MASK=1 | 7-bit length (<= 125), or 126 / 127
 *   then     16-bit or 64-bit big-endian length when 126 / 127
 *   then     4-byte masking key
 *   payload  XORed with the key, key[i % 4]
 *
 * libwebsockets masks one byte at a time; this masks 8 bytes at a time. */
#ifndef QSF_IO_WSMASK_H
#define QSF_IO_WSMASK_H

#include <stddef.h>
#include <stdint.h>

#define QSF_WS_HDR_MAX 14

/* Writes the header of a masked binary frame of `len` bytes so that it ends at
 * `end` (the header occupies end - n .. end); returns n (6, 8 or 14). */
size_t qsf_ws_put_header(uint8_t *end, uint64_t len, const uint8_t key[4]);

/* XORs p[0..n) with the key, key[i % 4] for byte i. */
void qsf_ws_mask(uint8_t *p, size_t n, const uint8_t key[4]);

/* dst[i] = src[i] ^ key[i % 4] for i < n: copy and mask in one pass. dst == src
 * is allowed (in place); other overlaps are not. */
void qsf_ws_mask_copy(uint8_t *dst, const uint8_t *src, size_t n, const uint8_t key[4]);

#endif
