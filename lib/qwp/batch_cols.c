/* Typed column calls of the row buffer: value checks and the wire form of each
 * type (docs/PROTOCOL.md §5), written through qsf_batch_col_begin / _commit. */
#include "qwp/batch_put.h"

#include "bytes.h"
#include "err.h"
#include "qwp/utf8.h"

#include <stdio.h>
#include <string.h>

static int bad_value(qsf_qwp_batch *b, const char *col, size_t col_len, const char *fmt,
                     const char *detail, qsf_errinfo *err) {
    const btable *t = b->cur;
    int n = col_len > 127 ? 127 : (int) col_len;
    if (!t)
        return qsf_err_set(err, QSF_E_STATE, 0, 0,
                           "column \"%.*s\" set without an open row: call qsf_table first", n,
                           col ? col : "");
    return qsf_err_set(err, QSF_E_VALUE, 0, 0, "table \"%.*s\", column \"%.*s\": %s%s", t->name_len,
                       t->name, n, col ? col : "", fmt, detail ? detail : "");
}

/* "symbol of 1048577 bytes, more than the 1048576 allowed", naming the column. */
static int too_long(qsf_qwp_batch *b, const char *col, size_t col_len, const char *what, size_t len,
                    size_t max, qsf_errinfo *err) {
    char d[96];
    snprintf(d, sizeof d, "%s of %zu bytes, more than the %zu allowed", what, len, max);
    return bad_value(b, col, col_len, d, NULL, err);
}

/* Fixed-width value already in wire form: every rule (a new column, a gap, growth,
 * ...). Out of line, and given scalars rather than the caller's qsf_colval, so
 * that the fast paths below keep everything in registers and save none. */
static __attribute__((noinline)) int put_fixed_slow(qsf_qwp_batch *b, const char *col, size_t len,
                                                    uint8_t type, const uint8_t *bytes,
                                                    size_t width, int scale, qsf_errinfo *err) {
    qsf_colval v = {.type = type, .scale = scale, .data_len = width, .wire_max = width};
    bcol *c;
    int rc = qsf_batch_col_begin_slow(b, col, len, &v, &c, err);
    if (rc != QSF_OK)
        return rc;
    memcpy(c->data.p + c->data.len, bytes, width);
    qsf_batch_col_commit(b, c, &v, width, 0);
    return QSF_OK;
}

static inline __attribute__((always_inline)) int put_fixed(qsf_qwp_batch *b, const char *col,
                                                           size_t len, uint8_t type,
                                                           const uint8_t *bytes, size_t width,
                                                           int scale, qsf_errinfo *err) {
    if (qsf_batch_put_fixed_fast(b, col, len, type, bytes, width, scale))
        return QSF_OK;
    return put_fixed_slow(b, col, len, type, bytes, width, scale, err);
}

/* An 8-byte value: its slow path takes the value itself, a tail call. */
static __attribute__((noinline)) int put_i64_slow(qsf_qwp_batch *b, const char *col, size_t len,
                                                  uint8_t type, int64_t x, qsf_errinfo *err) {
    uint8_t w[8];
    qsf_put_i64(w, x);
    return put_fixed_slow(b, col, len, type, w, 8, -1, err);
}

static inline __attribute__((always_inline)) int
put_i64(qsf_qwp_batch *b, const char *col, size_t len, uint8_t type, int64_t x, qsf_errinfo *err) {
    if (qsf_batch_put_u64_fast(b, col, len, type, (uint64_t) x))
        return QSF_OK;
    return put_i64_slow(b, col, len, type, x, err);
}

int qsf_qwp_batch_col_bool(qsf_qwp_batch *b, const char *col, size_t col_len, bool v,
                           qsf_errinfo *err) {
    /* one byte per value in the buffer, bit-packed by the encoder */
    qsf_colval cv = {.type = QSF_QWP_BOOLEAN, .scale = -1, .data_len = 1, .wire_max = 0};
    bcol *c;
    int rc = qsf_batch_col_begin(b, col, col_len, &cv, &c, err);
    if (rc != QSF_OK)
        return rc;
    c->data.p[c->data.len] = v ? 1 : 0;
    qsf_batch_col_commit(b, c, &cv, 0, 0);
    return QSF_OK;
}

int qsf_qwp_batch_col_i8(qsf_qwp_batch *b, const char *col, size_t col_len, int8_t v,
                         qsf_errinfo *err) {
    uint8_t w[1] = {(uint8_t) v};
    return put_fixed(b, col, col_len, QSF_QWP_BYTE, w, 1, -1, err);
}

