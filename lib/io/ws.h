/* libwebsockets client glue (docs/PROTOCOL.md §2, §11).
 *
 * One lws_context per sender, created, serviced and destroyed by the I/O thread
 * only. The upgrade request carries exactly the qsf headers of docs/PROTOCOL.md §2.2 (no Origin,
 * no Sec-WebSocket-Protocol, no Sec-WebSocket-Extensions). Complete server
 * messages are reassembled before the hooks see them; control frames between
 * fragments are handled by lws. Other threads may only call qsf_ws_cancel(),
 * which is lws_cancel_service(). */
#ifndef QSF_IO_WS_H
#define QSF_IO_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qsf.h"

typedef struct qsf_ws qsf_ws;

typedef struct qsf_ws_conf {
    bool tls;
    bool tls_verify;           /* false only with tls_verify=unsafe_off */
    const char *tls_roots;     /* roots text (ws_tls.h), NULL = the system store */
    const char *authorization; /* full header value ("Basic ..." / "Bearer ..."), or NULL */
    const char *client_id;     /* X-QWP-Client-Id value */
    bool request_durable_ack;
} qsf_ws_conf;

/* What the 101 said (docs/PROTOCOL.md §2.3, §2.4). */
typedef struct qsf_ws_hs {
    int version;       /* X-QWP-Version, default 1 */
    int64_t max_batch; /* X-QWP-Max-Batch-Size, 0 = not advertised */
    bool durable_granted;
    char role[32]; /* X-QuestDB-Role or "" */
} qsf_ws_hs;

/* A failed attempt (docs/PROTOCOL.md §2.5): http_status 0 for transport failures. */
typedef struct qsf_ws_fail {
    int http_status;
    bool tls; /* the failure happened in TLS (handshake or verification) */
    char role[32];
    char reason[256];
} qsf_ws_fail;

typedef struct qsf_ws_hooks {
    void (*on_open)(void *u, const qsf_ws_hs *hs);
    void (*on_connect_fail)(void *u, const qsf_ws_fail *f);
    void (*on_message)(void *u, const uint8_t *p, size_t n);
    /* the server broke the WebSocket rules (wsrx.h): a text frame, an
     * oversized message, a malformed close payload, or a frame libwebsockets
     * refused (then on_closed follows with 1006) */
    void (*on_violation)(void *u, const char *why);
    void (*on_writable)(void *u);
    /* the connection ended; code 1006 when it was lost without a CLOSE */
    void (*on_closed)(void *u, int code, const char *reason);
    void (*on_wake)(void *u); /* lws_cancel_service() reached the loop */
    void (*on_tick)(void *u); /* timer armed with qsf_ws_tick_in */
    void (*on_pong)(void *u); /* a PONG arrived (may be NULL) */
    /* asked after a turn with work: true when the loop should poll without
     * sleeping for QSF_WS_SPIN_US more (qsf_ws_service); NULL: always */
    bool (*wants_spin)(void *u);
} qsf_ws_hooks;

/* Bytes of headroom lws needs in front of a buffer passed to qsf_ws_send. */
size_t qsf_ws_pre(void);

int qsf_ws_new(const qsf_ws_conf *conf, const qsf_ws_hooks *hooks, void *user, qsf_ws **out,
               qsf_errinfo *err);
void qsf_ws_free(qsf_ws *ws);

/* Starts an attempt to host:port (at most one at a time). */
int qsf_ws_connect(qsf_ws *ws, const char *host, int port, qsf_errinfo *err);

/* True while an attempt or a connection exists. */
bool qsf_ws_active(const qsf_ws *ws);

/* In on_writable only: sends src[0..len) (left untouched) as one binary message
 * (FIN=1). It is copied into buf[pre ..) (which must hold qsf_ws_pre() + len
 * bytes; src may already be buf + pre), masked in the same pass on the direct
 * path. Returns 0, or -1 when the connection failed. */
int qsf_ws_send_binary_from(qsf_ws *ws, uint8_t *buf, const uint8_t *src, size_t len);
int qsf_ws_send_ping(qsf_ws *ws);

/* True when lws still holds unsent bytes of the last message (wait for the next
 * writable callback before sending another). */
bool qsf_ws_choked(const qsf_ws *ws);

void qsf_ws_want_writable(qsf_ws *ws);

/* Closes with `code` (sent from the next writable callback), or drops the
 * connection at once when abort is true. on_closed follows either way. */
void qsf_ws_close(qsf_ws *ws, int code, bool abort);

/* One service pass (blocks until an event, a tick or a cancel). Returns true
 * for a wait that came back with nothing to do (no event, no tick): what the
 * I/O loop counts to show that it sleeps (qsf_io_empty_waits). */
bool qsf_ws_service(qsf_ws *ws);

/* Any thread: wakes qsf_ws_service (on_wake runs on the I/O thread). */
void qsf_ws_cancel(qsf_ws *ws);

/* Arms the tick timer `us` microseconds from now (replaces a pending one). The
 * tick may run up to QSF_WS_TICK_EARLY_US before that (qsf_ws_service: lws
 * would otherwise poll without sleeping through that last millisecond). */
#define QSF_WS_TICK_EARLY_US 1000
/* How long the loop polls without sleeping after a turn with work
 * (qsf_ws_service). */
#define QSF_WS_SPIN_US 50
void qsf_ws_tick_in(qsf_ws *ws, int64_t us);

struct qsf_tcp_peer;
/* What the kernel knows of the open connection's peer (io/tcppeer.h); -1
 * when no connection is open or the system cannot say. */
int qsf_ws_tcp_peer(const qsf_ws *ws, struct qsf_tcp_peer *out);

/* Frames this ws sent on the direct path of plain connections (ws_fast.h). */
uint64_t qsf_ws_fast_frames(const qsf_ws *ws);

/* The WebSocket layer as the I/O thread uses it: one table of functions, so
 * the connection state machine runs against libwebsockets (qsf_ws_lws, the
 * functions above) or, in tests, against a fake without a socket. Every entry
 * has the contract of the function of the same name above. */
typedef struct qsf_ws_ops {
    int (*create)(const qsf_ws_conf *conf, const qsf_ws_hooks *hooks, void *user, qsf_ws **out,
                  qsf_errinfo *err);
    void (*destroy)(qsf_ws *ws);
    int (*connect)(qsf_ws *ws, const char *host, int port, qsf_errinfo *err);
    bool (*active)(const qsf_ws *ws);
    size_t (*pre)(void);
    int (*send_binary_from)(qsf_ws *ws, uint8_t *buf, const uint8_t *src, size_t len);
    int (*send_ping)(qsf_ws *ws);
    bool (*choked)(const qsf_ws *ws);
    void (*want_writable)(qsf_ws *ws);
    void (*close)(qsf_ws *ws, int code, bool abort);
    bool (*service)(qsf_ws *ws);
    void (*cancel)(qsf_ws *ws);
    void (*tick_in)(qsf_ws *ws, int64_t us);
    /* What the kernel knows of the open connection's peer (io/tcppeer.h): 0,
     * or -1 when nothing is known. NULL: nothing is ever known. */
    int (*tcp_peer)(const qsf_ws *ws, struct qsf_tcp_peer *out);
} qsf_ws_ops;

extern const qsf_ws_ops qsf_ws_lws;

#endif
