/* The ring's life cycle (open, close), gauges, the symbol dictionary and the
 * failure latches. The producer path is in ring_append.c, the reader in
 * cursor.c, the manager in manager.c, data barriers in barrier.c. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "os/os.h"
#include "seglimits.h"
#include "sf/operator.h"
#include "sf/sfa.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t qsf_ring_now_ns(void) {
    return QSF_OS->mono_ns();
}

/* ---- accounting (all under mu) ---- */

bool qsf_ring_spare_fits_locked(const qsf_ring *r) {
    qsf_assert_held(&r->mu);
    if (r->chain.live + (r->chain.spare ? 1u : 0u) < QSF_MIN_LIVE_SEGMENTS)
        return true;
    uint64_t owned = atomic_load(&r->owned_bytes) + atomic_load(&r->dict_bytes);
    return owned + r->cfg.seg_bytes <= r->cfg.cap_bytes;
}

void qsf_ring_wake_producers_locked(qsf_ring *r) {
    qsf_assert_held(&r->mu);
    r->stall.wake_gen++;
    pthread_cond_broadcast(&r->stall.space_cv);
}

bool qsf_ring_spare_from_pool_locked(qsf_ring *r) {
    qsf_assert_held(&r->mu);
    if (r->chain.spare || r->chain.rotating || r->chain.npool == 0)
        return false;
    qsf_segment *s = r->chain.pool[--r->chain.npool];
    if (r->chain.npool < r->chain.pool_low)
        r->chain.pool_low = r->chain.npool;
    qsf_seg_reuse_mem(s, qsf_ring_published_fsn(r) + 1);
    r->chain.spare = s;
    qsf_ring_wake_producers_locked(r);
    return true;
}

void qsf_ring_release_bytes_locked(qsf_ring *r, uint64_t bytes) {
    qsf_assert(atomic_load(&r->owned_bytes) >= bytes); /* only owned bytes are given back */
    qsf_assert_held(&r->mu);
    atomic_fetch_sub(&r->owned_bytes, bytes);
    qsf_ring_wake_producers_locked(r);
}

/* ---- open ---- */

_Static_assert(QSF_SEGMENT_MIN_BYTES == QSF_SFA_MIN_SEGMENT,
               "the parser's minimum is the format's");

static int check_opts(const qsf_ring_opts *o, qsf_errinfo *err) {
    if (!o || o->segment_bytes < QSF_SEGMENT_MIN_BYTES || o->segment_bytes > QSF_SEGMENT_MAX_BYTES)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "sf_max_segment_bytes must be between %d and %d bytes",
                           QSF_SEGMENT_MIN_BYTES, QSF_SEGMENT_MAX_BYTES);
    if (o->durability < QSF_DUR_MEMORY || o->durability > QSF_DUR_APPEND)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "unknown sf_durability %d", o->durability);
    if (!o->sf_dir && !o->slot_path && o->durability != QSF_DUR_MEMORY)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "sf_durability periodic/append requires sf_dir (memory mode keeps "
                           "nothing on disk)");
    if (o->durability == QSF_DUR_PERIODIC && o->sync_interval_ms <= 0)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sf_sync_interval_millis must be > 0");
    return QSF_OK;
}

