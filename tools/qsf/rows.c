/* Decoding stored frames into rows (rows.h). The slot's dictionary is handed
 * to the decoder the way a sender hands it to a server after a reconnect: as
 * catch-up frames (qwp/encoder.h), decoded before the first stored frame. */
#include "rows.h"

#include "bytes.h"
#include "err.h"
#include "qsf.h"
#include "qwp/encoder.h"
#include "qwp/peek.h"
#include "qwp/types.h"
#include "strlist.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rows_dec {
    qsf_qwp_dict *dict;
    qsf_qwp_msg *msg;
    qsf_strlist ents; /* the slot's entries, until handed to the decoder */
    bool seeded;
};

rows_dec *rows_new(void) {
    rows_dec *d = calloc(1, sizeof *d);
    if (d) {
        d->dict = qsf_qwp_dict_new();
        d->msg = qsf_qwp_msg_new();
    }
    if (d && (!d->dict || !d->msg)) {
        rows_free(d);
        d = NULL;
    }
    return d;
}

void rows_free(rows_dec *d) {
    if (!d)
        return;
    qsf_strlist_free(&d->ents);
    qsf_qwp_dict_free(d->dict);
    qsf_qwp_msg_free(d->msg);
    free(d);
}

int rows_add_symbol(rows_dec *d, uint32_t id, const char *s, uint32_t len) {
    if (id != d->ents.n)
        return 0; /* ids come in order; anything else is not ours to fix */
    char *c = malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    if (qsf_strlist_push(&d->ents, c, len) == QSF_OK)
        return 0;
    free(c);
    return -1;
}

/* ---- the dictionary, as catch-up frames ---- */

static int entry(void *u, uint32_t id, const char **s, size_t *len) {
    rows_dec *d = u;
    *s = d->ents.strs[id];
    *len = d->ents.lens[id];
    return 0;
}

static int feed(void *u, const uint8_t *frame, size_t len, bool is_last, qsf_errinfo *err) {
    (void) is_last;
    rows_dec *d = u;
    qsf_qwp_decode_result res;
    if (qsf_qwp_decode(d->msg, d->dict, frame, len, NULL, &res) != QSF_QWP_STATUS_OK)
        return qsf_err_set(err, QSF_E_INTERNAL, 0, 0, "%s", res.message);
    return QSF_OK;
}

static void seed(rows_dec *d) {
    d->seeded = true;
    qsf_qwp_encoder *e = NULL;
    if (d->ents.n == 0 || qsf_qwp_encoder_new(&e, NULL) != QSF_OK)
        return;
    (void) qsf_qwp_catchup(e, d->ents.n, entry, d, 0, feed, d, NULL, NULL);
    qsf_qwp_encoder_free(e);
    qsf_strlist_free(&d->ents);
}

const qsf_qwp_msg *rows_decode(rows_dec *d, const uint8_t *p, uint32_t len, char *why, size_t cap) {
    if (!d->seeded)
        seed(d);
    qsf_qwp_hdr h;
    if (qsf_qwp_peek_header(p, len, &h) != QSF_QWP_PEEK_OK) {
        snprintf(why, cap, "not a QWP message (%u bytes)", len);
        return NULL;
    }
    qsf_qwp_decode_result res;
    int st = qsf_qwp_decode(d->msg, d->dict, p, len, NULL, &res);
    if (st == QSF_QWP_STATUS_OK)
        return d->msg;
    snprintf(why, cap, "%s at byte %zu: %s",
             st == QSF_QWP_STATUS_DICTIONARY_GAP ? "DICTIONARY_GAP" : "PARSE_ERROR", res.offset,
             res.message);
    return NULL;
}

/* ---- values ---- */

const char *rows_col_name(const qsf_qwp_dcol *c, uint32_t *len) {
    if (c->name_len == 0) {
        *len = 9;
        return "timestamp";
    }
    *len = c->name_len;
    return c->name;
}

static void utc(char *out, size_t cap, int64_t v, int64_t per_s, int digits) {
    int64_t s = v / per_s, frac = v % per_s;
    if (frac < 0) {
        frac += per_s;
        s--;
    }
    time_t t = (time_t) s;
    struct tm tm;
    char day[32];
    if (!gmtime_r(&t, &tm)) {
        snprintf(out, cap, "%" PRId64, v);
        return;
    }
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, cap, "%s.%0*" PRId64 "Z", day, digits, frac);
}

static void hex(char *out, size_t cap, const uint8_t *p, size_t n) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 3 <= cap; i++)
        o += (size_t) snprintf(out + o, cap - o, "%02x", p[i]);
    if (cap)
        out[o < cap ? o : cap - 1] = '\0';
}

static void uuid(char *out, size_t cap, const uint8_t *p) {
    /* 16 bytes on the wire: lo then hi, each little-endian */
    uint64_t lo = qsf_get_u64(p), hi = qsf_get_u64(p + 8);
    snprintf(out, cap, "%08" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
             hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff, lo >> 48, lo & (uint64_t) 0xffffffffffff);
}

