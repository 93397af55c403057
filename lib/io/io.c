/* The I/O thread: connection state machine, replay, ack mapping, policies.
 *
 *            start_attempt              on_open
 *   WAIT ────────────────▶ CONNECTING ──────────▶ OPEN ──┐ error / violation /
 *    ▲  ▲                      │ on_connect_fail    │     │ pause / stop
 *    │  └──────────────────────┘                    │     ▼
 *    │                        peer close / loss     │   CLOSING
 *    └──────────────────────────────────────────────┴─────┘ on_closed
 *   PAUSED (no attempts), TERMINAL (latched; no attempts), STOPPED (thread exits)
 *
 * Everything here runs on the I/O thread except the functions documented in
 * io.h as callable from other threads; those touch only atomics and the two
 * mutexes (status/terminal and progress). */
#include "io/io.h"

#include "bytes.h"
#include "err.h"
#include "io/durable.h"
#include "io/hosts.h"
#include "io/policy.h"
#include "io/wiremap.h"
#include "io/ws.h"
#include "latch.h"
#include "log.h"
#include "os/os.h"
#include "qwp/encoder.h"
#include "qwp/response.h"
#include "qwp/types.h"

#include <inttypes.h>
#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TICK_US             20000 /* timer cadence: deadlines, keepalive, safety wake */
#define FRAMES_PER_WRITABLE 16    /* fairness: acks are never starved by sending */
#define CLOSE_BOUND_NS      1000000000ll
#define PAUSE_BOUND_NS      2000000000ll /* qsf_pause waits this long at most */
#define WATERMARK_EVERY_NS  1000000ll    /* .ack-watermark writes: at most this often */
#define MS                  1000000ll

enum io_state { S_WAIT, S_CONNECTING, S_OPEN, S_CLOSING, S_PAUSED, S_TERMINAL, S_IDLE };

/* Why an open connection is being closed by us. */
enum close_why { WHY_NONE, WHY_RETRIABLE, WHY_OTHER, WHY_TERMINAL, WHY_PAUSE, WHY_STOP };

typedef struct send_frame {
    uint8_t *buf; /* LWS_PRE headroom + payload */
    size_t len;
} send_frame;

struct qsf_io {
    qsf_io_opts o;
    qsf_io_addr *addrs;
    char *strs; /* copies of every string of o */
    qsf_ring *ring;
    qsf_inbox *inbox;
    qsf_latch *latch; /* the sender's terminal latch (latch.h) */
    qsf_ws *ws;
    pthread_t thr;
    bool thr_started;
    bool subscribed; /* on_latched is registered with the latch */

    /* cross-thread */
    atomic_bool wake_pending;
    atomic_int stop_req, pause_req;
    _Atomic int64_t highest_ok, max_batch;
    atomic_int connected, paused, ever_connected, durable_on;
    _Atomic uint64_t frames_sent, frames_replayed, acks, durable_acks, durable_trims, server_errors,
        reconnect_attempts, reconnects_ok;
    atomic_int waiters;
    pthread_mutex_t mu; /* init outcome, status block, progress cond */
    pthread_cond_t cv;
    atomic_int last_error_code; /* QSF_E_* of the last error record queued */
    int init_state;             /* 0 pending, 1 connected, -1 failed */
    qsf_errinfo init_err;
    char cur_host[262];
    char last_error[256];
    int64_t down_since_us;
    uint64_t attempts_since_down;
    bool pause_applied; /* the I/O thread reached PAUSED */

    /* I/O thread only */
    enum io_state st;
    enum close_why why;
    int64_t next_attempt_ns, deadline_ns, init_deadline_ns;
    int host, prev_host;
    bool attempt_timed_out;
    qsf_hosts hosts;
    qsf_poison poison;
    qsf_recycle_pacer pacer;
    uint64_t rng;
    int64_t retry_delay_ms; /* decided when closing because of a rejection */
    int durable_gaps;       /* hosts of this round that did not grant durable ack */
    /* drainer escalation (qsf_io_opts.drainer) */
    int gap_streak, cap_gap_streak;
    int64_t gap_since_ns, cap_gap_since_ns;
    int64_t last_warn_ns;        /* reconnect warning throttle */
    int64_t wm_write_ns;         /* when ackedFsn was last written to .ack-watermark */
    const qsf_fsn_span *retired; /* flushes recovery gave up (the ring's), sorted */
    uint32_t n_retired, next_retired;
    bool wm_pending; /* an advance not written yet: the next tick writes it */
    /* per connection */
    qsf_wiremap map;
    qsf_durable *dur;
    bool durable, sent_data, cursor_ok;
    int64_t err_wire;      /* wireSeq of the first error on this connection, -1 */
    int64_t replay_target; /* published FSN when the connection opened */
    int64_t last_sent_fsn;
    int64_t last_send_ns;
    uint32_t dict_known; /* ids the server knows on this connection */
    qsf_ring_cursor cur;
    send_frame *catchup;
    size_t n_catchup, next_catchup, cap_catchup;
    uint8_t *sbuf;
    size_t scap;
    qsf_qwp_encoder *enc;
};

static int64_t now_ns(void) {
    return QSF_OS->mono_ns();
}

