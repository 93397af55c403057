/* Receive side of the WebSocket glue (see wsrx.h). */
#include "io/wsrx.h"

#include "qwp/utf8.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int violation(qsf_wsrx *rx, const char **why, const char *what) {
    rx->broken = true;
    *why = what;
    return QSF_WSRX_VIOLATION;
}

/* Appends a piece to the message being reassembled (len > 0). */
static int append(qsf_wsrx *rx, const uint8_t *in, size_t len, const char **why) {
    if (rx->len + len > rx->cap) {
        size_t cap = rx->cap ? rx->cap : 4096;
        while (cap < rx->len + len)
            cap *= 2;
        uint8_t *nb = realloc(rx->buf, cap);
        if (!nb)
            return violation(rx, why, "out of memory reassembling a server message");
        rx->buf = nb;
        rx->cap = cap;
    }
    memcpy(rx->buf + rx->len, in, len);
    rx->len += len;
    return QSF_WSRX_MORE;
}

int qsf_wsrx_piece(qsf_wsrx *rx, const uint8_t *in, size_t len, bool first, bool last, bool binary,
                   const uint8_t **msg, size_t *n, const char **why) {
    if (first) {
        rx->len = 0;
        rx->broken = false;
        rx->binary = binary;
    }
    if (rx->broken)
        return QSF_WSRX_MORE;
    if (!rx->binary)
        return violation(rx, why, "text frame from the server");
    if (len > QSF_WSRX_MAX - rx->len)
        return violation(rx, why, "server message larger than 16 MiB");
    if (first && last) { /* the usual case: one frame, no copy */
        *msg = in;
        *n = len;
        return QSF_WSRX_MESSAGE;
    }
    if (len && append(rx, in, len, why) == QSF_WSRX_VIOLATION)
        return QSF_WSRX_VIOLATION;
    if (!last)
        return QSF_WSRX_MORE;
    *msg = rx->buf;
    *n = rx->len;
    return QSF_WSRX_MESSAGE;
}

void qsf_wsrx_free(qsf_wsrx *rx) {
    free(rx->buf);
    memset(rx, 0, sizeof *rx);
}

/* Close codes a peer may put on the wire (RFC 6455 §7.4). */
static bool close_code_valid(int c) {
    return (c >= 1000 && c <= 1003) || (c >= 1007 && c <= 1014) || (c >= 3000 && c <= 4999);
}

int qsf_wsrx_close(const uint8_t *p, size_t len, int *code, char *reason, size_t cap) {
    *code = 1005;
    if (cap)
        reason[0] = 0;
    if (len == 0)
        return 0;
    if (len == 1 || len > 125)
        return -1;
    int c = p[0] << 8 | p[1];
    if (!close_code_valid(c) || !qsf_utf8_valid((const char *) p + 2, len - 2))
        return -1;
    *code = c;
    if (cap) {
        size_t rl = len - 2 < cap - 1 ? len - 2 : cap - 1;
        memcpy(reason, p + 2, rl);
        reason[rl] = 0;
    }
    return 0;
}

enum qsf_wsrx_end qsf_wsrx_ended(int fd, bool tls_ended) {
    if (fd < 0 || tls_ended)
        return QSF_WSRX_LOST;
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0)
        return QSF_WSRX_LOST; /* e.g. a reset behind bytes still queued */
    uint8_t b;
    ssize_t r;
    do
        r = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
    while (r < 0 && errno == EINTR);
    if (r > 0)
        return QSF_WSRX_REFUSED; /* bytes left unread: libwebsockets stopped reading */
    if (r == 0)
        return QSF_WSRX_LOST; /* EOF */
    return errno == EAGAIN || errno == EWOULDBLOCK ? QSF_WSRX_REFUSED : QSF_WSRX_LOST;
}
