/* list<float64> and fixed_size_list<float64> (nested to any rank up to 32)
 * become DOUBLE arrays through qsf_chunk_f64_list and qsf_chunk_f64_tensor.
 * Every child's length is checked against the elements its parent's rows
 * reach, and elements must not be null (a QuestDB array has no null element;
 * a null row is a null array). */
#include "chunk/arrow_int.h"

#include "err.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

/* The one child of a list: its schema and array, checked. */
static int list_child(const qsf_arrow_col *x, const struct ArrowSchema *s,
                      const struct ArrowArray *a, const struct ArrowSchema **cs,
                      const struct ArrowArray **ca, qsf_errinfo *err) {
    if (s->n_children != 1 || s->children == NULL || s->children[0] == NULL)
        return qsf_arrow_invalid(
            x, err, "a list schema needs one child (has %" PRId64 ")%.0" PRId64, s->n_children, 0);
    *cs = s->children[0];
    *ca = a->children[0];
    return QSF_OK;
}

/* No null element among the child's elements [b, e) (its own indices). */
static int no_null_elements(const qsf_arrow_col *x, const struct ArrowArray *ca, int64_t b,
                            int64_t e, qsf_errinfo *err) {
    const uint8_t *v = ca->buffers[0];
    if (v == NULL || e <= b || qsf_arrow_count_zeros(v, ca->offset + b, e - b) == 0)
        return QSF_OK;
    return qsf_arrow_invalid(x, err,
                             "a null element among list elements %" PRId64 "..%" PRId64
                             ": QuestDB arrays have no null elements",
                             b, e);
}

static int check_leaf(const qsf_arrow_col *x, const struct ArrowSchema *cs,
                      const struct ArrowArray *ca, qsf_errinfo *err) {
    qsf_arrow_fmt f;
    const char *why;
    if (qsf_arrow_fmt_parse(cs->format, &f, &why) != QSF_OK || f.kind != QSF_AK_F64 ||
        cs->dictionary != NULL)
        return qsf_arrow_refuse(x, err, "only lists of float64 (\"g\") become DOUBLE arrays");
    qsf_arrow_who w = x->who;
    snprintf(w.format, sizeof w.format, "%s", "g (list elements)");
    return qsf_arrow_check_array(ca, 2, 0, true, &w, err);
}

static const double *leaf_values(const struct ArrowArray *ca, int64_t base) {
    if (ca->buffers[1] == NULL)
        return (const double *) qsf_arrow_empty_buf;
    return (const double *) ca->buffers[1] + base;
}

static int add_list(const qsf_arrow_col *x, qsf_errinfo *err) {
    const struct ArrowSchema *cs = NULL;
    const struct ArrowArray *ca = NULL;
    int rc = list_child(x, x->schema, x->v.a, &cs, &ca, err);
    if (rc == QSF_OK)
        rc = check_leaf(x, cs, ca, err);
    int64_t last = 0;
    if (rc == QSF_OK)
        rc = qsf_arrow_check_offsets(qsf_arrow_buf(x, 1), 4, x->v.off, x->v.len, &last, &x->who,
                                     err);
    if (rc != QSF_OK)
        return rc;
    if (last > ca->length)
        return qsf_arrow_invalid(
            x, err, "list offsets reach element %" PRId64 " past the child's length %" PRId64, last,
            ca->length);
    int64_t first = ((const int32_t *) qsf_arrow_buf(x, 1))[x->v.off];
    rc = no_null_elements(x, ca, first, last, err);
    if (rc != QSF_OK)
        return rc;
    return QSF_ARROW_CALL(qsf_chunk_f64_list, qsf_arrow_buf(x, 1),
                          leaf_values(ca, ca->length > 0 ? ca->offset : 0));
}

/* One level of fixed-size lists: rows [start, end) of the parent (its own
 * indices, the parent's offset included) reach elements [start * n, end * n)
 * of the child's logical indices, which the child must hold; *start and *end
 * become the child's physical element range. */
static int fixlist_level(const qsf_arrow_col *x, const struct ArrowArray *ca, int32_t n,
                         int64_t *start, int64_t *end, qsf_errinfo *err) {
    int64_t s, e;
    if (__builtin_mul_overflow(*start, (int64_t) n, &s) ||
        __builtin_mul_overflow(*end, (int64_t) n, &e) || e > ca->length)
        return qsf_arrow_invalid(x, err,
                                 "fixed-size list child has %" PRId64
                                 " elements, its parent's rows need %" PRId64,
                                 ca->length, (int64_t) n * *end);
    *start = ca->offset + s;
    *end = ca->offset + e;
    return QSF_OK;
}

/* The child of one fixed-size list level: checked as a further level (*nested)
 * or as the float64 leaf. */
static int fixlist_child(const qsf_arrow_col *x, const struct ArrowSchema *cs,
                         const struct ArrowArray *ca, int rank, qsf_arrow_fmt *f, bool *nested,
                         qsf_errinfo *err) {
    const char *why;
    *nested = qsf_arrow_fmt_parse(cs->format, f, &why) == QSF_OK && f->kind == QSF_AK_FIXLIST &&
              cs->dictionary == NULL;
    if (!*nested)
        return check_leaf(x, cs, ca, err);
    qsf_arrow_who w = x->who;
    snprintf(w.format, sizeof w.format, "%.30s (list level %d)", cs->format, rank + 1);
    return qsf_arrow_check_array(ca, 1, 1, true, &w, err);
}

static int add_fixlist(const qsf_arrow_col *x, qsf_errinfo *err) {
    int32_t shape[32];
    int rank = 0;
    const struct ArrowSchema *s = x->schema;
    const struct ArrowArray *a = x->v.a;
    int64_t start = x->v.off, end = x->v.off + x->v.len, base = 0;
    int32_t width = x->fmt.width;
    for (;;) {
        if (rank == 32)
            return qsf_arrow_refuse(x, err, "a DOUBLE array has at most 32 dimensions");
        const struct ArrowSchema *cs = NULL;
        const struct ArrowArray *ca = NULL;
        qsf_arrow_fmt f;
        bool nested;
        int rc = list_child(x, s, a, &cs, &ca, err);
        if (rc == QSF_OK)
            rc = fixlist_child(x, cs, ca, rank, &f, &nested, err);
        if (rc == QSF_OK)
            rc = fixlist_level(x, ca, width, &start, &end, err);
        if (rc == QSF_OK)
            rc = no_null_elements(x, ca, start - ca->offset, end - ca->offset, err);
        if (rc != QSF_OK)
            return rc;
        shape[rank++] = width;
        base = base * width + ca->offset;
        if (!nested)
            return QSF_ARROW_CALL(qsf_chunk_f64_tensor, rank, shape,
                                  leaf_values(ca, ca->length > 0 ? base : 0));
        s = cs;
        a = ca;
        width = f.width;
    }
}

int qsf_arrow_add_array(const qsf_arrow_col *x, qsf_errinfo *err) {
    if (x->fmt.kind == QSF_AK_LIST)
        return add_list(x, err);
    return add_fixlist(x, err);
}
