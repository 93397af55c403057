/* A chunk -> frames: symbols, planning and emission (see chunk_enc.h). The
 * column values are written by chunk_vals.c. */
#include "chunk/chunk_enc.h"
#include "qsf_assert.h"

#include "bytes.h"
#include "chunk/chunk_cols.h"
#include "chunk/chunk_vals.h"
#include "err.h"
#include "qwp/enc_int.h"
#include "qwp/strmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A string of the caller's buffers and its id: the symbol table is asked
 * once per distinct string and slot, not once per row. */
typedef struct qsf_chunk_memo {
    const char *s;       /* NULL: empty slot */
    uint64_t tail, head; /* memo_words() of s */
    uint32_t len, id;
} qsf_chunk_memo;

#define MEMO_MAX 4096

/* Makes room for n elements of `size` bytes in *pp (capacity *cap). */
static int grow(void *pp, size_t *cap, size_t n, size_t size) {
    if (n <= *cap)
        return 0;
    size_t m = *cap ? *cap : 64;
    while (m < n)
        m *= 2;
    void *q = realloc(*(void **) pp, m * size);
    if (!q)
        return -1;
    *(void **) pp = q;
    *cap = m;
    return 0;
}

void qsf_chunk_enc_free(qsf_chunk *c) {
    qsf_chunk_scratch *x = &c->scratch;
    free(x->ids);
    free(x->dict_ids);
    free(x->sym_end);
    free(x->cum);
    free(x->ts);
    free(x->frame);
    free(x->strs);
    free(x->lens);
    free(x->cuts);
    free(x->memo);
    memset(x, 0, sizeof *x);
}

/* ---- symbols ---- */

static void str_at(const void *offs, bool wide, const void *data, size_t j, const char **s,
                   size_t *len) {
    uint64_t b, e;
    qsf_chunk_span(offs, wide, j, &b, &e);
    *len = (size_t) (e - b);
    *s = *len ? (const char *) data + b : "";
}

/* The words of a string a memo slot keeps: its tail (qsf_strmap_tail: every
 * byte of a string of up to 8 bytes) and its first 8 bytes (with the tail,
 * every byte up to 16). A hit on a short string, most symbols, is then
 * decided by the words in hand, without reading the bytes the slot points at. */
static inline uint64_t memo_tail(const char *s, size_t len) {
    return len ? qsf_strmap_tail(s, len) : 0;
}

static inline uint64_t memo_head(const char *s, size_t len) {
    return len > 8 ? qsf_strmap_load64(s) : 0;
}

/* The memo slot of a string: one multiply over its length and tail, not
 * the symbol table's hash (three dependent multiplies), which only a miss
 * needs. The product's top bits, which every bit of the bytes reaches (the
 * bytes that differ between strings such as "SYM000042" and "SYM000043" are
 * the high ones). */
static inline size_t memo_slot(uint64_t tail, size_t len, int shift) {
    return (size_t) (((tail ^ len) * 0x9E3779B97F4A7C15ull) >> shift);
}

/* Whether slot m holds s (whose tail is `tail`): bytes 8 .. len - 8 are read
 * only for strings longer than 16. */
static inline bool memo_hit(const qsf_chunk_memo *m, const char *s, size_t len, uint64_t tail) {
    if (!m->s || m->len != len || m->tail != tail)
        return false;
    if (len <= 8)
        return true;
    return m->head == qsf_strmap_load64(s) &&
           (len <= 16 || qsf_bytes_eq(m->s + 8, s + 8, len - 16));
}

/* memo_slot's shift for x->memo_slots slots (a power of two). */
static int memo_shift(const qsf_chunk_scratch *x) {
    return 64 - __builtin_ctzll(x->memo_slots);
}

