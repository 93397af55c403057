/* The reader's cursor (I/O thread): seek, next, release. A cursor pins the
 * segment it reads so the manager never unmaps it; it reads only below the
 * segment's published offset (acquire), so a seek that races the producer
 * sees exactly the published frames (docs/PROTOCOL.md §8.1, step 5). */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include "sf/segfmt.h"
#include "sf/sfa.h"

/* Under mu: the live segment holding published frame fsn, or for fsn ==
 * published + 1 the one the last published frame is in (the reader waits at
 * its end). Segments that hold only frames of an open flush are never
 * entered: an aborted flush may take them back. NULL when fsn is below the
 * head. */
static qsf_segment *find_segment_locked(qsf_ring *r, int64_t fsn, int64_t pub) {
    qsf_assert_held(&r->mu);
    qsf_segment *s = r->chain.head;
    if (!s || fsn < s->base_seq)
        return NULL;
    for (qsf_segment *n = atomic_load(&s->next); n && fsn >= n->base_seq && n->base_seq <= pub;
         n = atomic_load(&s->next))
        s = n;
    return s;
}

uint64_t qsf_ring_offset_of(const qsf_segment *s, int64_t fsn) {
    uint64_t end = atomic_load_explicit(&s->published_off, memory_order_acquire);
    uint64_t off = QSF_SFA_HEADER_SIZE;
    for (int64_t f = s->base_seq; f < fsn; f++) {
        if (off >= end)
            return UINT64_MAX;
        const uint8_t *p;
        uint32_t len;
        off = qsf_seg_frame_at(s, off, &p, &len);
    }
    return off;
}

int qsf_ring_cursor_seek(qsf_ring *r, qsf_ring_cursor *c, int64_t fsn) {
    qsf_ring_cursor_release(r, c);
    int rc = QSF_E_INVAL;
    int64_t pub = qsf_ring_published_fsn(r);
    pthread_mutex_lock(&r->mu);
    qsf_segment *s = fsn <= pub + 1 ? find_segment_locked(r, fsn, pub) : NULL;
    uint64_t off = s ? qsf_ring_offset_of(s, fsn) : UINT64_MAX;
    if (off != UINT64_MAX) {
        atomic_fetch_add(&s->pins, 1);
        c->seg = s;
        c->offset = off;
        c->next_fsn = fsn;
        c->epoch = atomic_load_explicit(&s->epoch, memory_order_acquire);
        rc = 0;
    }
    pthread_mutex_unlock(&r->mu);
    return rc;
}

int qsf_ring_cursor_next(qsf_ring *r, qsf_ring_cursor *c, const uint8_t **payload, uint32_t *len,
                         int64_t *fsn) {
    (void) r;
    qsf_segment *s = c->seg;
    if (!s)
        return 0;
    for (;;) {
        /* sealed first: once it is set, the published offset loaded after it
         * is final and `next` is linked (both were stored before it). The link
         * alone means nothing: the flush that filled s may still be open. */
        uint64_t sealed = atomic_load_explicit(&s->sealed_off, memory_order_acquire);
        uint64_t end = atomic_load_explicit(&s->published_off, memory_order_acquire);
        uint32_t epoch = atomic_load_explicit(&s->epoch, memory_order_acquire);
        if (epoch != c->epoch) { /* reused in place (ring_reuse.c): every frame was read */
            c->epoch = epoch;
            c->offset = QSF_SFA_HEADER_SIZE;
            continue;
        }
        if (c->offset < end) {
            c->offset = qsf_seg_frame_at(s, c->offset, payload, len);
            qsf_assert(c->offset <= end); /* a published frame ends at or before published_off */
            *fsn = c->next_fsn++;
            return 1;
        }
        if (sealed == UINT64_MAX)
            return 0;
        qsf_segment *nx = atomic_load_explicit(&s->next, memory_order_acquire);
        qsf_assert(nx != NULL); /* linked before it was sealed */
        /* Pin the next segment before unpinning this one: the manager trims
         * oldest first and stops at a pinned segment, so nx stays mapped. */
        atomic_fetch_add(&nx->pins, 1);
        qsf_seg_unpin(s);
        c->seg = s = nx;
        c->offset = QSF_SFA_HEADER_SIZE;
        c->epoch = atomic_load_explicit(&nx->epoch, memory_order_acquire);
    }
}

void qsf_ring_cursor_skip_read(qsf_ring *r, qsf_ring_cursor *c) {
    (void) r;
    qsf_segment *s = c->seg;
    while (s) {
        uint64_t sealed = atomic_load_explicit(&s->sealed_off, memory_order_acquire);
        uint64_t end = atomic_load_explicit(&s->published_off, memory_order_acquire);
        uint32_t epoch = atomic_load_explicit(&s->epoch, memory_order_acquire);
        if (epoch != c->epoch || c->offset < end || sealed == UINT64_MAX)
            return; /* frames to read (or reused): cursor_next's business */
        qsf_segment *nx = atomic_load_explicit(&s->next, memory_order_acquire);
        qsf_assert(nx != NULL);
        atomic_fetch_add(&nx->pins, 1); /* as in cursor_next: pin the next first */
        qsf_seg_unpin(s);
        c->seg = s = nx;
        c->offset = QSF_SFA_HEADER_SIZE;
        c->epoch = atomic_load_explicit(&nx->epoch, memory_order_acquire);
    }
}

bool qsf_ring_frame_intact(const uint8_t *payload, uint32_t len) {
    const uint8_t *env = payload - QSF_SFA_FRAME_AT_PAYLOAD; /* the cursor's frames keep it */
    return qsf_sfa_frame_crc(payload, len) == qsf_sfa_frame_stored_crc(env);
}

void qsf_ring_cursor_release(qsf_ring *r, qsf_ring_cursor *c) {
    (void) r;
    if (c->seg)
        qsf_seg_unpin((qsf_segment *) c->seg);
    c->seg = NULL;
}
