/* The public Arrow calls: one column, a record batch (a struct array whose
 * children are the columns), and a stream of record batches published one
 * after another. Ownership (include/qsf.h): the chunk calls never release
 * what they are given; the stream call releases each batch it took. */
#include "chunk/arrow_int.h"
#include "chunk/chunk_arrow.h"

#include "err.h"
#include "text.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_given(const void *c, const struct ArrowSchema *schema,
                       const struct ArrowArray *array, const char *call, qsf_errinfo *err) {
    if (c == NULL || schema == NULL || array == NULL)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "%s: NULL chunk, schema or array", call);
    if (schema->release == NULL || array->release == NULL)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "%s: the schema or the array is released", call);
    return QSF_OK;
}

QSF_API int qsf_chunk_arrow_column(qsf_chunk *c, const char *col, size_t col_len,
                                   const struct ArrowSchema *schema, const struct ArrowArray *array,
                                   qsf_errinfo *err) {
    int rc = check_given(c, schema, array, "qsf_chunk_arrow_column", err);
    if (rc != QSF_OK)
        return rc;
    if (col == NULL) {
        if (schema->name == NULL)
            return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                               "qsf_chunk_arrow_column: no column name (col and schema->name "
                               "are NULL)");
        col = schema->name;
        col_len = strlen(col);
    }
    qsf_arrow_view v = {array, array->offset, array->length};
    return qsf_arrow_add_column(c, col, col_len, schema, v, err);
}

/* A child of the batch must hold the batch's rows (the struct's offset
 * applies to its children, after their own). */
static int child_view(const struct ArrowArray *batch, const struct ArrowArray *ca,
                      const qsf_arrow_who *who, qsf_arrow_view *v, qsf_errinfo *err) {
    int64_t need = batch->offset + batch->length;
    if (ca->offset < 0 || ca->length < need || ca->offset > INT64_MAX - ca->length)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "column %s (arrow format \"%s\"): length %" PRId64 " at offset %" PRId64
                           " does not hold the record batch's %" PRId64 " rows at offset %" PRId64,
                           who->name, who->format, ca->length, ca->offset, batch->length,
                           batch->offset);
    *v = (qsf_arrow_view){ca, ca->offset + batch->offset, batch->length};
    return QSF_OK;
}

/* The designated timestamp: a timestamp of any unit and time zone, no null. */
static int add_ts(qsf_chunk *c, const struct ArrowSchema *cs, qsf_arrow_view v,
                  const qsf_arrow_who *who, qsf_errinfo *err) {
    qsf_arrow_fmt f;
    const char *why;
    if (qsf_arrow_fmt_parse(cs->format, &f, &why) != QSF_OK || f.kind != QSF_AK_TIMESTAMP ||
        cs->dictionary != NULL)
        return qsf_err_set(err, QSF_E_UNSUPPORTED, 0, 0,
                           "column %s (arrow format \"%s\"): the designated timestamp must be an "
                           "Arrow timestamp (tss:, tsm:, tsu:, tsn:)",
                           who->name, who->format);
    int rc = qsf_arrow_check_array(v.a, 2, 0, true, who, err);
    if (rc != QSF_OK)
        return rc;
    const uint8_t *valid = v.a->buffers[0];
    for (int64_t i = 0; valid != NULL && i < v.len; i++) {
        int64_t r = v.off + i;
        if (!((valid[r >> 3] >> (r & 7)) & 1))
            return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                               "column %s (arrow format \"%s\"), row %" PRId64
                               ": the designated timestamp is null",
                               who->name, who->format, i);
    }
    const int64_t *values = v.len > 0 ? v.a->buffers[1] : qsf_arrow_empty_buf;
    rc = qsf_chunk_at(c, values, f.unit, v.len > 0 ? (size_t) v.off : 0, (size_t) v.len, err);
    if (rc != QSF_OK) {
        char pre[QSF_ARROW_NAME_CAP + 80];
        snprintf(pre, sizeof pre, "column %s (arrow format \"%s\")", who->name, who->format);
        qsf_err_prefix(err, pre);
    }
    return rc;
}

static int batch_child(qsf_chunk *c, const struct ArrowSchema *schema,
                       const struct ArrowArray *array, int64_t i, const char *ts_col, bool *ts_seen,
                       qsf_errinfo *err) {
    const struct ArrowSchema *cs = schema->children[i];
    if (cs == NULL || cs->name == NULL)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "record batch: child %" PRId64 " has no schema or no name", i);
    qsf_arrow_who who;
    qsf_arrow_who_set(&who, cs->name, strlen(cs->name), cs->format);
    qsf_arrow_view v;
    int rc = child_view(array, array->children[i], &who, &v, err);
    if (rc != QSF_OK)
        return rc;
    if (ts_col != NULL && strcmp(cs->name, ts_col) == 0) {
        *ts_seen = true;
        return add_ts(c, cs, v, &who, err);
    }
    return qsf_arrow_add_column(c, cs->name, strlen(cs->name), cs, v, err);
}

static int check_batch(const struct ArrowSchema *schema, const struct ArrowArray *array,
                       qsf_errinfo *err) {
    qsf_arrow_who who;
    qsf_arrow_who_set(&who, "(record batch)", 14, schema->format);
    qsf_arrow_fmt f;
    const char *why;
    if (qsf_arrow_fmt_parse(schema->format, &f, &why) != QSF_OK || f.kind != QSF_AK_STRUCT)
        return qsf_err_set(err, QSF_E_UNSUPPORTED, 0, 0,
                           "record batch (arrow format \"%s\"): a record batch is a struct array "
                           "(format \"+s\")",
                           who.format);
    if (schema->n_children < 0 || (schema->n_children > 0 && schema->children == NULL))
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "record batch: schema n_children %" PRId64 " without children",
                           schema->n_children);
    int rc = qsf_arrow_check_array(array, 1, schema->n_children, true, &who, err);
    if (rc == QSF_OK && array->buffers[0] != NULL &&
        qsf_arrow_count_zeros(array->buffers[0], array->offset, array->length) != 0)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "record batch: the struct array has null rows; a row of a table "
                           "cannot be null");
    return rc;
}

QSF_API int qsf_chunk_arrow_batch(qsf_chunk *c, const struct ArrowSchema *schema,
                                  const struct ArrowArray *array, const char *ts_col,
                                  qsf_errinfo *err) {
    int rc = check_given(c, schema, array, "qsf_chunk_arrow_batch", err);
    if (rc == QSF_OK)
        rc = check_batch(schema, array, err);
    if (rc != QSF_OK)
        return rc;
    qsf_chunk_mark *m = qsf_chunk_mark_take(c);
    if (m == NULL)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "qsf_chunk_arrow_batch: out of memory");
    bool ts_seen = false;
    for (int64_t i = 0; rc == QSF_OK && i < schema->n_children; i++)
        rc = batch_child(c, schema, array, i, ts_col, &ts_seen, err);
    if (rc == QSF_OK && ts_col != NULL && !ts_seen) {
        char name[QSF_ARROW_NAME_CAP];
        qsf_arrow_name_print(name, ts_col, strlen(ts_col));
        rc = qsf_err_set(err, QSF_E_VALUE, 0, 0,
                         "record batch: no column named %s for the designated timestamp", name);
    }
    if (rc != QSF_OK)
        qsf_chunk_mark_restore(c, m);
    else
        qsf_chunk_mark_drop(m);
    return rc;
}