/* The id of row r of SYMBOL column k (a valid row), interned if new. */
static int row_id(qsf_chunk *c, qsf_chunk_col *k, qsf_symtab *st, size_t r, uint32_t *id,
                  qsf_errinfo *err) {
    qsf_chunk_scratch *x = &c->scratch;
    const char *s;
    size_t len;
    uint32_t *slot = NULL;
    qsf_chunk_memo *m = NULL;
    uint64_t tail = 0;
    if (k->src == CSRC_SYMDICT) {
        size_t code = (size_t) qsf_chunk_code(k, r);
        slot = &x->dict_ids[k->dict_at + code];
        if (*slot) {
            *id = *slot - 1;
            return QSF_OK;
        }
        str_at(k->offs, false, k->dict, code, &s, &len);
    } else {
        str_at(k->offs, k->src == CSRC_SYM64, k->values, k->off + r, &s, &len);
        tail = memo_tail(s, len);
        m = &x->memo[memo_slot(tail, len, memo_shift(x))];
        if (memo_hit(m, s, len, tail)) {
            *id = m->id;
            return QSF_OK;
        }
    }
    int rc = qsf_symtab_intern(st, s, len, id, NULL, err);
    if (rc != QSF_OK) {
        char cause[QSF_ERRINFO_MSG_MAX];
        snprintf(cause, sizeof cause, "%s", err ? err->msg : "");
        return qsf_chunk_col_error(c, k->name, k->name_len, rc, err, "row %zu: %s", r, cause);
    }
    if (slot)
        *slot = *id + 1;
    if (m)
        *m = (qsf_chunk_memo){s, tail, memo_head(s, len), (uint32_t) len, *id};
    return QSF_OK;
}

/* Where each SYMBOL column's ids and dictionary slots go. */
static int symbol_layout(qsf_chunk *c, size_t *nsym) {
    qsf_chunk_scratch *x = &c->scratch;
    size_t dict = 0;
    *nsym = 0;
    for (uint32_t i = 0; i < c->ncols; i++) {
        qsf_chunk_col *k = &c->cols[i];
        if (k->type != QSF_QWP_SYMBOL)
            continue;
        k->ids_at = *nsym * c->rows;
        (*nsym)++;
        k->dict_at = dict;
        if (k->src == CSRC_SYMDICT)
            dict += k->dict_len;
    }
    size_t memo = 16; /* about two slots per row, at most MEMO_MAX */
    while (memo < MEMO_MAX && memo < 2 * c->rows)
        memo *= 2;
    if (grow(&x->ids, &x->ids_cap, *nsym * c->rows, sizeof *x->ids) ||
        grow(&x->dict_ids, &x->dict_cap, dict, sizeof *x->dict_ids) ||
        grow(&x->sym_end, &x->end_cap, c->rows + 1, sizeof *x->sym_end) ||
        grow(&x->memo, &x->memo_cap, memo, sizeof *x->memo))
        return -1;
    x->memo_slots = memo;
    memset(x->memo, 0, memo * sizeof *x->memo);
    if (dict)
        memset(x->dict_ids, 0, dict * sizeof *x->dict_ids);
    return 0;
}

/* intern_all for the common case, in one loop: a chunk's only SYMBOL column,
 * plain strings with 32-bit offsets, no NULLs. Memo hits are resolved here;
 * a miss goes through row_id. */
static int intern_plain32(qsf_chunk *c, qsf_chunk_col *k, qsf_symtab *st, qsf_errinfo *err) {
    qsf_chunk_scratch *x = &c->scratch;
    const int32_t *o = (const int32_t *) k->offs + k->off;
    const char *data = k->values;
    const qsf_chunk_memo *memo = x->memo; /* row_id may fill a slot, never move it */
    const int shift = memo_shift(x);
    uint32_t *ids = x->ids + k->ids_at, *sym_end = x->sym_end, end = 0;
    const size_t rows = c->rows;
    sym_end[0] = 0;
    for (size_t r = 0; r < rows; r++) {
        const char *s = data + o[r];
        size_t len = (size_t) (o[r + 1] - o[r]);
        uint64_t tail = memo_tail(s, len);
        const qsf_chunk_memo *m = &memo[memo_slot(tail, len, shift)];
        uint32_t id = m->id;
        if (!memo_hit(m, s, len, tail)) {
            int rc = row_id(c, k, st, r, &id, err);
            if (rc != QSF_OK)
                return rc;
        }
        ids[r] = id;
        end = id + 1 > end ? id + 1 : end;
        sym_end[r + 1] = end;
    }
    return QSF_OK;
}

/* Interns every symbol, row by row (the order the row API assigns ids in),
 * and records sym_end for every row prefix. */