/* Copies src into dst[cap], truncating, always NUL-terminated. */
static void copy_str(char *dst, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

static void bump(_Atomic uint64_t *c) {
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

static const char *host_name(const qsf_io *io, int i, char *buf, size_t cap) {
    if (i < 0 || i >= io->o.n_addrs)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "%s:%d", io->addrs[i].host, io->addrs[i].port);
    return buf;
}

/* Wakes qsf_io_wait callers; takes the lock only when someone waits. */
static void signal_progress(qsf_io *io) {
    if (atomic_load(&io->waiters) == 0)
        return;
    pthread_mutex_lock(&io->mu);
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

/* ------------------------------------------------------------------------- */
/* Error records, terminal latch, status                                     */
/* ------------------------------------------------------------------------- */

static void record_init(qsf_io *io, qsf_error_record *r, int cat, int status, int64_t wire,
                        int64_t from, int64_t to) {
    memset(r, 0, sizeof *r);
    r->category = cat;
    r->policy = qsf_category_policy(cat);
    r->status = status;
    r->wire_seq = wire;
    r->from_fsn = from;
    r->to_fsn = to;
    r->timestamp_us = QSF_OS->wall_us();
    host_name(io, io->host, r->endpoint, sizeof r->endpoint);
}

/* QSF_E_* an error record stands for (qsf_stats.last_error_code). */
static int record_code(const qsf_error_record *r) {
    switch (r->category) {
    case QSF_CAT_SECURITY_ERROR:
        return r->status < 0 ? QSF_E_AUTH : QSF_E_SERVER;
    case QSF_CAT_PROTOCOL_VIOLATION:
        return QSF_E_PROTOCOL;
    case QSF_CAT_DATA_LOSS:
        return QSF_E_DATA_LOSS;
    default:
        return QSF_E_SERVER;
    }
}

/* Queues a record for the application and remembers its code. */
static void report(qsf_io *io, const qsf_error_record *r, int code) {
    atomic_store(&io->last_error_code, code ? code : record_code(r));
    qsf_inbox_push(io->inbox, r);
}

static void unacked_span(qsf_io *io, int64_t *from, int64_t *to) {
    *from = qsf_ring_acked_fsn(io->ring) + 1;
    *to = qsf_ring_published_fsn(io->ring);
}

static void set_last_error(qsf_io *io, const char *msg) {
    pthread_mutex_lock(&io->mu);
    copy_str(io->last_error, sizeof io->last_error, msg);
    pthread_mutex_unlock(&io->mu);
}

static void close_conn(qsf_io *io, enum close_why why, bool abort);

/* The sender's latch is set (by this thread or another): close the connection
 * and make no further attempts. I/O thread. */
static void enter_terminal(qsf_io *io) {
    if (io->st == S_TERMINAL || (io->st == S_CLOSING && io->why == WHY_TERMINAL))
        return;
    if (io->st == S_CLOSING)
        io->why = WHY_TERMINAL;
    else if (qsf_ws_active(io->ws))
        close_conn(io, WHY_TERMINAL, io->st != S_OPEN);
    else
        io->st = S_TERMINAL;
}

/* Latches a TERMINAL error in the sender's latch: producers blocked in append
 * return it at once, the connection closes and no further attempts are made.
 * The record is queued before anyone can see the latch. */
static void latch_terminal(qsf_io *io, int code, const qsf_error_record *rec) {
    if (!qsf_latch_code(io->latch))
        report(io, rec, code);
    qsf_latch_set(io->latch, code, "%s", rec->message);
    enter_terminal(io);
}

/* Latch subscriber (any thread): a creation waiting for the first connection
 * fails with the latched error, qsf_io_wait callers wake, and the I/O thread
 * is woken to close its connection. */
static void on_latched(void *user, int code) {
    qsf_io *io = user;
    (void) code;
    pthread_mutex_lock(&io->mu);
    if (io->init_state == 0) {
        io->init_state = -1;
        qsf_latch_get(io->latch, &io->init_err);
    }
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
    if (io->ws)
        qsf_ws_cancel(io->ws);
}

static void latch_violation(qsf_io *io, int code, const char *msg) {
    qsf_error_record r;
    int64_t from, to;
    unacked_span(io, &from, &to);
    record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, from, to);
    snprintf(r.message, sizeof r.message, "%s", msg);
    latch_terminal(io, code, &r);
}

/* Initial connect (modes off/on) finished one way or the other. */
static void init_outcome(qsf_io *io, int state, int code, const char *msg) {
    pthread_mutex_lock(&io->mu);
    if (io->init_state == 0) {
        io->init_state = state;
        if (state < 0)
            qsf_err_set(&io->init_err, code, 0, 0, "%s", msg);
        pthread_cond_broadcast(&io->cv);
    }
    pthread_mutex_unlock(&io->mu);
}

void qsf_io_status(void *arg, char *buf, size_t cap) {
    qsf_io *io = arg;
    if (atomic_load(&io->paused)) {
        snprintf(buf, cap, "wire paused");
        return;
    }
    pthread_mutex_lock(&io->mu);
    if (atomic_load(&io->connected)) {
        snprintf(buf, cap,
                 "connected to %s, acknowledgements not keeping up (server slow, or "
                 "sf_max_total_bytes too small); acked FSN %" PRId64 " of published %" PRId64,
                 io->cur_host, qsf_ring_acked_fsn(io->ring), qsf_ring_published_fsn(io->ring));
    } else {
        time_t t = (time_t) (io->down_since_us / 1000000);
        struct tm tm;
        char when[32] = "?";
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(buf, cap,
                 "not connected, %" PRIu64 " reconnect attempts since %s (last error: %s)",
                 io->attempts_since_down, when, io->last_error[0] ? io->last_error : "none");
    }
    pthread_mutex_unlock(&io->mu);
}

static void mark_down(qsf_io *io) {
    atomic_store(&io->connected, 0);
    pthread_mutex_lock(&io->mu);
    io->down_since_us = QSF_OS->wall_us();
    io->attempts_since_down = 0;
    io->cur_host[0] = 0;
    pthread_mutex_unlock(&io->mu);
}

/* ------------------------------------------------------------------------- */
/* Acknowledgements                                                          */
/* ------------------------------------------------------------------------- */

static void acked_advanced(qsf_io *io);

/* Retires the flushes recovery gave up (qsf_ring_retired): their frames are
 * never sent; once everything before one is acknowledged it is acknowledged
 * locally, so trim and the watermark move past it. Per sender, not per
 * connection. */
static void retire_given_up(qsf_io *io) {
    while (io->next_retired < io->n_retired) {
        const qsf_fsn_span *sp = &io->retired[io->next_retired];
        if (qsf_ring_acked_fsn(io->ring) < sp->from - 1)
            return;
        io->next_retired++;
        QSF_LOGI("frames %" PRId64 "..%" PRId64 " (a flush recovery gave up) retired unsent",
                 sp->from, sp->to);
        /* done, as far as anyone waiting is concerned, at either level */
        if (atomic_load(&io->highest_ok) < sp->to)
            atomic_store(&io->highest_ok, sp->to);
        if (qsf_ring_acknowledge(io->ring, sp->to))
            acked_advanced(io);
        else
            signal_progress(io);
    }
}

/* Whether fsn belongs to a flush recovery gave up (the spans are sorted). */
static bool given_up(const qsf_io *io, int64_t fsn) {
    for (uint32_t i = io->next_retired; i < io->n_retired; i++) {
        if (fsn < io->retired[i].from)
            return false;
        if (fsn <= io->retired[i].to)
            return true;
    }
    return false;
}

/* ackedFsn advanced: .ack-watermark follows within WATERMARK_EVERY_NS (plus a
 * tick), so a process killed now replays little (docs/DURABILITY.md). A record
 * write, never a sync: nothing the producer waits for. */
static void persist_acked(qsf_io *io) {
    qsf_errinfo e;
    if (qsf_ring_persist_acked(io->ring, &e) != QSF_OK)
        QSF_LOGD("watermark write deferred: %s", e.msg);
    io->wm_write_ns = now_ns();
    io->wm_pending = false;
}

static void acked_advanced(qsf_io *io) {
    signal_progress(io);
    if (now_ns() - io->wm_write_ns >= WATERMARK_EVERY_NS) {
        persist_acked(io);
    } else if (!io->wm_pending) {
        io->wm_pending = true;
        qsf_ws_tick_in(io->ws, WATERMARK_EVERY_NS / 1000);
    }
}

static void advance_ack(qsf_io *io, int64_t fsn) {
    if (qsf_ring_acknowledge(io->ring, fsn))
        acked_advanced(io);
    retire_given_up(io);
}

static void handle_ok(qsf_io *io, const qsf_response *r) {
    bump(&io->acks);
    if (io->map.next_wire == 0)
        return; /* nothing sent yet on this connection: ignore */
    int64_t seq = r->sequence;
    if (seq > io->map.next_wire - 1)
        seq = io->map.next_wire - 1;
    if (io->err_wire >= 0 && seq >= io->err_wire)
        seq = io->err_wire - 1; /* never past a rejected frame (OK leapfrog) */
    if (seq < 0)
        return;
    int64_t fsn = qsf_wiremap_ack(&io->map, seq);
    if (fsn < 0)
        return;
    if (fsn > atomic_load(&io->highest_ok))
        atomic_store(&io->highest_ok, fsn);
    qsf_poison_ok(&io->poison, fsn);
    if (!io->durable) {
        advance_ack(io, fsn);
    } else if (qsf_durable_push_ok(io->dur, fsn, r) < 0) {
        latch_violation(io, QSF_E_NOMEM, "out of memory queueing an OK for durable matching");
        return;
    }
    signal_progress(io);
}

static void handle_durable(qsf_io *io, const qsf_response *r) {
    if (!io->durable) {
        QSF_LOGW("durable ack received but not negotiated on %s: ignored", io->cur_host);
        return;
    }
    bump(&io->durable_acks);
    int64_t fsn = qsf_durable_apply(io->dur, r);
    if (fsn == -2) {
        latch_violation(io, QSF_E_NOMEM, "out of memory merging a durable ack");
        return;
    }
    if (fsn >= 0 && qsf_ring_acknowledge(io->ring, fsn)) {
        bump(&io->durable_trims);
        acked_advanced(io);
        retire_given_up(io);
    }
}

/* Table name of a frame holding exactly one table (for error records). */
static void frame_table(const uint8_t *p, uint32_t len, char *out, size_t cap) {
    out[0] = 0;
    if (len < QSF_QWP_HEADER_LEN || qsf_get_u16(p + 6) != 1)
        return;
    const uint8_t *q = p + QSF_QWP_HEADER_LEN, *end = p + len;
    uint64_t v, n = 0;
    size_t k;
    if (p[5] & QSF_QWP_FLAG_DELTA_SYMBOL_DICT) {
        if (!(k = qsf_get_varint(q, end, &v)) || !(k += qsf_get_varint(q + k, end, &n)))
            return;
        q += k;
        for (uint64_t i = 0; i < n; i++) {
            if (!(k = qsf_get_varint(q, end, &v)) || v > (uint64_t) (end - q - (ptrdiff_t) k))
                return;
            q += k + v;
        }
    }
    if (!(k = qsf_get_varint(q, end, &v)) || v >= cap || v > (uint64_t) (end - q - (ptrdiff_t) k))
        return;
    memcpy(out, q + k, v);
    out[v] = 0;
}

static void fill_table_of(qsf_io *io, int64_t fsn, qsf_error_record *rec) {
    qsf_ring_cursor c;
    memset(&c, 0, sizeof c);
    const uint8_t *p;
    uint32_t len;
    int64_t f;
    if (qsf_ring_cursor_seek(io->ring, &c, fsn) == 0 &&
        qsf_ring_cursor_next(io->ring, &c, &p, &len, &f))
        frame_table(p, len, rec->table, sizeof rec->table);
    qsf_ring_cursor_release(io->ring, &c);
}

/* A strike against `fsn`; latches the poison verdict when it escalates. */
static bool strike(qsf_io *io, int64_t fsn) {
    if (!qsf_poison_strike(&io->poison, fsn))
        return false;
    char msg[256];
    snprintf(msg, sizeof msg,
             "frame at fsn=%" PRId64 " rejected %d consecutive times with no acceptance at or "
             "beyond it -- poisoned frame",
             fsn, io->poison.strikes);
    qsf_error_record r;
    record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, fsn, fsn);
    snprintf(r.message, sizeof r.message, "%s", msg);
    latch_terminal(io, QSF_E_PROTOCOL, &r);
    return true;
}

