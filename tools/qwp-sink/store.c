/* Rows per table (see store.h for the layout). */
#include "store.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

void store_init(struct store *s, int keep_values, const char *key) {
    memset(s, 0, sizeof *s);
    s->keep_values = keep_values;
    s->key = key;
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

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Column arrays grow by doubling and their new part is then written row by row.
 * Faulting those pages in one call is much cheaper than one fault per 4 KiB
 * page (notably in virtual machines). Advisory: an old kernel ignores it. */
static void prefault(void *p, size_t from, size_t to) {
    const uintptr_t pg = 4096;
    if (to - from < (1u << 20))
        return;
    uintptr_t a = ((uintptr_t) p + from + pg - 1) & ~(pg - 1);
    uintptr_t e = ((uintptr_t) p + to) & ~(pg - 1);
    if (e > a)
        madvise((void *) a, e - a, MADV_POPULATE_WRITE);
}

/* Grows every kept column to hold `rows` cells (undefined until written). */
static int cells_reserve(struct stable *t, int64_t rows) {
    for (int ci = 0; ci < t->ncols; ci++) {
        struct scol *c = &t->cols[ci];
        if (!c->kept || (size_t) rows <= c->cap)
            continue;
        size_t ncap = c->cap ? c->cap : 64;
        while (ncap < (size_t) rows)
            ncap *= 2;
        struct scell *n = realloc(c->cells, ncap * sizeof *n);
        if (!n)
            return -1;
        prefault(n, c->cap * sizeof *n, ncap * sizeof *n);
        c->cells = n;
        c->cap = ncap;
    }
    return 0;
}

static void set_null(struct scol *c, int64_t from, int64_t to) {
    for (int64_t r = from; r < to; r++)
        c->cells[r] = (struct scell){.null = 1};
}

/* Index of the named column, adding it if new: when its values are kept, its
 * cells for the rows already stored are null. */
static int col_get(struct store *s, struct stable *t, const char *name, uint8_t type) {
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
    c->kept = (uint8_t) (s->keep_values || (s->key && strcasecmp(name, s->key) == 0));
    i = t->ncols++;
    if (c->kept && t->rows > 0) {
        if (cells_reserve(t, t->rows) != 0)
            return -1;
        set_null(c, 0, t->rows);
    }
    return i;
}

static int put_cell(struct stable *t, struct scell *dst, int kind, uint8_t null, int64_t i,
                    double d, const uint8_t *p, uint32_t n) {
    dst->null = null;
    if (kind == MSG_F64)
        dst->v.d = d;
    else if (kind == MSG_I64)
        dst->v.i = i;
    if (kind != MSG_BYTES || null)
        return 0;
    dst->v.b.off = (uint32_t) t->arena.len;
    dst->v.b.len = n;
    return n ? buf_append(&t->arena, p, n) : 0;
}

/* Makes room for n more rows; columns the new rows do not write (written[c]
 * == 0) become null there. */
static int rows_reserve(struct stable *t, const uint8_t *written, int64_t n) {
    if (cells_reserve(t, t->rows + n) != 0)
        return -1;
    for (int c = 0; c < t->ncols; c++)
        if (!written[c] && t->cols[c].kept)
            set_null(&t->cols[c], t->rows, t->rows + n);
    return 0;
}

/* Appends the rows of a decoded table block to table t. */
static int table_add(struct store *s, struct stable *t, const struct msg_table *mt) {
    int idx[2048];
    uint8_t written[2048] = {0};
    if (mt->ncols > 2048)
        return -1;
    for (uint32_t c = 0; c < mt->ncols; c++) {
        char nm[128];
        col_name(nm, sizeof nm, mt->cols[c].name, mt->cols[c].name_len);
        if ((idx[c] = col_get(s, t, nm, mt->cols[c].type)) < 0 || idx[c] >= 2048)
            return -1;
        written[idx[c]] = 1;
    }
    if (mt->rows > 0) {
        if (rows_reserve(t, written, mt->rows) != 0)
            return -1;
        for (uint32_t c = 0; c < mt->ncols; c++) {
            if (!mt->cols[c].cells || !t->cols[idx[c]].kept)
                continue;
            struct scell *cells = t->cols[idx[c]].cells + t->rows;
            int kind = msg_value_kind(mt->cols[c].type);
            for (uint32_t r = 0; r < mt->rows; r++) {
                const struct msg_cell *m = &mt->cols[c].cells[r];
                if (put_cell(t, &cells[r], kind, m->null, m->i, m->d, m->p, m->n) != 0)
                    return -1;
            }
        }
    }
    t->rows += mt->rows;
    return 0;
}

int store_add(struct store *s, const struct msg_table *mt) {
    struct stable *t = table_get(s, mt->name, mt->name_len);
    return t ? table_add(s, t, mt) : -1;
}

/* Appends every row of src (a staged table) to dst. */
static int table_merge(struct store *s, struct stable *dst, const struct stable *src) {
    int idx[2048];
    uint8_t written[2048] = {0};
    for (int c = 0; c < src->ncols; c++) {
        if ((idx[c] = col_get(s, dst, src->cols[c].name, src->cols[c].type)) < 0 || idx[c] >= 2048)
            return -1;
        written[idx[c]] = 1;
    }
    if (src->rows > 0) {
        if (rows_reserve(dst, written, src->rows) != 0)
            return -1;
        for (int c = 0; c < src->ncols; c++) {
            if (!src->cols[c].cells || !dst->cols[idx[c]].kept)
                continue;
            struct scell *out = dst->cols[idx[c]].cells + dst->rows;
            int kind = msg_value_kind(src->cols[c].type);
            for (int64_t r = 0; r < src->rows; r++) {
                const struct scell *x = &src->cols[c].cells[r];
                int bytes = kind == MSG_BYTES && !x->null;
                if (put_cell(dst, &out[r], kind, x->null, x->v.i, x->v.d,
                             bytes ? src->arena.p + x->v.b.off : NULL, bytes ? x->v.b.len : 0) != 0)
                    return -1;
            }
        }
    }
    dst->rows += src->rows;
    return 0;
}

static int log_commit(struct store *s, struct stable *t, int64_t now_ms) {
    ++t->seq_txn;
    if (!s->log_commits)
        return 0;
    if (t->ncommits == t->capcommits) {
        struct scommit *n = qsf_grow(t->commits, &t->capcommits, 16);
        if (!n)
            return -1;
        t->commits = n;
    }
    t->commits[t->ncommits++] = (struct scommit){t->seq_txn, now_ms};
    return 0;
}

/* Bookkeeping of one table commit: txn log, append file (rows from `rows`,
 * starting at first_row), callback. */
static int committed(struct store *dst, struct stable *t, const struct stable *rows,
                     int64_t first_row, int64_t now_ms, store_commit_cb on_commit, void *user) {
    if (log_commit(dst, t, now_ms) != 0)
        return -1;
    if (dst->append && stable_append_json(&dst->append->pend, rows, first_row) != 0)
        return -1;
    if (on_commit)
        on_commit(user, t);
    return 0;
}

int store_commit(struct store *dst, struct store *staging, int64_t now_ms,
                 store_commit_cb on_commit, void *user) {
    int rc = 0;
    for (int i = 0; i < staging->n && rc == 0; i++) {
        const struct stable *src = staging->t[i];
        struct stable *d = table_get(dst, src->name, strlen(src->name));
        rc = d && table_merge(dst, d, src) == 0 ? committed(dst, d, src, 0, now_ms, on_commit, user)
                                                : -1;
    }
    store_clear(staging);
    return rc;
}

int store_can_commit_direct(const struct store *dst) {
    return dst->keep_values || !dst->append;
}

int store_commit_direct(struct store *dst, const struct msg_table *t, int n, int64_t now_ms,
                        store_commit_cb on_commit, void *user) {
    for (int i = 0; i < n; i++) {
        if (t[i].rows == 0)
            continue;
        struct stable *d = table_get(dst, t[i].name, t[i].name_len);
        int64_t first = d ? d->rows : 0;
        if (!d || table_add(dst, d, &t[i]) != 0 ||
            committed(dst, d, d, first, now_ms, on_commit, user) != 0)
            return -1;
    }
    return 0;
}

int64_t store_rows_total(const struct store *s) {
    int64_t n = 0;
    for (int i = 0; i < s->n; i++)
        n += s->t[i]->rows;
    return n;
}

int64_t stable_durable_txn(struct stable *t, int lag_count, int64_t lag_ms, int64_t now_ms) {
    if ((int64_t) t->ncommits <= lag_count)
        return 0;
    for (size_t i = t->ncommits - (size_t) lag_count; i-- > 0;) {
        if (t->commits[i].ms + lag_ms > now_ms)
            continue;
        /* Time only moves forward, so nothing before i can be the answer again:
         * drop it (keeps the log as short as the lag). */
        memmove(t->commits, t->commits + i, (t->ncommits - i) * sizeof *t->commits);
        t->ncommits -= i;
        return t->commits[0].txn;
    }
    return 0;
}
