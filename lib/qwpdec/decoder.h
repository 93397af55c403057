/* Server-side parser of one QWP message (docs/PROTOCOL.md §3-§5, §7;
 * docs/QWP-SINK.md §2.3):
 * used by the test server (tools/qwp-sink), the tests, the fuzz targets and the
 * benchmarks. It is a static library of its own (lib/qwpdec/meson.build), never
 * part of libqsf: a sender only encodes.
 *
 * qsf_qwp_decode validates everything a server validates and answers with the
 * status the server would send: OK, PARSE_ERROR (0x05) or DICTIONARY_GAP (0x0D),
 * plus a message naming the table, column, row or byte offset at fault. It never
 * reads outside [buf, buf + len) and its memory is bounded by a constant times
 * the input size (plus the dictionary it grows).
 *
 * The decoded message points INTO the input buffer (names, fixed-width values,
 * VARCHAR/BINARY/array bytes) and into the dictionary (symbol strings): keep both
 * alive and unmodified while reading the result. Reusing a qsf_qwp_msg for the next
 * decode invalidates the previous result (its arena is reused, no new allocations
 * once warmed up).
 *
 * Threads: a msg and a dict are used by one thread at a time. */
#ifndef QSF_QWPDEC_DECODER_H
#define QSF_QWPDEC_DECODER_H

#include "qwp/types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- per-connection dictionary (docs/PROTOCOL.md §4.2) ---- */

typedef struct qsf_qwp_dict qsf_qwp_dict;

/* Creates an empty dictionary (NULL when out of memory). */
qsf_qwp_dict *qsf_qwp_dict_new(void);
void qsf_qwp_dict_free(qsf_qwp_dict *d);
uint32_t qsf_qwp_dict_size(const qsf_qwp_dict *d);
/* Entry id (< size): bytes and length; false when id is out of range. Pointers stay
 * valid until reset/free (redefinitions add new storage, they never overwrite). */
bool qsf_qwp_dict_get(const qsf_qwp_dict *d, uint32_t id, const char **s, size_t *len);

/* ---- decoded message ---- */

typedef struct qsf_qwp_dcol {
    const char *name; /* not NUL-terminated; "" (len 0) for the designated timestamp */
    uint32_t name_len;
    uint8_t type;               /* enum qsf_qwp_type */
    uint8_t bitmap_mode;        /* 1: null_bitmap present (null_flag != 0); 0: sentinel mode */
    uint8_t gorilla;            /* 1 when the timestamp column used encoding 0x01 */
    uint8_t scale;              /* DECIMAL*: the column's scale */
    uint8_t geohash_bits;       /* GEOHASH: precision 1..60 */
    uint32_t row_count;         /* = the table's row_count */
    uint32_t value_count;       /* non-null values (row_count - popcount(bitmap)) */
    const uint8_t *null_bitmap; /* bitmap mode: ceil(row_count/8) bytes, 1 = NULL */
    /* Internal value views; use the accessors below. */
    const uint8_t *fixed;       /* fixed-width values back to back, LE (also BOOLEAN bits and
                                   Gorilla timestamps, decoded) */
    const uint32_t *offs;       /* VARCHAR/BINARY/arrays: value_count + 1 offsets into var */
    const uint8_t *var;         /* VARCHAR/BINARY/array bytes */
    const uint32_t *sym_ids;    /* SYMBOL: dictionary id per value (global or local) */
    const char *const *sym_str; /* SYMBOL: resolved string per value */
    const uint32_t *sym_len;
    const uint32_t *rank; /* bitmap mode: non-null values before each bitmap byte */
} qsf_qwp_dcol;

typedef struct qsf_qwp_dtable {
    const char *name; /* not NUL-terminated */
    uint32_t name_len;
    uint32_t row_count;
    uint32_t col_count;
    qsf_qwp_dcol *cols;
} qsf_qwp_dtable;

typedef struct qsf_qwp_msg qsf_qwp_msg;

/* Creates / frees a reusable result (NULL when out of memory). */
qsf_qwp_msg *qsf_qwp_msg_new(void);
void qsf_qwp_msg_free(qsf_qwp_msg *m);

/* Header fields and tables of the last successful decode. */
uint8_t qsf_qwp_msg_flags(const qsf_qwp_msg *m);
uint32_t qsf_qwp_msg_table_count(const qsf_qwp_msg *m);
const qsf_qwp_dtable *qsf_qwp_msg_table(const qsf_qwp_msg *m, uint32_t i);
/* The delta section of the last decode: first id and count (0/0 when absent). */
void qsf_qwp_msg_delta(const qsf_qwp_msg *m, uint32_t *start, uint32_t *count);

#define QSF_QWP_DECODE_MSG_MAX 1024

typedef struct qsf_qwp_decode_result {
    int status;    /* QSF_QWP_STATUS_OK / _PARSE_ERROR / _DICTIONARY_GAP */
    size_t offset; /* byte offset in the message where the problem was found */
    char message[QSF_QWP_DECODE_MSG_MAX]; /* NUL-terminated, "" on OK */
} qsf_qwp_decode_result;

typedef struct qsf_qwp_decode_opts {
    uint8_t version;      /* negotiated version; 0 = 1 */
    uint32_t max_rows;    /* rows per table block; 0 = 1,000,000 */
    uint32_t max_symbols; /* dictionary cap; 0 = 2,000,000 */
} qsf_qwp_decode_opts;

/* Decodes buf[0..len) (one WebSocket binary frame) into m, applying its delta
 * section to dict (may be NULL only for messages without FLAG_DELTA_SYMBOL_DICT;
 * one with it and no dict is a PARSE_ERROR). opts may be NULL. Returns res->status
 * (also filled in *res). On any failure the dictionary is rolled back to exactly its
 * state before the call and m holds no tables. Returns -1 (QSF_E_INVAL-like, with
 * res->status = PARSE_ERROR and a message) only when memory ran out. */
int qsf_qwp_decode(qsf_qwp_msg *m, qsf_qwp_dict *dict, const uint8_t *buf, size_t len,
                   const qsf_qwp_decode_opts *opts, qsf_qwp_decode_result *res);

/* ---- value accessors (row < row_count) ---- */

/* True when the row is NULL (bitmap mode only; sentinel values are reported as
 * values, as the wire carries them). */
bool qsf_qwp_dcol_is_null(const qsf_qwp_dcol *c, uint32_t row);
/* Index of the row's value among the non-null values; -1 when NULL. */
int64_t qsf_qwp_dcol_value_index(const qsf_qwp_dcol *c, uint32_t row);

/* Value vi (< value_count) as:
 * i64: BYTE/SHORT/INT/LONG/DATE/TIMESTAMP/TIMESTAMP_NANOS/DECIMAL64 (sign-extended), CHAR, IPv4
 *      (u32 host order), GEOHASH bits, BOOLEAN (0/1), SYMBOL (the id);
 * f64: FLOAT/DOUBLE;
 * bytes: VARCHAR/BINARY (the value), SYMBOL (the string), UUID/LONG256/DECIMAL*
 *      (the raw little-endian bytes), arrays (n_dims, dims, values as on the wire).
 * i64 / f64 on a type they do not cover return 0 (never read out of bounds). */
int64_t qsf_qwp_dcol_i64(const qsf_qwp_dcol *c, uint32_t vi);
double qsf_qwp_dcol_f64(const qsf_qwp_dcol *c, uint32_t vi);
void qsf_qwp_dcol_bytes(const qsf_qwp_dcol *c, uint32_t vi, const uint8_t **p, size_t *len);

#endif
