/* The typed column calls of a chunk (include/qsf.h, "Columns in: chunks"). Each
 * one checks everything about its buffers that QuestDB or the wire could
 * refuse, row by row, before the column joins the chunk: the encoder then
 * reads only what was declared and never fails on a value. */
#include "chunk/chunk_cols.h"

#include "qwp/utf8.h"

#include <string.h>

#define SYMBOL_MAX_LEN  (1u << 20)       /* as the row API */
#define VAR_MAX_LEN     (UINT32_MAX / 2) /* as the row API */
#define ARRAY_MAX_ELEMS INT32_MAX

#define BAD_ROW(k, i, ...)                                                                         \
    qsf_chunk_col_error(c, (k)->name, (k)->name_len, QSF_E_VALUE, err, "row %zu: " __VA_ARGS__)

/* A column whose buffer is read as `width`-byte values. */
static int begin(qsf_chunk *c, const char *col, size_t col_len, const void *values, size_t width,
                 uint8_t type, uint8_t src, const uint8_t *validity, size_t offset, size_t rows,
                 qsf_chunk_col *k, qsf_errinfo *err) {
    int rc = qsf_chunk_col_begin(c, col, col_len, values, width, offset, rows, k, err);
    k->type = type;
    k->src = src;
    k->src_width = (uint8_t) width;
    k->values = values;
    k->validity = validity;
    return rc;
}

/* A fixed-width column without a rule on its values. */
static int plain(qsf_chunk *c, const char *col, size_t col_len, const void *values, size_t width,
                 uint8_t type, uint8_t src, const uint8_t *validity, size_t offset, size_t rows,
                 qsf_errinfo *err) {
    qsf_chunk_col k;
    int rc = begin(c, col, col_len, values, width, type, src, validity, offset, rows, &k, err);
    return rc != QSF_OK ? rc : qsf_chunk_col_add(c, &k, rows, err);
}

#define PLAIN(fn, ctype, width, type, src)                                                         \
    QSF_API int fn(qsf_chunk *c, const char *col, size_t col_len, const ctype *values,             \
                   const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err) {        \
        return plain(c, col, col_len, values, width, type, src, validity, offset, rows, err);      \
    }

PLAIN(qsf_chunk_i8, int8_t, 1, QSF_QWP_BYTE, CSRC_COPY)
PLAIN(qsf_chunk_i16, int16_t, 2, QSF_QWP_SHORT, CSRC_COPY)
PLAIN(qsf_chunk_i32, int32_t, 4, QSF_QWP_INT, CSRC_COPY)
PLAIN(qsf_chunk_i64, int64_t, 8, QSF_QWP_LONG, CSRC_COPY)
PLAIN(qsf_chunk_u8, uint8_t, 1, QSF_QWP_SHORT, CSRC_WIDEN_U8)
PLAIN(qsf_chunk_u16, uint16_t, 2, QSF_QWP_INT, CSRC_WIDEN_U16)
PLAIN(qsf_chunk_u32, uint32_t, 4, QSF_QWP_LONG, CSRC_WIDEN_U32)
PLAIN(qsf_chunk_f32, float, 4, QSF_QWP_FLOAT, CSRC_COPY)
PLAIN(qsf_chunk_f64, double, 8, QSF_QWP_DOUBLE, CSRC_COPY)
PLAIN(qsf_chunk_bool, uint8_t, 1, QSF_QWP_BOOLEAN, CSRC_BOOL_BITS)
PLAIN(qsf_chunk_bool_u8, uint8_t, 1, QSF_QWP_BOOLEAN, CSRC_BOOL_U8)
PLAIN(qsf_chunk_date_millis, int64_t, 8, QSF_QWP_DATE, CSRC_COPY)
PLAIN(qsf_chunk_date_days, int32_t, 4, QSF_QWP_DATE, CSRC_DAYS)
PLAIN(qsf_chunk_char, uint16_t, 2, QSF_QWP_CHAR, CSRC_COPY)
PLAIN(qsf_chunk_uuid, uint8_t, 16, QSF_QWP_UUID, CSRC_UUID)
PLAIN(qsf_chunk_long256, uint8_t, 32, QSF_QWP_LONG256, CSRC_COPY)

/* A fixed-width column whose valid rows must not hold a value `bad` finds
 * (the message then gives the value and `why`). */
