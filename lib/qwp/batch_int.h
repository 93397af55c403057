/* Internal layout of qsf_qwp_batch, shared by batch.c (row calls) and encoder.c.
 *
 * Per table, rows are numbered from 0 since the last reset; rows [0, first_row)
 * were already consumed by an encode that stopped part-way. Per column:
 *
 *   rows     0 .. nrows-1 covered (a value or a NULL); rows >= nrows are NULL
 *   bitmap   bit r = 1: row r is NULL (exists only once a NULL occurred; bits at
 *            and beyond nrows are undefined)
 *   data     the nvals non-null values, packed:
 *              fixed-width types   wire bytes (LE), width each
 *              BOOLEAN             one byte 0/1 each (bit-packed when encoded)
 *              SYMBOL              u32 id each (host order)
 *              GEOHASH             u64 bits each (host order)
 *              VARCHAR / BINARY    the value bytes back to back
 *              DOUBLE/LONG_ARRAY   n_dims, dims (i32 LE), values (LE), per value
 *   offs     variable-width types: u32 end offset of each value in data
 *
 * row_off[r] is an upper bound of the wire bytes of rows [0, r) excluding new
 * symbol strings; sym_off[r] the bytes of symbol strings first interned by rows
 * [0, r). The encoder uses both to size frames without a trial encode. */
#ifndef QSF_QWP_BATCH_INT_H
#define QSF_QWP_BATCH_INT_H

#include "qwp/batch.h"
#include "qwp/strmap.h"
#include "qwp/types.h"

#include <stdlib.h>
#include <string.h>

typedef struct qsf_buf {
    uint8_t *p;
    size_t len, cap;
} qsf_buf;

/* Makes room for `extra` more bytes after len; 0 or -1 (out of memory). */
static inline int qsf_buf_reserve(qsf_buf *b, size_t extra) {
    if (b->cap - b->len >= extra)
        return 0;
    size_t n = b->cap ? b->cap : 64;
    while (n - b->len < extra) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    uint8_t *p = realloc(b->p, n);
    if (!p)
        return -1;
    b->p = p;
    b->cap = n;
    return 0;
}

static inline void qsf_buf_free(qsf_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

typedef struct bcol {
    char name[QSF_QWP_MAX_NAME_LEN + 1];
    uint8_t name_len;
    uint8_t type; /* 0: inactive in this batch */
    uint8_t scale, geo_bits;
    bool has_bitmap;
    uint32_t nrows, nvals, nulls;
    qsf_buf data, offs, bitmap;
    /* state before the write of the open row (restored by a cancel) */
    uint32_t s_nrows, s_nvals, s_nulls;
    size_t s_data_len;
    uint8_t s_type, s_scale, s_geo;
    uint32_t enc_v0, enc_v1; /* encoder scratch: values of the block being written */
} bcol;

enum { TS_NONE = 0, TS_MICROS = 1, TS_NANOS = 2, TS_SERVER = 3 };

typedef struct btable {
    char name[QSF_QWP_MAX_NAME_LEN + 1];
    uint8_t name_len;
    uint8_t ts_kind;   /* TS_*, fixed by the first row of the batch */
    bool in_batch;     /* listed in batch->order */
    qsf_strmap colmap; /* column name -> index in cols */
    bcol *cols;
    uint32_t ncols, cols_cap, nactive;
    uint32_t cursor;           /* index of the column expected next in a row */
    uint32_t nrows;            /* complete rows since reset */
    uint32_t first_row;        /* rows already consumed by an encode */
    qsf_buf ts;                /* i64 designated timestamp per row (micros / nanos) */
    qsf_buf row_off;           /* u64 x (nrows + 1) */
    qsf_buf sym_off;           /* u64 x (nrows + 1) */
    uint64_t overhead;         /* upper bound of the block bytes besides row values */
    uint64_t max_row;          /* largest complete row: values + new symbol strings */
    uint64_t row_cur, row_sym; /* the open row: value bytes, new symbol bytes */
    uint32_t row_ncols;        /* columns set in the open row */
    /* state at the start of the open row */
    uint32_t s_ncols, s_nactive;
    uint64_t s_overhead, s_max_row;
} btable;

struct qsf_qwp_batch {
    qsf_symtab *symtab;
    qsf_qwp_batch_opts opts;
    qsf_strmap tmap; /* table name -> index in tables */
    btable *tables;
    uint32_t ntables, tables_cap;
    uint32_t *order; /* tables with rows in this batch, by first appearance */
    uint32_t norder, order_cap;
    btable *cur;       /* table of the open row, NULL when none */
    btable *last;      /* table of the row the last at_* completed, while it can be
                          taken back (qsf_qwp_batch_drop_last_row), else NULL */
    uint32_t last_tbl; /* index of the table used last (lookup cache) */
    size_t rows;       /* complete rows not consumed */
    uint64_t est;      /* encoded-size estimate, open row included */
    /* state at the start of the open row */
    uint64_t s_est;
    uint32_t s_ntables, s_symsize;
};

static inline uint64_t qsf_bt_row_off(const btable *t, uint32_t r) {
    uint64_t v;
    memcpy(&v, t->row_off.p + (size_t) r * 8, 8);
    return v;
}
static inline uint64_t qsf_bt_sym_off(const btable *t, uint32_t r) {
    uint64_t v;
    memcpy(&v, t->sym_off.p + (size_t) r * 8, 8);
    return v;
}

/* Makes room for one more element of `size` bytes in *arr (count in use, *cap
 * allocated): doubles from 8, zero-fills the new part. 0 or -1 (out of memory). */
static inline int qsf_grow_zeroed(void **arr, uint32_t count, uint32_t *cap, size_t size) {
    if (count < *cap)
        return 0;
    uint32_t n = *cap ? *cap * 2 : 8;
    uint8_t *p = realloc(*arr, (size_t) n * size);
    if (!p)
        return -1;
    memset(p + (size_t) *cap * size, 0, (size_t) (n - *cap) * size);
    *arr = p;
    *cap = n;
    return 0;
}

/* Saves the state a cancel of the open row restores (before the row's write). */
static inline void qsf_bcol_snapshot(bcol *c) {
    c->s_nrows = c->nrows;
    c->s_nvals = c->nvals;
    c->s_nulls = c->nulls;
    c->s_data_len = c->data.len;
    c->s_type = c->type;
    c->s_scale = c->scale;
    c->s_geo = c->geo_bits;
}

/* Non-null values among rows [0, r) of c. */
uint32_t qsf_bcol_rank(const bcol *c, uint32_t r);

/* Per-column bytes outside the values: definition, null flag, type extras. */
uint64_t qsf_bcol_overhead(const bcol *c);

/* Exact-overhead bound of a block carrying only row r of t: the table head, the
 * designated timestamp column and only the columns that have a value in row r
 * (r may be the open row, t->nrows). Value bytes are not included. */
uint64_t qsf_bt_row_overhead(const btable *t, uint32_t r);

#endif
