/* The row buffer behind the public row API (include/qsf.h "Rows").
 *
 * Each qsf_qwp_batch_* row call takes the same arguments as the public call of the
 * same name with the batch in place of the sender, so lib/sender.c wraps each one
 * in a single line (after its own busy/fatal checks and auto-flush).
 *
 * Storage is columnar per table: for every column a packed array of the non-null
 * values already in wire form, an optional null bitmap (1 = NULL, created on the
 * first NULL), and for variable-width types an offsets array. Tables and columns
 * may appear in any order and subset per row; a column missing from a row is
 * NULL (BOOLEAN: false). Names are looked up with a per-table "next expected
 * column" cursor first, so rows with a stable shape never hash.
 *
 * Row protocol: qsf_qwp_batch_table, then columns (each at most once), then one
 * of qsf_qwp_batch_at_micros / _at_nanos / _at_now. A failed column call leaves
 * no trace and the row stays open (the caller may retry or cancel). Cancel drops
 * the open row completely, including columns, tables and symbols it introduced.
 * Only complete rows are ever encoded.
 *
 * Rules enforced (QSF_E_VALUE unless noted, messages name table, column, types):
 *  - names: 1..max_name_len UTF-8 bytes, valid UTF-8, none of the characters
 *    QuestDB refuses in names (table: ? , ' " \ / : ) ( + * % ~ and control
 *    characters, a leading/trailing '.' or ".."; columns additionally . and -);
 *  - duplicate column within a row; a column whose type changes within a batch;
 *    decimal scale out of range (18/38/76) or different from the column's scale in
 *    this batch; geohash precision outside 1..60 or changed; array rank outside
 *    1..32, a negative dimension, element count over INT32_MAX; invalid UTF-8 in
 *    VARCHAR or SYMBOL; IPv4 0.0.0.0; the designated
 *    timestamp kind (micros / nanos / server time) changing within a table in one
 *    batch;
 *  - QSF_E_STATE: a column or at_* without an open row, table while a row is open,
 *    at_now on a row without columns (a row may be only a designated timestamp);
 *  - QSF_E_TOO_LARGE: buffered bytes would exceed max_buf_size (the call leaves the
 *    buffer unchanged), or at_* on a row that cannot fit in one frame of
 *    max_row_frame bytes (the row is discarded);
 *  - QSF_E_DICT_FULL: a new distinct symbol beyond the symbol table's cap.
 *  - FLOAT/DOUBLE accept NaN and infinities.
 *
 * Threads: one thread at a time. Steady state (after a flush and reset) does not
 * allocate: buffers, tables and columns are kept for reuse. */
#ifndef QSF_QWP_BATCH_H
#define QSF_QWP_BATCH_H

#include "qsf.h"
#include "qwp/symtab.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qsf_qwp_batch qsf_qwp_batch;

typedef struct qsf_qwp_batch_opts {
    size_t init_buf_size; /* initial capacity hint for value buffers; 0 = 64 KiB */
    size_t max_buf_size;  /* cap on the encoded-size estimate of buffered rows;
                             0 = 100 MiB (connect-string max_buf_size) */
    int max_name_len;     /* 1..127; 0 = 127 (connect-string max_name_len) */
    size_t max_row_frame; /* a row whose one-row frame would exceed this is refused at
                             at_* (QSF_E_TOO_LARGE); 0 = no check. The sender passes its
                             current max_frame (see encoder.h). */
} qsf_qwp_batch_opts;

/* Creates a batch that interns symbols in `symtab` (borrowed: it must outlive the
 * batch; the sender owns it). opts may be NULL for defaults. Errors: QSF_E_NOMEM,
 * QSF_E_INVAL (max_name_len out of 1..127). */
int qsf_qwp_batch_new(qsf_symtab *symtab, const qsf_qwp_batch_opts *opts, qsf_qwp_batch **out,
                      qsf_errinfo *err);
void qsf_qwp_batch_free(qsf_qwp_batch *b);

/* Updates max_row_frame (e.g. after a server advertised a new cap). */
void qsf_qwp_batch_set_max_row_frame(qsf_qwp_batch *b, size_t max_row_frame);

/* ---- row calls: same contract as the public qsf_* of the same name ---- */
int qsf_qwp_batch_table(qsf_qwp_batch *b, const char *name, size_t len, qsf_errinfo *err);
int qsf_qwp_batch_symbol(qsf_qwp_batch *b, const char *col, size_t col_len, const char *val,
                         size_t val_len, qsf_errinfo *err);
int qsf_qwp_batch_col_bool(qsf_qwp_batch *b, const char *col, size_t col_len, bool v,
                           qsf_errinfo *err);
int qsf_qwp_batch_col_i8(qsf_qwp_batch *b, const char *col, size_t col_len, int8_t v,
                         qsf_errinfo *err);
int qsf_qwp_batch_col_i16(qsf_qwp_batch *b, const char *col, size_t col_len, int16_t v,
                          qsf_errinfo *err);