static int init_sync(qsf_ring *r) {
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return -1;
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_mutex_init(&r->mu, NULL) | pthread_mutex_init(&r->mf_mu, NULL) |
             pthread_mutex_init(&r->dict_mu, NULL) | pthread_mutex_init(&r->sync_mu, NULL) |
             pthread_mutex_init(&r->wm.mu, NULL) | pthread_cond_init(&r->stall.space_cv, &ca) |
             pthread_cond_init(&r->mgr.cv, &ca) | pthread_cond_init(&r->spr.cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc;
}

static qsf_ring *ring_alloc(const qsf_ring_opts *o) {
    qsf_ring *r = aligned_alloc(64, (sizeof *r + 63) & ~(size_t) 63);
    if (r)
        memset(r, 0, sizeof *r);
    if (!r || init_sync(r) != 0) {
        free(r);
        return NULL;
    }
    r->cfg.sf = o->sf_dir != NULL || o->slot_path != NULL;
    r->cfg.durability = o->durability;
    r->cfg.seg_bytes = o->segment_bytes;
    r->cfg.cap_bytes =
        o->total_bytes > 2 * o->segment_bytes ? o->total_bytes : 2 * o->segment_bytes;
    r->cfg.sync_interval_ms = o->sync_interval_ms;
    r->cfg.append_deadline_ms = o->append_deadline_ms > 0 ? o->append_deadline_ms : 0;
    r->prod.episode_long_ns = QSF_RING_EPISODE_LONG_NS;
    r->rec.slot.sf_dirfd = r->rec.slot.dirfd = -1;
    r->rec.slot.lock_fd = r->rec.slot.logical_lock_fd = -1;
    r->rec.watermark.fd = r->rec.manifest.fd = -1;
    atomic_init(&r->published_fsn, -1);
    atomic_init(&r->mgr.dozing, false);
    atomic_init(&r->mgr.passes, 0);
    atomic_init(&r->acked_fsn, -1);
    atomic_init(&r->plan.fsn, -1);
    r->wm.persisted = -1;
    qsf_latch_init(&r->own_latch);
    r->latch = o->latch ? o->latch : &r->own_latch;
    return r;
}

/* A latched terminal error wakes every producer waiting for space: they return
 * it at once (docs/ERRORS.md §4; docs/DURABILITY.md §3.3). Runs on the thread
 * that latched it, never under mu. */
static void wake_on_latch(void *user, int code) {
    qsf_ring *r = user;
    (void) code;
    pthread_mutex_lock(&r->mu);
    qsf_ring_wake_producers_locked(r);
    pthread_mutex_unlock(&r->mu);
}

/* Appends s at the tail of the chain and counts it (open only). */
static void chain_push(qsf_ring *r, qsf_segment *s) {
    if (r->chain.active) {
        qsf_seg_seal(r->chain.active); /* recovered: final */
        atomic_store(&r->chain.active->next, s);
    } else
        r->chain.head = s;
    r->chain.active = s;
    r->chain.live++;
    atomic_fetch_add(&r->owned_bytes, s->size);
}

static int open_memory(qsf_ring *r, qsf_recovery_report *rep, qsf_errinfo *err) {
    qsf_symdict_init(&r->rec.symdict);
    r->rec.symdict.self_sufficient = false;
    qsf_segment *s;
    int rc = qsf_seg_new_mem(r->cfg.seg_bytes, 0, &s, err);
    if (rc != QSF_OK)
        return rc;
    chain_push(r, s);
    if (rep) {
        memset(rep, 0, sizeof *rep);
        rep->acked_fsn = rep->published_fsn = rep->commit_boundary_fsn = -1;
    }
    return QSF_OK;
}

/* Maps one recovered segment file. */
static int adopt_one(qsf_ring *r, const qsf_seg_info *si, qsf_segment **out, qsf_errinfo *err) {
    const qsf_slot *sl = &r->rec.slot;
    int fd = QSF_OS->openat(sl->dirfd, si->name, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd < 0) {
        int e = errno;
        return qsf_err_set(err, QSF_E_IO, 0, e, "cannot open recovered segment %s/%s: %s", sl->path,
                           si->name, strerror(e));
    }
    uint64_t gen = si->generation > 0 ? (uint64_t) si->generation : 0;
    int rc = qsf_seg_adopt(fd, sl->path, si->name, gen, si->file_size, si->base_seq,
                           si->frame_count, si->last_good, out, err);
    if (rc != QSF_OK)
        QSF_OS->close(fd);
    else /* recovery made the recovered range durable where the mode asks for it */
        atomic_store(&(*out)->durable_off, si->last_good);
    return rc;
}

static int open_sf(qsf_ring *r, const qsf_ring_opts *o, qsf_recovery_report *rep,
                   qsf_errinfo *err) {
    int rc =
        qsf_seg_check_size_limit(o->segment_bytes, o->slot_path ? o->slot_path : o->sf_dir, err);
    if (rc != QSF_OK)
        return rc;
    rc = o->slot_path ? qsf_slot_open_operator(o->slot_path, o->durability, o->segment_bytes,
                                               o->wm_form, &r->rec, err)
                      : qsf_slot_open_formed(o->sf_dir, o->sender_id, o->durability,
                                             o->segment_bytes, o->wm_form, o->adopt, &r->rec, err);
    if (rc != QSF_OK)
        return rc;
    for (uint32_t i = 0; i < r->rec.segment_count; i++) {
        qsf_segment *s = NULL;
        rc = adopt_one(r, &r->rec.segments[i], &s, err);
        if (rc != QSF_OK)
            return rc;
        s->frames_by_pwrite = qsf_ring_frames_by_pwrite(r);
        chain_push(r, s);
    }
    r->spr.next_gen = r->rec.next_generation;
    atomic_store(&r->published_fsn, r->rec.published_fsn);
    atomic_store(&r->acked_fsn, r->rec.acked_fsn);
    r->wm.persisted = r->rec.watermark.present ? r->rec.watermark.fsn : -1;
    atomic_store(&r->dict_bytes, r->rec.symdict.valid_end);
    if (rep)
        *rep = r->rec.report;
    return QSF_OK;
}

static void free_segments(qsf_ring *r) {
    qsf_segment *s = r->chain.head;
    while (s) {
        qsf_segment *n = atomic_load(&s->next);
        qsf_seg_destroy(s);
        s = n;
    }
    for (int i = 0; i < r->chain.npending; i++)
        qsf_seg_destroy(r->chain.pending[i]);
    for (int i = 0; i < r->chain.npool; i++)
        qsf_seg_destroy(r->chain.pool[i]);
    r->chain.npool = 0;
    qsf_seg_destroy(r->chain.spare);
    r->chain.head = r->chain.active = r->chain.spare = NULL;
    r->chain.npending = 0;
}

static void wake_on_latch(void *user, int code);

static void ring_free(qsf_ring *r) {
    qsf_latch_unsubscribe(r->latch, wake_on_latch, r);
    free_segments(r);
    qsf_ring_srcpos_close(r);
    if (r->cfg.sf)
        qsf_slot_release(&r->rec);
    else
        qsf_symdict_destroy(&r->rec.symdict);
    pthread_mutex_destroy(&r->mu);
    pthread_mutex_destroy(&r->mf_mu);
    pthread_mutex_destroy(&r->dict_mu);
    pthread_mutex_destroy(&r->sync_mu);
    pthread_mutex_destroy(&r->wm.mu);
    pthread_cond_destroy(&r->stall.space_cv);
    pthread_cond_destroy(&r->mgr.cv);
    pthread_cond_destroy(&r->spr.cv);
    qsf_latch_destroy(&r->own_latch);
    free(r);
}

int qsf_ring_open(const qsf_ring_opts *opts, qsf_ring **out, qsf_recovery_report *report,
                  qsf_errinfo *err) {
    int rc = check_opts(opts, err);
    if (rc != QSF_OK)
        return rc;
    qsf_ring *r = ring_alloc(opts);
    if (!r)
        return qsf_err_set(err, QSF_E_NOMEM, 0, ENOMEM, "cannot allocate the ring");
    rc = qsf_latch_subscribe(r->latch, wake_on_latch, r) == QSF_OK
             ? QSF_OK
             : qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "too many subscribers of one latch");
    if (rc == QSF_OK)
        rc = r->cfg.sf ? open_sf(r, opts, report, err) : open_memory(r, report, err);
    if (rc == QSF_OK)
        rc = qsf_ring_srcpos_open(r, err);
    if (rc == QSF_OK) {
        r->prod.next_fsn = atomic_load(&r->published_fsn) + 1;
        rc = qsf_spares_start(r, err);
    }
    if (rc == QSF_OK && (rc = qsf_mgr_start(r, err)) != QSF_OK && !qsf_spares_stop(r)) {
        /* It may still touch the ring and the slot: keep both, the slot
         * locked (the lock goes with the process), as close does. */
        QSF_LOGE("ring open: the spare thread did not stop within 5 s; the slot stays locked");
        return rc;
    }
    if (rc != QSF_OK) {
        ring_free(r);
        return rc;
    }
    *out = r;
    return QSF_OK;
}