static int intern_all(qsf_chunk *c, qsf_symtab *st, qsf_errinfo *err) {
    size_t nsym;
    if (symbol_layout(c, &nsym) != 0)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk of table \"%.*s\": out of memory",
                           c->table_len, c->table);
    qsf_chunk_scratch *x = &c->scratch;
    qsf_chunk_col *sym[QSF_QWP_MAX_COLUMNS];
    for (uint32_t i = 0, n = 0; i < c->ncols; i++)
        if (c->cols[i].type == QSF_QWP_SYMBOL)
            sym[n++] = &c->cols[i];
    if (nsym == 1 && sym[0]->src == CSRC_SYM32 && !sym[0]->validity)
        return intern_plain32(c, sym[0], st, err);
    uint32_t end = 0;
    x->sym_end[0] = 0;
    for (size_t r = 0; r < c->rows; r++) {
        for (size_t i = 0; i < nsym; i++) {
            qsf_chunk_col *k = sym[i];
            if (!qsf_chunk_valid(k, r))
                continue;
            uint32_t id;
            int rc = row_id(c, k, st, r, &id, err);
            if (rc != QSF_OK)
                return rc;
            x->ids[k->ids_at + r] = id;
            end = id + 1 > end ? id + 1 : end;
        }
        x->sym_end[r + 1] = end;
    }
    return QSF_OK;
}

/* cum[i]: the delta-section bytes of ids [base, base + i). */
static int delta_sizes(qsf_chunk *c, const qsf_symtab *st, uint32_t base) {
    qsf_chunk_scratch *x = &c->scratch;
    uint32_t n = qsf_symtab_size(st) - base;
    if (grow(&x->cum, &x->cum_cap, (size_t) n + 1, sizeof *x->cum))
        return -1;
    x->cum[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *s;
        size_t len = 0;
        qsf_symtab_get(st, base + i, &s, &len);
        x->cum[i + 1] = x->cum[i] + qsf_varint_len(len) + len;
    }
    return 0;
}

/* ---- planning ---- */

typedef struct enc_ctx {
    qsf_chunk *c;
    qsf_symtab *st;
    qsf_qwp_enc_opts o;
    const qsf_chunk_out *out;
    uint32_t base;    /* first id of cum */
    uint8_t id_bytes; /* bytes of the largest id as a varint */
} enc_ctx;

/* The delta section's first id for a frame sent when `published` ids are. */
static uint32_t delta_start(const enc_ctx *e, uint32_t published) {
    return e->o.self_sufficient ? 0 : published;
}

/* Upper bound of the frame carrying rows [r0, r0 + n) after `published`. */
static uint64_t frame_bound(const enc_ctx *e, size_t r0, size_t n, uint32_t published) {
    const qsf_chunk *c = e->c;
    uint32_t start = delta_start(e, published), end = c->scratch.sym_end[r0 + n];
    uint64_t b = QSF_QWP_HEADER_LEN + qsf_varint_len(start) + 5;
    if (end > start)
        b += c->scratch.cum[end - e->base] - c->scratch.cum[start - e->base];
    b += 1 + (uint64_t) c->table_len + 5 + 3; /* name, row_count, column_count */
    for (uint32_t i = 0; i < c->ncols; i++)
        b += 2 + (uint64_t) c->cols[i].name_len +
             qsf_chunk_col_bound(&c->cols[i], r0, n, e->id_bytes);
    if (c->has_ts)
        b += 2 + 2 + 8 * (uint64_t) n; /* def, null flag, encoding byte, values */
    return b;
}

