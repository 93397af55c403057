/* The I/O thread (docs/PROTOCOL.md §8-§10; docs/ERRORS.md §6): connects, sends dictionary
 * catch-up frames, replays from ackedFsn + 1 and streams live frames in strict FSN
 * order, maps cumulative OKs (or durable acks) back to FSNs and acknowledges them
 * in the ring, reconnects forever with backoff and failover, applies the error
 * policies and the poison-frame detector.
 *
 * Threads: qsf_io_start / qsf_io_stop / qsf_io_free on the owner's thread;
 * qsf_io_wake from the producer after each append (a coalesced
 * lws_cancel_service); the gauges, qsf_io_wait, pause/resume from any thread. */
#ifndef QSF_IO_IO_H
#define QSF_IO_IO_H

#include "inbox.h"
#include "latch.h"
#include "qsf.h"
#include "sf/ring.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct qsf_io qsf_io;

enum qsf_io_initial { QSF_IO_INIT_OFF = 0, QSF_IO_INIT_ON = 1, QSF_IO_INIT_ASYNC = 2 };

typedef struct qsf_io_addr {
    const char *host;
    int port;
} qsf_io_addr;

typedef struct qsf_io_opts {
    const qsf_io_addr *addrs; /* copied */
    int n_addrs;
    bool tls, tls_verify;
    const char *tls_roots;     /* the roots text of io/ws_tls.h (copied), NULL = system store */
    const char *authorization; /* full header value or NULL (copied, never logged) */
    const char *client_id;
    bool request_durable_ack;
    int64_t connect_timeout_ms; /* <= 0: auth_timeout_ms in its place (docs/PROTOCOL.md §2.6) */
    int64_t auth_timeout_ms;
    int64_t keepalive_ms; /* durable_ack_keepalive_interval_millis; <= 0 disables */
    /* Liveness (docs/CONFIGURATION.md; each <= 0 disables): a PING after
     * ping_interval_ms without anything received; a connection is dead when
     * nothing arrived for liveness_timeout_ms while an answer is owed, or when
     * sent frames stay unacknowledged for ack_timeout_ms. */
    int64_t ping_interval_ms, liveness_timeout_ms, ack_timeout_ms;
    /* A connection silent for liveness_timeout_ms whose peer's TCP stack still
     * acknowledges what was sent is waited for this long in all (live.c);
     * <= 0: dead at liveness_timeout_ms. */
    int64_t frozen_timeout_ms;
    int64_t backoff_initial_ms, backoff_max_ms;
    int64_t reconnect_max_duration_ms; /* initial_connect_retry=on only */
    int max_frame_rejections;
    int64_t poison_window_ms;
    int initial_mode;                /* enum qsf_io_initial */
    int64_t recovered_published_fsn; /* frames up to it may have been sent before */
    bool self_sufficient;            /* frames carry their own dictionary: no catch-up */
    /* An orphan drainer's connection (docs/FORMAT.md §7.1) gives up (terminal)
     * where a sender keeps retrying: after 16 consecutive endpoints that do not
     * grant a requested durable ack, or reconnect_max_duration_ms of them (a
     * round with any other outcome starts over); and after 16 consecutive
     * catch-up frames that cannot fit the batch cap, spread over at least
     * cap_gap_window_ms. */
    bool drainer;
    int64_t cap_gap_window_ms;
    const struct qsf_ws_ops *ws_ops; /* the WebSocket layer; NULL: libwebsockets */
    qsf_inbox *events;               /* connection events go there (events.h); NULL: only logged */
    struct qsf_interval *interval;   /* the sender's auto_flush_interval, ticked (interval.h) */
} qsf_io_opts;

/* Starts the thread and, for initial modes off/on, waits for the first
 * connection (QSF_E_CONNECT / QSF_E_AUTH / QSF_E_TLS / QSF_E_PROTOCOL when it
 * fails; the thread is stopped and freed then). Terminal conditions are set in
 * `latch` (the sender's, which must outlive the I/O thread); whoever sets it,
 * the thread then closes its connection and makes no further attempts. */
int qsf_io_start(const qsf_io_opts *opts, qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch,
                 qsf_io **out, qsf_errinfo *err);

/* Producer: frames were appended. Coalesced: at most one lws_cancel_service per
 * I/O-thread wakeup. */
void qsf_io_wake(qsf_io *io);

/* Sends CLOSE 1000 if connected (bounded), stops and joins the thread. */
void qsf_io_stop(qsf_io *io);
void qsf_io_free(qsf_io *io);

/* Highest FSN covered by an OK (-1 if none). Any thread. */
int64_t qsf_io_highest_ok(const qsf_io *io);

/* X-QWP-Max-Batch-Size of the current/last connection, 0 if not advertised. */
int64_t qsf_io_max_batch(const qsf_io *io);

/* How many times the I/O loop has turned (each turn one wait for the socket,
 * a wake or a timer, or a poll without waiting right after one that had
 * work), and how many of its waits came back with nothing to do: what tests
 * and bench_idle read to see that the loop sleeps. */
uint64_t qsf_io_loop_turns(const qsf_io *io);
uint64_t qsf_io_empty_waits(const qsf_io *io);

/* How many times the loop began to poll without sleeping after a turn with
 * work, which it does only while someone waits for an acknowledgement. */
uint64_t qsf_io_spins(const qsf_io *io);

/* Waits until the watermark of `level` (OK: highestOkFsn, DURABLE: ackedFsn)
 * reaches fsn. The timeout counts time without progress (qsf_wait), or from the
 * start when `absolute` (close drain). */
int qsf_io_wait(qsf_io *io, int64_t fsn, int level, int64_t timeout_ms, bool absolute,
                qsf_errinfo *err);

void qsf_io_pause(qsf_io *io, bool pause);

/* Fills the I/O part of the stats. */
void qsf_io_stats(const qsf_io *io, qsf_stats *out);

/* The connection's part of a QSF_E_FULL message that blames acknowledgements
 * (qsf_backpressure_full): "connected to H", "not connected, N reconnect
 * attempts since T (last error: ...)" or "wire paused". */
void qsf_io_status(void *io, char *buf, size_t cap);

#endif
