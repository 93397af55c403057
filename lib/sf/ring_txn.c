/* A flush is published all or nothing (ring.h, qsf_ring_txn_*).
 *
 * Its frames are written where any frame goes (ring_append.c) but stay
 * invisible: published_off of the segments they are in does not move, and a
 * segment they filled is not sealed, so the reader neither sees them nor
 * moves past them. Commit publishes and seals in chain order, then stores
 * publishedFsn. Abort makes the ring as it was before the flush:
 *
 *   before:   ... [A: old frames | F1 F2]  ->  [B: F3 F4]  ->  [C: F5]    manifest activeBase = C
 *   step 1:   zero C's frames (durable)          C is an empty active at the chain end: valid
 *   step 2:   manifest activeBase = B (fsync)    C is now an empty extra (a spare): valid
 *   repeat for B, then zero A from F1 on         A is the active again, publishedFsn unchanged
 *
 * Every state a crash can leave in between is a valid slot for qsf and for
 * the other clients, and none of it was ever published, so nothing of the
 * flush can be delivered. If an abort cannot be completed (the disk fails),
 * the latch is set: the frames stay unpublished, and the next recovery
 * removes them as the aborted flush they are. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "os/os.h"
#include "sf/sfa.h"
#include "sf/sfio.h"

#include <inttypes.h>
#include <stdio.h>

int qsf_ring_txn_begin(qsf_ring *r, qsf_errinfo *err) {
    qsf_assert_producer(r);
    if (r->prod.txn.open)
        return qsf_err_set(err, QSF_E_STATE, 0, 0, "a flush is already open on this ring");
    if (qsf_latch_code(r->latch) || atomic_load_explicit(&r->dur_latched, memory_order_relaxed))
        return qsf_ring_latched_error(r, err);
    /* Between flushes every FSN written is published: aborts give theirs back. */
    qsf_assert(r->prod.next_fsn == qsf_ring_published_fsn(r) + 1);
    r->prod.txn = (qsf_ring_txn){.open = true, .first_fsn = r->prod.next_fsn};
    return QSF_OK;
}

int qsf_ring_txn_begin_fresh(qsf_ring *r, qsf_errinfo *err) {
    int rc = qsf_ring_txn_begin(r, err);
    if (rc == QSF_OK)
        r->prod.txn.fresh = true;
    return rc;
}

bool qsf_ring_txn_started_behind(const qsf_ring *r) {
    return r->prod.txn.seg && r->prod.txn.frames_before > 0;
}

/* Seals every segment the flush filled and publishes the active one, in chain
 * order, then publishedFsn: a reader that sees the FSN also sees the frame. */
static void publish_all(qsf_ring *r) {
    qsf_assert(r->prod.txn.open && r->prod.txn.seg);
    qsf_assert(r->prod.next_fsn - 1 >=
               qsf_ring_published_fsn(r)); /* publishedFsn never moves back */
    qsf_segment *s = r->prod.txn.seg;
    for (; s != r->chain.active; s = atomic_load_explicit(&s->next, memory_order_relaxed)) {
        /* A segment of the flush before the active one: linked, not sealed yet. */
        qsf_assert(atomic_load(&s->next) && atomic_load(&s->sealed_off) == UINT64_MAX);
        qsf_seg_seal(s);
    }
    qsf_seg_publish(r->chain.active);
    atomic_store_explicit(&r->published_fsn, r->prod.next_fsn - 1, memory_order_release);
    if (atomic_load_explicit(&r->mgr.dozing, memory_order_relaxed)) {
        atomic_store_explicit(&r->mgr.dozing, false, memory_order_relaxed);
        qsf_mgr_wake(r); /* the manager backed off while idle (manager.c, next_wait) */
    }
}

/* Zeroes s from `off` on (`frames` frames), durably when `sync`: recovery must
 * never find them again once the step after this one is taken. */
static int zero_frames(qsf_ring *r, qsf_segment *s, uint64_t off, uint64_t frames, bool sync,
                       qsf_errinfo *err) {
    uint64_t end = s->append_off;
    qsf_assert_held(&r->sync_mu); /* no barrier marks the zeros durable meanwhile */
    qsf_assert(off >= atomic_load(&s->published_off)); /* only unpublished frames are taken back */
    if (end <= off)
        return QSF_OK;
    qsf_seg_unwrite(s, off, frames);
    int rc = r->cfg.sf && sync ? qsf_seg_sync_range(s, off, end, r->rec.slot.path, err) : QSF_OK;
    qsf_seg_lower_durable(s, off); /* nothing at or above off is a frame */
    return rc;
}

