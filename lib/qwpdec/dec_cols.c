/* Column data of a table block, with every check a server makes (docs/PROTOCOL.md §5): null
 * section, fixed-width values, BOOLEAN bits, SYMBOL ids (global or per-column dictionary), Gorilla
 * timestamps, VARCHAR/BINARY offsets and UTF-8, GEOHASH precision, array shapes, decimal scales. */
#include "qwpdec/dec_int.h"

#include "bytes.h"
#include "qwp/utf8.h"

#include <string.h>

static void *dalloc(rd *r, size_t n) {
    return qsf_darena_alloc(&r->m->arena, n ? n : 1);
}

#define OOM(r) qsf_rd_fail((r), QSF_QWP_STATUS_PARSE_ERROR, "out of memory")

static int need(rd *r, size_t n, const char *what) {
    if (rd_left(r) < n)
        return RD_PARSE(r, "%s truncated: needs %zu bytes, %zu left", what, n, rd_left(r));
    return 0;
}

/* Null flag and bitmap; sets value_count and the rank index. */
static int null_section(rd *r, qsf_qwp_dcol *c) {
    if (need(r, 1, "null flag"))
        return r->res->status;
    c->bitmap_mode = *r->p++ != 0;
    c->value_count = c->row_count;
    if (!c->bitmap_mode)
        return 0;
    size_t nb = ((size_t) c->row_count + 7) / 8;
    if (need(r, nb, "null bitmap"))
        return r->res->status;
    uint32_t *rank = dalloc(r, (nb + 1) * sizeof *rank);
    if (!rank)
        return OOM(r);
    uint32_t nulls = 0;
    for (size_t i = 0; i < nb; i++) {
        rank[i] = (uint32_t) (i * 8) - nulls;
        uint8_t byte = r->p[i];
        if (i == nb - 1 && (c->row_count & 7))
            byte &= (uint8_t) ((1u << (c->row_count & 7)) - 1); /* padding bits */
        nulls += (uint32_t) __builtin_popcount(byte);
    }
    c->null_bitmap = r->p;
    c->rank = rank;
    c->value_count = c->row_count - nulls;
    r->p += nb;
    return 0;
}

static int fixed_values(rd *r, qsf_qwp_dcol *c, size_t w) {
    size_t n = (size_t) c->value_count * w;
    if (need(r, n, "values"))
        return r->res->status;
    c->fixed = r->p;
    r->p += n;
    return 0;
}

static int booleans(rd *r, qsf_qwp_dcol *c) {
    size_t n = ((size_t) c->value_count + 7) / 8;
    if (need(r, n, "booleans"))
        return r->res->status;
    c->fixed = r->p;
    r->p += n;
    return 0;
}

/* ---- Gorilla (docs/PROTOCOL.md §5.8) ---- */

typedef struct bitr {
    const uint8_t *p;
    size_t bit, nbits;
} bitr;

static int br_get(bitr *b, int n, uint64_t *out) {
    if (b->bit + (size_t) n > b->nbits)
        return -1;
    uint64_t v = 0;
    for (int i = 0; i < n; i++, b->bit++)
        v |= (uint64_t) ((b->p[b->bit >> 3] >> (b->bit & 7)) & 1) << i;
    *out = v;
    return 0;
}

static int br_dod(bitr *b, int64_t *dod) {
    static const int widths[] = {7, 9, 12, 32};
    uint64_t bit;
    int ones = 0;
    while (ones < 4) {
        if (br_get(b, 1, &bit) != 0)
            return -1;
        if (!bit)
            break;
        ones++;
    }
    if (ones == 0) {
        *dod = 0;
        return 0;
    }
    int w = widths[ones - 1];
    uint64_t v;
    if (br_get(b, w, &v) != 0)
        return -1;
    *dod = (int64_t) (v << (64 - w)) >> (64 - w); /* sign-extend */
    return 0;
}