int qsf_qwp_batch_col_i16(qsf_qwp_batch *b, const char *col, size_t col_len, int16_t v,
                          qsf_errinfo *err) {
    uint8_t w[2];
    qsf_put_u16(w, (uint16_t) v);
    return put_fixed(b, col, col_len, QSF_QWP_SHORT, w, 2, -1, err);
}

int qsf_qwp_batch_col_i32(qsf_qwp_batch *b, const char *col, size_t col_len, int32_t v,
                          qsf_errinfo *err) {
    uint8_t w[4];
    qsf_put_u32(w, (uint32_t) v);
    return put_fixed(b, col, col_len, QSF_QWP_INT, w, 4, -1, err);
}

int qsf_qwp_batch_col_i64(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t v,
                          qsf_errinfo *err) {
    return put_i64(b, col, col_len, QSF_QWP_LONG, v, err);
}

int qsf_qwp_batch_col_f32(qsf_qwp_batch *b, const char *col, size_t col_len, float v,
                          qsf_errinfo *err) {
    uint8_t w[4];
    qsf_put_u32(w, qsf_f32_bits(v));
    return put_fixed(b, col, col_len, QSF_QWP_FLOAT, w, 4, -1, err);
}

int qsf_qwp_batch_col_f64(qsf_qwp_batch *b, const char *col, size_t col_len, double v,
                          qsf_errinfo *err) {
    return put_i64(b, col, col_len, QSF_QWP_DOUBLE, (int64_t) qsf_f64_bits(v), err);
}

int qsf_qwp_batch_col_ts_micros(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t v,
                                qsf_errinfo *err) {
    return put_i64(b, col, col_len, QSF_QWP_TIMESTAMP, v, err);
}

int qsf_qwp_batch_col_ts_nanos(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t v,
                               qsf_errinfo *err) {
    return put_i64(b, col, col_len, QSF_QWP_TIMESTAMP_NANOS, v, err);
}

int qsf_qwp_batch_col_date(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t millis,
                           qsf_errinfo *err) {
    return put_i64(b, col, col_len, QSF_QWP_DATE, millis, err);
}

int qsf_qwp_batch_col_uuid(qsf_qwp_batch *b, const char *col, size_t col_len, uint64_t lo,
                           uint64_t hi, qsf_errinfo *err) {
    uint8_t w[16];
    qsf_put_u64(w, lo);
    qsf_put_u64(w + 8, hi);
    return put_fixed(b, col, col_len, QSF_QWP_UUID, w, 16, -1, err);
}

int qsf_qwp_batch_col_long256(qsf_qwp_batch *b, const char *col, size_t col_len,
                              const uint64_t words[4], qsf_errinfo *err) {
    if (!words)
        return bad_value(b, col, col_len, "LONG256 words are NULL", NULL, err);
    uint8_t w[32];
    for (int i = 0; i < 4; i++)
        qsf_put_u64(w + 8 * i, words[i]);
    return put_fixed(b, col, col_len, QSF_QWP_LONG256, w, 32, -1, err);
}

int qsf_qwp_batch_col_char(qsf_qwp_batch *b, const char *col, size_t col_len, uint16_t v,
                           qsf_errinfo *err) {
    uint8_t w[2];
    qsf_put_u16(w, v);
    return put_fixed(b, col, col_len, QSF_QWP_CHAR, w, 2, -1, err);
}

int qsf_qwp_batch_col_ipv4(qsf_qwp_batch *b, const char *col, size_t col_len, uint32_t v,
                           qsf_errinfo *err) {
    if (v == 0)
        return bad_value(b, col, col_len, "IPv4 0.0.0.0 is not a valid address (it is NULL)", NULL,
                         err);
    uint8_t w[4];
    qsf_put_u32(w, v);
    return put_fixed(b, col, col_len, QSF_QWP_IPV4, w, 4, -1, err);
}

static int check_scale(qsf_qwp_batch *b, const char *col, size_t col_len, uint8_t type, int scale,
                       qsf_errinfo *err) {
    int max = qsf_qwp_decimal_max_scale(type);
    if (scale >= 0 && scale <= max)
        return QSF_OK;
    char d[64];
    snprintf(d, sizeof d, "%d is outside 0..%d for %s", scale, max, qsf_qwp_type_name(type));
    return bad_value(b, col, col_len, "decimal scale ", d, err);
}

