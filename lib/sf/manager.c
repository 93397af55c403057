/* The manager thread (docs/ARCHITECTURE.md §3; docs/DURABILITY.md §2.4): a memory-mode ring's
 * spares (an SF ring's have their own thread, spares.c), prefaulting ahead of the producer, trim
 * quanta (docs/DURABILITY.md §7), watermark persistence and periodic checkpoints
 * (docs/DURABILITY.md §8). It ticks every 1 ms (or the sync interval if shorter) or when woken,
 * and backs off to IDLE_MAX_NS while the ring stays still (next_wait). */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "os/fileutil.h"
#include "os/os.h"
#include "sf/sfa.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TICK_NS           ((int64_t) 1000000)
#define IDLE_MAX_NS       ((int64_t) 64 * 1000000)
#define SYNC_RETRY_MAX_NS ((int64_t) 1000000000)

/* ---- retry delay of a failing step ---- */

bool qsf_retry_due(const qsf_retry *b, int64_t now) {
    return now >= b->next_ns;
}

void qsf_retry_result(qsf_retry *b, bool ok, int64_t now) {
    if (ok) {
        b->delay_ns = 0;
        b->next_ns = 0;
        return;
    }
    b->delay_ns = b->delay_ns ? b->delay_ns * 2 : QSF_RETRY_MIN_NS;
    if (b->delay_ns > QSF_RETRY_MAX_NS)
        b->delay_ns = QSF_RETRY_MAX_NS;
    b->next_ns = now + b->delay_ns;
}

/* ---- trim (docs/DURABILITY.md §7) ---- */

static bool stage_due(const qsf_ring *r, int stage, int64_t now) {
    return qsf_retry_due(&r->mgr.trim_retry[stage], now);
}

static void stage_result(qsf_ring *r, int stage, bool ok, int64_t now) {
    qsf_retry_result(&r->mgr.trim_retry[stage], ok, now);
}

/* Under mu: detaches up to 64 trimmable sealed segments from the head of the
 * chain (oldest first, stopping at a pinned or unacknowledged one) into cand[]. */
static int detach_trimmable_locked(qsf_ring *r, qsf_segment **cand, bool ignore_pins) {
    qsf_assert_held(&r->mu);
    int64_t acked = qsf_ring_acked_fsn(r);
    int n = 0;
    qsf_segment *s = r->chain.head;
    while (s && s != r->chain.active && n < QSF_MAX_TRIMS_PER_PASS - r->chain.npending) {
        if (!ignore_pins && atomic_load(&s->pins) > 0)
            break;
        if (atomic_load(&s->sealed_off) == UINT64_MAX)
            break; /* the flush that filled it is still open */
        if (qsf_seg_end_fsn(s) - 1 > acked)
            break;
        cand[n++] = s;
        s = atomic_load(&s->next);
    }
    if (n > 0) {
        qsf_assert(r->chain.npending + n <= QSF_MAX_TRIMS_PER_PASS);
        r->chain.head = s; /* still live: their bytes are owned until release_pending */
    }
    return n;
}

static void reattach(qsf_ring *r, qsf_segment **cand) {
    pthread_mutex_lock(&r->mu);
    r->chain.head = cand[0];
    pthread_mutex_unlock(&r->mu);
}

/* Steps 1-4: watermark record + sync, dir fsync, manifest headBase + sync. */
static int trim_pre_barriers(qsf_ring *r, int64_t new_head, qsf_errinfo *e) {
    qsf_slot_recovered *rec = &r->rec;
    /* The record holds ackedFsn as it is now (>= what the quantum trims),
     * written by whoever came first; the sync runs outside wm.mu so the I/O
     * thread's record writes never wait for the disk. */
    int rc = qsf_ring_persist_acked(r, e);
    if (rc == QSF_OK)
        rc = qsf_watermark_sync(&rec->watermark, e);
    if (rc == QSF_OK)
        rc = qsf_fsync_dir(rec->slot.dirfd, rec->slot.path, e);
    if (rc != QSF_OK)
        return rc;
    pthread_mutex_lock(&r->mf_mu);
    rc = qsf_manifest_write(&rec->manifest, new_head, rec->manifest.active_base, NULL, e);
    if (rc == QSF_OK)
        rc = qsf_manifest_sync(&rec->manifest, e);
    pthread_mutex_unlock(&r->mf_mu);
    return rc;
}