/* Plans every frame (cuts), or fails with the first row that fits none. */
static int plan(enc_ctx *e, size_t *nframes, qsf_errinfo *err) {
    qsf_chunk *c = e->c;
    qsf_chunk_scratch *x = &c->scratch;
    uint32_t published = qsf_symtab_published(e->st);
    size_t r0 = 0, f = 0, cap = e->o.max_frame;
    if (grow(&x->cuts, &x->cuts_cap, 2, sizeof *x->cuts))
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory");
    x->cuts[0] = 0;
    while (r0 < c->rows) {
        size_t k =
            c->rows - r0 < QSF_QWP_MAX_ROWS_PER_TABLE ? c->rows - r0 : QSF_QWP_MAX_ROWS_PER_TABLE;
        if (frame_bound(e, r0, k, published) > cap) {
            size_t lo = 0, hi = k; /* lo fits (or is 0), hi does not */
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                *(frame_bound(e, r0, mid, published) <= cap ? &lo : &hi) = mid;
            }
            if (lo == 0)
                return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                                   "chunk of table \"%.*s\": row %zu needs up to %llu bytes, "
                                   "more than one frame holds (%zu); nothing was published",
                                   c->table_len, c->table, r0,
                                   (unsigned long long) frame_bound(e, r0, 1, published), cap);
            k = lo;
        }
        qsf_assert(k > 0 && frame_bound(e, r0, k, published) <= cap); /* each frame fits */
        uint32_t end = x->sym_end[r0 + k];
        published = end > published ? end : published;
        r0 += k;
        if (grow(&x->cuts, &x->cuts_cap, f + 2, sizeof *x->cuts))
            return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory");
        x->cuts[++f] = r0;
    }
    qsf_assert(x->cuts[f] == c->rows); /* the frames cover every row */
    *nframes = f;
    size_t most = 0; /* rows of the largest frame: the timestamp scratch holds them */
    for (size_t i = 0; i < f; i++)
        most = x->cuts[i + 1] - x->cuts[i] > most ? x->cuts[i + 1] - x->cuts[i] : most;
    if (grow(&x->ts, &x->ts_cap, most, sizeof *x->ts))
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory");
    return QSF_OK;
}

/* Bytes the string of row r of SYMBOL column k (valid) takes in a delta. */
static uint64_t symbol_bytes(const qsf_chunk_col *k, size_t r) {
    const char *s;
    size_t len;
    if (k->src == CSRC_SYMDICT)
        str_at(k->offs, false, k->dict, (size_t) qsf_chunk_code(k, r), &s, &len);
    else
        str_at(k->offs, k->src == CSRC_SYM64, k->values, k->off + r, &s, &len);
    return 5 + (uint64_t) len;
}

int qsf_chunk_rows_fit(const qsf_chunk *c, size_t max_frame, qsf_errinfo *err) {
    uint64_t fixed = QSF_QWP_HEADER_LEN + 10 + 1 + (uint64_t) c->table_len + 8 + 12;
    for (uint32_t i = 0; i < c->ncols; i++)
        fixed += 2 + (uint64_t) c->cols[i].name_len;
    for (size_t r = 0; r < c->rows; r++) {
        uint64_t b = fixed;
        for (uint32_t i = 0; i < c->ncols; i++) {
            const qsf_chunk_col *k = &c->cols[i];
            b += qsf_chunk_col_bound(k, r, 1, 5);
            if (k->type == QSF_QWP_SYMBOL && qsf_chunk_valid(k, r))
                b += symbol_bytes(k, r);
        }
        if (b > max_frame)
            return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                               "chunk of table \"%.*s\": row %zu needs up to %llu bytes, more "
                               "than one frame holds (%zu); nothing was published",
                               c->table_len, c->table, r, (unsigned long long) b, max_frame);
    }
    return QSF_OK;
}

/* ---- frames ---- */

/* New dictionary entries up to `end` go to .symbol-dict before their frame. */
static int write_ahead(enc_ctx *e, uint32_t end, qsf_errinfo *err) {
    qsf_chunk_scratch *x = &e->c->scratch;
    uint32_t first = qsf_symtab_persisted(e->st);
    if (!e->out->on_new || e->o.self_sufficient || end <= first)
        return QSF_OK;
    uint32_t n = end - first;
    if (grow(&x->strs, &x->strs_cap, n, sizeof *x->strs) ||
        grow(&x->lens, &x->lens_cap, n, sizeof *x->lens))
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory");
    for (uint32_t i = 0; i < n; i++)
        qsf_symtab_get(e->st, first + i, &x->strs[i], &x->lens[i]);
    int rc = e->out->on_new(e->out->user, first, n, x->strs, x->lens, err);
    if (rc == QSF_OK)
        qsf_symtab_set_persisted(e->st, end);
    return rc;
}

static uint8_t *put_delta(const enc_ctx *e, uint8_t *p, uint32_t start, uint32_t end) {
    uint32_t count = end > start ? end - start : 0;
    p += qsf_put_varint(p, start);
    p += qsf_put_varint(p, count);
    for (uint32_t id = start; id < start + count; id++) {
        const char *s;
        size_t len = 0;
        qsf_symtab_get(e->st, id, &s, &len);
        p += qsf_put_varint(p, len);
        memcpy(p, s, len);
        p += len;
    }
    return p;
}