static int checked(qsf_chunk *c, const char *col, size_t col_len, const void *values, size_t width,
                   uint8_t type, bool (*bad)(const void *values, size_t j, uint64_t *v),
                   const char *why, const uint8_t *validity, size_t offset, size_t rows,
                   qsf_errinfo *err) {
    qsf_chunk_col k;
    int rc =
        begin(c, col, col_len, values, width, type, CSRC_COPY, validity, offset, rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    uint64_t v;
    for (size_t i = 0; i < rows; i++)
        if (bad(values, offset + i, &v) && qsf_chunk_valid(&k, i))
            return BAD_ROW(&k, i, "%llu %s", i, (unsigned long long) v, why);
    return qsf_chunk_col_add(c, &k, rows, err);
}

static bool above_long(const void *values, size_t j, uint64_t *v) {
    *v = ((const uint64_t *) values)[j];
    return *v > INT64_MAX;
}

static bool no_address(const void *values, size_t j, uint64_t *v) {
    *v = ((const uint32_t *) values)[j];
    return *v == 0;
}

QSF_API int qsf_chunk_u64(qsf_chunk *c, const char *col, size_t col_len, const uint64_t *values,
                          const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err) {
    return checked(c, col, col_len, values, 8, QSF_QWP_LONG, above_long,
                   "is above INT64_MAX: a LONG cannot hold it", validity, offset, rows, err);
}

QSF_API int qsf_chunk_ipv4(qsf_chunk *c, const char *col, size_t col_len, const uint32_t *values,
                           const uint8_t *validity, size_t offset, size_t rows, qsf_errinfo *err) {
    return checked(c, col, col_len, values, 4, QSF_QWP_IPV4, no_address,
                   "is IPv4 0.0.0.0, not a valid address (it is NULL)", validity, offset, rows,
                   err);
}

QSF_API int qsf_chunk_timestamp(qsf_chunk *c, const char *col, size_t col_len,
                                const int64_t *values, int unit, const uint8_t *validity,
                                size_t offset, size_t rows, qsf_errinfo *err) {
    int64_t mult = qsf_chunk_unit_mult(unit);
    qsf_chunk_col k;
    int rc = begin(c, col, col_len, values, 8,
                   unit == QSF_UNIT_NANOS ? QSF_QWP_TIMESTAMP_NANOS : QSF_QWP_TIMESTAMP,
                   mult > 1 ? CSRC_SCALE_I64 : CSRC_COPY, validity, offset, rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    if (!mult)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "unit %d is not one of QSF_UNIT_SECONDS..QSF_UNIT_NANOS", unit);
    k.mult = mult;
    int64_t lim = INT64_MAX / mult;
    for (size_t i = 0; mult > 1 && i < rows; i++) {
        int64_t v = values[offset + i];
        if ((v > lim || v < -lim) && qsf_chunk_valid(&k, i))
            return BAD_ROW(&k, i, "%lld overflows a timestamp in microseconds", i, (long long) v);
    }
    return qsf_chunk_col_add(c, &k, rows, err);
}

QSF_API int qsf_chunk_geohash(qsf_chunk *c, const char *col, size_t col_len, const uint64_t *values,
                              int precision_bits, const uint8_t *validity, size_t offset,
                              size_t rows, qsf_errinfo *err) {
    qsf_chunk_col k;
    int rc = begin(c, col, col_len, values, 8, QSF_QWP_GEOHASH, CSRC_GEOHASH, validity, offset,
                   rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    if (precision_bits < 1 || precision_bits > QSF_QWP_MAX_GEOHASH_BITS)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err,
                                   "geohash precision %d is outside 1..60", precision_bits);
    k.geo_bits = (uint8_t) precision_bits;
    return qsf_chunk_col_add(c, &k, rows, err);
}

static int decimal(qsf_chunk *c, const char *col, size_t col_len, const void *values, size_t width,
                   uint8_t type, int scale, const uint8_t *validity, size_t offset, size_t rows,
                   qsf_errinfo *err) {
    qsf_chunk_col k;
    int rc =
        begin(c, col, col_len, values, width, type, CSRC_COPY, validity, offset, rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    int max = qsf_qwp_decimal_max_scale(type);
    if (scale < 0 || scale > max)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err,
                                   "decimal scale %d is outside 0..%d for %s", scale, max,
                                   qsf_qwp_type_name(type));
    k.scale = (uint8_t) scale;
    return qsf_chunk_col_add(c, &k, rows, err);
}

QSF_API int qsf_chunk_decimal64(qsf_chunk *c, const char *col, size_t col_len,
                                const int64_t *values, int scale, const uint8_t *validity,
                                size_t offset, size_t rows, qsf_errinfo *err) {
    return decimal(c, col, col_len, values, 8, QSF_QWP_DECIMAL64, scale, validity, offset, rows,
                   err);
}

QSF_API int qsf_chunk_decimal128(qsf_chunk *c, const char *col, size_t col_len,
                                 const uint8_t *values, int scale, const uint8_t *validity,
                                 size_t offset, size_t rows, qsf_errinfo *err) {
    return decimal(c, col, col_len, values, 16, QSF_QWP_DECIMAL128, scale, validity, offset, rows,
                   err);
}

QSF_API int qsf_chunk_decimal256(qsf_chunk *c, const char *col, size_t col_len,
                                 const uint8_t *values, int scale, const uint8_t *validity,
                                 size_t offset, size_t rows, qsf_errinfo *err) {
    return decimal(c, col, col_len, values, 32, QSF_QWP_DECIMAL256, scale, validity, offset, rows,
                   err);
}

/* ---- variable-width values ---- */

/* Offset j of a 32- or 64-bit Arrow offsets buffer. */
static int64_t offset_at(const void *offs, bool wide, size_t j) {
    return wide ? ((const int64_t *) offs)[j] : ((const int32_t *) offs)[j];
}

/* The first j < n where 32-bit offsets o[j] .. o[j + 1] (o[0] >= 0) decrease
 * or span more than max_len (< 2^31), else n: a branch-free scan first, which
 * the compiler vectorises: with no offset negative, a decrease wraps above
 * max_len in unsigned 32-bit arithmetic. */
static size_t first_bad32(const int32_t *o, size_t n, uint64_t max_len) {
    const size_t step = 256;
    const uint32_t *u = (const uint32_t *) o, lim = (uint32_t) max_len;
    for (size_t at = 0; at < n; at += step) {
        size_t end = at + step < n ? at + step : n;
        uint32_t bad = 0;
        for (size_t j = at; j < end; j++) /* a negative offset, or a decrease or span */
            bad |= (u[j + 1] >> 31) | ((uint32_t) (u[j + 1] - u[j]) > lim);
        for (size_t j = at; bad && j < end; j++) {
            int64_t d = (int64_t) o[j + 1] - o[j];
            if (d < 0 || (uint64_t) d > max_len)
                return j;
        }
    }
    return n;
}

/* Checks Arrow offsets [off, off + n] (32- or 64-bit): none negative, none
 * decreasing, no span over max_len; *total: the bytes they span. `what`
 * names the element ("row" or "dictionary entry"). */
static int check_offsets(const qsf_chunk *c, const qsf_chunk_col *k, const void *offs, bool wide,
                         size_t off, size_t n, uint64_t max_len, const char *what, uint64_t *total,
                         qsf_errinfo *err) {
    *total = 0;
    if (n == 0 && !offs)
        return QSF_OK;
    int64_t first = offset_at(offs, wide, off);
    if (first < 0)
        return qsf_chunk_col_error(c, k->name, k->name_len, QSF_E_VALUE, err,
                                   "%s 0: offset %lld is negative", what, (long long) first);
    size_t j = wide ? 0 : first_bad32((const int32_t *) offs + off, n, max_len);
    for (; j < n; j++) { /* 64-bit offsets, or the bad 32-bit one: which and why */
        int64_t b = offset_at(offs, wide, off + j), e = offset_at(offs, wide, off + j + 1);
        if (e < b)
            return qsf_chunk_col_error(c, k->name, k->name_len, QSF_E_VALUE, err,
                                       "%s %zu: offsets decrease (%lld, then %lld)", what, j,
                                       (long long) b, (long long) e);
        if ((uint64_t) (e - b) > max_len)
            return qsf_chunk_col_error(c, k->name, k->name_len, QSF_E_VALUE, err,
                                       "%s %zu: %llu long, more than the %llu allowed", what, j,
                                       (unsigned long long) (e - b), (unsigned long long) max_len);
    }
    *total = (uint64_t) (offset_at(offs, wide, off + n) - first);
    return QSF_OK;
}

/* Whether n bytes at p are all ASCII, 8 at a time. */
static bool all_ascii(const char *p, uint64_t n) {
    uint64_t acc = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc |= w;
    }
    for (; i < n; i++)
        acc |= (uint8_t) p[i];
    return (acc & 0x8080808080808080ull) == 0;
}

