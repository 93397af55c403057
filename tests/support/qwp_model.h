/* A reference model of rows for encode -> decode round trips, shared by
 * tests/unit/test_qwp_roundtrip.c and fuzz/targets/fuzz_qwp_roundtrip.c (header
 * only, no cmocka, so the libFuzzer build needs nothing else).
 *
 * model_build drives a qsf_qwp_batch with rows drawn from a byte source (a seeded
 * PRNG or fuzz input) and records what each accepted row should look like on the
 * server, as "canonical bytes" per value:
 *   BOOLEAN                 1 byte 0/1 (a missing boolean reads back as false)
 *   TIMESTAMP*              the i64 as 8 LE bytes (Gorilla or raw)
 *   SYMBOL                  the string
 *   everything else         the bytes qsf_qwp_dcol_bytes returns (wire form)
 * model_check decodes frames in order against one connection dictionary and
 * compares every row, column, NULL and designated timestamp. */
#ifndef QSF_QWP_MODEL_H
#define QSF_QWP_MODEL_H

#include "bytes.h"
#include "qwp/batch.h"
#include "qwpdec/decoder.h"
#include "qwp/encoder.h"
#include "qwp/types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QM_TABLES 3
#define QM_COLS   8
#define QM_MAXV   256 /* canonical bytes per value, at most */

typedef struct qm_src {
    uint64_t state;      /* PRNG state when data == NULL */
    const uint8_t *data; /* fuzz input, consumed byte by byte */
    size_t len, pos;
} qm_src;

static inline uint64_t qm_next(qm_src *s) {
    if (s->data) {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v = (v << 8) | (s->pos < s->len ? s->data[s->pos++] : 0);
        return v;
    }
    s->state ^= s->state << 13;
    s->state ^= s->state >> 7;
    s->state ^= s->state << 17;
    return s->state * 0x2545F4914F6CDD1Dull;
}

static inline uint32_t qm_below(qm_src *s, uint32_t n) {
    return n ? (uint32_t) (qm_next(s) % n) : 0;
}

typedef struct qm_val {
    uint16_t len;
    uint8_t present;
    uint8_t bytes[QM_MAXV];
} qm_val;

typedef struct qm_row {
    qm_val v[QM_COLS];
    int64_t ts;
} qm_row;

typedef struct qm_col {
    char name[24]; /* room for any two ints the generator prints */
    uint8_t type;
    int scale, geo;
} qm_col;

typedef struct qm_table {
    char name[24];
    qm_col cols[QM_COLS];
    int ncols;
    int ts_kind; /* 0 now, 1 micros, 2 nanos */
    qm_row *rows;
    size_t nrows, cap, cursor;
} qm_table;

typedef struct qm_model {
    qm_table t[QM_TABLES];
    int nt;
    int symbol_pool;
    char err[1400];
} qm_model;

static const uint8_t qm_types[] = {
    QSF_QWP_BOOLEAN,      QSF_QWP_BYTE,       QSF_QWP_SHORT,
    QSF_QWP_INT,          QSF_QWP_LONG,       QSF_QWP_FLOAT,
    QSF_QWP_DOUBLE,       QSF_QWP_SYMBOL,     QSF_QWP_TIMESTAMP,
    QSF_QWP_DATE,         QSF_QWP_UUID,       QSF_QWP_LONG256,
    QSF_QWP_GEOHASH,      QSF_QWP_VARCHAR,    QSF_QWP_TIMESTAMP_NANOS,
    QSF_QWP_DOUBLE_ARRAY, QSF_QWP_LONG_ARRAY, QSF_QWP_DECIMAL64,
    QSF_QWP_DECIMAL128,   QSF_QWP_DECIMAL256, QSF_QWP_CHAR,
    QSF_QWP_BINARY,       QSF_QWP_IPV4,
};

/* Random schema: up to QM_TABLES tables of up to QM_COLS typed columns. Names
 * vary in case between tables to exercise case handling without collisions. */
