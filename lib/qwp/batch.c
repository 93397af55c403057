/* The row buffer: tables, columns, the open row and its undo (see batch.h and the
 * layout in batch_int.h). Typed column calls live in batch_cols.c; this file holds
 * the machinery every one of them goes through. */
#include "qwp/batch_int.h"
#include "qsf_assert.h"
#include "grow.h"
#include "qwp/batch_put.h"

#include "bytes.h"
#include "err.h"
#include "qwp/names.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX_BUF  (100u * 1024 * 1024)
#define DEFAULT_INIT_BUF (64u * 1024)

/* Header + the delta section's two varints, at most. */
#define MSG_FIXED (QSF_QWP_HEADER_LEN + 2 * 5)
/* Block bytes of a table besides its columns: name, row_count, column_count. */
#define TABLE_FIXED(t) (1 + (uint64_t) (t)->name_len + 5 + 3)
/* The designated timestamp column: def (empty name, type), null flag, encoding. */
#define TS_COL_OVERHEAD 4

int qsf_qwp_batch_new(qsf_symtab *symtab, const qsf_qwp_batch_opts *opts, qsf_qwp_batch **out,
                      qsf_errinfo *err) {
    qsf_qwp_batch_opts o = {0};
    if (opts)
        o = *opts;
    if (o.max_name_len == 0)
        o.max_name_len = QSF_QWP_MAX_NAME_LEN;
    if (o.max_name_len < 1 || o.max_name_len > QSF_QWP_MAX_NAME_LEN || !symtab)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "batch: max_name_len %d is outside 1..127",
                           o.max_name_len);
    if (o.max_buf_size == 0)
        o.max_buf_size = DEFAULT_MAX_BUF;
    if (o.init_buf_size == 0)
        o.init_buf_size = DEFAULT_INIT_BUF;
    qsf_qwp_batch *b = calloc(1, sizeof *b);
    if (!b)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "batch: out of memory");
    b->symtab = symtab;
    b->opts = o;
    b->est = MSG_FIXED;
    qsf_strmap_init(&b->tmap);
    *out = b;
    return QSF_OK;
}

static void col_destroy(bcol *c) {
    qsf_buf_free(&c->data);
    qsf_buf_free(&c->offs);
    qsf_buf_free(&c->bitmap);
}

static void table_destroy(btable *t) {
    for (uint32_t i = 0; i < t->cols_cap; i++)
        col_destroy(&t->cols[i]);
    free(t->cols);
    qsf_strmap_destroy(&t->colmap);
    qsf_buf_free(&t->ts);
    qsf_buf_free(&t->row_off);
    qsf_buf_free(&t->sym_off);
}

void qsf_qwp_batch_free(qsf_qwp_batch *b) {
    if (!b)
        return;
    for (uint32_t i = 0; i < b->tables_cap; i++)
        table_destroy(&b->tables[i]);
    free(b->tables);
    free(b->order);
    qsf_strmap_destroy(&b->tmap);
    free(b);
}

void qsf_qwp_batch_set_max_row_frame(qsf_qwp_batch *b, size_t max_row_frame) {
    b->opts.max_row_frame = max_row_frame;
}

size_t qsf_qwp_batch_rows(const qsf_qwp_batch *b) {
    return b->rows;
}

bool qsf_qwp_batch_row_open(const qsf_qwp_batch *b) {
    return b->cur != NULL;
}

size_t qsf_qwp_batch_est_bytes(const qsf_qwp_batch *b) {
    return (size_t) (b->cur ? b->s_est : b->est);
}

uint32_t qsf_bcol_rank(const bcol *c, uint32_t r) {
    if (r >= c->nrows)
        return c->nvals;
    if (!c->has_bitmap)
        return r;
    uint32_t nulls = 0, i = 0;
    for (; i + 64 <= r; i += 64) {
        uint64_t w;
        memcpy(&w, c->bitmap.p + i / 8, 8);
        nulls += (uint32_t) __builtin_popcountll(w);
    }
    for (; i < r; i++)
        nulls += (c->bitmap.p[i >> 3] >> (i & 7)) & 1;
    return r - nulls;
}

