/* The producer path: writing the frames of a flush, rotation
 * (docs/DURABILITY.md §6) and backpressure (docs/DURABILITY.md §3.1, §3.3;
 * docs/ERRORS.md §3). A flush is published all at once, and undone on abort,
 * in ring_txn.c. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "os/os.h"
#include "sf/sfa.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define WAIT_STEP_NS ((int64_t) 10 * 1000000) /* real-time bound of one wait */

/* try_rotate: rotated; must wait (no spare, a checkpoint first, a failed
 * barrier); waiting for the spare thread's planned header sync, which stands in for
 * the producer's own. */
enum { TRY_ROTATED = 0, TRY_WAIT = 1, TRY_PLANNING = 2 };

/* Early wake (docs/DURABILITY.md §2.4): once per active segment, when it crosses
 * 3/4 of its size, make sure a spare is being prepared (spares.c). */
static void maybe_early_wake(qsf_ring *r, qsf_segment *a) {
    if (a->early_woken || a->append_off < (a->size >> 2) * 3)
        return;
    a->early_woken = true;
    pthread_mutex_lock(&r->mu);
    if (!r->chain.spare)
        qsf_spares_kick_locked(r);
    pthread_mutex_unlock(&r->mu);
}

/* The frame just written at `off` in s belongs to the open flush: its FSN
 * assigned, where the flush started remembered for an abort. */
static void frame_joins_txn(qsf_ring *r, qsf_segment *s, uint64_t off, int64_t *fsn_out) {
    qsf_assert(r->prod.txn.open &&
               s == r->chain.active); /* frames go into the active segment, in a flush */
    qsf_assert(!r->prod.txn.seg || r->prod.next_fsn >= r->prod.txn.first_fsn);
    qsf_ring_txn *t = &r->prod.txn;
    if (!t->seg) {
        t->seg = s;
        t->off = off;
        t->frames_before = s->frame_count - 1;
        t->nsegs = 1;
    } else if (t->last != s) {
        t->nsegs++;
    }
    t->last = s;
    int64_t fsn = r->prod.next_fsn++;
    if (fsn_out)
        *fsn_out = fsn;
}

/* Writes the frame into s: 1, and it belongs to the open flush; 0 when it
 * does not fit; -1 with err set when the file write failed. */
static int write_frame(qsf_ring *r, qsf_segment *s, const void *payload, uint32_t len,
                       int64_t *fsn_out, qsf_errinfo *err) {
    uint64_t off = s->append_off;
    int rc = s->frames_by_pwrite ? qsf_seg_write_file(s, payload, len, r->rec.slot.path, err)
                                 : qsf_seg_write(s, payload, len);
    if (rc == 1)
        frame_joins_txn(r, s, off, fsn_out);
    return rc;
}

int qsf_ring_manifest_back(qsf_ring *r, qsf_errinfo *err) {
    qsf_assert_producer(r);
    if (!r->cfg.sf)
        return QSF_OK;
    pthread_mutex_lock(&r->mf_mu); /* the manager writes the manifest too (trim) */
    qsf_manifest *m = &r->rec.manifest;
    bool ahead = m->active_base > r->chain.active->base_seq;
    int rc = ahead ? qsf_manifest_correct(m, m->head_base, r->chain.active->base_seq, err) : QSF_OK;
    pthread_mutex_unlock(&r->mf_mu);
    if (ahead && rc == QSF_OK)
        r->prod.rotation_owed = false; /* what it owed was this; any other owed step stays owed */
    return rc;
}

/* Rotation barriers, outside the ring mutex: rebase the spare, sync its
 * header, then move the manifest's activeBase (record write + fsync). A
 * planned spare (rotation_plan.c) already holds the right baseSeq durably. */