int qsf_qwp_batch_col_i32(qsf_qwp_batch *b, const char *col, size_t col_len, int32_t v,
                          qsf_errinfo *err);
int qsf_qwp_batch_col_i64(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t v,
                          qsf_errinfo *err);
int qsf_qwp_batch_col_f32(qsf_qwp_batch *b, const char *col, size_t col_len, float v,
                          qsf_errinfo *err);
int qsf_qwp_batch_col_f64(qsf_qwp_batch *b, const char *col, size_t col_len, double v,
                          qsf_errinfo *err);
int qsf_qwp_batch_col_ts_micros(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t v,
                                qsf_errinfo *err);
int qsf_qwp_batch_col_ts_nanos(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t v,
                               qsf_errinfo *err);
int qsf_qwp_batch_col_date(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t millis,
                           qsf_errinfo *err);
int qsf_qwp_batch_col_uuid(qsf_qwp_batch *b, const char *col, size_t col_len, uint64_t lo,
                           uint64_t hi, qsf_errinfo *err);
int qsf_qwp_batch_col_long256(qsf_qwp_batch *b, const char *col, size_t col_len,
                              const uint64_t words[4], qsf_errinfo *err);
int qsf_qwp_batch_col_geohash(qsf_qwp_batch *b, const char *col, size_t col_len, uint64_t bits,
                              int precision_bits, qsf_errinfo *err);
int qsf_qwp_batch_col_varchar(qsf_qwp_batch *b, const char *col, size_t col_len, const char *v,
                              size_t v_len, qsf_errinfo *err);
int qsf_qwp_batch_col_binary(qsf_qwp_batch *b, const char *col, size_t col_len, const void *v,
                             size_t v_len, qsf_errinfo *err);
int qsf_qwp_batch_col_char(qsf_qwp_batch *b, const char *col, size_t col_len, uint16_t v,
                           qsf_errinfo *err);
int qsf_qwp_batch_col_ipv4(qsf_qwp_batch *b, const char *col, size_t col_len, uint32_t v,
                           qsf_errinfo *err);
int qsf_qwp_batch_col_decimal64(qsf_qwp_batch *b, const char *col, size_t col_len, int64_t unscaled,
                                int scale, qsf_errinfo *err);
int qsf_qwp_batch_col_decimal128(qsf_qwp_batch *b, const char *col, size_t col_len,
                                 const uint8_t unscaled_le[16], int scale, qsf_errinfo *err);
int qsf_qwp_batch_col_decimal256(qsf_qwp_batch *b, const char *col, size_t col_len,
                                 const uint8_t unscaled_le[32], int scale, qsf_errinfo *err);
int qsf_qwp_batch_col_f64_array(qsf_qwp_batch *b, const char *col, size_t col_len, int rank,
                                const int32_t *shape, const double *values, qsf_errinfo *err);
int qsf_qwp_batch_col_i64_array(qsf_qwp_batch *b, const char *col, size_t col_len, int rank,
                                const int32_t *shape, const int64_t *values, qsf_errinfo *err);
int qsf_qwp_batch_at_micros(qsf_qwp_batch *b, int64_t ts, qsf_errinfo *err);
int qsf_qwp_batch_at_nanos(qsf_qwp_batch *b, int64_t ts, qsf_errinfo *err);
int qsf_qwp_batch_at_now(qsf_qwp_batch *b, qsf_errinfo *err);
void qsf_qwp_batch_row_cancel(qsf_qwp_batch *b);

/* Takes back the row the last at_* call completed, as a cancel of the open row
 * would (its columns, tables and symbols go; symbols already persisted or
 * published stay in the symbol table). Possible until the next table call and
 * as long as no encode consumed the row for good (a reset); false, changing
 * nothing, otherwise. The sender uses it when the auto-flush that the row
 * triggered fails: the call reports the error and the row is not buffered. */
bool qsf_qwp_batch_drop_last_row(qsf_qwp_batch *b);

/* Complete rows buffered and not yet consumed by an encode. */
size_t qsf_qwp_batch_rows(const qsf_qwp_batch *b);

/* True while a row is open (between table and at_* / cancel). */
bool qsf_qwp_batch_row_open(const qsf_qwp_batch *b);

/* Upper bound of the bytes one message carrying every buffered complete row would
 * take (header, delta section, blocks). For auto_flush_bytes and max_buf_size. */
size_t qsf_qwp_batch_est_bytes(const qsf_qwp_batch *b);

/* Gives every complete row back to the batch after an encode that consumed
 * some or all of them but whose frames were not published (the flush was
 * aborted: all or nothing), and sets the symbol table's published watermark
 * back to `published` (its value before that encode). */
void qsf_qwp_batch_rewind(qsf_qwp_batch *b, uint32_t published);

/* Drops every complete row (and an open row); keeps allocations, tables and
 * columns for reuse. Symbols stay in the symbol table. The encoder calls this after
 * a fully successful encode. */
void qsf_qwp_batch_reset(qsf_qwp_batch *b);

#endif