/* A segment taken back from the chain that cannot be the spare: gone. */
static void drop_segment(qsf_ring *r, qsf_segment *s) {
    if (r->cfg.sf)
        QSF_OS->unlinkat(r->rec.slot.dirfd, s->name, 0); /* an empty extra: recovery would too */
    uint64_t size = s->size;
    pthread_mutex_lock(&r->mu);
    while (r->chain.prefaulting == s) { /* the manager is populating it outside mu */
        r->chain.prefault_waited = true;
        pthread_cond_wait(&r->stall.space_cv, &r->mu);
    }
    bool pooled = !r->cfg.sf && r->chain.npool < QSF_MEM_POOL;
    if (pooled)
        r->chain.pool[r->chain.npool++] = s;
    else
        qsf_ring_release_bytes_locked(r, size);
    pthread_mutex_unlock(&r->mu);
    if (!pooled)
        qsf_seg_destroy(s);
}

/* Undoes the rotation from prev into s (the active one), whose frames all
 * belong to the flush: steps 1 and 2 of the diagram. */
static int unrotate(qsf_ring *r, qsf_segment *prev, qsf_segment *s, qsf_errinfo *err) {
    qsf_assert(s == r->chain.active && atomic_load(&prev->next) == s);
    int rc = zero_frames(r, s, QSF_SFA_HEADER_SIZE, s->frame_count, true, err);
    if (rc == QSF_OK && r->cfg.sf) {
        pthread_mutex_lock(&r->mf_mu);
        qsf_manifest *m = &r->rec.manifest;
        rc = qsf_manifest_correct(m, m->head_base, prev->base_seq, err);
        pthread_mutex_unlock(&r->mf_mu);
    }
    if (rc != QSF_OK)
        return rc;
    pthread_mutex_lock(&r->mu);
    atomic_store_explicit(&prev->next, NULL, memory_order_release);
    r->chain.active = prev;
    r->chain.live--;
    atomic_store_explicit(&r->plan.fsn, -1, memory_order_relaxed);
    bool spare = !r->chain.spare && !r->chain.rotating && !r->plan.planning;
    if (spare) { /* empty again, its header durable: the next rotation rebases it */
        s->early_woken = false;
        r->chain.spare = s;
        qsf_ring_wake_producers_locked(r);
    }
    pthread_mutex_unlock(&r->mu);
    if (!spare)
        drop_segment(r, s);
    return QSF_OK;
}

/* The segment before `s` in the chain, starting the walk at `from`. */
static qsf_segment *before(qsf_segment *from, qsf_segment *s) {
    qsf_segment *p = from;
    while (atomic_load_explicit(&p->next, memory_order_relaxed) != s)
        p = atomic_load_explicit(&p->next, memory_order_relaxed);
    return p;
}

/* Makes `seg` the active segment again and zeroes it from `off` on, where it
 * held `frames_before` frames: every frame written after that point goes. */
static int undo_to(qsf_ring *r, qsf_segment *seg, uint64_t off, uint64_t frames_before,
                   qsf_errinfo *err) {
    int rc = QSF_OK;
    pthread_mutex_lock(&r->sync_mu); /* no barrier may mark the zeros durable meanwhile */
    while (rc == QSF_OK && r->chain.active != seg)
        rc = unrotate(r, before(seg, r->chain.active), r->chain.active, err);
    if (rc == QSF_OK)
        rc = zero_frames(r, seg, off, seg->frame_count - frames_before,
                         r->cfg.durability != QSF_DUR_MEMORY, err);
    pthread_mutex_unlock(&r->sync_mu);
    return rc;
}

static int undo(qsf_ring *r, qsf_errinfo *err) {
    qsf_ring_txn *t = &r->prod.txn;
    if (!t->seg)
        return QSF_OK;
    int rc = undo_to(r, t->seg, t->off, t->frames_before, err);
    if (rc == QSF_OK)
        r->prod.next_fsn = t->first_fsn;
    return rc;
}

/* `whole`: every frame of the flush was written (its barrier failed), so a
 * later recovery may find it complete and deliver it. */
static int abort_txn(qsf_ring *r, bool whole, qsf_errinfo *err) {
    if (!r->prod.txn.open)
        return QSF_OK;
    int64_t first = r->prod.txn.first_fsn, n = r->prod.next_fsn - first;
    qsf_ring_srcpos_retract(r);
    int rc = undo(r, err);
    r->prod.txn.open = false;
    r->prod.txn.undo_owed = rc != QSF_OK;
    qsf_errinfo e;
    if (rc == QSF_OK && qsf_ring_manifest_back(r, &e) != QSF_OK) /* else retried (owed) */
        QSF_LOGD("manifest not brought back after an aborted flush yet: %s", e.msg);
    if (rc != QSF_OK) {
        qsf_latch_set(r->latch, rc,
                      "cannot undo an unpublished flush of %" PRId64 " frames (FSN %" PRId64
                      "..%" PRId64 "): %.300s; they were never sent%s",
                      n, first, first + n - 1, err ? err->msg : qsf_err_str(rc),
                      whole ? ", but the next sender may find the flush complete on disk and "
                              "deliver it (in doubt)"
                            : ", and the next sender's recovery removes them");
        qsf_latch_get(r->latch, err);
    }
    return rc;
}

