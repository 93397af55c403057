/* The receive side of the WebSocket glue (docs/PROTOCOL.md §11.2-§11.3): server
 * messages reassembled from the pieces libwebsockets hands over, CLOSE
 * payloads checked, and the verdict on a connection that ended although
 * neither qsf nor the server closed it. ws.c feeds it; it knows nothing of
 * libwebsockets, so fuzz/targets/fuzz_ws_rx.c drives it directly.
 *
 * What is a violation here (docs/ERRORS.md, "Protocol violations by the
 * server"): a TEXT message, a message over QSF_WSRX_MAX bytes, a malformed
 * CLOSE payload, and a connection libwebsockets dropped because of what the
 * server sent (its own frame checks: RSV bits, reserved opcodes, fragmented
 * or long control frames, continuations without a start, a new message where
 * a continuation was owed, a 64-bit length with bit 63 set). */
#ifndef QSF_IO_WSRX_H
#define QSF_IO_WSRX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QSF_WSRX_MAX (16u << 20) /* no response is anywhere near this */

typedef struct qsf_wsrx {
    uint8_t *buf; /* a message arriving in several pieces */
    size_t len, cap;
    bool binary, broken;
} qsf_wsrx;

enum qsf_wsrx_result {
    QSF_WSRX_MORE,      /* wait for the next piece */
    QSF_WSRX_MESSAGE,   /* *msg, *n: the whole message, valid until the next call */
    QSF_WSRX_VIOLATION, /* *why: the message breaks docs/PROTOCOL.md §11.2; its other pieces are
                           ignored */
};

/* One piece of a server message: `first` on a message's first piece (with
 * `binary` its opcode), `last` on the piece that completes it. A message in one
 * piece is handed back in place, without a copy. */
int qsf_wsrx_piece(qsf_wsrx *rx, const uint8_t *in, size_t len, bool first, bool last, bool binary,
                   const uint8_t **msg, size_t *n, const char **why);

void qsf_wsrx_free(qsf_wsrx *rx);

/* A CLOSE payload from the server (docs/PROTOCOL.md §11.3): empty (code 1005, no reason), or a
 * code a peer may send (1000-1003, 1007-1014, 3000-4999) and a UTF-8 reason,
 * 125 bytes in all. Returns 0 with *code and the reason (cut to cap - 1 bytes,
 * NUL-terminated), or -1 when malformed. */
int qsf_wsrx_close(const uint8_t *p, size_t len, int *code, char *reason, size_t cap);

/* A connection ended without a CLOSE from the server and without qsf asking.
 * libwebsockets calls back before it closes the socket, so the socket says
 * what happened: a pending error, EOF or a TLS session that ended (tls_ended:
 * close_notify received or a fatal alert either way) mean the transport was
 * lost; a healthy socket means libwebsockets dropped the connection over what
 * the server sent. fd < 0 (the socket is gone already) counts as lost. */
enum qsf_wsrx_end { QSF_WSRX_LOST, QSF_WSRX_REFUSED };
enum qsf_wsrx_end qsf_wsrx_ended(int fd, bool tls_ended);

#endif