int qsf_ring_mark_failed(qsf_ring *r, const char *reason, qsf_errinfo *err) {
    if (!r->cfg.sf)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "a memory-mode ring has no slot to mark");
    return qsf_slot_write_failed(r->rec.slot.dirfd, r->rec.slot.path, reason, err);
}

/* ---- close (docs/DURABILITY.md §12) ---- */

/* Unlinks the active segment and the spare in generation order, stopping at the
 * first failure, then the side files (watermark last). */
static int remove_drained_slot(qsf_ring *r, qsf_errinfo *err) {
    const char *names[2];
    uint32_t n = 0;
    qsf_segment *a = r->chain.active, *sp = r->chain.spare;
    if (sp && sp->gen < a->gen)
        names[n++] = sp->name;
    names[n++] = a->name;
    if (sp && sp->gen >= a->gen)
        names[n++] = sp->name;
    int rc = qsf_slot_unlink_segments(&r->rec.slot, names, n, err);
    if (rc == QSF_OK)
        rc = qsf_slot_remove_sidefiles(&r->rec, err);
    return rc;
}

static int close_drained(qsf_ring *r, qsf_errinfo *err) {
    int64_t acked = atomic_load(&r->acked_fsn);
    pthread_mutex_lock(&r->wm.mu);
    int rc = qsf_watermark_write(&r->rec.watermark, acked, err);
    if (rc == QSF_OK)
        rc = qsf_watermark_sync(&r->rec.watermark, err);
    if (rc == QSF_OK)
        r->wm.persisted = acked;
    pthread_mutex_unlock(&r->wm.mu);
    if (rc == QSF_OK) /* before any segment goes: the next FSNs may start anew */
        rc = qsf_ring_srcpos_finalize(r, err);
    if (rc == QSF_OK)
        rc = qsf_mgr_trim_all(r, err);
    if (rc == QSF_OK)
        rc = remove_drained_slot(r, err);
    return rc;
}

