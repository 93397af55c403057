/* The chunk object and its column bookkeeping (include/qsf.h, "Columns in:
 * chunks"): names, the row count, and the checks every column call makes
 * before its values. The typed column calls are in chunk_cols.c. */
#include "chunk/chunk_arrow.h"
#include "grow.h"
#include "chunk/chunk_cols.h"
#include "chunk/chunk_enc.h"

#include "err.h"
#include "qwp/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "chunk columns are copied as they are: QWP and the host must both be little-endian");

QSF_API int qsf_chunk_new(const char *table, size_t table_len, qsf_chunk **out, qsf_errinfo *err) {
    if (!out)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk: out is NULL");
    *out = NULL;
    if (!table && table_len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk: table name is NULL with length %zu",
                           table_len);
    int rc = qsf_qwp_check_name(table, table_len, false, QSF_QWP_MAX_NAME_LEN, "chunk: ", err);
    if (rc != QSF_OK)
        return rc;
    qsf_chunk *c = calloc(1, sizeof *c);
    if (!c)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "chunk: out of memory");
    memcpy(c->table, table, table_len);
    c->table_len = (uint8_t) table_len;
    *out = c;
    return QSF_OK;
}

QSF_API void qsf_chunk_clear(qsf_chunk *c) {
    if (!c)
        return;
    c->ncols = 0;
    c->rows = 0;
    c->counted = false;
    c->has_ts = false;
    qsf_arrow_state_clear(c->arrow); /* the converted Arrow columns' buffers */
}

QSF_API void qsf_chunk_free(qsf_chunk *c) {
    if (!c)
        return;
    qsf_chunk_enc_free(c);
    free(c->cols);
    qsf_arrow_state_free(c->arrow);
    free(c);
}

QSF_API size_t qsf_chunk_rows(const qsf_chunk *c) {
    return c ? c->rows : 0;
}

size_t qsf_chunk_count_nulls(const uint8_t *validity, size_t off, size_t rows) {
    if (!validity)
        return 0;
    size_t valid = 0, i = off, end = off + rows;
    for (; i < end && (i & 7); i++)
        valid += (validity[i >> 3] >> (i & 7)) & 1;
    for (; i + 64 <= end; i += 64) {
        uint64_t w;
        memcpy(&w, validity + (i >> 3), 8);
        valid += (size_t) __builtin_popcountll(w);
    }
    for (; i < end; i++)
        valid += (validity[i >> 3] >> (i & 7)) & 1;
    return rows - valid;
}

int qsf_chunk_col_error(const qsf_chunk *c, const char *col, size_t col_len, int code,
                        qsf_errinfo *err, const char *fmt, ...) {
    char what[QSF_ERRINFO_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int n = col_len > QSF_QWP_MAX_NAME_LEN ? QSF_QWP_MAX_NAME_LEN : (int) col_len;
    return qsf_err_set(err, code, 0, 0, "chunk of table \"%.*s\", column \"%.*s\": %s",
                       c->table_len, c->table, n, col ? col : "", what);
}

/* QuestDB names are case-insensitive (ASCII). */
static bool same_name(const char *a, size_t alen, const char *b, size_t blen) {
    if (alen != blen)
        return false;
    for (size_t i = 0; i < alen; i++) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? (char) (a[i] + 32) : a[i];
        char y = b[i] >= 'A' && b[i] <= 'Z' ? (char) (b[i] + 32) : b[i];
        if (x != y)
            return false;
    }
    return true;
}

/* The chunk's row count: the first column (or designated timestamp) fixes it. */
static int check_rows(const qsf_chunk *c, const char *col, size_t col_len, size_t rows,
                      qsf_errinfo *err) {
    if (!c->counted || rows == c->rows)
        return QSF_OK;
    return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err,
                               "has %zu rows, but %s has %zu: every column of a chunk has the "
                               "same row count",
                               rows, c->counter, c->rows);
}

static int check_name(const qsf_chunk *c, const char *col, size_t col_len, qsf_errinfo *err) {
    if (!col && col_len)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk: column name is NULL with length %zu",
                           col_len);
    char what[QSF_QWP_MAX_NAME_LEN + 48];
    snprintf(what, sizeof what, "chunk of table \"%.*s\": ", c->table_len, c->table);
    int rc = qsf_qwp_check_name(col, col_len, true, QSF_QWP_MAX_NAME_LEN, what, err);
    if (rc != QSF_OK)
        return rc;
    for (uint32_t i = 0; i < c->ncols; i++)
        if (same_name(c->cols[i].name, c->cols[i].name_len, col, col_len))
            return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err,
                                       "named twice (as \"%.*s\" before)", c->cols[i].name_len,
                                       c->cols[i].name);
    if (c->ncols >= QSF_QWP_MAX_COLUMNS - 1)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_VALUE, err, "more than %d columns",
                                   QSF_QWP_MAX_COLUMNS - 1);
    return QSF_OK;
}

