/* Source positions committed with a flush (ring.h, qsf_ring_srcpos_*; the log
 * is srcpos.h). The position staged for the next commit is written into the
 * log with the flush's last FSN and the CRC-32C its committing frame is
 * stored with, just before the frame that commits the flush (the last one,
 * without FLAG_DEFER_COMMIT) is written, or at the commit when no such frame
 * was seen, always before the flush's barrier: so no crash keeps the flush
 * without its position, the barrier that makes the frames durable (append
 * mode) or the checkpoint (periodic mode) syncs the position first
 * (barrier.c), and an aborted flush takes its record back. At open a record
 * counts only if the frame recovery kept at its FSN is that frame. Order and
 * guarantees: docs/DURABILITY.md §9a. */
#include "sf/ring_int.h"

#include "err.h"
#include "log.h"
#include "qwp/peek.h"
#include "qwp/types.h"
#include "sf/segfmt.h"
#include "sf/sfa.h"

#include <inttypes.h>
#include <string.h>

/* The CRC-32C the published frame at fsn is stored with; false when there is
 * none in the ring (below the head: trimmed; FSN -1). */
static bool published_frame_crc(qsf_ring *r, int64_t fsn, uint32_t *crc) {
    qsf_ring_cursor c = {0};
    if (fsn < 0 || qsf_ring_cursor_seek(r, &c, fsn) != 0)
        return false;
    const uint8_t *p;
    uint32_t n;
    int64_t f;
    bool got = qsf_ring_cursor_next(r, &c, &p, &n, &f) == 1 && f == fsn;
    if (got)
        *crc = qsf_sfa_frame_stored_crc(p - QSF_SFA_FRAME_AT_PAYLOAD);
    qsf_ring_cursor_release(r, &c);
    return got;
}

/* The CRC-32C of the last frame the open flush wrote (producer-private, not
 * yet published); false when it wrote none. */
static bool last_frame_crc(const qsf_ring *r, uint32_t *crc) {
    const qsf_segment *s = r->prod.txn.last;
    if (!s)
        return false;
    uint64_t off = s == r->prod.txn.seg ? r->prod.txn.off : QSF_SFA_HEADER_SIZE, last = UINT64_MAX;
    while (off < s->append_off) {
        const uint8_t *p;
        uint32_t n;
        last = off;
        off = qsf_seg_frame_at(s, off, &p, &n);
    }
    if (last == UINT64_MAX)
        return false;
    *crc = qsf_sfa_frame_stored_crc(s->base + last);
    return true;
}

/* qsf_srcpos_survived_fn: a host crash can lose the committing frame while
 * its record survives, and salvage may then number a frame of another flush
 * (or a placeholder) with that FSN (docs/FORMAT.md §6.15): the record counts
 * only if the frame kept there is stored with the CRC it names. */
static bool flush_survived(void *user, const qsf_srcpos_rec *rec, bool check_frame) {
    qsf_ring *r = user;
    if (qsf_ring_given_up(r, rec->fsn)) {
        QSF_LOGW("%s: the source position at FSN %" PRId64
                 " is dropped: recovery gave up the flush it was committed with",
                 r->rec.slot.path, rec->fsn);
        return false;
    }
    uint32_t crc;
    if (!check_frame || !rec->has_frame || !published_frame_crc(r, rec->fsn, &crc) ||
        crc == rec->frame_crc)
        return true;
    QSF_LOGW("%s: the source position at FSN %" PRId64
             " is dropped: the frame kept at that FSN (CRC %08" PRIx32
             ") is not the one it was committed with (CRC %08" PRIx32 ")",
             r->rec.slot.path, rec->fsn, crc, rec->frame_crc);
    return false;
}

int qsf_ring_srcpos_open(qsf_ring *r, qsf_errinfo *err) {
    if (!r->cfg.sf) {
        qsf_srcpos_init_memory(&r->prod.srcpos);
        r->prod.srcpos_ready = true;
        return QSF_OK;
    }
    /* Recovery kept every flush up to publishedFsn whole: a position above
     * it belongs to a flush that did not survive, and so does one whose
     * frame is not the one kept at its FSN. */
    int rc = qsf_srcpos_open(&r->prod.srcpos, r->rec.slot.dirfd, r->rec.slot.path,
                             r->rec.published_fsn, flush_survived, r, err);
    r->prod.srcpos_ready = rc == QSF_OK;
    return rc;
}

void qsf_ring_srcpos_close(qsf_ring *r) {
    if (r->prod.srcpos_ready)
        qsf_srcpos_close(&r->prod.srcpos);
    r->prod.srcpos_ready = false;
}

int qsf_ring_srcpos_stage(qsf_ring *r, const void *pos, size_t len, qsf_errinfo *err) {
    if (!pos || len == 0 || len > QSF_SRCPOS_MAX)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "source position of %zu bytes%s: it must be 1..%d bytes", len,
                           pos ? "" : " (NULL)", QSF_SRCPOS_MAX);
    memcpy(r->prod.srcpos_pending, pos, len);
    r->prod.srcpos_pending_len = (uint32_t) len;
    return QSF_OK;
}

void qsf_ring_srcpos_unstage(qsf_ring *r) {
    r->prod.srcpos_pending_len = 0;
}