static int rotation_barriers(qsf_ring *r, qsf_segment *a, qsf_segment *sp, qsf_errinfo *err) {
    /* a manifest left ahead by an aborted flush is brought back before the
     * spare's header changes: it must never name a base no segment has */
    int rc = qsf_ring_manifest_back(r, err);
    if (rc != QSF_OK)
        return rc;
    bool planned = sp->header_durable && sp->base_seq == qsf_seg_end_fsn(a);
    rc = planned ? QSF_OK : qsf_seg_rebase(sp, qsf_seg_end_fsn(a), r->rec.slot.path, err);
    if (rc != QSF_OK || !r->cfg.sf)
        return rc;
    if (!planned) {
        (void) QSF_FAULT_POINT(QSF_FP_SPARE_REBASED);
        rc = qsf_seg_sync_header(sp, r->rec.slot.path, err);
        if (rc != QSF_OK)
            return rc;
    }
    pthread_mutex_lock(&r->mf_mu);
    qsf_manifest *m = &r->rec.manifest;
    rc = qsf_manifest_write(m, m->head_base, sp->base_seq, NULL, err);
    if (rc == QSF_OK)
        rc = qsf_manifest_sync(m, err);
    pthread_mutex_unlock(&r->mf_mu);
    return rc;
}

/* Under mu, the cap reached: whether segments whose frames are all
 * acknowledged still count against it (in the chain, or on their way out
 * with the manager). Then room comes from the manager, not from the server:
 * blaming acknowledgements would be false (every published frame may be
 * acknowledged already). */
static bool acked_segments_owned_locked(qsf_ring *r) {
    qsf_assert_held(&r->mu);
    int64_t acked = qsf_ring_acked_fsn(r);
    uint64_t unacked = 0;
    for (qsf_segment *s = r->chain.head; s;
         s = atomic_load_explicit(&s->next, memory_order_acquire))
        if (s == r->chain.active || qsf_seg_end_fsn(s) - 1 > acked)
            unacked += s->size;
    return atomic_load(&r->owned_bytes) > unacked;
}

static int no_spare_cause_locked(qsf_ring *r) {
    qsf_assert_held(&r->mu);
    if (qsf_ring_spare_fits_locked(r))
        return r->stall.create_err[0] ? QSF_STALL_CREATE : QSF_STALL_SPARE;
    return acked_segments_owned_locked(r) ? QSF_STALL_TRIM : QSF_STALL_SPACE;
}

/* Under mu: non-zero (and the cause noted) when there is no spare to rotate
 * into yet (2 while the spare thread writes the spare's planned header), or periodic
 * mode must first make the full segment durable. */
static int rotation_blocked_locked(qsf_ring *r, qsf_segment *a) {
    qsf_assert_held(&r->mu);
    qsf_assert_producer(r); /* it alone writes the stall cause */
    /* one rotation at a time, from the chain's last segment into another */
    qsf_assert(!r->chain.rotating && !atomic_load(&a->next) && r->chain.spare != a);
    qsf_ring_spare_from_pool_locked(r);
    if (!r->chain.spare) {
        r->stall.cause = no_spare_cause_locked(r);
        return 1;
    }
    if (r->plan.planning) { /* the spare thread is writing the spare's header */
        r->stall.cause = QSF_STALL_PLAN;
        return 2;
    }
    if (r->cfg.durability == QSF_DUR_PERIODIC &&
        atomic_load(&a->durable_off) < atomic_load(&a->written_off)) {
        r->mgr.sync_requested = true;
        r->stall.cause = QSF_STALL_PERIODIC;
        return 1;
    }
    return 0;
}

/* Rotates to the spare if one is ready. TRY_ROTATED, or another TRY_* with
 * *gen set to the wake generation observed while deciding. */