int qsf_chunk_col_begin(qsf_chunk *c, const char *col, size_t col_len, const void *buf,
                        size_t width, size_t offset, size_t rows, qsf_chunk_col *out,
                        qsf_errinfo *err) {
    if (!c)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk is NULL");
    int rc = check_name(c, col, col_len, err);
    if (rc == QSF_OK)
        rc = check_rows(c, col, col_len, rows, err);
    if (rc != QSF_OK)
        return rc;
    if (!buf && rows > 0)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err, "buffer is NULL for %zu rows",
                                   rows);
    size_t w = width ? width : 1;
    if (offset > SIZE_MAX - rows || offset + rows > SIZE_MAX / 8 / w)
        return qsf_chunk_col_error(c, col, col_len, QSF_E_INVAL, err,
                                   "offset %zu + rows %zu is larger than any buffer can be", offset,
                                   rows);
    memset(out, 0, sizeof *out);
    memcpy(out->name, col, col_len);
    out->name_len = (uint8_t) col_len;
    out->off = offset;
    return QSF_OK;
}

int qsf_chunk_col_add(qsf_chunk *c, const qsf_chunk_col *col, size_t rows, qsf_errinfo *err) {
    if (c->ncols == c->cols_cap) {
        qsf_chunk_col *p = qsf_grow(c->cols, &c->cols_cap, 8);
        if (!p)
            return qsf_chunk_col_error(c, col->name, col->name_len, QSF_E_NOMEM, err,
                                       "out of memory");
        c->cols = p;
    }
    qsf_chunk_col *dst = &c->cols[c->ncols++];
    *dst = *col;
    dst->nulls = qsf_chunk_count_nulls(col->validity, col->off, rows);
    if (!c->counted) {
        c->counted = true;
        c->rows = rows;
        snprintf(c->counter, sizeof c->counter, "column \"%.*s\"", col->name_len, col->name);
    }
    return QSF_OK;
}

/* ---- the designated timestamp ---- */

int64_t qsf_chunk_unit_mult(int unit) {
    switch (unit) {
    case QSF_UNIT_SECONDS:
        return 1000000;
    case QSF_UNIT_MILLIS:
        return 1000;
    case QSF_UNIT_MICROS:
    case QSF_UNIT_NANOS:
        return 1;
    default:
        return 0;
    }
}

QSF_API int qsf_chunk_at(qsf_chunk *c, const int64_t *values, int unit, size_t offset, size_t rows,
                         qsf_errinfo *err) {
    static const char name[] = "designated timestamp";
    if (!c)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk is NULL");
    int64_t mult = qsf_chunk_unit_mult(unit);
    if (!mult)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "chunk of table \"%.*s\", designated timestamp: unit %d is not one of "
                           "QSF_UNIT_SECONDS..QSF_UNIT_NANOS",
                           c->table_len, c->table, unit);
    if (c->ncols > 0) { /* else a new designated timestamp may set another count */
        int rc = check_rows(c, name, sizeof name - 1, rows, err);
        if (rc != QSF_OK)
            return rc;
    }
    if (!values && rows)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "chunk of table \"%.*s\", designated timestamp: buffer is NULL for "
                           "%zu rows",
                           c->table_len, c->table, rows);
    if (offset > SIZE_MAX / 16 - rows)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "chunk of table \"%.*s\", designated timestamp: offset %zu + rows %zu "
                           "is larger than any buffer can be",
                           c->table_len, c->table, offset, rows);
    uint64_t lim = (uint64_t) (INT64_MAX / mult), any = 0;
    for (size_t i = 0; i < rows; i++) /* branch-free first: a negative value is above lim too */
        any |= (uint64_t) values[offset + i] > lim;
    for (size_t i = 0; any && i < rows; i++) {
        int64_t v = values[offset + i];
        if ((uint64_t) v > lim)
            return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                               "chunk of table \"%.*s\", designated timestamp: row %zu: %lld is "
                               "%s",
                               c->table_len, c->table, i, (long long) v,
                               v < 0 ? "negative (before 1970)"
                                     : "too large for a timestamp in microseconds");
    }
    c->has_ts = true;
    c->ts = values;
    c->ts_off = offset;
    c->ts_mult = mult;
    c->ts_nanos = unit == QSF_UNIT_NANOS;
    if (c->ncols == 0) {
        c->counted = true;
        c->rows = rows;
        snprintf(c->counter, sizeof c->counter, "the designated timestamp");
    }
    return QSF_OK;
}

QSF_API int qsf_chunk_at_now(qsf_chunk *c, qsf_errinfo *err) {
    if (!c)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk is NULL");
    c->has_ts = false;
    if (c->ncols == 0) {
        c->counted = false;
        c->rows = 0;
    }
    return QSF_OK;
}
