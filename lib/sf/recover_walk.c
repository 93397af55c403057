/* The chain's FSNs in order (sealed members oldest first, then the active
 * segment): each one is an intact frame, read with pread through the shared
 * window, or a destroyed slot (a gap's frame, or a frame a sealed segment lost
 * at its end) that recovery fills with a placeholder. Also what recovery reads
 * of a stored frame's QWP header (lib/qwp/peek). */
#include "recover_int.h"

#include "bytes.h"
#include "err.h"
#include "qwp/peek.h"
#include "qsf_assert.h"
#include "qwp/types.h"
#include "sf/segfmt.h"

#include <fcntl.h>

static uint32_t chain_len(const rc_plan *p) {
    bool active_is_data = p->ndata > 0 && p->data[p->ndata - 1] == p->active;
    return p->ndata + (active_is_data ? 0 : 1);
}

static rc_seg *chain_at(const rc_plan *p, uint32_t i) {
    return i < p->ndata && p->data[i] != p->active ? p->data[i] : p->active;
}

typedef struct walker {
    const qsf_slot *slot;
    uint8_t *buf;
    rc_reader *r;
    int64_t from, to, fsn;
    rc_chain_fn fn;
    void *user;
} walker;

static int visit(walker *w, rc_slot *s, qsf_errinfo *err) {
    s->fsn = w->fsn++;
    if (s->fsn < w->from || s->fsn > w->to)
        return QSF_OK;
    return w->fn(w->r, s, w->user, err);
}

static int walk_run(walker *w, rc_seg *seg, const rc_piece *p, qsf_errinfo *err) {
    uint64_t off = p->off;
    for (uint64_t k = 0; k < p->frames && w->fsn <= w->to; k++) {
        const uint8_t *b;
        size_t got;
        int rc = qsf_rc_read(w->r, off, QSF_SFA_FRAME_OVERHEAD, &b, &got, err);
        if (rc != QSF_OK)
            return rc;
        uint32_t len = qsf_sfa_frame_len(b);
        if (got < QSF_SFA_FRAME_OVERHEAD || off + QSF_SFA_FRAME_OVERHEAD + len > p->end)
            return qsf_err_set(err, QSF_E_IO, 0, 0, "segment %s/%s changed during recovery",
                               w->r->dir, seg->info.name);
        rc_slot s = {.seg = seg, .intact = true, .off = off, .len = len, .piece = p};
        rc = visit(w, &s, err);
        if (rc != QSF_OK)
            return rc;
        off += QSF_SFA_FRAME_OVERHEAD + len;
    }
    return QSF_OK;
}

