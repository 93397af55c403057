/* The frames of a server that breaks the rules (faults malformed=KIND and
 * half-frame, docs/QWP-SINK.md): what goes on the wire in place of, or in
 * front of, the next response.
 *
 * Byte layouts of the frames the frame writer cannot make (RFC 6455 §5.2):
 *
 *   ctl-fragmented   09 00                       PING, FIN = 0, empty
 *   ctl-len16        89 7E 00 01 'p'             PING, 1-byte payload in the 16-bit form
 *   ctl-len64        89 7F 00 x7 01 'p'          the same in the 64-bit form
 *   len-b63          82 7F 80 00 x6 00           BINARY whose 64-bit length has bit 63 set
 *   no-fin           02 <len> <first half>       BINARY, FIN = 0, then a new BINARY
 *   close-utf8       88 04 03 E8 C3 28           CLOSE 1000, reason not UTF-8 */
#include "sink_int.h"

#include <stdlib.h>
#include <string.h>

#include "bytes.h"

/* Raw bytes for the peer, unless the connection is muted. */
static void emit_raw(struct conn *c, const void *p, size_t n) {
    if (!c->muted)
        buf_append(&c->out, p, n);
}

void malformed_half(struct conn *c, const uint8_t *p, size_t n) {
    uint8_t hdr[WS_MAX_HDR];
    size_t hl = wsf_put_hdr(hdr, 1, 0, WS_OP_BINARY, n, NULL);
    emit_raw(c, hdr, hl);
    emit_raw(c, p, n / 2);
    c->half_frame = 0;
    c->muted = 1;
}

/* bad-length (the count or length field one too high) and trailing (one
 * extra byte): an edited copy of the response. */
static void send_edited(struct conn *c, int kind, const uint8_t *p, size_t n) {
    uint8_t *copy = malloc(n + 1);
    if (!copy)
        return;
    memcpy(copy, p, n);
    if (kind == MK_TRAILING) {
        copy[n++] = 0x00;
    } else {
        size_t at = copy[0] == QS_DURABLE_ACK ? 1 : 9;
        qsf_put_u16(copy + at, (uint16_t) (qsf_get_u16(copy + at) + 1));
    }
    conn_emit(c, WS_OP_BINARY, copy, n, &c->style);
    free(copy);
}

/* A frame the response is sent behind (the client should never get past it). */
static void send_prefix(struct conn *c, int kind) {
    static const uint8_t ctl_fragmented[] = {0x09, 0x00};
    static const uint8_t ctl_len16[] = {0x89, 0x7E, 0x00, 0x01, 'p'};
    static const uint8_t ctl_len64[] = {0x89, 0x7F, 0, 0, 0, 0, 0, 0, 0, 0x01, 'p'};
    static const uint8_t len_b63[] = {0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0};
    if (kind == MK_CTL_FRAGMENTED)
        emit_raw(c, ctl_fragmented, sizeof ctl_fragmented);
    else if (kind == MK_CTL_LEN16)
        emit_raw(c, ctl_len16, sizeof ctl_len16);
    else if (kind == MK_CTL_LEN64)
        emit_raw(c, ctl_len64, sizeof ctl_len64);
    else if (kind == MK_LEN_B63)
        emit_raw(c, len_b63, sizeof len_b63);
}

/* The opcode the response travels with, for the kinds that change it. */
static int opcode_of(int kind) {
    switch (kind) {
    case MK_TEXT:
        return WS_OP_TEXT;
    case MK_OPCODE:
        return 0x3; /* reserved non-control */
    case MK_CTL_OPCODE:
        return 0xB; /* reserved control */
    case MK_CONT:
        return WS_OP_CONT; /* no message was started */
    default:
        return WS_OP_BINARY;
    }
}

/* no-fin: the first half as an unfinished BINARY, then the whole response as
 * a new BINARY although a continuation was owed. */
static void send_unfinished(struct conn *c, const uint8_t *p, size_t n) {
    uint8_t hdr[WS_MAX_HDR];
    size_t hl = wsf_put_hdr(hdr, 0, 0, WS_OP_BINARY, n / 2, NULL);
    emit_raw(c, hdr, hl);
    emit_raw(c, p, n / 2);
    conn_emit(c, WS_OP_BINARY, p, n, NULL);
}

void malformed_send(struct conn *c, int kind, const uint8_t *p, size_t n) {
    struct wsf_style st = c->style;
    if (kind == MK_BAD_LENGTH || kind == MK_TRAILING) {
        send_edited(c, kind, p, n);
        return;
    }
    if (kind == MK_NO_FIN) {
        send_unfinished(c, p, n);
        return;
    }
    if (kind == MK_EMPTY) {
        conn_emit(c, WS_OP_BINARY, NULL, 0, NULL); /* in place of the response */
        return;
    }
    send_prefix(c, kind);
    st.masked = kind == MK_MASKED;
    st.rsv = kind == MK_RSV ? 4 : 0;
    conn_emit(c, opcode_of(kind), p, n, &st);
}

void malformed_close(struct conn *c, int kind) {
    static const uint8_t one_byte[1] = {0x03};
    static const uint8_t bad_utf8[4] = {0x03, 0xE8, 0xC3, 0x28};
    if (c->state != CS_WS)
        return;
    ack_flush(c);
    if (kind == MK_BAD_CLOSE)
        conn_emit(c, WS_OP_CLOSE, one_byte, sizeof one_byte, NULL);
    else
        conn_emit(c, WS_OP_CLOSE, bad_utf8, sizeof bad_utf8, NULL);
    c->state = CS_CLOSING;
}

int malformed_at_once(int kind) {
    return kind == MK_BAD_CLOSE || kind == MK_CLOSE_UTF8;
}
