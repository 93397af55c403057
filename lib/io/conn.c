/* A connection's life (docs/PROTOCOL.md §10): the attempt, the upgrade, the
 * verdicts of what happens on it, our closes and the peer's, and what comes
 * after each: the next host of the round, a backoff sleep, PAUSED, TERMINAL or
 * STOPPED. These are the only functions that close a connection; the state
 * changes only through qsf_io_set_state (state.c).
 *
 * A close we start records why (qsf_conn.why); when the WebSocket layer says
 * the connection or the attempt is gone, why alone decides the next state. A
 * later reason replaces an earlier one only when it ranks higher:
 * STOP > TERMINAL > PAUSE > a reconnect. */
#include "io/io_int.h"

#include "err.h"
#include "log.h"
#include "qsf_assert.h"
#include "os/os.h"
#include "text.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DRAINER_STREAK   16
#define ROLE_FAST_ROUNDS 3 /* rounds of role rejections at the fixed step, then backoff */

/* ---- per-connection state ---- */

void qsf_conn_init(qsf_conn *c) {
    memset(c, 0, sizeof *c);
    c->host = -1;
    c->err_wire = -1;
    qsf_wiremap_init(&c->map);
}

/* Forgets everything of the last connection (docs/PROTOCOL.md §8.1: wire sequences,
 * durable matching, the dictionary the server knew, the cursor). */
static void conn_reset(qsf_io *io) {
    qsf_conn *c = &io->c;
    qsf_wiremap_reset(&c->map);
    qsf_durack_reset(c->dur);
    c->err_wire = -1;
    c->sent_data = false;
    c->accepted = false;
    c->progressed = false;
    c->durable = false;
    c->dict_known = 0;
    qsf_send_free_catchup(c);
    qsf_ring_cursor_release(io->ring, &c->cur);
    c->cursor_ok = false;
}

void qsf_conn_free(qsf_io *io) {
    qsf_conn *c = &io->c;
    qsf_send_free_catchup(c);
    free(c->catchup);
    qsf_ring_cursor_release(io->ring, &c->cur);
    qsf_wiremap_free(&c->map);
    qsf_durack_free(c->dur);
}

/* ---- the next state ---- */

void qsf_conn_schedule(qsf_io *io, int64_t delay_ms) {
    qsf_io_set_state(io, QSF_IO_WAIT);
    io->l.next_attempt_ns = qsf_io_now_ns() + delay_ms * QSF_IO_MS;
}

/* The wire is idle on purpose; qsf_io_pause callers wait for this. */
static void enter_paused(qsf_io *io) {
    qsf_io_set_state(io, QSF_IO_PAUSED);
    pthread_mutex_lock(&io->x.mu);
    io->x.pause_applied = true;
    pthread_cond_broadcast(&io->x.cv);
    pthread_mutex_unlock(&io->x.mu);
}

/* Nothing is connected any more: where `why` leads. */
static void settle(qsf_io *io, enum qsf_close_why why, int64_t delay_ms) {
    switch (why) {
    case QSF_WHY_TERMINAL:
        qsf_io_set_state(io, QSF_IO_TERMINAL);
        break;
    case QSF_WHY_PAUSE:
        enter_paused(io);
        break;
    case QSF_WHY_STOP:
        qsf_io_set_state(io, QSF_IO_STOPPED);
        break;
    default:
        qsf_conn_schedule(io, delay_ms);
    }
}

static int why_rank(enum qsf_close_why w) {
    return w == QSF_WHY_STOP ? 3 : w == QSF_WHY_TERMINAL ? 2 : w == QSF_WHY_PAUSE ? 1 : 0;
}

void qsf_conn_close(qsf_io *io, enum qsf_close_why why, bool abort) {
    qsf_conn *c = &io->c;
    if (io->l.st == QSF_IO_CLOSING) {
        if (why_rank(why) > why_rank(c->why))
            c->why = why;
        return;
    }
    qsf_assert(io->l.st == QSF_IO_OPEN || io->l.st == QSF_IO_CONNECTING); /* something to close */
    c->why = why;
    qsf_io_set_state(io, QSF_IO_CLOSING);
    c->deadline_ns = qsf_io_now_ns() + QSF_IO_CLOSE_NS;
    io->ws_ops->close(io->ws, 1000, abort);
}

