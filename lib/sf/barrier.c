/* Data barriers shared by the periodic checkpoint (manager, docs/DURABILITY.md §8)
 * and the append-mode barrier (producer, docs/DURABILITY.md §9): the dictionary first, then
 * msync + fdatasync of each live segment's written-but-not-durable range. One
 * call covers everything written so far (group commit), including the frames
 * of a flush not yet published: the append barrier runs before a flush is
 * published, and a periodic rotation needs the full segment durable first.
 * sync_mu keeps an abort from zeroing frames while a barrier is under way (a
 * sync finishing after the zeroing would mark the zeroed range durable). */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "err.h"

#define BATCH 16

/* Under mu: pins up to BATCH segments, from `from` on, whose written bytes
 * are not all durable. Returns how many; *resume is where to continue. */
static int collect_dirty_locked(qsf_ring *r, qsf_segment *from, qsf_segment **out,
                                qsf_segment **resume) {
    qsf_assert_held(&r->mu);
    int n = 0;
    qsf_segment *s = from;
    for (; s && n < BATCH; s = atomic_load(&s->next)) {
        uint64_t end = atomic_load_explicit(&s->written_off, memory_order_acquire);
        if (atomic_load(&s->durable_off) >= end)
            continue;
        atomic_fetch_add(&s->pins, 1);
        out[n++] = s;
    }
    *resume = s;
    return n;
}

static int sync_one(qsf_ring *r, qsf_segment *s, qsf_errinfo *err) {
    qsf_assert_held(&r->sync_mu);          /* barriers never run beside an abort's zeroing */
    qsf_assert(atomic_load(&s->pins) > 0); /* collect_dirty_locked pinned it */
    uint64_t from = atomic_load(&s->durable_off);
    uint64_t to = atomic_load_explicit(&s->written_off, memory_order_acquire);
    int rc = qsf_seg_sync_range(s, from, to, r->rec.slot.path, err);
    if (rc != QSF_OK) {
        /* A plain retry could falsely succeed. Only published bytes are
         * stored again: those of an open flush may still be zeroed by an
         * abort, and a failed barrier fails that flush anyway. */
        uint64_t pub = atomic_load_explicit(&s->published_off, memory_order_acquire);
        qsf_seg_redirty(s, from, pub < to ? pub : to);
    } else {
        qsf_seg_unpin_memory(s);
    }
    return rc;
}

static int sync_dictionary(qsf_ring *r, qsf_errinfo *err) {
    pthread_mutex_lock(&r->dict_mu);
    int rc = qsf_symdict_sync(&r->rec.symdict, err);
    pthread_mutex_unlock(&r->dict_mu);
    return rc;
}

static int sync_written(qsf_ring *r, qsf_errinfo *err) {
    qsf_assert_held(&r->sync_mu);
    int rc = sync_dictionary(r, err);
    if (rc == QSF_OK) /* a flush's position before its frames (ring_srcpos.c) */
        rc = qsf_ring_srcpos_sync(r, err);
    if (rc != QSF_OK)
        return rc;
    qsf_segment *batch[BATCH];
    pthread_mutex_lock(&r->mu);
    qsf_segment *next = r->chain.head;
    int n = collect_dirty_locked(r, next, batch, &next);
    pthread_mutex_unlock(&r->mu);
    while (n > 0) {
        for (int i = 0; i < n && rc == QSF_OK; i++)
            rc = sync_one(r, batch[i], err);
        pthread_mutex_lock(&r->mu);
        for (int i = 0; i < n; i++)
            qsf_seg_unpin(batch[i]);
        n = rc == QSF_OK && next ? collect_dirty_locked(r, next, batch, &next) : 0;
        pthread_mutex_unlock(&r->mu);
    }
    return rc;
}

int qsf_barrier_sync_written(qsf_ring *r, qsf_errinfo *err) {
    if (!r->cfg.sf)
        return QSF_OK;
    pthread_mutex_lock(&r->sync_mu);
    int rc = sync_written(r, err);
    pthread_mutex_unlock(&r->sync_mu);
    return rc;
}
