/* Liveness of an open connection: a connection is alive while the server
 * answers. Load balancers and NAT drop idle flows without a word, and a
 * server can stop answering with the socket still open, so qsf does not wait
 * for TCP to notice:
 *
 *   - a PING goes out when nothing arrived for ping_interval_millis (the
 *     server answers a PING with its pending OKs and a PONG, or is busy
 *     sending us something else);
 *   - an answer is owed while frames are unacknowledged or a PING is
 *     unanswered; nothing at all arriving for liveness_timeout_millis from the
 *     moment one is owed makes the connection dead;
 *   - frames unacknowledged for ack_timeout_millis with no OK in between make
 *     it dead too, even if PONGs still come back.
 *
 * A dead connection is dropped at once (no CLOSE handshake with a peer that
 * does not answer), reported, counted, and replaced; what it had in flight is
 * replayed on the next one. Times are QSF_OS->mono_ns. */
#include "io/io_int.h"

#include "log.h"

#include <inttypes.h>
#include <stdio.h>

static bool frames_in_flight(const qsf_conn *c) {
    return c->map.count > 0;
}

static bool answer_owed(const qsf_conn *c) {
    return frames_in_flight(c) || c->last_ping_ns > c->last_rx_ns;
}

void qsf_live_opened(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    c->last_rx_ns = c->last_ping_ns = now;
    c->await_since_ns = c->ack_since_ns = 0;
    c->ping_due = false;
}

void qsf_live_received(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    c->last_rx_ns = now;
    c->await_since_ns = answer_owed(c) ? now : 0;
}

void qsf_live_sent(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    if (!c->await_since_ns)
        c->await_since_ns = now;
    if (!c->ack_since_ns)
        c->ack_since_ns = now;
}

void qsf_live_acked(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    c->ack_since_ns = frames_in_flight(c) ? now : 0;
}

/* Pings go out from the writable callback (send.c), like every other write:
 * this only asks for one. */
void qsf_live_request_ping(qsf_io *io) {
    qsf_conn *c = &io->c;
    if (c->ping_due)
        return;
    c->ping_due = true;
    io->ws_ops->want_writable(io->ws);
}

void qsf_live_pinged(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    c->ping_due = false;
    c->last_ping_ns = c->last_send_ns = now;
    if (!c->await_since_ns)
        c->await_since_ns = now;
}

/* The connection is dead: reported, counted, and dropped; a strike against
 * the first unconfirmed frame when data went out on it (as for a lost
 * connection). */
static qsf_verdict dead(qsf_io *io, const char *msg) {
    qsf_io_bump(&io->x.liveness_timeouts);
    qsf_io_bump(&io->x.connections_lost);
    qsf_io_report_connection(io, msg);
    if (io->c.sent_data && qsf_ack_strike(io, qsf_ack_head_of_line(io)))
        return qsf_v_terminal();
    return (qsf_verdict){QSF_V_RETRY, QSF_PACE_LOSS, true};
}

qsf_verdict qsf_live_tick(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    const qsf_io_opts *o = &io->o;
    int64_t ping = o->ping_interval_ms * QSF_IO_MS;
    if (ping > 0 && now - c->last_rx_ns >= ping && now - c->last_ping_ns >= ping)
        qsf_live_request_ping(io);
    char msg[300];
    if (o->liveness_timeout_ms > 0 && c->await_since_ns &&
        now - c->await_since_ns >= o->liveness_timeout_ms * QSF_IO_MS) {
        snprintf(msg, sizeof msg,
                 "connection to %.100s is dead: nothing received for %" PRId64
                 " ms while waiting for %s (liveness_timeout_millis)",
                 io->x.cur_host, (int64_t) ((now - c->last_rx_ns) / QSF_IO_MS),
                 frames_in_flight(c) ? "acknowledgements" : "a PONG");
        return dead(io, msg);
    }
    if (o->ack_timeout_ms > 0 && c->ack_since_ns &&
        now - c->ack_since_ns >= o->ack_timeout_ms * QSF_IO_MS) {
        snprintf(msg, sizeof msg,
                 "connection to %.100s is dead: frames unacknowledged for %" PRId64
                 " ms (ack_timeout_millis)",
                 io->x.cur_host, (int64_t) ((now - c->ack_since_ns) / QSF_IO_MS));
        return dead(io, msg);
    }
    return qsf_v_continue();
}
