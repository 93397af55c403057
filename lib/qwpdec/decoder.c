/* Message, delta dictionary and table blocks of the server-side decoder
 * (see decoder.h); column data is in dec_cols.c. */
#include "qwpdec/dec_int.h"

#include "bytes.h"
#include "qwp/utf8.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */

void *qsf_darena_alloc(darena *a, size_t n) {
    n = (n + 15) & ~(size_t) 15;
    if (!a->head || a->head->cap - a->head->used < n) {
        dchunk *c = a->spare;
        if (c && c->cap >= n)
            a->spare = c->next;
        else {
            size_t cap = n > 65536 ? n : 65536;
            c = malloc(sizeof *c + cap);
            if (!c)
                return NULL;
            c->cap = cap;
        }
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = a->head->mem + a->head->used;
    a->head->used += n;
    return p;
}

void qsf_darena_reset(darena *a) {
    while (a->head) {
        dchunk *c = a->head;
        a->head = c->next;
        c->next = a->spare;
        a->spare = c;
    }
}

void qsf_darena_free(darena *a) {
    qsf_darena_reset(a);
    while (a->spare) {
        dchunk *c = a->spare;
        a->spare = c->next;
        free(c);
    }
}

/* ---- dictionary ----
 * Strings live in chunks that never move, so decoded results may point at them.
 * A decode records what it changes (new entries, overwritten slots, chunk use) so
 * a failed frame can be undone exactly. */

typedef struct dentry {
    const char *s;
    uint32_t len;
} dentry;

typedef struct dundo {
    uint32_t id;
    dentry old;
} dundo;

struct qsf_qwp_dict {
    darena strings;
    dentry *e;
    uint32_t n, cap;
    dundo *undo;
    uint32_t nundo, undo_cap;
    /* state at the start of the current decode */
    uint32_t s_n;
    dchunk *s_head;
    size_t s_used;
};

qsf_qwp_dict *qsf_qwp_dict_new(void) {
    return calloc(1, sizeof(qsf_qwp_dict));
}

void qsf_qwp_dict_free(qsf_qwp_dict *d) {
    if (!d)
        return;
    qsf_darena_free(&d->strings);
    free(d->e);
    free(d->undo);
    free(d);
}

uint32_t qsf_qwp_dict_size(const qsf_qwp_dict *d) {
    return d ? d->n : 0;
}

bool qsf_qwp_dict_get(const qsf_qwp_dict *d, uint32_t id, const char **s, size_t *len) {
    if (!d || id >= d->n)
        return false;
    *s = d->e[id].s;
    *len = d->e[id].len;
    return true;
}

static void dict_begin(qsf_qwp_dict *d) {
    d->nundo = 0;
    d->s_n = d->n;
    d->s_head = d->strings.head;
    d->s_used = d->strings.head ? d->strings.head->used : 0;
}

static void dict_rollback(qsf_qwp_dict *d) {
    while (d->nundo > 0) {
        dundo *u = &d->undo[--d->nundo];
        d->e[u->id] = u->old;
    }
    d->n = d->s_n;
    while (d->strings.head && d->strings.head != d->s_head) {
        dchunk *c = d->strings.head;
        d->strings.head = c->next;
        c->next = d->strings.spare;
        d->strings.spare = c;
    }
    if (d->strings.head)
        d->strings.head->used = d->s_used;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t size) {
    if (need <= *cap)
        return 0;
    uint32_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, (size_t) n * size);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

/* Sets entry id (<= n) to s; returns -1 when memory ran out. */
static int dict_set(qsf_qwp_dict *d, uint32_t id, const char *s, uint32_t len) {
    if (id < d->n && d->e[id].len == len && memcmp(d->e[id].s, s, len) == 0)
        return 0; /* same string: no-op */
    char *copy = qsf_darena_alloc(&d->strings, len);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    if (id < d->n) {
        if (grow((void **) &d->undo, &d->undo_cap, d->nundo + 1, sizeof *d->undo))
            return -1;
        d->undo[d->nundo++] = (dundo){id, d->e[id]};
    } else {
        if (grow((void **) &d->e, &d->cap, id + 1, sizeof *d->e))
            return -1;
        d->n = id + 1;
    }
    d->e[id] = (dentry){copy, len};
    return 0;
}

/* ---- reader helpers ---- */

int qsf_rd_fail(rd *r, int status, const char *fmt, ...) {
    qsf_qwp_decode_result *res = r->res;
    res->status = status;
    res->offset = (size_t) (r->p - r->base);
    int n = 0;
    if (r->t)
        n = snprintf(res->message, sizeof res->message,
                     "table \"%.*s\"%s%.*s%s: ", (int) r->t->name_len, r->t->name,
                     r->c ? ", column \"" : "", r->c ? (int) r->c->name_len : 0,
                     r->c ? r->c->name : "", r->c ? "\"" : "");
    if (n < 0 || (size_t) n >= sizeof res->message)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message + n, sizeof res->message - (size_t) n, fmt, ap);
    va_end(ap);
    size_t len = strlen(res->message);
    snprintf(res->message + len, sizeof res->message - len, " (at byte %zu)", res->offset);
    return status;
}