/* Every valid value of an offsets + data column is UTF-8. When every byte the
 * rows span is ASCII (offsets checked: they do not decrease), so is every
 * value: one pass over the bytes. */
static int check_utf8(const qsf_chunk *c, const qsf_chunk_col *k, size_t rows, qsf_errinfo *err) {
    bool wide = k->src == CSRC_VAR64 || k->src == CSRC_SYM64;
    const char *data = k->values;
    int64_t first = offset_at(k->offs, wide, k->off),
            last = offset_at(k->offs, wide, k->off + rows);
    if (last == first || all_ascii(data + first, (uint64_t) (last - first)))
        return QSF_OK;
    for (size_t i = 0; i < rows; i++) {
        uint64_t b, e;
        qsf_chunk_span(k->offs, wide, k->off + i, &b, &e);
        if (e == b || !qsf_chunk_valid(k, i))
            continue;
        size_t bad = qsf_utf8_error_offset(data + b, (size_t) (e - b));
        if (bad != e - b)
            return qsf_chunk_col_error(c, k->name, k->name_len, QSF_E_VALUE, err,
                                       "row %zu: %s is not valid UTF-8 at byte %zu", i,
                                       k->type == QSF_QWP_SYMBOL ? "symbol" : "VARCHAR value", bad);
    }
    return QSF_OK;
}

