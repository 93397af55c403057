/* What the application hears of the I/O thread's state changes: one log line
 * and one connection event (include/qsf.h, qsf_event) per change, with what
 * the transition carries. qsf_io_set_state calls qsf_io_notify after every
 * change, so a connection's life has one place to come from:
 *
 *   WAIT -> CONNECTING        "connecting to H (attempt n)": INFO for attempts
 *                             1, 2, 4, 8, ... of an outage, DEBUG for the others
 *   CONNECTING -> OPEN        CONNECTED / RECONNECTED / FAILED_OVER, with the
 *                             version, batch cap and durable ack negotiated, the
 *                             attempts it took and how long no connection was
 *                             open; INFO, or the level of the outage's loudest line
 *   an open connection ends   DISCONNECTED with its cause (below)
 *   -> PAUSED, PAUSED -> WAIT PAUSED, RESUMED: INFO
 *
 * and, from send.c, REPLAY_DONE once a new connection has sent every
 * frame that was unacknowledged when it opened (INFO).
 *
 * A disconnection and its error record: a connection that ends because of a
 * failure (lost, found dead, a frame rejected, the latch) ends with an error
 * record, and the record's line (inbox.c, WARN or ERROR) is the line of the
 * disconnection: DISCONNECTED carries the record's message as its cause and
 * no second line is written. A connection that ends in order (the server
 * closed it with 1000/1001, qsf_pause, qsf_close) has no record: the line
 * "disconnected from H: cause" is written here, at INFO. Either way the
 * reconnect is logged at the level the outage reached. */
#include "io/io_int.h"

#include "err.h"
#include "events.h"
#include "log.h"
#include "os/os.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Lines of a drainer's connection say so: its endpoint is the owner's. */
static const char *who(const qsf_io *io) {
    return io->o.drainer ? "drain_orphans: " : "";
}

static qsf_event event(qsf_io *io, int kind) {
    qsf_event ev;
    qsf_event_init(&ev, kind);
    ev.acked_fsn = qsf_ring_acked_fsn(io->ring);
    ev.published_fsn = qsf_ring_published_fsn(io->ring);
    return ev;
}

static int64_t ms_since(int64_t ns) {
    return (qsf_io_now_ns() - ns) / QSF_IO_MS;
}

/* ---- a connection opened ---- */

static uint64_t attempts_so_far(qsf_io *io) {
    pthread_mutex_lock(&io->x.mu);
    uint64_t n = io->x.attempts_since_down;
    pthread_mutex_unlock(&io->x.mu);
    return n;
}

/* "QWP version 1, max batch 2097138 bytes, durable acks off" */
static void negotiated(const qsf_ws_hs *hs, char *buf, size_t cap) {
    char batch[48] = "no max batch advertised";
    if (hs->max_batch > 0)
        snprintf(batch, sizeof batch, "max batch %" PRId64 " bytes", hs->max_batch);
    snprintf(buf, cap, "QWP version %d, %s, durable acks %s", hs->version, batch,
             hs->durable_granted ? "on" : "off");
}

static int opened_kind(qsf_io *io) {
    if (!atomic_exchange(&io->x.ever_connected, 1))
        return QSF_EVENT_CONNECTED;
    qsf_io_bump(&io->x.reconnects_ok);
    return io->c.host == io->l.prev_host ? QSF_EVENT_RECONNECTED : QSF_EVENT_FAILED_OVER;
}

