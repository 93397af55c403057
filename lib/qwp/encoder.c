/* Batch -> frames: planning (which rows go into which frame), write-ahead of
 * new symbols, the delta section and emission (see encoder.h). Table blocks and
 * column values are written by enc_block.c. */
#include "qwp/encoder.h"
#include "qsf_assert.h"
#include "grow.h"

#include "bytes.h"
#include "err.h"
#include "qwp/batch_int.h"
#include "qwp/enc_int.h"

#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_FRAME ((size_t) (1.9 * 1024 * 1024))
#define MAX_FRAME_CAP     ((size_t) QSF_QWP_HEADER_LEN + QSF_QWP_MAX_PAYLOAD)
#define MAX_TABLES        65535u

size_t qsf_qwp_max_frame(size_t advertised_max_batch, size_t segment_payload_cap) {
    size_t cap = advertised_max_batch
                     ? advertised_max_batch / 10 * 9 + advertised_max_batch % 10 * 9 / 10
                     : DEFAULT_MAX_FRAME;
    if (segment_payload_cap && segment_payload_cap < cap)
        cap = segment_payload_cap;
    if (cap > MAX_FRAME_CAP)
        cap = MAX_FRAME_CAP;
    return cap < QSF_QWP_EMPTY_COMMIT_LEN ? QSF_QWP_EMPTY_COMMIT_LEN : cap;
}

void qsf_qwp_enc_opts_default(qsf_qwp_enc_opts *o) {
    memset(o, 0, sizeof *o);
    o->gorilla = true;
}

int qsf_qwp_encoder_new(qsf_qwp_encoder **out, qsf_errinfo *err) {
    qsf_qwp_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "encoder: out of memory");
    *out = e;
    return QSF_OK;
}

void qsf_qwp_encoder_free(qsf_qwp_encoder *e) {
    if (!e)
        return;
    qsf_buf_free(&e->frame);
    free(e->segs);
    free(e->strs);
    free(e->lens);
    free(e);
}

/* A table-less message whose delta section adds nothing (00 00). */
static size_t empty_message(uint8_t out[QSF_QWP_EMPTY_COMMIT_LEN], uint8_t flags) {
    qsf_enc_header(out, flags, 0, 2);
    out[12] = 0;
    out[13] = 0;
    return QSF_QWP_EMPTY_COMMIT_LEN;
}

size_t qsf_qwp_empty_commit(uint8_t out[QSF_QWP_EMPTY_COMMIT_LEN]) {
    return empty_message(out, QSF_QWP_FLAG_DELTA_SYMBOL_DICT);
}

size_t qsf_qwp_placeholder(uint8_t out[QSF_QWP_PLACEHOLDER_LEN]) {
    return empty_message(out, QSF_QWP_FLAG_DELTA_SYMBOL_DICT | QSF_QWP_FLAG_DEFER_COMMIT);
}

void qsf_enc_header(uint8_t *p, uint8_t flags, uint16_t tables, uint32_t payload) {
    qsf_put_u32(p, QSF_QWP_MAGIC);
    p[4] = QSF_QWP_VERSION;
    p[5] = flags;
    qsf_put_u16(p + 6, tables);
    qsf_put_u32(p + 8, payload);
}

/* ---- planning ---- */

/* Upper bound of the block bytes for rows [r0, r0 + k) of t; with_syms adds the
 * symbol strings those rows interned first. */
static uint64_t seg_bytes(const btable *t, uint32_t r0, uint32_t k, bool with_syms) {
    uint64_t n = t->overhead + (uint64_t) t->nactive * ((k + 7) / 8) + qsf_bt_row_off(t, r0 + k) -
                 qsf_bt_row_off(t, r0);
    if (with_syms && t->sym_off.len)
        n += qsf_bt_sym_off(t, r0 + k) - qsf_bt_sym_off(t, r0);
    return n;
}

/* Bytes of a block carrying only row r, counting only the columns it sets. */
static uint64_t row_block_bytes(const btable *t, uint32_t r) {
    uint64_t n = qsf_bt_row_overhead(t, r) + qsf_bt_row_off(t, r + 1) - qsf_bt_row_off(t, r);
    if (t->sym_off.len)
        n += qsf_bt_sym_off(t, r + 1) - qsf_bt_sym_off(t, r);
    return n;
}