/* Writes the staged position into the log at fsn, naming the frame stored
 * there with `crc` when has_frame. */
static int write_record(qsf_ring *r, int64_t fsn, bool has_frame, uint32_t crc, qsf_errinfo *err) {
    qsf_srcpos_rec rec = {.fsn = fsn,
                          .has_frame = has_frame && r->cfg.sf,
                          .frame_crc = crc,
                          .len = r->prod.srcpos_pending_len};
    memcpy(rec.bytes, r->prod.srcpos_pending, rec.len);
    int rc = qsf_srcpos_append(&r->prod.srcpos, &rec, &r->prod.txn.pos_mark, err);
    r->prod.txn.pos_written = rc == QSF_OK;
    return rc;
}

int qsf_ring_srcpos_write(qsf_ring *r, int64_t fsn, qsf_errinfo *err) {
    if (r->prod.txn.pos_written || r->prod.srcpos_pending_len == 0)
        return QSF_OK; /* written before the committing frame (before_frame) */
    uint32_t crc = 0;
    bool has = r->cfg.sf && last_frame_crc(r, &crc);
    return write_record(r, fsn, has, crc, err);
}

int qsf_ring_srcpos_before_frame(qsf_ring *r, const void *payload, size_t len, qsf_errinfo *err) {
    if (!r->cfg.sf || r->prod.srcpos_pending_len == 0)
        return QSF_OK;
    qsf_ring_srcpos_retract(r); /* a frame after the committing one: the flush goes on */
    qsf_qwp_hdr h;
    if (qsf_qwp_peek_header(payload, len, &h) != QSF_QWP_PEEK_OK ||
        (h.flags & QSF_QWP_FLAG_DEFER_COMMIT))
        return QSF_OK;
    /* the CRC the frame will be stored with (a payload too large for a
     * segment fails its append, which takes the record back) */
    return write_record(r, r->prod.next_fsn, true, qsf_sfa_frame_crc(payload, (uint32_t) len), err);
}

void qsf_ring_srcpos_retract(qsf_ring *r) {
    if (!r->prod.txn.pos_written)
        return;
    r->prod.txn.pos_written = false;
    qsf_errinfo e;
    /* If the zeros cannot be written the record stays: its FSN is above
     * publishedFsn, so the next open drops it (qsf_srcpos_open), and the next
     * record overwrites it in place. */
    if (qsf_srcpos_retract(&r->prod.srcpos, r->prod.txn.pos_mark,
                           r->cfg.durability != QSF_DUR_MEMORY, &e) != QSF_OK)
        QSF_LOGW("the source position of an aborted flush could not be taken back: %s", e.msg);
}

void qsf_ring_srcpos_committed(qsf_ring *r) {
    if (!r->prod.txn.pos_written)
        return;
    r->prod.txn.pos_written = false;
    r->prod.srcpos_pending_len = 0;
    int64_t acked = atomic_load_explicit(&r->acked_fsn, memory_order_acquire);
    if (!qsf_srcpos_wants_compaction(&r->prod.srcpos, acked))
        return;
    qsf_errinfo e;
    if (qsf_srcpos_compact(&r->prod.srcpos, acked, false, &e) != QSF_OK)
        QSF_LOGW("source positions not compacted (retried at a later flush): %s", e.msg);
}

int qsf_ring_srcpos_commit_empty(qsf_ring *r, qsf_errinfo *err) {
    if (r->prod.srcpos_pending_len == 0)
        return QSF_OK;
    if (qsf_latch_code(r->latch) || atomic_load_explicit(&r->dur_latched, memory_order_relaxed))
        return qsf_ring_latched_error(r, err);
    /* no frame of its own: it names the last published one, if any */
    int64_t pub = atomic_load(&r->published_fsn);
    uint32_t crc = 0;
    bool has = r->cfg.sf && published_frame_crc(r, pub, &crc);
    int rc = write_record(r, pub, has, crc, err);
    if (rc == QSF_OK && r->cfg.durability == QSF_DUR_APPEND)
        rc = qsf_srcpos_sync(&r->prod.srcpos, err);
    if (rc != QSF_OK) {
        qsf_ring_srcpos_retract(r);
        return rc;
    }
    qsf_ring_srcpos_committed(r);
    return QSF_OK;
}

int qsf_ring_srcpos_sync(qsf_ring *r, qsf_errinfo *err) {
    return r->prod.srcpos_ready ? qsf_srcpos_sync(&r->prod.srcpos, err) : QSF_OK;
}

int qsf_ring_srcpos_finalize(qsf_ring *r, qsf_errinfo *err) {
    return r->prod.srcpos_ready ? qsf_srcpos_compact(&r->prod.srcpos, INT64_MAX, true, err)
                                : QSF_OK;
}

int qsf_ring_source_position(const qsf_ring *r, bool acked, void *buf, size_t cap, size_t *len,
                             int64_t *fsn, qsf_errinfo *err) {
    int64_t limit =
        atomic_load_explicit(acked ? &r->acked_fsn : &r->published_fsn, memory_order_acquire);
    const qsf_srcpos_rec *rec =
        r->prod.srcpos_ready ? qsf_srcpos_find(&r->prod.srcpos, limit) : NULL;
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
