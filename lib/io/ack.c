/* What comes in on a connection (docs/PROTOCOL.md §8.4, §8.5, §9): cumulative
 * OKs mapped back to FSNs, durable acks, error responses and their policies,
 * the poison-frame detector, the retirement of flushes recovery gave up, and
 * the .ack-watermark that follows the acknowledgements. Each handler returns a
 * verdict; conn.c carries it out. */
#include "io/io_int.h"

#include "err.h"
#include "log.h"
#include "qwp/peek.h"
#include "text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* ---- acknowledged ---- */

/* ackedFsn advanced: .ack-watermark follows within QSF_IO_WATERMARK_NS (plus a
 * tick), so a process killed now replays little (docs/DURABILITY.md). A record
 * write, never a sync: nothing the producer waits for. */
static void persist_acked(qsf_io *io) {
    qsf_errinfo e;
    if (qsf_ring_persist_acked(io->ring, &e) != QSF_OK)
        QSF_LOGD("watermark write deferred: %s", e.msg);
    io->l.wm_write_ns = qsf_io_now_ns();
    io->l.wm_pending = false;
}

void qsf_ack_persist_pending(qsf_io *io) {
    if (io->l.wm_pending)
        persist_acked(io);
}

static void acked_advanced(qsf_io *io) {
    qsf_io_signal_progress(io);
    if (qsf_io_now_ns() - io->l.wm_write_ns >= QSF_IO_WATERMARK_NS) {
        persist_acked(io);
    } else if (!io->l.wm_pending) {
        io->l.wm_pending = true;
        io->ws_ops->tick_in(io->ws, QSF_IO_WATERMARK_TICK_US);
    }
}

/* ---- flushes recovery gave up (qsf_ring_retired) ---- */

void qsf_ack_retire_given_up(qsf_io *io) {
    qsf_io_loop *l = &io->l;
    while (l->next_retired < l->n_retired) {
        const qsf_fsn_span *sp = &l->retired[l->next_retired];
        if (qsf_ring_acked_fsn(io->ring) < sp->from - 1)
            return;
        l->next_retired++;
        QSF_LOGI("frames %" PRId64 "..%" PRId64 " (a flush recovery gave up) retired unsent",
                 sp->from, sp->to);
        /* done, as far as anyone waiting is concerned, at either level */
        if (atomic_load(&io->x.highest_ok) < sp->to)
            atomic_store(&io->x.highest_ok, sp->to);
        if (qsf_ring_acknowledge(io->ring, sp->to))
            acked_advanced(io);
        else
            qsf_io_signal_progress(io);
    }
}

bool qsf_ack_given_up(const qsf_io *io, int64_t fsn) {
    const qsf_io_loop *l = &io->l;
    for (uint32_t i = l->next_retired; i < l->n_retired; i++) {
        if (fsn < l->retired[i].from)
            return false;
        if (fsn <= l->retired[i].to)
            return true;
    }
    return false;
}

static void advance_ack(qsf_io *io, int64_t fsn) {
    if (qsf_ring_acknowledge(io->ring, fsn))
        acked_advanced(io);
    qsf_ack_retire_given_up(io);
}

/* ---- responses ---- */

/* An OK names the highest wireSeq it confirms. One for a wireSeq never sent
 * on this connection (beyond the last one, negative, or before anything was
 * sent) is a server bug, not an acknowledgement of what was sent: a protocol
 * violation that trims nothing (docs/ERRORS.md). */