/* Largest k <= max_k whose segment fits in avail bytes (0 if not even one row). */
static uint32_t seg_fit(const btable *t, uint32_t r0, uint32_t max_k, uint64_t avail) {
    if (seg_bytes(t, r0, max_k, true) <= avail)
        return max_k;
    if (seg_bytes(t, r0, 1, true) > avail)
        return row_block_bytes(t, r0) <= avail ? 1 : 0;
    uint32_t lo = 0, hi = max_k; /* invariant: lo fits, hi does not */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (seg_bytes(t, r0, mid, true) <= avail)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static int seg_push(qsf_qwp_encoder *e, btable *t, uint32_t r0, uint32_t r1) {
    qsf_assert(t->first_row <= r0 && r0 < r1 && r1 <= t->nrows); /* pending rows only */
    if (e->nsegs == e->segs_cap) {
        enc_seg *s = qsf_grow(e->segs, &e->segs_cap, 16);
        if (!s)
            return -1;
        e->segs = s;
    }
    e->segs[e->nsegs++] = (enc_seg){t, r0, r1};
    return 0;
}

/* Greedy first pass: rows in order while the estimate fits. */
static int plan_rows(qsf_qwp_encoder *e, qsf_qwp_batch *b, uint64_t budget) {
    uint64_t used = 0;
    e->nsegs = 0;
    for (uint32_t i = 0; i < b->norder && e->nsegs < MAX_TABLES; i++) {
        btable *t = &b->tables[b->order[i]];
        uint32_t left = t->nrows - t->first_row;
        if (left == 0)
            continue;
        uint32_t max_k = left < QSF_QWP_MAX_ROWS_PER_TABLE ? left : QSF_QWP_MAX_ROWS_PER_TABLE;
        uint32_t k = seg_fit(t, t->first_row, max_k, budget - used);
        if (k == 0)
            break;
        if (seg_push(e, t, t->first_row, t->first_row + k) != 0)
            return QSF_E_NOMEM;
        used += seg_bytes(t, t->first_row, k, true);
        if (k < left)
            break;
    }
    return QSF_OK;
}

static uint32_t seg_max_symbol_end(const enc_seg *s) {
    uint32_t end = 0;
    for (uint32_t i = 0; i < s->t->ncols; i++) {
        const bcol *c = &s->t->cols[i];
        if (c->type != QSF_QWP_SYMBOL)
            continue;
        uint32_t v0 = qsf_bcol_rank(c, s->r0), v1 = qsf_bcol_rank(c, s->r1);
        const uint32_t *ids = (const uint32_t *) (const void *) c->data.p;
        for (uint32_t v = v0; v < v1; v++)
            if (ids[v] + 1 > end)
                end = ids[v] + 1;
    }
    return end;
}

/* Fills e->delta_* for the planned segments and returns the exact frame size
 * bound (header, delta section, blocks). */
static uint64_t plan_size(qsf_qwp_encoder *e, const qsf_qwp_batch *b, bool self_sufficient) {
    uint32_t need = 0;
    uint64_t n = QSF_QWP_HEADER_LEN;
    for (uint32_t i = 0; i < e->nsegs; i++) {
        const enc_seg *s = &e->segs[i];
        uint32_t end = seg_max_symbol_end(s);
        need = end > need ? end : need;
        uint64_t all = seg_bytes(s->t, s->r0, s->r1 - s->r0, false);
        if (s->r1 - s->r0 == 1) { /* a lone row carries only its own columns */
            uint64_t one = row_block_bytes(s->t, s->r0);
            if (s->t->sym_off.len)
                one -= qsf_bt_sym_off(s->t, s->r0 + 1) - qsf_bt_sym_off(s->t, s->r0);
            all = one < all ? one : all;
        }
        n += all;
    }
    uint32_t start = self_sufficient ? 0 : qsf_symtab_published(b->symtab);
    e->delta_start = start;
    e->delta_count = need > start ? need - start : 0;
    n += qsf_varint_len(start) + qsf_varint_len(e->delta_count);
    for (uint32_t id = start; id < start + e->delta_count; id++) {
        const char *s = NULL;
        size_t len = 0;
        int found = qsf_symtab_get(b->symtab, id, &s, &len);
        qsf_assert(found == QSF_OK); /* ids below the table's size */
        (void) found;
        n += qsf_varint_len(len) + len;
    }
    return n;
}

/* One table's first pending row alone, for the first table where that fits. The
 * earliest-buffered pending row always fits this way when it fits a frame at all:
 * any unpublished symbol id below its end was interned by that row itself (a row
 * that interned one earlier would itself still be pending, before it), so its
 * frame is the one-row frame the batch sized when it took the row. */
static int plan_lone_row(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *o,
                         uint64_t *size) {
    for (uint32_t i = 0; i < b->norder; i++) {
        btable *t = &b->tables[b->order[i]];
        if (t->first_row == t->nrows)
            continue;
        e->nsegs = 0;
        if (seg_push(e, t, t->first_row, t->first_row + 1) != 0)
            return QSF_E_NOMEM;
        *size = plan_size(e, b, o->self_sufficient);
        if (*size <= o->max_frame)
            return QSF_OK;
    }
    e->nsegs = 0;
    return QSF_E_TOO_LARGE;
}

/* Plans the next frame. The greedy pass charges each new symbol to the row that
 * interned it; the frame's real delta section may also carry ids of rows in later
 * frames (another table used them first), so when the exact size is over the cap
 * the pass is re-run with a budget lowered by the overshoot, then the last
 * segment is halved, and as a last resort one row of another table goes first
 * (the one whose symbols the rows in table order wait for). Returns QSF_OK with
 * e->nsegs > 0, or QSF_E_TOO_LARGE when not even one row fits. */
static int plan_frame(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *o,
                      uint64_t *size) {
    uint64_t budget = o->max_frame - QSF_QWP_HEADER_LEN - 2;
    for (int round = 0; round < 8; round++) {
        int rc = plan_rows(e, b, budget);
        if (rc != QSF_OK)
            return rc;
        if (e->nsegs == 0)
            break;
        *size = plan_size(e, b, o->self_sufficient);
        if (*size <= o->max_frame)
            return QSF_OK;
        uint64_t over = *size - o->max_frame;
        if (over >= budget)
            break;
        budget -= over;
    }
    while (e->nsegs > 0) {
        *size = plan_size(e, b, o->self_sufficient);
        if (*size <= o->max_frame)
            return QSF_OK;
        enc_seg *last = &e->segs[e->nsegs - 1];
        uint32_t k = (last->r1 - last->r0) / 2;
        if (k == 0)
            e->nsegs--;
        else
            last->r1 = last->r0 + k;
    }
    return plan_lone_row(e, b, o, size);
}

/* ---- symbols ---- */

static int write_ahead(qsf_qwp_encoder *e, qsf_symtab *st, uint32_t end,
                       qsf_qwp_on_new_symbols_fn fn, void *user, qsf_errinfo *err) {
    uint32_t first = qsf_symtab_persisted(st);
    if (!fn || end <= first)
        return QSF_OK;
    uint32_t count = end - first;
    if (count > e->strs_cap) {
        const char **s = realloc(e->strs, (size_t) count * sizeof *s);
        if (s)
            e->strs = s;
        size_t *l = realloc(e->lens, (size_t) count * sizeof *l);
        if (l)
            e->lens = l;
        if (!s || !l)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "encoder: out of memory");
        e->strs_cap = count;
    }
    for (uint32_t i = 0; i < count; i++)
        qsf_symtab_get(st, first + i, &e->strs[i], &e->lens[i]);
    int rc = fn(user, first, count, e->strs, e->lens, err);
    if (rc != QSF_OK)
        return rc;
    qsf_symtab_set_persisted(st, end);
    return QSF_OK;
}

