/* msg_decode on top of the QWP decoder (lib/qwpdec/decoder.h): the decoder does
 * every validation of docs/PROTOCOL.md §3-§5 and owns the connection dictionary;
 * this file turns its column views into msg_cell rows for the store.
 *
 * Sentinel-mode values that are QuestDB's null sentinels (docs/PROTOCOL.md §5.4) are reported as
 * nulls, as the server stores them. */
#include "msg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qwp/peek.h"
#include "qwpdec/decoder.h"

struct msg_ctx {
    int want_values;
    int ack_only;
    const char *only; /* with want_values 0: convert this column only */
    qsf_qwp_msg *m;
    qsf_qwp_dict *dict;
    struct msg_table *tables;
    size_t cap_tables;
    struct msg_col *cols;
    size_t cap_cols;
    struct msg_cell *cells;
    size_t cap_cells;
};

struct msg_ctx *msg_ctx_new(int want_values, const char *only_column) {
    struct msg_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->want_values = want_values;
    c->only = only_column;
    c->m = qsf_qwp_msg_new();
    c->dict = qsf_qwp_dict_new();
    if (!c->m || !c->dict) {
        msg_ctx_free(c);
        return NULL;
    }
    return c;
}

void msg_ctx_free(struct msg_ctx *c) {
    if (!c)
        return;
    qsf_qwp_msg_free(c->m);
    qsf_qwp_dict_free(c->dict);
    free(c->tables);
    free(c->cols);
    free(c->cells);
    free(c);
}

