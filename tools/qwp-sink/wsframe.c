/* RFC 6455 frame header parsing and writing (see wsframe.h for the layout). */
#include "wsframe.h"

#include <string.h>

int wsf_parse_hdr(const uint8_t *p, size_t n, struct wsf_hdr *h) {
    if (n < 2)
        return 0;
    h->fin = p[0] >> 7;
    h->rsv = (p[0] >> 4) & 7;
    h->opcode = p[0] & 0x0f;
    h->masked = p[1] >> 7;
    uint64_t len = p[1] & 0x7f;
    size_t need = 2;
    if (len == 126)
        need += 2;
    else if (len == 127)
        need += 8;
    size_t ext = need;
    if (h->masked)
        need += 4;
    if (n < need)
        return 0;
    if (len == 126) {
        len = ((uint64_t) p[2] << 8) | p[3];
    } else if (len == 127) {
        len = 0;
        for (int i = 0; i < 8; i++)
            len = (len << 8) | p[2 + i];
        if (len >> 63)
            return -1;
    }
    if (h->masked)
        memcpy(h->mask, p + ext, 4);
    h->len = len;
    h->hdr_len = need;
    return 1;
}

void wsf_unmask(uint8_t *p, size_t n, const uint8_t mask[4]) {
    /* Eight bytes at a time: the mask repeats every four bytes, so a 64-bit word
     * of it lines up with every 8-byte block starting at a multiple of 4. */
    uint64_t m64;
    uint8_t m8[8];
    memcpy(m8, mask, 4);
    memcpy(m8 + 4, mask, 4);
    memcpy(&m64, m8, 8);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        w ^= m64;
        memcpy(p + i, &w, 8);
    }
    for (; i < n; i++)
        p[i] ^= mask[i & 3];
}

size_t wsf_put_hdr(uint8_t *out, int fin, int rsv, int opcode, uint64_t len, const uint8_t *mask) {
    size_t n = 2;
    out[0] = (uint8_t) ((fin ? 0x80 : 0) | ((rsv & 7) << 4) | (opcode & 0x0f));
    uint8_t mbit = mask ? 0x80 : 0;
    if (len < 126) {
        out[1] = (uint8_t) (mbit | len);
    } else if (len <= 0xffff) {
        out[1] = mbit | 126;
        out[2] = (uint8_t) (len >> 8);
        out[3] = (uint8_t) len;
        n = 4;
    } else {
        out[1] = mbit | 127;
        for (int i = 0; i < 8; i++)
            out[2 + i] = (uint8_t) (len >> (56 - 8 * i));
        n = 10;
    }
    if (mask) {
        memcpy(out + n, mask, 4);
        n += 4;
    }
    return n;
}

/* Appends one frame; masks a copy of the payload when asked. */
static int append_one(struct buf *out, int fin, int opcode, const uint8_t *payload, size_t len,
                      const struct wsf_style *st) {
    static const uint8_t key[4] = {0x5a, 0xc3, 0x17, 0x8e};
    uint8_t hdr[WS_MAX_HDR];
    size_t hl = wsf_put_hdr(hdr, fin, st->rsv, opcode, len, st->masked ? key : NULL);
    if (buf_reserve(out, hl + len) != 0)
        return -1;
    memcpy(out->p + out->len, hdr, hl);
    if (len)
        memcpy(out->p + out->len + hl, payload, len);
    if (st->masked)
        wsf_unmask(out->p + out->len + hl, len, key);
    out->len += hl + len;
    return 0;
}

int wsf_append(struct buf *out, int opcode, const uint8_t *payload, size_t len,
               const struct wsf_style *style) {
    static const struct wsf_style plain;
    const struct wsf_style *st = style ? style : &plain;
    int control = opcode >= WS_OP_CLOSE;
    if (control || st->fragment == 0 || len <= st->fragment)
        return append_one(out, 1, opcode, payload, len, st);
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < st->fragment ? len - done : st->fragment;
        int op = done == 0 ? opcode : WS_OP_CONT;
        if (append_one(out, done + n == len, op, payload + done, n, st) != 0)
            return -1;
        done += n;
        if (st->ping_between && done < len && append_one(out, 1, WS_OP_PING, NULL, 0, st) != 0)
            return -1;
    }
    return 0;
}

int wsf_close_echo_code(int code) {
    if (code == 1004 || (code >= 2000 && code <= 2999))
        return 1002;
    if (code < 1000 || code > 4999 || code == 1005 || code == 1006 || code == 1015)
        return 1000;
    return code;
}
