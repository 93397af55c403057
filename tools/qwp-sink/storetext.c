/* Stored values as text: one cell for queries, committed rows as JSON lines for
 * the append file, and the JSON string escaping the summary shares. */
#include "store.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static void hex(char *out, size_t cap, const uint8_t *p, uint32_t n) {
    size_t o = 0;
    for (uint32_t i = 0; i < n && o + 3 <= cap; i++)
        o += (size_t) snprintf(out + o, cap - o, "%02x", p[i]);
    if (cap > 0)
        out[o < cap ? o : cap - 1] = '\0';
}

/* FLOAT/DOUBLE as %.17g, strings as they are, integer-like types in decimal
 * (DECIMAL64 unscaled), every other byte value as lowercase hex of its wire
 * bytes. */
static void cell_text(const struct stable *t, const struct scol *c, const struct scell *x,
                      char *out, size_t cap) {
    int kind = msg_value_kind(c->type);
    const uint8_t *p = kind == MSG_BYTES ? t->arena.p + x->v.b.off : NULL;
    if (kind == MSG_F64)
        snprintf(out, cap, "%.17g", x->v.d);
    else if (kind == MSG_I64)
        snprintf(out, cap, "%" PRId64, x->v.i);
    else if (c->type == QT_SYMBOL || c->type == QT_VARCHAR)
        snprintf(out, cap, "%.*s", (int) x->v.b.len, (const char *) p);
    else
        hex(out, cap, p, x->v.b.len);
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

static int put_text(struct buf *b, const char *s) {
    return buf_append(b, s, strlen(s));
}

int json_string(struct buf *b, const char *s) {
    int rc = put_text(b, "\"");
    for (; *s && rc == 0; s++) {
        unsigned char ch = (unsigned char) *s;
        char esc[8] = {(char) ch, 0};
        if (ch == '"' || ch == '\\')
            snprintf(esc, sizeof esc, "\\%c", ch);
        else if (ch < 0x20)
            snprintf(esc, sizeof esc, "\\u%04x", ch);
        rc = put_text(b, esc);
    }
    return rc | put_text(b, "\"");
}

/* One JSON object per row: {"table":"t","col":"text",...}. Values are JSON
 * strings so every type round-trips without loss; null cells are JSON null. */
int stable_append_json(struct buf *b, const struct stable *t, int64_t first_row) {
    char v[4096];
    size_t live = buf_live(b); /* appending may compact b: count from its head */
    int rc = 0;
    for (int64_t r = first_row; r < t->rows && rc == 0; r++) {
        rc = put_text(b, "{\"table\":") | json_string(b, t->name);
        for (int c = 0; c < t->ncols; c++) {
            if (stable_cell_text(t, r, c, v, sizeof v) != 0)
                continue;
            rc |= put_text(b, ",") | json_string(b, t->cols[c].name) | put_text(b, ":");
            rc |= t->cols[c].cells[r].null ? put_text(b, "null") : json_string(b, v);
        }
        rc |= put_text(b, "}\n");
    }
    if (rc)
        b->len = b->off + live; /* no half row in the file */
    return rc ? -1 : 0;
}