static int try_rotate(qsf_ring *r, uint64_t *gen) {
    qsf_assert_producer(r);
    qsf_segment *a = r->chain.active;
    pthread_mutex_lock(&r->mu);
    *gen = r->stall.wake_gen;
    int blocked = rotation_blocked_locked(r, a);
    if (blocked) {
        qsf_mgr_kick_locked(r); /* a checkpoint or a plan to finish, or no spare */
        if (!r->chain.spare)
            qsf_spares_kick_locked(r);
        pthread_mutex_unlock(&r->mu);
        return blocked == 2 ? TRY_PLANNING : TRY_WAIT;
    }
    qsf_segment *sp = r->chain.spare;
    r->chain.rotating = true;
    pthread_mutex_unlock(&r->mu);

    qsf_errinfo e;
    int rc = rotation_barriers(r, a, sp, &e);
    /* Once the manifest step has begun it may name the spare (the record
     * written, its fsync failed): from then on nothing may be appended to the
     * active segment, even a frame small enough to fit, or the slot would
     * end in an FSN gap. Owed until a rotation succeeds. */
    r->prod.rotation_owed = rc != QSF_OK;

    pthread_mutex_lock(&r->mu);
    r->chain.rotating = false;
    if (rc != QSF_OK) { /* the rotation did not happen; the spare stays the spare */
        snprintf(r->prod.rotate_err, sizeof r->prod.rotate_err, "%s", e.msg);
        r->stall.cause = QSF_STALL_ROTATE;
        *gen = r->stall.wake_gen;
        pthread_mutex_unlock(&r->mu);
        return TRY_WAIT;
    }
    qsf_assert(r->chain.spare == sp); /* nobody replaces a spare while it is rotated into */
    r->chain.spare = NULL;
    r->prod.rotate_err[0] = 0;
    if (a->frame_count > 0)
        r->plan.frame_bytes_avg = (a->append_off - QSF_SFA_HEADER_SIZE) / a->frame_count;
    atomic_store_explicit(&r->plan.fsn, -1, memory_order_relaxed);
    atomic_store_explicit(&a->next, sp, memory_order_release);
    /* Without frames of the open flush `a` is final: sealed now, so the reader
     * may move on (and the manager trim it) at once. Otherwise when the flush
     * commits (ring_txn.c). */
    if (r->prod.txn.last != a)
        qsf_seg_seal(a);
    r->chain.active = sp;
    r->chain.live++;
    qsf_mgr_kick_locked(r);    /* the sealed segment may be trimmable */
    qsf_spares_kick_locked(r); /* the next spare */
    pthread_mutex_unlock(&r->mu);
    return TRY_ROTATED;
}

/* Waits until woken (wake_gen moves), a terminal failure is latched, or one
 * wait step passes. Returns the latched terminal code or 0. */
static int wait_for_space(qsf_ring *r, uint64_t gen, int64_t remaining_ns) {
    qsf_assert_producer(r);
    pthread_mutex_lock(&r->mu);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t step = remaining_ns < WAIT_STEP_NS ? remaining_ns : WAIT_STEP_NS;
    int64_t ns = ts.tv_nsec + step;
    ts.tv_sec += ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    while (r->stall.wake_gen == gen && !qsf_latch_code(r->latch)) {
        if (pthread_cond_timedwait(&r->stall.space_cv, &r->mu, &ts) != 0)
            break;
    }
    int code = qsf_latch_code(r->latch);
    pthread_mutex_unlock(&r->mu);
    return code;
}

/* What an episode waits for, in a few words (its log line, its events). */
static const char *waiting_for(const qsf_ring *r, int cause) {
    switch (cause) {
    case QSF_STALL_TRIM:
        return r->cfg.sf ? "acknowledged segments to be removed"
                         : "acknowledged segments to be freed";
    case QSF_STALL_SPARE:
        return "the next segment to be prepared";
    case QSF_STALL_PERIODIC:
        return "a periodic disk sync";
    case QSF_STALL_CREATE:
        return "a new segment (creating one failed)";
    case QSF_STALL_ROTATE:
        return "a switch to a new segment (a barrier failed)";
    default:
        return "acknowledgements";
    }
}

/* The ring's own figures, from one snapshot: the producer is the one
 * waiting, so publishedFsn holds, and ackedFsn is read once. */
