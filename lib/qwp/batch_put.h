/* The two-step column write every typed row call goes through (batch.c):
 *
 *   qsf_batch_col_begin   finds or creates the column, checks the row and type
 *                         rules and max_buf_size, reserves all memory; changes
 *                         nothing visible on failure
 *   (caller)              writes v->data_len bytes at c->data.p + c->data.len
 *   qsf_batch_col_commit  records the value (cannot fail) */
#ifndef QSF_QWP_BATCH_PUT_H
#define QSF_QWP_BATCH_PUT_H

#include "qwp/batch_int.h"

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

int qsf_batch_col_begin(qsf_qwp_batch *b, const char *name, size_t len, const qsf_colval *v,
                        bcol **out, qsf_errinfo *err);
/* wire: the value's wire bytes; sym_bytes: bytes of a symbol string it interned. */
void qsf_batch_col_commit(qsf_qwp_batch *b, bcol *c, const qsf_colval *v, uint64_t wire,
                          uint64_t sym_bytes);

#endif