static void log_opened(qsf_io *io, const qsf_event *ev) {
    char neg[128], replay[96] = "";
    negotiated(&io->c.hs, neg, sizeof neg);
    if (io->c.replaying)
        snprintf(replay, sizeof replay, "; replaying FSN %" PRId64 "..%" PRId64, io->c.replay_from,
                 io->c.replay_target);
    int level = io->l.outage_level; /* INFO, or louder (a smaller level) */
    if (ev->kind == QSF_EVENT_CONNECTED)
        qsf_log(level, "%sconnected to %s (%s; attempt %" PRIu64 ")%s", who(io), ev->endpoint, neg,
                ev->attempts, replay);
    else
        qsf_log(level,
                "%s%s %s%s%s after %" PRId64 " ms without a connection and %" PRIu64
                " attempt%s (%s)%s",
                who(io), ev->kind == QSF_EVENT_RECONNECTED ? "reconnected to" : "failed over to",
                ev->endpoint, ev->previous_endpoint[0] ? " from " : "", ev->previous_endpoint,
                ev->duration_ms, ev->attempts, ev->attempts == 1 ? "" : "s", neg, replay);
}

static void opened(qsf_io *io) {
    qsf_conn *c = &io->c;
    qsf_event ev = event(io, opened_kind(io));
    qsf_io_host_name(io, c->host, ev.endpoint, sizeof ev.endpoint);
    if (ev.kind == QSF_EVENT_FAILED_OVER)
        qsf_io_host_name(io, io->l.prev_host, ev.previous_endpoint, sizeof ev.previous_endpoint);
    ev.qwp_version = c->hs.version;
    ev.durable_ack = c->hs.durable_granted;
    ev.max_batch_bytes = c->hs.max_batch;
    ev.attempts = attempts_so_far(io);
    if (ev.kind != QSF_EVENT_CONNECTED)
        ev.duration_ms = ms_since(io->l.down_since_ns);
    log_opened(io, &ev);
    qsf_events_push(io->o.events, &ev);
    io->l.outage_level = QSF_LOG_INFO;
    io->l.prev_host = c->host;
    memset(&c->end, 0, sizeof c->end);
    pthread_mutex_lock(&io->x.mu);
    snprintf(io->x.cur_host, sizeof io->x.cur_host, "%s", ev.endpoint);
    pthread_mutex_unlock(&io->x.mu);
    atomic_store(&io->x.connected, 1);
}

/* ---- an attempt ---- */

static void attempting(qsf_io *io) {
    uint64_t n = attempts_so_far(io);
    char hn[262];
    qsf_io_host_name(io, io->c.host, hn, sizeof hn);
    /* attempts 1, 2, 4, 8, ...: a long outage does not flood the log */
    int level = (n & (n - 1)) == 0 ? QSF_LOG_INFO : QSF_LOG_DEBUG;
    if (!atomic_load(&io->x.ever_connected))
        qsf_log(level, "%sconnecting to %s (attempt %" PRIu64 ")", who(io), hn, n);
    else
        qsf_log(level,
                "%sreconnecting to %s (attempt %" PRIu64 ", %" PRId64 " ms without a connection)",
                who(io), hn, n, ms_since(io->l.down_since_ns));
}

/* ---- a connection ended ---- */

void qsf_io_end_cause(qsf_io *io, int code, bool logged, int level, const char *text) {
    qsf_conn_end *e = &io->c.end;
    if (e->set || !atomic_load(&io->x.connected))
        return;
    e->set = true;
    e->logged = logged;
    e->level = level;
    e->code = code;
    snprintf(e->text, sizeof e->text, "%.*s", (int) sizeof e->text - 1, text);
}

void qsf_io_noted_record(qsf_io *io, const qsf_error_record *r, int code) {
    bool loud = r->policy == QSF_POLICY_TERMINAL || r->policy == QSF_POLICY_ABANDONED;
    int level = loud ? QSF_LOG_ERROR : QSF_LOG_WARN;
    if (atomic_load(&io->x.connected))
        qsf_io_end_cause(io, code, true, level, r->message);
    else if (level < io->l.outage_level) /* louder */
        io->l.outage_level = level;
}