/* The last FSN published, for the next open to tell damage after it was
 * published from a tear (docs/FORMAT.md §5.7). Only a mark of the active
 * segment holding frames says anything; failing to write it only logs. */
static void note_published(qsf_ring *r, int64_t pub) {
    qsf_segment *a = r->chain.active;
    if (!a || pub < a->base_seq)
        return;
    qsf_published_mark m = {.fsn = pub,
                            .base_seq = a->base_seq,
                            .created_us = qsf_get_i64(a->base + QSF_SFA_AT_CREATED),
                            .end_off = atomic_load(&a->published_off)};
    qsf_errinfo e;
    if (qsf_slot_note_published(&r->rec.slot, &m, &e) != QSF_OK)
        QSF_LOGW("ring close: %s", e.msg);
}

static int close_sf(qsf_ring *r, qsf_errinfo *err) {
    qsf_errinfo e;
    if (qsf_ring_txn_retry_undo(r, &e) != QSF_OK) /* then the slot is kept, for recovery */
        QSF_LOGW("ring close: an aborted flush still cannot be undone: %s", e.msg);
    int rc = qsf_ring_manifest_back(r, err); /* an aborted flush's rotation left it ahead */
    if (rc == QSF_OK && r->cfg.durability != QSF_DUR_MEMORY)
        rc = qsf_barrier_sync_written(r, err);
    int64_t pub = atomic_load(&r->published_fsn);
    int64_t acked = atomic_load(&r->acked_fsn);
    /* drained: everything published is acknowledged and nothing unpublished
     * is left written (a flush whose undo failed stays, for recovery to cut) */
    bool drained = (pub < 0 || acked >= pub) && r->prod.next_fsn == pub + 1;
    if (rc == QSF_OK && drained)
        return close_drained(r, err);
    /* Keep the tail for the next opener; persist how far it was acknowledged. */
    qsf_errinfo e2;
    int rc2 = qsf_ring_persist_acked(r, &e2);
    if (rc2 != QSF_OK && rc == QSF_OK) {
        qsf_err_copy(err, &e2);
        rc = rc2;
    }
    note_published(r, pub);
    return rc;
}