static int var(qsf_chunk *c, const char *col, size_t col_len, const void *offsets, bool wide,
               const void *data, uint8_t type, const uint8_t *validity, size_t offset, size_t rows,
               qsf_errinfo *err) {
    uint8_t src = type == QSF_QWP_SYMBOL ? (wide ? CSRC_SYM64 : CSRC_SYM32)
                                         : (wide ? CSRC_VAR64 : CSRC_VAR32);
    qsf_chunk_col k;
    int rc =
        begin(c, col, col_len, offsets, wide ? 8 : 4, type, src, validity, offset, rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    if (!offsets && rows)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "offsets are NULL for %zu rows", rows);
    k.type = type;
    k.src = src;
    k.offs = offsets;
    k.values = data;
    k.validity = validity;
    uint64_t total;
    uint64_t max = type == QSF_QWP_SYMBOL ? SYMBOL_MAX_LEN : VAR_MAX_LEN;
    rc = check_offsets(c, &k, offsets, wide, offset, rows, max, "row", &total, err);
    if (rc != QSF_OK)
        return rc;
    if (total && !data)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "data is NULL but the offsets span %llu bytes",
                                   (unsigned long long) total);
    if (type != QSF_QWP_BINARY && (rc = check_utf8(c, &k, rows, err)) != QSF_OK)
        return rc;
    return qsf_chunk_col_add(c, &k, rows, err);
}

#define VAR(fn, otype, wide, dtype, type)                                                          \
    QSF_API int fn(qsf_chunk *c, const char *col, size_t col_len, const otype *offsets,            \
                   const dtype *data, const uint8_t *validity, size_t offset, size_t rows,         \
                   qsf_errinfo *err) {                                                             \
        return var(c, col, col_len, offsets, wide, data, type, validity, offset, rows, err);       \
    }

VAR(qsf_chunk_varchar, int32_t, false, char, QSF_QWP_VARCHAR)
VAR(qsf_chunk_varchar64, int64_t, true, char, QSF_QWP_VARCHAR)
VAR(qsf_chunk_binary, int32_t, false, void, QSF_QWP_BINARY)
VAR(qsf_chunk_binary64, int64_t, true, void, QSF_QWP_BINARY)
VAR(qsf_chunk_symbol, int32_t, false, char, QSF_QWP_SYMBOL)
VAR(qsf_chunk_symbol64, int64_t, true, char, QSF_QWP_SYMBOL)

/* ---- symbols from dictionary codes ---- */

int64_t qsf_chunk_code(const qsf_chunk_col *k, size_t i) {
    size_t j = k->off + i;
    switch (k->src_width) {
    case 1:
        return ((const int8_t *) k->values)[j];
    case 2:
        return ((const int16_t *) k->values)[j];
    default:
        return ((const int32_t *) k->values)[j];
    }
}

/* Every dictionary entry is a symbol (UTF-8, at most 1 MiB). */
static int check_dict(const qsf_chunk *c, const qsf_chunk_col *k, qsf_errinfo *err) {
    uint64_t total;
    int rc = check_offsets(c, k, k->offs, false, 0, k->dict_len, SYMBOL_MAX_LEN, "dictionary entry",
                           &total, err);
    if (rc != QSF_OK)
        return rc;
    if (total && !k->dict)
        return qsf_chunk_col_error(c, k->name, k->name_len, QSF_E_INVAL, err,
                                   "dictionary data is NULL but its offsets span %llu bytes",
                                   (unsigned long long) total);
    for (size_t d = 0; d < k->dict_len; d++) {
        uint64_t b, e;
        qsf_chunk_span(k->offs, false, d, &b, &e);
        size_t bad = e > b ? qsf_utf8_error_offset(k->dict + b, (size_t) (e - b)) : 0;
        if (e > b && bad != e - b)
            return qsf_chunk_col_error(c, k->name, k->name_len, QSF_E_VALUE, err,
                                       "dictionary entry %zu is not valid UTF-8 at byte %zu", d,
                                       bad);
    }
    return QSF_OK;
}

