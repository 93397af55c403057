/* Fuzz target for the client-side receive path qsf owns: the input is what a
 * server sends after the 101 (its first byte picks the piece size). A small
 * frame splitter does what libwebsockets 4.1.6 does before qsf sees anything
 * (unmasking, its frame checks, pieces of at most that size with first/last
 * flags, CLOSE payloads); then lib/io/wsrx.c reassembles, lib/qwp/response.c
 * parses and lib/io/durack.c matches, as on the I/O thread. Never crash, and:
 * a message is exactly the concatenation of its frames' payloads, never over
 * 16 MiB; an accepted CLOSE has a code a peer may send; durable matching only
 * hands back FSNs of queued OKs, in increasing order.
 *
 * libwebsockets's own parser is not under test here: the splitter stops
 * where it would drop the connection. */
#include "io/durack.h"
#include "io/wsrx.h"
#include "qwp/response.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct frame {
    bool fin, masked;
    uint8_t rsv, op, mask[4];
    uint64_t len;
    size_t hdr;
} frame;

/* Parses a header at p (n bytes); false when incomplete. */
static bool header(const uint8_t *p, size_t n, frame *f) {
    if (n < 2)
        return false;
    f->fin = p[0] >> 7;
    f->rsv = (p[0] >> 4) & 7;
    f->op = p[0] & 15;
    f->masked = p[1] >> 7;
    f->len = p[1] & 127;
    f->hdr = 2;
    if (f->len == 126 || f->len == 127) {
        size_t b = f->len == 126 ? 2 : 8;
        if (n < 2 + b)
            return false;
        f->len = 0;
        for (size_t i = 0; i < b; i++)
            f->len = f->len << 8 | p[2 + i];
        f->hdr += b;
    }
    if (f->masked) {
        if (n < f->hdr + 4)
            return false;
        memcpy(f->mask, p + f->hdr, 4);
        f->hdr += 4;
    }
    return true;
}

/* What libwebsockets refuses (client-parser-ws.c): the connection ends. */
static bool refused(const frame *f, bool in_message, const uint8_t *p) {
    bool control = f->op & 8;
    if (f->rsv || (f->op > 2 && f->op < 8) || f->op > 10)
        return true;
    if (control && (!f->fin || (p[1] & 127) >= 126))
        return true;
    if (f->op == 0 && !in_message)
        return true;
    return (f->op == 1 || f->op == 2) && in_message; /* a continuation was owed */
}

typedef struct state {
    qsf_wsrx rx;
    qsf_durack *dur;
    uint8_t *shadow; /* the message as the frames carried it */
    size_t shadow_len;
    int64_t next_fsn, last_popped;
} state;

static void on_message(state *s, const uint8_t *m, size_t n) {
    if (n > QSF_WSRX_MAX || n != s->shadow_len || (n && memcmp(m, s->shadow, n) != 0))
        abort();
    qsf_response r;
    if (qsf_response_parse(m, n, &r, NULL, 0) != 0)
        return;
    if (r.kind == QSF_RESP_OK) {
        qsf_durack_push_ok(s->dur, s->next_fsn++, &r);
    } else if (r.kind == QSF_RESP_DURABLE) {
        int64_t fsn = qsf_durack_apply(s->dur, &r);
        if (fsn >= 0 && (fsn <= s->last_popped || fsn >= s->next_fsn))
            abort();
        if (fsn >= 0)
            s->last_popped = fsn;
    }
}

/* Hands one data frame's payload over in pieces of `piece` bytes. */
static bool data_frame(state *s, const frame *f, uint8_t *pay, size_t piece, bool *in_message) {
    bool starts = f->op != 0;
    if (starts)
        s->shadow_len = 0;
    memcpy(s->shadow + s->shadow_len, pay, (size_t) f->len);
    s->shadow_len += (size_t) f->len;
    size_t off = 0;
    do {
        size_t k = (size_t) f->len - off < piece ? (size_t) f->len - off : piece;
        bool first = starts && off == 0, last = f->fin && off + k == f->len;
        const uint8_t *m;
        size_t n;
        const char *why;
        int r = qsf_wsrx_piece(&s->rx, pay + off, k, first, last, f->op == 2, &m, &n, &why);
        if (r == QSF_WSRX_VIOLATION)
            return false; /* qsf latches and closes */
        if (r == QSF_WSRX_MESSAGE)
            on_message(s, m, n);
        off += k;
    } while (off < f->len);
    *in_message = !f->fin;
    return true;
}

/* The next frame at p; returns its size, or 0 when the stream (or the
 * connection) ends there. */
static size_t one_frame(state *s, uint8_t *p, size_t n, size_t piece, bool *in_message) {
    frame f;
    if (!header(p, n, &f) || refused(&f, *in_message, p) || f.len > n - f.hdr)
        return 0;
    uint8_t *pay = p + f.hdr;
    for (uint64_t i = 0; f.masked && i < f.len; i++)
        pay[i] ^= f.mask[i & 3]; /* libwebsockets 4.1.6 unmasks (docs/ERRORS.md) */
    if (f.op == 8) {
        int code;
        char reason[128];
        if (qsf_wsrx_close(pay, (size_t) f.len, &code, reason, sizeof reason) == 0 &&
            code != 1005 && (code < 1000 || code > 4999))
            abort();
        return 0;
    }
    if (f.op >= 8)
        return f.hdr + (size_t) f.len; /* PING, PONG */
    return data_frame(s, &f, pay, piece, in_message) ? f.hdr + (size_t) f.len : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    size_t piece = (size_t) data[0] + 1;
    uint8_t *buf = malloc(size);
    state s = {.dur = qsf_durack_new(), .shadow = malloc(size), .last_popped = -1};
    if (!buf || !s.dur || !s.shadow)
        abort();
    memcpy(buf, data + 1, size - 1);
    bool in_message = false;
    for (size_t off = 0, k; off < size - 1; off += k)
        if ((k = one_frame(&s, buf + off, size - 1 - off, piece, &in_message)) == 0)
            break;
    qsf_wsrx_free(&s.rx);
    qsf_durack_free(s.dur);
    free(s.shadow);
    free(buf);
    return 0;
}
