/* What goes out on a connection (docs/PROTOCOL.md §4.4, §8.2, §8.6): the
 * dictionary catch-up frames, then every frame from ackedFsn + 1 in strict FSN
 * order (replay, then live frames), a bounded number per writable callback so
 * acknowledgements are never starved, and the durable keepalive PING. */
#include "io/io_int.h"

#include "err.h"
#include "grow.h"
#include "log.h"
#include "qsf_assert.h"
#include "qwp/peek.h"
#include "qwp/types.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRAMES_PER_WRITABLE 16

/* ---- catch-up ---- */

void qsf_send_free_catchup(qsf_conn *c) {
    for (size_t i = 0; i < c->n_catchup; i++)
        free(c->catchup[i].buf);
    c->n_catchup = c->next_catchup = 0;
}

static int keep_catchup(void *u, const uint8_t *frame, size_t len, bool is_last, qsf_errinfo *err) {
    qsf_io *io = u;
    qsf_conn *c = &io->c;
    (void) is_last;
    if (c->n_catchup == c->cap_catchup) {
        qsf_send_frame *nf = qsf_grow(c->catchup, &c->cap_catchup, 4);
        if (!nf)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory building catch-up frames");
        c->catchup = nf;
    }
    size_t pre = io->ws_ops->pre();
    uint8_t *b = malloc(pre + len);
    if (!b)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory building catch-up frames");
    memcpy(b + pre, frame, len);
    c->catchup[c->n_catchup++] = (qsf_send_frame){b, len};
    return QSF_OK;
}

static int ring_entry(void *u, uint32_t id, const char **s, size_t *len) {
    uint32_t l = 0;
    *s = qsf_ring_symdict_entry(u, id, &l);
    *len = l;
    return *s ? 0 : QSF_E_INTERNAL;
}

int qsf_send_build_catchup(qsf_io *io, qsf_errinfo *err) {
    qsf_conn *c = &io->c;
    qsf_send_free_catchup(c);
    c->dict_known = 0;
    if (io->o.self_sufficient)
        return QSF_OK;
    uint32_t d = qsf_ring_symdict_size(io->ring);
    int64_t mb = atomic_load(&io->x.max_batch);
    int rc = qsf_qwp_catchup(io->l.enc, d, ring_entry, io->ring, mb > 0 ? (size_t) mb : 0,
                             keep_catchup, io, NULL, err);
    if (rc == QSF_OK)
        c->dict_known = d;
    return rc;
}

/* ---- one frame ---- */

/* A ring frame goes out from a copy: the 8 bytes before a payload in a segment
 * are its envelope, and masking in place would change the stored frame. */
static int send_copy(qsf_io *io, const uint8_t *p, size_t len) {
    qsf_io_loop *l = &io->l;
    size_t need = io->ws_ops->pre() + len;
    if (need > l->scap) {
        uint8_t *nb = realloc(l->sbuf, need);
        if (!nb)
            return -1;
        l->sbuf = nb;
        l->scap = need;
    }
    return io->ws_ops->send_binary_from(io->ws, l->sbuf, p, len);
}

/* Pre-send guard (docs/PROTOCOL.md §4.4): a frame must not need symbol ids the server was
 * never given on this connection. */
