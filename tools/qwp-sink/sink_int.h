/* Internal state shared by the sink's files: the sink, its connections and the
 * per-connection frame log. Everything here is guarded by sink->mu; the event
 * loop holds it while it handles an event. */
#ifndef QSINK_SINK_INT_H
#define QSINK_SINK_INT_H

#include <pthread.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "buf.h"
#include "fault.h"
#include "http.h"
#include "msg.h"
#include "sink.h"
#include "store.h"
#include "wsframe.h"

#define QSINK_DEFAULT_RECV  (2u * 1024 * 1024)
#define QSINK_DRAIN_MS      5000
#define QSINK_STOP_GRACE_MS 1000 /* qsink_stop waits this long for peers to close */
#define QSINK_ACK_BATCH     8
#define QSINK_OUT_HIGH      (4u * 1024 * 1024) /* stop reading while this much is unsent */

/* A frame as logged for queries (qsink_frame plus an optional payload copy). */
struct frec {
    qsink_frame f;
    uint8_t *payload;
};

/* Frame log of one connection; it outlives the connection. */
struct crec {
    int conn;
    struct frec *f;
    size_t n, cap;
};

enum conn_state {
    CS_TLS = 1, /* TLS handshake */
    CS_HTTP,    /* reading the upgrade request */
    CS_WS,      /* WebSocket frames */
    CS_CLOSING, /* final bytes queued; half-close once they are out */
    CS_DRAIN,   /* half-closed: reading and discarding until EOF or deadline */
    CS_DEAD,    /* to be freed by the loop */
};

/* A table this connection committed to, and the durable watermark last sent. */
struct dtrack {
    char name[128];
    int64_t sent;
};

/* An entry of the next OK: table and its latest seqTxn since the previous OK. */
struct okent {
    char name[128];
    int64_t txn;
};

struct conn {
    struct qsink *sink;
    int fd;
    int no; /* 1-based accept order */
    SSL *ssl;
    int state;
    int want_write;  /* TLS asked for writability */
    uint32_t evmask; /* epoll interest currently registered */
    struct buf in, out;
    struct crec *rec;
    int64_t bytes_in;
    /* WebSocket session */
    uint8_t version;
    int durable;
    int64_t seq_next;    /* next wireSeq */
    int64_t highest;     /* highest processed (committed) wireSeq, -1 none */
    int64_t last_ok;     /* sequence of the last OK sent, -1 none */
    int64_t group_first; /* first frame index of the open deferred group, -1 none */
    int broken;          /* an error broke the pipeline */
    struct okent *ok;
    int nok;
    struct dtrack *dt;
    int ndt;
    struct store staging;
    struct msg_ctx *msg;
    int processed_in_read; /* frames processed in the current read */
    /* fault states */
    int silent, stalled, withhold;
    int64_t delay_ok_ms, ok_due_ms;
    struct wsf_style style;
    int malformed;
    int half_frame;   /* the next response goes out cut short, then nothing */
    int muted;        /* half-frame sent: no further byte goes out */
    int wide_durable; /* the next durable ack names this many tables in all */
    int64_t drain_deadline;
    struct conn *next;
};

struct qsink {
    qsink_opts o;
    char *strs[16]; /* owned copies of the option strings */
    int nstrs;
    size_t recv_buf;
    long max_batch;
    int lfd, epfd, evfd;
    uint16_t port;
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, restart;
    int64_t stop_deadline; /* > 0 once stopping */
    SSL_CTX *tls;
    struct conn *conns;
    struct store store;
    struct appendlog append; /* the --append file, when store.append points here */
    struct fault_set faults;
    qsink_stats st;
    struct crec **recs;
    int nrecs;
    qsink_error *errs;
    size_t nerrs, caperrs;
    char last_request[HTTP_MAX_REQUEST + 1];
};

int64_t sink_now_ms(void);

/* conn.c */
struct conn *conn_new(struct qsink *s, int fd, int no);
void conn_free(struct conn *c);
void conn_on_event(struct conn *c, int readable, int writable);
void conn_on_timer(struct conn *c, int64_t now);
int64_t conn_next_deadline(const struct conn *c);
void conn_drop(struct conn *c, int rst);
int conn_wants_read(const struct conn *c);
int conn_wants_write(const struct conn *c);
void conn_server_close(struct conn *c, int code, const char *reason);
void conn_apply_fault(struct conn *c, const struct fault *f);
/* Queues one WebSocket message for the peer, unless the connection is muted. */
void conn_emit(struct conn *c, int opcode, const uint8_t *p, size_t n, const struct wsf_style *st);

/* malformed.c: frames of a server that breaks the rules */
void malformed_half(struct conn *c, const uint8_t *p, size_t n);           /* then muted */
void malformed_send(struct conn *c, int kind, const uint8_t *p, size_t n); /* a response */
void malformed_close(struct conn *c, int kind); /* bad-close, close-utf8: at once */
int malformed_at_once(int kind);

/* ack.c: message processing, acks and errors */
void ack_on_binary(struct conn *c, uint8_t *payload, size_t len);
void ack_end_of_read(struct conn *c);
void ack_flush(struct conn *c); /* pending OK (now) and durable ack */
void ack_send_ok(struct conn *c, int now);
void ack_send_error(struct conn *c, int64_t seq, uint8_t status, const char *msg);
void ack_send_forged(struct conn *c, int64_t seq);
void ack_send_response(struct conn *c, const uint8_t *p, size_t n);
void ack_discard_uncommitted(struct conn *c);

#endif
