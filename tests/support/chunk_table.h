/* Random tables for the chunk tests (header only): one column of every kind
 * the typed chunk calls take, in Arrow's layout with a random Arrow offset,
 * random NULLs (row 0 always valid, so that both paths list the columns in
 * the same order) and random symbol sets; the same table given to a chunk
 * (ct_to_chunk) and row by row to the row API or the row buffer
 * (CT_DEFINE_FEED). NULL rows of var-width columns span bytes of their own,
 * and NULL dictionary codes are out of range, as Arrow allows. */
#ifndef QSF_CHUNK_TABLE_H
#define QSF_CHUNK_TABLE_H

#include "qsf.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ct_kind {
    CT_I8,
    CT_I16,
    CT_I32,
    CT_I64,
    CT_U8,
    CT_U16,
    CT_U32,
    CT_U64,
    CT_F32,
    CT_F64,
    CT_BOOL,
    CT_BOOL_U8,
    CT_TS_S,
    CT_TS_MS,
    CT_TS_US,
    CT_TS_NS,
    CT_DATE_MS,
    CT_DATE_DAYS,
    CT_CHAR,
    CT_IPV4,
    CT_UUID,
    CT_L256,
    CT_GEO,
    CT_DEC64,
    CT_DEC128,
    CT_DEC256,
    CT_VARCHAR,
    CT_VARCHAR64,
    CT_BINARY,
    CT_BINARY64,
    CT_SYMBOL,
    CT_SYMBOL64,
    CT_SYMDICT,
    CT_LIST,
    CT_TENSOR,
    CT_KINDS
};

/* Bytes per value of the fixed-width kinds (0: another layout). */
static inline size_t ct_width(int kind) {
    static const uint8_t w[CT_KINDS] = {
        [CT_I8] = 1,      [CT_I16] = 2,       [CT_I32] = 4,   [CT_I64] = 8,     [CT_U8] = 1,
        [CT_U16] = 2,     [CT_U32] = 4,       [CT_U64] = 8,   [CT_F32] = 4,     [CT_F64] = 8,
        [CT_BOOL_U8] = 1, [CT_TS_S] = 8,      [CT_TS_MS] = 8, [CT_TS_US] = 8,   [CT_TS_NS] = 8,
        [CT_DATE_MS] = 8, [CT_DATE_DAYS] = 4, [CT_CHAR] = 2,  [CT_IPV4] = 4,    [CT_UUID] = 16,
        [CT_L256] = 32,   [CT_GEO] = 8,       [CT_DEC64] = 8, [CT_DEC128] = 16, [CT_DEC256] = 32};
    return w[kind];
}

typedef struct ct_col {
    int kind;
    char name[16];
    size_t off;      /* the Arrow offset: row r is element off + r */
    uint8_t *values; /* fixed-width values, bits, string bytes, codes, doubles */
    int32_t *offs32; /* var-width / list offsets (off + rows + 1) */
    int64_t *offs64;
    uint8_t *valid; /* validity bitmap, or NULL */
    int32_t dict_offs[65];
    char dict[64 * 16];
    size_t dict_len;
    int code_bytes, geo_bits, scale, rank;
    int32_t shape[2];
} ct_col;

typedef struct ct_table {
    size_t rows;
    int ncols;
    ct_col cols[CT_KINDS];
    int64_t *ts; /* designated timestamp (micros), NULL: server time */
    uint64_t rng;
} ct_table;

static inline uint64_t ct_rand(ct_table *t) {
    t->rng ^= t->rng << 13;
    t->rng ^= t->rng >> 7;
    t->rng ^= t->rng << 17;
    return t->rng;
}

static inline bool ct_valid(const ct_col *c, size_t r) {
    size_t b = c->off + r;
    return !c->valid || (c->valid[b >> 3] >> (b & 7)) & 1;
}

/* A random string of up to 12 characters, some two-byte, into out; its length. */
static inline size_t ct_text(ct_table *t, char *out) {
    size_t n = 0, len = ct_rand(t) % 12;
    for (size_t i = 0; i < len; i++) {
        if (ct_rand(t) % 5 == 0) {
            memcpy(out + n, "\xc3\xa9", 2);
            n += 2;
        } else
            out[n++] = (char) ('a' + ct_rand(t) % 26);
    }
    return n;
}

