/* Arrow formats no typed call takes as they are, converted into buffers the
 * chunk keeps until it is cleared or freed (qsf_arrow_scratch):
 *   utf8_view / binary_view -> 64-bit offsets and contiguous data
 *   float16                 -> float32
 *   decimal32               -> decimal64 (the same unscaled values)
 * The converted column starts at row 0: the validity bitmap is copied from
 * the array's offset too. These and a dictionary asked to become VARCHAR
 * (arrow_dict.c) are the only Arrow columns that are copied. */
#include "chunk/arrow_int.h"
#include "chunk/chunk_arrow.h"

#include "err.h"

#include <inttypes.h>
#include <string.h>

static int nomem(const qsf_arrow_col *x, qsf_errinfo *err) {
    return qsf_err_set(err, QSF_E_NOMEM, 0, 0,
                       "column %s (arrow format \"%s\"): out of memory converting %" PRId64 " rows",
                       x->who.name, x->who.format, x->v.len);
}

static bool bit(const uint8_t *bits, int64_t i) {
    return (bits[i >> 3] >> (i & 7)) & 1;
}

bool qsf_arrow_copy_validity(const qsf_arrow_col *x, const uint8_t **out) {
    const uint8_t *v = x->v.a->buffers[0];
    *out = NULL;
    if (v == NULL)
        return true;
    uint8_t *n = qsf_arrow_scratch(x->c, (size_t) (x->v.len + 7) / 8);
    if (n == NULL)
        return false;
    memset(n, 0, (size_t) (x->v.len + 7) / 8);
    for (int64_t i = 0; i < x->v.len; i++)
        n[i >> 3] |= (uint8_t) (bit(v, x->v.off + i) << (i & 7));
    *out = n;
    return true;
}

/* IEEE 754 binary16 to binary32, exactly (every half is a float). */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t) (h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) { /* zero or subnormal: man * 2^-24 */
        float f = (float) man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    }
    if (exp == 31)
        bits = sign | 0x7f800000u | man << 13; /* infinity or NaN */
    else
        bits = sign | (exp - 15 + 127) << 23 | man << 13;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static int add_f16(const qsf_arrow_col *x, qsf_errinfo *err) {
    const uint16_t *h = qsf_arrow_buf(x, 1);
    float *f = qsf_arrow_scratch(x->c, (size_t) x->v.len * sizeof *f);
    const uint8_t *valid;
    if (f == NULL || !qsf_arrow_copy_validity(x, &valid))
        return nomem(x, err);
    for (int64_t i = 0; i < x->v.len; i++)
        f[i] = half_to_float(h[x->v.off + i]);
    return qsf_arrow_typed(
        x, qsf_chunk_f32(x->c, x->name, x->name_len, f, valid, 0, (size_t) x->v.len, err), err);
}

static int add_dec32(const qsf_arrow_col *x, qsf_errinfo *err) {
    const int32_t *d = qsf_arrow_buf(x, 1);
    int64_t *w = qsf_arrow_scratch(x->c, (size_t) x->v.len * sizeof *w);
    const uint8_t *valid;
    if (w == NULL || !qsf_arrow_copy_validity(x, &valid))
        return nomem(x, err);
    for (int64_t i = 0; i < x->v.len; i++)
        w[i] = d[x->v.off + i];
    return qsf_arrow_typed(x,
                           qsf_chunk_decimal64(x->c, x->name, x->name_len, w, x->fmt.scale, valid,
                                               0, (size_t) x->v.len, err),
                           err);
}

/* A view (16 bytes): int32 length; up to 12 bytes inline after it, or a
 * 4-byte prefix, the int32 index of a variadic data buffer and the int32
 * offset in it. */
typedef struct {
    const uint8_t *views;
    const void *const *data; /* the variadic buffers */
    const int64_t *sizes;    /* their sizes (the last buffer) */
    int64_t ndata;
} view_src;

