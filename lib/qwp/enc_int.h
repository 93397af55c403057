/* Internals shared by encoder.c, enc_block.c and catchup.c. */
#ifndef QSF_QWP_ENC_INT_H
#define QSF_QWP_ENC_INT_H

#include "qwp/batch_int.h"
#include "qwp/encoder.h"

/* Rows [r0, r1) of one table, written as one table block. */
typedef struct enc_seg {
    btable *t;
    uint32_t r0, r1;
} enc_seg;

typedef struct qsf_enc_cbs {
    qsf_qwp_on_new_symbols_fn on_new;
    qsf_qwp_emit_fn emit;
    const qsf_qwp_placer *placer; /* NULL: every frame in the encoder's buffer */
    void *user;
} qsf_enc_cbs;

struct qsf_qwp_encoder {
    qsf_buf frame; /* the frame being built, reused */
    enc_seg *segs; /* plan of the frame being built */
    uint32_t nsegs, segs_cap;
    uint32_t delta_start, delta_count;
    const char **strs; /* write-ahead scratch */
    size_t *lens;
    uint32_t strs_cap;
};

/* Writes the 12-byte message header at p. */
void qsf_enc_header(uint8_t *p, uint8_t flags, uint16_t tables, uint32_t payload);

/* Writes the table block of s at p (the caller reserved its upper bound) and
 * returns the end. */
uint8_t *qsf_enc_block(uint8_t *p, const enc_seg *s, bool gorilla);

/* Writes a table or column name (<= 127 bytes: a one-byte varint length) at
 * p and returns the end. */
uint8_t *qsf_enc_name(uint8_t *p, const char *s, uint8_t len);

/* The options an encode runs with: the defaults for NULL, max_frame and
 * row_frame_max clamped to what a frame may be. */
void qsf_enc_norm_opts(const qsf_qwp_enc_opts *in, qsf_qwp_enc_opts *o);

/* Writes the values of a timestamp column (after its null section): with gorilla,
 * the encoding byte then Gorilla (when n >= 3 and every delta-of-delta fits i32)
 * or raw values; without, raw values. v holds n i64 LE values. */
uint8_t *qsf_enc_timestamps(uint8_t *p, const uint8_t *v, uint32_t n, bool gorilla);

#endif
