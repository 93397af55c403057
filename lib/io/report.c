/* What the I/O thread tells the application: error records for the inbox,
 * the terminal latch, the outcome of the initial connect, and the status line
 * a full ring quotes (docs/DURABILITY.md §3.3; docs/ERRORS.md §3, §5). */
#include "io/io_int.h"

#include "err.h"
#include "log.h"
#include "os/os.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void qsf_io_record_init(qsf_io *io, qsf_error_record *r, int cat, int status, int64_t wire,
                        int64_t from, int64_t to) {
    memset(r, 0, sizeof *r);
    r->category = cat;
    r->policy = qsf_category_policy(cat);
    r->status = status;
    r->wire_seq = wire;
    r->from_fsn = from;
    r->to_fsn = to;
    r->timestamp_us = QSF_OS->wall_us();
    qsf_io_host_name(io, io->c.host, r->endpoint, sizeof r->endpoint);
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
    case QSF_CAT_CONNECTION:
        return QSF_E_CONNECT;
    default:
        return QSF_E_SERVER;
    }
}

void qsf_io_report(qsf_io *io, const qsf_error_record *r, int code) {
    code = code ? code : record_code(r);
    atomic_store(&io->x.last_error_code, code);
    /* a drainer's records are about its own slot: its line says so */
    qsf_inbox_push_from(io->inbox, r, io->o.drainer ? "drain_orphans: " : "");
    qsf_io_noted_record(io, r, code);
}

void qsf_io_unacked_span(qsf_io *io, int64_t *from, int64_t *to) {
    *from = qsf_ring_acked_fsn(io->ring) + 1;
    *to = qsf_ring_published_fsn(io->ring);
}

void qsf_io_set_last_error(qsf_io *io, const char *msg) {
    pthread_mutex_lock(&io->x.mu);
    snprintf(io->x.last_error, sizeof io->x.last_error, "%s", msg);
    pthread_mutex_unlock(&io->x.mu);
}

void qsf_io_report_connection(qsf_io *io, const char *msg) {
    qsf_error_record r;
    int64_t from, to;
    qsf_io_unacked_span(io, &from, &to);
    qsf_io_record_init(io, &r, QSF_CAT_CONNECTION, -1, -1, from, to);
    snprintf(r.message, sizeof r.message, "%s", msg);
    qsf_io_report(io, &r, QSF_E_CONNECT);
    qsf_io_set_last_error(io, msg);
}

void qsf_io_report_outage(qsf_io *io, const char *msg) {
    if (!io->l.down_reported) {
        io->l.down_reported = true;
        qsf_io_report_connection(io, msg);
        return;
    }
    qsf_io_set_last_error(io, msg);
    qsf_io_end_cause(io, QSF_E_CONNECT, false, QSF_LOG_DEBUG, msg); /* notify.c logs it */
}

void qsf_io_outage_over(qsf_io *io) {
    io->l.down_reported = false;
    io->l.down_cause[0] = 0;
    io->l.quiet_closes = 0;
}

void qsf_io_inflight_note(qsf_io *io, char *buf, size_t cap) {
    const qsf_conn *c = &io->c;
    int64_t ok = atomic_load(&io->x.highest_ok), acked = qsf_ring_acked_fsn(io->ring);
    int64_t from = (ok > acked ? ok : acked) + 1;
    if (!c->sent_data || c->last_sent_fsn < from)
        return;
    snprintf(buf, cap,
             "; FSN %" PRId64 "..%" PRId64 " were sent and not confirmed: the server may have "
             "committed them, and they are sent again, so they may be committed twice unless "
             "the table has DEDUP",
             from, c->last_sent_fsn);
}

qsf_verdict qsf_io_latch(qsf_io *io, int code, const qsf_error_record *rec) {
    if (!qsf_latch_code(io->latch))
        qsf_io_report(io, rec, code);
    qsf_latch_set(io->latch, code, "%s", rec->message);
    return qsf_v_terminal();
}

qsf_verdict qsf_io_latch_violation(qsf_io *io, int code, const char *msg) {
    qsf_error_record r;
    int64_t from, to;
    qsf_io_unacked_span(io, &from, &to);
    qsf_io_record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, from, to);
    snprintf(r.message, sizeof r.message, "%s", msg);
    return qsf_io_latch(io, code, &r);
}

void qsf_io_init_outcome(qsf_io *io, int state, int code, const char *msg) {
    pthread_mutex_lock(&io->x.mu);
    if (io->x.init_state == 0) {
        io->x.init_state = state;
        if (state < 0)
            qsf_err_set(&io->x.init_err, code, 0, 0, "%s", msg);
        pthread_cond_broadcast(&io->x.cv);
    }
    pthread_mutex_unlock(&io->x.mu);
}

/* A creation waiting for the first connection fails with the latched error,
 * qsf_io_wait callers wake, and the I/O thread is woken to close its
 * connection (it may be another thread that latched). */
void qsf_io_on_latched(void *user, int code) {
    qsf_io *io = user;
    (void) code;
    pthread_mutex_lock(&io->x.mu);
    if (io->x.init_state == 0) {
        io->x.init_state = -1;
        qsf_latch_get(io->latch, &io->x.init_err);
    }
    pthread_cond_broadcast(&io->x.cv);
    pthread_mutex_unlock(&io->x.mu);
    if (io->ws)
        io->ws_ops->cancel(io->ws);
}

void qsf_io_status(void *arg, char *buf, size_t cap) {
    qsf_io *io = arg;
    if (atomic_load(&io->x.paused)) {
        snprintf(buf, cap, "wire paused");
        return;
    }
    pthread_mutex_lock(&io->x.mu);
    if (atomic_load(&io->x.connected)) {
        snprintf(buf, cap, "connected to %s", io->x.cur_host);
    } else {
        time_t t = (time_t) (io->x.down_since_us / 1000000);
        struct tm tm;
        char when[32] = "?";
        if (gmtime_r(&t, &tm))
            strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(buf, cap,
                 "not connected, %" PRIu64 " reconnect attempts since %s (last error: %s)",
                 io->x.attempts_since_down, when, io->x.last_error[0] ? io->x.last_error : "none");
    }
    pthread_mutex_unlock(&io->x.mu);
}
