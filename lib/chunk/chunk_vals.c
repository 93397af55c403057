/* Column values from the caller's buffers into a frame (see chunk_vals.h).
 * A column without NULLs in a frame's rows whose values are already wire
 * bytes is one memcpy; other fixed-width kinds are one widening loop. */
#include "chunk/chunk_vals.h"

#include "bytes.h"
#include "qwp/enc_int.h"

#include <stdlib.h>
#include <string.h>

#define MS_PER_DAY 86400000ll

/* Bytes of one value on the wire (fixed-width kinds). */
static size_t out_width(const qsf_chunk_col *k) {
    return k->type == QSF_QWP_GEOHASH ? ((size_t) k->geo_bits + 7) / 8
                                      : qsf_qwp_type_width(k->type);
}

static bool wide_offsets(const qsf_chunk_col *k) {
    return k->src == CSRC_VAR64 || k->src == CSRC_SYM64;
}

/* Elements (var-width: bytes; list: doubles) rows [r0, r0 + n) span. */
static uint64_t spanned(const qsf_chunk_col *k, size_t r0, size_t n) {
    uint64_t b, e, b2, e2;
    qsf_chunk_span(k->offs, wide_offsets(k), k->off + r0, &b, &e);
    qsf_chunk_span(k->offs, wide_offsets(k), k->off + r0 + n - 1, &b2, &e2);
    return e2 - b;
}

uint64_t qsf_chunk_col_bound(const qsf_chunk_col *k, size_t r0, size_t n, uint8_t id_bytes) {
    uint64_t b = 1 + (k->validity ? (n + 7) / 8 : 0); /* null flag and bitmap */
    switch (k->src) {
    case CSRC_BOOL_BITS:
    case CSRC_BOOL_U8:
        return 1 + (n + 7) / 8;
    case CSRC_VAR32:
    case CSRC_VAR64:
        return b + 4 * ((uint64_t) n + 1) + (n ? spanned(k, r0, n) : 0);
    case CSRC_SYM32:
    case CSRC_SYM64:
    case CSRC_SYMDICT:
        return b + (uint64_t) id_bytes * n;
    case CSRC_LIST:
        return b + 5 * (uint64_t) n + 8 * (n ? spanned(k, r0, n) : 0);
    case CSRC_TENSOR:
        return b + (uint64_t) n * (1 + 4 * (uint64_t) k->rank + 8 * (uint64_t) k->elems);
    default: /* + the encoding byte, scale or precision */
        return b + 1 + (uint64_t) n * out_width(k);
    }
}

/* ---- bitmaps ---- */

/* 8 bits of an LSB-first bitmap from bit `bit` on, reading no byte past the
 * one that holds bit `bit + avail - 1`. */
static inline unsigned bits8(const uint8_t *m, size_t bit, size_t avail) {
    const uint8_t *s = m + (bit >> 3);
    unsigned sh = bit & 7, x = s[0] >> sh;
    if (sh && avail > 8 - sh)
        x |= (unsigned) s[1] << (8 - sh);
    return x & 0xff;
}

/* The null bitmap of rows [r0, r0 + n): 1 = NULL, padding bits 0. */
static uint8_t *put_null_bits(uint8_t *p, const qsf_chunk_col *k, size_t r0, size_t n) {
    size_t nb = (n + 7) / 8, bit = k->off + r0;
    for (size_t j = 0; j < nb; j++)
        p[j] = (uint8_t) ~bits8(k->validity, bit + 8 * j, n - 8 * j);
    if (n & 7)
        p[nb - 1] &= (uint8_t) ((1u << (n & 7)) - 1);
    return p + nb;
}

/* BOOLEAN values, bit-packed; a NULL is false (there is no BOOLEAN NULL). */
static uint8_t *put_bools(uint8_t *p, const qsf_chunk_col *k, size_t r0, size_t n) {
    size_t nb = (n + 7) / 8, bit = k->off + r0;
    const uint8_t *v = k->values;
    for (size_t j = 0; j < nb; j++) {
        unsigned x = 0;
        if (k->src == CSRC_BOOL_BITS)
            x = bits8(v, bit + 8 * j, n - 8 * j);
        else
            for (size_t b = 0; b < 8 && 8 * j + b < n; b++)
                x |= (unsigned) (v[bit + 8 * j + b] != 0) << b;
        if (k->validity)
            x &= bits8(k->validity, bit + 8 * j, n - 8 * j);
        p[j] = (uint8_t) x;
    }
    if (n & 7)
        p[nb - 1] &= (uint8_t) ((1u << (n & 7)) - 1);
    return p + nb;
}

/* ---- fixed-width values ---- */