uint64_t qsf_bcol_overhead(const bcol *c) {
    uint64_t n = 1 + (uint64_t) c->name_len + 1 + 1; /* def + null flag */
    switch (c->type) {
    case QSF_QWP_TIMESTAMP:
    case QSF_QWP_TIMESTAMP_NANOS:
    case QSF_QWP_DECIMAL64:
    case QSF_QWP_DECIMAL128:
    case QSF_QWP_DECIMAL256:
    case QSF_QWP_GEOHASH:
        return n + 1; /* encoding byte, scale or precision */
    case QSF_QWP_VARCHAR:
    case QSF_QWP_BINARY:
        return n + 4; /* offset[0] */
    default:
        return n;
    }
}

/* A folded key's buffer: a whole number of 16-byte vectors, so that GCC can see
 * its vectorised fold loop stays inside it. */
#define KEY_BUF ((QSF_QWP_MAX_NAME_LEN + 15) / 16 * 16)

/* QuestDB names are case-insensitive: maps are keyed by the ASCII-lowercased name
 * (the first spelling is what goes on the wire). Returns false when len is too
 * long to be a valid name (the caller then reports the name rule). */
static bool fold(const char *name, size_t len, char out[KEY_BUF]) {
    if (len > QSF_QWP_MAX_NAME_LEN)
        return false;
    for (size_t i = 0; i < len; i++)
        out[i] = (name[i] >= 'A' && name[i] <= 'Z') ? (char) (name[i] + 32) : name[i];
    return true;
}

/* Looks name up by its folded key (left in key, its hash in *hash); -1 when absent
 * or too long to be a name. */
static int64_t find_folded(const qsf_strmap *m, const char *name, size_t len, char key[KEY_BUF],
                           uint32_t *hash) {
    *hash = 0;
    if (!fold(name, len, key))
        return -1;
    *hash = qsf_strmap_hash(key, len);
    return qsf_strmap_find(m, key, len, *hash);
}

/* ---- tables ---- */

static btable *table_slot(qsf_qwp_batch *b, const char *name, const char *key, size_t len,
                          uint32_t hash, qsf_errinfo *err) {
    if (qsf_grow_zeroed((void **) &b->tables, b->ntables, &b->tables_cap, sizeof *b->tables))
        goto nomem;
    btable *t = &b->tables[b->ntables];
    if (!t->row_off.p && qsf_buf_reserve(&t->row_off, 64) != 0)
        goto nomem;
    if (qsf_strmap_add(&b->tmap, key, len, hash) < 0)
        goto nomem;
    memcpy(t->name, name, len);
    t->name_len = (uint8_t) len;
    memset(t->row_off.p, 0, 8);
    t->row_off.len = 8;
    b->last_tbl = b->ntables++;
    return t;
nomem:
    qsf_err_set(err, QSF_E_NOMEM, 0, 0, "table \"%.*s\": out of memory", (int) len, name);
    return NULL;
}

static btable *table_find(qsf_qwp_batch *b, const char *name, size_t len, qsf_errinfo *err) {
    if (b->last_tbl < b->ntables) {
        btable *t = &b->tables[b->last_tbl];
        if (t->name_len == len && qsf_bytes_eq(t->name, name, len))
            return t;
    }
    char key[KEY_BUF];
    uint32_t hash;
    int64_t id = find_folded(&b->tmap, name, len, key, &hash);
    if (id >= 0) {
        b->last_tbl = (uint32_t) id;
        return &b->tables[id];
    }
    if (qsf_qwp_check_name(name, len, false, b->opts.max_name_len, "", err) != QSF_OK)
        return NULL;
    return table_slot(b, name, key, len, hash, err);
}

