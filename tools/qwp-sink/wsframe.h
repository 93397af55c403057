/* RFC 6455 frame layer: header parsing for client frames, in-place unmasking and
 * header writing for server frames (with knobs the fault script needs: masking,
 * RSV bits, fragmentation).
 *
 * Frame header (network byte order):
 *
 *   byte 0:  FIN(1) RSV1(1) RSV2(1) RSV3(1) opcode(4)
 *   byte 1:  MASK(1) len7(7)
 *   len7 == 126: u16 BE extended length follows
 *   len7 == 127: u64 BE extended length follows
 *   MASK == 1:   4-byte masking key follows, then the payload
 */
#ifndef QSINK_WSFRAME_H
#define QSINK_WSFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum {
    WS_OP_CONT = 0x0,
    WS_OP_TEXT = 0x1,
    WS_OP_BINARY = 0x2,
    WS_OP_CLOSE = 0x8,
    WS_OP_PING = 0x9,
    WS_OP_PONG = 0xA,
};

/* The longest header a frame can have: 2 + 8-byte length + 4-byte mask. */
#define WS_MAX_HDR 14

struct wsf_hdr {
    uint8_t fin, rsv, opcode, masked;
    uint8_t mask[4];
    uint64_t len;   /* declared payload length */
    size_t hdr_len; /* bytes of header, payload starts here */
};

/* Parses a frame header from [p, p+n). Returns 1 when complete (h filled), 0
 * when more bytes are needed, -1 when the 64-bit length has its top bit set. */
int wsf_parse_hdr(const uint8_t *p, size_t n, struct wsf_hdr *h);

/* XORs n bytes at p with the mask (the payload starts at mask phase 0). */
void wsf_unmask(uint8_t *p, size_t n, const uint8_t mask[4]);

/* Writes a header into out (>= WS_MAX_HDR bytes); returns its length. mask may be
 * NULL (unmasked). rsv is the 3-bit RSV field (0 for a valid server frame). */
size_t wsf_put_hdr(uint8_t *out, int fin, int rsv, int opcode, uint64_t len, const uint8_t *mask);

/* How a server frame is written. Zero-initialised = one valid unmasked frame. */
struct wsf_style {
    size_t fragment;  /* > 0: split data frames into pieces of this many bytes */
    int ping_between; /* with fragment: put a PING between fragments */
    int masked;       /* mask the frame (invalid for a server) */
    int rsv;          /* RSV bits to set (invalid unless 0) */
};

/* Appends one server message (opcode + payload) to out, styled as asked.
 * Returns 0, or -1 on OOM. */
int wsf_append(struct buf *out, int opcode, const uint8_t *payload, size_t len,
               const struct wsf_style *style);

/* Normalises a client CLOSE code for the echo (docs/PROTOCOL.md §11.3): 1004 and
 * 2000..2999 become 1002; a code outside 1000..4999, a missing code (-1) and
 * 1005/1006/1015 become 1000. */
int wsf_close_echo_code(int code);

#endif
