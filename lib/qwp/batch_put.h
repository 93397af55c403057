/* The two-step column write every typed row call goes through (batch.c):
 *
 *   qsf_batch_col_begin   finds or creates the column, checks the row and type
 *                         rules and max_buf_size, reserves all memory; changes
 *                         nothing visible on failure
 *   (caller)              writes v->data_len bytes at c->data.p + c->data.len
 *   qsf_batch_col_commit  records the value (cannot fail) */
#ifndef QSF_QWP_BATCH_PUT_H
#define QSF_QWP_BATCH_PUT_H

#include "bytes.h"
#include "qsf_assert.h"
#include "qwp/batch_int.h"
#include "qwp/symtab.h"

typedef struct qsf_colval {
    uint8_t type;
    int scale;         /* decimals: 0..max, else -1 */
    int geo_bits;      /* GEOHASH: 1..60, else 0 */
    size_t data_len;   /* bytes appended to the column's data */
    uint64_t wire_max; /* upper bound of the value's wire bytes (symbol strings excluded) */
} qsf_colval;

static inline bool qsf_colval_is_var(uint8_t type) {
    return type == QSF_QWP_VARCHAR || type == QSF_QWP_BINARY || type == QSF_QWP_DOUBLE_ARRAY ||
           type == QSF_QWP_LONG_ARRAY;
}

int qsf_batch_col_begin_slow(qsf_qwp_batch *b, const char *name, size_t len, const qsf_colval *v,
                             bcol **out, qsf_errinfo *err);
void qsf_batch_col_commit_slow(qsf_qwp_batch *b, bcol *c, const qsf_colval *v, uint64_t wire,
                               uint64_t sym_bytes);

/* Counts the value written at c->data.p + c->data.len (row coverage is the
 * caller's): data length, offsets, counters, the open row's sizes, the estimate. */
static inline void qsf_bcol_append(qsf_qwp_batch *b, btable *t, bcol *c, const qsf_colval *v,
                                   uint64_t wire, uint64_t sym_bytes) {
    c->data.len += v->data_len;
    if (qsf_colval_is_var(v->type)) {
        uint32_t end = (uint32_t) c->data.len;
        memcpy(c->offs.p + c->offs.len, &end, 4);
        c->offs.len += 4;
    }
    c->nvals++;
    t->row_cur += wire;
    t->row_sym += sym_bytes;
    t->row_ncols++;
    b->est += wire + sym_bytes;
}

/* Fast path: the column expected next in the row, already of this type, without
 * NULLs so far, not set in this row, with room for the value. Anything else
 * (new or reactivated column, another decimal scale or geohash precision, a gap,
 * a bitmap, growth, max_buf_size) takes the slow path, which applies every rule. */
static inline bcol *qsf_batch_col_fast(qsf_qwp_batch *b, const char *name, size_t len,
                                       const qsf_colval *v) {
    btable *t = b->cur;
    if (t && name && t->cursor < t->ncols) {
        bcol *c = &t->cols[t->cursor];
        if (c->type == v->type && c->nrows == t->nrows && !c->has_bitmap &&
            (v->scale < 0 || v->scale == c->scale) &&
            (v->geo_bits == 0 || v->geo_bits == c->geo_bits) && c->name_len == len &&
            qsf_bytes_eq(c->name, name, len) && c->data.cap - c->data.len >= v->data_len &&
            (!qsf_colval_is_var(v->type) || c->offs.cap - c->offs.len >= 4) &&
            b->est + v->wire_max <= b->opts.max_buf_size) {
            t->cursor++;
            return c;
        }
    }
    return NULL;
}

/* Records the value written into a column qsf_batch_col_fast returned. */
static inline void qsf_batch_col_commit_fast(qsf_qwp_batch *b, bcol *c, const qsf_colval *v,
                                             uint64_t wire, uint64_t sym_bytes) {
    qsf_bcol_snapshot(c);
    c->nrows++;
    qsf_bcol_append(b, b->cur, c, v, wire, sym_bytes);
}

/* The whole fast path of a fixed-width value already in wire form (`scale` -1
 * but for DECIMAL64): true when it was written; false when nothing was and the
 * typed call (batch.h) must run, which applies every rule. Always inlined, so
 * that in the typed calls and in the public row calls (lib/sender/rows.c) the
 * type and width are constants, the column checks fold and nothing is called. */
static inline __attribute__((always_inline)) bool
qsf_batch_put_fixed_fast(qsf_qwp_batch *b, const char *col, size_t len, uint8_t type,
                         const uint8_t *bytes, size_t width, int scale) {
    qsf_colval v = {.type = type, .scale = scale, .data_len = width, .wire_max = width};
    bcol *c = qsf_batch_col_fast(b, col, len, &v);
    if (!c)
        return false;
    memcpy(c->data.p + c->data.len, bytes, width);
    qsf_batch_col_commit_fast(b, c, &v, width, 0);
    return true;
}

/* The same for 8-, 4- and 2-byte values (little-endian on the wire), and one
 * byte: qsf_batch_put_u64_fast, _u32_fast, _u16_fast, _u8_fast. */
#define QSF_BATCH_PUT_UINT_FAST(bits)                                                              \
    static inline __attribute__((always_inline)) bool qsf_batch_put_u##bits##_fast(                \
        qsf_qwp_batch *b, const char *col, size_t len, uint8_t type, uint##bits##_t x) {           \
        uint8_t w[(bits) / 8];                                                                     \
        qsf_put_u##bits(w, x);                                                                     \
        return qsf_batch_put_fixed_fast(b, col, len, type, w, (bits) / 8, -1);                     \
    }