int qsf_qwp_batch_table(qsf_qwp_batch *b, const char *name, size_t len, qsf_errinfo *err) {
    if (b->cur)
        return qsf_err_set(err, QSF_E_STATE, 0, 0,
                           "a row for table \"%.*s\" is still open: end it with qsf_at_* or "
                           "qsf_row_cancel before starting another",
                           b->cur->name_len, b->cur->name);
    if (!name && len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "table name is NULL with length %zu", len);
    b->s_ntables = b->ntables;
    b->last = NULL; /* the snapshots below are the new row's now */
    btable *t = table_find(b, name, len, err);
    if (!t)
        return err ? err->code : QSF_E_VALUE;
    b->s_est = b->est;
    b->s_symsize = qsf_symtab_size(b->symtab);
    t->s_ncols = t->ncols;
    t->s_nactive = t->nactive;
    t->s_overhead = t->overhead;
    t->s_max_row = t->max_row;
    t->row_cur = t->row_sym = 0;
    t->row_ncols = 0;
    t->cursor = 0;
    if (t->nrows == 0 && t->overhead == 0) {
        t->overhead = TABLE_FIXED(t);
        b->est += t->overhead;
    }
    b->cur = t;
    return QSF_OK;
}

/* ---- columns ---- */

static bcol *col_slot(btable *t, const char *name, const char *key, size_t len, uint32_t hash,
                      qsf_errinfo *err) {
    if (qsf_grow_zeroed((void **) &t->cols, t->ncols, &t->cols_cap, sizeof *t->cols))
        goto nomem;
    if (qsf_strmap_add(&t->colmap, key, len, hash) < 0)
        goto nomem;
    bcol *c = &t->cols[t->ncols++];
    memcpy(c->name, name, len);
    c->name_len = (uint8_t) len;
    c->type = 0;
    c->nrows = c->nvals = c->nulls = 0;
    c->has_bitmap = false;
    c->data.len = c->offs.len = c->bitmap.len = 0;
    return c;
nomem:
    qsf_err_set(err, QSF_E_NOMEM, 0, 0, "table \"%.*s\", column \"%.*s\": out of memory",
                t->name_len, t->name, (int) len, name);
    return NULL;
}

static bcol *col_find(qsf_qwp_batch *b, btable *t, const char *name, size_t len, qsf_errinfo *err) {
    if (t->cursor < t->ncols) {
        bcol *c = &t->cols[t->cursor];
        if (c->name_len == len && qsf_bytes_eq(c->name, name, len)) {
            t->cursor++;
            return c;
        }
    }
    char key[KEY_BUF];
    uint32_t hash;
    int64_t id = find_folded(&t->colmap, name, len, key, &hash);
    if (id >= 0) {
        t->cursor = (uint32_t) id + 1;
        return &t->cols[id];
    }
    char what[160];
    snprintf(what, sizeof what, "table \"%.*s\": ", t->name_len, t->name);
    if (qsf_qwp_check_name(name, len, true, b->opts.max_name_len, what, err) != QSF_OK)
        return NULL;
    if (t->ncols >= QSF_QWP_MAX_COLUMNS - 1) {
        qsf_err_set(err, QSF_E_VALUE, 0, 0, "table \"%.*s\": more than %d columns", t->name_len,
                    t->name, QSF_QWP_MAX_COLUMNS - 1);
        return NULL;
    }
    t->cursor = t->ncols + 1;
    return col_slot(t, name, key, len, hash, err);
}

static int col_conflict(const btable *t, const bcol *c, const qsf_colval *v, qsf_errinfo *err) {
    if (c->nrows > t->nrows)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "table \"%.*s\", column \"%.*s\": set twice in the same row",
                           t->name_len, t->name, c->name_len, c->name);
    if (c->type && c->type != v->type)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "table \"%.*s\", column \"%.*s\": type changed from %s to %s within "
                           "a batch; flush before changing a column's type",
                           t->name_len, t->name, c->name_len, c->name, qsf_qwp_type_name(c->type),
                           qsf_qwp_type_name(v->type));
    if (c->type && v->scale >= 0 && c->scale != v->scale)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "table \"%.*s\", column \"%.*s\": decimal scale changed from %u to %d "
                           "within a batch",
                           t->name_len, t->name, c->name_len, c->name, c->scale, v->scale);
    if (c->type && v->geo_bits > 0 && c->geo_bits != v->geo_bits)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "table \"%.*s\", column \"%.*s\": geohash precision changed from %u "
                           "to %d bits within a batch",
                           t->name_len, t->name, c->name_len, c->name, c->geo_bits, v->geo_bits);
    return QSF_OK;
}