void qsf_conn_leave(qsf_io *io, enum qsf_close_why why) {
    switch (io->l.st) {
    case QSF_IO_OPEN:
    case QSF_IO_CONNECTING:
        /* a CLOSE that cannot even be written (the peer stopped reading) is
         * not waited for */
        qsf_conn_close(io, why, io->l.st == QSF_IO_CONNECTING || io->ws_ops->choked(io->ws));
        break;
    case QSF_IO_CLOSING:
        qsf_conn_close(io, why, false); /* only raises why */
        break;
    case QSF_IO_WAIT:
    case QSF_IO_PAUSED:
        settle(io, why, 0);
        break;
    case QSF_IO_TERMINAL:
        if (why == QSF_WHY_STOP)
            settle(io, why, 0);
        break;
    default:
        break;
    }
}

void qsf_conn_enter_terminal(qsf_io *io) {
    qsf_conn_leave(io, QSF_WHY_TERMINAL);
}

void qsf_conn_apply(qsf_io *io, qsf_verdict v) {
    qsf_conn *c = &io->c;
    switch (v.kind) {
    case QSF_V_CONTINUE:
        return;
    case QSF_V_TERMINAL:
        qsf_conn_enter_terminal(io);
        return;
    case QSF_V_OTHER:
        qsf_hosts_demote(&io->l.hosts, c->host);
        /* fall through */
    case QSF_V_RETRY:
        if (io->l.st == QSF_IO_CLOSING)
            return; /* already on its way out; its reason stands */
        c->pace = v.pace;
        qsf_conn_close(io, v.kind == QSF_V_OTHER ? QSF_WHY_OTHER : QSF_WHY_RETRY, v.abort);
        return;
    }
}

/* The delay before the next attempt after a failure paced `pace`. */
static int64_t reconnect_delay(qsf_io *io, qsf_pace pace) {
    switch (pace) {
    case QSF_PACE_NONE:
        return 0;
    case QSF_PACE_LOSS:
        return qsf_backoff_next(&io->l.backoff, true);
    case QSF_PACE_REFUSAL:
        return qsf_backoff_next(&io->l.backoff, false);
    default:
        qsf_backoff_next(&io->l.backoff, false);
        return io->o.backoff_max_ms;
    }
}

/* Our close (or abort) finished: nothing of the connection remains. */
static void closed_by_us(qsf_io *io) {
    enum qsf_close_why why = io->c.why;
    qsf_pace pace = io->c.pace;
    conn_reset(io);
    settle(io, why, why == QSF_WHY_RETRY || why == QSF_WHY_OTHER ? reconnect_delay(io, pace) : 0);
}

/* ---- attempts ---- */

/* A drainer's escalation budget: adds `n` to the streak (starting its clock at
 * the first) and says whether it is spent: DRAINER_STREAK reached and, with
 * `both`, at least window_ms since the first; without `both`, either. */
static bool drainer_budget_spent(int *streak, int64_t *since_ns, int n, int64_t window_ms,
                                 bool both) {
    int64_t now = qsf_io_now_ns();
    if (*streak == 0)
        *since_ns = now;
    *streak += n;
    bool count = *streak >= DRAINER_STREAK, time = now - *since_ns >= window_ms * QSF_IO_MS;
    return both ? count && time : count || time;
}

static qsf_error_record unacked_record(qsf_io *io, int cat, const char *msg) {
    qsf_error_record r;
    int64_t from, to;
    qsf_io_unacked_span(io, &from, &to);
    qsf_io_record_init(io, &r, cat, -1, -1, from, to);
    snprintf(r.message, sizeof r.message, "%s", msg);
    return r;
}

/* After a failed attempt: the terminal verdict when it ends the sender (an
 * authentication failure before the first connection), else the next host of
 * the round at once. */