int qsf_qwp_batch_col_decimal64(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t unscaled,
                                int scale, qsf_errinfo *err) {
    int rc = check_scale(b, col, col_len, QSF_QWP_DECIMAL64, scale, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t w[8];
    qsf_put_i64(w, unscaled);
    return put_fixed(b, col, col_len, QSF_QWP_DECIMAL64, w, 8, scale, err);
}

int qsf_qwp_batch_col_decimal128(qsf_qwp_batch *b, const char *col, size_t col_len,
                                 const uint8_t unscaled_le[16], int scale, qsf_errinfo *err) {
    int rc = check_scale(b, col, col_len, QSF_QWP_DECIMAL128, scale, err);
    if (rc == QSF_OK && !unscaled_le)
        rc = bad_value(b, col, col_len, "DECIMAL128 value is NULL", NULL, err);
    return rc != QSF_OK
               ? rc
               : put_fixed(b, col, col_len, QSF_QWP_DECIMAL128, unscaled_le, 16, scale, err);
}

int qsf_qwp_batch_col_decimal256(qsf_qwp_batch *b, const char *col, size_t col_len,
                                 const uint8_t unscaled_le[32], int scale, qsf_errinfo *err) {
    int rc = check_scale(b, col, col_len, QSF_QWP_DECIMAL256, scale, err);
    if (rc == QSF_OK && !unscaled_le)
        rc = bad_value(b, col, col_len, "DECIMAL256 value is NULL", NULL, err);
    return rc != QSF_OK
               ? rc
               : put_fixed(b, col, col_len, QSF_QWP_DECIMAL256, unscaled_le, 32, scale, err);
}

int qsf_qwp_batch_col_geohash(qsf_qwp_batch *b, const char *col, size_t col_len, uint64_t bits,
                              int precision_bits, qsf_errinfo *err) {
    if (precision_bits < 1 || precision_bits > QSF_QWP_MAX_GEOHASH_BITS) {
        char d[48];
        snprintf(d, sizeof d, "%d is outside 1..60", precision_bits);
        return bad_value(b, col, col_len, "geohash precision ", d, err);
    }
    size_t wire = ((size_t) precision_bits + 7) / 8;
    qsf_colval v = {.type = QSF_QWP_GEOHASH,
                    .scale = -1,
                    .geo_bits = precision_bits,
                    .data_len = 8,
                    .wire_max = wire};
    bcol *c;
    int rc = qsf_batch_col_begin(b, col, col_len, &v, &c, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t masked = bits & ((1ull << precision_bits) - 1);
    memcpy(c->data.p + c->data.len, &masked, 8);
    qsf_batch_col_commit(b, c, &v, wire, 0);
    return QSF_OK;
}

static int put_var(qsf_qwp_batch *b, const char *col, size_t col_len, uint8_t type, const void *v,
                   size_t v_len, qsf_errinfo *err) {
    if (!v && v_len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "value pointer is NULL with length %zu", v_len);
    if (v_len > QSF_BATCH_MAX_VAR_LEN)
        return too_long(b, col, col_len, "value", v_len, QSF_BATCH_MAX_VAR_LEN, err);
    if (v && qsf_batch_put_var_checked(b, col, col_len, type, v, v_len) == QSF_OK)
        return QSF_OK;
    qsf_colval cv = {.type = type, .scale = -1, .data_len = v_len, .wire_max = 4 + v_len};
    bcol *c;
    int rc = qsf_batch_col_begin_slow(b, col, col_len, &cv, &c, err);
    if (rc != QSF_OK)
        return rc;
    if (v_len)
        memcpy(c->data.p + c->data.len, v, v_len);
    qsf_batch_col_commit(b, c, &cv, 4 + v_len, 0);
    return QSF_OK;
}

int qsf_qwp_batch_col_varchar(qsf_qwp_batch *b, const char *col, size_t col_len, const char *v,
                              size_t v_len, qsf_errinfo *err) {
    if (v_len > QSF_BATCH_MAX_VAR_LEN) /* before reading it */
        return too_long(b, col, col_len, "VARCHAR value", v_len, QSF_BATCH_MAX_VAR_LEN, err);
    if (v) {
        size_t bad = qsf_utf8_error_offset(v, v_len);
        if (bad != v_len) {
            char d[48];
            snprintf(d, sizeof d, "%zu", bad);
            return bad_value(b, col, col_len, "VARCHAR value is not valid UTF-8 at byte ", d, err);
        }
    }
    return put_var(b, col, col_len, QSF_QWP_VARCHAR, v, v_len, err);
}

int qsf_qwp_batch_col_binary(qsf_qwp_batch *b, const char *col, size_t col_len, const void *v,
                             size_t v_len, qsf_errinfo *err) {
    return put_var(b, col, col_len, QSF_QWP_BINARY, v, v_len, err);
}

int qsf_qwp_batch_symbol(qsf_qwp_batch *b, const char *col, size_t col_len, const char *val,
                         size_t val_len, qsf_errinfo *err) {
    if (!val && val_len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "symbol pointer is NULL with length %zu",
                           val_len);
    if (val_len > QSF_BATCH_MAX_SYMBOL_LEN)
        return too_long(b, col, col_len, "symbol", val_len, QSF_BATCH_MAX_SYMBOL_LEN, err);
    size_t bad = qsf_utf8_error_offset(val, val_len);
    if (bad != val_len) {
        char d[48];
        snprintf(d, sizeof d, "%zu", bad);
        return bad_value(b, col, col_len, "symbol is not valid UTF-8 at byte ", d, err);
    }
    int rc =
        val ? qsf_batch_put_symbol_checked(b, col, col_len, val, val_len, err) : QSF_BATCH_SLOW;
    if (rc != QSF_BATCH_SLOW)
        return rc;
    qsf_colval v = qsf_batch_symbol_colval(val_len);
    bcol *c;
    rc = qsf_batch_col_begin_slow(b, col, col_len, &v, &c, err);
    return rc != QSF_OK ? rc : qsf_batch_symbol_into(b, c, &v, val, val_len, false, err);
}

/* Checks rank and shape; *count receives the element count. */
static int check_shape(qsf_qwp_batch *b, const char *col, size_t col_len, int rank,
                       const int32_t *shape, const void *values, size_t *count, qsf_errinfo *err) {
    char d[64];
    if (rank < 1 || rank > QSF_QWP_MAX_ARRAY_RANK) {
        snprintf(d, sizeof d, "%d is outside 1..32", rank);
        return bad_value(b, col, col_len, "array rank ", d, err);
    }
    if (!shape)
        return bad_value(b, col, col_len, "array shape is NULL", NULL, err);
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) {
            snprintf(d, sizeof d, "%d is %d", i, shape[i]);
            return bad_value(b, col, col_len, "negative array dimension: dimension ", d, err);
        }
        n *= (uint64_t) shape[i];
        if (n > INT32_MAX)
            return bad_value(b, col, col_len, "array element count exceeds 2^31-1", NULL, err);
    }
    if (n && !values)
        return bad_value(b, col, col_len, "array values are NULL", NULL, err);
    *count = (size_t) n;
    return QSF_OK;
}

