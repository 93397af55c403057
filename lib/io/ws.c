/* libwebsockets client glue: one context per sender, owned by the I/O thread. */
#include "io/ws.h"

#include "io/ws_fast.h"
#include "io/tcppeer.h"
#include "io/ws_tls.h"
#include "io/wsrx.h"

#include "err.h"
#include "log.h"
#include "text.h"

#include <libwebsockets.h>
#include <openssl/ssl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QSF_WS_PATH       "/write/v4"
#define QSF_WS_PROTO_NAME "qsf-qwp"
/* libwebsockets' own idle policy (by default a PING after 300 s without a
 * PONG, and a drop, socket healthy, 10 s later) is switched off: qsf's
 * liveness (io/live.c) owns PINGs and dead connections, and a drop by
 * libwebsockets over what the server sent is then the only way a healthy
 * socket ends without a CLOSE (refused_by_lws). A policy whose hangup time is
 * 0 sets no validity timer at all. */
static const lws_retry_bo_t no_idle_policy = {.secs_since_valid_ping = 0,
                                              .secs_since_valid_hangup = 0};

struct qsf_ws {
    struct lws_context *ctx;
    struct lws *wsi;
    struct lws_protocols protocols[2];
    qsf_ws_conf conf;
    qsf_ws_hooks hooks;
    void *user;
    lws_sorted_usec_list_t tick;
    lws_usec_t tick_due;   /* when the tick is scheduled (lws_now_usecs), 0 if not */
    uint64_t events;       /* wakes, receives, pongs, writable callbacks (qsf_ws_service) */
    uint64_t ticks;        /* tick callbacks */
    lws_usec_t spin_until; /* poll without sleeping until then (qsf_ws_service) */
    bool active;           /* an attempt or a connection exists */
    bool open;             /* upgrade done */
    int close_out;         /* code to send from the next writable callback, 0 = none */
    int close_in;          /* code the peer sent, 0 = none yet */
    bool closing;          /* qsf asked to close or abort this connection */
    char close_reason[128];
    qsf_ws_hs hs;
    char host_hdr[300];
    qsf_wsrx rx;      /* the receive side (wsrx.h) */
    qsf_ws_fast fast; /* the direct send path (ws_fast.h) */
    qsf_ws_tls tls;   /* the trust store (ws_tls.h) */
};

size_t qsf_ws_pre(void) {
    return LWS_PRE;
}

/* The last lws error line of this thread: TLS verification failures are only
 * explained there, so a failed attempt quotes it. */
static _Thread_local char last_lws_error[200];

static void lws_log_emit(int level, const char *line) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    if (level == LLL_ERR)
        snprintf(last_lws_error, sizeof last_lws_error, "%.*s", (int) n, line);
    QSF_LOGD("lws%s: %.*s", level == LLL_ERR ? " error" : "", (int) n, line);
}

/* lws logging is process-wide: route it once, at debug level. */
static void route_lws_logs(void) {
    static atomic_flag done = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&done))
        lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_emit);
}

/* ---- handshake ---- */

static int add_header(struct lws *wsi, const char *name, const char *val, unsigned char **p,
                      unsigned char *end) {
    return lws_add_http_header_by_name(wsi, (const unsigned char *) name,
                                       (const unsigned char *) val, (int) strlen(val), p, end);
}

/* X-QWP-* and Authorization after the standard upgrade lines (docs/PROTOCOL.md §2.2 order). */
static int append_headers(qsf_ws *ws, struct lws *wsi, unsigned char **p, unsigned char *end) {
    if (add_header(wsi, "X-QWP-Max-Version:", "1", p, end) ||
        add_header(wsi, "X-QWP-Client-Id:", ws->conf.client_id, p, end))
        return -1;
    if (ws->conf.request_durable_ack &&
        add_header(wsi, "X-QWP-Request-Durable-Ack:", "true", p, end))
        return -1;
    if (ws->conf.authorization && add_header(wsi, "Authorization:", ws->conf.authorization, p, end))
        return -1;
    return 0;
}