/* Nobody noted a reason: it ends because of where the state goes. */
static void end_by_state(qsf_io *io, enum qsf_io_state to) {
    qsf_conn_end *e = &io->c.end;
    e->set = true;
    e->level = QSF_LOG_INFO;
    if (to == QSF_IO_STOPPED) {
        snprintf(e->text, sizeof e->text, "the sender is closing");
    } else if (to == QSF_IO_PAUSED) {
        snprintf(e->text, sizeof e->text, "the wire was paused (qsf_pause)");
    } else if (to == QSF_IO_TERMINAL) {
        /* latched by another thread (the producer's ring): no line said it */
        qsf_errinfo le;
        e->code = qsf_latch_get(io->latch, &le);
        e->level = QSF_LOG_ERROR;
        snprintf(e->text, sizeof e->text, "the sender stopped on a fatal error: %s: %.300s",
                 qsf_err_name(e->code), le.msg);
    } else {
        snprintf(e->text, sizeof e->text, "closed by qsf");
    }
}

static void ended(qsf_io *io, enum qsf_io_state to) {
    qsf_conn_end *e = &io->c.end;
    if (!e->set)
        end_by_state(io, to);
    qsf_event ev = event(io, QSF_EVENT_DISCONNECTED);
    pthread_mutex_lock(&io->x.mu);
    snprintf(ev.endpoint, sizeof ev.endpoint, "%s", io->x.cur_host);
    io->x.cur_host[0] = 0;
    io->x.down_since_us = QSF_OS->wall_us();
    io->x.attempts_since_down = 0;
    pthread_mutex_unlock(&io->x.mu);
    atomic_store(&io->x.connected, 0);
    ev.code = e->code;
    snprintf(ev.cause, sizeof ev.cause, "%s", e->text);
    if (!e->logged)
        qsf_log(e->level, "%sdisconnected from %s: %s", who(io), ev.endpoint, e->text);
    qsf_events_push(io->o.events, &ev);
    io->l.outage_level = e->level;
    io->l.down_since_ns = qsf_io_now_ns();
    io->c.replaying = false;
}

/* ---- pause ---- */

static void paused(qsf_io *io) {
    qsf_event ev = event(io, QSF_EVENT_PAUSED);
    QSF_LOGI("%swire paused (qsf_pause): no connection and no attempts until qsf_resume; %" PRId64
             " frames unacknowledged stay in the ring",
             who(io), ev.published_fsn - ev.acked_fsn);
    qsf_events_push(io->o.events, &ev);
}

static void resumed(qsf_io *io) {
    qsf_event ev = event(io, QSF_EVENT_RESUMED);
    QSF_LOGI("%swire resumed (qsf_resume): connecting", who(io));
    qsf_events_push(io->o.events, &ev);
    io->l.outage_level = QSF_LOG_INFO;
}

void qsf_io_notify(qsf_io *io, enum qsf_io_state from, enum qsf_io_state to) {
    switch (to) {
    case QSF_IO_CONNECTING:
        attempting(io);
        return;
    case QSF_IO_OPEN:
        opened(io);
        return;
    case QSF_IO_CLOSING:
        return; /* still connected until the close is done */
    default:
        break;
    }
    if (atomic_load(&io->x.connected))
        ended(io, to);
    if (to == QSF_IO_PAUSED)
        paused(io);
    else if (from == QSF_IO_PAUSED)
        resumed(io);
}

/* ---- replay ---- */

void qsf_io_replay_progress(qsf_io *io) {
    qsf_conn *c = &io->c;
    if (!c->replaying || !c->cursor_ok || c->cur.next_fsn <= c->replay_target)
        return;
    c->replaying = false;
    qsf_event ev = event(io, QSF_EVENT_REPLAY_DONE);
    snprintf(ev.endpoint, sizeof ev.endpoint, "%s", io->x.cur_host);
    ev.frames = c->replayed;
    ev.from_fsn = c->replay_from;
    ev.to_fsn = c->replay_target;
    QSF_LOGI("%sreplay to %s done: %" PRIu64 " frame%s sent (FSN %" PRId64 "..%" PRId64 ")",
             who(io), ev.endpoint, ev.frames, ev.frames == 1 ? "" : "s", ev.from_fsn, ev.to_fsn);
    qsf_events_push(io->o.events, &ev);
}