/* One value from source bytes s into its wire form at p. */
static inline uint8_t *put_one(uint8_t *p, const qsf_chunk_col *k, const uint8_t *s, size_t w) {
    switch (k->src) {
    case CSRC_WIDEN_U8:
        qsf_put_u16(p, s[0]);
        return p + 2;
    case CSRC_WIDEN_U16: {
        uint16_t v;
        memcpy(&v, s, 2);
        qsf_put_u32(p, v);
        return p + 4;
    }
    case CSRC_WIDEN_U32: {
        uint32_t v;
        memcpy(&v, s, 4);
        qsf_put_u64(p, v);
        return p + 8;
    }
    case CSRC_DAYS: {
        int32_t v;
        memcpy(&v, s, 4);
        qsf_put_i64(p, (int64_t) v * MS_PER_DAY);
        return p + 8;
    }
    case CSRC_SCALE_I64: {
        int64_t v;
        memcpy(&v, s, 8);
        qsf_put_i64(p, v * k->mult);
        return p + 8;
    }
    case CSRC_UUID: /* most significant byte first -> least significant first */
        for (int i = 0; i < 16; i++)
            p[i] = s[15 - i];
        return p + 16;
    case CSRC_GEOHASH: {
        uint64_t v;
        uint8_t t[8];
        memcpy(&v, s, 8);
        qsf_put_u64(t, v & ((1ull << k->geo_bits) - 1));
        size_t gw = ((size_t) k->geo_bits + 7) / 8;
        memcpy(p, t, gw);
        return p + gw;
    }
    default:
        memcpy(p, s, w);
        return p + w;
    }
}

/* The non-NULL values of rows [r0, r0 + n), packed. */
static uint8_t *put_fixed(uint8_t *p, const qsf_chunk_col *k, size_t r0, size_t n, bool nulls) {
    size_t w = k->src_width;
    const uint8_t *s = (const uint8_t *) k->values + (k->off + r0) * w;
    if (!nulls && k->src == CSRC_COPY) {
        memcpy(p, s, n * w);
        return p + n * w;
    }
    if (!nulls) {
        for (size_t j = 0; j < n; j++)
            p = put_one(p, k, s + j * w, w);
        return p;
    }
    for (size_t j = 0; j < n; j++)
        if (qsf_chunk_valid(k, r0 + j))
            p = put_one(p, k, s + j * w, w);
    return p;
}

/* A timestamp column: its values packed as i64 LE (in place when they
 * already are), then raw or Gorilla. */
static uint8_t *put_times(uint8_t *p, qsf_chunk *c, const qsf_chunk_col *k, size_t r0, size_t n,
                          size_t nulls, bool gorilla) {
    const uint8_t *v = (const uint8_t *) k->values + (k->off + r0) * 8;
    if (nulls || k->src != CSRC_COPY) {
        v = (const uint8_t *) c->scratch.ts;
        put_fixed((uint8_t *) c->scratch.ts, k, r0, n, nulls > 0);
    }
    return qsf_enc_timestamps(p, v, (uint32_t) (n - nulls), gorilla);
}

/* ---- variable-width values ---- */

/* VARCHAR / BINARY: n + 1 offsets from 0 (u32 LE), then the bytes. */
static uint8_t *put_var(uint8_t *p, const qsf_chunk_col *k, size_t r0, size_t n, size_t nulls) {
    bool wide = wide_offsets(k);
    const char *data = k->values;
    uint8_t *o = p;
    p += 4 * (n - nulls + 1);
    qsf_put_u32(o, 0);
    o += 4;
    uint64_t b, e, base;
    qsf_chunk_span(k->offs, wide, k->off + r0, &base, &e);
    if (!nulls && !wide) { /* one copy of the bytes; the offsets are the column's less base */
        const int32_t *offs = (const int32_t *) k->offs + k->off + r0 + 1;
        for (size_t j = 0; j < n; j++) { /* little-endian host (chunk.c): stores as they are */
            uint32_t v = (uint32_t) ((uint64_t) offs[j] - base);
            memcpy(o + 4 * j, &v, 4);
        }
        e = (uint64_t) offs[n - 1];
    }
    if (!nulls && wide)
        for (size_t j = 0; j < n; j++, o += 4) {
            qsf_chunk_span(k->offs, wide, k->off + r0 + j, &b, &e);
            qsf_put_u32(o, (uint32_t) (e - base));
        }
    if (!nulls) {
        if (e > base)
            memcpy(p, data + base, (size_t) (e - base));
        return p + (e - base);
    }
    uint32_t at = 0;
    for (size_t j = 0; j < n; j++) {
        if (!qsf_chunk_valid(k, r0 + j))
            continue;
        qsf_chunk_span(k->offs, wide, k->off + r0 + j, &b, &e);
        if (e > b)
            memcpy(p + at, data + b, (size_t) (e - b));
        at += (uint32_t) (e - b);
        qsf_put_u32(o, at);
        o += 4;
    }
    return p + at;
}

