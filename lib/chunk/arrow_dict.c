/* Dictionary arrays (8/16/32-bit indices into utf8 values) become SYMBOL
 * columns through qsf_chunk_symbol_dict: the codes and the dictionary are
 * passed as they are, the dictionary's own offset folded into its offsets
 * pointer. Asked to become VARCHAR (qsf_chunk_arrow_type, field metadata),
 * the dictionary is decoded into a varchar column the chunk keeps until it is
 * cleared: every valid row's entry, one after another. */
#include "chunk/arrow_int.h"
#include "chunk/chunk_arrow.h"

#include "err.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Bytes of one index; unsigned indices (DuckDB's ENUMs have uint8 ones) are
 * passed as the signed codes of the same width, which read the same up to the
 * signed maximum (check_unsigned). */
static int code_bytes(qsf_arrow_kind k, bool *is_unsigned) {
    *is_unsigned = k == QSF_AK_U8 || k == QSF_AK_U16 || k == QSF_AK_U32;
    switch (k) {
    case QSF_AK_I8:
    case QSF_AK_U8:
        return 1;
    case QSF_AK_I16:
    case QSF_AK_U16:
        return 2;
    case QSF_AK_I32:
    case QSF_AK_U32:
        return 4;
    default:
        return 0;
    }
}

static int64_t code_at(const void *codes, int bytes, int64_t i) {
    if (bytes == 1)
        return ((const int8_t *) codes)[i];
    if (bytes == 2)
        return ((const int16_t *) codes)[i];
    return ((const int32_t *) codes)[i];
}

/* Moves *i (a row of the call) to the next valid row at or after it and gives
 * that row's code in *k; false when no valid row is left. */
static bool next_valid_code(const qsf_arrow_col *x, int bytes, int64_t *i, int64_t *k) {
    const uint8_t *valid = x->v.a->buffers[0];
    for (; *i < x->v.len; (*i)++) {
        int64_t r = x->v.off + *i;
        if (valid == NULL || ((valid[r >> 3] >> (r & 7)) & 1)) {
            *k = code_at(qsf_arrow_buf(x, 1), bytes, r);
            return true;
        }
    }
    return false;
}

/* Unsigned indices above the signed maximum of their width would read as
 * negative codes: refused by row. Only a dictionary longer than that maximum
 * can have such codes in range, so shorter ones need no scan. */
static int check_unsigned(const qsf_arrow_col *x, int bytes, const struct ArrowArray *da,
                          qsf_errinfo *err) {
    int64_t max = bytes == 1 ? INT8_MAX : bytes == 2 ? INT16_MAX : INT32_MAX;
    if (da->length <= max + 1)
        return QSF_OK;
    int64_t k;
    for (int64_t i = 0; next_valid_code(x, bytes, &i, &k); i++) {
        if (k < 0)
            return qsf_arrow_invalid(x, err,
                                     "row %" PRId64 ": unsigned code %" PRId64
                                     " is above the signed maximum of its width; use signed "
                                     "or wider indices",
                                     i,
                                     k & (bytes == 1   ? 0xff
                                          : bytes == 2 ? 0xffff
                                                       : 0xffffffff));
    }
    return QSF_OK;
}

/* A valid row whose code names a null dictionary entry has no symbol to send:
 * refused (a code out of range is left to qsf_chunk_symbol_dict). */
static int check_null_entries(const qsf_arrow_col *x, int bytes, const struct ArrowArray *da,
                              qsf_errinfo *err) {
    const uint8_t *dv = da->buffers[0];
    if (dv == NULL || qsf_arrow_count_zeros(dv, da->offset, da->length) == 0)
        return QSF_OK;
    int64_t k;
    for (int64_t i = 0; next_valid_code(x, bytes, &i, &k); i++) {
        if (k < 0 || k >= da->length)
            continue;
        int64_t bit = da->offset + k;
        if (!((dv[bit >> 3] >> (bit & 7)) & 1))
            return qsf_arrow_invalid(
                x, err, "row %" PRId64 ": code %" PRId64 " names a null dictionary entry", i, k);
    }
    return QSF_OK;
}

/* The dictionary itself: utf8 values with valid offsets. */
static int check_dictionary(const qsf_arrow_col *x, const struct ArrowSchema *ds,
                            const struct ArrowArray *da, qsf_errinfo *err) {
    qsf_arrow_fmt f;
    const char *why;
    if (qsf_arrow_fmt_parse(ds->format, &f, &why) != QSF_OK || f.kind != QSF_AK_UTF8 ||
        ds->dictionary != NULL)
        return qsf_arrow_refuse(x, err,
                                "a dictionary becomes SYMBOL or VARCHAR only with utf8 values "
                                "(format \"u\")");
    qsf_arrow_who dwho = x->who;
    snprintf(dwho.format, sizeof dwho.format, "%s", "u (dictionary values)");
    int rc = qsf_arrow_check_array(da, 3, 0, true, &dwho, err);
    if (rc != QSF_OK)
        return rc;
    if (da->length == 0)
        return QSF_OK;
    int64_t last;
    return qsf_arrow_check_offsets(da->buffers[1], 4, da->offset, da->length, &last, &dwho, err);
}