QSF_API int qsf_chunk_symbol_dict(qsf_chunk *c, const char *col, size_t col_len, const void *codes,
                                  int code_bytes, const int32_t *dict_offsets,
                                  const char *dict_data, size_t dict_len, const uint8_t *validity,
                                  size_t offset, size_t rows, qsf_errinfo *err) {
    qsf_chunk_col k;
    size_t w = code_bytes == 1 || code_bytes == 2 || code_bytes == 4 ? (size_t) code_bytes : 4;
    int rc = begin(c, col, col_len, codes, w, QSF_QWP_SYMBOL, CSRC_SYMDICT, validity, offset, rows,
                   &k, err);
    if (rc != QSF_OK)
        return rc;
    if (w != (size_t) code_bytes)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "code_bytes %d is not 1, 2 or 4", code_bytes);
    if (!dict_offsets && dict_len)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "dictionary offsets are NULL for %zu entries", dict_len);
    if (dict_len > INT32_MAX)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "dictionary of %zu entries: codes of 32 bits reach INT32_MAX",
                                   dict_len);
    k.offs = dict_offsets;
    k.dict = dict_data;
    k.dict_len = dict_len;
    if ((rc = check_dict(c, &k, err)) != QSF_OK)
        return rc;
    for (size_t i = 0; i < rows; i++) {
        int64_t code = qsf_chunk_code(&k, i);
        if ((code < 0 || (uint64_t) code >= dict_len) && qsf_chunk_valid(&k, i))
            return BAD_ROW(&k, i, "code %lld is outside the dictionary (%zu entries)", i,
                           (long long) code, dict_len);
    }
    return qsf_chunk_col_add(c, &k, rows, err);
}

/* ---- DOUBLE arrays ---- */

QSF_API int qsf_chunk_f64_list(qsf_chunk *c, const char *col, size_t col_len,
                               const int32_t *list_offsets, const double *values,
                               const uint8_t *validity, size_t offset, size_t rows,
                               qsf_errinfo *err) {
    qsf_chunk_col k;
    int rc = begin(c, col, col_len, list_offsets, 4, QSF_QWP_DOUBLE_ARRAY, CSRC_LIST, validity,
                   offset, rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    k.offs = list_offsets;
    k.values = values;
    uint64_t total;
    rc = check_offsets(c, &k, list_offsets, false, offset, rows, ARRAY_MAX_ELEMS, "row", &total,
                       err);
    if (rc != QSF_OK)
        return rc;
    if (total && !values)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "values are NULL but the list offsets span %llu elements",
                                   (unsigned long long) total);
    return qsf_chunk_col_add(c, &k, rows, err);
}

QSF_API int qsf_chunk_f64_tensor(qsf_chunk *c, const char *col, size_t col_len, int rank,
                                 const int32_t *shape, const double *values,
                                 const uint8_t *validity, size_t offset, size_t rows,
                                 qsf_errinfo *err) {
    if (c && (rank < 1 || rank > QSF_QWP_MAX_ARRAY_RANK || !shape))
        return qsf_chunk_col_error(c, col, col_len, shape ? QSF_E_VALUE : QSF_E_INVAL, err,
                                   shape ? "array rank %d is outside 1..32" : "shape is NULL",
                                   rank);
    uint64_t elems = 1;
    for (int d = 0; c && d < rank; d++) {
        if (shape[d] < 0)
            return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err,
                                       "array dimension %d is negative (%d)", d, shape[d]);
        elems *= (uint64_t) shape[d];
        if (elems > ARRAY_MAX_ELEMS)
            return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err,
                                       "array element count exceeds 2^31-1");
    }
    qsf_chunk_col k;
    /* with no element per row, values need not exist */
    int rc = qsf_chunk_col_begin(c, col, col_len, elems ? (const void *) values : "", elems * 8,
                                 offset, rows, &k, err);
    if (rc != QSF_OK)
        return rc;
    k.type = QSF_QWP_DOUBLE_ARRAY;
    k.src = CSRC_TENSOR;
    k.values = values;
    k.validity = validity;
    k.rank = (uint8_t) rank;
    k.elems = (size_t) elems;
    memcpy(k.shape, shape, (size_t) rank * sizeof *shape);
    return qsf_chunk_col_add(c, &k, rows, err);
}