/* Bytes the estimate grows by when v is written into c (activation included). */
static uint64_t est_growth(const btable *t, const bcol *c, const qsf_colval *v) {
    uint64_t n = v->wire_max;
    if (!c->type) {
        bcol tmp = *c;
        tmp.type = v->type;
        n += qsf_bcol_overhead(&tmp) + (t->nrows + 7) / 8;
    }
    return n;
}

/* Reserves everything the write needs so that col_commit cannot fail. */
static int col_reserve(btable *t, bcol *c, const qsf_colval *v) {
    uint32_t r = t->nrows;
    bool var = qsf_colval_is_var(v->type);
    if (qsf_buf_reserve(&c->data, v->data_len) != 0)
        return -1;
    if (var && qsf_buf_reserve(&c->offs, 4) != 0)
        return -1;
    if (c->has_bitmap || r > c->nrows) {
        size_t need = (size_t) r / 8 + 2; /* +1 slack byte for shifted reads */
        if (need > c->bitmap.len && qsf_buf_reserve(&c->bitmap, need - c->bitmap.len) != 0)
            return -1;
        if (need > c->bitmap.len)
            c->bitmap.len = need;
    }
    return 0;
}

int qsf_batch_col_begin_slow(qsf_qwp_batch *b, const char *name, size_t len, const qsf_colval *v,
                             bcol **out, qsf_errinfo *err) {
    btable *t = b->cur;
    if (!t)
        return qsf_err_set(err, QSF_E_STATE, 0, 0,
                           "column \"%.*s\" set without an open row: call qsf_table first",
                           (int) (len > 127 ? 127 : len), name ? name : "");
    if (!name && len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "column name is NULL with length %zu", len);
    bcol *c = col_find(b, t, name, len, err);
    if (!c)
        return err ? err->code : QSF_E_VALUE;
    int rc = col_conflict(t, c, v, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t grow = est_growth(t, c, v);
    if (b->est + grow > b->opts.max_buf_size)
        return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                           "table \"%.*s\", column \"%.*s\": buffer would exceed max_buf_size=%zu "
                           "bytes (%llu buffered); flush first",
                           t->name_len, t->name, c->name_len, c->name, b->opts.max_buf_size,
                           (unsigned long long) b->est);
    if (qsf_colval_is_var(v->type) && c->data.len + v->data_len > UINT32_MAX)
        return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                           "table \"%.*s\", column \"%.*s\": more than 4 GiB of values buffered",
                           t->name_len, t->name, c->name_len, c->name);
    if (col_reserve(t, c, v) != 0)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "table \"%.*s\", column \"%.*s\": out of memory",
                           t->name_len, t->name, c->name_len, c->name);
    *out = c;
    return QSF_OK;
}

static void bits_fill(uint8_t *bm, uint32_t from, uint32_t to, int one) {
    for (; from < to && (from & 7); from++)
        bm[from >> 3] = (uint8_t) (one ? bm[from >> 3] | (1u << (from & 7))
                                       : bm[from >> 3] & ~(1u << (from & 7)));
    if (to - from >= 8 && from < to) {
        memset(bm + (from >> 3), one ? 0xff : 0, (to - from) >> 3);
        from += (to - from) & ~7u;
    }
    for (; from < to; from++)
        bm[from >> 3] = (uint8_t) (one ? bm[from >> 3] | (1u << (from & 7))
                                       : bm[from >> 3] & ~(1u << (from & 7)));
}

