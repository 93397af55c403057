/* A chunk -> QWP frames (docs/PROTOCOL.md §3-§5), straight from the column
 * buffers into the room the ring lends (or the chunk's own frame buffer when
 * it lends none, see qsf_ring_txn_place): no row buffer.
 *
 * One encode:
 *  1. interns every symbol of the chunk, row by row and column by column as
 *     the row API would, into the sender's symbol table (the delta
 *     dictionary); a dictionary-coded column interns each code once;
 *  2. plans the frames: rows [r0, r1) per frame, as many as fit max_frame
 *     (bounded sizes, no trial encode) and at most 1,000,000; a row that fits
 *     no frame fails the encode with QSF_E_TOO_LARGE before any frame;
 *  3. per frame: writes ahead the new symbols it carries (on_new_symbols),
 *     then header, delta section and one table block, the same bytes the
 *     row path writes for the same rows: a column with no value in the
 *     frame's rows is left out, NULLs as a bitmap, BOOLEAN NULL as false,
 *     timestamps Gorilla-encoded when the options ask for it and it fits.
 * Every frame but the last carries FLAG_DEFER_COMMIT (the last too with
 * defer_last). On error the symbol table's published watermark is back where
 * it was and the ids the encode added are dropped (down to what was written
 * ahead); frames already handed over are the caller's to abort. */
#ifndef QSF_CHUNK_ENC_H
#define QSF_CHUNK_ENC_H

#include "chunk/chunk_int.h"
#include "qwp/encoder.h"
#include "qwp/symtab.h"

/* Where frames go: as qsf_qwp_encode_placed's callbacks. */
typedef struct qsf_chunk_out {
    qsf_qwp_on_new_symbols_fn on_new; /* NULL: no write-ahead */
    qsf_qwp_emit_fn emit;
    const qsf_qwp_placer *placer; /* NULL: every frame in the chunk's buffer */
    void *user;
} qsf_chunk_out;

/* Encodes every row of c. opts (NULL: the defaults): max_frame, gorilla, self_sufficient,
 * defer_last (the others are unused). res->frames / rows_consumed / bytes say
 * what was handed over. Errors: QSF_E_TOO_LARGE (a row fits no frame: names
 * the row and the sizes), QSF_E_DICT_FULL (names the column and row),
 * QSF_E_NOMEM, and whatever on_new / emit return. */
int qsf_chunk_encode(qsf_chunk *c, qsf_symtab *st, const qsf_qwp_enc_opts *opts,
                     const qsf_chunk_out *out, qsf_qwp_encode_result *res, qsf_errinfo *err);

/* Whether every row of c fits a frame of max_frame bytes alone, with its own
 * symbols in the delta section (an upper bound): QSF_OK, or QSF_E_TOO_LARGE
 * naming the first row that does not. What an encode would find, without
 * interning anything. */
int qsf_chunk_rows_fit(const qsf_chunk *c, size_t max_frame, qsf_errinfo *err);

/* Frees the encode scratch a chunk keeps for reuse (qsf_chunk_free). */
void qsf_chunk_enc_free(qsf_chunk *c);

#endif
