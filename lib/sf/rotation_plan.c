/* Planned rotation: the spare's header sync moved off the producer's path.
 *
 * Rotation (docs/DURABILITY.md §6) must make the new segment's header durable,
 * holding baseSeq = the FSN after the full segment's last frame, before the
 * manifest names it and before any frame goes into it. Done at the moment the
 * active segment is full, that sync stalls the producer: it waits for the
 * device (0.3-0.6 ms here; 2-3 ms while the header shared a 2 MiB folio with
 * the first frames' pages, see qsf_seg_create_file), which with 4 MiB
 * segments and 64 KiB frames more than doubled the time of a flush-heavy SF
 * run.
 *
 * So the spare thread (spares.c) guesses the FSN at which the active segment will fill, from
 * the average frame size of the segment sealed before it, writes that baseSeq
 * into the spare's header and syncs it, ahead of time:
 *
 *     active  [base ........ X-1 | unused tail ]   spare  [hdr: baseSeq X, synced]
 *                                 ^ the producer switches here, at FSN X,
 *                                   even if the next frame would still fit
 *
 * When the producer is about to publish FSN X it rotates at once; the
 * rotation then only updates the manifest. The barrier order is unchanged:
 * the header is durable before the manifest names the segment, and the
 * manifest before the first frame. If the guess was wrong (frames grew and
 * the segment filled before X), rotation rewrites and syncs the header as
 * before; nothing is lost but the head start. A spare whose header names a
 * future FSN is, to recovery, an empty extra segment like any other (docs/FORMAT.md §6.11).
 *
 * The guess keeps 1/32 of the room as slack, so frames up to ~3 % larger than
 * the last segment's average still reach X before the segment is full; that
 * slack is the space a planned rotation leaves unused. Frames that turned out
 * smaller (more room left at X than the slack and a frame) drop the plan
 * rather than waste the segment's tail. Not used with periodic durability:
 * there the rotation must wait for the segment's checkpoint anyway. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "log.h"
#include "os/os.h"
#include "sf/sfa.h"

#include <inttypes.h>

/* Under mu: the FSN the active segment `a` is expected to end at, or -1 when
 * there is no basis for a guess or the producer is already past half of the
 * segment. The sync takes milliseconds, and a producer that got to the guessed
 * FSN meanwhile would pass it, find the spare busy when the segment is full,
 * wait for the sync and then rewrite and sync the header again itself: a plan
 * only pays when the producer is far from the end (a paced producer, right
 * after a rotation), not when it is racing to it. */
static int64_t predict_end_fsn_locked(const qsf_ring *r, const qsf_segment *a) {
    qsf_assert_held(&r->mu);
    if (r->plan.frame_bytes_avg == 0 ||
        atomic_load_explicit(&a->published_off, memory_order_relaxed) > a->size / 2)
        return -1;
    uint64_t room = a->size - QSF_SFA_HEADER_SIZE;
    uint64_t frames = (room - room / 32) / r->plan.frame_bytes_avg;
    if (frames < 2)
        return -1;
    int64_t x = a->base_seq + (int64_t) frames;
    return x > qsf_ring_published_fsn(r) + 1 ? x : -1;
}

/* The first pages of a planned spare populated with `memory` durability, after
 * its header sync (which writes every dirty page of the file: see
 * qsf_seg_prefault). The first fault makes the 2 MiB folio that holds the
 * header, reading its block back; the rest is populated just ahead of the
 * producer (manager.c, prefault_active). */
#define SPARE_PREFAULT ((uint64_t) 256 << 10)

void qsf_plan_rotation(qsf_ring *r) {
    /* periodic: at the planned FSN the full segment is almost never durable
     * yet, so the rotation would wait for a checkpoint instead; no plan. */
    if (!r->cfg.sf || r->cfg.durability == QSF_DUR_PERIODIC)
        return;
    qsf_assert(qsf_ring_on(&r->spr.self)); /* an SF ring's spare thread */
    pthread_mutex_lock(&r->mu);
    qsf_segment *sp = r->chain.spare;
    int64_t x = -1;
    if (sp && !r->chain.rotating && !sp->header_durable && atomic_load(&r->plan.fsn) < 0)
        x = predict_end_fsn_locked(r, r->chain.active);
    if (x < 0) {
        pthread_mutex_unlock(&r->mu);
        return;
    }
    qsf_assert(!r->plan.planning); /* one planner: the spare thread */
    r->plan.planning = true;       /* the producer leaves the spare alone meanwhile */
    pthread_mutex_unlock(&r->mu);

    qsf_errinfo e;
    int rc = qsf_seg_rebase(sp, x, r->rec.slot.path, &e);
    if (rc == QSF_OK) {
        (void) QSF_FAULT_POINT(QSF_FP_SPARE_REBASED);
        rc = qsf_seg_sync_header(sp, r->rec.slot.path, &e);
    }
    if (rc == QSF_OK && r->cfg.durability == QSF_DUR_MEMORY)
        qsf_seg_prefault(sp, 0, SPARE_PREFAULT); /* still planning: no one else touches it */

    pthread_mutex_lock(&r->mu);
    qsf_assert(r->plan.planning && r->chain.spare == sp); /* nobody took or replaced it meanwhile */
    r->plan.planning = false;
    if (rc == QSF_OK)
        atomic_store(&r->plan.fsn, x);
    else /* rotation will rewrite and sync the header itself */
        QSF_LOGD("planned rotation at FSN %" PRId64 " abandoned: %s", x, e.msg);
    qsf_ring_wake_producers_locked(r);
    pthread_mutex_unlock(&r->mu);
}
