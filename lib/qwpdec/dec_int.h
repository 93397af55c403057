/* Internals of the decoder shared by decoder.c (message, tables, dictionary) and
 * dec_cols.c (column data). */
#ifndef QSF_QWPDEC_DEC_INT_H
#define QSF_QWPDEC_DEC_INT_H

#include "qwpdec/decoder.h"

#include <stdarg.h>

/* Bump arena made of chunks; reset keeps the chunks for the next message. */
typedef struct dchunk {
    struct dchunk *next;
    size_t used, cap;
    _Alignas(16) uint8_t mem[];
} dchunk;

typedef struct darena {
    dchunk *head;  /* current chunk; older ones follow */
    dchunk *spare; /* chunks kept from earlier messages */
} darena;

void *qsf_darena_alloc(darena *a, size_t n);
void qsf_darena_reset(darena *a);
void qsf_darena_free(darena *a);

struct qsf_qwp_msg {
    darena arena;
    uint8_t flags;
    uint32_t ntables;
    qsf_qwp_dtable *tables;
    uint32_t delta_start, delta_count;
};

/* Reader over one message with the context used in error messages. */
typedef struct rd {
    const uint8_t *base, *p, *end;
    qsf_qwp_decode_result *res;
    qsf_qwp_msg *m;
    const qsf_qwp_dict *dict;
    uint8_t flags;
    uint32_t max_symbols;
    const qsf_qwp_dtable *t; /* table being read, NULL outside blocks */
    const qsf_qwp_dcol *c;   /* column being read */
} rd;

/* Fills res with status, offset and a message prefixed with the table / column in
 * context; returns status. */
int qsf_rd_fail(rd *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define RD_PARSE(r, ...) qsf_rd_fail((r), QSF_QWP_STATUS_PARSE_ERROR, __VA_ARGS__)

static inline size_t rd_left(const rd *r) {
    return (size_t) (r->end - r->p);
}

/* Reads a varint; PARSE_ERROR naming `what` when truncated or overflowing. */
int qsf_rd_varint(rd *r, const char *what, uint64_t *out);

/* Reads a string (varint length + bytes) with len in [min, max] and valid UTF-8. */
int qsf_rd_string(rd *r, const char *what, uint32_t min, uint32_t max, const char **s,
                  uint32_t *len);

/* Reads the null section and values of column c (type, name, row_count set). */
int qsf_dec_column(rd *r, qsf_qwp_dcol *c);

#endif
