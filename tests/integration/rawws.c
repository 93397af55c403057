/* Raw WebSocket client for the sink tests (see rawws.h). */
#include "rawws.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bytes.h"

const uint8_t RAWWS_EMPTY_COMMIT[14] = {0x51, 0x57, 0x50, 0x31, 0x01, 0x08, 0x00,
                                        0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00};
const uint8_t RAWWS_CATCHUP_AB[18] = {0x51, 0x57, 0x50, 0x31, 0x01, 0x09, 0x00, 0x00, 0x06,
                                      0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x61, 0x01, 0x62};
const uint8_t RAWWS_SENSORS[86] = {
    0x51, 0x57, 0x50, 0x31, 0x01, 0x00, 0x01, 0x00, 0x4A, 0x00, 0x00, 0x00, 0x07, 0x73, 0x65,
    0x6E, 0x73, 0x6F, 0x72, 0x73, 0x02, 0x03, 0x02, 0x69, 0x64, 0x05, 0x05, 0x76, 0x61, 0x6C,
    0x75, 0x65, 0x07, 0x00, 0x0A, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xCD, 0xCC, 0xCC, 0xCC, 0xCC, 0xCC, 0xF4,
    0x3F, 0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0x01, 0x40, 0x00, 0x00, 0xE4, 0x0B, 0x54, 0x02,
    0x00, 0x00, 0x00, 0x80, 0x1A, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00};

int rawws_connect(rawws *w, uint16_t port) {
    memset(w, 0, sizeof *w);
    w->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int one = 1;
    setsockopt(w->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (w->fd < 0 || connect(w->fd, (struct sockaddr *) &a, sizeof a) != 0) {
        if (w->fd >= 0)
            close(w->fd);
        w->fd = -1;
        return -1;
    }
    return 0;
}

int rawws_connect_tls(rawws *w, uint16_t port, const char *ca_file) {
    if (rawws_connect(w, port) != 0)
        return -1;
    w->ctx = SSL_CTX_new(TLS_client_method());
    if (!w->ctx || SSL_CTX_load_verify_locations(w->ctx, ca_file, NULL) != 1)
        return -1;
    SSL_CTX_set_verify(w->ctx, SSL_VERIFY_PEER, NULL);
    w->ssl = SSL_new(w->ctx);
    SSL_set_fd(w->ssl, w->fd);
    SSL_set_tlsext_host_name(w->ssl, "localhost");
    SSL_set1_host(w->ssl, "localhost");
    return SSL_connect(w->ssl) == 1 ? 0 : -1;
}

void rawws_close(rawws *w) {
    if (w->ssl)
        SSL_free(w->ssl);
    if (w->ctx)
        SSL_CTX_free(w->ctx);
    if (w->fd >= 0)
        close(w->fd);
    w->ssl = NULL;
    w->ctx = NULL;
    w->fd = -1;
}

int rawws_send_raw(rawws *w, const void *p, size_t n) {
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t r = w->ssl ? SSL_write(w->ssl, b, (int) n) : send(w->fd, b, n, MSG_NOSIGNAL);
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t) r;
    }
    return 0;
}

/* Reads more bytes into w->in: >0 bytes, 0 timeout, -1 EOF, -2 reset. */
static int fill(rawws *w, int timeout_ms) {
    if (!(w->ssl && SSL_pending(w->ssl) > 0)) {
        struct pollfd p = {.fd = w->fd, .events = POLLIN};
        if (poll(&p, 1, timeout_ms) <= 0)
            return 0;
    }
    if (w->len == sizeof w->in)
        return -2;
    ssize_t r = w->ssl ? SSL_read(w->ssl, w->in + w->len, (int) (sizeof w->in - w->len))
                       : recv(w->fd, w->in + w->len, sizeof w->in - w->len, 0);
    if (r == 0 || (r < 0 && w->ssl && SSL_get_error(w->ssl, (int) r) == SSL_ERROR_ZERO_RETURN))
        return -1;
    if (r < 0)
        return errno == ECONNRESET ? -2 : -1;
    w->len += (size_t) r;
    return (int) r;
}

static void consume(rawws *w, size_t n) {
    memmove(w->in, w->in + n, w->len - n);
    w->len -= n;
}

static const char *find_head_end(const rawws *w) {
    for (size_t i = 3; i < w->len; i++)
        if (memcmp(w->in + i - 3, "\r\n\r\n", 4) == 0)
            return (const char *) w->in + i + 1;
    return NULL;
}

int rawws_request(rawws *w, const char *request, char *resp, size_t cap) {
    if (rawws_send_raw(w, request, strlen(request)) != 0)
        return -1;
    const char *end;
    while (!(end = find_head_end(w)))
        if (fill(w, 5000) <= 0)
            return -1;
    size_t head = (size_t) (end - (const char *) w->in);
    const char *cl = strcasestr((const char *) w->in, "Content-Length:");
    size_t body = cl && cl < end ? (size_t) strtoul(cl + 15, NULL, 10) : 0;
    while (w->len < head + body)
        if (fill(w, 5000) <= 0)
            break;
    size_t n = head + body < w->len ? head + body : w->len;
    snprintf(resp, cap, "%.*s", (int) n, (const char *) w->in);
    consume(w, n);
    int status = -1;
    sscanf(resp, "HTTP/1.1 %d", &status);
    return status;
}