static void handle_error(qsf_io *io, const qsf_response *r) {
    bump(&io->server_errors);
    if (io->err_wire >= 0)
        return; /* the pipeline is already broken: one error per connection */
    io->err_wire = r->sequence;
    int64_t fsn = qsf_wiremap_lookup(&io->map, r->sequence);
    int cat = qsf_status_category(r->status);
    qsf_error_record rec;
    record_init(io, &rec, cat, r->status, r->sequence, fsn >= 0 ? fsn : -1, fsn >= 0 ? fsn : -1);
    snprintf(rec.message, sizeof rec.message, "%s (status 0x%02X, fsn %" PRId64 "): %.*s",
             qsf_category_name(cat), r->status, fsn, (int) r->msg_len, r->msg);
    if (fsn >= 0)
        fill_table_of(io, fsn, &rec);
    set_last_error(io, rec.message);
    if (rec.policy == QSF_POLICY_TERMINAL) {
        latch_terminal(io, QSF_E_SERVER, &rec);
        return;
    }
    report(io, &rec, 0);
    if (rec.policy == QSF_POLICY_RETRIABLE_OTHER) {
        qsf_hosts_demote(&io->hosts, io->host);
        int64_t progress = qsf_ring_acked_fsn(io->ring);
        io->retry_delay_ms = qsf_recycle_delay_ms(&io->pacer, progress, io->o.backoff_initial_ms,
                                                  io->o.backoff_max_ms, &io->rng);
        close_conn(io, WHY_OTHER, false);
        return;
    }
    /* RETRIABLE: a strike unless the rejected frame was a catch-up frame */
    if (fsn >= 0 && strike(io, fsn))
        return;
    io->retry_delay_ms = fsn >= 0 ? qsf_pacing_ms(io->poison.strikes, io->o.backoff_initial_ms,
                                                  io->o.backoff_max_ms, &io->rng)
                                  : 0;
    close_conn(io, WHY_RETRIABLE, false);
}

/* ------------------------------------------------------------------------- */
/* WebSocket hooks                                                           */
/* ------------------------------------------------------------------------- */

static void hook_message(void *u, const uint8_t *p, size_t n) {
    qsf_io *io = u;
    if (io->st != S_OPEN && io->st != S_CLOSING)
        return;
    qsf_response r;
    char why[160];
    if (qsf_response_parse(p, n, &r, why, sizeof why) < 0) {
        char msg[320];
        snprintf(msg, sizeof msg, "malformed server response from %.100s: %.140s", io->cur_host,
                 why);
        latch_violation(io, QSF_E_PROTOCOL, msg);
        return;
    }
    switch (r.kind) {
    case QSF_RESP_OK:
        handle_ok(io, &r);
        break;
    case QSF_RESP_DURABLE:
        handle_durable(io, &r);
        break;
    case QSF_RESP_ERROR:
        handle_error(io, &r);
        break;
    default:
        QSF_LOGW("ignored server response with status 0x%02X from %s", r.status, io->cur_host);
    }
}

static void hook_violation(void *u, const char *why) {
    qsf_io *io = u;
    char msg[320];
    snprintf(msg, sizeof msg, "protocol violation by %.100s: %.140s", io->cur_host, why);
    latch_violation(io, QSF_E_PROTOCOL, msg);
}

