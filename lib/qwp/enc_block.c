/* One table block (docs/PROTOCOL.md §5): name, row_count, column definitions,
 * then each column's null section and values. The designated timestamp goes last,
 * with an empty name. */
#include "qwp/enc_int.h"

#include "bytes.h"

#include <string.h>

/* ---- Gorilla (docs/PROTOCOL.md §5.8) ---- */

typedef struct bitw {
    uint8_t *p;
    uint64_t acc; /* the bits not yet stored, LSB-first; fewer than 32 between puts */
    int n;
} bitw;

/* Appends the low `bits` (at most 32) of v. Whole 32-bit words are stored at
 * once: a byte at a time cost a loop per value (most values are one bit). */
static inline void bw_put(bitw *w, uint64_t v, int bits) {
    w->acc |= (v & ((1ull << bits) - 1)) << w->n;
    w->n += bits;
    if (w->n >= 32) {
        qsf_put_u32(w->p, (uint32_t) w->acc);
        w->p += 4;
        w->acc >>= 32;
        w->n -= 32;
    }
}

/* Stores the last partial word's bytes (padding bits 0). */
static inline uint8_t *bw_end(bitw *w) {
    for (; w->n > 0; w->n -= 8, w->acc >>= 8)
        *w->p++ = (uint8_t) w->acc;
    return w->p;
}

/* One delta-of-delta: prefix bits then the value's low bits (LSB-first), as
 * one put where they fit in 32 bits. */
static inline void bw_dod(bitw *w, int64_t dod) {
    uint64_t v = (uint64_t) dod;
    if (dod == 0)
        bw_put(w, 0, 1);
    else if (dod >= -64 && dod <= 63)
        bw_put(w, 0x1 | (v & 0x7F) << 2, 9);
    else if (dod >= -256 && dod <= 255)
        bw_put(w, 0x3 | (v & 0x1FF) << 3, 12);
    else if (dod >= -2048 && dod <= 2047)
        bw_put(w, 0x7 | (v & 0xFFF) << 4, 16);
    else {
        bw_put(w, 0xF, 4);
        bw_put(w, v, 32);
    }
}

/* Gorilla body after the encoding byte; NULL when a dod does not fit i32.
 * Deltas use wrapping arithmetic, as the decoder does. */
static uint8_t *gorilla(uint8_t *p, const uint8_t *v, uint32_t n) {
    uint64_t prev = qsf_get_u64(v), cur = qsf_get_u64(v + 8);
    qsf_put_u64(p, prev);
    qsf_put_u64(p + 8, cur);
    bitw w = {p + 16, 0, 0};
    uint64_t delta = cur - prev;
    for (uint32_t i = 2; i < n; i++) {
        uint64_t next = qsf_get_u64(v + 8 * (size_t) i);
        uint64_t d = next - cur;
        int64_t dod = (int64_t) (d - delta);
        if (dod < INT32_MIN || dod > INT32_MAX)
            return NULL;
        bw_dod(&w, dod);
        delta = d;
        cur = next;
    }
    return bw_end(&w);
}

uint8_t *qsf_enc_timestamps(uint8_t *p, const uint8_t *v, uint32_t n, bool use_gorilla) {
    if (use_gorilla) {
        if (n >= 3) {
            *p = QSF_QWP_TS_GORILLA;
            uint8_t *end = gorilla(p + 1, v, n);
            if (end)
                return end;
        }
        *p++ = QSF_QWP_TS_RAW;
    }
    memcpy(p, v, (size_t) n * 8);
    return p + (size_t) n * 8;
}

/* ---- null section ---- */

/* Writes the null bitmap of rows [r0, r1) at p (1 = NULL; rows >= c->nrows are
 * NULL; padding bits 0) and returns the number of NULL rows. */