int qsf_rd_varint(rd *r, const char *what, uint64_t *out) {
    size_t n = qsf_get_varint(r->p, r->end, out);
    if (n == 0)
        return RD_PARSE(r, "%s: truncated or overlong varint", what);
    r->p += n;
    return 0;
}

int qsf_rd_string(rd *r, const char *what, uint32_t min, uint32_t max, const char **s,
                  uint32_t *len) {
    uint64_t n = 0;
    if (qsf_rd_varint(r, what, &n))
        return r->res->status;
    if (n < min || n > max)
        return RD_PARSE(r, "%s length %llu outside %u..%u", what, (unsigned long long) n, min, max);
    if (n > rd_left(r))
        return RD_PARSE(r, "%s truncated: %llu bytes, %zu left", what, (unsigned long long) n,
                        rd_left(r));
    size_t bad = qsf_utf8_error_offset((const char *) r->p, (size_t) n);
    if (bad != n)
        return RD_PARSE(r, "%s is not valid UTF-8 (byte %zu)", what, bad);
    *s = (const char *) r->p;
    *len = (uint32_t) n;
    r->p += n;
    return 0;
}

/* ---- message ---- */

qsf_qwp_msg *qsf_qwp_msg_new(void) {
    return calloc(1, sizeof(qsf_qwp_msg));
}

void qsf_qwp_msg_free(qsf_qwp_msg *m) {
    if (!m)
        return;
    qsf_darena_free(&m->arena);
    free(m);
}

uint8_t qsf_qwp_msg_flags(const qsf_qwp_msg *m) {
    return m->flags;
}

uint32_t qsf_qwp_msg_table_count(const qsf_qwp_msg *m) {
    return m->ntables;
}

const qsf_qwp_dtable *qsf_qwp_msg_table(const qsf_qwp_msg *m, uint32_t i) {
    return i < m->ntables ? &m->tables[i] : NULL;
}

void qsf_qwp_msg_delta(const qsf_qwp_msg *m, uint32_t *start, uint32_t *count) {
    *start = m->delta_start;
    *count = m->delta_count;
}

static int header(rd *r, uint8_t version, uint16_t *tables) {
    if (rd_left(r) < QSF_QWP_HEADER_LEN)
        return RD_PARSE(r, "message of %zu bytes is shorter than the 12-byte header", rd_left(r));
    if (qsf_get_u32(r->p) != QSF_QWP_MAGIC)
        return RD_PARSE(r, "bad magic 0x%08x (expected \"QWP1\")", qsf_get_u32(r->p));
    if (r->p[4] != version)
        return RD_PARSE(r, "message version %u does not match negotiated version %u", r->p[4],
                        version);
    r->flags = r->p[5];
    if (r->flags & QSF_QWP_FLAG_DURABLE_ACK_POLL)
        return RD_PARSE(r, "durable ACK poll was not negotiated (flags 0x%02x)", r->flags);
    if (r->flags & ~QSF_QWP_FLAGS_INGRESS)
        return RD_PARSE(r, "reserved flag bits set (flags 0x%02x)", r->flags);
    *tables = qsf_get_u16(r->p + 6);
    uint32_t payload = qsf_get_u32(r->p + 8);
    if (payload > QSF_QWP_MAX_PAYLOAD)
        return RD_PARSE(r, "payload_length %u exceeds 16 MiB", payload);
    if (payload != rd_left(r) - QSF_QWP_HEADER_LEN)
        return RD_PARSE(r,
                        "payload_length %u does not match the %zu bytes received after the "
                        "header",
                        payload, rd_left(r) - QSF_QWP_HEADER_LEN);
    r->p += QSF_QWP_HEADER_LEN;
    return 0;
}

static int delta_section(rd *r, qsf_qwp_dict *d) {
    uint64_t start = 0, count = 0;
    if (qsf_rd_varint(r, "delta_start", &start) || qsf_rd_varint(r, "delta_count", &count))
        return r->res->status;
    if (!d)
        return RD_PARSE(r, "delta symbol dictionary without a connection dictionary");
    if (start > d->n)
        return qsf_rd_fail(r, QSF_QWP_STATUS_DICTIONARY_GAP,
                           "dictionary gap: delta_start %llu is beyond the dictionary size %u",
                           (unsigned long long) start, d->n);
    if (start + count > r->max_symbols)
        return RD_PARSE(r, "symbol dictionary would hold %llu entries, more than %u",
                        (unsigned long long) (start + count), r->max_symbols);
    if (count > rd_left(r))
        return RD_PARSE(r, "delta_count %llu is larger than the remaining %zu bytes can hold",
                        (unsigned long long) count, rd_left(r));
    r->m->delta_start = (uint32_t) start;
    r->m->delta_count = (uint32_t) count;
    for (uint64_t i = 0; i < count; i++) {
        const char *s;
        uint32_t len;
        if (qsf_rd_string(r, "symbol dictionary entry", 0, UINT32_MAX, &s, &len))
            return r->res->status;
        if (dict_set(d, (uint32_t) (start + i), s, len))
            return RD_PARSE(r, "out of memory");
    }
    return 0;
}