/* Marks rows [c->nrows, r) NULL and row r non-null. */
static void col_cover(bcol *c, uint32_t r) {
    qsf_assert(r >= c->nrows); /* rows >= nrows are NULL: covering only moves forward */
    if (r > c->nrows && !c->has_bitmap) {
        bits_fill(c->bitmap.p, 0, c->nrows, 0);
        c->has_bitmap = true;
    }
    if (c->has_bitmap) {
        bits_fill(c->bitmap.p, c->nrows, r, 1);
        bits_fill(c->bitmap.p, r, r + 1, 0);
    }
    c->nulls += r - c->nrows;
    c->nrows = r + 1;
}

static void col_activate(qsf_qwp_batch *b, btable *t, bcol *c, const qsf_colval *v) {
    c->type = v->type;
    c->scale = (uint8_t) (v->scale >= 0 ? v->scale : 0);
    c->geo_bits = (uint8_t) v->geo_bits;
    uint64_t oh = qsf_bcol_overhead(c);
    t->overhead += oh;
    t->nactive++;
    b->est += oh + (t->nrows + 7) / 8;
}

void qsf_batch_col_commit_slow(qsf_qwp_batch *b, bcol *c, const qsf_colval *v, uint64_t wire,
                               uint64_t sym_bytes) {
    btable *t = b->cur;
    qsf_bcol_snapshot(c);
    if (!c->type)
        col_activate(b, t, c, v);
    col_cover(c, t->nrows);
    qsf_bcol_append(b, t, c, v, wire, sym_bytes);
}

/* ---- ending and dropping rows ---- */

static void col_undo(bcol *c) {
    qsf_assert(c->s_nrows <= c->nrows &&
               c->s_nvals <= c->nvals); /* a snapshot of this row's start */
    c->nrows = c->s_nrows;
    c->nvals = c->s_nvals;
    c->nulls = c->s_nulls;
    c->data.len = c->s_data_len;
    if (qsf_colval_is_var(c->type))
        c->offs.len = (size_t) c->nvals * 4;
    c->type = c->s_type;
    c->scale = c->s_scale;
    c->geo_bits = c->s_geo;
}

void qsf_qwp_batch_row_cancel(qsf_qwp_batch *b) {
    btable *t = b->cur;
    if (!t)
        return;
    for (uint32_t i = 0; i < t->ncols; i++)
        if (t->cols[i].nrows > t->nrows)
            col_undo(&t->cols[i]);
    qsf_strmap_truncate(&t->colmap, t->s_ncols);
    t->ncols = t->s_ncols;
    t->nactive = t->s_nactive;
    t->overhead = t->nrows ? t->s_overhead : 0;
    t->cursor = 0;
    qsf_strmap_truncate(&b->tmap, b->s_ntables);
    b->ntables = b->s_ntables;
    if (b->last_tbl >= b->ntables)
        b->last_tbl = 0;
    qsf_symtab_truncate(b->symtab, b->s_symsize);
    b->est = b->s_est;
    b->cur = NULL;
}

static const char *ts_kind_name(int k) {
    return k == TS_MICROS ? "microseconds" : k == TS_NANOS ? "nanoseconds" : "server time";
}

static int row_check(qsf_qwp_batch *b, btable *t, int kind, qsf_errinfo *err) {
    if (t->row_ncols == 0 && kind == TS_SERVER)
        return qsf_err_set(err, QSF_E_STATE, 0, 0,
                           "table \"%.*s\": the row is empty; set a column or a designated "
                           "timestamp",
                           t->name_len, t->name);
    if (t->nrows > 0 && t->ts_kind != kind)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "table \"%.*s\": designated timestamp in %s, but earlier rows of this "
                           "batch used %s; flush before switching",
                           t->name_len, t->name, ts_kind_name(kind), ts_kind_name(t->ts_kind));
    if (t->nrows >= UINT32_MAX - 1)
        return qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0, "table \"%.*s\": too many rows buffered",
                           t->name_len, t->name);
    return QSF_OK;
}