QSF_BATCH_PUT_UINT_FAST(64)
QSF_BATCH_PUT_UINT_FAST(32)
QSF_BATCH_PUT_UINT_FAST(16)
#undef QSF_BATCH_PUT_UINT_FAST
static inline __attribute__((always_inline)) bool
qsf_batch_put_u8_fast(qsf_qwp_batch *b, const char *col, size_t len, uint8_t type, uint8_t x) {
    return qsf_batch_put_fixed_fast(b, col, len, type, &x, 1, -1);
}

/* What the fast puts of variable values return when they did nothing and the
 * typed call must run (every QSF_* code is 0 or negative). */
#define QSF_BATCH_SLOW 1

/* The longest VARCHAR or BINARY value (its offsets are 32-bit), and the
 * longest symbol (clients cap one at 1 MiB). */
#define QSF_BATCH_MAX_VAR_LEN    (UINT32_MAX / 2)
#define QSF_BATCH_MAX_SYMBOL_LEN (1u << 20)

/* The fast path of a VARCHAR or BINARY value whose pointer and length were
 * checked (not NULL, at most QSF_BATCH_MAX_VAR_LEN; VARCHAR valid UTF-8): QSF_OK, or
 * QSF_BATCH_SLOW with nothing done. */
static inline __attribute__((always_inline)) int
qsf_batch_put_var_checked(qsf_qwp_batch *b, const char *col, size_t len, uint8_t type,
                          const void *v, size_t v_len) {
    qsf_colval cv = {.type = type, .scale = -1, .data_len = v_len, .wire_max = 4 + v_len};
    bcol *c = qsf_batch_col_fast(b, col, len, &cv);
    if (!c)
        return QSF_BATCH_SLOW;
    if (v_len) /* an empty value: the column may have no buffer yet */
        memcpy(c->data.p + c->data.len, v, v_len);
    qsf_batch_col_commit_fast(b, c, &cv, 4 + v_len, 0);
    return QSF_OK;
}

/* Either path: the fast one, else every rule. */
static inline int qsf_batch_col_begin(qsf_qwp_batch *b, const char *name, size_t len,
                                      const qsf_colval *v, bcol **out, qsf_errinfo *err) {
    bcol *c = qsf_batch_col_fast(b, name, len, v);
    if (c) {
        *out = c;
        return QSF_OK;
    }
    return qsf_batch_col_begin_slow(b, name, len, v, out, err);
}

/* Records the value written at c->data.p + c->data.len (cannot fail). wire: the
 * value's wire bytes; sym_bytes: bytes of a symbol string it interned. */
static inline void qsf_batch_col_commit(qsf_qwp_batch *b, bcol *c, const qsf_colval *v,
                                        uint64_t wire, uint64_t sym_bytes) {
    btable *t = b->cur;
    qsf_assert(t && c->nrows <= t->nrows); /* an open row; a column once per row */
    if (!c->type || c->nrows != t->nrows || c->has_bitmap) {
        qsf_batch_col_commit_slow(b, c, v, wire, sym_bytes);
        return;
    }
    qsf_batch_col_commit_fast(b, c, v, wire, sym_bytes);
}

/* A SYMBOL column's value for a symbol: the column c was taken for it (by
 * either path, `fast` saying which), the symbol is interned, its id written
 * and counted. The symbol table's error (QSF_E_DICT_FULL, QSF_E_NOMEM) is
 * returned as it is. */
static inline __attribute__((always_inline)) int
qsf_batch_symbol_into(qsf_qwp_batch *b, bcol *c, const qsf_colval *v, const char *val,
                      size_t val_len, bool fast, qsf_errinfo *err) {
    uint32_t id;
    int is_new;
    int rc = qsf_symtab_intern(b->symtab, val, val_len, &id, &is_new, err);
    if (rc != QSF_OK)
        return rc;
    memcpy(c->data.p + c->data.len, &id, 4);
    uint64_t sym = is_new ? qsf_varint_len(val_len) + val_len : 0;
    if (fast)
        qsf_batch_col_commit_fast(b, c, v, qsf_varint_len(id), sym);
    else
        qsf_batch_col_commit(b, c, v, qsf_varint_len(id), sym);
    return QSF_OK;
}

/* The column value a SYMBOL needs (the symbol's string bytes excluded). */
static inline qsf_colval qsf_batch_symbol_colval(size_t val_len) {
    return (qsf_colval){.type = QSF_QWP_SYMBOL,
                        .scale = -1,
                        .data_len = 4,
                        .wire_max = 5 + QSF_VARINT_MAX + val_len};
}

/* The fast path of a SYMBOL value that was checked (not NULL, at most
 * QSF_BATCH_MAX_SYMBOL_LEN, valid UTF-8): QSF_OK; QSF_BATCH_SLOW with nothing
 * done; or the symbol table's error, which the typed call returns in the same
 * place. */
static inline __attribute__((always_inline)) int
qsf_batch_put_symbol_checked(qsf_qwp_batch *b, const char *col, size_t len, const char *val,
                             size_t val_len, qsf_errinfo *err) {
    qsf_colval v = qsf_batch_symbol_colval(val_len);
    bcol *c = qsf_batch_col_fast(b, col, len, &v);
    return c ? qsf_batch_symbol_into(b, c, &v, val, val_len, true, err) : QSF_BATCH_SLOW;
}

#endif
