/* One connection: socket and TLS I/O, the upgrade stage, the WebSocket frame
 * rules of docs/PROTOCOL.md §11; docs/QWP-SINK.md §2.2, the close paths and fault application.
 * Message processing and acks are in ack.c. */
#include "sink_int.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#define READ_CHUNK      (1u << 20)
#define READS_PER_EVENT 16

static struct crec *crec_new(struct qsink *s, int no) {
    struct crec **n = realloc(s->recs, (size_t) (s->nrecs + 1) * sizeof *n);
    if (!n)
        return NULL;
    s->recs = n;
    struct crec *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->conn = no;
    s->recs[s->nrecs++] = r;
    return r;
}

struct conn *conn_new(struct qsink *s, int fd, int no) {
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    c->sink = s;
    c->fd = fd;
    c->no = no;
    c->highest = c->last_ok = c->group_first = -1;
    c->state = s->tls ? CS_TLS : CS_HTTP;
    store_init(&c->staging, !s->o.no_values || s->o.append_path, s->o.key_column);
    c->msg = msg_ctx_new(c->staging.keep_values, s->o.key_column);
    if (c->msg)
        msg_ctx_set_ack_only(c->msg, s->o.ack_only);
    c->rec = crec_new(s, no);
    if (s->tls && (c->ssl = SSL_new(s->tls)) != NULL)
        SSL_set_fd(c->ssl, fd);
    if (!c->msg || !c->rec || (s->tls && !c->ssl)) {
        conn_free(c);
        return NULL;
    }
    return c;
}

/* Every close of a connection's socket. epoll watches the open file
 * description, not the fd: a process forked meanwhile (the tests' children)
 * holds a duplicate that keeps the description, and its registration, alive
 * after close(), and epoll would go on reporting events for a freed conn. */
