/* qsf_flush_chunk (include/qsf.h): a chunk published with qsf_flush's
 * contract. The row API's buffered rows go first, in the same ring flush:
 *
 *   begin   [rows: D D D] [chunk: D D C]   commit     D deferred, C committing
 *           '--- written, unpublished ---'-> published all at once
 *
 * so the rows and the chunk are published together or not at all. With
 * transaction=on both are staged in the open transaction instead (txn.c),
 * deferred only, and the transaction is committed as qsf_flush commits it. */
#include "chunk/chunk_enc.h"
#include "err.h"
#include "qwp/names.h"
#include "sender/internal.h"

#include <stdio.h>

/* The chunk encoded into the ring's open flush (a qsf_sender_encode_fn). */
static int encode_chunk(qsf_sender *s, void *user, bool stage, qsf_qwp_encode_result *res,
                        qsf_errinfo *err) {
    qsf_qwp_enc_opts o = s->eo;
    o.defer_last = stage;
    qsf_chunk_out out = {.user = s};
    qsf_sender_frame_outputs(s, &out.on_new, &out.emit, &out.placer);
    return qsf_chunk_encode(user, s->symtab, &o, &out, res, err);
}

/* One attempt: the buffered rows, the chunk, one commit. On error nothing is
 * published and every row of the row API is buffered as before. */
static int publish_once(qsf_sender *s, qsf_chunk *c, bool fresh, uint64_t *rows, qsf_errinfo *err) {
    uint32_t published = qsf_symtab_published(s->symtab);
    qsf_qwp_encode_result br = {0}, cr = {0};
    int rc = fresh ? qsf_ring_txn_begin_fresh(s->ring, err) : qsf_ring_txn_begin(s->ring, err);
    if (rc != QSF_OK)
        return rc;
    if (qsf_qwp_batch_rows(s->batch) > 0)
        rc = qsf_sender_encode(s, true, &br, err);
    if (rc == QSF_OK)
        rc = encode_chunk(s, c, false, &cr, err);
    if (rc == QSF_OK)
        rc = qsf_ring_txn_commit(s->ring, err); /* aborts itself if its barrier fails */
    else {
        qsf_errinfo e;
        qsf_ring_txn_abort(s->ring, &e);
    }
    if (rc != QSF_OK) {
        qsf_qwp_batch_rewind(s->batch, published);
        return rc;
    }
    *rows = br.rows_consumed + cr.rows_consumed;
    return QSF_OK;
}

/* A flush too large for the ring only because it started behind older
 * frames in their segment is tried once more from a fresh segment, as
 * qsf_flush does. */
static int publish(qsf_sender *s, qsf_chunk *c, qsf_errinfo *err) {
    qsf_sender_set_frame_limits(s);
    uint64_t rows = 0;
    int rc = publish_once(s, c, false, &rows, err);
    if (rc == QSF_E_TOO_LARGE && qsf_ring_txn_started_behind(s->ring))
        rc = publish_once(s, c, true, &rows, err);
    if (rc != QSF_OK)
        return qsf_sender_failed(s, rc, err);
    qsf_sender_published(s, rows);
    return QSF_OK;
}

/* transaction=on. A chunk with a row no frame can hold is refused before
 * anything is staged: the open transaction stays as it was. */
static int publish_txn(qsf_sender *s, qsf_chunk *c, qsf_errinfo *err) {
    qsf_sender_set_frame_limits(s);
    int rc = qsf_chunk_rows_fit(c, s->eo.max_frame, err);
    if (rc == QSF_OK)
        rc = qsf_sender_txn_stage(s, err);
    if (rc == QSF_OK)
        rc = qsf_sender_txn_stage_with(s, encode_chunk, c, err);
    if (rc == QSF_OK)
        rc = qsf_sender_txn_commit(s, err);
    return rc;
}

/* A chunk is built without a sender, so its names were checked against
 * QuestDB's 127 bytes only; the sender's max_name_len (the row API's limit,
 * docs/CONFIGURATION.md) is checked here, before anything is written. */
static int check_name_limits(const qsf_sender *s, const qsf_chunk *c, qsf_errinfo *err) {
    int max = s->conf->max_name_len ? (int) s->conf->max_name_len : QSF_QWP_MAX_NAME_LEN;
    if (max >= QSF_QWP_MAX_NAME_LEN)
        return QSF_OK;
    int rc = qsf_qwp_check_name(c->table, c->table_len, false, max, "chunk: ", err);
    char what[QSF_QWP_MAX_NAME_LEN + 48];
    snprintf(what, sizeof what, "chunk of table \"%.*s\": ", c->table_len, c->table);
    for (uint32_t i = 0; rc == QSF_OK && i < c->ncols; i++)
        rc = qsf_qwp_check_name(c->cols[i].name, c->cols[i].name_len, true, max, what, err);
    return rc;
}

QSF_API int qsf_flush_chunk(qsf_sender *s, qsf_chunk *c, int64_t *fsn_out, qsf_errinfo *err) {
    int rc = qsf_sender_enter(s, err);
    if (rc != QSF_OK)
        return rc;
    if (!c)
        rc = qsf_err_set(err, QSF_E_INVAL, 0, 0, "chunk is NULL");
    else if (qsf_qwp_batch_row_open(s->batch))
        rc = qsf_err_set(err, QSF_E_STATE, 0, 0,
                         "a row of the row API is open: end or cancel it before flushing the "
                         "chunk of table \"%.*s\"",
                         c->table_len, c->table);
    else
        rc = check_name_limits(s, c, err);
    if (rc == QSF_OK && c->rows == 0)
        rc = qsf_sender_flush_locked(s, NULL, err);
    else if (rc == QSF_OK)
        rc = s->conf->transaction ? publish_txn(s, c, err) : publish(s, c, err);
    if (fsn_out)
        *fsn_out = qsf_ring_published_fsn(s->ring);
    qsf_sender_leave(s);
    return rc;
}