static inline void ct_fill_fixed(ct_table *t, ct_col *c, size_t n) {
    size_t w = ct_width(c->kind);
    c->values = malloc(n * w + 1);
    for (size_t i = 0; i < n * w; i++)
        c->values[i] = (uint8_t) ct_rand(t);
    for (size_t i = 0; i < n; i++) {
        uint8_t *v = c->values + i * w;
        int64_t x = (int64_t) (ct_rand(t) % 4000000000ll);
        switch (c->kind) {
        case CT_U64:
            v[7] &= 0x7f; /* a LONG holds it */
            break;
        case CT_F32: {
            float f = (float) x / 7.0f;
            memcpy(v, &f, 4);
            break;
        }
        case CT_F64: {
            double d = (double) x / 7.0;
            memcpy(v, &d, 8);
            break;
        }
        case CT_TS_S:
        case CT_TS_MS:
        case CT_TS_US:
        case CT_TS_NS:
        case CT_DATE_MS:
            memcpy(v, &x, 8);
            break;
        case CT_BOOL_U8:
            v[0] = (uint8_t) (ct_rand(t) % 3 * 3);
            break;
        case CT_IPV4:
            v[0] |= 1; /* never 0.0.0.0 */
            break;
        case CT_DATE_DAYS: {
            int32_t d = (int32_t) (x % 100000) - 50000;
            memcpy(v, &d, 4);
            break;
        }
        default:
            break;
        }
    }
}

/* Offsets with random lengths; the strings come from `gen`. */
static inline void ct_fill_var(ct_table *t, ct_col *c, size_t n, bool wide) {
    c->values = malloc(n * 24 + 1);
    c->offs32 = malloc((n + 1) * 4);
    c->offs64 = malloc((n + 1) * 8);
    size_t at = 0;
    c->offs32[0] = 0;
    c->offs64[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (c->kind == CT_SYMBOL || c->kind == CT_SYMBOL64) {
            at += (size_t) sprintf((char *) c->values + at, "s%d\xc3\xa9",
                                   (int) (ct_rand(t) % c->dict_len));
        } else if (c->kind == CT_BINARY || c->kind == CT_BINARY64) {
            size_t len = ct_rand(t) % 12;
            for (size_t j = 0; j < len; j++)
                c->values[at++] = (uint8_t) ct_rand(t);
        } else {
            at += ct_text(t, (char *) c->values + at);
        }
        c->offs32[i + 1] = (int32_t) at;
        c->offs64[i + 1] = (int64_t) at;
    }
    (void) wide;
}

static inline void ct_fill_dict(ct_table *t, ct_col *c, size_t n) {
    size_t at = 0;
    c->dict_offs[0] = 0;
    for (size_t d = 0; d < c->dict_len; d++) {
        at += (size_t) sprintf(c->dict + at, "d%d%s", (int) (ct_rand(t) % 40),
                               d % 3 ? "" : "\xc3\xa9");
        c->dict_offs[d + 1] = (int32_t) at;
    }
    c->code_bytes = 1 << (ct_rand(t) % 3);
    c->values = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        int32_t code = (int32_t) (ct_rand(t) % c->dict_len);
        if (c->code_bytes == 1)
            ((int8_t *) c->values)[i] = (int8_t) code;
        else if (c->code_bytes == 2)
            ((int16_t *) c->values)[i] = (int16_t) code;
        else
            ((int32_t *) c->values)[i] = code;
    }
}

static inline void ct_fill_arrays(ct_table *t, ct_col *c, size_t n) {
    c->rank = 1 + (int) (ct_rand(t) % 2);
    c->shape[0] = 2;
    c->shape[1] = 3;
    size_t per = c->kind == CT_TENSOR ? (c->rank == 1 ? 2 : 6) : 4;
    double *v = malloc(n * per * 8 + 8);
    c->offs32 = malloc((n + 1) * 4);
    c->offs32[0] = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = c->kind == CT_TENSOR ? per : ct_rand(t) % (per + 1);
        for (size_t j = 0; j < len; j++)
            v[at++] = (double) (ct_rand(t) % 1000) / 8.0;
        c->offs32[i + 1] = (int32_t) at;
    }
    c->values = (uint8_t *) v;
}