/* Nested lists of an array value: rank u8, rank dims u32, values 8 bytes
 * each (decoded and checked by the decoder). */
typedef struct arr {
    const uint8_t *dims, *v;
    uint8_t rank;
    bool dbl;
    uint64_t k, nvals;
    char *out;
    size_t cap, o;
} arr;

static void put_c(arr *a, char c) {
    if (a->o + 1 < a->cap)
        a->out[a->o++] = c;
}

static void put_value(arr *a) {
    char b[40];
    uint64_t u = a->k < a->nvals ? qsf_get_u64(a->v + 8 * a->k) : 0;
    double d;
    memcpy(&d, &u, sizeof d);
    int n =
        a->dbl ? snprintf(b, sizeof b, "%.17g", d) : snprintf(b, sizeof b, "%" PRId64, (int64_t) u);
    for (int i = 0; i < n; i++)
        put_c(a, b[i]);
    a->k++;
}

static void put_dim(arr *a, uint8_t d) {
    uint32_t n = qsf_get_u32(a->dims + 4 * (size_t) d);
    put_c(a, '[');
    for (uint32_t i = 0; i < n && a->o + 1 < a->cap; i++) {
        if (i)
            put_c(a, ',');
        if (d + 1 < a->rank)
            put_dim(a, (uint8_t) (d + 1));
        else
            put_value(a);
    }
    put_c(a, ']');
}

static void array_text(char *out, size_t cap, const uint8_t *p, size_t n, bool dbl) {
    arr a = {.out = out, .cap = cap, .dbl = dbl};
    if (n >= 1 && p[0] >= 1 && n >= 1 + 4 * (size_t) p[0]) {
        a.rank = p[0];
        a.dims = p + 1;
        a.v = p + 1 + 4 * (size_t) a.rank;
        a.nvals = (n - 1 - 4 * (size_t) a.rank) / 8;
        put_dim(&a, 0);
    }
    if (cap)
        out[a.o] = '\0';
}

static void bytes_value(const qsf_qwp_dcol *c, uint32_t vi, char *out, size_t cap) {
    const uint8_t *p;
    size_t n;
    qsf_qwp_dcol_bytes(c, vi, &p, &n);
    if (c->type == QSF_QWP_SYMBOL || c->type == QSF_QWP_VARCHAR)
        snprintf(out, cap, "%.*s", (int) n, (const char *) p);
    else if (c->type == QSF_QWP_UUID && n == 16)
        uuid(out, cap, p);
    else if (c->type == QSF_QWP_DOUBLE_ARRAY || c->type == QSF_QWP_LONG_ARRAY)
        array_text(out, cap, p, n, c->type == QSF_QWP_DOUBLE_ARRAY);
    else
        hex(out, cap, p, n);
}

static void i64_value(const qsf_qwp_dcol *c, int64_t v, char *out, size_t cap, bool *numeric) {
    *numeric = false;
    if (c->type == QSF_QWP_TIMESTAMP)
        utc(out, cap, v, 1000000, 6);
    else if (c->type == QSF_QWP_TIMESTAMP_NANOS)
        utc(out, cap, v, 1000000000, 9);
    else if (c->type == QSF_QWP_DATE)
        utc(out, cap, v, 1000, 3);
    else if (c->type == QSF_QWP_IPV4)
        snprintf(out, cap, "%u.%u.%u.%u", (unsigned) (v >> 24) & 255, (unsigned) (v >> 16) & 255,
                 (unsigned) (v >> 8) & 255, (unsigned) v & 255);
    else if (c->type == QSF_QWP_BOOLEAN)
        snprintf(out, cap, "%s", v ? "true" : "false");
    else {
        *numeric = c->type != QSF_QWP_CHAR && c->type != QSF_QWP_GEOHASH;
        snprintf(out, cap, "%" PRId64, v);
    }
}

void rows_value(const qsf_qwp_dcol *c, uint32_t row, char *out, size_t cap, bool *is_null,
                bool *numeric) {
    int64_t vi = qsf_qwp_dcol_value_index(c, row);
    *is_null = vi < 0;
    *numeric = false;
    if (vi < 0) {
        snprintf(out, cap, "null");
        return;
    }
    switch (c->type) {
    case QSF_QWP_FLOAT:
    case QSF_QWP_DOUBLE:
        *numeric = true;
        snprintf(out, cap, "%.17g", qsf_qwp_dcol_f64(c, (uint32_t) vi));
        return;
    case QSF_QWP_SYMBOL:
    case QSF_QWP_VARCHAR:
    case QSF_QWP_BINARY:
    case QSF_QWP_UUID:
    case QSF_QWP_LONG256:
    case QSF_QWP_DECIMAL64:
    case QSF_QWP_DECIMAL128:
    case QSF_QWP_DECIMAL256:
    case QSF_QWP_DOUBLE_ARRAY:
    case QSF_QWP_LONG_ARRAY:
        bytes_value(c, (uint32_t) vi, out, cap);
        return;
    default:
        i64_value(c, qsf_qwp_dcol_i64(c, (uint32_t) vi), out, cap, numeric);
    }
}