static inline void qm_init(qm_model *m, qm_src *s) {
    memset(m, 0, sizeof *m);
    m->nt = 1 + (int) qm_below(s, QM_TABLES);
    m->symbol_pool = 1 + (int) qm_below(s, 40);
    for (int i = 0; i < m->nt; i++) {
        qm_table *t = &m->t[i];
        snprintf(t->name, sizeof t->name, "tab%d", i);
        t->ncols = 1 + (int) qm_below(s, QM_COLS);
        t->ts_kind = (int) qm_below(s, 3);
        for (int c = 0; c < t->ncols; c++) {
            qm_col *col = &t->cols[c];
            snprintf(col->name, sizeof col->name, "c%d_%d", c, i);
            col->type = qm_types[qm_below(s, sizeof qm_types)];
            col->scale = col->type == QSF_QWP_DECIMAL64    ? (int) qm_below(s, 19)
                         : col->type == QSF_QWP_DECIMAL128 ? (int) qm_below(s, 39)
                         : col->type == QSF_QWP_DECIMAL256 ? (int) qm_below(s, 77)
                                                           : -1;
            col->geo = 1 + (int) qm_below(s, 60);
        }
    }
}

static inline void qm_le(uint8_t *p, uint64_t v, int n) {
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static inline int qm_array(qm_src *s, const qm_col *c, qsf_qwp_batch *b, qm_val *v,
                           qsf_errinfo *err) {
    int rank = 1 + (int) qm_below(s, 3);
    int32_t shape[3];
    size_t count = 1;
    for (int i = 0; i < rank; i++) {
        shape[i] = (int32_t) qm_below(s, 4);
        count *= (size_t) shape[i];
    }
    uint64_t vals[27];
    uint8_t *p = v->bytes;
    *p++ = (uint8_t) rank;
    for (int i = 0; i < rank; i++, p += 4)
        qm_le(p, (uint32_t) shape[i], 4);
    for (size_t i = 0; i < count; i++, p += 8) {
        vals[i] = qm_next(s);
        qm_le(p, vals[i], 8);
    }
    v->len = (uint16_t) (p - v->bytes);
    if (c->type == QSF_QWP_DOUBLE_ARRAY) {
        double d[27];
        memcpy(d, vals, sizeof d);
        return qsf_qwp_batch_col_f64_array(b, c->name, strlen(c->name), rank, shape, d, err);
    }
    return qsf_qwp_batch_col_i64_array(b, c->name, strlen(c->name), rank, shape,
                                       (const int64_t *) (const void *) vals, err);
}

static inline int qm_text(qm_src *s, qm_val *v, bool utf8) {
    static const char *pieces[] = {
        "a", "Z", "0", " ", "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80"};
    size_t n = qm_below(s, 12);
    v->len = 0;
    for (size_t i = 0; i < n; i++) {
        if (utf8) {
            const char *pc = pieces[qm_below(s, 7)];
            memcpy(v->bytes + v->len, pc, strlen(pc));
            v->len = (uint16_t) (v->len + strlen(pc));
        } else
            v->bytes[v->len++] = (uint8_t) qm_next(s);
    }
    return 0;
}

/* Draws a value for c, calls the matching batch function, fills v. */
static inline int qm_value(qm_model *m, qm_src *s, const qm_col *c, qsf_qwp_batch *b, qm_val *v,
                           qsf_errinfo *err) {
    const char *n = c->name;
    size_t nl = strlen(n);
    uint64_t x = qm_next(s);
    v->present = 1;
    switch (c->type) {
    case QSF_QWP_BOOLEAN:
        v->len = 1;
        v->bytes[0] = x & 1;
        return qsf_qwp_batch_col_bool(b, n, nl, x & 1, err);
    case QSF_QWP_BYTE:
        v->len = 1, qm_le(v->bytes, x, 1);
        return qsf_qwp_batch_col_i8(b, n, nl, (int8_t) x, err);
    case QSF_QWP_SHORT:
        v->len = 2, qm_le(v->bytes, x, 2);
        return qsf_qwp_batch_col_i16(b, n, nl, (int16_t) x, err);
    case QSF_QWP_INT:
        v->len = 4, qm_le(v->bytes, x, 4);
        return qsf_qwp_batch_col_i32(b, n, nl, (int32_t) x, err);
    case QSF_QWP_LONG:
        v->len = 8, qm_le(v->bytes, x, 8);
        return qsf_qwp_batch_col_i64(b, n, nl, (int64_t) x, err);
    case QSF_QWP_FLOAT: {
        uint32_t bits = (uint32_t) x;
        float f;
        memcpy(&f, &bits, 4);
        v->len = 4, qm_le(v->bytes, bits, 4);
        return qsf_qwp_batch_col_f32(b, n, nl, f, err);
    }
    case QSF_QWP_DOUBLE: {
        double d;
        memcpy(&d, &x, 8);
        v->len = 8, qm_le(v->bytes, x, 8);
        return qsf_qwp_batch_col_f64(b, n, nl, d, err);
    }
    case QSF_QWP_TIMESTAMP:
    case QSF_QWP_TIMESTAMP_NANOS:
    case QSF_QWP_DATE:
        if (x & 1) /* often a regular series, so Gorilla kicks in */
            x = 1700000000000000ull + (qm_next(s) % 4) * 1000;
        v->len = 8, qm_le(v->bytes, x, 8);
        return c->type == QSF_QWP_TIMESTAMP
                   ? qsf_qwp_batch_col_ts_micros(b, n, nl, (int64_t) x, err)
               : c->type == QSF_QWP_DATE ? qsf_qwp_batch_col_date(b, n, nl, (int64_t) x, err)
                                         : qsf_qwp_batch_col_ts_nanos(b, n, nl, (int64_t) x, err);
    case QSF_QWP_UUID: {
        uint64_t hi = qm_next(s);
        v->len = 16, qm_le(v->bytes, x, 8), qm_le(v->bytes + 8, hi, 8);
        return qsf_qwp_batch_col_uuid(b, n, nl, x, hi, err);
    }
    case QSF_QWP_LONG256: {
        uint64_t w[4] = {x, qm_next(s), qm_next(s), qm_next(s)};
        v->len = 32;
        for (int i = 0; i < 4; i++)
            qm_le(v->bytes + 8 * i, w[i], 8);
        return qsf_qwp_batch_col_long256(b, n, nl, w, err);
    }
    case QSF_QWP_GEOHASH: {
        uint64_t bits = x & ((1ull << c->geo) - 1);
        v->len = (uint16_t) ((c->geo + 7) / 8), qm_le(v->bytes, bits, v->len);
        return qsf_qwp_batch_col_geohash(b, n, nl, bits, c->geo, err);
    }
    case QSF_QWP_VARCHAR:
        qm_text(s, v, true);
        return qsf_qwp_batch_col_varchar(b, n, nl, (const char *) v->bytes, v->len, err);
    case QSF_QWP_BINARY:
        qm_text(s, v, false);
        return qsf_qwp_batch_col_binary(b, n, nl, v->bytes, v->len, err);
    case QSF_QWP_SYMBOL:
        v->len = (uint16_t) snprintf((char *) v->bytes, QM_MAXV, "sym%u",
                                     qm_below(s, (uint32_t) m->symbol_pool));
        return qsf_qwp_batch_symbol(b, n, nl, (const char *) v->bytes, v->len, err);
    case QSF_QWP_CHAR:
        v->len = 2, qm_le(v->bytes, x, 2);
        return qsf_qwp_batch_col_char(b, n, nl, (uint16_t) x, err);
    case QSF_QWP_IPV4:
        x = (x & 0xffffffffu) | 1;
        v->len = 4, qm_le(v->bytes, x, 4);
        return qsf_qwp_batch_col_ipv4(b, n, nl, (uint32_t) x, err);
    case QSF_QWP_DECIMAL64:
        v->len = 8, qm_le(v->bytes, x, 8);
        return qsf_qwp_batch_col_decimal64(b, n, nl, (int64_t) x, c->scale, err);
    case QSF_QWP_DECIMAL128:
    case QSF_QWP_DECIMAL256:
        v->len = c->type == QSF_QWP_DECIMAL128 ? 16 : 32;
        for (int i = 0; i < v->len; i += 8)
            qm_le(v->bytes + i, qm_next(s), 8);
        return c->type == QSF_QWP_DECIMAL128
                   ? qsf_qwp_batch_col_decimal128(b, n, nl, v->bytes, c->scale, err)
                   : qsf_qwp_batch_col_decimal256(b, n, nl, v->bytes, c->scale, err);
    default:
        return qm_array(s, c, b, v, err);
    }
}

static inline qm_row *qm_push(qm_table *t) {
    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->rows = realloc(t->rows, t->cap * sizeof *t->rows);
    }
    return &t->rows[t->nrows++];
}