static qsf_verdict attempt_failed(qsf_io *io, int outcome, const char *why, int code) {
    char hn[262], msg[400];
    snprintf(msg, sizeof msg, "%s: %s", qsf_io_host_name(io, io->c.host, hn, sizeof hn), why);
    qsf_io_set_last_error(io, msg);
    QSF_LOGD("connection attempt failed: %s", msg);
    qsf_hosts_report(&io->l.hosts, io->c.host, outcome);
    if (outcome == QSF_ATTEMPT_AUTH) {
        char m[450];
        snprintf(m, sizeof m, "authentication rejected: %s", msg);
        qsf_error_record r = unacked_record(io, QSF_CAT_SECURITY_ERROR, m);
        if (!atomic_load(&io->x.ever_connected))
            return qsf_io_latch(io, QSF_E_AUTH, &r);
        r.policy = QSF_POLICY_RETRIABLE; /* after the first success: report, retry */
        qsf_io_report(io, &r, 0);
    }
    pthread_mutex_lock(&io->x.mu);
    if (io->x.init_state == 0)
        qsf_err_set(&io->x.init_err, code, QSF_ERRF_RETRIABLE, 0, "%s", msg);
    pthread_mutex_unlock(&io->x.mu);
    return (qsf_verdict){QSF_V_RETRY, QSF_PACE_NONE, false};
}

/* No endpoint could be reached: reported once per outage, and again when the
 * cause changes (not once per attempt). */
static void report_unreachable(qsf_io *io, int64_t sleep_ms) {
    qsf_io_loop *l = &io->l;
    char last[256], msg[400];
    pthread_mutex_lock(&io->x.mu);
    snprintf(last, sizeof last, "%s", io->x.last_error);
    pthread_mutex_unlock(&io->x.mu);
    if (l->down_reported && strncmp(last, l->down_cause, sizeof l->down_cause - 1) == 0) {
        QSF_LOGD("every endpoint failed again (%s); next round in %" PRId64 " ms", last, sleep_ms);
        return;
    }
    l->down_reported = true;
    snprintf(l->down_cause, sizeof l->down_cause, "%.159s", last);
    snprintf(msg, sizeof msg,
             "not connected: every endpoint failed (last error: %.250s); retrying with backoff "
             "(next round in %" PRId64 " ms); publishing continues into the ring",
             last, sleep_ms);
    qsf_io_report_connection(io, msg);
}

/* Whether a round in which `gaps` of the attempts met an endpoint without
 * durable acks ends the sender: a sender's first round of only such
 * endpoints; a drainer's budget (qsf_io_opts.drainer), which a round with any
 * other outcome restarts. */
static bool durable_gap_terminal(qsf_io *io, int gaps) {
    qsf_io_loop *l = &io->l;
    bool all = gaps > 0 && gaps == l->hosts.attempts;
    if (!io->o.drainer)
        return all && !atomic_load(&io->x.ever_connected);
    if (!all) {
        l->gap_streak = 0;
        return false;
    }
    return drainer_budget_spent(&l->gap_streak, &l->gap_since_ns, gaps,
                                io->o.reconnect_max_duration_ms, false);
}

/* Every host of the round failed: give up (initial modes off/on, or the
 * durable gap), or sleep and start a new round. */
static void round_exhausted(qsf_io *io) {
    qsf_io_loop *l = &io->l;
    int gaps = l->durable_gaps;
    l->durable_gaps = 0;
    if (durable_gap_terminal(io, gaps)) {
        qsf_error_record r =
            unacked_record(io, QSF_CAT_PROTOCOL_VIOLATION,
                           "request_durable_ack=on but no endpoint grants durable acks "
                           "(no X-QWP-Durable-Ack: enabled in the upgrade response)");
        qsf_conn_apply(io, qsf_io_latch(io, QSF_E_PROTOCOL, &r));
        return;
    }
    if (!atomic_load(&io->x.ever_connected) && io->o.initial_mode != QSF_IO_INIT_ASYNC &&
        (io->o.initial_mode == QSF_IO_INIT_OFF || qsf_io_now_ns() >= l->init_deadline_ns)) {
        pthread_mutex_lock(&io->x.mu);
        if (io->x.init_state == 0) {
            io->x.init_state = -1;
            pthread_cond_broadcast(&io->x.cv);
        }
        pthread_mutex_unlock(&io->x.mu);
        qsf_io_set_state(io, QSF_IO_STOPPED);
        return;
    }
    /* the first rounds of role rejections (a primary moving) sleep one fixed
     * step; then they back off like any other failure (docs/PROTOCOL.md §9.4) */
    bool roles = qsf_hosts_all_role_rejected(&l->hosts);
    l->role_rounds = roles ? l->role_rounds + 1 : 0;
    int64_t sleep_ms = roles && l->role_rounds <= ROLE_FAST_ROUNDS
                           ? io->o.backoff_initial_ms
                           : qsf_backoff_next(&l->backoff, false);
    report_unreachable(io, sleep_ms);
    qsf_hosts_new_round(&l->hosts);
    qsf_conn_schedule(io, sleep_ms);
}

