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

/* Where view row i's elements are among the child's own indices: list
 * offsets, or rows of `per_row` elements from `first`. */
typedef struct {
    const int32_t *offs;
    int64_t first, per_row;
} elem_map;

static void row_elems(const qsf_arrow_col *x, const elem_map *m, int64_t i, int64_t *b,
                      int64_t *e) {
    if (m->offs != NULL) {
        *b = m->offs[x->v.off + i];
        *e = m->offs[x->v.off + i + 1];
    } else {
        *b = m->first + i * m->per_row;
        *e = *b + m->per_row;
    }
}

/* No null element under a valid row: a QuestDB array has no null element.
 * Elements under a null row are never sent, and producers leave them null
 * (DuckDB does), so a null among all the elements is looked at row by row. */
static int no_null_elements(const qsf_arrow_col *x, const struct ArrowArray *ca, const elem_map *m,
                            qsf_errinfo *err) {
    const uint8_t *v = ca->buffers[0];
    if (v == NULL || x->v.len == 0)
        return QSF_OK;
    int64_t b, e, last_b, last_e;
    row_elems(x, m, 0, &b, &e);
    row_elems(x, m, x->v.len - 1, &last_b, &last_e);
    if (last_e <= b || qsf_arrow_count_zeros(v, ca->offset + b, last_e - b) == 0)
        return QSF_OK;
    const uint8_t *valid = x->v.a->buffers[0];
    for (int64_t i = 0; i < x->v.len; i++) {
        int64_t r = x->v.off + i;
        if (valid != NULL && !((valid[r >> 3] >> (r & 7)) & 1))
            continue;
        row_elems(x, m, i, &b, &e);
        if (e > b && qsf_arrow_count_zeros(v, ca->offset + b, e - b) != 0)
            return qsf_arrow_invalid(x, err,
                                     "row %" PRId64 ": a null element (of elements %" PRId64
                                     "..%" PRId64 "); QuestDB arrays have no null elements",
                                     i, b);
    }
    return QSF_OK;
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
    elem_map m = {qsf_arrow_buf(x, 1), 0, 0};
    rc = no_null_elements(x, ca, &m, err);
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
    int64_t start = x->v.off, end = x->v.off + x->v.len, base = 0, per_row = 1;
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
        if (rc != QSF_OK)
            return rc;
        if (__builtin_mul_overflow(per_row, (int64_t) width, &per_row))
            return qsf_arrow_refuse(x, err, "a DOUBLE array row of more than 2^63 elements");
        elem_map m = {NULL, start - ca->offset, per_row};
        rc = no_null_elements(x, ca, &m, err);
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