/* ---- frames ---- */

static uint8_t *write_delta(const qsf_qwp_encoder *e, const qsf_symtab *st, uint8_t *p) {
    p += qsf_put_varint(p, e->delta_start);
    p += qsf_put_varint(p, e->delta_count);
    for (uint32_t id = e->delta_start; id < e->delta_start + e->delta_count; id++) {
        const char *s = NULL;
        size_t len = 0;
        int found = qsf_symtab_get(st, id, &s, &len);
        qsf_assert(found == QSF_OK); /* ids below the table's size */
        (void) found;
        p += qsf_put_varint(p, len);
        memcpy(p, s, len);
        p += len;
    }
    return p;
}

/* Builds the planned frame (at most `size` bytes) at f: room lent by the
 * placer, or NULL for the encoder's own buffer (*at then says where it is). */
static int build_frame(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *o,
                       uint64_t size, bool last, uint8_t *f, uint8_t **at, size_t *len,
                       qsf_errinfo *err) {
    if (!f) {
        e->frame.len = 0;
        if (qsf_buf_reserve(&e->frame, size) != 0)
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0,
                               "encoder: out of memory for a %llu-byte frame",
                               (unsigned long long) size);
        f = e->frame.p;
    }
    *at = f;
    uint8_t *p = write_delta(e, b->symtab, f + QSF_QWP_HEADER_LEN);
    for (uint32_t i = 0; i < e->nsegs; i++)
        p = qsf_enc_block(p, &e->segs[i], o->gorilla);
    *len = (size_t) (p - f);
    if (*len > size)
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0,
                           "encoder: frame of %zu bytes exceeds its bound of %llu", *len,
                           (unsigned long long) size);
    uint8_t flags = QSF_QWP_FLAG_DELTA_SYMBOL_DICT | (o->gorilla ? QSF_QWP_FLAG_GORILLA : 0) |
                    (last && !o->defer_last ? 0 : QSF_QWP_FLAG_DEFER_COMMIT);
    qsf_enc_header(f, flags, (uint16_t) e->nsegs, (uint32_t) (*len - QSF_QWP_HEADER_LEN));
    return QSF_OK;
}