static uint32_t null_bitmap(uint8_t *p, const bcol *c, uint32_t r0, uint32_t r1) {
    uint32_t k = r1 - r0, nbytes = (k + 7) / 8;
    uint32_t valid = c->nrows > r0 ? (c->nrows < r1 ? c->nrows : r1) - r0 : 0;
    uint32_t copied = c->has_bitmap ? (valid + 7) / 8 : 0;
    memset(p + copied, 0, nbytes - copied);
    if (copied && (r0 & 7) == 0)
        memcpy(p, c->bitmap.p + r0 / 8, copied);
    else if (copied) {
        const uint8_t *s = c->bitmap.p + r0 / 8;
        int sh = r0 & 7;
        for (uint32_t j = 0; j < copied; j++)
            p[j] = (uint8_t) ((s[j] >> sh) | (s[j + 1] << (8 - sh)));
    }
    for (uint32_t j = valid; j < k; j++) /* rows past the column's end */
        if ((j & 7) == 0 && j + 8 <= k) {
            p[j / 8] = 0xff;
            j += 7;
        } else
            p[j / 8] |= (uint8_t) (1u << (j & 7));
    if (k & 7)
        p[nbytes - 1] &= (uint8_t) ((1u << (k & 7)) - 1);
    uint32_t nulls = 0;
    for (uint32_t j = 0; j < nbytes; j++)
        nulls += (uint32_t) __builtin_popcount(p[j]);
    return nulls;
}

/* ---- values ---- */

static uint8_t *put_bools(uint8_t *p, const bcol *c, uint32_t r0, uint32_t r1, uint32_t vi) {
    uint32_t k = r1 - r0;
    memset(p, 0, (k + 7) / 8);
    for (uint32_t j = 0; j < k; j++) {
        uint32_t r = r0 + j;
        bool null = r >= c->nrows || (c->has_bitmap && (c->bitmap.p[r >> 3] >> (r & 7)) & 1);
        if (!null && c->data.p[vi++])
            p[j >> 3] |= (uint8_t) (1u << (j & 7));
    }
    return p + (k + 7) / 8;
}

static uint32_t var_start(const bcol *c, uint32_t vi) {
    uint32_t v = 0;
    if (vi > 0)
        memcpy(&v, c->offs.p + (size_t) (vi - 1) * 4, 4);
    return v;
}

static uint8_t *put_varlen(uint8_t *p, const bcol *c, uint32_t v0, uint32_t v1, bool offsets) {
    uint32_t base = var_start(c, v0), end = var_start(c, v1);
    if (offsets) {
        qsf_put_u32(p, 0);
        p += 4;
        for (uint32_t v = v0; v < v1; v++, p += 4)
            qsf_put_u32(p, var_start(c, v + 1) - base);
    }
    if (end > base) /* all-empty values may leave data unallocated */
        memcpy(p, c->data.p + base, end - base);
    return p + (end - base);
}

static uint8_t *put_symbols(uint8_t *p, const bcol *c, uint32_t v0, uint32_t v1) {
    const uint8_t *ids = c->data.p;
    for (uint32_t v = v0; v < v1; v++) {
        uint32_t id;
        memcpy(&id, ids + (size_t) v * 4, 4);
        p += qsf_put_varint(p, id);
    }
    return p;
}

static uint8_t *put_geohash(uint8_t *p, const bcol *c, uint32_t v0, uint32_t v1) {
    *p++ = c->geo_bits; /* varint of 1..60 is one byte */
    size_t w = ((size_t) c->geo_bits + 7) / 8;
    for (uint32_t v = v0; v < v1; v++) {
        uint64_t bits;
        uint8_t tmp[8];
        memcpy(&bits, c->data.p + (size_t) v * 8, 8);
        qsf_put_u64(tmp, bits);
        memcpy(p, tmp, w);
        p += w;
    }
    return p;
}