void msg_ctx_set_ack_only(struct msg_ctx *c, int on) {
    c->ack_only = on;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *np = realloc(*p, n * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = n;
    return 0;
}

static int is_sentinel(const qsf_qwp_dcol *c, const struct msg_cell *x) {
    if (c->bitmap_mode)
        return 0;
    switch (c->type) {
    case QT_INT:
        return x->i == INT32_MIN;
    case QT_LONG:
    case QT_DATE:
    case QT_TIMESTAMP:
    case QT_TIMESTAMP_NANOS:
        return x->i == INT64_MIN;
    case QT_FLOAT:
    case QT_DOUBLE:
        return isnan(x->d);
    case QT_IPV4:
        return x->i == 0;
    default:
        return 0;
    }
}

static void fill_cell(const qsf_qwp_dcol *c, uint32_t row, struct msg_cell *x) {
    memset(x, 0, sizeof *x);
    int64_t vi = qsf_qwp_dcol_value_index(c, row);
    if (vi < 0) {
        x->null = 1;
        return;
    }
    int kind = msg_value_kind(c->type);
    if (kind == MSG_F64) {
        x->d = qsf_qwp_dcol_f64(c, (uint32_t) vi);
    } else if (kind == MSG_BYTES) {
        size_t n = 0;
        qsf_qwp_dcol_bytes(c, (uint32_t) vi, &x->p, &n);
        x->n = (uint32_t) n;
    } else {
        x->i = qsf_qwp_dcol_i64(c, (uint32_t) vi);
    }
    x->null = (uint8_t) is_sentinel(c, x);
}

/* Whether the values of this column are converted. The designated timestamp
 * (empty name) goes by the store's name for it, "timestamp". */
static int wanted(const struct msg_ctx *ctx, const qsf_qwp_dcol *c) {
    if (ctx->want_values)
        return 1;
    if (!ctx->only)
        return 0;
    if (c->name_len == 0)
        return strcasecmp(ctx->only, "timestamp") == 0;
    return strlen(ctx->only) == c->name_len && strncasecmp(ctx->only, c->name, c->name_len) == 0;
}

/* Converts table t into ctx->tables[ti]; reserve() made the arrays big enough. */
static void convert_table(struct msg_ctx *ctx, const qsf_qwp_dtable *t, size_t ti, size_t *col_at,
                          size_t *cell_at) {
    struct msg_table *mt = &ctx->tables[ti];
    mt->name = t->name;
    mt->name_len = t->name_len;
    mt->rows = t->row_count;
    mt->ncols = t->col_count;
    mt->cols = &ctx->cols[*col_at];
    for (uint32_t c = 0; c < t->col_count; c++) {
        const qsf_qwp_dcol *dc = &t->cols[c];
        struct msg_col *mc = &ctx->cols[*col_at + c];
        mc->name = dc->name;
        mc->name_len = dc->name_len;
        mc->type = dc->type;
        mc->cells = NULL;
        if (!wanted(ctx, dc))
            continue;
        mc->cells = &ctx->cells[*cell_at];
        for (uint32_t r = 0; r < t->row_count; r++)
            fill_cell(dc, r, &ctx->cells[*cell_at + r]);
        *cell_at += t->row_count;
    }
    *col_at += t->col_count;
}

/* Reserves room for every table, column and wanted cell of the message. */
static int reserve(struct msg_ctx *ctx, uint32_t nt) {
    size_t ncols = 0, ncells = 0;
    for (uint32_t i = 0; i < nt; i++) {
        const qsf_qwp_dtable *t = qsf_qwp_msg_table(ctx->m, i);
        ncols += t->col_count;
        for (uint32_t c = 0; c < t->col_count; c++)
            ncells += wanted(ctx, &t->cols[c]) ? t->row_count : 0;
    }
    return grow((void **) &ctx->tables, &ctx->cap_tables, nt + 1, sizeof *ctx->tables) |
           grow((void **) &ctx->cols, &ctx->cap_cols, ncols + 1, sizeof *ctx->cols) |
           grow((void **) &ctx->cells, &ctx->cap_cells, ncells + 1, sizeof *ctx->cells);
}

/* ack_only: the header and the one table's name and row count, nothing else
 * read. 1 when done; 0 when the message needs the decoder (several tables, or
 * not readable this way: the decoder then says why). */
static int peek_only(struct msg_ctx *ctx, const uint8_t *msg, size_t len, struct msg_decoded *out) {
    qsf_qwp_hdr h;
    qsf_qwp_table_info t = {0};
    if (qsf_qwp_peek_header(msg, len, &h) != QSF_QWP_PEEK_OK || h.table_count > 1 ||
        !qsf_qwp_peek_consistent(&h, len) ||
        (h.table_count && qsf_qwp_peek_first_table(msg, len, &t) != QSF_QWP_PEEK_OK) ||
        grow((void **) &ctx->tables, &ctx->cap_tables, 1, sizeof *ctx->tables) != 0)
        return 0;
    ctx->tables[0] = (struct msg_table){
        .name = (const char *) msg + t.name, .name_len = t.name_len, .rows = (uint32_t) t.rows};
    out->flags = h.flags;
    out->ntables = h.table_count;
    out->tables = ctx->tables;
    return 1;
}

int msg_decode(struct msg_ctx *ctx, const uint8_t *msg, size_t len, uint8_t version,
               struct msg_decoded *out, char *err, size_t errcap) {
    if (ctx->ack_only && peek_only(ctx, msg, len, out))
        return QS_OK;
    qsf_qwp_decode_opts o = {.version = version};
    qsf_qwp_decode_result res;
    if (qsf_qwp_decode(ctx->m, ctx->dict, msg, len, &o, &res) != 0 ||
        res.status != QSF_QWP_STATUS_OK) {
        /* the decoder's text may be longer than err: keep what fits */
        size_t n = strnlen(res.message, sizeof res.message);
        if (n >= errcap)
            n = errcap - 1;
        memcpy(err, res.message, n);
        err[n] = '\0';
        return res.status ? res.status : QS_PARSE_ERROR;
    }
    uint32_t nt = qsf_qwp_msg_table_count(ctx->m);
    if (reserve(ctx, nt) != 0) {
        snprintf(err, errcap, "out of memory decoding %u tables", nt);
        return QS_INTERNAL_ERROR;
    }
    size_t col_at = 0, cell_at = 0;
    for (uint32_t i = 0; i < nt; i++)
        convert_table(ctx, qsf_qwp_msg_table(ctx->m, i), i, &col_at, &cell_at);
    out->flags = qsf_qwp_msg_flags(ctx->m);
    out->ntables = (uint16_t) nt;
    out->tables = ctx->tables;
    return QS_OK;
}