/* The frame at f (placed, or in the encoder's buffer) goes out: sealed where
 * it was placed, else emitted. Errors before that give the room back. */
static int hand_over(const qsf_enc_cbs *cb, bool placed, int rc, const uint8_t *f, size_t len,
                     uint64_t size, bool last, qsf_errinfo *err) {
    if (!placed)
        return rc == QSF_OK ? cb->emit(cb->user, f, len, last, err) : rc;
    if (rc == QSF_OK)
        cb->placer->seal(cb->user, len, last);
    else
        cb->placer->unplace(cb->user, (size_t) size);
    return rc;
}

static size_t planned_rows(const qsf_qwp_encoder *e) {
    size_t n = 0;
    for (uint32_t i = 0; i < e->nsegs; i++)
        n += e->segs[i].r1 - e->segs[i].r0;
    return n;
}

static void consume(qsf_qwp_encoder *e, qsf_qwp_batch *b) {
    for (uint32_t i = 0; i < e->nsegs; i++) {
        e->segs[i].t->first_row = e->segs[i].r1;
        b->rows -= e->segs[i].r1 - e->segs[i].r0;
    }
    uint32_t end = e->delta_start + e->delta_count;
    if (end > qsf_symtab_published(b->symtab))
        qsf_symtab_set_published(b->symtab, end);
}

/* Fails with the first row of the batch that cannot fit in a frame on its own. */
static int check_rows_fit(const qsf_qwp_batch *b, size_t max_frame, qsf_errinfo *err) {
    const uint64_t fixed = QSF_QWP_HEADER_LEN + 10;
    for (uint32_t i = 0; i < b->norder; i++) {
        const btable *t = &b->tables[b->order[i]];
        if (t->first_row == t->nrows || fixed + t->overhead + t->nactive + t->max_row <= max_frame)
            continue;
        for (uint32_t r = t->first_row; r < t->nrows; r++) {
            uint64_t n = fixed + row_block_bytes(t, r);
            if (n > max_frame)
                return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                                   "batch too large: table \"%.*s\", buffered row %u needs %llu "
                                   "bytes, more than one frame holds (%zu); nothing was sent",
                                   t->name_len, t->name, r - t->first_row, (unsigned long long) n,
                                   max_frame);
        }
    }
    return QSF_OK;
}

void qsf_enc_norm_opts(const qsf_qwp_enc_opts *in, qsf_qwp_enc_opts *o) {
    if (in)
        *o = *in;
    else
        qsf_qwp_enc_opts_default(o);
    if (o->max_frame == 0)
        o->max_frame = DEFAULT_MAX_FRAME;
    if (o->max_frame > MAX_FRAME_CAP)
        o->max_frame = MAX_FRAME_CAP;
    if (o->max_frame < QSF_QWP_HEADER_LEN + 2)
        o->max_frame = QSF_QWP_HEADER_LEN + 2;
    if (o->row_frame_max > MAX_FRAME_CAP)
        o->row_frame_max = MAX_FRAME_CAP;
    if (o->row_frame_max < o->max_frame)
        o->row_frame_max = o->max_frame;
}