static void space_text(qsf_ring *r, int cause, char *buf, size_t cap) {
    int64_t pub = qsf_ring_published_fsn(r), acked = qsf_ring_acked_fsn(r);
    pthread_mutex_lock(&r->mu);
    char trim_err[QSF_ERRINFO_MSG_MAX];
    snprintf(trim_err, sizeof trim_err, "%s", r->stall.trim_err);
    pthread_mutex_unlock(&r->mu);
    if (cause == QSF_STALL_TRIM && trim_err[0])
        snprintf(buf, cap,
                 "acknowledged segments cannot be removed (retrying): %.250s "
                 "(sf_max_total_bytes=%" PRIu64 ")",
                 trim_err, r->cfg.cap_bytes);
    else if (cause == QSF_STALL_TRIM || acked >= pub)
        snprintf(buf, cap,
                 "waiting for acknowledged segments to be %s (sf_max_total_bytes=%" PRIu64
                 "; acked FSN %" PRId64 " of published %" PRId64 ")",
                 r->cfg.sf ? "removed" : "freed", r->cfg.cap_bytes, acked, pub);
    else
        snprintf(
            buf, cap,
            "acknowledgements not keeping up (the server is slow, or sf_max_total_bytes=%" PRIu64
            " is too small): acked FSN %" PRId64 " of published %" PRId64,
            r->cfg.cap_bytes, acked, pub);
}

static void cause_text(qsf_ring *r, char *buf, size_t cap) {
    pthread_mutex_lock(&r->mu);
    int cause = r->stall.cause;
    switch (cause) {
    case QSF_STALL_PERIODIC:
        snprintf(buf, cap, "waiting for a periodic disk sync (sf_sync_interval_millis=%" PRId64 ")",
                 r->cfg.sync_interval_ms);
        break;
    case QSF_STALL_CREATE:
        snprintf(buf, cap, "cannot create a new segment: %.300s", r->stall.create_err);
        break;
    case QSF_STALL_ROTATE:
        snprintf(buf, cap, "cannot switch to a new segment: %.300s", r->prod.rotate_err);
        break;
    case QSF_STALL_PLAN:
        snprintf(buf, cap, "waiting for the next segment's header to reach the disk");
        break;
    case QSF_STALL_SPARE:
        snprintf(buf, cap, "waiting for the next segment to be prepared");
        break;
    default:
        buf[0] = 0;
    }
    pthread_mutex_unlock(&r->mu);
    if (!buf[0])
        space_text(r, cause, buf, cap);
}

#define FULL_CAUSE_AT " ms: " /* ends the message's head: the cause follows */

static int full_error(qsf_ring *r, int64_t waited_ns, qsf_errinfo *err) {
    char cause[QSF_RING_FULL_CAUSE_MAX];
    cause_text(r, cause, sizeof cause);
    return qsf_err_set(err, QSF_E_FULL, QSF_ERRF_RETRIABLE, 0,
                       "store-and-forward ring full for %" PRId64 FULL_CAUSE_AT "%s",
                       waited_ns / 1000000, cause);
}

/* The producer alone sets stall_cause, so it still names the wait that
 * failed. */
bool qsf_ring_full_awaits_acks(qsf_ring *r) {
    qsf_assert_producer(r);
    pthread_mutex_lock(&r->mu);
    bool space = r->stall.cause == QSF_STALL_SPACE;
    pthread_mutex_unlock(&r->mu);
    return space;
}

/* The status shares the cause's room, as when it was written into it. */
void qsf_ring_full_add_status(qsf_errinfo *err, const char *status) {
    char *cause = strstr(err->msg, FULL_CAUSE_AT);
    if (!cause)
        return;
    cause += strlen(FULL_CAUSE_AT);
    size_t n = strlen(cause);
    if (n + 2 < QSF_RING_FULL_CAUSE_MAX)
        snprintf(cause + n, QSF_RING_FULL_CAUSE_MAX - n, "; %s", status);
}

int qsf_ring_latched_error(qsf_ring *r, qsf_errinfo *err) {
    int code = qsf_latch_get(r->latch, err);
    if (code)
        return code;
    pthread_mutex_lock(&r->mu);
    qsf_err_copy(err, &r->stall.dur_err);
    code = r->stall.dur_err.code ? r->stall.dur_err.code : QSF_E_DURABILITY;
    pthread_mutex_unlock(&r->mu);
    return code;
}