static uint8_t *put_values(uint8_t *p, const bcol *c, uint32_t v0, uint32_t v1, bool use_gor) {
    size_t w = qsf_qwp_type_width(c->type);
    switch (c->type) {
    case QSF_QWP_TIMESTAMP:
    case QSF_QWP_TIMESTAMP_NANOS:
        return qsf_enc_timestamps(p, c->data.p + (size_t) v0 * 8, v1 - v0, use_gor);
    case QSF_QWP_SYMBOL:
        return put_symbols(p, c, v0, v1);
    case QSF_QWP_GEOHASH:
        return put_geohash(p, c, v0, v1);
    case QSF_QWP_VARCHAR:
    case QSF_QWP_BINARY:
        return put_varlen(p, c, v0, v1, true);
    case QSF_QWP_DOUBLE_ARRAY:
    case QSF_QWP_LONG_ARRAY:
        return put_varlen(p, c, v0, v1, false);
    case QSF_QWP_DECIMAL64:
    case QSF_QWP_DECIMAL128:
    case QSF_QWP_DECIMAL256:
        *p++ = c->scale;
        break;
    default:
        break;
    }
    memcpy(p, c->data.p + (size_t) v0 * w, (size_t) (v1 - v0) * w);
    return p + (size_t) (v1 - v0) * w;
}

static uint8_t *put_column(uint8_t *p, const bcol *c, uint32_t r0, uint32_t r1, bool use_gor) {
    uint32_t v0 = c->enc_v0, k = r1 - r0, nulls = 0;
    if (c->type == QSF_QWP_BOOLEAN) {
        *p++ = 0; /* no NULL exists: a missing boolean is false */
        return put_bools(p, c, r0, r1, v0);
    }
    if (c->has_bitmap || r1 > c->nrows) {
        nulls = null_bitmap(p + 1, c, r0, r1);
        if (nulls) {
            *p = 1;
            p += 1 + (k + 7) / 8;
        }
    }
    if (!nulls)
        *p++ = 0;
    return put_values(p, c, v0, v0 + k - nulls, use_gor);
}

uint8_t *qsf_enc_name(uint8_t *p, const char *s, uint8_t len) {
    *p++ = len; /* names are <= 127 bytes: a one-byte varint */
    memcpy(p, s, len);
    return p + len;
}

uint8_t *qsf_enc_block(uint8_t *p, const enc_seg *s, bool use_gor) {
    btable *t = s->t;
    bool ts = t->ts_kind == TS_MICROS || t->ts_kind == TS_NANOS;
    uint8_t ts_type = t->ts_kind == TS_NANOS ? QSF_QWP_TIMESTAMP_NANOS : QSF_QWP_TIMESTAMP;
    uint32_t ncols = 0;
    for (uint32_t i = 0; i < t->ncols; i++) {
        bcol *c = &t->cols[i];
        c->enc_v0 = c->enc_v1 = 0;
        if (c->type) {
            c->enc_v0 = qsf_bcol_rank(c, s->r0);
            c->enc_v1 = qsf_bcol_rank(c, s->r1);
            ncols += c->enc_v1 > c->enc_v0;
        }
    }
    p = qsf_enc_name(p, t->name, t->name_len);
    p += qsf_put_varint(p, s->r1 - s->r0);
    p += qsf_put_varint(p, ncols + (ts ? 1 : 0));
    /* a column without a value in these rows is left out: all NULL (or false) */
    for (uint32_t i = 0; i < t->ncols; i++)
        if (t->cols[i].enc_v1 > t->cols[i].enc_v0) {
            p = qsf_enc_name(p, t->cols[i].name, t->cols[i].name_len);
            *p++ = t->cols[i].type;
        }
    if (ts) {
        *p++ = 0;
        *p++ = ts_type;
    }
    for (uint32_t i = 0; i < t->ncols; i++)
        if (t->cols[i].enc_v1 > t->cols[i].enc_v0)
            p = put_column(p, &t->cols[i], s->r0, s->r1, use_gor);
    if (ts) {
        *p++ = 0;
        p = qsf_enc_timestamps(p, t->ts.p + (size_t) s->r0 * 8, s->r1 - s->r0, use_gor);
    }
    return p;
}