/* Step 5: unlinks pending segments oldest first; stops at the first failure. */
static int trim_unlink(qsf_ring *r, qsf_errinfo *e) {
    for (int i = 0; i < r->chain.npending; i++) {
        qsf_segment *s = r->chain.pending[i];
        if (s->unlinked)
            continue;
        if (QSF_OS->unlinkat(r->rec.slot.dirfd, s->name, 0) != 0 && errno != ENOENT) {
            int err = errno;
            return qsf_err_set(e, QSF_E_IO, QSF_ERRF_RETRIABLE, err, "cannot remove %s/%s: %s",
                               r->rec.slot.path, s->name, strerror(err));
        }
        s->unlinked = true;
        (void) QSF_FAULT_POINT(QSF_FP_SEGMENT_UNLINKED);
    }
    return QSF_OK;
}

/* Frees the pending segments once they are gone from the disk (or, in memory
 * mode, at once) and gives their bytes back. */
static void release_pending(qsf_ring *r) {
    pthread_mutex_lock(&r->mu);
    uint64_t bytes = 0;
    for (int i = 0; i < r->chain.npending; i++) {
        qsf_assert(!r->cfg.sf || r->chain.pending[i]->unlinked); /* gone from the disk first */
        bytes += r->chain.pending[i]->size;
    }
    int n = r->chain.npending;
    qsf_assert(r->chain.live >= (uint32_t) n); /* pending segments still count as live */
    qsf_segment *done[QSF_MAX_TRIMS_PER_PASS];
    memcpy(done, r->chain.pending, (size_t) n * sizeof done[0]);
    r->chain.npending = 0;
    r->chain.live -= (uint32_t) n;
    if (!r->cfg.sf) {
        /* Memory mode: keep the newest trimmed buffers (pages resident) for
         * the next spares instead of freeing and faulting in new ones. */
        while (n > 0 && r->chain.npool < QSF_MEM_POOL) {
            r->chain.pool[r->chain.npool++] = done[--n];
            bytes -= done[n]->size;
        }
        qsf_ring_spare_from_pool_locked(r);
    }
    qsf_ring_release_bytes_locked(r, bytes);
    if (r->cfg.sf)
        qsf_spares_kick_locked(r); /* a spare that did not fit may fit now */
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < n; i++)
        qsf_seg_destroy(done[i]);
}

/* Steps 5-6 for whatever is pending. */
static int finish_pending(qsf_ring *r, bool force, qsf_errinfo *e) {
    int64_t now = qsf_ring_now_ns();
    if (!force && !stage_due(r, QSF_TRIM_UNLINK, now))
        return QSF_E_IO;
    int rc = trim_unlink(r, e);
    stage_result(r, QSF_TRIM_UNLINK, rc == QSF_OK, now);
    if (rc != QSF_OK || (!force && !stage_due(r, QSF_TRIM_POST, now)))
        return rc != QSF_OK ? rc : QSF_E_IO;
    rc = qsf_fsync_dir(r->rec.slot.dirfd, r->rec.slot.path, e);
    stage_result(r, QSF_TRIM_POST, rc == QSF_OK, now);
    if (rc == QSF_OK)
        release_pending(r);
    return rc;
}

/* One quantum. Returns 1 if it trimmed, 0 if nothing was trimmable, or a
 * negative code when a stage failed or waits for its backoff. */
