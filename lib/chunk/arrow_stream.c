/* qsf_send_arrow_stream: every record batch of an ArrowArrayStream published
 * with qsf_flush_chunk, one chunk reused for all. Each batch taken from the
 * stream is released once it is published or refused; the stream and its
 * schema stay the caller's (the schema this call asked for is released). */
#include "chunk/arrow_int.h"

#include "err.h"
#include "text.h"

#include <stdio.h>
#include <string.h>

/* The producer's own message for a failed get_schema/get_next. */
static int producer_failed(struct ArrowArrayStream *st, const char *what, int code,
                           uint64_t batches, qsf_errinfo *err) {
    const char *msg = st->get_last_error != NULL ? st->get_last_error(st) : NULL;
    char shown[256];
    qsf_text_escape(shown, sizeof shown, msg != NULL ? msg : "(no message)",
                    msg != NULL ? strnlen(msg, 1024) : 12);
    return qsf_err_set(err, QSF_E_VALUE, 0, code,
                       "arrow stream: %s failed after %llu batches (errno %d): %s", what,
                       (unsigned long long) batches, code, shown);
}

/* One batch: added to the cleared chunk, published, released. */
static int send_batch(qsf_sender *s, qsf_chunk *c, const struct ArrowSchema *schema,
                      struct ArrowArray *batch, const char *ts_col, uint64_t *rows,
                      qsf_errinfo *err) {
    int rc = QSF_OK;
    if (batch->length != 0) {
        qsf_chunk_clear(c);
        rc = qsf_chunk_arrow_batch(c, schema, batch, ts_col, err);
        if (rc == QSF_OK)
            rc = qsf_flush_chunk(s, c, NULL, err);
        if (rc == QSF_OK)
            *rows += qsf_chunk_rows(c);
        qsf_chunk_clear(c);
    }
    batch->release(batch);
    return rc;
}

static int send_all(qsf_sender *s, qsf_chunk *c, struct ArrowArrayStream *st,
                    const struct ArrowSchema *schema, const char *ts_col, uint64_t *rows,
                    qsf_errinfo *err) {
    for (uint64_t n = 0;; n++) {
        struct ArrowArray batch;
        memset(&batch, 0, sizeof batch);
        int e = st->get_next(st, &batch);
        if (e != 0)
            return producer_failed(st, "get_next", e, n, err);
        if (batch.release == NULL)
            return QSF_OK; /* the end of the stream */
        int rc = send_batch(s, c, schema, &batch, ts_col, rows, err);
        if (rc != QSF_OK) {
            char pre[64];
            snprintf(pre, sizeof pre, "arrow stream, batch %llu", (unsigned long long) n);
            qsf_err_prefix(err, pre);
            return rc;
        }
    }
}

QSF_API int qsf_send_arrow_stream(qsf_sender *s, const char *table, size_t table_len,
                                  struct ArrowArrayStream *stream, const char *ts_col,
                                  uint64_t *rows_out, qsf_errinfo *err) {
    uint64_t rows = 0;
    if (rows_out != NULL)
        *rows_out = 0;
    if (s == NULL || stream == NULL || stream->release == NULL || stream->get_schema == NULL ||
        stream->get_next == NULL)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "qsf_send_arrow_stream: NULL sender or stream, or a released stream");
    qsf_chunk *c;
    int rc = qsf_chunk_new(table, table_len, &c, err);
    if (rc != QSF_OK)
        return rc;
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    int e = stream->get_schema(stream, &schema);
    if (e != 0)
        rc = producer_failed(stream, "get_schema", e, 0, err);
    else
        rc = send_all(s, c, stream, &schema, ts_col, &rows, err);
    if (e == 0 && schema.release != NULL)
        schema.release(&schema);
    qsf_chunk_free(c);
    if (rows_out != NULL)
        *rows_out = rows;
    return rc;
}