/* One row: random table, random column subset in random order, sometimes a
 * cancelled row or a rejected duplicate column (both must leave no trace). */
static inline int qm_row_build(qm_model *m, qm_src *s, qsf_qwp_batch *b, qsf_errinfo *err) {
    qm_table *t = &m->t[qm_below(s, (uint32_t) m->nt)];
    if (qsf_qwp_batch_table(b, t->name, strlen(t->name), err) != QSF_OK)
        return -1;
    qm_row *row = qm_push(t);
    memset(row, 0, sizeof *row);
    int order[QM_COLS], set = 0;
    for (int i = 0; i < t->ncols; i++)
        order[i] = i;
    for (int i = t->ncols - 1; i > 0; i--) {
        int j = (int) qm_below(s, (uint32_t) i + 1), tmp = order[i];
        order[i] = order[j], order[j] = tmp;
    }
    for (int i = 0; i < t->ncols; i++) {
        if (qm_below(s, 10) < 3)
            continue;
        int c = order[i];
        if (qm_value(m, s, &t->cols[c], b, &row->v[c], err) != QSF_OK)
            return -1;
        set++;
        if (qm_below(s, 50) == 0) {
            qm_val dup;
            if (qm_value(m, s, &t->cols[c], b, &dup, NULL) != QSF_E_VALUE)
                return snprintf(err->msg, sizeof err->msg, "duplicate column accepted"), -1;
        }
    }
    if (qm_below(s, 20) == 0 || (set == 0 && t->ts_kind == 0)) {
        qsf_qwp_batch_row_cancel(b);
        t->nrows--;
        return 0;
    }
    row->ts = (int64_t) (1600000000000000ull + qm_below(s, 5) * 1000u + t->nrows * 1000u);
    int rc = t->ts_kind == 1   ? qsf_qwp_batch_at_micros(b, row->ts, err)
             : t->ts_kind == 2 ? qsf_qwp_batch_at_nanos(b, row->ts, err)
                               : qsf_qwp_batch_at_now(b, err);
    if (rc == QSF_E_TOO_LARGE) { /* larger than one frame: discarded by the batch */
        t->nrows--;
        return 0;
    }
    return rc == QSF_OK ? 0 : -1;
}