static int trim_quantum(qsf_ring *r, bool force, qsf_errinfo *e) {
    bool finished = r->chain.npending > 0;
    if (finished) {
        int rc = finish_pending(r, force, e);
        if (rc != QSF_OK)
            return rc;
    }
    qsf_segment *cand[QSF_MAX_TRIMS_PER_PASS];
    pthread_mutex_lock(&r->mu);
    int n = detach_trimmable_locked(r, cand, force);
    int64_t new_head = n ? r->chain.head->base_seq : 0;
    pthread_mutex_unlock(&r->mu);
    if (n == 0)
        return finished ? 1 : 0; /* the pending removals were trimming too */
    if (r->cfg.sf) {
        int64_t now = qsf_ring_now_ns();
        if (!force && !stage_due(r, QSF_TRIM_PRE, now)) {
            reattach(r, cand);
            return QSF_E_IO; /* backing off after a failure */
        }
        int rc = trim_pre_barriers(r, new_head, e);
        stage_result(r, QSF_TRIM_PRE, rc == QSF_OK, now);
        if (rc != QSF_OK) {
            reattach(r, cand);
            return rc;
        }
    }
    pthread_mutex_lock(&r->mu);
    memcpy(r->chain.pending + r->chain.npending, cand, (size_t) n * sizeof cand[0]);
    r->chain.npending += n;
    pthread_mutex_unlock(&r->mu);
    if (!r->cfg.sf) {
        release_pending(r);
        return 1;
    }
    int rc = finish_pending(r, force, e);
    return rc == QSF_OK ? 1 : rc;
}

/* Keeps a pass's failure in trim_err (cleared by a pass that trims all it
 * can) and logs a streak of failures twice: a WARN when it starts (the
 * segments' files stay, and stay counted against sf_max_total_bytes) and an
 * INFO when it ends; the retries in between at DEBUG. A failure waiting for
 * its backoff has no message: the last one stands; so does one a pass that
 * trimmed nothing leaves (the oldest segment pinned, or its flush open: the
 * failing step was not retried). */
static void note_trim_result(qsf_ring *r, int rc, const char *msg, bool trimmed) {
    if ((rc != 0 && !msg[0]) || (rc == 0 && !trimmed))
        return;
    /* the manager's, or close's once the manager stopped */
    qsf_assert(qsf_ring_on(&r->mgr.self) || !r->mgr.started);
    pthread_mutex_lock(&r->mu);
    bool failing = r->stall.trim_err[0] != 0;
    snprintf(r->stall.trim_err, sizeof r->stall.trim_err, "%s", rc == 0 ? "" : msg);
    pthread_mutex_unlock(&r->mu);
    if (rc != 0 && !failing)
        QSF_LOGW("acknowledged segments cannot be removed (retrying): %s", msg);
    else if (rc != 0)
        QSF_LOGD("trim deferred: %s", msg);
    else if (failing)
        QSF_LOGI("acknowledged segments are removed again");
}

/* Quanta until nothing is trimmable or a stage fails. */
static void trim_pass(qsf_ring *r) {
    if (r->cfg.sf && r->rec.watermark.fd < 0)
        return; /* disk trim is refused without a watermark file */
    qsf_errinfo e;
    e.msg[0] = 0;
    int rc;
    bool trimmed = false;
    while ((rc = trim_quantum(r, false, &e)) == 1)
        trimmed = true;
    note_trim_result(r, rc, e.msg, trimmed);
}

int qsf_mgr_trim_all(qsf_ring *r, qsf_errinfo *err) {
    int rc;
    while ((rc = trim_quantum(r, true, err)) == 1)
        ;
    return rc < 0 ? rc : QSF_OK;
}

/* Keeps .ack-watermark close to ackedFsn (record write only; trim syncs). */
static void persist_acked(qsf_ring *r) {
    qsf_errinfo e;
    if (qsf_ring_persist_acked(r, &e) != QSF_OK)
        QSF_LOGD("watermark write deferred: %s", e.msg);
}

/* ---- periodic checkpoint (docs/DURABILITY.md §8) ---- */

static void periodic_checkpoint(qsf_ring *r) {
    if (r->cfg.durability != QSF_DUR_PERIODIC)
        return;
    int64_t now = qsf_ring_now_ns();
    pthread_mutex_lock(&r->mu);
    bool latched = atomic_load(&r->dur_latched);
    bool due = now >= r->mgr.next_sync_ns || (r->mgr.sync_requested && !latched);
    pthread_mutex_unlock(&r->mu);
    if (!due)
        return;
    qsf_errinfo e;
    int rc = qsf_barrier_sync_written(r, &e);
    int64_t interval = r->cfg.sync_interval_ms * 1000000;
    pthread_mutex_lock(&r->mu);
    if (rc != QSF_OK) {
        if (!latched)
            QSF_LOGE("periodic disk sync failed (appends fail until a retry succeeds): %s", e.msg);
        e.code = QSF_E_DURABILITY;
        e.flags = QSF_ERRF_RETRIABLE;
        qsf_err_copy(&r->stall.dur_err, &e);
        atomic_store(&r->dur_latched, true);
        r->mgr.next_sync_ns = now + (interval < SYNC_RETRY_MAX_NS ? interval : SYNC_RETRY_MAX_NS);
    } else {
        if (latched)
            QSF_LOGW("periodic disk sync succeeded again; appends resume");
        atomic_store(&r->dur_latched, false);
        qsf_err_clear(&r->stall.dur_err);
        r->mgr.sync_requested = false;
        r->mgr.next_sync_ns = now + interval;
        qsf_ring_wake_producers_locked(r);
    }
    pthread_mutex_unlock(&r->mu);
}