static void free_catchup(qsf_io *io) {
    for (size_t i = 0; i < io->n_catchup; i++)
        free(io->catchup[i].buf);
    io->n_catchup = io->next_catchup = 0;
}

static int keep_catchup(void *u, const uint8_t *frame, size_t len, bool is_last, qsf_errinfo *err) {
    qsf_io *io = u;
    (void) is_last;
    if (io->n_catchup == io->cap_catchup) {
        size_t cap = io->cap_catchup ? io->cap_catchup * 2 : 4;
        send_frame *nf = realloc(io->catchup, cap * sizeof *nf);
        if (!nf)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory building catch-up frames");
        io->catchup = nf;
        io->cap_catchup = cap;
    }
    uint8_t *b = malloc(qsf_ws_pre() + len);
    if (!b)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory building catch-up frames");
    memcpy(b + qsf_ws_pre(), frame, len);
    io->catchup[io->n_catchup++] = (send_frame){b, len};
    return QSF_OK;
}

static int ring_entry(void *u, uint32_t id, const char **s, size_t *len) {
    uint32_t l = 0;
    *s = qsf_ring_symdict_entry(u, id, &l);
    *len = l;
    return *s ? 0 : QSF_E_INTERNAL;
}

/* Catch-up frames registering ids [0, D) (§5.3). */
static int build_catchup(qsf_io *io, qsf_errinfo *err) {
    free_catchup(io);
    io->dict_known = 0;
    if (io->o.self_sufficient)
        return QSF_OK;
    uint32_t d = qsf_ring_symdict_size(io->ring);
    int64_t mb = atomic_load(&io->max_batch);
    int rc = qsf_qwp_catchup(io->enc, d, ring_entry, io->ring, mb > 0 ? (size_t) mb : 0,
                             keep_catchup, io, NULL, err);
    if (rc == QSF_OK)
        io->dict_known = d;
    return rc;
}

/* Per-connection state, reset on every new connection (lessons.md §1.1). */
static void reset_connection(qsf_io *io) {
    qsf_wiremap_reset(&io->map);
    qsf_durable_reset(io->dur);
    io->err_wire = -1;
    io->sent_data = false;
    io->why = WHY_NONE;
    io->retry_delay_ms = 0;
    free_catchup(io);
    qsf_ring_cursor_release(io->ring, &io->cur);
    io->cursor_ok = false;
}

static bool validate_handshake(qsf_io *io, const qsf_ws_hs *hs, char *why, size_t cap) {
    if (hs->version != 1) {
        snprintf(why, cap, "version mismatch: server answered X-QWP-Version %d", hs->version);
        return false;
    }
    if (io->o.request_durable_ack && !hs->durable_granted) {
        snprintf(why, cap, "durable ack requested but not granted (no X-QWP-Durable-Ack: enabled)");
        return false;
    }
    return true;
}

static void attempt_failed(qsf_io *io, int outcome, const char *why, int code);

static void note_connected(qsf_io *io) {
    char hn[262];
    host_name(io, io->host, hn, sizeof hn);
    bool again = atomic_exchange(&io->ever_connected, 1);
    if (again)
        bump(&io->reconnects_ok);
    QSF_LOGI("%s %s",
             !again                      ? "connected to"
             : io->host == io->prev_host ? "reconnected to"
                                         : "failed over to",
             hn);
    io->prev_host = io->host;
    pthread_mutex_lock(&io->mu);
    snprintf(io->cur_host, sizeof io->cur_host, "%s", hn);
    pthread_mutex_unlock(&io->mu);
    atomic_store(&io->connected, 1);
}

/* A host that does not grant the requested durable ack (§7.4): reported and
 * retried once the sender has connected; before that, a round in which no host
 * grants it is terminal (round_exhausted). */
static void note_durable_gap(qsf_io *io, const char *why) {
    io->durable_gaps++;
    if (!atomic_load(&io->ever_connected))
        return;
    qsf_error_record r;
    int64_t from, to;
    unacked_span(io, &from, &to);
    record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, from, to);
    r.policy = QSF_POLICY_RETRIABLE;
    snprintf(r.message, sizeof r.message, "%s", why);
    report(io, &r, 0);
}

#define DRAINER_STREAK 16

/* A drainer's escalation budget: adds `n` to the streak (starting its clock at
 * the first) and says whether it is spent: DRAINER_STREAK reached and, with
 * `both`, at least window_ms since the first; without `both`, either. */
static bool drainer_budget_spent(int *streak, int64_t *since_ns, int n, int64_t window_ms,
                                 bool both) {
    int64_t now = now_ns();
    if (*streak == 0)
        *since_ns = now;
    *streak += n;
    bool count = *streak >= DRAINER_STREAK, time = now - *since_ns >= window_ms * MS;
    return both ? count && time : count || time;
}

/* Catch-up frames could not be built (an entry larger than the frame cap, or no
 * memory): report it and keep retrying, rotating endpoints (§5.3 cap gap). A
 * drainer gives up when its budget is spent (qsf_io_opts.drainer). */
static void catchup_failed(qsf_io *io, const qsf_errinfo *e) {
    qsf_error_record r;
    int64_t from, to;
    unacked_span(io, &from, &to);
    record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, from, to);
    if (io->o.drainer && drainer_budget_spent(&io->cap_gap_streak, &io->cap_gap_since_ns, 1,
                                              io->o.cap_gap_window_ms, true)) {
        snprintf(r.message, sizeof r.message, "%.700s (gave up after %d attempts)", e->msg,
                 io->cap_gap_streak);
        latch_terminal(io, QSF_E_PROTOCOL, &r); /* closes the connection */
        return;
    }
    r.policy = QSF_POLICY_RETRIABLE;
    snprintf(r.message, sizeof r.message, "%s", e->msg);
    report(io, &r, 0);
    qsf_hosts_demote(&io->hosts, io->host);
    io->retry_delay_ms = io->o.backoff_max_ms;
    close_conn(io, WHY_OTHER, false);
}