static uint8_t *put_symbols(uint8_t *p, const qsf_chunk *c, const qsf_chunk_col *k, size_t r0,
                            size_t n, size_t nulls) {
    const uint32_t *ids = c->scratch.ids + k->ids_at + r0;
    for (size_t j = 0; j < n; j++)
        if (!nulls || qsf_chunk_valid(k, r0 + j)) {
            if (ids[j] < 0x80) /* the first 128 symbols: one byte */
                *p++ = (uint8_t) ids[j];
            else
                p += qsf_put_varint(p, ids[j]);
        }
    return p;
}

/* DOUBLE arrays: per value n_dims, the dimensions (i32 LE), the doubles. */
static uint8_t *put_arrays(uint8_t *p, const qsf_chunk_col *k, size_t r0, size_t n, size_t nulls) {
    const double *v = k->values;
    for (size_t j = 0; j < n; j++) {
        if (nulls && !qsf_chunk_valid(k, r0 + j))
            continue;
        uint64_t b, e;
        if (k->src == CSRC_LIST) {
            qsf_chunk_span(k->offs, false, k->off + r0 + j, &b, &e);
            *p++ = 1;
            qsf_put_u32(p, (uint32_t) (e - b));
            p += 4;
        } else {
            b = (uint64_t) (k->off + r0 + j) * k->elems;
            e = b + k->elems;
            *p++ = k->rank;
            for (int d = 0; d < k->rank; d++, p += 4)
                qsf_put_u32(p, (uint32_t) k->shape[d]);
        }
        if (e > b)
            memcpy(p, v + b, (size_t) (e - b) * 8);
        p += (e - b) * 8;
    }
    return p;
}

/* ---- columns and the block ---- */

static uint8_t *put_column(uint8_t *p, qsf_chunk *c, const qsf_chunk_col *k, size_t r0, size_t n,
                           bool gorilla) {
    size_t nulls = k->enc_nulls;
    if (k->type == QSF_QWP_BOOLEAN) {
        *p++ = 0;
        return put_bools(p, k, r0, n);
    }
    *p++ = nulls ? 1 : 0;
    if (nulls)
        p = put_null_bits(p, k, r0, n);
    switch (k->type) {
    case QSF_QWP_TIMESTAMP:
    case QSF_QWP_TIMESTAMP_NANOS:
        return put_times(p, c, k, r0, n, nulls, gorilla);
    case QSF_QWP_SYMBOL:
        return put_symbols(p, c, k, r0, n, nulls);
    case QSF_QWP_VARCHAR:
    case QSF_QWP_BINARY:
        return put_var(p, k, r0, n, nulls);
    case QSF_QWP_DOUBLE_ARRAY:
        return put_arrays(p, k, r0, n, nulls);
    case QSF_QWP_GEOHASH:
        *p++ = k->geo_bits;
        break;
    case QSF_QWP_DECIMAL64:
    case QSF_QWP_DECIMAL128:
    case QSF_QWP_DECIMAL256:
        *p++ = k->scale;
        break;
    default:
        break;
    }
    return put_fixed(p, k, r0, n, nulls > 0);
}

/* The designated timestamp of rows [r0, r0 + n), in µs or ns. */
static uint8_t *put_designated(uint8_t *p, qsf_chunk *c, size_t r0, size_t n, bool gorilla) {
    const int64_t *v = c->ts + c->ts_off + r0;
    *p++ = 0;
    if (c->ts_mult != 1) {
        for (size_t j = 0; j < n; j++)
            c->scratch.ts[j] = (uint64_t) (v[j] * c->ts_mult);
        v = (const int64_t *) c->scratch.ts;
    }
    return qsf_enc_timestamps(p, (const uint8_t *) v, (uint32_t) n, gorilla);
}

uint8_t *qsf_chunk_put_block(qsf_chunk *c, uint8_t *p, size_t r0, size_t n, bool gorilla) {
    uint32_t ncols = 0;
    for (uint32_t i = 0; i < c->ncols; i++) {
        qsf_chunk_col *k = &c->cols[i];
        k->enc_nulls = k->nulls ? qsf_chunk_count_nulls(k->validity, k->off + r0, n) : 0;
        ncols += k->enc_nulls < n;
    }
    p = qsf_enc_name(p, c->table, c->table_len);
    p += qsf_put_varint(p, n);
    p += qsf_put_varint(p, ncols + (c->has_ts ? 1 : 0));
    for (uint32_t i = 0; i < c->ncols; i++)
        if (c->cols[i].enc_nulls < n) {
            p = qsf_enc_name(p, c->cols[i].name, c->cols[i].name_len);
            *p++ = c->cols[i].type;
        }
    if (c->has_ts) {
        *p++ = 0;
        *p++ = c->ts_nanos ? QSF_QWP_TIMESTAMP_NANOS : QSF_QWP_TIMESTAMP;
    }
    for (uint32_t i = 0; i < c->ncols; i++)
        if (c->cols[i].enc_nulls < n)
            p = put_column(p, c, &c->cols[i], r0, n, gorilla);
    return c->has_ts ? put_designated(p, c, r0, n, gorilla) : p;
}
