/* qsf_send_arrow_stream: every record batch of an ArrowArrayStream published
 * with qsf_flush_chunk, one chunk reused for all. Each batch taken from the
 * stream is released once it is published or refused; the stream and its
 * schema stay the caller's (the schema this call asked for is released). */
#include "chunk/arrow_int.h"
#include "sender/stream_target.h"

#include "err.h"
#include "text.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

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

/* The name of the schema's field that `col` names (ASCII case-insensitive,
 * as the chunk compares names), or NULL. */
static const char *field_named(const struct ArrowSchema *schema, const char *col) {
    for (int64_t i = 0; schema->children != NULL && i < schema->n_children; i++) {
        const char *f = schema->children[i]->name;
        if (f != NULL && strcasecmp(f, col) == 0)
            return f;
    }
    return NULL;
}

/* Every type asked for names a field of the stream's schema (a typo would
 * otherwise leave its column with the default mapping, silently), and is
 * set on the chunk, kept across its clears, before any batch is taken. */
static int set_types(qsf_chunk *c, const struct ArrowSchema *schema,
                     const qsf_arrow_col_type *types, size_t n, qsf_errinfo *err) {
    if (n > 0 && types == NULL)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "arrow stream: types is NULL with n_types %zu",
                           n);
    for (size_t i = 0; i < n; i++) {
        const char *col = types[i].col;
        if (col == NULL)
            return qsf_err_set(err, QSF_E_INVAL, 0, 0, "arrow stream: types[%zu].col is NULL", i);
        char shown[QSF_ARROW_NAME_CAP];
        qsf_arrow_name_print(shown, col, strlen(col));
        if (field_named(schema, col) == NULL)
            return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                               "arrow stream: types[%zu] names column %s, which is not a field "
                               "of the stream's schema (%lld fields)",
                               i, shown, (long long) schema->n_children);
        int rc = qsf_chunk_arrow_type(c, col, strlen(col), types[i].qsf_type, err);
        if (rc != QSF_OK) {
            qsf_err_prefix(err, "arrow stream");
            return rc;
        }
    }
    return QSF_OK;
}

QSF_API int qsf_send_arrow_stream_typed(qsf_sender *s, const char *table, size_t table_len,
                                        struct ArrowArrayStream *stream, const char *ts_col,
                                        const qsf_arrow_col_type *types, size_t n_types,
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
    const qsf_sender *outer = qsf_stream_target; /* a callback may stream into another */
    qsf_stream_target = s;
    struct ArrowSchema schema;
    memset(&schema, 0, sizeof schema);
    int e = stream->get_schema(stream, &schema);
    if (e != 0)
        rc = producer_failed(stream, "get_schema", e, 0, err);
    else if ((rc = set_types(c, &schema, types, n_types, err)) == QSF_OK)
        rc = send_all(s, c, stream, &schema, ts_col, &rows, err);
    if (e == 0 && schema.release != NULL)
        schema.release(&schema);
    qsf_stream_target = outer;
    qsf_chunk_free(c);
    if (rows_out != NULL)
        *rows_out = rows;
    return rc;
}

QSF_API int qsf_send_arrow_stream(qsf_sender *s, const char *table, size_t table_len,
                                  struct ArrowArrayStream *stream, const char *ts_col,
                                  uint64_t *rows_out, qsf_errinfo *err) {
    return qsf_send_arrow_stream_typed(s, table, table_len, stream, ts_col, NULL, 0, rows_out, err);
}
