/* Structure checks of Arrow arrays before any of their buffers is handed on:
 * the consumer of the C Data Interface has only the producer's word for every
 * length, offset and count, so each is checked against the others here
 * (docs/ARROW.md, "What is checked"). */
#include "chunk/arrow_int.h"

#include "err.h"

#include <inttypes.h>
#include <string.h>

int64_t qsf_arrow_count_zeros(const uint8_t *bits, int64_t off, int64_t len) {
    int64_t ones = 0, i = off, end = off + len;
    while (i < end && (i & 7) != 0) {
        ones += (bits[i >> 3] >> (i & 7)) & 1;
        i++;
    }
    for (; i + 64 <= end; i += 64) {
        uint64_t w;
        memcpy(&w, bits + (i >> 3), sizeof w);
        ones += __builtin_popcountll(w);
    }
    for (; i + 8 <= end; i += 8)
        ones += __builtin_popcount(bits[i >> 3]);
    for (; i < end; i++)
        ones += (bits[i >> 3] >> (i & 7)) & 1;
    return len - ones;
}

static int bad(qsf_errinfo *err, const qsf_arrow_who *who, const char *what, int64_t a, int64_t b) {
    return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                       "column %s (arrow format \"%s\"): %s (%" PRId64 ", %" PRId64 ")", who->name,
                       who->format, what, a, b);
}

static int check_counts(const struct ArrowArray *a, const qsf_arrow_who *who, qsf_errinfo *err) {
    if (a->length < 0 || a->offset < 0)
        return bad(err, who, "negative length or offset", a->length, a->offset);
    if (a->offset > INT64_MAX - a->length)
        return bad(err, who, "offset + length overflows", a->offset, a->length);
    if (a->null_count < -1 || a->null_count > a->length)
        return bad(err, who, "null_count outside -1..length", a->null_count, a->length);
    return QSF_OK;
}

static int check_shape(const struct ArrowArray *a, int64_t n_buffers, int64_t n_children,
                       const qsf_arrow_who *who, qsf_errinfo *err) {
    if (a->n_buffers != n_buffers)
        return bad(err, who, "n_buffers is not what the format needs (has, needs)", a->n_buffers,
                   n_buffers);
    if (n_buffers > 0 && a->buffers == NULL)
        return bad(err, who, "buffers is NULL (n_buffers, length)", n_buffers, a->length);
    if (a->n_children != n_children)
        return bad(err, who, "n_children is not what the format needs (has, needs)", a->n_children,
                   n_children);
    if (n_children > 0 && a->children == NULL)
        return bad(err, who, "children is NULL (n_children, length)", n_children, a->length);
    for (int64_t i = 0; i < n_children; i++) {
        if (a->children[i] == NULL)
            return bad(err, who, "child array is NULL (child, n_children)", i, n_children);
    }
    return QSF_OK;
}

int qsf_arrow_check_array(const struct ArrowArray *a, int64_t n_buffers, int64_t n_children,
                          bool has_validity, const qsf_arrow_who *who, qsf_errinfo *err) {
    int rc = check_counts(a, who, err);
    if (rc == QSF_OK)
        rc = check_shape(a, n_buffers, n_children, who, err);
    if (rc != QSF_OK)
        return rc;
    for (int64_t i = has_validity ? 1 : 0; i < n_buffers; i++) {
        if (a->buffers[i] == NULL && a->length > 0)
            return bad(err, who, "data buffer is NULL (buffer, length)", i, a->length);
    }
    if (!has_validity || n_buffers == 0)
        return QSF_OK;
    const uint8_t *validity = a->buffers[0];
    if (validity == NULL) {
        if (a->null_count > 0)
            return bad(err, who, "null_count without a validity bitmap (null_count, length)",
                       a->null_count, a->length);
        return QSF_OK;
    }
    if (a->null_count >= 0) {
        int64_t zeros = qsf_arrow_count_zeros(validity, a->offset, a->length);
        if (zeros != a->null_count)
            return bad(err, who, "null_count contradicts the validity bitmap (null_count, zeros)",
                       a->null_count, zeros);
    }
    return QSF_OK;
}

static int64_t offset_at(const void *offsets, int width, int64_t i) {
    if (width == 4)
        return ((const int32_t *) offsets)[i];
    return ((const int64_t *) offsets)[i];
}

int qsf_arrow_check_offsets(const void *offsets, int width, int64_t off, int64_t len, int64_t *last,
                            const qsf_arrow_who *who, qsf_errinfo *err) {
    int64_t prev = offset_at(offsets, width, off);
    if (prev < 0)
        return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                           "column %s (arrow format \"%s\"), row 0: negative offset %" PRId64,
                           who->name, who->format, prev);
    for (int64_t i = 1; i <= len; i++) {
        int64_t o = offset_at(offsets, width, off + i);
        if (o < prev)
            return qsf_err_set(err, QSF_E_VALUE, 0, 0,
                               "column %s (arrow format \"%s\"), row %" PRId64
                               ": offsets decrease (%" PRId64 " after %" PRId64 ")",
                               who->name, who->format, i - 1, o, prev);
        prev = o;
    }
    *last = prev;
    return QSF_OK;
}