/* ---- backpressure episodes (ring.h) ---- */

static int stall_cause(qsf_ring *r) {
    pthread_mutex_lock(&r->mu);
    int c = r->stall.cause;
    pthread_mutex_unlock(&r->mu);
    return c;
}

static void episode_report(qsf_ring *r, qsf_ring_episode *ep, int phase, int64_t waited) {
    ep->waited_ns = waited;
    ep->acked_now = qsf_ring_acked_fsn(r);
    ep->waiting = waiting_for(r, stall_cause(r));
    ep->cause[0] = 0;
    if (phase != QSF_RING_EPISODE_END)
        cause_text(r, ep->cause, sizeof ep->cause);
    if (r->prod.episode_fn)
        r->prod.episode_fn(r->prod.episode_user, phase, ep);
    else if (phase == QSF_RING_EPISODE_LONG)
        QSF_LOGW("store-and-forward ring backpressured for %" PRId64 " ms: %s", waited / 1000000,
                 ep->cause);
}

static void episode_begin(qsf_ring *r, qsf_ring_episode *ep) {
    atomic_fetch_add(&r->stalls, 1);
    memset(ep, 0, sizeof *ep);
    ep->published = qsf_ring_published_fsn(r);
    ep->acked_begin = qsf_ring_acked_fsn(r);
    episode_report(r, ep, QSF_RING_EPISODE_BEGIN, 0);
}

/* The next FSN is the one the spare was planned for: rotate now, although the
 * active segment may have a little room left. Otherwise the plan is dropped
 * and the segment fills up as usual: when the frames turned out smaller than
 * planned (more room left than the guess's slack and a frame: rotating would
 * waste it), or the rotation could not happen (no spare, a checkpoint first,
 * a failed barrier, which leaves the rotation owed: see try_rotate). */
static void rotate_as_planned(qsf_ring *r) {
    qsf_segment *a = r->chain.active;
    uint64_t room = a->size - QSF_SFA_HEADER_SIZE;
    uint64_t gen;
    if (a->size - a->append_off <= room / 16 + r->plan.frame_bytes_avg &&
        try_rotate(r, &gen) == TRY_ROTATED)
        return; /* try_rotate cleared the plan */
    atomic_store_explicit(&r->plan.fsn, -1, memory_order_relaxed);
}

/* Segments the ring may ever hold at once: the cap less the dictionary file,
 * at least the live-segment floor. */
static uint32_t cap_segments(const qsf_ring *r) {
    uint64_t dict = atomic_load(&r->dict_bytes);
    uint64_t room = r->cfg.cap_bytes > dict ? r->cfg.cap_bytes - dict : 0;
    uint64_t n = room / r->cfg.seg_bytes;
    return n < QSF_MIN_LIVE_SEGMENTS ? QSF_MIN_LIVE_SEGMENTS : (uint32_t) n;
}

/* The open flush fills every segment the ring may hold and needs one more:
 * no acknowledgement can ever make room for it (its own segments are freed
 * only once it is published). */
static int never_fits(qsf_ring *r, uint32_t len, qsf_errinfo *err) {
    uint32_t cap = cap_segments(r);
    if (!r->prod.txn.seg || r->prod.txn.nsegs + 1 <= cap)
        return QSF_OK;
    return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                       "flush too large for the ring: its first %" PRId64
                       " frames already fill %u segments of %" PRIu64
                       " bytes and the next (%u bytes) needs another, but sf_max_total_bytes="
                       "%" PRIu64 " (less %" PRIu64
                       " bytes of .symbol-dict) holds %u; nothing was published (raise "
                       "sf_max_total_bytes, or flush fewer rows at a time)",
                       r->prod.next_fsn - r->prod.txn.first_fsn, r->prod.txn.nsegs,
                       r->cfg.seg_bytes, len, r->cfg.cap_bytes, atomic_load(&r->dict_bytes), cap);
}