/* Builds the frame of rows [r0, r1) at f; returns its length. */
static size_t build(enc_ctx *e, uint8_t *f, size_t r0, size_t r1, bool last) {
    uint32_t published = qsf_symtab_published(e->st);
    uint8_t *p =
        put_delta(e, f + QSF_QWP_HEADER_LEN, delta_start(e, published), e->c->scratch.sym_end[r1]);
    p = qsf_chunk_put_block(e->c, p, r0, r1 - r0, e->o.gorilla);
    uint8_t flags = QSF_QWP_FLAG_DELTA_SYMBOL_DICT | (e->o.gorilla ? QSF_QWP_FLAG_GORILLA : 0) |
                    (last && !e->o.defer_last ? 0 : QSF_QWP_FLAG_DEFER_COMMIT);
    size_t len = (size_t) (p - f);
    qsf_enc_header(f, flags, 1, (uint32_t) (len - QSF_QWP_HEADER_LEN));
    return len;
}

/* One frame: write-ahead, room (lent or own), build, hand over. */
static int emit_one(enc_ctx *e, size_t r0, size_t r1, bool last, qsf_qwp_encode_result *res,
                    qsf_errinfo *err) {
    qsf_chunk_scratch *x = &e->c->scratch;
    qsf_assert(r0 < r1 && r1 <= e->c->rows && res->rows_consumed == r0); /* frames in row order */
    uint32_t end = x->sym_end[r1];
    int rc = write_ahead(e, end, err);
    if (rc != QSF_OK)
        return rc;
    size_t bound = (size_t) frame_bound(e, r0, r1 - r0, qsf_symtab_published(e->st));
    const qsf_qwp_placer *pl = e->out->placer;
    uint8_t *f = pl ? pl->place(e->out->user, bound) : NULL;
    bool placed = f != NULL;
    if (!placed && grow(&x->frame, &x->frame_cap, bound, 1))
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory for a %zu-byte frame",
                           bound);
    f = placed ? f : x->frame;
    size_t len = build(e, f, r0, r1, last);
    if (len > bound) { /* the bound is wrong: nothing past the room may be trusted */
        if (placed)
            pl->unplace(e->out->user, bound);
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0,
                           "chunk: frame of %zu bytes exceeds its bound of %zu", len, bound);
    }
    if (placed)
        pl->seal(e->out->user, len, last);
    else if ((rc = e->out->emit(e->out->user, f, len, last, err)) != QSF_OK)
        return rc;
    if (end > qsf_symtab_published(e->st))
        qsf_symtab_set_published(e->st, end);
    res->frames++;
    res->rows_consumed += r1 - r0;
    res->bytes += len;
    return QSF_OK;
}

static int encode(enc_ctx *e, qsf_qwp_encode_result *res, qsf_errinfo *err) {
    int rc = intern_all(e->c, e->st, err);
    if (rc != QSF_OK)
        return rc;
    e->base = e->o.self_sufficient ? 0 : qsf_symtab_published(e->st);
    e->id_bytes = (uint8_t) qsf_varint_len(qsf_symtab_size(e->st));
    if (delta_sizes(e->c, e->st, e->base) != 0)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory");
    size_t nframes = 0;
    if ((rc = plan(e, &nframes, err)) != QSF_OK)
        return rc;
    const size_t *cuts = e->c->scratch.cuts;
    for (size_t i = 0; i < nframes && rc == QSF_OK; i++)
        rc = emit_one(e, cuts[i], cuts[i + 1], i + 1 == nframes, res, err);
    qsf_assert(rc != QSF_OK || res->rows_consumed == e->c->rows);
    return rc;
}

int qsf_chunk_encode(qsf_chunk *c, qsf_symtab *st, const qsf_qwp_enc_opts *opts,
                     const qsf_chunk_out *out, qsf_qwp_encode_result *res, qsf_errinfo *err) {
    enc_ctx e = {.c = c, .st = st, .out = out};
    qsf_enc_norm_opts(opts, &e.o);
    memset(res, 0, sizeof *res);
    uint32_t size0 = qsf_symtab_size(st), published0 = qsf_symtab_published(st);
    int rc = encode(&e, res, err);
    if (rc != QSF_OK) {
        qsf_symtab_set_published(st, published0);
        qsf_symtab_truncate(st, size0);
    }
    return rc;
}