void qsf_conn_start_attempt(qsf_io *io) {
    int h = qsf_hosts_next(&io->l.hosts);
    if (h < 0) {
        round_exhausted(io);
        return;
    }
    qsf_conn *c = &io->c;
    c->host = h;
    c->why = QSF_WHY_NONE;
    c->pace = QSF_PACE_NONE;
    if (io->l.attempted) /* every attempt but the very first (docs/METRICS.md §3) */
        qsf_io_bump(&io->x.reconnect_attempts);
    io->l.attempted = true;
    pthread_mutex_lock(&io->x.mu);
    io->x.attempts_since_down++;
    pthread_mutex_unlock(&io->x.mu);
    const qsf_io_opts *o = &io->o;
    int64_t to = o->auth_timeout_ms +
                 (o->connect_timeout_ms > 0 ? o->connect_timeout_ms : o->auth_timeout_ms);
    c->deadline_ns = qsf_io_now_ns() + to * QSF_IO_MS;
    qsf_io_set_state(io, QSF_IO_CONNECTING);
    qsf_errinfo e;
    io->ws_ops->connect(io->ws, io->addrs[h].host, io->addrs[h].port, &e);
}

void qsf_conn_tick(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    switch (io->l.st) {
    case QSF_IO_CONNECTING:
        if (now >= c->deadline_ns) {
            /* the attempt failed here and now: an upgrade landing before the
             * abort does must not open it (on_open sees CLOSING) */
            qsf_verdict v = attempt_failed(io, QSF_ATTEMPT_TRANSPORT, "connect/upgrade timed out",
                                           QSF_E_CONNECT);
            c->pace = QSF_PACE_NONE;
            qsf_conn_close(io, v.kind == QSF_V_TERMINAL ? QSF_WHY_TERMINAL : QSF_WHY_RETRY, true);
        }
        break;
    case QSF_IO_CLOSING:
        if (!io->ws_ops->active(io->ws))
            closed_by_us(io); /* no event is coming for a close that had nothing to close */
        else if (now >= c->deadline_ns)
            io->ws_ops->close(io->ws, 1000, true);
        break;
    default:
        break;
    }
}

/* ---- the upgrade ---- */

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

/* A host that does not grant the requested durable ack (docs/PROTOCOL.md §10.4): reported and
 * retried once the sender has connected; before that, a round in which no host
 * grants it is terminal (round_exhausted). */
static void note_durable_gap(qsf_io *io, const char *why) {
    io->l.durable_gaps++;
    if (!atomic_load(&io->x.ever_connected))
        return;
    qsf_error_record r = unacked_record(io, QSF_CAT_PROTOCOL_VIOLATION, why);
    r.policy = QSF_POLICY_RETRIABLE;
    qsf_io_report(io, &r, 0);
}

/* Catch-up frames could not be built (an entry larger than the frame cap, or
 * no memory): reported, and retried on another endpoint after the longest
 * backoff (docs/PROTOCOL.md §4.4 cap gap); a drainer gives up when its budget is spent. */