/* Decodes into little-endian bytes, so the column reads like a raw one. */
static int gorilla(rd *r, qsf_qwp_dcol *c) {
    uint32_t n = c->value_count;
    /* every value past the second takes at least one bit: bound memory by input */
    if (n > 2 && (size_t) (n - 2) > 8 * (rd_left(r) > 16 ? rd_left(r) - 16 : 0))
        return RD_PARSE(r, "Gorilla stream for %u values is longer than the message", n);
    uint8_t *out = dalloc(r, (size_t) n * 8);
    if (!out)
        return OOM(r);
    size_t head = n >= 2 ? 16 : (size_t) n * 8;
    if (need(r, head, "Gorilla first values"))
        return r->res->status;
    uint64_t prev = n ? qsf_get_u64(r->p) : 0, cur = n >= 2 ? qsf_get_u64(r->p + 8) : 0;
    memcpy(out, r->p, head);
    r->p += head;
    size_t max_bytes = n > 2 ? ((size_t) (n - 2) * 36 + 7) / 8 : 0;
    bitr b = {r->p, 0, 8 * (rd_left(r) < max_bytes ? rd_left(r) : max_bytes)};
    uint64_t delta = cur - prev;
    for (uint32_t i = 2; i < n; i++) {
        int64_t dod;
        if (br_dod(&b, &dod) != 0)
            return RD_PARSE(r, "Gorilla bit stream truncated at value %u of %u", i, n);
        delta += (uint64_t) dod;
        cur += delta;
        qsf_put_u64(out + 8 * (size_t) i, cur);
    }
    r->p += (b.bit + 7) / 8;
    c->fixed = out;
    c->gorilla = 1;
    return 0;
}

static int timestamps(rd *r, qsf_qwp_dcol *c) {
    if (!(r->flags & QSF_QWP_FLAG_GORILLA))
        return fixed_values(r, c, 8);
    if (need(r, 1, "timestamp encoding byte"))
        return r->res->status;
    uint8_t enc = *r->p++;
    if (enc == QSF_QWP_TS_RAW)
        return fixed_values(r, c, 8);
    if (enc == QSF_QWP_TS_GORILLA)
        return gorilla(r, c);
    r->p--;
    return RD_PARSE(r, "unknown timestamp encoding 0x%02x", enc);
}

/* ---- symbols ---- */

static int symbol_ids(rd *r, qsf_qwp_dcol *c, uint32_t limit, const char *const *local,
                      const uint32_t *local_len) {
    uint32_t n = c->value_count;
    if (need(r, n, "symbol ids"))
        return r->res->status;
    uint32_t *ids = dalloc(r, (size_t) n * 4), *lens = dalloc(r, (size_t) n * 4);
    const char **strs = dalloc(r, (size_t) n * sizeof *strs);
    if (!ids || !lens || !strs)
        return OOM(r);
    for (uint32_t v = 0; v < n; v++) {
        uint64_t id;
        if (qsf_rd_varint(r, "symbol id", &id))
            return r->res->status;
        if (id >= limit)
            return RD_PARSE(r, "symbol id %llu out of range (dictionary size %u)",
                            (unsigned long long) id, limit);
        ids[v] = (uint32_t) id;
        if (local) {
            strs[v] = local[id];
            lens[v] = local_len[id];
        } else {
            size_t len;
            qsf_qwp_dict_get(r->dict, (uint32_t) id, &strs[v], &len);
            lens[v] = (uint32_t) len;
        }
    }
    c->sym_ids = ids;
    c->sym_str = strs;
    c->sym_len = lens;
    return 0;
}

/* Per-column dictionary (FLAG_DELTA_SYMBOL_DICT clear): dict_size, strings, ids. */
static int symbols_local(rd *r, qsf_qwp_dcol *c) {
    uint64_t size;
    if (qsf_rd_varint(r, "symbol dictionary size", &size))
        return r->res->status;
    if (size > r->max_symbols || size > rd_left(r))
        return RD_PARSE(r, "symbol dictionary size %llu exceeds the limit or the message",
                        (unsigned long long) size);
    const char **strs = dalloc(r, (size_t) size * sizeof *strs);
    uint32_t *lens = dalloc(r, (size_t) size * 4);
    if (!strs || !lens)
        return OOM(r);
    for (uint64_t i = 0; i < size; i++)
        if (qsf_rd_string(r, "symbol", 0, UINT32_MAX, &strs[i], &lens[i]))
            return r->res->status;
    return symbol_ids(r, c, (uint32_t) size, strs, lens);
}