/* Row r's bytes, checked against the buffer they are in. */
static int view_at(const qsf_arrow_col *x, const view_src *s, int64_t r, const uint8_t **p,
                   int32_t *len, qsf_errinfo *err) {
    const uint8_t *v = s->views + 16 * r;
    memcpy(len, v, 4);
    if (*len < 0)
        return qsf_arrow_invalid(x, err, "row %" PRId64 ": negative view length %" PRId64,
                                 r - x->v.off, *len);
    if (*len <= 12) {
        *p = v + 4;
        return QSF_OK;
    }
    int32_t idx, off;
    memcpy(&idx, v + 8, 4);
    memcpy(&off, v + 12, 4);
    if (idx < 0 || idx >= s->ndata || off < 0 || (int64_t) off + *len > s->sizes[idx])
        return qsf_arrow_invalid(x, err,
                                 "row %" PRId64 ": the view reaches past its data buffer %" PRId64,
                                 r - x->v.off, idx);
    *p = (const uint8_t *) s->data[idx] + off;
    return QSF_OK;
}

/* Every valid row's bytes, one after another; offsets from 0. */
static int gather(const qsf_arrow_col *x, const view_src *s, const uint8_t *valid, int64_t *offs,
                  uint8_t *data, uint64_t *total, qsf_errinfo *err) {
    uint64_t at = 0;
    for (int64_t i = 0; i < x->v.len; i++) {
        int64_t r = x->v.off + i;
        const uint8_t *p = NULL;
        int32_t len = 0;
        if (offs != NULL)
            offs[i] = (int64_t) at;
        if (valid != NULL && !bit(valid, r))
            continue;
        int rc = view_at(x, s, r, &p, &len, err);
        if (rc != QSF_OK)
            return rc;
        if (data != NULL)
            memcpy(data + at, p, (size_t) len);
        at += (uint64_t) len;
    }
    if (offs != NULL)
        offs[x->v.len] = (int64_t) at;
    *total = at;
    return QSF_OK;
}

static int add_view(const qsf_arrow_col *x, qsf_errinfo *err) {
    const struct ArrowArray *a = x->v.a;
    if (a->n_buffers < 3)
        return qsf_arrow_invalid(x, err,
                                 "a view array has validity, views, data buffers and their sizes "
                                 "(n_buffers %" PRId64 ", at least %" PRId64 ")",
                                 a->n_buffers, 3);
    int rc = qsf_arrow_check_array(a, a->n_buffers, 0, true, &x->who, err);
    if (rc != QSF_OK)
        return rc;
    view_src s = {qsf_arrow_buf(x, 1), a->buffers + 2, a->buffers[a->n_buffers - 1],
                  a->n_buffers - 3};
    uint64_t total;
    if ((rc = gather(x, &s, a->buffers[0], NULL, NULL, &total, err)) != QSF_OK)
        return rc;
    int64_t *offs = qsf_arrow_scratch(x->c, ((size_t) x->v.len + 1) * sizeof *offs);
    uint8_t *data = total <= SIZE_MAX ? qsf_arrow_scratch(x->c, (size_t) total) : NULL;
    const uint8_t *valid;
    if (offs == NULL || data == NULL || !qsf_arrow_copy_validity(x, &valid))
        return nomem(x, err);
    if ((rc = gather(x, &s, a->buffers[0], offs, data, &total, err)) != QSF_OK)
        return rc;
    size_t n = (size_t) x->v.len;
    if (x->fmt.kind == QSF_AK_BINVIEW)
        rc = qsf_chunk_binary64(x->c, x->name, x->name_len, offs, data, valid, 0, n, err);
    else if (x->want == QSF_TYPE_SYMBOL)
        rc = qsf_chunk_symbol64(x->c, x->name, x->name_len, offs, (const char *) data, valid, 0, n,
                                err);
    else
        rc = qsf_chunk_varchar64(x->c, x->name, x->name_len, offs, (const char *) data, valid, 0, n,
                                 err);
    return qsf_arrow_typed(x, rc, err);
}

int qsf_arrow_add_converted(const qsf_arrow_col *x, qsf_errinfo *err) {
    switch (x->fmt.kind) {
    case QSF_AK_F16:
        return add_f16(x, err);
    case QSF_AK_DECIMAL:
        return add_dec32(x, err);
    default:
        return add_view(x, err);
    }
}
