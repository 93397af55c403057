/* Source positions committed with a flush (ring.h, qsf_ring_srcpos_*; the log
 * is srcpos.h). The position staged for the next commit is written into the
 * log with the flush's last FSN just before the frame that commits the flush
 * (the last one, without FLAG_DEFER_COMMIT) is written, or at the commit when
 * no such frame was seen, always before the flush's barrier: so no crash
 * keeps the flush without its position, the barrier that makes the frames
 * durable (append mode) or the checkpoint (periodic mode) syncs the position
 * first (barrier.c), and an aborted flush takes its record back. Order and
 * guarantees: docs/DURABILITY.md §9a. */
#include "sf/ring_int.h"

#include "err.h"
#include "log.h"
#include "qwp/peek.h"
#include "qwp/types.h"

#include <inttypes.h>
#include <string.h>

int qsf_ring_srcpos_open(qsf_ring *r, qsf_errinfo *err) {
    if (!r->sf) {
        qsf_srcpos_init_memory(&r->srcpos);
        r->srcpos_ready = true;
        return QSF_OK;
    }
    /* Recovery kept every flush up to publishedFsn whole: a position above
     * it belongs to a flush that did not survive. */
    int rc =
        qsf_srcpos_open(&r->srcpos, r->rec.slot.dirfd, r->rec.slot.path, r->rec.published_fsn, err);
    r->srcpos_ready = rc == QSF_OK;
    return rc;
}

void qsf_ring_srcpos_close(qsf_ring *r) {
    if (r->srcpos_ready)
        qsf_srcpos_close(&r->srcpos);
    r->srcpos_ready = false;
}

int qsf_ring_srcpos_stage(qsf_ring *r, const void *pos, size_t len, qsf_errinfo *err) {
    if (!pos || len == 0 || len > QSF_SRCPOS_MAX)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "source position of %zu bytes%s: it must be 1..%d bytes", len,
                           pos ? "" : " (NULL)", QSF_SRCPOS_MAX);
    memcpy(r->srcpos_pending, pos, len);
    r->srcpos_pending_len = (uint32_t) len;
    return QSF_OK;
}

void qsf_ring_srcpos_unstage(qsf_ring *r) {
    r->srcpos_pending_len = 0;
}

int qsf_ring_srcpos_write(qsf_ring *r, int64_t fsn, qsf_errinfo *err) {
    if (r->txn.pos_written || r->srcpos_pending_len == 0)
        return QSF_OK; /* written before the committing frame (before_frame) */
    int rc = qsf_srcpos_append(&r->srcpos, fsn, r->srcpos_pending, r->srcpos_pending_len,
                               &r->txn.pos_mark, err);
    r->txn.pos_written = rc == QSF_OK;
    return rc;
}

int qsf_ring_srcpos_before_frame(qsf_ring *r, const void *payload, size_t len, qsf_errinfo *err) {
    if (!r->sf || r->srcpos_pending_len == 0)
        return QSF_OK;
    qsf_ring_srcpos_retract(r); /* a frame after the committing one: the flush goes on */
    qsf_qwp_hdr h;
    if (qsf_qwp_peek_header(payload, len, &h) != QSF_QWP_PEEK_OK ||
        (h.flags & QSF_QWP_FLAG_DEFER_COMMIT))
        return QSF_OK;
    return qsf_ring_srcpos_write(r, r->next_fsn, err);
}

void qsf_ring_srcpos_retract(qsf_ring *r) {
    if (!r->txn.pos_written)
        return;
    r->txn.pos_written = false;
    qsf_errinfo e;
    /* If the zeros cannot be written the record stays: its FSN is above
     * publishedFsn, so the next open drops it (qsf_srcpos_open), and the next
     * record overwrites it in place. */
    if (qsf_srcpos_retract(&r->srcpos, r->txn.pos_mark, r->durability != QSF_DUR_MEMORY, &e) !=
        QSF_OK)
        QSF_LOGW("the source position of an aborted flush could not be taken back: %s", e.msg);
}

void qsf_ring_srcpos_committed(qsf_ring *r) {
    if (!r->txn.pos_written)
        return;
    r->txn.pos_written = false;
    r->srcpos_pending_len = 0;
    int64_t acked = atomic_load_explicit(&r->acked_fsn, memory_order_acquire);
    if (!qsf_srcpos_wants_compaction(&r->srcpos, acked))
        return;
    qsf_errinfo e;
    if (qsf_srcpos_compact(&r->srcpos, acked, false, &e) != QSF_OK)
        QSF_LOGW("source positions not compacted (retried at a later flush): %s", e.msg);
}

int qsf_ring_srcpos_commit_empty(qsf_ring *r, qsf_errinfo *err) {
    if (r->srcpos_pending_len == 0)
        return QSF_OK;
    if (qsf_latch_code(r->latch) || atomic_load_explicit(&r->dur_latched, memory_order_relaxed))
        return qsf_ring_latched_error(r, err);
    int rc = qsf_ring_srcpos_write(r, atomic_load(&r->published_fsn), err);
    if (rc == QSF_OK && r->durability == QSF_DUR_APPEND)
        rc = qsf_srcpos_sync(&r->srcpos, err);
    if (rc != QSF_OK) {
        qsf_ring_srcpos_retract(r);
        return rc;
    }
    qsf_ring_srcpos_committed(r);
    return QSF_OK;
}

int qsf_ring_srcpos_sync(qsf_ring *r, qsf_errinfo *err) {
    return r->srcpos_ready ? qsf_srcpos_sync(&r->srcpos, err) : QSF_OK;
}

int qsf_ring_srcpos_finalize(qsf_ring *r, qsf_errinfo *err) {
    return r->srcpos_ready ? qsf_srcpos_compact(&r->srcpos, INT64_MAX, true, err) : QSF_OK;
}

int qsf_ring_source_position(const qsf_ring *r, bool acked, void *buf, size_t cap, size_t *len,
                             int64_t *fsn, qsf_errinfo *err) {
    int64_t limit =
        atomic_load_explicit(acked ? &r->acked_fsn : &r->published_fsn, memory_order_acquire);
    const qsf_srcpos_rec *rec = r->srcpos_ready ? qsf_srcpos_find(&r->srcpos, limit) : NULL;
    if (len)
        *len = rec ? rec->len : 0;
    if (fsn)
        *fsn = rec ? rec->fsn : -1;
    if (!rec)
        return QSF_OK;
    if (!buf || cap < rec->len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "the source position at FSN %" PRId64 " has %" PRIu32
                           " bytes; the buffer holds %zu",
                           rec->fsn, rec->len, buf ? cap : 0);
    memcpy(buf, rec->bytes, rec->len);
    return QSF_OK;
}