void qsf_ring_forsake(qsf_ring *r) {
    if (!r)
        return;
    free_segments(r); /* munmap and close: no byte of a file changes */
    if (r->cfg.sf)
        qsf_slot_release(&r->rec); /* closes only: the locks stay the parent's */
    else
        qsf_symdict_destroy(&r->rec.symdict);
}

int qsf_ring_close(qsf_ring *r, qsf_errinfo *err) {
    if (!r)
        return QSF_OK;
    qsf_errinfo e;
    (void) qsf_ring_txn_abort(r, &e); /* an open flush is never published */
    bool spares_stopped = qsf_spares_stop(r);
    if (!qsf_mgr_stop(r) || !spares_stopped) {
        /* A thread may still touch the slot: keep it locked (the lock goes
         * with the process) rather than expose a slot in use. */
        const char *who = spares_stopped ? "manager" : "spare thread";
        QSF_LOGE("ring close: the %s did not stop within 5 s; the slot stays locked", who);
        return qsf_err_set(err, QSF_E_TIMEOUT, 0, 0, "store-and-forward %s did not stop within 5 s",
                           who);
    }
    int rc = r->cfg.sf ? close_sf(r, err) : QSF_OK;
    if (rc != QSF_OK)
        QSF_LOGW("ring close: %s", err ? err->msg : qsf_err_str(rc));
    ring_free(r);
    return rc;
}

/* ---- status, latches, gauges ---- */

void qsf_ring_set_episode_fn(qsf_ring *r, qsf_ring_episode_fn fn, void *user, int64_t long_ms) {
    r->prod.episode_fn = fn;
    r->prod.episode_user = user;
    r->prod.episode_long_ns = long_ms * 1000000;
}

const qsf_fsn_span *qsf_ring_retired(const qsf_ring *r, uint32_t *n) {
    *n = r->cfg.sf ? r->rec.n_retired : 0;
    return *n ? r->rec.retired : NULL;
}

bool qsf_ring_given_up(const qsf_ring *r, int64_t fsn) {
    uint32_t n;
    const qsf_fsn_span *sp = qsf_ring_retired(r, &n);
    for (uint32_t i = 0; i < n; i++)
        if (fsn >= sp[i].from && fsn <= sp[i].to)
            return true;
    return false;
}

const qsf_recovery_loss *qsf_ring_losses(const qsf_ring *r, uint32_t *n) {
    *n = r->cfg.sf ? r->rec.n_losses : 0;
    return *n ? r->rec.losses : NULL;
}

const char *qsf_ring_slot_path(const qsf_ring *r) {
    return r->cfg.sf ? r->rec.slot.path : NULL;
}

qsf_latch *qsf_ring_latch(qsf_ring *r) {
    return r->latch;
}

size_t qsf_ring_max_payload(const qsf_ring *r) {
    return (size_t) qsf_seg_max_payload(r->cfg.seg_bytes);
}

int64_t qsf_ring_published_fsn(const qsf_ring *r) {
    return atomic_load_explicit(&r->published_fsn, memory_order_acquire);
}

int64_t qsf_ring_acked_fsn(const qsf_ring *r) {
    return atomic_load_explicit(&r->acked_fsn, memory_order_acquire);
}

int64_t qsf_ring_planned_fsn(const qsf_ring *r) {
    return atomic_load_explicit(&r->plan.fsn, memory_order_relaxed);
}