/* Valid row i's dictionary entry [*from, *to) (a code outside the dictionary
 * is QSF_E_VALUE naming the row); a null row is empty. */
static int entry_of(const qsf_arrow_col *x, int bytes, const struct ArrowArray *da, int64_t i,
                    int64_t *from, int64_t *to, qsf_errinfo *err) {
    const uint8_t *valid = x->v.a->buffers[0];
    int64_t r = x->v.off + i;
    *from = *to = 0;
    if (valid != NULL && !((valid[r >> 3] >> (r & 7)) & 1))
        return QSF_OK;
    int64_t k = code_at(qsf_arrow_buf(x, 1), bytes, r);
    if (k < 0 || k >= da->length)
        return qsf_arrow_invalid(
            x, err, "row %" PRId64 ": code %" PRId64 " is outside the dictionary", i, k);
    const int32_t *doffs = (const int32_t *) da->buffers[1] + da->offset;
    *from = doffs[k];
    *to = doffs[k + 1];
    return QSF_OK;
}

/* Rows [0, len) as a varchar column of their entries (64-bit offsets from 0,
 * the validity copied from bit 0): two passes, the first sizing the data. */
static int decode_varchar(const qsf_arrow_col *x, int bytes, const struct ArrowArray *da,
                          qsf_errinfo *err) {
    size_t n = (size_t) x->v.len;
    uint64_t total = 0;
    int64_t from, to;
    for (int64_t i = 0; i < x->v.len; i++) {
        int rc = entry_of(x, bytes, da, i, &from, &to, err);
        if (rc != QSF_OK)
            return rc;
        total += (uint64_t) (to - from); /* at most 2^31 a row: no wrap below 2^32 rows */
    }
    int64_t *offs = qsf_arrow_scratch(x->c, (n + 1) * sizeof *offs);
    char *data = total <= SIZE_MAX ? qsf_arrow_scratch(x->c, (size_t) total) : NULL;
    const uint8_t *valid;
    if (offs == NULL || data == NULL || !qsf_arrow_copy_validity(x, &valid))
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0,
                           "column %s (arrow format \"%s\"): out of memory decoding %zu rows",
                           x->who.name, x->who.format, n);
    const char *dd = da->buffers[2];
    int64_t at = 0;
    for (int64_t i = 0; i < x->v.len; i++) {
        offs[i] = at;
        (void) entry_of(x, bytes, da, i, &from, &to, err); /* checked above */
        if (to > from)
            memcpy(data + at, dd + from, (size_t) (to - from));
        at += to - from;
    }
    offs[n] = at;
    return qsf_arrow_typed(
        x, qsf_chunk_varchar64(x->c, x->name, x->name_len, offs, data, valid, 0, n, err), err);
}

int qsf_arrow_add_dict(const qsf_arrow_col *x, qsf_errinfo *err) {
    const struct ArrowSchema *ds = x->schema->dictionary;
    const struct ArrowArray *da = x->v.a->dictionary;
    if (ds == NULL || da == NULL)
        return qsf_arrow_invalid(x, err,
                                 "schema and array disagree on a dictionary (schema %" PRId64
                                 ", array %" PRId64 ")",
                                 ds != NULL, da != NULL);
    bool is_unsigned;
    int bytes = code_bytes(x->fmt.kind, &is_unsigned);
    if (bytes == 0)
        return qsf_arrow_refuse(x, err, "dictionary indices must be 8, 16 or 32 bits");
    if (x->want != QSF_TYPE_AUTO && x->want != QSF_TYPE_SYMBOL && x->want != QSF_TYPE_VARCHAR)
        return qsf_arrow_refuse(x, err, "a dictionary array becomes SYMBOL or VARCHAR only");
    int rc = qsf_arrow_check_array(x->v.a, 2, 0, true, &x->who, err);
    if (rc == QSF_OK)
        rc = check_dictionary(x, ds, da, err);
    if (rc == QSF_OK && is_unsigned)
        rc = check_unsigned(x, bytes, da, err);
    if (rc == QSF_OK)
        rc = check_null_entries(x, bytes, da, err);
    if (rc != QSF_OK)
        return rc;
    qsf_arrow_col y = *x;
    if (y.v.len == 0)
        y.v.off = 0;
    x = &y;
    if (x->want == QSF_TYPE_VARCHAR)
        return decode_varchar(x, bytes, da, err);
    static const int32_t no_entries[1];
    const int32_t *doffs =
        da->length > 0 ? (const int32_t *) da->buffers[1] + da->offset : no_entries;
    const char *ddata = da->buffers[2] != NULL ? da->buffers[2] : "";
    return QSF_ARROW_CALL(qsf_chunk_symbol_dict, qsf_arrow_buf(x, 1), bytes, doffs, ddata,
                          (size_t) da->length);
}