uint64_t qsf_bt_row_overhead(const btable *t, uint32_t r) {
    uint64_t n = TABLE_FIXED(t);
    if (t->ts_kind == TS_MICROS || t->ts_kind == TS_NANOS)
        n += TS_COL_OVERHEAD;
    for (uint32_t i = 0; i < t->ncols; i++) {
        const bcol *c = &t->cols[i];
        bool has =
            c->type && r < c->nrows && !(c->has_bitmap && ((c->bitmap.p[r >> 3] >> (r & 7)) & 1));
        if (has)
            n += qsf_bcol_overhead(c) + 1; /* + one bitmap / boolean byte */
    }
    return n;
}

/* Size of a frame that carries only the open row: a cheap upper bound first, the
 * exact column set only when that bound is over the limit. */
static uint64_t one_row_frame(const btable *t, int kind, bool ts_new, size_t limit) {
    uint64_t vals = t->row_cur + t->row_sym + (kind != TS_SERVER ? 8 : 0);
    uint64_t ts = kind != TS_SERVER && ts_new ? TS_COL_OVERHEAD : 0;
    uint64_t n = MSG_FIXED + t->overhead + t->nactive + ts + vals;
    if (n <= limit)
        return n;
    return MSG_FIXED + qsf_bt_row_overhead(t, t->nrows) + ts + vals;
}

static int row_reserve(qsf_qwp_batch *b, btable *t, qsf_errinfo *err) {
    if (qsf_buf_reserve(&t->ts, 8) != 0 || qsf_buf_reserve(&t->row_off, 8) != 0 ||
        qsf_buf_reserve(&t->sym_off, t->sym_off.len ? 8 : 16) != 0)
        goto nomem;
    if (!t->in_batch && b->norder == b->order_cap) {
        uint32_t *o = qsf_grow(b->order, &b->order_cap, 8);
        if (!o)
            goto nomem;
        b->order = o;
    }
    return QSF_OK;
nomem:
    return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "table \"%.*s\": out of memory", t->name_len,
                       t->name);
}

static void put_u64_at(qsf_buf *buf, uint64_t v) {
    qsf_assert(buf->cap - buf->len >= 8); /* row_reserve made room */
    memcpy(buf->p + buf->len, &v, 8);
    buf->len += 8;
}

static void row_commit(qsf_qwp_batch *b, btable *t, int kind, int64_t ts) {
    bool ts_new = t->nrows == 0 && kind != TS_SERVER;
    if (t->nrows == 0)
        t->ts_kind = (uint8_t) kind;
    if (ts_new) {
        t->overhead += TS_COL_OVERHEAD;
        b->est += TS_COL_OVERHEAD;
    }
    if (kind != TS_SERVER) {
        qsf_assert(t->ts.cap - t->ts.len >= 8);
        qsf_put_i64(t->ts.p + t->ts.len, ts);
        t->ts.len += 8;
        t->row_cur += 8;
        b->est += 8;
    }
    if (!t->sym_off.len)
        put_u64_at(&t->sym_off, 0);
    put_u64_at(&t->row_off, qsf_bt_row_off(t, t->nrows) + t->row_cur);
    put_u64_at(&t->sym_off, qsf_bt_sym_off(t, t->nrows) + t->row_sym);
    if (t->row_cur + t->row_sym > t->max_row)
        t->max_row = t->row_cur + t->row_sym;
    if ((t->nrows & 7) == 0)
        b->est += t->nactive; /* a new bitmap / boolean byte per column */
    t->nrows++;
    if (!t->in_batch) {
        qsf_assert(b->norder < b->order_cap);
        t->in_batch = true;
        b->order[b->norder++] = (uint32_t) (t - b->tables);
    }
    b->rows++;
    b->cur = NULL;
    b->last = t;
}