static inline const qsf_qwp_dcol *qm_find_col(const qsf_qwp_dtable *t, const char *name) {
    for (uint32_t i = 0; i < t->col_count; i++)
        if (t->cols[i].name_len == strlen(name) &&
            memcmp(t->cols[i].name, name, t->cols[i].name_len) == 0)
            return &t->cols[i];
    return NULL;
}

/* Canonical bytes of the decoded value of row `row` (len 0 and *null = 1 when NULL). */
static inline void qm_decoded(const qsf_qwp_dcol *c, uint32_t row, qm_val *out, int *null) {
    int64_t vi = qsf_qwp_dcol_value_index(c, row);
    *null = vi < 0;
    out->len = 0;
    if (vi < 0)
        return;
    if (c->type == QSF_QWP_BOOLEAN || c->type == QSF_QWP_TIMESTAMP ||
        c->type == QSF_QWP_TIMESTAMP_NANOS) {
        int64_t x = qsf_qwp_dcol_i64(c, (uint32_t) vi);
        out->len = c->type == QSF_QWP_BOOLEAN ? 1 : 8;
        qm_le(out->bytes, (uint64_t) x, out->len);
        return;
    }
    const uint8_t *p;
    size_t len;
    qsf_qwp_dcol_bytes(c, (uint32_t) vi, &p, &len);
    out->len = (uint16_t) (len < QM_MAXV ? len : QM_MAXV);
    memcpy(out->bytes, p, out->len);
}

static inline int qm_fail(qm_model *m, const char *fmt, const char *a, long b, const char *c) {
    snprintf(m->err, sizeof m->err, fmt, a, b, c);
    return -1;
}