static void hook_open(void *u, const qsf_ws_hs *hs) {
    qsf_io *io = u;
    char why[200];
    if (!validate_handshake(io, hs, why, sizeof why)) {
        if (hs->version == 1)
            note_durable_gap(io, why);
        attempt_failed(io, QSF_ATTEMPT_TRANSPORT, why, QSF_E_CONNECT);
        if (io->st == S_TERMINAL)
            return;
        /* drop it; the close callback moves on to the next host of the round */
        io->st = S_CLOSING;
        io->why = WHY_OTHER;
        io->retry_delay_ms = 0;
        io->deadline_ns = now_ns() + CLOSE_BOUND_NS;
        qsf_ws_close(io->ws, 1000, true);
        return;
    }
    qsf_hosts_report(&io->hosts, io->host, QSF_ATTEMPT_OK);
    io->durable_gaps = 0;
    io->gap_streak = 0;
    io->last_warn_ns = 0;
    atomic_store(&io->max_batch, hs->max_batch);
    io->durable = hs->durable_granted;
    atomic_store(&io->durable_on, io->durable);
    reset_connection(io);
    retire_given_up(io);
    int64_t start = qsf_ring_acked_fsn(io->ring) + 1;
    io->replay_target = atomic_load(&io->ever_connected) ? qsf_ring_published_fsn(io->ring)
                                                         : io->o.recovered_published_fsn;
    io->last_sent_fsn = start - 1;
    qsf_errinfo e;
    if (build_catchup(io, &e) != QSF_OK) {
        catchup_failed(io, &e);
        return;
    }
    io->cap_gap_streak = 0;
    io->cursor_ok = qsf_ring_cursor_seek(io->ring, &io->cur, start) == 0;
    io->st = S_OPEN;
    io->last_send_ns = now_ns();
    note_connected(io);
    init_outcome(io, 1, 0, NULL);
    qsf_ws_want_writable(io->ws);
}

/* ------------------------------------------------------------------------- */
/* Sending                                                                   */
/* ------------------------------------------------------------------------- */

static int send_copy(qsf_io *io, const uint8_t *p, size_t len) {
    size_t need = qsf_ws_pre() + len;
    if (need > io->scap) {
        uint8_t *nb = realloc(io->sbuf, need);
        if (!nb)
            return -1;
        io->sbuf = nb;
        io->scap = need;
    }
    /* never write into the segment: the 8 bytes before a payload are its envelope
     * (and masking in place would change the stored frame) */
    return qsf_ws_send_binary_from(io->ws, io->sbuf, p, len);
}