/* No spare can be created (the disk is full), or none fits because trims
 * keep failing (their segments' files stay, and stay counted), but the active
 * segment holds only acknowledged frames: it becomes the next segment itself. */
static bool reuse_in_place(qsf_ring *r) {
    qsf_segment *a = r->chain.active;
    pthread_mutex_lock(&r->mu);
    bool no_spare = r->stall.cause == QSF_STALL_CREATE ||
                    (r->stall.cause == QSF_STALL_TRIM && r->stall.trim_err[0]);
    bool ok = (r->prod.reuse_owed || no_spare) && qsf_ring_reusable_locked(r);
    pthread_mutex_unlock(&r->mu);
    qsf_errinfo e;
    if (!ok)
        return false;
    if (qsf_ring_reuse_active(r, &e) != QSF_OK) {
        QSF_LOGW("cannot reuse the acknowledged active segment: %s", e.msg);
        /* Once its frames are gone under a new base, the segment takes no
         * frame before its manifest step is done: the manifest still names
         * the old base, and frames above it would be an FSN gap. */
        r->prod.reuse_owed = r->prod.rotation_owed = a->frame_count == 0;
        return false;
    }
    r->prod.reuse_owed = r->prod.rotation_owed = false;
    return true;
}

/* The active segment is full: rotate, or wait for a spare until the
 * deadline. *ep is the episode once waiting for room began (ep->waiting set). */
static int rotate_or_wait(qsf_ring *r, const void *payload, uint32_t len, int64_t *fsn_out,
                          qsf_ring_episode *ep, qsf_errinfo *err) {
    int64_t start = qsf_ring_now_ns(), deadline = r->cfg.append_deadline_ms * 1000000;
    bool warned = false;
    for (;;) {
        uint64_t gen;
        int t = TRY_WAIT;
        if (r->prod.reuse_owed) { /* finished before anything else, even with a spare */
            pthread_mutex_lock(&r->mu);
            gen = r->stall.wake_gen;
            pthread_mutex_unlock(&r->mu);
        } else {
            t = try_rotate(r, &gen);
        }
        if (t == TRY_PLANNING) {
            /* Not backpressure: the spare thread's header sync stands in for the one
             * this rotation would otherwise run itself, so neither the deadline
             * nor the stall count applies. */
            if (wait_for_space(r, gen, WAIT_STEP_NS))
                return qsf_ring_latched_error(r, err);
            continue;
        }
        if (t == TRY_ROTATED || (t == TRY_WAIT && reuse_in_place(r))) {
            int w = write_frame(r, r->chain.active, payload, len, fsn_out, err);
            if (w == 0)
                return qsf_err_set(err, QSF_E_INTERNAL, 0, 0,
                                   "frame of %u bytes did not fit "
                                   "an empty segment",
                                   len);
            return w == 1 ? QSF_OK : err ? err->code : QSF_E_IO;
        }
        if (!ep->waiting)
            episode_begin(r, ep);
        if (atomic_load(&r->dur_latched)) /* the checkpoint it waits for failed */
            return qsf_ring_latched_error(r, err);
        int64_t waited = qsf_ring_now_ns() - start;
        if (waited >= deadline)
            return full_error(r, waited, err);
        if (!warned && waited >= r->prod.episode_long_ns) {
            warned = true;
            episode_report(r, ep, QSF_RING_EPISODE_LONG, waited);
        }
        if (wait_for_space(r, gen, deadline - waited))
            return qsf_ring_latched_error(r, err);
    }
}

static bool latched(const qsf_ring *r) {
    return qsf_latch_code(r->latch) || atomic_load_explicit(&r->dur_latched, memory_order_relaxed);
}

/* Whether the next frame goes into the active segment as it is (room
 * permitting), after a planned rotation due at this FSN has run: false when a
 * rotation is owed, or a fresh flush's first frame must start a new segment
 * (append_slow rotates first). */