static int walk_destroyed(walker *w, rc_seg *seg, const rc_piece *p, uint64_t n, qsf_errinfo *err) {
    for (uint64_t k = 0; k < n && w->fsn <= w->to; k++) {
        rc_slot s = {
            .seg = seg, .intact = false, .off = p ? p->off : seg->info.last_good, .piece = p};
        int rc = visit(w, &s, err);
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

static int walk_segment(walker *w, rc_seg *seg, qsf_errinfo *err) {
    int rc = qsf_rc_reader_open(w->r, w->slot, seg->info.name, w->buf, O_RDONLY, err);
    w->fsn = seg->info.base_seq;
    for (uint32_t i = 0; rc == QSF_OK && i < seg->npieces && w->fsn <= w->to; i++) {
        const rc_piece *p = &seg->pieces[i];
        rc = p->kind == RC_RUN ? walk_run(w, seg, p, err)
                               : walk_destroyed(w, seg, p, p->frames, err);
    }
    if (rc == QSF_OK)
        rc = walk_destroyed(w, seg, NULL, seg->fill, err);
    /* a segment's FSN slots are its pieces' and its fill (qsf_rc_count_slots) */
    qsf_assert(rc != QSF_OK || w->fsn > w->to ||
               w->fsn == seg->info.base_seq + (int64_t) seg->info.frame_count);
    qsf_rc_reader_close(w->r);
    return rc;
}

int qsf_rc_walk_chain(const qsf_slot *slot, uint8_t *buf, const rc_plan *p, int64_t from,
                      int64_t to, rc_chain_fn fn, void *user, qsf_errinfo *err) {
    rc_reader r = {.fd = -1};
    walker w = {.slot = slot, .buf = buf, .r = &r, .from = from, .to = to, .fn = fn, .user = user};
    uint32_t n = p->active ? chain_len(p) : 0;
    for (uint32_t i = 0; i < n; i++) {
        rc_seg *seg = chain_at(p, i);
        int64_t last = seg->info.base_seq + (int64_t) seg->info.frame_count - 1;
        if (seg->info.frame_count == 0 || last < from)
            continue;
        if (seg->info.base_seq > to)
            break;
        int rc = walk_segment(&w, seg, err);
        if (rc != QSF_OK)
            return rc;
    }
    return QSF_OK;
}

/* The operator tools' callbacks take the whole pass. */
typedef struct adapter {
    rc_state *st;
    rc_walk_fn fn;
    void *user;
} adapter;

static int on_adapted(rc_reader *r, const rc_slot *s, void *user, qsf_errinfo *err) {
    adapter *a = user;
    return a->fn(a->st, r, s, a->user, err);
}

int qsf_rc_walk(rc_state *st, int64_t from, int64_t to, rc_walk_fn fn, void *user,
                qsf_errinfo *err) {
    adapter a = {.st = st, .fn = fn, .user = user};
    return qsf_rc_walk_chain(&st->out->slot, st->buf, &st->plan, from, to, on_adapted, &a, err);
}

/* ---- a stored frame's QWP header ---- */

int qsf_rc_frame_kind_of(rc_reader *r, const rc_slot *s, rc_frame_kind *k, qsf_errinfo *err) {
    *k = (rc_frame_kind){.commits = true};
    const uint8_t *p;
    size_t got = 0;
    size_t want = s->len < QSF_QWP_HEADER_LEN ? s->len : QSF_QWP_HEADER_LEN;
    int rc = qsf_rc_read(r, s->off + QSF_SFA_FRAME_OVERHEAD, want, &p, &got, err);
    qsf_qwp_hdr h;
    if (rc != QSF_OK || qsf_qwp_peek_header(p, got, &h) != QSF_QWP_PEEK_OK)
        return rc; /* not a QWP message: opaque, committing (the server judges it) */
    k->qwp = true;
    k->flags = h.flags;
    k->tables = h.table_count;
    k->commits = !(h.flags & QSF_QWP_FLAG_DEFER_COMMIT);
    k->placeholder = qsf_qwp_peek_is_placeholder(&h);
    return QSF_OK;
}

/* A message claiming more bytes than its frame holds is malformed: what lies
 * beyond the frame belongs to other frames (or to no frame at all), and a
 * string length taken from it must never size an allocation. */
static bool overruns_frame(const rc_slot *s, const qsf_qwp_hdr *h) {
    return QSF_QWP_HEADER_LEN + (uint64_t) h->payload_length > s->len;
}

int qsf_rc_delta_open(rc_reader *r, const rc_slot *s, rc_delta *d, bool *bad, qsf_errinfo *err) {
    const uint8_t *p;
    size_t got;
    uint64_t base = s->off + QSF_SFA_FRAME_OVERHEAD;
    int rc =
        qsf_rc_read(r, base, s->len < QSF_RECOVER_BUF ? s->len : QSF_RECOVER_BUF, &p, &got, err);
    size_t need;
    *bad = true;
    if (rc != QSF_OK || qsf_qwp_peek_header(p, got, &d->h) != QSF_QWP_PEEK_OK)
        return rc;
    qsf_qwp_delta_info di = {0};
    *bad = overruns_frame(s, &d->h) ||
           qsf_qwp_peek_delta(p, got, &d->h, &di, &need) != QSF_QWP_PEEK_OK;
    d->base = base;
    d->start = di.start;
    d->count = di.count;
    d->pos = di.entries;
    d->i = 0;
    return QSF_OK;
}

int qsf_rc_delta_next(rc_reader *r, rc_delta *d, uint64_t *str, uint64_t *len, bool *bad,
                      qsf_errinfo *err) {
    uint64_t end = QSF_QWP_HEADER_LEN + (uint64_t) d->h.payload_length;
    const uint8_t *p;
    size_t got, need;
    uint64_t want = end - d->pos < 4096 ? end - d->pos : 4096;
    int rc = qsf_rc_read(r, d->base + d->pos, (size_t) want, &p, &got, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t pos = d->pos, s = 0;
    int v = qsf_qwp_peek_delta_entry(p, got, d->pos, &d->h, &pos, &s, len, &need);
    /* SHORT with the length known: a string longer than the window */
    *bad = v == QSF_QWP_PEEK_BAD || (v == QSF_QWP_PEEK_SHORT && s == 0);
    if (*bad)
        return QSF_OK;
    *str = d->base + s;
    d->pos = s + *len;
    d->i++;
    return QSF_OK;
}

int qsf_rc_frame_rows(rc_reader *r, const rc_slot *s, uint64_t *rows, bool *countable,
                      qsf_errinfo *err) {
    *rows = 0;
    *countable = false;
    rc_frame_kind k;
    int rc = qsf_rc_frame_kind_of(r, s, &k, err);
    if (rc != QSF_OK || !k.qwp || k.tables > 1)
        return rc;
    if (k.tables == 0) {
        *countable = true;
        return QSF_OK;
    }
    rc_delta d = {0};
    bool bad = false;
    uint64_t off = QSF_QWP_HEADER_LEN;
    if (k.flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT) {
        rc = qsf_rc_delta_open(r, s, &d, &bad, err);
        uint64_t str, len;
        while (rc == QSF_OK && !bad && d.i < d.count)
            rc = qsf_rc_delta_next(r, &d, &str, &len, &bad, err);
        off = d.pos;
    } else {
        rc = qsf_rc_delta_open(r, s, &d, &bad, err); /* only for the header */
        bad = overruns_frame(s, &d.h);
    }
    if (rc != QSF_OK || bad)
        return rc;
    const uint8_t *p;
    size_t got, need;
    uint64_t end = QSF_QWP_HEADER_LEN + (uint64_t) d.h.payload_length;
    uint64_t want = end > off ? (end - off < 4096 ? end - off : 4096) : 0;
    rc = qsf_rc_read(r, d.base + off, (size_t) want, &p, &got, err);
    qsf_qwp_table_info t;
    if (rc == QSF_OK &&
        qsf_qwp_peek_table_at(p, got, off, &d.h, off, &t, &need) == QSF_QWP_PEEK_OK) {
        *rows = t.rows;
        *countable = true;
    }
    return rc;
}