/* Pre-send guard (§5.3): a frame must not need ids the server was never given. */
static bool dictionary_ok(qsf_io *io, const uint8_t *p, uint32_t len, int64_t fsn) {
    if (len < QSF_QWP_HEADER_LEN || !(p[5] & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        return true;
    uint64_t start = 0, count = 0;
    const uint8_t *q = p + QSF_QWP_HEADER_LEN, *end = p + len;
    size_t k = qsf_get_varint(q, end, &start);
    if (k)
        k = qsf_get_varint(q + k, end, &count);
    if (k && start <= io->dict_known) {
        if (start + count > io->dict_known)
            io->dict_known = (uint32_t) (start + count);
        return true;
    }
    char msg[300];
    snprintf(msg, sizeof msg,
             "recovered store-and-forward symbol dictionary is incomplete (likely a host crash): "
             "frame at fsn=%" PRId64 " needs ids from %" PRIu64 ", the client has %u -- resend "
             "required",
             fsn, start, io->dict_known);
    latch_violation(io, QSF_E_RESEND_REQUIRED, msg);
    return false;
}

/* Sends the next catch-up or ring frame; false when there is nothing to send. */
static bool send_next(qsf_io *io) {
    if (io->next_catchup < io->n_catchup) {
        send_frame *f = &io->catchup[io->next_catchup++];
        if (qsf_ws_send_binary(io->ws, f->buf, f->len) < 0 || qsf_wiremap_push(&io->map, -1) < 0) {
            io->retry_delay_ms = 0;
            close_conn(io, WHY_RETRIABLE, true);
            return false;
        }
        io->last_send_ns = now_ns();
        return true;
    }
    const uint8_t *p;
    uint32_t len;
    int64_t fsn;
    do {
        if (!io->cursor_ok || !qsf_ring_cursor_next(io->ring, &io->cur, &p, &len, &fsn))
            return false;
    } while (given_up(io, fsn)); /* never sent */
    if (!dictionary_ok(io, p, len, fsn))
        return false;
    if (send_copy(io, p, len) < 0 || qsf_wiremap_push(&io->map, fsn) < 0) {
        /* the frame left the cursor but not the wire: drop the connection so
         * the next one replays from ackedFsn + 1 (never a gap) */
        io->retry_delay_ms = 0;
        close_conn(io, WHY_RETRIABLE, true);
        return false;
    }
    io->sent_data = true;
    io->last_sent_fsn = fsn;
    io->last_send_ns = now_ns();
    bump(&io->frames_sent);
    if (fsn <= io->replay_target)
        bump(&io->frames_replayed);
    return true;
}

static void hook_writable(void *u) {
    qsf_io *io = u;
    if (io->st != S_OPEN || io->err_wire >= 0)
        return;
    for (int i = 0; i < FRAMES_PER_WRITABLE; i++) {
        if (qsf_ws_choked(io->ws)) {
            qsf_ws_want_writable(io->ws);
            return;
        }
        if (!send_next(io))
            return;
        if (io->st != S_OPEN)
            return;
    }
    qsf_ws_want_writable(io->ws); /* more may be waiting: come back after reading */
}

/* Durable keepalive (§5.8): PING while confirmations are pending and idle. */
static void keepalive(qsf_io *io, int64_t now) {
    if (!io->durable || io->o.keepalive_ms <= 0 || !qsf_durable_pending(io->dur))
        return;
    if (now - io->last_send_ns < io->o.keepalive_ms * MS || qsf_ws_choked(io->ws))
        return;
    if (qsf_ws_send_ping(io->ws) == 0)
        io->last_send_ns = now;
}

/* ------------------------------------------------------------------------- */
/* Attempts, closes, reconnects                                              */
/* ------------------------------------------------------------------------- */

static void schedule_attempt(qsf_io *io, int64_t delay_ms) {
    io->st = S_WAIT;
    io->next_attempt_ns = now_ns() + delay_ms * MS;
}

static void close_conn(qsf_io *io, enum close_why why, bool abort) {
    io->why = why;
    io->st = S_CLOSING;
    io->deadline_ns = now_ns() + CLOSE_BOUND_NS;
    qsf_ws_close(io->ws, 1000, abort);
}

static void start_attempt(qsf_io *io);

/* After a failed attempt: next host at once, or the round's backoff sleep. */
static void attempt_failed(qsf_io *io, int outcome, const char *why, int code) {
    char hn[262], msg[400];
    snprintf(msg, sizeof msg, "%s: %s", host_name(io, io->host, hn, sizeof hn), why);
    set_last_error(io, msg);
    QSF_LOGD("connection attempt failed: %s", msg);
    qsf_hosts_report(&io->hosts, io->host, outcome);
    bool first = !atomic_load(&io->ever_connected);
    if (outcome == QSF_ATTEMPT_AUTH) {
        qsf_error_record r;
        int64_t from, to;
        unacked_span(io, &from, &to);
        record_init(io, &r, QSF_CAT_SECURITY_ERROR, -1, -1, from, to);
        snprintf(r.message, sizeof r.message, "authentication rejected: %s", msg);
        if (first) {
            latch_terminal(io, QSF_E_AUTH, &r);
            return;
        }
        r.policy = QSF_POLICY_RETRIABLE; /* after the first success: report, retry */
        report(io, &r, 0);
    }
    pthread_mutex_lock(&io->mu);
    if (io->init_state == 0)
        qsf_err_set(&io->init_err, code, QSF_ERRF_RETRIABLE, 0, "%s", msg);
    pthread_mutex_unlock(&io->mu);
    schedule_attempt(io, 0);
}

/* The wire is idle on purpose; qsf_io_pause callers wait for this. */
static void enter_paused(qsf_io *io) {
    io->st = S_PAUSED;
    pthread_mutex_lock(&io->mu);
    io->pause_applied = true;
    pthread_cond_broadcast(&io->cv);
    pthread_mutex_unlock(&io->mu);
}

/* A round is exhausted: give up (initial modes), or sleep and start a new one. */
/* At most every 5 s while no endpoint can be reached (§7.2). */
static void warn_unreachable(qsf_io *io, int64_t sleep_ms) {
    int64_t now = now_ns();
    if (io->last_warn_ns && now - io->last_warn_ns < 5000 * MS)
        return;
    io->last_warn_ns = now;
    char last[256];
    pthread_mutex_lock(&io->mu);
    copy_str(last, sizeof last, io->last_error);
    pthread_mutex_unlock(&io->mu);
    QSF_LOGW("not connected: every endpoint failed (last error: %s); next round in %" PRId64
             " ms; publishing continues into the ring",
             last, sleep_ms);
}

/* Whether a round in which `gaps` of the attempts met an endpoint without
 * durable acks ends the connection for good: a sender's first round of only
 * such endpoints; a drainer's budget (qsf_io_opts.drainer), which a round
 * with any other outcome restarts. */
static bool durable_gap_terminal(qsf_io *io, int gaps) {
    bool all = gaps > 0 && gaps == io->hosts.attempts;
    if (!io->o.drainer)
        return all && !atomic_load(&io->ever_connected);
    if (!all) {
        io->gap_streak = 0;
        return false;
    }
    return drainer_budget_spent(&io->gap_streak, &io->gap_since_ns, gaps,
                                io->o.reconnect_max_duration_ms, false);
}

static void round_exhausted(qsf_io *io) {
    bool first = !atomic_load(&io->ever_connected);
    int gaps = io->durable_gaps;
    io->durable_gaps = 0;
    if (durable_gap_terminal(io, gaps)) {
        qsf_error_record r;
        int64_t from, to;
        unacked_span(io, &from, &to);
        record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, from, to);
        snprintf(r.message, sizeof r.message,
                 "request_durable_ack=on but no endpoint grants durable acks "
                 "(no X-QWP-Durable-Ack: enabled in the upgrade response)");
        latch_terminal(io, QSF_E_PROTOCOL, &r);
        return;
    }
    if (first && io->o.initial_mode != QSF_IO_INIT_ASYNC) {
        bool give_up = io->o.initial_mode == QSF_IO_INIT_OFF || now_ns() >= io->init_deadline_ns;
        if (give_up) {
            pthread_mutex_lock(&io->mu);
            if (io->init_state == 0) {
                io->init_state = -1;
                pthread_cond_broadcast(&io->cv);
            }
            pthread_mutex_unlock(&io->mu);
            io->st = S_IDLE;
            return;
        }
    }
    int64_t sleep_ms = qsf_hosts_round_sleep_ms(&io->hosts);
    QSF_LOGD("all endpoints unreachable; next round in %" PRId64 " ms", sleep_ms);
    warn_unreachable(io, sleep_ms);
    qsf_hosts_new_round(&io->hosts);
    schedule_attempt(io, sleep_ms);
}

static void start_attempt(qsf_io *io) {
    int h = qsf_hosts_next(&io->hosts);
    if (h < 0) {
        round_exhausted(io);
        return;
    }
    io->host = h;
    io->attempt_timed_out = false;
    if (atomic_load(&io->ever_connected))
        bump(&io->reconnect_attempts);
    pthread_mutex_lock(&io->mu);
    io->attempts_since_down++;
    pthread_mutex_unlock(&io->mu);
    int64_t to = io->o.auth_timeout_ms +
                 (io->o.connect_timeout_ms > 0 ? io->o.connect_timeout_ms : io->o.auth_timeout_ms);
    io->deadline_ns = now_ns() + to * MS;
    io->st = S_CONNECTING;
    qsf_errinfo e;
    qsf_ws_connect(io->ws, io->addrs[h].host, io->addrs[h].port, &e);
}

static void hook_connect_fail(void *u, const qsf_ws_fail *f) {
    qsf_io *io = u;
    if (io->st == S_CLOSING && io->why != WHY_NONE) {
        /* an attempt aborted because we are stopping/pausing/terminal */
        io->st = io->why == WHY_TERMINAL ? S_TERMINAL : io->why == WHY_PAUSE ? S_PAUSED : S_IDLE;
        return;
    }
    if (io->st == S_CLOSING) { /* invalid 101, already counted */
        schedule_attempt(io, 0);
        return;
    }
    if (io->st != S_CONNECTING)
        return;
    char why[400];
    int outcome = QSF_ATTEMPT_TRANSPORT, code = f->tls ? QSF_E_TLS : QSF_E_CONNECT;
    if (f->http_status == 401 || f->http_status == 403) {
        outcome = QSF_ATTEMPT_AUTH;
        code = QSF_E_AUTH;
    } else if (f->http_status == 421 && f->role[0]) {
        outcome = strcmp(f->role, "PRIMARY_CATCHUP") == 0 ? QSF_ATTEMPT_ROLE_CATCHUP
                                                          : QSF_ATTEMPT_ROLE_OTHER;
    }
    if (io->attempt_timed_out)
        snprintf(why, sizeof why, "connect/upgrade timed out");
    else if (f->http_status)
        snprintf(why, sizeof why, "upgrade rejected with HTTP %d%s%s", f->http_status,
                 f->role[0] ? ", role " : "", f->role);
    else
        snprintf(why, sizeof why, "%s%s", f->tls ? "TLS failure: " : "", f->reason);
    attempt_failed(io, outcome, why, code);
}

/* The connection ended: decide the next step (§7.2, §8.3). */
static void hook_closed(void *u, int code, const char *reason) {
    qsf_io *io = u;
    bool had_data = io->sent_data;
    int64_t suspect = qsf_ring_acked_fsn(io->ring);
    if (atomic_load(&io->highest_ok) > suspect)
        suspect = atomic_load(&io->highest_ok);
    suspect++;
    enum close_why why = io->why;
    if (why == WHY_NONE)
        QSF_LOGI("connection to %s closed (code %d%s%s)", io->cur_host, code,
                 reason && *reason ? ": " : "", reason ? reason : "");
    reset_connection(io);
    mark_down(io);
    set_last_error(io, reason && *reason ? reason : code == 1006 ? "connection lost" : "closed");
    switch (why) {
    case WHY_TERMINAL:
        io->st = S_TERMINAL;
        return;
    case WHY_PAUSE:
        enter_paused(io);
        return;
    case WHY_STOP:
        io->st = S_IDLE;
        return;
    case WHY_RETRIABLE:
    case WHY_OTHER:
        schedule_attempt(io, io->retry_delay_ms);
        return;
    default:
        break;
    }
    qsf_hosts_demote(&io->hosts, io->host);
    if (code == 1000 || code == 1001) { /* orderly: no strike, zero-progress pacing */
        int64_t progress = qsf_ring_acked_fsn(io->ring);
        schedule_attempt(io, qsf_recycle_delay_ms(&io->pacer, progress, io->o.backoff_initial_ms,
                                                  io->o.backoff_max_ms, &io->rng));
        return;
    }
    if (had_data && suspect <= qsf_ring_published_fsn(io->ring) && strike(io, suspect))
        return;
    schedule_attempt(io, 0); /* the first attempt after a loss is immediate */
}

/* ------------------------------------------------------------------------- */
/* Commands, tick, thread                                                    */
/* ------------------------------------------------------------------------- */

static void apply_commands(qsf_io *io) {
    if (qsf_latch_code(io->latch) && io->st != S_IDLE)
        enter_terminal(io);
    if (atomic_load(&io->stop_req)) {
        if (io->st == S_OPEN || io->st == S_CONNECTING)
            close_conn(io, WHY_STOP, io->st == S_CONNECTING);
        else if (io->st != S_CLOSING)
            io->st = S_IDLE;
        else
            io->why = WHY_STOP;
        return;
    }
    bool want_pause = atomic_load(&io->pause_req);
    if (want_pause && io->st != S_PAUSED && io->st != S_TERMINAL && io->st != S_IDLE) {
        QSF_LOGD("pausing the wire (state %d)", io->st);
        atomic_store(&io->paused, 1);
        if (io->st == S_OPEN || io->st == S_CONNECTING)
            close_conn(io, WHY_PAUSE, io->st == S_CONNECTING);
        else if (io->st == S_CLOSING)
            io->why = WHY_PAUSE;
        else
            enter_paused(io);
    } else if (!want_pause && io->st == S_PAUSED) {
        QSF_LOGD("resuming the wire");
        atomic_store(&io->paused, 0);
        pthread_mutex_lock(&io->mu);
        io->pause_applied = false;
        pthread_mutex_unlock(&io->mu);
        qsf_hosts_new_round(&io->hosts);
        schedule_attempt(io, 0);
    }
}

static void hook_wake(void *u) {
    qsf_io *io = u;
    atomic_store(&io->wake_pending, false);
    apply_commands(io);
    if (io->st == S_WAIT && now_ns() >= io->next_attempt_ns)
        start_attempt(io);
    if (io->st == S_OPEN)
        qsf_ws_want_writable(io->ws);
}

static void hook_tick(void *u) {
    qsf_io *io = u;
    int64_t now = now_ns();
    if (io->wm_pending)
        persist_acked(io);
    apply_commands(io);
    switch (io->st) {
    case S_WAIT:
        if (now >= io->next_attempt_ns)
            start_attempt(io);
        break;
    case S_CONNECTING:
        if (now >= io->deadline_ns) {
            io->attempt_timed_out = true;
            qsf_ws_close(io->ws, 1000, true);
        }
        break;
    case S_CLOSING:
        if (now >= io->deadline_ns)
            qsf_ws_close(io->ws, 1000, true);
        break;
    case S_OPEN:
        keepalive(io, now);
        retire_given_up(io);
        if (qsf_ring_published_fsn(io->ring) > io->last_sent_fsn ||
            io->next_catchup < io->n_catchup)
            qsf_ws_want_writable(io->ws); /* safety net; wakes are coalesced */
        break;
    default:
        break;
    }
    qsf_ws_tick_in(io->ws, TICK_US);
}

static bool finished(qsf_io *io) {
    return atomic_load(&io->stop_req) && !qsf_ws_active(io->ws) &&
           (io->st == S_IDLE || io->st == S_TERMINAL || io->st == S_PAUSED || io->st == S_WAIT);
}

static void *io_main(void *arg) {
    qsf_io *io = arg;
    qsf_ws_tick_in(io->ws, 0);
    while (!finished(io))
        qsf_ws_service(io->ws);
    qsf_ring_cursor_release(io->ring, &io->cur);
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* Public (internal) API                                                     */
/* ------------------------------------------------------------------------- */

static char *dup_into(char **cur, const char *s) {
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    memcpy(*cur, s, n);
    char *r = *cur;
    *cur += n;
    return r;
}

static int copy_opts(qsf_io *io, const qsf_io_opts *o) {
    size_t need = 0;
    const char *ss[] = {o->tls_roots, o->authorization, o->client_id};
    for (int i = 0; i < 3; i++)
        need += ss[i] ? strlen(ss[i]) + 1 : 0;
    for (int i = 0; i < o->n_addrs; i++)
        need += strlen(o->addrs[i].host) + 1;
    io->strs = malloc(need + 1);
    io->addrs = calloc((size_t) o->n_addrs, sizeof *io->addrs);
    if (!io->strs || !io->addrs)
        return -1;
    char *cur = io->strs;
    io->o = *o;
    io->o.tls_roots = dup_into(&cur, o->tls_roots);
    io->o.authorization = dup_into(&cur, o->authorization);
    io->o.client_id = dup_into(&cur, o->client_id);
    for (int i = 0; i < o->n_addrs; i++)
        io->addrs[i] = (qsf_io_addr){dup_into(&cur, o->addrs[i].host), o->addrs[i].port};
    io->o.addrs = io->addrs;
    return 0;
}

static const qsf_ws_hooks io_hooks = {
    hook_open,     hook_connect_fail, hook_message, hook_violation,
    hook_writable, hook_closed,       hook_wake,    hook_tick,
};

static int io_alloc(const qsf_io_opts *o, qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch,
                    qsf_io **out, qsf_errinfo *err) {
    qsf_io *io = calloc(1, sizeof *io);
    if (!io || copy_opts(io, o) < 0 || !(io->dur = qsf_durable_new()) ||
        qsf_qwp_encoder_new(&io->enc, err) != QSF_OK) {
        qsf_io_free(io);
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory creating the I/O thread");
    }
    io->ring = ring;
    io->inbox = inbox;
    io->latch = latch;
    io->retired = qsf_ring_retired(ring, &io->n_retired);
    pthread_mutex_init(&io->mu, NULL);
    pthread_cond_init(&io->cv, NULL);
    atomic_store(&io->highest_ok, qsf_ring_acked_fsn(ring));
    io->host = io->prev_host = -1;
    io->rng = (uint64_t) now_ns() ^ (uint64_t) (uintptr_t) io;
    qsf_hosts_init(&io->hosts, o->n_addrs, o->backoff_initial_ms, o->backoff_max_ms, io->rng);
    qsf_poison_init(&io->poison, o->max_frame_rejections, o->poison_window_ms);
    io->pacer.last_progress = -2;
    qsf_wiremap_init(&io->map);
    io->err_wire = -1;
    io->down_since_us = QSF_OS->wall_us();
    io->init_deadline_ns = now_ns() + o->reconnect_max_duration_ms * MS;
    *out = io;
    return QSF_OK;
}

static int wait_initial(qsf_io *io, qsf_errinfo *err) {
    pthread_mutex_lock(&io->mu);
    while (io->init_state == 0)
        pthread_cond_wait(&io->cv, &io->mu);
    int st = io->init_state;
    qsf_errinfo e = io->init_err;
    pthread_mutex_unlock(&io->mu);
    if (st > 0)
        return QSF_OK;
    int code = e.code ? e.code : QSF_E_CONNECT;
    qsf_err_set(err, code, e.flags & ~QSF_ERRF_FATAL, e.sys_errno, "initial connect failed: %s",
                e.msg[0] ? e.msg : "no endpoint could be reached");
    return code;
}

int qsf_io_start(const qsf_io_opts *o, qsf_ring *ring, qsf_inbox *inbox, qsf_latch *latch,
                 qsf_io **out, qsf_errinfo *err) {
    if (o->n_addrs < 1)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "no address to connect to");
    qsf_io *io = NULL;
    int rc = io_alloc(o, ring, inbox, latch, &io, err);
    if (rc)
        return rc;
    qsf_ws_conf wc = {o->tls,          o->tls_verify,         io->o.tls_roots, io->o.authorization,
                      io->o.client_id, o->request_durable_ack};
    if ((rc = qsf_ws_new(&wc, &io_hooks, io, &io->ws, err)) != QSF_OK) {
        qsf_io_free(io);
        return rc;
    }
    if (qsf_latch_subscribe(latch, on_latched, io) != QSF_OK) {
        qsf_io_free(io);
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "too many subscribers of one latch");
    }
    io->subscribed = true;
    if (o->initial_mode == QSF_IO_INIT_ASYNC)
        io->init_state = 1;
    schedule_attempt(io, 0);
    if (pthread_create(&io->thr, NULL, io_main, io) != 0) {
        qsf_io_free(io);
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "cannot start the I/O thread");
    }
    io->thr_started = true;
    pthread_setname_np(io->thr, "qsf-io");
    if ((rc = wait_initial(io, err)) != QSF_OK) {
        qsf_io_stop(io);
        qsf_io_free(io);
        return rc;
    }
    *out = io;
    return QSF_OK;
}