static qsf_verdict check_dictionary(qsf_io *io, const uint8_t *p, uint32_t len, int64_t fsn) {
    qsf_conn *c = &io->c;
    qsf_qwp_hdr h;
    qsf_qwp_delta_info d;
    size_t need;
    if (qsf_qwp_peek_header(p, len, &h) != QSF_QWP_PEEK_OK ||
        !(h.flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        return qsf_v_continue();
    int rc = qsf_qwp_peek_delta(p, len, &h, &d, &need);
    if (rc == QSF_QWP_PEEK_OK && d.start <= c->dict_known) {
        if (d.start + d.count > c->dict_known)
            c->dict_known = (uint32_t) (d.start + d.count);
        return qsf_v_continue();
    }
    if (rc != QSF_QWP_PEEK_OK)
        return qsf_v_continue(); /* not ours to judge: the server will */
    char msg[300];
    snprintf(msg, sizeof msg,
             "recovered store-and-forward symbol dictionary is incomplete (likely a host crash): "
             "frame at fsn=%" PRId64 " needs ids from %" PRIu64 ", the client has %u -- resend "
             "required",
             fsn, d.start, c->dict_known);
    return qsf_io_latch_violation(io, QSF_E_RESEND_REQUIRED, msg);
}

/* ---- the stored bytes, checked before they leave ---- */

/* Whether the damage of fsn was reported already: a reconnect replays from
 * ackedFsn + 1 and meets the frame again. The list keeps the last few; one
 * that fell out is reported twice, never not at all. */
static bool damage_noted(qsf_io *io, int64_t fsn) {
    qsf_io_loop *l = &io->l;
    uint32_t n = l->n_damaged < QSF_IO_DAMAGED_KEPT ? l->n_damaged : QSF_IO_DAMAGED_KEPT;
    for (uint32_t i = 0; i < n; i++)
        if (l->damaged[i] == fsn)
            return true;
    l->damaged[l->n_damaged++ % QSF_IO_DAMAGED_KEPT] = fsn;
    return false;
}

static void report_damaged(qsf_io *io, int64_t fsn, uint32_t len) {
    qsf_error_record r;
    qsf_io_record_init(io, &r, QSF_CAT_DATA_LOSS, -1, -1, fsn, fsn);
    snprintf(r.message, sizeof r.message,
             "frame FSN %" PRId64 " (%u bytes) of slot %.300s fails its CRC-32C: its bytes "
             "changed after it was published (bit rot, or a stray write into the segment); given "
             "up, never sent (its rows are unknown: the frame cannot be read)",
             fsn, len, qsf_ring_slot_path(io->ring) ? qsf_ring_slot_path(io->ring) : "(memory)");
    atomic_store(&io->x.last_error_code, QSF_E_DATA_LOSS);
    qsf_inbox_push_from(io->inbox, &r, io->o.drainer ? "drain_orphans: " : "");
    qsf_latch_note_loss(io->latch, 1, 0, r.message);
}

/* A frame whose bytes no longer match its CRC is damage, not data: it never
 * goes on the wire (the server would store a wrong value). It is reported as
 * DATA_LOSS once and given up: the frame before it on the wire stands for it
 * too, so the OK that covers that one acknowledges it; with none in flight
 * (ackedFsn just below it) it is acknowledged at once. The rest continues.
 * Returns false for an intact frame. */
static bool damaged_given_up(qsf_io *io, const uint8_t *p, uint32_t len, int64_t fsn) {
    if (qsf_ring_frame_intact(p, len))
        return false;
    if (!damage_noted(io, fsn))
        report_damaged(io, fsn, len);
    qsf_conn *c = &io->c;
    c->last_sent_fsn = fsn; /* done with, for this connection */
    if (qsf_wiremap_cover(&c->map, fsn) != 0 && qsf_ring_acked_fsn(io->ring) == fsn - 1 &&
        qsf_ring_acknowledge(io->ring, fsn))
        qsf_io_signal_progress(io);
    /* otherwise (durable acks owed for frames whose OK came): the next frame's
     * acknowledgement covers it, or the next open finds the damage again */
    return true;
}

/* A frame that left the cursor but not the wire: drop the connection, so the
 * next one replays from ackedFsn + 1 (never a gap). */
static qsf_verdict lost_on_the_wire(qsf_io *io) {
    char msg[200];
    snprintf(msg, sizeof msg, "connection to %.100s lost: a frame could not be written",
             io->x.cur_host);
    qsf_io_bump(&io->x.connections_lost);
    qsf_io_report_outage(io, msg);
    return (qsf_verdict){QSF_V_RETRY, QSF_PACE_LOSS, true};
}

static qsf_verdict send_catchup(qsf_io *io, bool *sent) {
    qsf_conn *c = &io->c;
    qsf_send_frame *f = &c->catchup[c->next_catchup++];
    *sent = true;
    if (io->ws_ops->send_binary_from(io->ws, f->buf, f->buf + io->ws_ops->pre(), f->len) < 0 ||
        qsf_wiremap_push(&c->map, -1) < 0)
        return lost_on_the_wire(io);
    c->last_send_ns = qsf_io_now_ns();
    qsf_live_sent(io, c->last_send_ns);
    return qsf_v_continue();
}

/* The next catch-up or ring frame; *sent false when there is nothing to send. */
static qsf_verdict send_next(qsf_io *io, bool *sent) {
    qsf_conn *c = &io->c;
    *sent = false;
    if (c->next_catchup < c->n_catchup)
        return send_catchup(io, sent);
    const uint8_t *p;
    uint32_t len;
    int64_t fsn;
    do {
        if (!c->cursor_ok || !qsf_ring_cursor_next(io->ring, &c->cur, &p, &len, &fsn)) {
            qsf_io_replay_progress(io); /* the last ones may have been given up */
            return qsf_v_continue();
        }
    } while (qsf_ack_given_up(io, fsn) || damaged_given_up(io, p, len, fsn)); /* never sent */
    qsf_assert(fsn > c->last_sent_fsn); /* strict FSN order on a connection */
    qsf_verdict v = check_dictionary(io, p, len, fsn);
    if (v.kind != QSF_V_CONTINUE)
        return v;
    *sent = true;
    if (send_copy(io, p, len) < 0 || qsf_wiremap_push(&c->map, fsn) < 0)
        return lost_on_the_wire(io);
    c->sent_data = true;
    c->last_sent_fsn = fsn;
    c->last_send_ns = qsf_io_now_ns();
    qsf_live_sent(io, c->last_send_ns);
    qsf_io_bump(&io->x.frames_sent);
    if (fsn <= c->replay_target)
        c->replayed++; /* the backlog this connection found: REPLAY_DONE */
    if (fsn <= io->l.highest_sent_fsn)
        qsf_io_bump(&io->x.frames_replayed); /* out before: a possible duplicate */
    else
        io->l.highest_sent_fsn = fsn;
    qsf_io_replay_progress(io);
    return qsf_v_continue();
}

/* A PING asked for by liveness or the durable keepalive goes first. */
static void send_ping_if_due(qsf_io *io) {
    if (!io->c.ping_due || io->ws_ops->choked(io->ws))
        return;
    if (io->ws_ops->send_ping(io->ws) == 0)
        qsf_live_pinged(io, qsf_io_now_ns());
}

qsf_verdict qsf_send_some(qsf_io *io) {
    const qsf_ws_ops *ws = io->ws_ops;
    send_ping_if_due(io);
    for (int i = 0; i < FRAMES_PER_WRITABLE; i++) {
        if (ws->choked(io->ws)) {
            ws->want_writable(io->ws);
            return qsf_v_continue();
        }
        bool sent;
        qsf_verdict v = send_next(io, &sent);
        if (v.kind != QSF_V_CONTINUE || !sent)
            return v;
    }
    ws->want_writable(io->ws); /* more may be waiting: come back after reading */
    return qsf_v_continue();
}

bool qsf_send_due(const qsf_io *io) {
    const qsf_conn *c = &io->c;
    return qsf_ring_published_fsn(io->ring) > c->last_sent_fsn || c->next_catchup < c->n_catchup;
}

void qsf_send_keepalive(qsf_io *io, int64_t now) {
    qsf_conn *c = &io->c;
    if (!c->durable || io->o.keepalive_ms <= 0 || !qsf_durack_pending(c->dur))
        return;
    if (now - c->last_send_ns >= io->o.keepalive_ms * QSF_IO_MS)
        qsf_live_request_ping(io);
}
