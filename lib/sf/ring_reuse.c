/* Reusing the active segment in place when no spare can be created.
 *
 * A disk too full for a second segment (observed: a 2 MB .symbol-dict and one
 * 3 MiB segment on an 8 MiB filesystem) used to leave the producer waiting
 * for a spare that could not be made, with every frame acknowledged, until
 * the deadline, again and again: QSF_E_FULL for as long as the disk stayed
 * full. When the active segment is the only live one and everything in it is
 * acknowledged, nothing in it is needed any more, so it becomes the next
 * segment itself:
 *
 *   step 1  .ack-watermark = ackedFsn (record + fsync): covers every frame in it
 *   step 2  zero its frames, baseSeq := publishedFsn + 1 (the header), then
 *           msync + fdatasync                      the segment is empty
 *   step 3  manifest headBase = activeBase = the new baseSeq (record + fsync)
 *
 * Crash states: before step 2 completes, the old frames are still there (or,
 * after a process crash in the middle of it, zeros under the old header: an
 * empty active at the old base, the watermark above publishedFsn, a warning
 * and nothing replayed); after step 2 and before step 3 the manifest names the
 * old base with headBase == activeBase, no data and only an empty segment
 * above it: the slot starts fresh (docs/FORMAT.md §6.8); after step 3 it
 * is an ordinary slot. Nothing unacknowledged is ever lost. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "sf/sfa.h"

#include <inttypes.h>
#include <stdio.h>

bool qsf_ring_reusable_locked(const qsf_ring *r) {
    qsf_assert_held(&r->mu);
    const qsf_segment *a = r->chain.active;
    if (r->prod.reuse_owed) /* reused, its manifest step failed: retried, spare or not */
        return !r->chain.rotating && !r->plan.planning;
    if (!r->cfg.sf || r->chain.spare || r->chain.rotating || r->plan.planning ||
        r->chain.head != a || r->prod.txn.seg)
        return false;
    return qsf_ring_acked_fsn(r) >= qsf_ring_published_fsn(r);
}

/* Steps 1 and 2. */
static int reset_active(qsf_ring *r, qsf_segment *a, int64_t base, qsf_errinfo *err) {
    qsf_assert(!r->prod.txn.seg); /* no frame of the open flush is in it */
    qsf_assert(qsf_ring_acked_fsn(r) >= qsf_ring_published_fsn(r)); /* every frame acknowledged */
    uint64_t end = a->append_off;
    int rc = qsf_ring_persist_acked(r, err);
    if (rc == QSF_OK)
        rc = qsf_watermark_sync(&r->rec.watermark, err);
    if (rc != QSF_OK)
        return rc;
    pthread_mutex_lock(&r->sync_mu); /* no checkpoint marks the old range durable meanwhile */
    pthread_mutex_lock(&r->mu);
    qsf_seg_reset_in_place(a, base);
    atomic_store_explicit(&r->plan.fsn, -1, memory_order_relaxed);
    pthread_mutex_unlock(&r->mu);
    rc = qsf_seg_sync_range(a, 0, end, r->rec.slot.path, err);
    qsf_seg_lower_durable(a, QSF_SFA_HEADER_SIZE);
    pthread_mutex_unlock(&r->sync_mu);
    if (rc == QSF_OK)
        a->header_durable = true;
    return rc;
}

int qsf_ring_reuse_active(qsf_ring *r, qsf_errinfo *err) {
    qsf_assert_producer(r);
    qsf_segment *a = r->chain.active;
    int64_t old_base = a->base_seq, base = qsf_ring_published_fsn(r) + 1;
    int rc = a->frame_count > 0 ? reset_active(r, a, base, err) : QSF_OK;
    if (rc == QSF_OK) {
        pthread_mutex_lock(&r->mf_mu);
        rc = qsf_manifest_write(&r->rec.manifest, base, base, NULL, err);
        if (rc == QSF_OK)
            rc = qsf_manifest_sync(&r->rec.manifest, err);
        pthread_mutex_unlock(&r->mf_mu);
    }
    if (rc != QSF_OK) /* the rotation is owed, as after any failed rotation barrier */
        return rc;
    char why[QSF_ERRINFO_MSG_MAX + 48];
    pthread_mutex_lock(&r->mu); /* the spare thread and the manager write them */
    if (r->stall.create_err[0] || !r->stall.trim_err[0])
        snprintf(why, sizeof why, "no new segment could be created (%s)", r->stall.create_err);
    else
        snprintf(why, sizeof why, "acknowledged segments cannot be removed (%s)",
                 r->stall.trim_err);
    pthread_mutex_unlock(&r->mu);
    QSF_LOGW("%s: reusing %s/%s, whose frames %" PRId64 "..%" PRId64
             " are all acknowledged, from FSN %" PRId64,
             why, r->rec.slot.path, a->name, old_base, base - 1, base);
    return QSF_OK;
}
