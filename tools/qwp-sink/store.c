/* Rows per table (see store.h for the layout). */
#include "store.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bytes.h"

void store_init(struct store *s, int keep_values) {
    memset(s, 0, sizeof *s);
    s->keep_values = keep_values;
}

static void table_free(struct stable *t) {
    for (int c = 0; c < t->ncols; c++)
        free(t->cols[c].cells);
    free(t->cols);
    free(t->commits);
    buf_free(&t->arena);
    free(t);
}

void store_clear(struct store *s) {
    for (int i = 0; i < s->n; i++)
        table_free(s->t[i]);
    free(s->t);
    s->t = NULL;
    s->n = 0;
}

void store_free(struct store *s) {
    store_clear(s);
}

static int name_eq(const char *a, const char *b, size_t blen) {
    return strlen(a) == blen && strncasecmp(a, b, blen) == 0;
}

struct stable *store_find(const struct store *s, const char *name, size_t len) {
    for (int i = 0; i < s->n; i++)
        if (name_eq(s->t[i]->name, name, len))
            return s->t[i];
    return NULL;
}

static struct stable *table_get(struct store *s, const char *name, size_t len) {
    struct stable *t = store_find(s, name, len);
    if (t)
        return t;
    struct stable **nt = realloc(s->t, (size_t) (s->n + 1) * sizeof *nt);
    if (!nt)
        return NULL;
    s->t = nt;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    len = len < sizeof t->name - 1 ? len : sizeof t->name - 1;
    memcpy(t->name, name, len);
    s->t[s->n++] = t;
    return t;
}

/* A designated timestamp has an empty name on the wire; QuestDB calls it
 * "timestamp". */
static void col_name(char *dst, size_t cap, const char *name, size_t len) {
    if (len == 0) {
        snprintf(dst, cap, "timestamp");
        return;
    }
    len = len < cap - 1 ? len : cap - 1;
    memcpy(dst, name, len);
    dst[len] = '\0';
}

int stable_col(const struct stable *t, const char *name) {
    for (int c = 0; c < t->ncols; c++)
        if (strcasecmp(t->cols[c].name, name) == 0)
            return c;
    return -1;
}

static const char *type_name(uint8_t type) {
    static const char *names[] = {"?",
                                  "BOOLEAN",
                                  "BYTE",
                                  "SHORT",
                                  "INT",
                                  "LONG",
                                  "FLOAT",
                                  "DOUBLE",
                                  "?",
                                  "SYMBOL",
                                  "TIMESTAMP",
                                  "DATE",
                                  "UUID",
                                  "LONG256",
                                  "GEOHASH",
                                  "VARCHAR",
                                  "TIMESTAMP_NANOS",
                                  "DOUBLE_ARRAY",
                                  "LONG_ARRAY",
                                  "DECIMAL64",
                                  "DECIMAL128",
                                  "DECIMAL256",
                                  "CHAR",
                                  "BINARY",
                                  "IPv4"};
    return type < sizeof names / sizeof names[0] ? names[type] : "?";
}

int store_check_schema(const struct store *s, const struct msg_table *t, char *err, size_t cap) {
    const struct stable *st = store_find(s, t->name, t->name_len);
    if (!st)
        return 0;
    for (uint32_t c = 0; c < t->ncols; c++) {
        char nm[128];
        col_name(nm, sizeof nm, t->cols[c].name, t->cols[c].name_len);
        int i = stable_col(st, nm);
        if (i >= 0 && st->cols[i].type != t->cols[c].type) {
            snprintf(err, cap, "column '%s' of table '%s' is %s, cannot write %s", nm, st->name,
                     type_name(st->cols[i].type), type_name(t->cols[c].type));
            return -1;
        }
    }
    return 0;
}