static qsf_verdict catchup_failed(qsf_io *io, const qsf_errinfo *e) {
    qsf_io_loop *l = &io->l;
    qsf_error_record r = unacked_record(io, QSF_CAT_PROTOCOL_VIOLATION, e->msg);
    if (io->o.drainer && drainer_budget_spent(&l->cap_gap_streak, &l->cap_gap_since_ns, 1,
                                              io->o.cap_gap_window_ms, true)) {
        snprintf(r.message, sizeof r.message, "%.700s (gave up after %d attempts)", e->msg,
                 l->cap_gap_streak);
        return qsf_io_latch(io, QSF_E_PROTOCOL, &r);
    }
    r.policy = QSF_POLICY_RETRIABLE;
    qsf_io_report(io, &r, 0);
    return (qsf_verdict){QSF_V_OTHER, QSF_PACE_LONGEST, false};
}

/* The upgrade succeeded: a fresh connection replays from ackedFsn + 1. */
static qsf_verdict opened(qsf_io *io, const qsf_ws_hs *hs) {
    qsf_io_loop *l = &io->l;
    qsf_conn *c = &io->c;
    qsf_hosts_report(&l->hosts, c->host, QSF_ATTEMPT_OK);
    l->durable_gaps = 0;
    l->gap_streak = 0;
    l->role_rounds = 0;
    if (qsf_ack_head_of_line(io) < 0)
        qsf_io_outage_over(io); /* nothing waits: otherwise only progress ends it */
    atomic_store(&io->x.max_batch, hs->max_batch);
    conn_reset(io);
    c->hs = *hs;
    c->durable = hs->durable_granted;
    atomic_store(&io->x.durable_on, c->durable);
    qsf_ack_retire_given_up(io);
    int64_t start = qsf_ring_acked_fsn(io->ring) + 1;
    c->replay_target = atomic_load(&io->x.ever_connected) ? qsf_ring_published_fsn(io->ring)
                                                          : io->o.recovered_published_fsn;
    c->last_sent_fsn = start - 1;
    c->replay_from = start;
    c->replayed = 0;
    c->replaying = c->replay_target >= start;
    qsf_errinfo e;
    if (qsf_send_build_catchup(io, &e) != QSF_OK)
        return catchup_failed(io, &e);
    l->cap_gap_streak = 0;
    c->cursor_ok = qsf_ring_cursor_seek(io->ring, &c->cur, start) == 0;
    qsf_io_set_state(io, QSF_IO_OPEN);
    c->last_send_ns = qsf_io_now_ns();
    qsf_live_opened(io, c->last_send_ns);
    qsf_io_init_outcome(io, 1, 0, NULL);
    io->ws_ops->want_writable(io->ws);
    return qsf_v_continue();
}

static void on_open(void *u, const qsf_ws_hs *hs) {
    qsf_io *io = u;
    if (io->l.st != QSF_IO_CONNECTING)
        return; /* we are aborting this attempt; its end follows */
    char why[200];
    if (validate_handshake(io, hs, why, sizeof why)) {
        qsf_conn_apply(io, opened(io, hs));
        return;
    }
    if (hs->version == 1)
        note_durable_gap(io, why);
    qsf_verdict v = attempt_failed(io, QSF_ATTEMPT_TRANSPORT, why, QSF_E_CONNECT);
    /* refused: drop it; its end moves on to the next host of the round */
    io->c.pace = QSF_PACE_NONE;
    qsf_conn_close(io, v.kind == QSF_V_TERMINAL ? QSF_WHY_TERMINAL : QSF_WHY_RETRY, true);
}

static void on_connect_fail(void *u, const qsf_ws_fail *f) {
    qsf_io *io = u;
    if (io->l.st == QSF_IO_CLOSING) {
        closed_by_us(io); /* an attempt we aborted */
        return;
    }
    if (io->l.st != QSF_IO_CONNECTING)
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
    if (f->http_status)
        snprintf(why, sizeof why, "upgrade rejected with HTTP %d%s%s", f->http_status,
                 f->role[0] ? ", role " : "", f->role);
    else
        snprintf(why, sizeof why, "%s%s", f->tls ? "TLS failure: " : "", f->reason);
    qsf_verdict v = attempt_failed(io, outcome, why, code);
    settle(io, v.kind == QSF_V_TERMINAL ? QSF_WHY_TERMINAL : QSF_WHY_RETRY, 0);
}

/* ---- on the open connection ---- */