/* Marks rows NULL with probability null_pct% (row 0 never, NULL where
 * NULLs are off). */
static inline void ct_fill_valid(ct_table *t, ct_col *c, size_t n, int null_pct) {
    if (!null_pct || ct_rand(t) % 4 == 0)
        return;
    c->valid = calloc((n + 7) / 8 + 1, 1);
    for (size_t i = 0; i < n; i++)
        if (i == c->off || (int) (ct_rand(t) % 100) >= null_pct)
            c->valid[i >> 3] |= (uint8_t) (1u << (i & 7));
    for (size_t i = c->off; c->kind == CT_SYMDICT && i < n; i++)
        if (!ct_valid(c, i - c->off) && c->code_bytes == 1)
            ((int8_t *) c->values)[i] = 127; /* out of the dictionary: not looked at */
}

/* A table of `rows` rows with one column of each kind (all kinds when
 * all_kinds, else a random subset in a random order), a designated timestamp
 * unless the dice say server time. */
static inline void ct_make(ct_table *t, size_t rows, uint64_t seed, int null_pct, bool all_kinds) {
    memset(t, 0, sizeof *t);
    t->rng = seed * 2654435761u + 1;
    t->rows = rows;
    int order[CT_KINDS];
    for (int k = 0; k < CT_KINDS; k++)
        order[k] = k;
    for (int k = CT_KINDS - 1; !all_kinds && k > 0; k--) {
        int j = (int) (ct_rand(t) % (uint64_t) (k + 1)), x = order[k];
        order[k] = order[j];
        order[j] = x;
    }
    t->ncols = all_kinds ? CT_KINDS : 1 + (int) (ct_rand(t) % CT_KINDS);
    for (int i = 0; i < t->ncols; i++) {
        ct_col *c = &t->cols[i];
        c->kind = order[i];
        snprintf(c->name, sizeof c->name, "c%d_%d", i, c->kind);
        c->off = ct_rand(t) % 3;
        size_t n = c->off + rows;
        c->dict_len = 1 + ct_rand(t) % 60;
        c->geo_bits = 1 + (int) (ct_rand(t) % 60);
        c->scale = (int) (ct_rand(t) % 19);
        if (c->kind == CT_BOOL) {
            c->values = malloc(n / 8 + 2);
            for (size_t j = 0; j < n / 8 + 2; j++)
                c->values[j] = (uint8_t) ct_rand(t);
        } else if (c->kind >= CT_VARCHAR && c->kind <= CT_SYMBOL64)
            ct_fill_var(t, c, n, false);
        else if (c->kind == CT_SYMDICT)
            ct_fill_dict(t, c, n);
        else if (c->kind == CT_LIST || c->kind == CT_TENSOR)
            ct_fill_arrays(t, c, n);
        else
            ct_fill_fixed(t, c, n);
        ct_fill_valid(t, c, n, null_pct);
    }
    if (ct_rand(t) % 5 == 0) { /* server time: no row may be empty (the row API refuses it) */
        free(t->cols[0].valid);
        t->cols[0].valid = NULL;
    } else {
        t->ts = malloc(rows * 8 + 8);
        int64_t ts = 1700000000000000ll;
        for (size_t r = 0; r < rows; r++)
            t->ts[r] = ts += (int64_t) (ct_rand(t) % 3 ? 1000 : ct_rand(t) % 100000);
    }
}

static inline void ct_free(ct_table *t) {
    for (int i = 0; i < t->ncols; i++) {
        free(t->cols[i].values);
        free(t->cols[i].offs32);
        free(t->cols[i].offs64);
        free(t->cols[i].valid);
    }
    free(t->ts);
}