int rawws_upgrade(rawws *w, const char *path, const char *extra, char *resp, size_t cap) {
    char req[4096];
    snprintf(req, sizeof req,
             "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
             "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " RAWWS_KEY
             "\r\nX-QWP-Max-Version: 1\r\nX-QWP-Client-Id: rawws/1\r\n%s\r\n",
             path, extra ? extra : "");
    return rawws_request(w, req, resp, cap);
}

int rawws_open(rawws *w, uint16_t port, const char *extra) {
    char resp[4096];
    if (rawws_connect(w, port) != 0)
        return -1;
    return rawws_upgrade(w, "/write/v4", extra, resp, sizeof resp) == 101 ? 0 : -1;
}

static size_t put_frame(uint8_t *out, int fin, int rsv, int opcode, const uint8_t *p, size_t n,
                        int masked) {
    static const uint8_t mask[4] = {0x37, 0xfa, 0x21, 0x3d};
    size_t h = 0;
    out[h++] = (uint8_t) ((fin ? 0x80 : 0) | (rsv << 4) | opcode);
    uint8_t mb = masked ? 0x80 : 0;
    if (n < 126) {
        out[h++] = (uint8_t) (mb | n);
    } else if (n <= 0xffff) {
        out[h++] = mb | 126;
        out[h++] = (uint8_t) (n >> 8);
        out[h++] = (uint8_t) n;
    } else {
        out[h++] = mb | 127;
        for (int i = 7; i >= 0; i--)
            out[h++] = (uint8_t) ((uint64_t) n >> (8 * i));
    }
    if (masked) {
        memcpy(out + h, mask, 4);
        h += 4;
    }
    for (size_t i = 0; i < n; i++)
        out[h + i] = masked ? p[i] ^ mask[i & 3] : p[i];
    return h + n;
}

int rawws_send_frame(rawws *w, int fin, int rsv, int opcode, const void *p, size_t n, int masked) {
    uint8_t *b = malloc(n + 14);
    size_t l = put_frame(b, fin, rsv, opcode, p, n, masked);
    int rc = rawws_send_raw(w, b, l);
    free(b);
    return rc;
}

int rawws_send_binary(rawws *w, const void *p, size_t n) {
    return rawws_send_frame(w, 1, 0, 2, p, n, 1);
}

int rawws_send_binary_n(rawws *w, const void *p, size_t n, int count) {
    uint8_t *b = malloc((n + 14) * (size_t) count);
    size_t l = 0;
    for (int i = 0; i < count; i++)
        l += put_frame(b + l, 1, 0, 2, p, n, 1);
    int rc = rawws_send_raw(w, b, l);
    free(b);
    return rc;
}

/* Parses a complete frame at the start of w->in; 1 done, 0 need more. */
static int parse_frame(rawws *w, rawws_frame *f) {
    if (w->len < 2)
        return 0;
    size_t h = 2;
    uint64_t n = w->in[1] & 0x7f;
    f->masked = w->in[1] >> 7;
    if (n == 126) {
        if (w->len < 4)
            return 0;
        n = (uint64_t) (w->in[2] << 8 | w->in[3]);
        h = 4;
    } else if (n == 127) {
        if (w->len < 10)
            return 0;
        n = 0;
        for (int i = 0; i < 8; i++)
            n = n << 8 | w->in[2 + i];
        h = 10;
    }
    uint8_t mask[4] = {0};
    if (f->masked) {
        if (w->len < h + 4)
            return 0;
        memcpy(mask, w->in + h, 4);
        h += 4;
    }
    if (w->len < h + n || n > sizeof f->payload)
        return 0;
    f->fin = w->in[0] >> 7;
    f->rsv = (w->in[0] >> 4) & 7;
    f->opcode = w->in[0] & 15;
    f->len = (size_t) n;
    for (size_t i = 0; i < n; i++)
        f->payload[i] = w->in[h + i] ^ mask[i & 3];
    consume(w, h + (size_t) n);
    return 1;
}

int rawws_recv(rawws *w, rawws_frame *f, int timeout_ms) {
    while (!parse_frame(w, f)) {
        int r = fill(w, timeout_ms);
        if (r <= 0)
            return r;
    }
    return 1;
}

int rawws_wait_eof(rawws *w, int timeout_ms) {
    for (;;) {
        w->len = 0;
        int r = fill(w, timeout_ms);
        if (r == 0)
            return -1; /* timeout */
        if (r < 0)
            return r == -1 ? 0 : -2;
    }
}

int64_t rawws_resp_seq(const rawws_frame *f) {
    if (f->opcode != 2 || f->len < 11 || f->payload[0] == 0x02)
        return -1;
    return qsf_get_i64(f->payload + 1);
}