/* Frame bound for the next row alone when it does not fit max_frame. */
static uint64_t next_row_frame(const qsf_qwp_batch *b) {
    for (uint32_t i = 0; i < b->norder; i++) {
        const btable *t = &b->tables[b->order[i]];
        if (t->first_row < t->nrows)
            return QSF_QWP_HEADER_LEN + 10 + row_block_bytes(t, t->first_row);
    }
    return 0;
}

/* One frame: plan, write-ahead, build, emit, consume. */
static int encode_one(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *o,
                      const qsf_enc_cbs *cb, qsf_qwp_encode_result *res, qsf_errinfo *err) {
    uint64_t size;
    int rc = plan_frame(e, b, o, &size);
    qsf_qwp_enc_opts alone = *o;
    if (rc == QSF_E_TOO_LARGE && o->row_frame_max > o->max_frame) {
        uint64_t one = next_row_frame(b) + 64; /* slack: the bound and the plan differ a little */
        alone.max_frame = one < o->row_frame_max ? (size_t) one : o->row_frame_max;
        rc = plan_frame(e, b, &alone, &size);
        o = &alone;
    }
    if (rc == QSF_E_TOO_LARGE)
        return qsf_err_set(err, rc, 0, 0,
                           "batch too large: the next buffered row does not fit in a frame of "
                           "%zu bytes",
                           o->max_frame);
    if (rc != QSF_OK)
        return qsf_err_set(err, rc, 0, 0, "encoder: out of memory");
    size_t rows = planned_rows(e), len = 0;
    bool last = rows == b->rows;
    /* Before the frame is placed: while the write-ahead runs, no byte of its
     * rows lies past the ring's last frame, where a crash would leave them
     * for recovery's salvage to read as frames. */
    rc = write_ahead(e, b->symtab, e->delta_start + e->delta_count, cb->on_new, cb->user, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t *placed = cb->placer ? cb->placer->place(cb->user, (size_t) size) : NULL, *f = NULL;
    rc = build_frame(e, b, o, size, last, placed, &f, &len, err);
    rc = hand_over(cb, placed != NULL, rc, f, len, size, last, err);
    if (rc != QSF_OK)
        return rc;
    consume(e, b);
    res->frames++;
    res->rows_consumed += rows;
    res->bytes += len;
    return QSF_OK;
}

int qsf_qwp_encode(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *opts,
                   qsf_qwp_on_new_symbols_fn on_new_symbols, qsf_qwp_emit_fn emit, void *user,
                   qsf_qwp_encode_result *res, qsf_errinfo *err) {
    return qsf_qwp_encode_placed(e, b, opts, on_new_symbols, emit, NULL, user, res, err);
}

int qsf_qwp_encode_placed(qsf_qwp_encoder *e, qsf_qwp_batch *b, const qsf_qwp_enc_opts *opts,
                          qsf_qwp_on_new_symbols_fn on_new_symbols, qsf_qwp_emit_fn emit,
                          const qsf_qwp_placer *placer, void *user, qsf_qwp_encode_result *res,
                          qsf_errinfo *err) {
    qsf_qwp_encode_result local;
    res = res ? res : &local;
    memset(res, 0, sizeof *res);
    res->rows_left = b->rows;
    if (b->cur)
        return qsf_err_set(err, QSF_E_STATE, 0, 0,
                           "a row for table \"%.*s\" is open: end or cancel it before flushing",
                           b->cur->name_len, b->cur->name);
    qsf_qwp_enc_opts o;
    qsf_enc_norm_opts(opts, &o);
    int rc = check_rows_fit(b, o.row_frame_max, err);
    const qsf_enc_cbs cb = {on_new_symbols, emit, placer, user};
    while (rc == QSF_OK && b->rows > 0)
        rc = encode_one(e, b, &o, &cb, res, err);
    res->rows_left = b->rows;
    if (rc != QSF_OK) {
        if (err && res->frames > 0 && !o.keep_rows)
            err->flags |= QSF_ERRF_IN_DOUBT;
        return rc;
    }
    if (!o.keep_rows)
        qsf_qwp_batch_reset(b);
    return QSF_OK;
}
