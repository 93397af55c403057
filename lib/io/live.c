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
 * A frozen server is not a dead one: when nothing arrived for
 * liveness_timeout_millis, the kernel is asked about the peer (tcppeer.h).
 * While the peer's TCP stack still acknowledges what qsf sends, the server
 * process is there but not running (paused, frozen, stopped): replacing the
 * connection would replay what it may already have committed, so qsf waits,
 * with a WARN, up to frozen_server_timeout_millis in all. Once the peer's
 * kernel stops acknowledging (something waits for an ACK and none came for
 * liveness_timeout_millis, for longer than two round trips and at least
 * 200 ms, so a probe in flight is not mistaken for silence) the host is gone
 * and the connection dead. The ack deadline does not run while waiting for a
 * frozen server, and starts again when it answers.
 *
 * A dead connection is dropped at once (no CLOSE handshake with a peer that
 * does not answer), reported, counted, and replaced; what it had in flight is
 * replayed on the next one. Times are QSF_OS->mono_ns. */
#include "io/io_int.h"

#include "io/tcppeer.h"
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
    c->frozen_since_ns = c->gone_since_ns = 0;
    c->ping_due = false;
}

void qsf_live_thaw(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    if (!c->frozen_since_ns)
        return;
    QSF_LOGI("connection to %s answers again after %" PRId64 " ms without a word; no frame "
             "was replayed",
             io->x.cur_host, (int64_t) ((now - c->last_rx_ns) / QSF_IO_MS));
    c->frozen_since_ns = c->gone_since_ns = 0;
    if (c->ack_since_ns)
        c->ack_since_ns = now;
}

void qsf_live_received(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    qsf_live_thaw(io, now);
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

/* The connection is dead: reported, counted, and dropped; a strike only as
 * for any lost connection (qsf_ack_loss). */
static qsf_verdict dead(qsf_io *io, const char *msg) {
    qsf_io_bump(&io->x.liveness_timeouts);
    qsf_io_bump(&io->x.connections_lost);
    char full[700];
    int n = snprintf(full, sizeof full, "%s", msg);
    qsf_io_inflight_note(io, full + n, sizeof full - (size_t) n);
    qsf_io_report_outage(io, full);
    if (qsf_ack_loss(io))
        return qsf_v_terminal();
    return (qsf_verdict){QSF_V_RETRY, QSF_PACE_LOSS, true};
}

/* "connection to H is dead: <what> for N ms<tail>" */
static qsf_verdict dead_after(qsf_io *io, const char *what, int64_t for_ns, const char *tail) {
    char msg[400];
    snprintf(msg, sizeof msg, "connection to %.100s is dead: %s for %" PRId64 " ms%s",
             io->x.cur_host, what, (int64_t) (for_ns / QSF_IO_MS), tail);
    return dead(io, msg);
}

/* The server process is silent but its host acknowledges (`acks`; else
 * nothing of ours waits for an ACK yet): waited for, up to
 * frozen_server_timeout_millis since the answer was first owed. The WARN
 * comes once the host was seen acknowledging. */
static qsf_verdict frozen(qsf_io *io, int64_t now, const qsf_tcp_peer *p, bool acks) {
    qsf_conn *c = &io->c;
    const qsf_io_opts *o = &io->o;
    if (!c->frozen_since_ns && acks) {
        c->frozen_since_ns = now;
        QSF_LOGW("connection to %s: nothing received for %" PRId64 " ms, but the server's host "
                 "still acknowledges what qsf sends (last TCP ACK %" PRId64 " ms ago): the "
                 "server process is paused or frozen, not gone; waiting up to %" PRId64
                 " ms in all (frozen_server_timeout_millis) rather than replay what it may "
                 "have committed",
                 io->x.cur_host, (int64_t) ((now - c->last_rx_ns) / QSF_IO_MS), p->last_ack_ms,
                 o->frozen_timeout_ms);
    }
    if (now - c->await_since_ns < o->frozen_timeout_ms * QSF_IO_MS)
        return qsf_v_continue();
    return dead_after(io, "nothing received", now - c->last_rx_ns,
                      " (frozen_server_timeout_millis), though its host still acknowledged");
}

/* Nothing arrived for liveness_timeout_millis: dead, unless the peer's
 * kernel still acknowledges (then a frozen server, waited for). */
static qsf_verdict silent(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    const qsf_io_opts *o = &io->o;
    char msg[400];
    int n = snprintf(msg, sizeof msg,
                     "connection to %.100s is dead: nothing received for %" PRId64
                     " ms while waiting for %s (liveness_timeout_millis)",
                     io->x.cur_host, (int64_t) ((now - c->last_rx_ns) / QSF_IO_MS),
                     frames_in_flight(c) ? "acknowledgements" : "a PONG");
    qsf_tcp_peer p;
    if (o->frozen_timeout_ms <= 0 || !io->ws_ops->tcp_peer || io->ws_ops->tcp_peer(io->ws, &p) != 0)
        return dead(io, msg);
    enum qsf_peer_kernel k = qsf_tcp_peer_judge(&p, o->liveness_timeout_ms);
    if (k == QSF_PEER_GONE) {
        int64_t confirm =
            2 * p.rtt_us * 1000 > 200 * QSF_IO_MS ? 2 * p.rtt_us * 1000 : 200 * QSF_IO_MS;
        if (!c->gone_since_ns)
            c->gone_since_ns = now;
        if (now - c->gone_since_ns >= confirm) {
            snprintf(msg + n, sizeof msg - (size_t) n,
                     ", and its host stopped acknowledging (no TCP ACK for %" PRId64
                     " ms, %u retransmissions, %u unanswered window probes)",
                     p.last_ack_ms, p.retransmits, p.probes);
            return dead(io, msg);
        }
        return qsf_v_continue(); /* not yet two round trips of silence */
    }
    c->gone_since_ns = 0;
    if (k == QSF_PEER_IDLE)
        qsf_live_request_ping(io); /* something for the peer's kernel to acknowledge */
    return frozen(io, now, &p, k == QSF_PEER_ACKS);
}

qsf_verdict qsf_live_tick(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    const qsf_io_opts *o = &io->o;
    int64_t ping = o->ping_interval_ms * QSF_IO_MS;
    if (ping > 0 && now - c->last_rx_ns >= ping && now - c->last_ping_ns >= ping)
        qsf_live_request_ping(io);
    if (o->liveness_timeout_ms > 0 && c->await_since_ns &&
        now - c->await_since_ns >= o->liveness_timeout_ms * QSF_IO_MS)
        return silent(io, now);
    if (o->ack_timeout_ms > 0 && c->ack_since_ns &&
        now - c->ack_since_ns >= o->ack_timeout_ms * QSF_IO_MS)
        return dead_after(io, "frames unacknowledged", now - c->ack_since_ns,
                          " (ack_timeout_millis)");
    return qsf_v_continue();
}
