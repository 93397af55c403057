/* Spares (docs/DURABILITY.md §5, §6.1): the next segment created ahead of
 * need, and its rotation planned.
 *
 * A ring with a slot directory runs this on a thread of its own, `qsf-spare`,
 * because the manager's other work (a trim's unlinks and directory and
 * manifest syncs, unmapping freed segments) takes milliseconds at a time.
 * While the manager did both, a producer filling a 16 MiB segment in 5 ms
 * found no spare ready at 19 of 64 rotations (median) and waited for one
 * (measured when spares got this thread; docs/BENCHMARKS.md, "append"). A memory-mode ring's spares
 * come from its pool or malloc; its manager provisions them in its own passes.
 *
 * The spare thread owns next_gen, create_retry and the creation log's
 * timing; it writes r->chain.spare and r->plan under mu. It
 * sleeps until kicked (qsf_spares_kick_locked: a rotation took the spare, the
 * producer found none, a trim gave bytes back), at most IDLE_NS, or until a
 * failed creation's backoff ends. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfa.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define IDLE_NS             ((int64_t) 64 * 1000000)
#define CREATE_LOG_EVERY_NS ((int64_t) 30 * 1000000000)

static int create_spare(qsf_ring *r, qsf_segment **out, qsf_errinfo *err) {
    int64_t provisional = qsf_ring_published_fsn(r) + 1;
    if (!r->cfg.sf)
        return qsf_seg_new_mem(r->cfg.seg_bytes, provisional, out, err);
    const qsf_slot *sl = &r->rec.slot;
    char name[QSF_SEG_NAME_MAX];
    uint64_t gen = r->spr.next_gen;
    qsf_seg_name(gen, name);
    int rc = qsf_seg_create_file(sl->dirfd, sl->path, name, gen, r->cfg.seg_bytes, provisional,
                                 QSF_SFA_FLAG_MANIFEST_REQUIRED, out, err);
    if (rc != QSF_OK)
        return rc; /* the partial file is gone: the name is free for the next attempt */
    r->spr.next_gen++;
    (*out)->frames_by_pwrite = qsf_ring_frames_by_pwrite(r);
    rc = qsf_fsync_dir(sl->dirfd, sl->path, err);
    if (rc != QSF_OK) { /* not known to the directory: remove and retry later */
        QSF_OS->unlinkat(sl->dirfd, name, 0);
        qsf_seg_destroy(*out);
    }
    return rc;
}

static void note_create_failure(qsf_ring *r, const qsf_errinfo *e) {
    int64_t now = qsf_ring_now_ns();
    pthread_mutex_lock(&r->mu);
    snprintf(r->stall.create_err, sizeof r->stall.create_err, "%s", e->msg);
    pthread_mutex_unlock(&r->mu);
    if (!r->spr.create_logged || now - r->spr.last_create_log_ns >= CREATE_LOG_EVERY_NS) {
        QSF_LOGW("cannot create a spare segment (retrying): %s", e->msg);
        r->spr.create_logged = true;
        r->spr.last_create_log_ns = now;
    }
}

static void provision_spare(qsf_ring *r) {
    pthread_mutex_lock(&r->mu);
    qsf_ring_spare_from_pool_locked(r);
    bool need = !r->chain.spare && !r->chain.rotating && qsf_ring_spare_fits_locked(r);
    pthread_mutex_unlock(&r->mu);
    int64_t now = qsf_ring_now_ns();
    if (!need || !qsf_retry_due(&r->spr.create_retry, now))
        return; /* a full disk is not asked again every millisecond */
    qsf_segment *s;
    qsf_errinfo e;
    int rc = create_spare(r, &s, &e);
    qsf_retry_result(&r->spr.create_retry, rc == QSF_OK, now);
    if (rc != QSF_OK) {
        note_create_failure(r, &e);
        return;
    }
    pthread_mutex_lock(&r->mu);
    r->stall.create_err[0] = 0;
    /* The producer may have found a spare meanwhile (a pooled buffer, a
     * segment an aborted flush gave back): this one is not needed then. */
    bool surplus = r->chain.spare != NULL;
    if (!surplus) {
        r->chain.spare = s;
        atomic_fetch_add(&r->owned_bytes, s->size);
        qsf_ring_wake_producers_locked(r);
    }
    pthread_mutex_unlock(&r->mu);
    if (surplus) {
        if (r->cfg.sf)
            QSF_OS->unlinkat(r->rec.slot.dirfd, s->name, 0);
        qsf_seg_destroy(s);
    }
}

void qsf_spares_pass(qsf_ring *r) {
    qsf_assert(qsf_ring_on(r->cfg.sf ? &r->spr.self : &r->mgr.self));
    provision_spare(r);
    qsf_plan_rotation(r);
}

/* Under mu: how long to sleep when not kicked. A spare that is needed but
 * whose creation backs off after a failure is tried again when the backoff
 * ends; otherwise the next kick brings the work. One that does not fit is not
 * needed yet, however long ago the backoff ended (the trim that makes room
 * kicks): waiting 0 ms for it spun the thread. */
static int64_t idle_wait_ns(qsf_ring *r) {
    if (r->chain.spare || r->spr.create_retry.next_ns == 0 || !qsf_ring_spare_fits_locked(r))
        return IDLE_NS;
    int64_t left = r->spr.create_retry.next_ns - qsf_ring_now_ns();
    return left <= 0 ? 0 : left < IDLE_NS ? left : IDLE_NS;
}

static void *spares_main(void *arg) {
    qsf_ring *r = arg;
    qsf_ring_on_start(&r->spr.self);
    pthread_mutex_lock(&r->mu);
    while (!r->spr.stop) {
        r->spr.kick = false;
        pthread_mutex_unlock(&r->mu);
        qsf_spares_pass(r);
        atomic_fetch_add_explicit(&r->spr.passes, 1, memory_order_relaxed);
        pthread_mutex_lock(&r->mu);
        qsf_ring_thread_wait(r, &r->spr.cv, &r->spr.kick, &r->spr.stop, idle_wait_ns(r));
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int qsf_spares_start(qsf_ring *r, qsf_errinfo *err) {
    if (!r->cfg.sf)
        return QSF_OK; /* the manager provisions a memory-mode ring's spares */
    int e = pthread_create(&r->spr.thread, NULL, spares_main, r);
    if (e != 0)
        return qsf_err_set(err, QSF_E_NOMEM, 0, e, "cannot start the spare thread: %s",
                           strerror(e));
    r->spr.started = true;
    pthread_setname_np(r->spr.thread, "qsf-spare");
    return QSF_OK;
}

bool qsf_spares_stop(qsf_ring *r) {
    if (!r->spr.started)
        return true;
    if (!qsf_ring_thread_stop(r, r->spr.thread, &r->spr.cv, &r->spr.stop))
        return false;
    r->spr.started = false;
    qsf_ring_on_end(&r->spr.self); /* a later thread may get its id */
    return true;
}

void qsf_spares_kick_locked(qsf_ring *r) {
    qsf_assert_held(&r->mu);
    if (r->cfg.sf) { /* nothing to wake once it stopped: close creates no spare */
        r->spr.kick = true;
        pthread_cond_signal(&r->spr.cv);
    } else {
        qsf_mgr_kick_locked(r);
    }
}

uint64_t qsf_ring_spare_passes(const qsf_ring *r) {
    return atomic_load_explicit(&((qsf_ring *) r)->spr.passes, memory_order_relaxed);
}