/* ---- prefault ahead of the producer ---- */

#define PREFAULT_AHEAD ((uint64_t) 4 << 20)

/* Keeps the next 4 MiB after the active segment's published end faulted in,
 * so the producer's stores do not take page faults. SF mode with `memory`
 * durability only: with data barriers, populated zero pages would be written
 * by the next sync and then fault again on the producer's first store. */
static void prefault_active(qsf_ring *r) {
    if (!r->cfg.sf || r->cfg.durability != QSF_DUR_MEMORY)
        return;
    pthread_mutex_lock(&r->mu);
    qsf_segment *a = r->chain.active;
    qsf_assert(!r->chain.prefaulting && !r->chain.prefault_waited); /* one prefault at a time */
    r->chain.prefaulting = a; /* an aborted flush's undo may drop it: it waits for us */
    pthread_mutex_unlock(&r->mu);
    uint64_t pub = atomic_load_explicit(&a->published_off, memory_order_acquire);
    if (a->prefault_off < pub + PREFAULT_AHEAD / 2 && a->prefault_off < a->size)
        qsf_seg_prefault(a, pub, pub + PREFAULT_AHEAD);
    pthread_mutex_lock(&r->mu);
    r->chain.prefaulting = NULL;
    if (r->chain.prefault_waited) { /* an abort is waiting to drop it */
        r->chain.prefault_waited = false;
        qsf_ring_wake_producers_locked(r);
    }
    pthread_mutex_unlock(&r->mu);
}

/* ---- memory-mode buffer pool ---- */

/* Every QSF_MEM_POOL_CHECK_NS: frees the buffers that sat in the pool since the
 * last check, keeping QSF_MEM_POOL_KEEP (see ring_int.h). */
static void shrink_pool(qsf_ring *r) {
    qsf_segment *drop[QSF_MEM_POOL];
    int n = 0;
    uint64_t bytes = 0;
    int64_t now = qsf_ring_now_ns();
    pthread_mutex_lock(&r->mu);
    if (now - r->chain.pool_check_ns >= QSF_MEM_POOL_CHECK_NS) {
        int excess = r->chain.pool_low - QSF_MEM_POOL_KEEP;
        while (n < excess && r->chain.npool > 0) {
            drop[n] = r->chain.pool[--r->chain.npool];
            bytes += drop[n++]->size;
        }
        if (n > 0)
            qsf_ring_release_bytes_locked(r, bytes);
        r->chain.pool_low = r->chain.npool;
        r->chain.pool_check_ns = now;
    }
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < n; i++)
        qsf_seg_destroy(drop[i]);
}

/* ---- the thread ---- */

void qsf_mgr_pass(qsf_ring *r) {
    qsf_assert(qsf_ring_on(&r->mgr.self));
    prefault_active(r);
    shrink_pool(r);
    if (!r->cfg.sf)
        qsf_spares_pass(r); /* an SF ring's spares have a thread of their own (spares.c) */
    persist_acked(r);       /* first: a slow trim barrier must not hold it back */
    trim_pass(r);
    persist_acked(r);
    periodic_checkpoint(r);
}

static int64_t tick_ns(const qsf_ring *r) {
    int64_t sync =
        r->cfg.durability == QSF_DUR_PERIODIC ? r->cfg.sync_interval_ms * 1000000 : TICK_NS;
    return sync < TICK_NS ? sync : TICK_NS;
}