static void on_message(void *u, const uint8_t *p, size_t n) {
    qsf_io *io = u;
    if (io->l.st != QSF_IO_OPEN && io->l.st != QSF_IO_CLOSING)
        return;
    if (qsf_latch_code(io->latch))
        return; /* a server that broke the protocol (or a latched sender) is not believed */
    qsf_live_thaw(io, qsf_io_now_ns());
    qsf_verdict v = qsf_ack_message(io, p, n);
    qsf_live_received(io, qsf_io_now_ns()); /* after the OK popped what it covers */
    qsf_conn_apply(io, v);
}

static void on_pong(void *u) {
    qsf_io *io = u;
    if (io->l.st == QSF_IO_OPEN)
        qsf_live_received(io, qsf_io_now_ns());
}

static void on_violation(void *u, const char *why) {
    qsf_io *io = u;
    char msg[320];
    snprintf(msg, sizeof msg, "protocol violation by %.100s: %.140s", io->x.cur_host, why);
    qsf_conn_apply(io, qsf_io_latch_violation(io, QSF_E_PROTOCOL, msg));
}

static void on_writable(void *u) {
    qsf_io *io = u;
    if (io->l.st == QSF_IO_OPEN && io->c.err_wire < 0)
        qsf_conn_apply(io, qsf_send_some(io));
}

/* Whether an orderly close (1000/1001) counts as a lost connection: one that
 * confirmed no frame while frames wait, right after the upgrade or after
 * acknowledging only catch-up frames, stalls delivery in silence; the first
 * is taken at its word (a restart), a repetition before any progress is a
 * failure (docs/PROTOCOL.md §11.3). */
static bool quiet_failure(qsf_io *io) {
    if (io->c.progressed || qsf_ack_head_of_line(io) < 0)
        return false;
    return ++io->l.quiet_closes >= 2;
}

/* The peer closed, or the connection was lost (docs/PROTOCOL.md §9.3, §9.4, §10.2): the host is
 * demoted; an orderly close reconnects at once the first time, a loss is
 * reported (once per outage) and may count a strike (qsf_ack_loss). Either
 * backs off while no progress is made. */
static void lost(qsf_io *io, int code, const char *reason) {
    qsf_conn *c = &io->c;
    bool orderly = code == 1000 || code == 1001;
    bool failed = !orderly || quiet_failure(io);
    char msg[600], shown[QSF_TEXT_ESCAPED_MAX(125)]; /* a close reason is server text */
    qsf_text_escape(shown, sizeof shown, reason ? reason : "", reason ? strlen(reason) : 0);
    int n = snprintf(msg, sizeof msg, "connection to %.100s %s (code %d%s%.200s)", io->x.cur_host,
                     !orderly ? "lost"
                     : failed ? "closed by the server again before confirming any frame"
                              : "closed by the server",
                     code, shown[0] ? ": " : "", shown);
    if (!failed) {
        qsf_io_end_cause(io, 0, false, QSF_LOG_INFO, msg); /* no record: notify.c logs it */
        qsf_io_set_last_error(io, msg);
    } else {
        qsf_io_inflight_note(io, msg + n, sizeof msg - (size_t) n);
        qsf_io_bump(&io->x.connections_lost);
        qsf_io_report_outage(io, msg); /* the record is the line of the disconnection */
    }
    bool poisoned = !orderly && qsf_ack_loss(io);
    conn_reset(io);
    qsf_hosts_demote(&io->l.hosts, c->host);
    if (poisoned) {
        settle(io, QSF_WHY_TERMINAL, 0);
        return;
    }
    qsf_conn_schedule(io, reconnect_delay(io, QSF_PACE_LOSS));
}

static void on_closed(void *u, int code, const char *reason) {
    qsf_io *io = u;
    if (io->l.st == QSF_IO_CLOSING)
        closed_by_us(io);
    else if (io->l.st == QSF_IO_OPEN)
        lost(io, code, reason);
}

void qsf_conn_hooks(qsf_ws_hooks *h) {
    h->on_open = on_open;
    h->on_connect_fail = on_connect_fail;
    h->on_message = on_message;
    h->on_violation = on_violation;
    h->on_writable = on_writable;
    h->on_closed = on_closed;
    h->on_pong = on_pong;
}