static bool same_name_ci(const qsf_qwp_dcol *a, const qsf_qwp_dcol *b) {
    if (a->name_len != b->name_len)
        return false;
    for (uint32_t i = 0; i < a->name_len; i++)
        if (tolower((unsigned char) a->name[i]) != tolower((unsigned char) b->name[i]))
            return false;
    return true;
}

static int column_def(rd *r, qsf_qwp_dtable *t, uint32_t i) {
    qsf_qwp_dcol *c = &t->cols[i];
    memset(c, 0, sizeof *c);
    if (qsf_rd_string(r, "column name", 0, QSF_QWP_MAX_NAME_LEN, &c->name, &c->name_len))
        return r->res->status;
    if (rd_left(r) < 1)
        return RD_PARSE(r, "column %u: type code truncated", i);
    c->type = *r->p;
    c->row_count = t->row_count;
    if (!qsf_qwp_type_valid(c->type))
        return RD_PARSE(r, "column \"%.*s\": invalid column type code: 0x%x", (int) c->name_len,
                        c->name, c->type);
    if (c->name_len == 0 && c->type != QSF_QWP_TIMESTAMP && c->type != QSF_QWP_TIMESTAMP_NANOS)
        return RD_PARSE(r,
                        "column %u has an empty name but type %s (only a designated "
                        "TIMESTAMP may be unnamed)",
                        i, qsf_qwp_type_name(c->type));
    for (uint32_t j = 0; j < i; j++)
        if (same_name_ci(&t->cols[j], c))
            return RD_PARSE(r, "duplicate column name \"%.*s\"", (int) c->name_len, c->name);
    r->p++;
    return 0;
}

static int table_head(rd *r, qsf_qwp_dtable *t, uint32_t max_rows) {
    uint64_t rows = 0, cols = 0;
    if (qsf_rd_string(r, "table name", 1, QSF_QWP_MAX_NAME_LEN, &t->name, &t->name_len))
        return r->res->status;
    r->t = t;
    if (qsf_rd_varint(r, "row_count", &rows) || qsf_rd_varint(r, "column_count", &cols))
        return r->res->status;
    if (rows > max_rows)
        return RD_PARSE(r, "row_count %llu exceeds the limit of %u", (unsigned long long) rows,
                        max_rows);
    if (cols > QSF_QWP_MAX_COLUMNS || cols * 2 > rd_left(r))
        return RD_PARSE(r, "column_count %llu exceeds 2048 or the message",
                        (unsigned long long) cols);
    t->row_count = (uint32_t) rows;
    t->col_count = (uint32_t) cols;
    t->cols = qsf_darena_alloc(&r->m->arena, (cols ? cols : 1) * sizeof *t->cols);
    return t->cols ? 0 : RD_PARSE(r, "out of memory");
}

static int table_block(rd *r, qsf_qwp_dtable *t, uint32_t max_rows) {
    r->t = NULL;
    r->c = NULL;
    if (table_head(r, t, max_rows))
        return r->res->status;
    for (uint32_t i = 0; i < t->col_count; i++)
        if (column_def(r, t, i))
            return r->res->status;
    for (uint32_t i = 0; i < t->col_count; i++) {
        r->c = &t->cols[i];
        if (qsf_dec_column(r, &t->cols[i]))
            return r->res->status;
    }
    r->c = NULL;
    return 0;
}

static int tables(rd *r, uint16_t count, uint32_t max_rows) {
    if ((size_t) count * 4 > rd_left(r))
        return RD_PARSE(r, "table_count %u is more than the payload can hold", count);
    r->m->tables = qsf_darena_alloc(&r->m->arena, (count ? count : 1) * sizeof *r->m->tables);
    if (!r->m->tables)
        return RD_PARSE(r, "out of memory");
    for (uint32_t i = 0; i < count; i++) {
        memset(&r->m->tables[i], 0, sizeof r->m->tables[i]);
        if (table_block(r, &r->m->tables[i], max_rows))
            return r->res->status;
    }
    r->t = NULL;
    if (rd_left(r) > 0)
        return RD_PARSE(r, "%zu trailing bytes after the last table block", rd_left(r));
    return 0;
}