/* Adds every column of t to the chunk with the typed calls; the first error. */
static inline int ct_to_chunk(const ct_table *t, qsf_chunk *ch, qsf_errinfo *e) {
    int rc = QSF_OK;
    for (int i = 0; i < t->ncols && rc == QSF_OK; i++) {
        const ct_col *c = &t->cols[i];
        const char *n = c->name;
        size_t nl = strlen(n), o = c->off, r = t->rows;
        const void *v = c->values;
        const uint8_t *va = c->valid;
        switch (c->kind) {
#define CT_FIX(kind, fn, type)                                                                     \
    case kind:                                                                                     \
        rc = fn(ch, n, nl, (const type *) v, va, o, r, e);                                         \
        break;
            CT_FIX(CT_I8, qsf_chunk_i8, int8_t)
            CT_FIX(CT_I16, qsf_chunk_i16, int16_t)
            CT_FIX(CT_I32, qsf_chunk_i32, int32_t)
            CT_FIX(CT_I64, qsf_chunk_i64, int64_t)
            CT_FIX(CT_U8, qsf_chunk_u8, uint8_t)
            CT_FIX(CT_U16, qsf_chunk_u16, uint16_t)
            CT_FIX(CT_U32, qsf_chunk_u32, uint32_t)
            CT_FIX(CT_U64, qsf_chunk_u64, uint64_t)
            CT_FIX(CT_F32, qsf_chunk_f32, float)
            CT_FIX(CT_F64, qsf_chunk_f64, double)
            CT_FIX(CT_BOOL, qsf_chunk_bool, uint8_t)
            CT_FIX(CT_BOOL_U8, qsf_chunk_bool_u8, uint8_t)
            CT_FIX(CT_DATE_MS, qsf_chunk_date_millis, int64_t)
            CT_FIX(CT_DATE_DAYS, qsf_chunk_date_days, int32_t)
            CT_FIX(CT_CHAR, qsf_chunk_char, uint16_t)
            CT_FIX(CT_IPV4, qsf_chunk_ipv4, uint32_t)
            CT_FIX(CT_UUID, qsf_chunk_uuid, uint8_t)
            CT_FIX(CT_L256, qsf_chunk_long256, uint8_t)
#undef CT_FIX
        case CT_TS_S:
        case CT_TS_MS:
        case CT_TS_US:
        case CT_TS_NS:
            rc =
                qsf_chunk_timestamp(ch, n, nl, (const int64_t *) v, c->kind - CT_TS_S, va, o, r, e);
            break;
        case CT_GEO:
            rc = qsf_chunk_geohash(ch, n, nl, (const uint64_t *) v, c->geo_bits, va, o, r, e);
            break;
        case CT_DEC64:
            rc = qsf_chunk_decimal64(ch, n, nl, (const int64_t *) v, c->scale, va, o, r, e);
            break;
        case CT_DEC128:
            rc = qsf_chunk_decimal128(ch, n, nl, v, c->scale * 2, va, o, r, e);
            break;
        case CT_DEC256:
            rc = qsf_chunk_decimal256(ch, n, nl, v, c->scale * 4, va, o, r, e);
            break;
        case CT_VARCHAR:
            rc = qsf_chunk_varchar(ch, n, nl, c->offs32, v, va, o, r, e);
            break;
        case CT_VARCHAR64:
            rc = qsf_chunk_varchar64(ch, n, nl, c->offs64, v, va, o, r, e);
            break;
        case CT_BINARY:
            rc = qsf_chunk_binary(ch, n, nl, c->offs32, v, va, o, r, e);
            break;
        case CT_BINARY64:
            rc = qsf_chunk_binary64(ch, n, nl, c->offs64, v, va, o, r, e);
            break;
        case CT_SYMBOL:
            rc = qsf_chunk_symbol(ch, n, nl, c->offs32, v, va, o, r, e);
            break;
        case CT_SYMBOL64:
            rc = qsf_chunk_symbol64(ch, n, nl, c->offs64, v, va, o, r, e);
            break;
        case CT_SYMDICT:
            rc = qsf_chunk_symbol_dict(ch, n, nl, v, c->code_bytes, c->dict_offs, c->dict,
                                       c->dict_len, va, o, r, e);
            break;
        case CT_LIST:
            rc = qsf_chunk_f64_list(ch, n, nl, c->offs32, (const double *) v, va, o, r, e);
            break;
        case CT_TENSOR:
            rc =
                qsf_chunk_f64_tensor(ch, n, nl, c->rank, c->shape, (const double *) v, va, o, r, e);
            break;
        }
    }
    if (rc == QSF_OK)
        rc = t->ts ? qsf_chunk_at(ch, t->ts, QSF_UNIT_MICROS, 0, t->rows, e)
                   : qsf_chunk_at_now(ch, e);
    return rc;
}