/* Array value in wire form: n_dims u8, dims i32 LE, values 8 bytes LE each. */
static int put_array(qsf_qwp_batch *b, const char *col, size_t col_len, uint8_t type, int rank,
                     const int32_t *shape, const void *values, qsf_errinfo *err) {
    size_t count = 0;
    int rc = check_shape(b, col, col_len, rank, shape, values, &count, err);
    if (rc != QSF_OK)
        return rc;
    size_t len = 1 + 4 * (size_t) rank + 8 * count;
    qsf_colval v = {.type = type, .scale = -1, .data_len = len, .wire_max = len};
    bcol *c;
    rc = qsf_batch_col_begin(b, col, col_len, &v, &c, err);
    if (rc != QSF_OK)
        return rc;
    uint8_t *p = c->data.p + c->data.len;
    *p++ = (uint8_t) rank;
    for (int i = 0; i < rank; i++, p += 4)
        qsf_put_u32(p, (uint32_t) shape[i]);
    for (size_t i = 0; i < count; i++, p += 8) {
        uint64_t x;
        memcpy(&x, (const uint8_t *) values + 8 * i, 8); /* double or int64 bit pattern */
        qsf_put_u64(p, x);
    }
    qsf_batch_col_commit(b, c, &v, len, 0);
    return QSF_OK;
}

int qsf_qwp_batch_col_f64_array(qsf_qwp_batch *b, const char *col, size_t col_len, int rank,
                                const int32_t *shape, const double *values, qsf_errinfo *err) {
    return put_array(b, col, col_len, QSF_QWP_DOUBLE_ARRAY, rank, shape, values, err);
}

int qsf_qwp_batch_col_i64_array(qsf_qwp_batch *b, const char *col, size_t col_len, int rank,
                                const int32_t *shape, const int64_t *values, qsf_errinfo *err) {
    return put_array(b, col, col_len, QSF_QWP_LONG_ARRAY, rank, shape, values, err);
}