int qsf_qwp_decode(qsf_qwp_msg *m, qsf_qwp_dict *dict, const uint8_t *buf, size_t len,
                   const qsf_qwp_decode_opts *opts, qsf_qwp_decode_result *res) {
    qsf_qwp_decode_opts o = {0};
    if (opts)
        o = *opts;
    memset(res, 0, sizeof *res);
    qsf_darena_reset(&m->arena);
    m->ntables = 0;
    m->tables = NULL;
    m->flags = 0;
    m->delta_start = m->delta_count = 0;
    rd r = {.base = buf, .p = buf, .end = buf + len, .res = res, .m = m, .dict = dict};
    r.max_symbols = o.max_symbols ? o.max_symbols : QSF_QWP_MAX_SYMBOLS;
    uint16_t count = 0;
    if (dict)
        dict_begin(dict);
    int st = header(&r, o.version ? o.version : QSF_QWP_VERSION, &count);
    if (!st && (r.flags & QSF_QWP_FLAG_DELTA_SYMBOL_DICT))
        st = delta_section(&r, dict);
    if (!st)
        st = tables(&r, count, o.max_rows ? o.max_rows : QSF_QWP_MAX_ROWS_PER_TABLE);
    if (st) {
        if (dict)
            dict_rollback(dict);
        m->tables = NULL;
        return st;
    }
    m->flags = r.flags;
    m->ntables = count;
    return QSF_QWP_STATUS_OK;
}

/* ---- accessors ---- */

bool qsf_qwp_dcol_is_null(const qsf_qwp_dcol *c, uint32_t row) {
    return c->bitmap_mode && ((c->null_bitmap[row >> 3] >> (row & 7)) & 1);
}

int64_t qsf_qwp_dcol_value_index(const qsf_qwp_dcol *c, uint32_t row) {
    if (!c->bitmap_mode)
        return row;
    uint8_t byte = c->null_bitmap[row >> 3];
    if ((byte >> (row & 7)) & 1)
        return -1;
    uint8_t below = (uint8_t) (byte & ((1u << (row & 7)) - 1));
    return (int64_t) c->rank[row >> 3] + (row & 7) - __builtin_popcount(below);
}

int64_t qsf_qwp_dcol_i64(const qsf_qwp_dcol *c, uint32_t vi) {
    const uint8_t *p = c->fixed;
    switch (c->type) {
    case QSF_QWP_BOOLEAN:
        return (p[vi >> 3] >> (vi & 7)) & 1;
    case QSF_QWP_BYTE:
        return (int8_t) p[vi];
    case QSF_QWP_SHORT:
        return (int16_t) qsf_get_u16(p + 2 * (size_t) vi);
    case QSF_QWP_CHAR:
        return qsf_get_u16(p + 2 * (size_t) vi);
    case QSF_QWP_INT:
        return (int32_t) qsf_get_u32(p + 4 * (size_t) vi);
    case QSF_QWP_IPV4:
        return qsf_get_u32(p + 4 * (size_t) vi);
    case QSF_QWP_SYMBOL:
        return c->sym_ids[vi];
    case QSF_QWP_GEOHASH: {
        uint64_t v = 0;
        size_t w = ((size_t) c->geohash_bits + 7) / 8;
        for (size_t i = 0; i < w; i++)
            v |= (uint64_t) p[vi * w + i] << (8 * i);
        return (int64_t) v;
    }
    default:
        if (qsf_qwp_type_width(c->type) == 8)
            return qsf_get_i64(p + 8 * (size_t) vi);
        return 0; /* not an integer type: see qsf_qwp_dcol_bytes */
    }
}

double qsf_qwp_dcol_f64(const qsf_qwp_dcol *c, uint32_t vi) {
    if (c->type != QSF_QWP_FLOAT && c->type != QSF_QWP_DOUBLE)
        return 0;
    if (c->type == QSF_QWP_FLOAT) {
        uint32_t bits = qsf_get_u32(c->fixed + 4 * (size_t) vi);
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    uint64_t bits = qsf_get_u64(c->fixed + 8 * (size_t) vi);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

void qsf_qwp_dcol_bytes(const qsf_qwp_dcol *c, uint32_t vi, const uint8_t **p, size_t *len) {
    if (c->type == QSF_QWP_SYMBOL) {
        *p = (const uint8_t *) c->sym_str[vi];
        *len = c->sym_len[vi];
    } else if (c->offs) {
        *p = c->var + c->offs[vi];
        *len = c->offs[vi + 1] - c->offs[vi];
    } else {
        size_t w = c->type == QSF_QWP_GEOHASH ? ((size_t) c->geohash_bits + 7) / 8
                                              : qsf_qwp_type_width(c->type);
        *p = c->fixed + w * vi;
        *len = w;
    }
}