static inline uint64_t ct_be64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static inline uint64_t ct_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The value of row r of var-width column c: its bytes. */
static inline const char *ct_bytes(const ct_col *c, size_t r, size_t *len) {
    size_t j = c->off + r;
    *len = (size_t) (c->offs32[j + 1] - c->offs32[j]);
    return (const char *) c->values + c->offs32[j];
}

/* Defines `static int fn(H *h, const char *table, const ct_table *t, size_t r,
 * qsf_errinfo *e)`:
 * row r of t through the row calls named PFX##table, PFX##col_i8, ...
 * (qsf_ for the public row API, qsf_qwp_batch_ for the row buffer), the
 * values the chunk calls would send: unsigned widened, timestamps in µs,
 * days in ms, a NULL left out. */
#define CT_DEFINE_FEED(fn, H, PFX)                                                                 \
    static int fn##_col(H *h, const ct_col *c, size_t r, qsf_errinfo *e) {                         \
        const char *n = c->name;                                                                   \
        size_t nl = strlen(n), j = c->off + r, w = ct_width(c->kind), len;                         \
        const uint8_t *v = c->values + j * w;                                                      \
        int64_t x = 0;                                                                             \
        if (w == 8 || w == 4 || w == 2 || w == 1)                                                  \
            memcpy(&x, v, w);                                                                      \
        switch (c->kind) {                                                                         \
        case CT_I8:                                                                                \
            return PFX##col_i8(h, n, nl, (int8_t) x, e);                                           \
        case CT_I16:                                                                               \
            return PFX##col_i16(h, n, nl, (int16_t) x, e);                                         \
        case CT_I32:                                                                               \
            return PFX##col_i32(h, n, nl, (int32_t) x, e);                                         \
        case CT_U8:                                                                                \
            return PFX##col_i16(h, n, nl, (int16_t) (uint8_t) x, e);                               \
        case CT_U16:                                                                               \
            return PFX##col_i32(h, n, nl, (int32_t) (uint16_t) x, e);                              \
        case CT_U32:                                                                               \
            return PFX##col_i64(h, n, nl, (int64_t) (uint32_t) x, e);                              \
        case CT_I64:                                                                               \
        case CT_U64:                                                                               \
            return PFX##col_i64(h, n, nl, x, e);                                                   \
        case CT_F32: {                                                                             \
            float f;                                                                               \
            memcpy(&f, v, 4);                                                                      \
            return PFX##col_f32(h, n, nl, f, e);                                                   \
        }                                                                                          \
        case CT_F64: {                                                                             \
            double d;                                                                              \
            memcpy(&d, v, 8);                                                                      \
            return PFX##col_f64(h, n, nl, d, e);                                                   \
        }                                                                                          \
        case CT_BOOL:                                                                              \
            return PFX##col_bool(h, n, nl, (c->values[j >> 3] >> (j & 7)) & 1, e);                 \
        case CT_BOOL_U8:                                                                           \
            return PFX##col_bool(h, n, nl, x != 0, e);                                             \
        case CT_TS_S:                                                                              \
            return PFX##col_ts_micros(h, n, nl, x * 1000000, e);                                   \
        case CT_TS_MS:                                                                             \
            return PFX##col_ts_micros(h, n, nl, x * 1000, e);                                      \
        case CT_TS_US:                                                                             \
            return PFX##col_ts_micros(h, n, nl, x, e);                                             \
        case CT_TS_NS:                                                                             \
            return PFX##col_ts_nanos(h, n, nl, x, e);                                              \
        case CT_DATE_MS:                                                                           \
            return PFX##col_date(h, n, nl, x, e);                                                  \
        case CT_DATE_DAYS:                                                                         \
            return PFX##col_date(h, n, nl, (int64_t) (int32_t) x * 86400000, e);                   \
        case CT_CHAR:                                                                              \
            return PFX##col_char(h, n, nl, (uint16_t) x, e);                                       \
        case CT_IPV4:                                                                              \
            return PFX##col_ipv4(h, n, nl, (uint32_t) x, e);                                       \
        case CT_UUID:                                                                              \
            return PFX##col_uuid(h, n, nl, ct_be64(v + 8), ct_be64(v), e);                         \
        case CT_L256: {                                                                            \
            uint64_t words[4];                                                                     \
            for (int i = 0; i < 4; i++)                                                            \
                words[i] = ct_le64(v + 8 * i);                                                     \
            return PFX##col_long256(h, n, nl, words, e);                                           \
        }                                                                                          \
        case CT_GEO:                                                                               \
            return PFX##col_geohash(h, n, nl, (uint64_t) x, c->geo_bits, e);                       \
        case CT_DEC64:                                                                             \
            return PFX##col_decimal64(h, n, nl, x, c->scale, e);                                   \
        case CT_DEC128:                                                                            \
            return PFX##col_decimal128(h, n, nl, v, c->scale * 2, e);                              \
        case CT_DEC256:                                                                            \
            return PFX##col_decimal256(h, n, nl, v, c->scale * 4, e);                              \
        case CT_VARCHAR:                                                                           \
        case CT_VARCHAR64: {                                                                       \
            const char *s = ct_bytes(c, r, &len);                                                  \
            return PFX##col_varchar(h, n, nl, s, len, e);                                          \
        }                                                                                          \
        case CT_BINARY:                                                                            \
        case CT_BINARY64: {                                                                        \
            const char *s = ct_bytes(c, r, &len);                                                  \
            return PFX##col_binary(h, n, nl, s, len, e);                                           \
        }                                                                                          \
        case CT_SYMBOL:                                                                            \
        case CT_SYMBOL64: {                                                                        \
            const char *s = ct_bytes(c, r, &len);                                                  \
            return PFX##symbol(h, n, nl, s, len, e);                                               \
        }                                                                                          \
        case CT_SYMDICT: {                                                                         \
            int32_t code = c->code_bytes == 1   ? ((const int8_t *) c->values)[j]                  \
                           : c->code_bytes == 2 ? ((const int16_t *) c->values)[j]                 \
                                                : ((const int32_t *) c->values)[j];                \
            return PFX##symbol(h, n, nl, c->dict + c->dict_offs[code],                             \
                               (size_t) (c->dict_offs[code + 1] - c->dict_offs[code]), e);         \
        }                                                                                          \
        case CT_LIST: {                                                                            \
            int32_t dim = c->offs32[j + 1] - c->offs32[j];                                         \
            return PFX##col_f64_array(h, n, nl, 1, &dim,                                           \
                                      (const double *) c->values + c->offs32[j], e);               \
        }                                                                                          \
        default: { /* CT_TENSOR */                                                                 \
            size_t per = c->rank == 1 ? 2 : 6;                                                     \
            return PFX##col_f64_array(h, n, nl, c->rank, c->shape,                                 \
                                      (const double *) c->values + j * per, e);                    \
        }                                                                                          \
        }                                                                                          \
    }                                                                                              \
    static int fn(H *h, const char *table, const ct_table *t, size_t r, qsf_errinfo *e) {          \
        int rc = PFX##table(h, table, strlen(table), e);                                           \
        for (int i = 0; i < t->ncols && rc == QSF_OK; i++)                                         \
            if (ct_valid(&t->cols[i], r))                                                          \
                rc = fn##_col(h, &t->cols[i], r, e);                                               \
        if (rc == QSF_OK)                                                                          \
            rc = t->ts ? PFX##at_micros(h, t->ts[r], e) : PFX##at_now(h, e);                       \
        return rc;                                                                                 \
    }

#endif