static bool active_takes_next(qsf_ring *r) {
    if (r->prod.next_fsn == atomic_load_explicit(&r->plan.fsn, memory_order_relaxed))
        rotate_as_planned(r);
    return !r->prod.rotation_owed &&
           !(r->prod.txn.fresh && !r->prod.txn.seg && r->chain.active->frame_count > 0);
}

static int append_slow(qsf_ring *r, const void *payload, uint32_t len, int64_t *fsn_out,
                       qsf_errinfo *err) {
    int rc = never_fits(r, len, err);
    if (rc != QSF_OK)
        return rc;
    qsf_ring_episode ep = {0};
    int64_t start = qsf_ring_now_ns();
    rc = rotate_or_wait(r, payload, len, fsn_out, &ep, err);
    if (ep.waiting) {
        ep.rc = rc;
        episode_report(r, &ep, QSF_RING_EPISODE_END, qsf_ring_now_ns() - start);
    }
    return rc;
}

static int txn_append(qsf_ring *r, const void *payload, size_t len, int64_t *fsn_out,
                      qsf_errinfo *err) {
    if (!r->prod.txn.open)
        return qsf_err_set(err, QSF_E_STATE, 0, 0, "ring append outside a flush");
    if (len > qsf_seg_max_payload(r->cfg.seg_bytes))
        return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                           "payload too large for segment: %zu bytes, segment holds at most "
                           "%" PRIu64,
                           len, qsf_seg_max_payload(r->cfg.seg_bytes));
    if (latched(r))
        return qsf_ring_latched_error(r, err);
    if (!active_takes_next(r))
        return append_slow(r, payload, (uint32_t) len, fsn_out, err); /* rotates first */
    qsf_segment *a = r->chain.active;
    int w = write_frame(r, a, payload, (uint32_t) len, fsn_out, err);
    if (w == 1) {
        maybe_early_wake(r, a);
        return QSF_OK;
    }
    if (w < 0)
        return err ? err->code : QSF_E_IO;
    return append_slow(r, payload, (uint32_t) len, fsn_out, err);
}

/* A staged source position goes into its log just before the frame that
 * commits the flush (ring_srcpos.c), so that no crash can keep the flush
 * without it; a frame that fails to go in takes it back. */
int qsf_ring_txn_append(qsf_ring *r, const void *payload, size_t len, int64_t *fsn_out,
                        qsf_errinfo *err) {
    qsf_assert_producer(r);
    int rc = r->prod.txn.open ? qsf_ring_srcpos_before_frame(r, payload, len, err) : QSF_OK;
    if (rc == QSF_OK)
        rc = txn_append(r, payload, len, fsn_out, err);
    if (rc != QSF_OK)
        qsf_ring_srcpos_retract(r);
    return rc;
}

/* The frame is built in the active segment itself, its room's envelope
 * marking it as being written (qsf_seg_place), in memory mode and in an SF
 * ring whose frames go through the mapping. Not with `append` durability,
 * whose frames are written with pwrite (qsf_seg_write_file), nor while a
 * source position is staged: it must reach its log before the committing
 * frame's bytes do (qsf_ring_txn_append), and sealing a placed frame cannot
 * fail. */
uint8_t *qsf_ring_txn_place(qsf_ring *r, size_t cap) {
    if (!r->prod.txn.open || r->prod.srcpos_pending_len || latched(r) || !active_takes_next(r) ||
        r->chain.active->frames_by_pwrite)
        return NULL;
    return qsf_seg_place(r->chain.active, cap);
}

void qsf_ring_txn_append_placed(qsf_ring *r, size_t len, int64_t *fsn_out) {
    qsf_assert(r->prod.txn.open);
    qsf_segment *a = r->chain.active;
    uint64_t off = a->append_off;
    (void) QSF_FAULT_POINT(QSF_FP_FRAME_PLACED);
    qsf_seg_write_placed(a, (uint32_t) len);
    frame_joins_txn(r, a, off, fsn_out);
    maybe_early_wake(r, a);
}

void qsf_ring_txn_unplace(qsf_ring *r, size_t cap) {
    qsf_assert(r->prod.txn.open);
    qsf_seg_unplace(r->chain.active, cap);
}
