/* What chunk.c gives the typed column calls (chunk_cols.c): the checks made
 * before a column's values and the append made after them. */
#ifndef QSF_CHUNK_COLS_H
#define QSF_CHUNK_COLS_H

#include "chunk/chunk_int.h"

/* A column call's first step: the chunk is not NULL, the name is valid and not
 * taken (case-insensitively), `rows` agrees with the chunk's count, `buf` is
 * not NULL when rows > 0, and offset + rows elements of `width` bytes can
 * exist. Fills *out with the name and offset. Nothing changes on error. */
int qsf_chunk_col_begin(qsf_chunk *c, const char *col, size_t col_len, const void *buf,
                        size_t width, size_t offset, size_t rows, qsf_chunk_col *out,
                        qsf_errinfo *err);

/* Appends the checked column (counting its NULL rows); the first column fixes
 * the chunk's row count. Errors: QSF_E_NOMEM, nothing changed. */
int qsf_chunk_col_add(qsf_chunk *c, const qsf_chunk_col *col, size_t rows, qsf_errinfo *err);

/* Fills err with `code` and "chunk of table "t", column "c": <fmt...>". */
int qsf_chunk_col_error(const qsf_chunk *c, const char *col, size_t col_len, int code,
                        qsf_errinfo *err, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

/* The factor from a QSF_UNIT_* to microseconds (1 for nanos, which stay
 * nanos); 0 for an unknown unit. */
int64_t qsf_chunk_unit_mult(int unit);

#endif