/* The wait before the next pass: the tick while anything moves (a kick, a
 * frame published or acknowledged since the last pass), doubling up to
 * IDLE_MAX_NS while nothing does, so that an idle sender's manager wakes about
 * 16 times a second instead of 1000 (it cost 1.4-1.8 % of a core). Never past
 * a periodic checkpoint. While dozing, the next flush wakes it (ring_txn.c):
 * the producer does not run into unprefaulted pages for up to IDLE_MAX_NS. */
static int64_t next_wait(qsf_ring *r, bool kicked) {
    qsf_assert(qsf_ring_on(&r->mgr.self));
    qsf_assert_held(&r->mu);
    int64_t pub = atomic_load_explicit(&r->published_fsn, memory_order_relaxed);
    int64_t acked = atomic_load_explicit(&r->acked_fsn, memory_order_relaxed);
    bool moved = kicked || pub != r->mgr.seen_pub || acked != r->mgr.seen_acked;
    r->mgr.seen_pub = pub;
    r->mgr.seen_acked = acked;
    int64_t tick = tick_ns(r),
            wait = moved ? tick : 2 * (r->mgr.wait_ns > tick ? r->mgr.wait_ns : tick);
    if (wait > IDLE_MAX_NS)
        wait = IDLE_MAX_NS;
    if (r->cfg.durability == QSF_DUR_PERIODIC) {
        int64_t to_sync = r->mgr.next_sync_ns - qsf_ring_now_ns();
        if (wait > to_sync)
            wait = to_sync > tick ? to_sync : tick;
    }
    r->mgr.wait_ns = wait;
    atomic_store_explicit(&r->mgr.dozing, wait > tick, memory_order_relaxed);
    return wait;
}

static void *mgr_main(void *arg) {
    qsf_ring *r = arg;
    qsf_ring_on_start(&r->mgr.self);
    int64_t wait = tick_ns(r);
    r->mgr.wait_ns = wait;
    r->mgr.seen_pub = r->mgr.seen_acked = INT64_MIN; /* the first pass counts as a move */
    pthread_mutex_lock(&r->mu);
    while (!r->mgr.stop) {
        qsf_ring_thread_wait(r, &r->mgr.cv, &r->mgr.kick, &r->mgr.stop, wait);
        if (r->mgr.stop)
            break;
        bool kicked = r->mgr.kick;
        r->mgr.kick = false;
        pthread_mutex_unlock(&r->mu);
        qsf_mgr_pass(r);
        atomic_fetch_add_explicit(&r->mgr.passes, 1, memory_order_relaxed);
        pthread_mutex_lock(&r->mu);
        wait = next_wait(r, kicked);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int qsf_mgr_start(qsf_ring *r, qsf_errinfo *err) {
    r->mgr.next_sync_ns = qsf_ring_now_ns() + r->cfg.sync_interval_ms * 1000000;
    int e = pthread_create(&r->mgr.thread, NULL, mgr_main, r);
    if (e != 0)
        return qsf_err_set(err, QSF_E_NOMEM, 0, e, "cannot start the segment manager: %s",
                           strerror(e));
    r->mgr.started = true;
    pthread_setname_np(r->mgr.thread, "qsf-mgr"); /* for top -H and per-thread CPU (bench_rows) */
    return QSF_OK;
}

uint64_t qsf_ring_manager_passes(const qsf_ring *r) {
    return atomic_load_explicit(&((qsf_ring *) r)->mgr.passes, memory_order_relaxed);
}

void qsf_mgr_kick_locked(qsf_ring *r) {
    qsf_assert_held(&r->mu);
    r->mgr.kick = true;
    pthread_cond_signal(&r->mgr.cv);
}

void qsf_mgr_wake(qsf_ring *r) {
    pthread_mutex_lock(&r->mu);
    qsf_mgr_kick_locked(r);
    pthread_mutex_unlock(&r->mu);
}

bool qsf_mgr_stop(qsf_ring *r) {
    if (!r->mgr.started)
        return true;
    if (!qsf_ring_thread_stop(r, r->mgr.thread, &r->mgr.cv, &r->mgr.stop))
        return false;
    r->mgr.started = false;
    qsf_ring_on_end(&r->mgr.self); /* a later thread may get its id */
    return true;
}