static qsf_verdict on_ok(qsf_io *io, const qsf_response *r) {
    qsf_conn *c = &io->c;
    qsf_io_bump(&io->x.acks);
    int64_t seq = r->sequence;
    if (seq < 0 || seq >= c->map.next_wire) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "OK for wireSeq %" PRId64 " from %.100s, a wireSeq never sent: %" PRId64
                 " frames were sent on this connection",
                 seq, io->x.cur_host, c->map.next_wire);
        return qsf_io_latch_violation(io, QSF_E_PROTOCOL, msg);
    }
    if (c->err_wire >= 0 && seq >= c->err_wire)
        seq = c->err_wire - 1; /* never past a rejected frame (OK leapfrog) */
    if (seq < 0)
        return qsf_v_continue();
    c->accepted = true; /* the path works: docs/PROTOCOL.md §9.3 */
    int64_t fsn = qsf_wiremap_ack(&c->map, seq);
    if (fsn < 0)
        return qsf_v_continue();
    if (fsn > atomic_load(&io->x.highest_ok)) {
        atomic_store(&io->x.highest_ok, fsn);
        qsf_backoff_progress(&io->l.backoff); /* only progress resets the backoff */
        qsf_io_outage_over(io);               /* ... and ends the outage */
        c->progressed = true;
    }
    qsf_live_acked(io, qsf_io_now_ns());
    qsf_poison_ok(&io->l.poison, fsn);
    if (!c->durable)
        advance_ack(io, fsn);
    else if (qsf_durack_push_ok(c->dur, fsn, r) < 0)
        return qsf_io_latch_violation(io, QSF_E_NOMEM,
                                      "out of memory queueing an OK for durable matching");
    qsf_io_signal_progress(io);
    return qsf_v_continue();
}

static qsf_verdict on_durable(qsf_io *io, const qsf_response *r) {
    qsf_conn *c = &io->c;
    if (!c->durable) {
        QSF_LOGW("durable ack received but not negotiated on %s: ignored", io->x.cur_host);
        return qsf_v_continue();
    }
    qsf_io_bump(&io->x.durable_acks);
    int64_t fsn = qsf_durack_apply(c->dur, r);
    if (fsn == -2)
        return qsf_io_latch_violation(io, QSF_E_NOMEM, "out of memory merging a durable ack");
    if (fsn == -3) {
        char msg[320];
        snprintf(msg, sizeof msg,
                 "durable ack from %.100s names more tables no OK named than the widest OK of "
                 "the connection did (%zu tables)",
                 io->x.cur_host, qsf_durack_widest(c->dur));
        return qsf_io_latch_violation(io, QSF_E_PROTOCOL, msg);
    }
    if (fsn >= 0 && qsf_ring_acknowledge(io->ring, fsn)) {
        qsf_io_bump(&io->x.durable_trims);
        acked_advanced(io);
        qsf_ack_retire_given_up(io);
    }
    return qsf_v_continue();
}

/* The table of a frame holding exactly one table, for error records. */
static void table_of(qsf_io *io, int64_t fsn, qsf_error_record *rec) {
    qsf_ring_cursor cur;
    memset(&cur, 0, sizeof cur);
    const uint8_t *p;
    uint32_t len;
    int64_t f;
    qsf_qwp_hdr h;
    qsf_qwp_table_info t;
    if (qsf_ring_cursor_seek(io->ring, &cur, fsn) == 0 &&
        qsf_ring_cursor_next(io->ring, &cur, &p, &len, &f) &&
        qsf_qwp_peek_header(p, len, &h) == QSF_QWP_PEEK_OK && h.table_count == 1 &&
        qsf_qwp_peek_first_table(p, len, &t) == QSF_QWP_PEEK_OK && t.name_len < sizeof rec->table) {
        qsf_text_escape(rec->table, sizeof rec->table, (const char *) p + t.name, t.name_len);
    }
    qsf_ring_cursor_release(io->ring, &cur);
}

int64_t qsf_ack_head_of_line(const qsf_io *io) {
    int64_t h = qsf_ring_acked_fsn(io->ring), ok = atomic_load(&((qsf_io *) io)->x.highest_ok);
    h = (ok > h ? ok : h) + 1;
    return h <= qsf_ring_published_fsn(io->ring) ? h : -1;
}

/* The frame was declared poisoned: latched, with what held it up. */
static void poisoned(qsf_io *io, int64_t fsn) {
    const qsf_poison *p = &io->l.poison;
    qsf_error_record r;
    qsf_io_record_init(io, &r, QSF_CAT_PROTOCOL_VIOLATION, -1, -1, fsn, fsn);
    if (p->losses == 0)
        snprintf(r.message, sizeof r.message,
                 "frame at fsn=%" PRId64 " rejected %d consecutive times with no acceptance at "
                 "or beyond it -- poisoned frame",
                 fsn, p->strikes);
    else
        snprintf(r.message, sizeof r.message,
                 "frame at fsn=%" PRId64 " held up %d consecutive connections (%d lost with it "
                 "the last frame sent while the server accepted others, %d rejections) with no "
                 "acceptance at or beyond it -- poisoned frame",
                 fsn, p->strikes, p->losses, p->strikes - p->losses);
    qsf_io_latch(io, QSF_E_PROTOCOL, &r);
}