/* Copies a response header (name lower-case with the colon) trimmed; "" if absent. */
static void custom_header(struct lws *wsi, const char *name, char *out, size_t cap) {
    out[0] = 0;
    int n = lws_hdr_custom_length(wsi, name, (int) strlen(name));
    if (n <= 0 || (size_t) n >= cap)
        return;
    if (lws_hdr_custom_copy(wsi, out, (int) cap, name, (int) strlen(name)) < 0) {
        out[0] = 0;
        return;
    }
    size_t s = 0, e = strlen(out);
    while (s < e && (out[s] == ' ' || out[s] == '\t'))
        s++;
    while (e > s && (out[e - 1] == ' ' || out[e - 1] == '\t'))
        e--;
    memmove(out, out + s, e - s);
    out[e - s] = 0;
}

/* Decimal integer, whole string; -1 if malformed. */
static int64_t parse_decimal(const char *s) {
    if (!*s)
        return -1;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

static void read_handshake(qsf_ws *ws, struct lws *wsi) {
    char v[64];
    memset(&ws->hs, 0, sizeof ws->hs);
    custom_header(wsi, "x-qwp-version:", v, sizeof v);
    ws->hs.version = v[0] ? (int) parse_decimal(v) : 1;
    custom_header(wsi, "x-qwp-max-batch-size:", v, sizeof v);
    int64_t mb = parse_decimal(v);
    ws->hs.max_batch = mb > 0 ? mb : 0;
    custom_header(wsi, "x-qwp-durable-ack:", v, sizeof v);
    ws->hs.durable_granted = ws->conf.request_durable_ack && strcasecmp(v, "enabled") == 0;
    custom_header(wsi, "x-questdb-role:", ws->hs.role, sizeof ws->hs.role);
}

/* Server-provided text (the role header) and lws's reason are escaped: they
 * end up in log lines and error messages. */
static void fail_attempt(qsf_ws *ws, struct lws *wsi, const char *why) {
    qsf_ws_fail f;
    char raw[sizeof f.reason];
    memset(&f, 0, sizeof f);
    if (wsi) {
        f.http_status = (int) lws_http_client_http_response(wsi);
        custom_header(wsi, "x-questdb-role:", raw, sizeof f.role);
        qsf_text_escape(f.role, sizeof f.role, raw, strlen(raw));
    }
    snprintf(raw, sizeof raw, "%s", why && *why ? why : "connection failed");
    qsf_text_escape(f.reason, sizeof f.reason, raw, strlen(raw));
    f.tls = qsf_ws_tls_explain(&ws->conf, last_lws_error, f.reason, sizeof f.reason);
    if (f.http_status == 101 || f.http_status < 0)
        f.http_status = 0;
    last_lws_error[0] = 0;
    ws->active = false;
    ws->wsi = NULL;
    ws->hooks.on_connect_fail(ws->user, &f);
}

/* ---- receive ---- */

static void rx_append(qsf_ws *ws, struct lws *wsi, const void *in, size_t len) {
    const uint8_t *msg;
    size_t n;
    const char *why;
    bool last = lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
    int r = qsf_wsrx_piece(&ws->rx, in, len, lws_is_first_fragment(wsi), last,
                           lws_frame_is_binary(wsi), &msg, &n, &why);
    if (r == QSF_WSRX_MESSAGE)
        ws->hooks.on_message(ws->user, msg, n);
    else if (r == QSF_WSRX_VIOLATION)
        ws->hooks.on_violation(ws->user, why);
}

static void peer_close(qsf_ws *ws, const uint8_t *in, size_t len) {
    if (qsf_wsrx_close(in, len, &ws->close_in, ws->close_reason, sizeof ws->close_reason) != 0)
        ws->hooks.on_violation(ws->user, "malformed close payload from the server");
}

/* Whether libwebsockets dropped the connection over what the server sent:
 * it ended while open, without a CLOSE from the server, without qsf asking,
 * and the socket, still open in LWS_CALLBACK_CLIENT_CLOSED, is healthy
 * (wsrx.h). */
static bool refused_by_lws(qsf_ws *ws, struct lws *wsi) {
    if (!wsi || !ws->open || ws->close_in || ws->closing)
        return false;
    SSL *ssl = ws->conf.tls ? lws_get_ssl(wsi) : NULL;
    bool tls_ended = ssl && SSL_get_shutdown(ssl) != 0;
    return qsf_wsrx_ended(lws_get_socket_fd(wsi), tls_ended) == QSF_WSRX_REFUSED;
}

/* wsi: the connection in LWS_CALLBACK_CLIENT_CLOSED, NULL once its socket is
 * closed (LWS_CALLBACK_WSI_DESTROY). */
static void connection_ended(qsf_ws *ws, struct lws *wsi) {
    bool was_open = ws->open, refused = refused_by_lws(ws, wsi);
    ws->active = ws->open = false;
    ws->wsi = NULL;
    if (refused)
        ws->hooks.on_violation(ws->user, "libwebsockets refused a WebSocket frame from the server "
                                         "(RSV bits, reserved opcode, bad control frame, stray "
                                         "continuation or bad length)");
    if (was_open)
        ws->hooks.on_closed(ws->user, ws->close_in ? ws->close_in : 1006, ws->close_reason);
    else
        fail_attempt(ws, NULL, "connection closed during the upgrade");
}

/* ---- the callback ---- */

static int on_writeable(qsf_ws *ws, struct lws *wsi) {
    if (ws->close_out) {
        lws_close_reason(wsi, (enum lws_close_status) ws->close_out, NULL, 0);
        ws->close_out = 0;
        return -1;
    }
    ws->hooks.on_writable(ws->user);
    return 0;
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                       size_t len) {
    qsf_ws *ws = lws_context_user(lws_get_context(wsi));
    if (!ws)
        return 0;
    if (reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED || reason == LWS_CALLBACK_CLIENT_RECEIVE ||
        reason == LWS_CALLBACK_CLIENT_RECEIVE_PONG || reason == LWS_CALLBACK_CLIENT_WRITEABLE)
        ws->events++;
    switch (reason) {
    case LWS_CALLBACK_OPENSSL_LOAD_EXTRA_CLIENT_VERIFY_CERTS:
        qsf_ws_tls_install(&ws->tls, user);
        return 0;
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        ws->hooks.on_wake(ws->user);
        return 0;
    case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
        return append_headers(ws, wsi, (unsigned char **) in, *(unsigned char **) in + len);
    case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
        read_handshake(ws, wsi);
        return 0;
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        ws->open = true;
        ws->close_in = 0;
        ws->hooks.on_open(ws->user, &ws->hs);
        return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        if (ws->active)
            fail_attempt(ws, wsi, in ? (const char *) in : NULL);
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE:
        rx_append(ws, wsi, in, len);
        return 0;
    case LWS_CALLBACK_CLIENT_RECEIVE_PONG:
        if (ws->hooks.on_pong)
            ws->hooks.on_pong(ws->user);
        return 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        return on_writeable(ws, wsi);
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        peer_close(ws, in, len);
        return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
    case LWS_CALLBACK_WSI_DESTROY:
        if (ws->active && (ws->wsi == wsi || ws->wsi == NULL))
            connection_ended(ws, reason == LWS_CALLBACK_CLIENT_CLOSED ? wsi : NULL);
        return 0;
    default:
        return 0;
    }
    (void) user;
}

/* ---- lifecycle ---- */

static void tick_cb(lws_sorted_usec_list_t *sul) {
    qsf_ws *ws = lws_container_of(sul, qsf_ws, tick);
    ws->tick_due = 0;
    ws->ticks++;
    ws->hooks.on_tick(ws->user);
}

int qsf_ws_new(const qsf_ws_conf *conf, const qsf_ws_hooks *hooks, void *user, qsf_ws **out,
               qsf_errinfo *err) {
    route_lws_logs();
    qsf_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory creating the WebSocket client");
    ws->conf = *conf;
    ws->hooks = *hooks;
    ws->user = user;
    qsf_ws_fast_init(&ws->fast);
    ws->protocols[0].name = QSF_WS_PROTO_NAME;
    ws->protocols[0].callback = ws_callback;
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = ws->protocols;
    info.gid = (gid_t) -1;
    info.uid = (uid_t) -1;
    info.user = ws;
    info.fd_limit_per_thread = 16;
    info.timeout_secs = 300; /* qsf enforces its own connect/auth deadlines */
    qsf_ws_tls_init(&ws->tls, conf, &info);
    ws->ctx = lws_create_context(&info);
    int rc = ws->ctx ? qsf_ws_tls_check(&ws->tls, conf, err)
                     : qsf_err_set(err, conf->tls ? QSF_E_TLS : QSF_E_INTERNAL, 0, 0,
                                   "cannot create the %s client context",
                                   conf->tls ? "TLS" : "WebSocket");
    if (rc != QSF_OK) {
        if (ws->ctx)
            lws_context_destroy(ws->ctx);
        free(ws);
        return rc;
    }
    *out = ws;
    return QSF_OK;
}

void qsf_ws_free(qsf_ws *ws) {
    if (!ws)
        return;
    lws_sul_cancel(&ws->tick);
    struct lws_context *ctx = ws->ctx;
    ws->active = false;
    lws_context_destroy(ctx);
    qsf_wsrx_free(&ws->rx);
    free(ws);
}

int qsf_ws_connect(qsf_ws *ws, const char *host, int port, qsf_errinfo *err) {
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    snprintf(ws->host_hdr, sizeof ws->host_hdr, "%s:%d", host, port);
    ci.context = ws->ctx;
    ci.address = host;
    ci.port = port;
    ci.path = QSF_WS_PATH;
    ci.host = ws->host_hdr;
    ci.local_protocol_name = QSF_WS_PROTO_NAME; /* binds our callback; sends no subprotocol */
    ci.ietf_version_or_minus_one = -1;
    ci.retry_and_idle_policy = &no_idle_policy;
    if (ws->conf.tls) {
        ci.ssl_connection = LCCSCF_USE_SSL;
        if (!ws->conf.tls_verify)
            ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                                 LCCSCF_ALLOW_EXPIRED | LCCSCF_ALLOW_INSECURE;
    }
    ws->active = true;
    ws->open = false;
    ws->close_out = ws->close_in = 0;
    ws->closing = false;
    ws->close_reason[0] = 0;
    ws->rx.len = 0;
    struct lws *wsi = lws_client_connect_via_info(&ci);
    if (!wsi && ws->active) {
        fail_attempt(ws, NULL, "cannot start the connection");
        return qsf_err_set(err, QSF_E_CONNECT, QSF_ERRF_RETRIABLE, 0, "cannot connect to %s",
                           ws->host_hdr);
    }
    if (ws->active)
        ws->wsi = wsi;
    return QSF_OK;
}

bool qsf_ws_active(const qsf_ws *ws) {
    return ws->active;
}

int qsf_ws_send_binary_from(qsf_ws *ws, uint8_t *buf, const uint8_t *src, size_t len) {
    if (!ws->wsi || !ws->open)
        return -1;
    if (!ws->conf.tls) {
        int rc = qsf_ws_fast_send(&ws->fast, ws->wsi, buf, src, len);
        if (rc <= 0)
            return rc;
    }
    if (src != buf + LWS_PRE)
        memcpy(buf + LWS_PRE, src, len);
    int n = lws_write(ws->wsi, buf + LWS_PRE, len, LWS_WRITE_BINARY);
    return n < 0 || (size_t) n < len ? -1 : 0;
}

uint64_t qsf_ws_fast_frames(const qsf_ws *ws) {
    return ws->fast.frames;
}

int qsf_ws_send_ping(qsf_ws *ws) {
    uint8_t buf[LWS_PRE + 4];
    if (!ws->wsi || !ws->open)
        return -1;
    return lws_write(ws->wsi, buf + LWS_PRE, 0, LWS_WRITE_PING) < 0 ? -1 : 0;
}

bool qsf_ws_choked(const qsf_ws *ws) {
    return ws->wsi && (lws_partial_buffered(ws->wsi) || lws_send_pipe_choked(ws->wsi));
}

void qsf_ws_want_writable(qsf_ws *ws) {
    if (ws->wsi)
        lws_callback_on_writable(ws->wsi);
}

void qsf_ws_close(qsf_ws *ws, int code, bool abort) {
    if (!ws->wsi)
        return;
    ws->closing = true;
    if (abort || !ws->open) {
        lws_set_timeout(ws->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        return;
    }
    ws->close_out = code;
    lws_callback_on_writable(ws->wsi);
}

/* One turn of the I/O loop.
 *
 * lws 4.1 hands poll() the time to its next timer rounded down to whole
 * milliseconds, so in the last millisecond before the tick it polls with
 * timeout 0 until the tick is ripe: a spin, 1.6-1.8 % of a core for an idle
 * sender, and most of the I/O thread's CPU while acknowledgements keep the
 * watermark timer close. The tick may run up to QSF_WS_TICK_EARLY_US early
 * (ws.h): it runs here instead.
 *
 * After a turn that had something to do (a wake, a receive, a writable
 * callback) the loop polls without sleeping for QSF_WS_SPIN_US more, when
 * the hook wants it (the I/O thread: while someone waits for an
 * acknowledgement): the answer to what it just sent, or the producer's next
 * flush, usually comes within that, and is then handled without a scheduler
 * wake-up (about 40 us each on this class of machine). */
bool qsf_ws_service(qsf_ws *ws) {
    lws_usec_t now = lws_now_usecs();
    uint64_t events = ws->events, ticks = ws->ticks;
    if (ws->tick_due && ws->tick_due - now < QSF_WS_TICK_EARLY_US) {
        lws_sul_cancel(&ws->tick);
        tick_cb(&ws->tick);
    }
    bool spinning = now < ws->spin_until;
    lws_service(ws->ctx, spinning ? -1 : 0); /* -1: poll() without waiting */
    if (ws->events != events && (!ws->hooks.wants_spin || ws->hooks.wants_spin(ws->user)))
        ws->spin_until = lws_now_usecs() + QSF_WS_SPIN_US;
    return !spinning && ws->events == events && ws->ticks == ticks;
}

void qsf_ws_cancel(qsf_ws *ws) {
    lws_cancel_service(ws->ctx);
}

void qsf_ws_tick_in(qsf_ws *ws, int64_t us) {
    ws->tick_due = lws_now_usecs() + us;
    lws_sul_schedule(ws->ctx, 0, &ws->tick, tick_cb, us);
}

int qsf_ws_tcp_peer(const qsf_ws *ws, struct qsf_tcp_peer *out) {
    if (!ws->wsi)
        return -1;
    return qsf_tcp_peer_read(lws_get_socket_fd(ws->wsi), out);
}

const qsf_ws_ops qsf_ws_lws = {
    .create = qsf_ws_new,
    .destroy = qsf_ws_free,
    .connect = qsf_ws_connect,
    .active = qsf_ws_active,
    .pre = qsf_ws_pre,
    .send_binary_from = qsf_ws_send_binary_from,
    .send_ping = qsf_ws_send_ping,
    .choked = qsf_ws_choked,
    .want_writable = qsf_ws_want_writable,
    .close = qsf_ws_close,
    .service = qsf_ws_service,
    .cancel = qsf_ws_cancel,
    .tick_in = qsf_ws_tick_in,
    .tcp_peer = qsf_ws_tcp_peer,
};