void qsf_io_wake(qsf_io *io) {
    if (!atomic_exchange(&io->wake_pending, true))
        qsf_ws_cancel(io->ws);
}

void qsf_io_stop(qsf_io *io) {
    if (!io || !io->thr_started)
        return;
    atomic_store(&io->stop_req, 1);
    qsf_ws_cancel(io->ws);
    pthread_join(io->thr, NULL);
    io->thr_started = false;
    atomic_store(&io->connected, 0);
}

void qsf_io_free(qsf_io *io) {
    if (!io)
        return;
    qsf_io_stop(io);
    if (io->subscribed)
        qsf_latch_unsubscribe(io->latch, on_latched, io);
    if (io->ws) {
        free_catchup(io);
        qsf_ws_free(io->ws);
    }
    free(io->catchup);
    free(io->sbuf);
    qsf_wiremap_free(&io->map);
    qsf_durable_free(io->dur);
    qsf_qwp_encoder_free(io->enc);
    pthread_mutex_destroy(&io->mu);
    pthread_cond_destroy(&io->cv);
    free(io->addrs);
    free(io->strs);
    free(io);
}

int64_t qsf_io_highest_ok(const qsf_io *io) {
    return atomic_load(&((qsf_io *) io)->highest_ok);
}

int64_t qsf_io_max_batch(const qsf_io *io) {
    return atomic_load(&((qsf_io *) io)->max_batch);
}