int qsf_ring_txn_abort(qsf_ring *r, qsf_errinfo *err) {
    qsf_assert_producer(r);
    return abort_txn(r, false, err);
}

void qsf_ring_txn_mark(const qsf_ring *r, qsf_ring_mark *m) {
    const qsf_ring_txn *t = &r->prod.txn;
    *m = (qsf_ring_mark){
        .seg = t->seg ? r->chain.active : NULL, .fsn = r->prod.next_fsn, .nsegs = t->nsegs};
    if (m->seg) {
        m->off = r->chain.active->append_off;
        m->frames = r->chain.active->frame_count;
    }
}

/* The flush stays open, as it was at the mark. If the undo fails the whole
 * flush is aborted instead (and the latch set if even that fails). */
int qsf_ring_txn_rollback(qsf_ring *r, const qsf_ring_mark *m, qsf_errinfo *err) {
    qsf_assert_producer(r);
    qsf_ring_txn *t = &r->prod.txn;
    if (!t->open)
        return qsf_err_set(err, QSF_E_STATE, 0, 0, "no flush is open on this ring");
    qsf_segment *seg = (qsf_segment *) m->seg;
    qsf_assert(m->fsn >= t->first_fsn && m->fsn <= r->prod.next_fsn); /* a mark of this flush */
    int rc = seg ? undo_to(r, seg, m->off, m->frames, err) : undo(r, err);
    if (rc != QSF_OK) {
        qsf_errinfo e;
        abort_txn(r, false, &e);
        return rc;
    }
    qsf_ring_srcpos_retract(r); /* written only before the last frame, after any mark */
    r->prod.next_fsn = m->fsn;
    t->nsegs = m->nsegs;
    t->last = seg;
    if (!seg)
        t->seg = NULL;
    qsf_errinfo e;
    if (qsf_ring_manifest_back(r, &e) != QSF_OK) /* else retried, as after an abort */
        QSF_LOGD("manifest not brought back after a rollback yet: %s", e.msg);
    return QSF_OK;
}

int qsf_ring_txn_retry_undo(qsf_ring *r, qsf_errinfo *err) {
    if (!r->prod.txn.undo_owed)
        return QSF_OK;
    int rc = undo(r, err); /* each step is idempotent: it goes on where it stopped */
    r->prod.txn.undo_owed = rc != QSF_OK;
    return rc;
}

int qsf_ring_txn_commit(qsf_ring *r, qsf_errinfo *err) {
    qsf_assert_producer(r);
    if (!r->prod.txn.open)
        return qsf_err_set(err, QSF_E_STATE, 0, 0, "no flush is open on this ring");
    if (!r->prod.txn.seg) {
        r->prod.txn.open = false;
        return qsf_ring_srcpos_commit_empty(r, err);
    }
    qsf_assert(r->prod.txn.last == r->chain.active && r->prod.next_fsn > r->prod.txn.first_fsn);
    /* the position after the frames, before the barrier that covers both */
    int rc = qsf_ring_srcpos_write(r, r->prod.next_fsn - 1, err);
    if (rc == QSF_OK && r->cfg.durability == QSF_DUR_APPEND)
        rc = qsf_barrier_sync_written(r, err);
    if (rc == QSF_OK)
        rc = qsf_fault_check(QSF_FP_FLUSH_SYNCED, err);
    if (rc != QSF_OK) {
        qsf_errinfo e;
        if (abort_txn(r, true, &e) != QSF_OK && err)
            err->flags |= QSF_ERRF_IN_DOUBT; /* its bytes may still reach the disk */
        return rc;
    }
    publish_all(r);
    r->prod.txn.open = false;
    qsf_ring_srcpos_committed(r);
    return QSF_OK;
}

int qsf_ring_append(qsf_ring *r, const void *payload, size_t len, int64_t *fsn_out,
                    qsf_errinfo *err) {
    int rc = qsf_ring_txn_begin(r, err);
    if (rc != QSF_OK)
        return rc;
    rc = qsf_ring_txn_append(r, payload, len, fsn_out, err);
    if (rc == QSF_OK)
        return qsf_ring_txn_commit(r, err);
    qsf_errinfo e;
    qsf_ring_txn_abort(r, &e);
    return rc;
}