/* Index of the named column, adding it (null for every earlier row) if new. */
static int col_get(struct stable *t, const char *name, uint8_t type) {
    int i = stable_col(t, name);
    if (i >= 0)
        return i;
    struct scol *nc = realloc(t->cols, (size_t) (t->ncols + 1) * sizeof *nc);
    if (!nc)
        return -1;
    t->cols = nc;
    struct scol *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    c->type = type;
    return t->ncols++;
}

/* Grows every column to hold `rows` cells; new cells are null. */
static int cells_reserve(struct stable *t, int64_t rows) {
    for (int ci = 0; ci < t->ncols; ci++) {
        struct scol *c = &t->cols[ci];
        if ((size_t) rows <= c->cap)
            continue;
        size_t ncap = c->cap ? c->cap : 64;
        while (ncap < (size_t) rows)
            ncap *= 2;
        struct scell *n = realloc(c->cells, ncap * sizeof *n);
        if (!n)
            return -1;
        for (size_t r = c->cap; r < ncap; r++)
            n[r] = (struct scell){.null = 1};
        c->cells = n;
        c->cap = ncap;
    }
    return 0;
}

static int put_cell(struct stable *t, struct scell *dst, uint8_t null, int64_t i, double d,
                    const uint8_t *p, uint32_t n) {
    *dst = (struct scell){.i = i, .d = d, .null = null};
    if (null || !p)
        return 0;
    dst->off = (uint32_t) t->arena.len;
    dst->len = n;
    return buf_append(&t->arena, p, n);
}

int store_add(struct store *s, const struct msg_table *mt) {
    struct stable *t = table_get(s, mt->name, mt->name_len);
    if (!t)
        return -1;
    int idx[2048];
    for (uint32_t c = 0; c < mt->ncols && c < 2048; c++) {
        char nm[128];
        col_name(nm, sizeof nm, mt->cols[c].name, mt->cols[c].name_len);
        if ((idx[c] = col_get(t, nm, mt->cols[c].type)) < 0)
            return -1;
    }
    if (s->keep_values) {
        if (cells_reserve(t, t->rows + mt->rows) != 0)
            return -1;
        for (uint32_t c = 0; c < mt->ncols && c < 2048; c++) {
            struct scell *cells = t->cols[idx[c]].cells + t->rows;
            for (uint32_t r = 0; r < mt->rows; r++) {
                const struct msg_cell *m = &mt->cols[c].cells[r];
                if (put_cell(t, &cells[r], m->null, m->i, m->d, m->p, m->n) != 0)
                    return -1;
            }
        }
    }
    t->rows += mt->rows;
    return 0;
}

/* Appends every row of src (a staged table) to dst. */
static int table_merge(struct store *s, struct stable *dst, const struct stable *src) {
    int64_t base = dst->rows;
    for (int c = 0; c < src->ncols; c++) {
        int di = col_get(dst, src->cols[c].name, src->cols[c].type);
        if (di < 0)
            return -1;
        if (!s->keep_values || !src->cols[c].cells)
            continue;
        if (cells_reserve(dst, base + src->rows) != 0)
            return -1;
        for (int64_t r = 0; r < src->rows; r++) {
            const struct scell *x = &src->cols[c].cells[r];
            const uint8_t *p = x->len || !x->null ? src->arena.p + x->off : NULL;
            if (put_cell(dst, &dst->cols[di].cells[base + r], x->null, x->i, x->d,
                         x->len ? p : NULL, x->len) != 0)
                return -1;
        }
    }
    if (s->keep_values && cells_reserve(dst, base + src->rows) != 0)
        return -1;
    dst->rows += src->rows;
    return 0;
}

static int log_commit(struct stable *t, int64_t now_ms) {
    if (t->ncommits == t->capcommits) {
        size_t ncap = t->capcommits ? t->capcommits * 2 : 16;
        struct scommit *n = realloc(t->commits, ncap * sizeof *n);
        if (!n)
            return -1;
        t->commits = n;
        t->capcommits = ncap;
    }
    t->commits[t->ncommits++] = (struct scommit){++t->seq_txn, now_ms};
    return 0;
}