bool qsf_io_durable(const qsf_io *io) {
    return io->o.request_durable_ack;
}

static int64_t watermark(qsf_io *io, int level) {
    return level == QSF_WAIT_DURABLE ? qsf_ring_acked_fsn(io->ring) : qsf_io_highest_ok(io);
}

int qsf_io_wait(qsf_io *io, int64_t fsn, int level, int64_t timeout_ms, bool absolute,
                qsf_errinfo *err) {
    int64_t mark = watermark(io, level), since = now_ns();
    atomic_fetch_add(&io->waiters, 1);
    pthread_mutex_lock(&io->mu);
    int rc = QSF_OK;
    for (;;) {
        int64_t m = watermark(io, level), now = now_ns();
        if (m >= fsn)
            break;
        if ((rc = qsf_latch_get(io->latch, err)) != 0)
            break;
        if (m != mark && !absolute) {
            mark = m; /* progress restarts the no-progress clock */
            since = now;
        }
        if (now - since >= timeout_ms * MS) {
            rc = qsf_err_set(err, QSF_E_TIMEOUT, QSF_ERRF_RETRIABLE, 0,
                             "%s for %" PRId64 " ms waiting for fsn %" PRId64 " (watermark %" PRId64
                             ")",
                             absolute ? "timed out" : "no progress", timeout_ms, fsn, m);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10000000; /* re-check at least every 10 ms (fake clocks) */
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&io->cv, &io->mu, &ts);
    }
    pthread_mutex_unlock(&io->mu);
    atomic_fetch_sub(&io->waiters, 1);
    return rc;
}

void qsf_io_pause(qsf_io *io, bool pause) {
    atomic_store(&io->pause_req, pause);
    if (pause)
        atomic_store(&io->paused, 1);
    qsf_ws_cancel(io->ws);
    if (!pause)
        return;
    /* wait (bounded) until the wire is idle, so nothing published after the
     * call goes out before qsf_resume */
    int64_t deadline = now_ns() + PAUSE_BOUND_NS;
    pthread_mutex_lock(&io->mu);
    while (!io->pause_applied && !qsf_latch_code(io->latch) && io->init_state >= 0 &&
           now_ns() < deadline) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&io->cv, &io->mu, &ts);
    }
    pthread_mutex_unlock(&io->mu);
}

void qsf_io_stats(const qsf_io *cio, qsf_stats *out) {
    qsf_io *io = (qsf_io *) cio;
    out->frames_sent = atomic_load(&io->frames_sent);
    out->frames_replayed = atomic_load(&io->frames_replayed);
    out->acks = atomic_load(&io->acks);
    out->durable_acks = atomic_load(&io->durable_acks);
    out->durable_trim_advances = atomic_load(&io->durable_trims);
    out->server_errors = atomic_load(&io->server_errors);
    out->reconnect_attempts = atomic_load(&io->reconnect_attempts);
    out->reconnects_succeeded = atomic_load(&io->reconnects_ok);
    out->highest_ok_fsn = atomic_load(&io->highest_ok);
    out->connected = atomic_load(&io->connected);
    out->paused = atomic_load(&io->paused);
    out->ever_connected = atomic_load(&io->ever_connected);
    out->last_error_code = atomic_load(&io->last_error_code);
    pthread_mutex_lock(&io->mu);
    snprintf(out->current_host, sizeof out->current_host, "%s", out->connected ? io->cur_host : "");
    pthread_mutex_unlock(&io->mu);
}