static inline int qm_check_value(qm_model *m, const qm_table *mt, const qm_col *mc,
                                 const qm_val *want, const qsf_qwp_dcol *c, uint32_t r) {
    qm_val got;
    int null;
    if (!c)
        return want->present ? qm_fail(m, "table %s row %ld: column %s missing", mt->name,
                                       (long) mt->cursor, mc->name)
                             : 0;
    if (c->type != mc->type)
        return qm_fail(m, "table %s row %ld: column %s has the wrong type", mt->name,
                       (long) mt->cursor, mc->name);
    qm_decoded(c, r, &got, &null);
    qm_val exp = *want;
    if (!exp.present && mc->type == QSF_QWP_BOOLEAN)
        exp.present = 1, exp.len = 1, exp.bytes[0] = 0; /* missing boolean = false */
    if (null != !exp.present || got.len != exp.len || memcmp(got.bytes, exp.bytes, exp.len)) {
        char what[200];
        snprintf(what, sizeof what, "%s (%s): want %s %u bytes, got %s %u bytes", mc->name,
                 qsf_qwp_type_name(mc->type), exp.present ? "value" : "NULL", exp.len,
                 null ? "NULL" : "value", got.len);
        return qm_fail(m, "table %s row %ld: column %s differs", mt->name, (long) mt->cursor, what);
    }
    if (exp.present && mc->scale >= 0 && c->scale != mc->scale)
        return qm_fail(m, "table %s row %ld: column %s scale differs", mt->name, (long) mt->cursor,
                       mc->name);
    return 0;
}

static inline int qm_check_table(qm_model *m, const qsf_qwp_dtable *dt) {
    qm_table *mt = NULL;
    for (int i = 0; i < m->nt; i++)
        if (strlen(m->t[i].name) == dt->name_len && !memcmp(m->t[i].name, dt->name, dt->name_len))
            mt = &m->t[i];
    if (!mt)
        return qm_fail(m, "unknown table %s%ld%s", "", 0, "");
    const qsf_qwp_dcol *ts = qm_find_col(dt, "");
    if ((ts != NULL) != (mt->ts_kind != 0))
        return qm_fail(m, "table %s: designated timestamp presence wrong%ld%s", mt->name, 0, "");
    for (uint32_t r = 0; r < dt->row_count; r++, mt->cursor++) {
        if (mt->cursor >= mt->nrows)
            return qm_fail(m, "table %s: more rows decoded than written (%ld)%s", mt->name,
                           (long) mt->nrows, "");
        const qm_row *row = &mt->rows[mt->cursor];
        for (int c = 0; c < mt->ncols; c++)
            if (qm_check_value(m, mt, &mt->cols[c], &row->v[c], qm_find_col(dt, mt->cols[c].name),
                               r))
                return -1;
        if (ts && qsf_qwp_dcol_i64(ts, r) != row->ts)
            return qm_fail(m, "table %s row %ld: designated timestamp differs%s", mt->name,
                           (long) mt->cursor, "");
    }
    return 0;
}

/* Decodes one frame (in order) and checks its rows. */
static inline int qm_check_frame(qm_model *m, qsf_qwp_msg *msg, qsf_qwp_dict *dict,
                                 const uint8_t *f, size_t len) {
    qsf_qwp_decode_result res;
    if (qsf_qwp_decode(msg, dict, f, len, NULL, &res) != QSF_QWP_STATUS_OK)
        return qm_fail(m, "decode failed: %s%ld%s", res.message, 0, "");
    for (uint32_t i = 0; i < qsf_qwp_msg_table_count(msg); i++)
        if (qm_check_table(m, qsf_qwp_msg_table(msg, i)))
            return -1;
    return 0;
}

/* After all frames: every written row was decoded. */
static inline int qm_check_done(qm_model *m) {
    for (int i = 0; i < m->nt; i++)
        if (m->t[i].cursor != m->t[i].nrows)
            return qm_fail(m, "table %s: %ld rows written but not decoded%s", m->t[i].name,
                           (long) (m->t[i].nrows - m->t[i].cursor), "");
    return 0;
}

static inline void qm_free(qm_model *m) {
    for (int i = 0; i < m->nt; i++)
        free(m->t[i].rows);
}

#endif