static void append_rows(FILE *f, const struct stable *t);

int store_commit(struct store *dst, struct store *staging, int64_t now_ms,
                 void (*on_commit)(void *user, const struct stable *t), void *user) {
    int rc = 0;
    for (int i = 0; i < staging->n && rc == 0; i++) {
        const struct stable *src = staging->t[i];
        struct stable *d = table_get(dst, src->name, strlen(src->name));
        if (!d || table_merge(dst, d, src) != 0 || log_commit(d, now_ms) != 0) {
            rc = -1;
            break;
        }
        if (dst->append)
            append_rows(dst->append, src);
        if (on_commit)
            on_commit(user, d);
    }
    store_clear(staging);
    return rc;
}

int64_t store_rows_total(const struct store *s) {
    int64_t n = 0;
    for (int i = 0; i < s->n; i++)
        n += s->t[i]->rows;
    return n;
}

static void hex(char *out, size_t cap, const uint8_t *p, uint32_t n) {
    size_t o = 0;
    for (uint32_t i = 0; i < n && o + 3 <= cap; i++)
        o += (size_t) snprintf(out + o, cap - o, "%02x", p[i]);
    if (o < cap)
        out[o] = '\0';
}

static void cell_text(const struct stable *t, const struct scol *c, const struct scell *x,
                      char *out, size_t cap) {
    const uint8_t *p = t->arena.p + x->off;
    switch (c->type) {
    case QT_FLOAT:
    case QT_DOUBLE:
        snprintf(out, cap, "%.17g", x->d);
        break;
    case QT_SYMBOL:
    case QT_VARCHAR:
        snprintf(out, cap, "%.*s", (int) x->len, (const char *) p);
        break;
    case QT_BINARY:
    case QT_UUID:
    case QT_LONG256:
    case QT_GEOHASH:
    case QT_DOUBLE_ARRAY:
    case QT_LONG_ARRAY:
    case QT_DECIMAL64:
    case QT_DECIMAL128:
    case QT_DECIMAL256:
        hex(out, cap, p, x->len);
        break;
    default:
        snprintf(out, cap, "%" PRId64, x->i);
    }
}

int stable_cell_text(const struct stable *t, int64_t row, int col, char *out, size_t cap) {
    if (row < 0 || row >= t->rows || col < 0 || col >= t->ncols || !t->cols[col].cells)
        return -1;
    const struct scell *x = &t->cols[col].cells[row];
    if (x->null)
        snprintf(out, cap, "null");
    else
        cell_text(t, &t->cols[col], x, out, cap);
    return 0;
}

/* One JSON object per row: {"table":"t","col":"text",...}. Values are written
 * as JSON strings so every type round-trips without loss. */
static void append_rows(FILE *f, const struct stable *t) {
    char v[4096];
    for (int64_t r = 0; r < t->rows; r++) {
        fprintf(f, "{\"table\":\"%s\"", t->name);
        for (int c = 0; c < t->ncols; c++) {
            if (stable_cell_text(t, r, c, v, sizeof v) != 0)
                continue;
            fprintf(f, ",\"%s\":\"", t->cols[c].name);
            for (const char *s = v; *s; s++)
                fprintf(f,
                        (*s == '"' || *s == '\\') ? "\\%c"
                                                  : ((unsigned char) *s < 0x20 ? "\\u%04x" : "%c"),
                        *s);
            fputc('"', f);
        }
        fputs("}\n", f);
    }
}

int64_t stable_durable_txn(const struct stable *t, int lag_count, int64_t lag_ms, int64_t now_ms) {
    if ((int64_t) t->ncommits <= lag_count)
        return 0;
    for (size_t i = t->ncommits - (size_t) lag_count; i-- > 0;)
        if (t->commits[i].ms + lag_ms <= now_ms)
            return t->commits[i].txn;
    return 0;
}