bool qsf_ack_strike(qsf_io *io, int64_t fsn) {
    if (fsn < 0 || !qsf_poison_strike(&io->l.poison, fsn))
        return false;
    poisoned(io, fsn);
    return true;
}

/* A connection was lost or found dead (docs/PROTOCOL.md §9.3): a strike
 * against the last ring frame sent on it, still unconfirmed (a frame that
 * kills every connection it goes out on), which escalates only once the
 * server accepted frames during the run. A path that accepts nothing (a crash
 * loop, a proxy, a frozen or dead server) says nothing of a frame: retried
 * forever. A loss with no ring frame unconfirmed breaks the run. Call before
 * the connection is reset. */
bool qsf_ack_loss(qsf_io *io) {
    qsf_conn *c = &io->c;
    if (!c->sent_data || c->last_sent_fsn <= atomic_load(&io->x.highest_ok)) {
        qsf_poison_clear(&io->l.poison);
        return false;
    }
    if (!qsf_poison_strike_loss(&io->l.poison, c->last_sent_fsn, c->accepted))
        return false;
    poisoned(io, c->last_sent_fsn);
    return true;
}

/* docs/PROTOCOL.md §9.2: TERMINAL latches; RETRIABLE_OTHER rotates the host;
 * RETRIABLE reconnects, paced by the strikes against the frame. */
static qsf_verdict on_error(qsf_io *io, const qsf_response *r) {
    qsf_conn *c = &io->c;
    qsf_io_bump(&io->x.server_errors);
    if (c->err_wire >= 0)
        return qsf_v_continue(); /* the pipeline is already broken: one error per connection */
    c->err_wire = r->sequence;
    int64_t fsn = qsf_wiremap_lookup(&c->map, r->sequence);
    int cat = qsf_status_category(r->status);
    qsf_error_record rec;
    qsf_io_record_init(io, &rec, cat, r->status, r->sequence, fsn >= 0 ? fsn : -1,
                       fsn >= 0 ? fsn : -1);
    int n =
        snprintf(rec.message, sizeof rec.message,
                 "%s (status 0x%02X, fsn %" PRId64 "): ", qsf_category_name(cat), r->status, fsn);
    qsf_text_escape(rec.message + n, sizeof rec.message - (size_t) n, (const char *) r->msg,
                    r->msg_len); /* server text: shown, never obeyed */
    if (fsn >= 0)
        table_of(io, fsn, &rec);
    qsf_io_set_last_error(io, rec.message);
    if (rec.policy == QSF_POLICY_TERMINAL)
        return qsf_io_latch(io, QSF_E_SERVER, &rec);
    qsf_io_report(io, &rec, 0);
    if (rec.policy == QSF_POLICY_RETRIABLE_OTHER) /* the node cannot take writes: no strike */
        return (qsf_verdict){QSF_V_OTHER, QSF_PACE_LOSS, false};
    /* A rejected catch-up frame holds up the first frame not yet acknowledged:
     * the strike is against that one (head of line). */
    if (qsf_ack_strike(io, fsn >= 0 ? fsn : qsf_ack_head_of_line(io)))
        return qsf_v_terminal();
    return (qsf_verdict){QSF_V_RETRY, QSF_PACE_REFUSAL, false};
}

qsf_verdict qsf_ack_message(qsf_io *io, const uint8_t *p, size_t n) {
    qsf_response r;
    char why[160];
    if (qsf_response_parse(p, n, &r, why, sizeof why) < 0) {
        char msg[320];
        snprintf(msg, sizeof msg, "malformed server response from %.100s: %.140s", io->x.cur_host,
                 why);
        return qsf_io_latch_violation(io, QSF_E_PROTOCOL, msg);
    }
    switch (r.kind) {
    case QSF_RESP_OK:
        return on_ok(io, &r);
    case QSF_RESP_DURABLE:
        return on_durable(io, &r);
    case QSF_RESP_ERROR:
        return on_error(io, &r);
    default:
        QSF_LOGW("ignored server response with status 0x%02X from %s", r.status, io->x.cur_host);
        return qsf_v_continue();
    }
}