static int row_end(qsf_qwp_batch *b, int kind, int64_t ts, qsf_errinfo *err) {
    btable *t = b->cur;
    if (!t)
        return qsf_err_set(err, QSF_E_STATE, 0, 0, "no open row: call qsf_table first");
    int rc = row_check(b, t, kind, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t one =
        b->opts.max_row_frame ? one_row_frame(t, kind, t->nrows == 0, b->opts.max_row_frame) : 0;
    if (one > b->opts.max_row_frame) {
        rc = qsf_err_set(err, QSF_E_TOO_LARGE, 0, 0,
                         "table \"%.*s\": the row needs %llu bytes, more than one frame holds "
                         "(%zu); the row was discarded",
                         t->name_len, t->name, (unsigned long long) one, b->opts.max_row_frame);
        qsf_qwp_batch_row_cancel(b);
        return rc;
    }
    rc = row_reserve(b, t, err);
    if (rc != QSF_OK)
        return rc;
    row_commit(b, t, kind, ts);
    return QSF_OK;
}

int qsf_qwp_batch_at_micros(qsf_qwp_batch *b, int64_t ts, qsf_errinfo *err) {
    return row_end(b, TS_MICROS, ts, err);
}

int qsf_qwp_batch_at_nanos(qsf_qwp_batch *b, int64_t ts, qsf_errinfo *err) {
    return row_end(b, TS_NANOS, ts, err);
}

int qsf_qwp_batch_at_now(qsf_qwp_batch *b, qsf_errinfo *err) {
    return row_end(b, TS_SERVER, 0, err);
}

/* Undoes row_commit, then cancels the row as if it were still open: the
 * snapshots taken by its table and column calls are intact until the next
 * table call. Encodes do not touch them; a rewound failed encode gave the row
 * back (first_row), a successful one reset the batch (last is NULL). */
bool qsf_qwp_batch_drop_last_row(qsf_qwp_batch *b) {
    btable *t = b->last;
    if (!t || b->cur || t->first_row >= t->nrows)
        return false;
    qsf_assert(b->rows > 0 && t->in_batch);
    b->last = NULL;
    t->nrows--;
    b->rows--;
    if (t->ts_kind != TS_SERVER)
        t->ts.len -= 8;
    t->row_off.len -= 8;
    t->sym_off.len = t->nrows ? t->sym_off.len - 8 : 0;
    t->max_row = t->s_max_row;
    if (t->nrows == 0) { /* this row put the table in the batch: it was the last added */
        t->in_batch = false;
        b->norder--;
    }
    b->cur = t;
    qsf_qwp_batch_row_cancel(b);
    return true;
}

/* ---- reset ---- */

/* Forgets the table's columns (their slots keep their buffers for reuse): the next
 * batch may use another set of columns, and names seen once never pile up. */
static void table_reset(btable *t) {
    qsf_strmap_clear(&t->colmap);
    t->ncols = 0;
    t->nactive = 0;
    t->nrows = t->first_row = 0;
    t->ts_kind = TS_NONE;
    t->in_batch = false;
    t->ts.len = t->sym_off.len = 0;
    t->row_off.len = 8; /* row_off[0] = 0 stays */
    t->overhead = t->max_row = 0;
    t->cursor = 0;
}

void qsf_qwp_batch_rewind(qsf_qwp_batch *b, uint32_t published) {
    size_t rows = 0;
    for (uint32_t i = 0; i < b->norder; i++) {
        btable *t = &b->tables[b->order[i]];
        t->first_row = 0;
        rows += t->nrows;
    }
    b->rows = rows;
    qsf_symtab_set_published(b->symtab, published);
}

void qsf_qwp_batch_reset(qsf_qwp_batch *b) {
    qsf_qwp_batch_row_cancel(b);
    for (uint32_t i = 0; i < b->norder; i++)
        table_reset(&b->tables[b->order[i]]);
    b->norder = 0;
    b->rows = 0;
    b->est = MSG_FIXED;
    b->last = NULL;
}