static int symbols(rd *r, qsf_qwp_dcol *c) {
    if (!(r->flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        return symbols_local(r, c);
    return symbol_ids(r, c, qsf_qwp_dict_size(r->dict), NULL, NULL);
}

/* ---- variable width ---- */

static int varlen(rd *r, qsf_qwp_dcol *c) {
    uint32_t n = c->value_count;
    if (need(r, ((size_t) n + 1) * 4, "offsets"))
        return r->res->status;
    uint32_t *offs = dalloc(r, ((size_t) n + 1) * 4);
    if (!offs)
        return OOM(r);
    for (uint32_t i = 0; i <= n; i++) {
        offs[i] = qsf_get_u32(r->p + (size_t) i * 4);
        if (i == 0 && offs[0] != 0)
            return RD_PARSE(r, "offset[0] is %u, must be 0", offs[0]);
        if (i > 0 && offs[i] < offs[i - 1])
            return RD_PARSE(r, "offset[%u] = %u decreases (previous %u)", i, offs[i], offs[i - 1]);
    }
    r->p += ((size_t) n + 1) * 4;
    if (need(r, offs[n], "variable-width data"))
        return r->res->status;
    for (uint32_t i = 0; c->type == QSF_QWP_VARCHAR && i < n; i++) {
        size_t len = offs[i + 1] - offs[i];
        size_t bad = qsf_utf8_error_offset((const char *) r->p + offs[i], len);
        if (bad != len)
            return RD_PARSE(r, "value %u is not valid UTF-8 (byte %zu)", i, bad);
    }
    c->offs = offs;
    c->var = r->p;
    r->p += offs[n];
    return 0;
}

static int one_array(rd *r, const qsf_qwp_dcol *c, uint32_t v) {
    if (need(r, 1, "array rank"))
        return r->res->status;
    uint8_t dims = *r->p;
    if (dims < 1 || dims > QSF_QWP_MAX_ARRAY_RANK)
        return RD_PARSE(r, "array value %u: rank %u outside 1..32", v, dims);
    if (need(r, 1 + 4 * (size_t) dims, "array dimensions"))
        return r->res->status;
    uint64_t count = 1;
    for (uint8_t d = 0; d < dims; d++) {
        int32_t len = (int32_t) qsf_get_u32(r->p + 1 + 4 * (size_t) d);
        if (len < 0)
            return RD_PARSE(r, "array value %u: dimension %u is negative (%d)", v, d, len);
        count *= (uint64_t) len;
        if (count > INT32_MAX)
            return RD_PARSE(r, "array value %u: element count exceeds 2^31-1", v);
    }
    size_t total = 1 + 4 * (size_t) dims + 8 * (size_t) count;
    if (need(r, total, "array values"))
        return r->res->status;
    r->p += total;
    return 0;
}

static int arrays(rd *r, qsf_qwp_dcol *c) {
    uint32_t n = c->value_count;
    if (need(r, (size_t) n * 5, "arrays"))
        return r->res->status;
    uint32_t *offs = dalloc(r, ((size_t) n + 1) * 4);
    if (!offs)
        return OOM(r);
    const uint8_t *start = r->p;
    for (uint32_t v = 0; v < n; v++) {
        offs[v] = (uint32_t) (r->p - start);
        if (one_array(r, c, v))
            return r->res->status;
    }
    offs[n] = (uint32_t) (r->p - start);
    c->offs = offs;
    c->var = start;
    return 0;
}

static int geohash(rd *r, qsf_qwp_dcol *c) {
    uint64_t bits;
    if (qsf_rd_varint(r, "geohash precision", &bits))
        return r->res->status;
    if (bits < 1 || bits > QSF_QWP_MAX_GEOHASH_BITS)
        return RD_PARSE(r, "invalid GeoHash precision %llu (1..60)", (unsigned long long) bits);
    c->geohash_bits = (uint8_t) bits;
    return fixed_values(r, c, (bits + 7) / 8);
}

static int decimal(rd *r, qsf_qwp_dcol *c) {
    if (need(r, 1, "decimal scale"))
        return r->res->status;
    c->scale = *r->p++;
    int max = qsf_qwp_decimal_max_scale(c->type);
    if (c->scale > max)
        return RD_PARSE(r, "decimal scale %u exceeds %d", c->scale, max);
    return fixed_values(r, c, qsf_qwp_type_width(c->type));
}

int qsf_dec_column(rd *r, qsf_qwp_dcol *c) {
    if (null_section(r, c))
        return r->res->status;
    switch (c->type) {
    case QSF_QWP_BOOLEAN:
        return booleans(r, c);
    case QSF_QWP_SYMBOL:
        return symbols(r, c);
    case QSF_QWP_TIMESTAMP:
    case QSF_QWP_TIMESTAMP_NANOS:
        return timestamps(r, c);
    case QSF_QWP_GEOHASH:
        return geohash(r, c);
    case QSF_QWP_VARCHAR:
    case QSF_QWP_BINARY:
        return varlen(r, c);
    case QSF_QWP_DOUBLE_ARRAY:
    case QSF_QWP_LONG_ARRAY:
        return arrays(r, c);
    case QSF_QWP_DECIMAL64:
    case QSF_QWP_DECIMAL128:
    case QSF_QWP_DECIMAL256:
        return decimal(r, c);
    default:
        return fixed_values(r, c, qsf_qwp_type_width(c->type));
    }
}