static void close_socket(struct conn *c) {
    epoll_ctl(c->sink->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->fd = -1;
}

void conn_free(struct conn *c) {
    if (!c)
        return;
    if (c->ssl)
        SSL_free(c->ssl);
    if (c->fd >= 0)
        close_socket(c);
    buf_free(&c->in);
    buf_free(&c->out);
    store_free(&c->staging); /* a disconnect discards uncommitted rows */
    msg_ctx_free(c->msg);
    free(c->ok);
    free(c->dt);
    free(c);
}

/* >0 bytes, 0 EOF, -1 try again, -2 error. */
static ssize_t io_read(struct conn *c, void *p, size_t n) {
    if (!c->ssl) {
        ssize_t r = read(c->fd, p, n);
        if (r < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
        return r;
    }
    int r = SSL_read(c->ssl, p, (int) (n > INT32_MAX ? INT32_MAX : n));
    if (r > 0)
        return r;
    int e = SSL_get_error(c->ssl, r);
    c->want_write = e == SSL_ERROR_WANT_WRITE;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return -1;
    return e == SSL_ERROR_ZERO_RETURN ? 0 : -2;
}

static ssize_t io_write(struct conn *c, const void *p, size_t n) {
    if (!c->ssl) {
        ssize_t r = send(c->fd, p, n, MSG_NOSIGNAL);
        if (r < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -1 : -2;
        return r;
    }
    int r = SSL_write(c->ssl, p, (int) (n > INT32_MAX ? INT32_MAX : n));
    if (r > 0)
        return r;
    int e = SSL_get_error(c->ssl, r);
    c->want_write = e == SSL_ERROR_WANT_WRITE;
    return e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ? -1 : -2;
}

void conn_drop(struct conn *c, int rst) {
    if (c->state == CS_DEAD)
        return;
    if (rst) {
        /* SO_LINGER with a zero timeout makes close() send RST. */
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close_socket(c);
    c->state = CS_DEAD;
}

static void flush_out(struct conn *c) {
    while (c->state != CS_DEAD && buf_live(&c->out) > 0) {
        ssize_t r = io_write(c, buf_head(&c->out), buf_live(&c->out));
        if (r == -1)
            return;
        if (r < 0) {
            conn_drop(c, 0);
            return;
        }
        buf_consume(&c->out, (size_t) r);
    }
}

/* After the final bytes of a close are out: half-close, then drain input. */
static void maybe_half_close(struct conn *c) {
    if (c->state != CS_CLOSING || buf_live(&c->out) > 0)
        return;
    if (c->ssl)
        SSL_shutdown(c->ssl);
    shutdown(c->fd, SHUT_WR);
    c->state = CS_DRAIN;
    c->drain_deadline = sink_now_ms() + QSINK_DRAIN_MS;
}

void conn_emit(struct conn *c, int opcode, const uint8_t *p, size_t n, const struct wsf_style *st) {
    if (!c->muted)
        wsf_append(&c->out, opcode, p, n, st);
}

void conn_server_close(struct conn *c, int code, const char *reason) {
    if (c->state != CS_WS)
        return;
    ack_flush(c);
    uint8_t p[125];
    size_t n = 0;
    if (code > 0) {
        p[0] = (uint8_t) (code >> 8);
        p[1] = (uint8_t) code;
        n = 2;
        size_t rl = reason ? strlen(reason) : 0;
        rl = rl > 123 ? 123 : rl;
        memcpy(p + 2, reason, rl);
        n += rl;
    }
    conn_emit(c, WS_OP_CLOSE, p, n, NULL);
    c->sink->st.closes++;
    c->state = CS_CLOSING;
}

/* Graceful end without a CLOSE frame: final acks, then FIN. */
static void conn_fin(struct conn *c) {
    if (c->state != CS_WS)
        return;
    ack_flush(c);
    c->state = CS_CLOSING;
}

void conn_apply_fault(struct conn *c, const struct fault *f) {
    switch (f->action) {
    case FA_CLOSE:
        conn_server_close(c, f->code, f->text);
        break;
    case FA_RST:
        conn_drop(c, 1);
        break;
    case FA_FIN:
        conn_fin(c);
        break;
    case FA_STALL:
        c->stalled = 1;
        break;
    case FA_SILENT:
        c->silent = 1;
        break;
    case FA_WITHHOLD_OK:
        c->withhold = 1;
        break;
    case FA_DELAY_OK:
        c->delay_ok_ms = f->code;
        break;
    case FA_FRAGMENT:
        c->style.fragment = (size_t) f->code;
        c->style.ping_between = (int) f->arg;
        break;
    case FA_MALFORMED:
        if (malformed_at_once(f->code))
            malformed_close(c, f->code);
        else
            c->malformed = f->code;
        break;
    case FA_HALF_FRAME:
        c->half_frame = 1;
        break;
    case FA_WIDE_DURABLE:
        c->wide_durable = f->code;
        break;
    case FA_FORGED_OK:
        ack_send_forged(c, f->arg);
        break;
    case FA_RESTART:
        c->sink->restart = 1;
        break;
    default:
        break;
    }
}

static void fire(struct conn *c, int trig, int64_t v) {
    struct fault f[8];
    int n = fault_take(&c->sink->faults, c->no, trig, v, f, 8);
    for (int i = 0; i < n && c->state == CS_WS; i++)
        conn_apply_fault(c, &f[i]);
}

/* ---- upgrade stage ---- */

static void reject(struct conn *c, int status, const char *reason, const char *role,
                   const char *zone) {
    http_write_reject(&c->out, status, reason, role, zone);
    c->sink->st.rejected++;
    c->state = CS_CLOSING;
}

/* Applies upgrade faults; returns 1 if one of them rejected the upgrade.
 * vbuf holds a replacement version text. */
static int upgrade_faults(struct conn *c, struct hs_reply *r, char *vbuf, size_t vcap) {
    struct fault f[8];
    int n = fault_take(&c->sink->faults, c->no, FT_UPGRADE, 0, f, 8);
    for (int i = 0; i < n; i++) {
        if (f[i].action == FA_REJECT) {
            reject(c, f[i].code, NULL, f[i].role[0] ? f[i].role : NULL,
                   f[i].zone[0] ? f[i].zone : NULL);
            return 1;
        }
        switch (f[i].code) {
        case UV_NO_VERSION:
            r->version_text = NULL;
            break;
        case UV_VERSION:
            snprintf(vbuf, vcap, "%s", f[i].text);
            r->version_text = vbuf;
            break;
        case UV_NO_DURABLE:
            r->durable = 0;
            break;
        case UV_BATCH:
            r->max_batch = (long) f[i].arg;
            break;
        case UV_NO_BATCH:
            r->max_batch = 0;
            break;
        }
    }
    return 0;
}

static void accept_upgrade(struct conn *c, const struct hs_result *hr) {
    struct qsink *s = c->sink;
    struct hs_reply r = {
        .version_text = "1",
        .durable = hr->durable_requested && s->o.durable,
        .role = s->o.role ? s->o.role : "STANDALONE",
        .max_batch = s->max_batch,
    };
    char vbuf[256];
    if (upgrade_faults(c, &r, vbuf, sizeof vbuf))
        return;
    http_write_101(&c->out, hr->accept, &r);
    c->version = 1; /* min(client max, server max 1) */
    c->durable = hr->durable_requested && s->o.durable;
    c->state = CS_WS;
    s->st.upgrades++;
    fire(c, FT_FRAMES, 0);
}

static void handle_http(struct conn *c) {
    struct qsink *s = c->sink;
    static __thread struct http_req req;
    int r = http_parse((const char *) buf_head(&c->in), buf_live(&c->in), &req);
    if (r == 0)
        return;
    if (r < 0) {
        reject(c, 400, "malformed HTTP request", NULL, NULL);
        return;
    }
    memcpy(s->last_request, buf_head(&c->in), req.raw_len);
    s->last_request[req.raw_len] = '\0';
    buf_consume(&c->in, req.raw_len);
    struct hs_policy pol = {s->o.auth_basic, s->o.auth_bearer, s->o.role, s->o.zone};
    struct hs_result hr;
    http_validate(&req, &pol, &hr);
    if (hr.status == 101)
        accept_upgrade(c, &hr);
    else
        reject(c, hr.status, hr.reason, hr.status == 421 ? pol.role : NULL,
               hr.status == 421 ? pol.zone : NULL);
}

/* ---- frame layer ---- */

static void on_close_frame(struct conn *c, const uint8_t *p, size_t n) {
    if (n == 1) {
        conn_server_close(c, 1002, "invalid close frame payload");
        return;
    }
    int code = n >= 2 ? (p[0] << 8) | p[1] : -1;
    ack_flush(c);
    int echo = wsf_close_echo_code(code);
    uint8_t e[2] = {(uint8_t) (echo >> 8), (uint8_t) echo};
    conn_emit(c, WS_OP_CLOSE, e, 2, NULL);
    c->sink->st.closes++;
    c->state = CS_CLOSING;
}

static void on_control(struct conn *c, int op, uint8_t *p, size_t n) {
    if (c->muted)
        return; /* a server stuck in the middle of a frame answers nothing, a CLOSE neither */
    if (op == WS_OP_PING) {
        ack_flush(c);
        conn_emit(c, WS_OP_PONG, p, n, NULL);
    } else if (op == WS_OP_CLOSE) {
        on_close_frame(c, p, n);
    }
}

/* Checks a complete header; returns 0 to go on, or closes / drops and returns -1. */
static int check_header(struct conn *c, const struct wsf_hdr *h) {
    if (!h->masked) {
        conn_drop(c, 0); /* the real server drops unmasked clients without a CLOSE */
        return -1;
    }
    int op = h->opcode;
    int control = op >= WS_OP_CLOSE;
    if (h->rsv || (op > WS_OP_BINARY && op < WS_OP_CLOSE) || op > WS_OP_PONG)
        conn_server_close(c, 1002, h->rsv ? "RSV bits set" : "unknown opcode");
    else if (control && (h->len > 125 || !h->fin))
        conn_server_close(c, 1002, "invalid control frame");
    else if (op == WS_OP_TEXT)
        conn_server_close(c, 1003, "text frames are not supported");
    else if (op == WS_OP_CONT || (op == WS_OP_BINARY && !h->fin))
        conn_server_close(c, 1002, "fragmented WebSocket frames are not supported");
    else if (h->hdr_len + h->len > c->sink->recv_buf)
        conn_server_close(c, 1009, "message too big");
    else
        return 0;
    return -1;
}

static void process_frames(struct conn *c) {
    while (c->state == CS_WS) {
        struct wsf_hdr h;
        int r = wsf_parse_hdr(buf_head(&c->in), buf_live(&c->in), &h);
        if (r == 0)
            return;
        if (r < 0) {
            conn_server_close(c, 1009, "message too big");
            return;
        }
        if (check_header(c, &h) != 0)
            return;
        size_t total = h.hdr_len + (size_t) h.len;
        if (buf_live(&c->in) < total) {
            buf_reserve(&c->in, total - buf_live(&c->in));
            return;
        }
        uint8_t *payload = buf_head(&c->in) + h.hdr_len;
        wsf_unmask(payload, (size_t) h.len, h.mask);
        if (h.opcode == WS_OP_BINARY) {
            ack_on_binary(c, payload, (size_t) h.len);
            fire(c, FT_FRAMES, c->seq_next);
        } else {
            on_control(c, h.opcode, payload, (size_t) h.len);
        }
        buf_consume(&c->in, total);
    }
}

/* How much to read now: a chunk, capped so a byte-count fault fires exactly. */
static size_t read_size(struct conn *c) {
    size_t want = c->state == CS_HTTP ? 4096 : READ_CHUNK;
    if (c->state == CS_WS) {
        int64_t next = fault_next_bytes(&c->sink->faults, c->no, c->bytes_in);
        if (next > 0 && (uint64_t) (next - c->bytes_in) < want)
            want = (size_t) (next - c->bytes_in);
    }
    return want;
}

static void on_bytes(struct conn *c, size_t n) {
    if (c->state == CS_HTTP) {
        handle_http(c);
        if (c->state != CS_WS || buf_live(&c->in) == 0)
            return;
        n = buf_live(&c->in); /* frames pipelined behind the upgrade request */
    }
    if (c->state == CS_WS) {
        c->bytes_in += (int64_t) n;
        c->sink->st.bytes += (int64_t) n;
        c->processed_in_read = 0;
        process_frames(c);
        if (c->state != CS_DEAD)
            ack_end_of_read(c);
        fire(c, FT_BYTES, c->bytes_in);
    } else if (c->state == CS_CLOSING || c->state == CS_DRAIN) {
        c->in.off = c->in.len = 0; /* discard */
    }
}

static int tls_handshake(struct conn *c) {
    int r = SSL_accept(c->ssl);
    if (r == 1) {
        c->state = CS_HTTP;
        return 0;
    }
    int e = SSL_get_error(c->ssl, r);
    c->want_write = e == SSL_ERROR_WANT_WRITE;
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return -1;
    conn_drop(c, 0);
    return -1;
}

static void do_reads(struct conn *c) {
    for (int i = 0; i < READS_PER_EVENT && conn_wants_read(c); i++) {
        if (c->state == CS_TLS && tls_handshake(c) != 0)
            return;
        size_t want = read_size(c);
        if (buf_reserve(&c->in, want) != 0) {
            conn_drop(c, 0);
            return;
        }
        ssize_t r = io_read(c, c->in.p + c->in.len, want);
        if (r == -1)
            return;
        if (r <= 0) {
            conn_drop(c, 0); /* EOF or reset: uncommitted rows go with it */
            return;
        }
        c->in.len += (size_t) r;
        on_bytes(c, (size_t) r);
        flush_out(c);
    }
}

void conn_on_event(struct conn *c, int readable, int writable) {
    if (c->state == CS_TLS && (readable || writable) && tls_handshake(c) != 0)
        return;
    if (writable)
        flush_out(c);
    if (readable)
        do_reads(c);
    flush_out(c);
    maybe_half_close(c);
}

int64_t conn_next_deadline(const struct conn *c) {
    int64_t d = -1;
    if (c->ssl && c->state != CS_DEAD && SSL_pending(c->ssl) > 0 && conn_wants_read(c))
        return sink_now_ms(); /* decrypted bytes wait inside TLS, epoll cannot see them */
    if (c->state == CS_DRAIN)
        d = c->drain_deadline;
    if (c->ok_due_ms > 0 && (d < 0 || c->ok_due_ms < d))
        d = c->ok_due_ms;
    return d;
}

void conn_on_timer(struct conn *c, int64_t now) {
    if (c->ssl && c->state != CS_DEAD && SSL_pending(c->ssl) > 0 && conn_wants_read(c))
        conn_on_event(c, 1, 0);
    if (c->ok_due_ms > 0 && now >= c->ok_due_ms && c->state == CS_WS) {
        c->ok_due_ms = 0;
        ack_send_ok(c, 1);
        flush_out(c);
    }
    if (c->state == CS_DRAIN && now >= c->drain_deadline)
        conn_drop(c, 0);
}

int conn_wants_read(const struct conn *c) {
    if (c->state == CS_DEAD || c->stalled)
        return 0;
    return buf_live(&c->out) < QSINK_OUT_HIGH;
}

int conn_wants_write(const struct conn *c) {
    return c->state != CS_DEAD && (buf_live(&c->out) > 0 || c->want_write);
}