/* Published bytes of s (envelopes included) of frames above `acked`. */
static uint64_t unacked_bytes_of(const qsf_segment *s, int64_t acked) {
    uint64_t pub = atomic_load_explicit(&s->published_off, memory_order_acquire);
    if (s->base_seq > acked)
        return pub - QSF_SFA_HEADER_SIZE;
    uint64_t off = qsf_ring_offset_of(s, acked + 1);
    return off == UINT64_MAX || off >= pub ? 0 : pub - off;
}

uint64_t qsf_ring_pending_bytes(const qsf_ring *r) {
    qsf_ring *m = (qsf_ring *) r;
    int64_t acked = qsf_ring_acked_fsn(r);
    uint64_t n = 0;
    pthread_mutex_lock(&m->mu);
    for (qsf_segment *s = r->chain.head; s; s = atomic_load(&s->next)) {
        qsf_segment *nx = atomic_load(&s->next);
        if (!nx || nx->base_seq - 1 > acked)
            n += unacked_bytes_of(s, acked);
    }
    pthread_mutex_unlock(&m->mu);
    return n;
}

int64_t qsf_ring_created_us(const qsf_ring *r, int64_t fsn) {
    qsf_ring *m = (qsf_ring *) r;
    int64_t us = -1;
    pthread_mutex_lock(&m->mu);
    for (qsf_segment *s = r->chain.head; s; s = atomic_load(&s->next)) {
        qsf_segment *nx = atomic_load(&s->next);
        if (s->base_seq <= fsn && (!nx || fsn < nx->base_seq)) {
            us = qsf_get_i64(s->base + QSF_SFA_AT_CREATED);
            break;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return us;
}

uint64_t qsf_ring_owned_bytes(const qsf_ring *r) {
    return atomic_load(&r->owned_bytes) + atomic_load(&r->dict_bytes);
}

uint64_t qsf_ring_backpressure_stalls(const qsf_ring *r) {
    return atomic_load(&r->stalls);
}

int qsf_ring_persist_acked(qsf_ring *r, qsf_errinfo *err) {
    if (!r->cfg.sf || r->rec.watermark.fd < 0)
        return QSF_OK;
    int rc = QSF_OK;
    pthread_mutex_lock(&r->wm.mu);
    int64_t acked = qsf_ring_acked_fsn(r);
    if (acked != r->wm.persisted) {
        rc = qsf_watermark_write(&r->rec.watermark, acked, err);
        if (rc == QSF_OK)
            r->wm.persisted = acked;
    }
    pthread_mutex_unlock(&r->wm.mu);
    return rc;
}

bool qsf_ring_acknowledge(qsf_ring *r, int64_t fsn) {
    int64_t pub = qsf_ring_published_fsn(r);
    if (fsn > pub)
        fsn = pub;
    int64_t cur = atomic_load_explicit(&r->acked_fsn, memory_order_relaxed);
    if (fsn <= cur)
        return false;
    atomic_store_explicit(&r->acked_fsn, fsn, memory_order_release);
    qsf_mgr_wake(r);
    return true;
}

/* ---- symbol dictionary ---- */

int qsf_ring_symdict_append(qsf_ring *r, uint32_t first, uint32_t count, const char *const *strs,
                            const uint32_t *lens, qsf_errinfo *err) {
    pthread_mutex_lock(&r->dict_mu);
    int rc = qsf_symdict_append(&r->rec.symdict, first, count, strs, lens, err);
    if (r->cfg.sf)
        atomic_store(&r->dict_bytes, r->rec.symdict.valid_end);
    pthread_mutex_unlock(&r->dict_mu);
    return rc;
}

uint32_t qsf_ring_symdict_size(const qsf_ring *r) {
    return qsf_symdict_size(&r->rec.symdict);
}

const char *qsf_ring_symdict_entry(const qsf_ring *r, uint32_t i, uint32_t *len) {
    return qsf_symdict_entry(&r->rec.symdict, i, len);
}
