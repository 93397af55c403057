/* The embedding API's queries, wait helpers and JSON summary. Each takes the
 * sink's lock. */
#include "sink_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void qsink_get_stats(qsink *s, qsink_stats *out) {
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    pthread_mutex_unlock(&s->mu);
}

static struct stable *table(qsink *s, const char *name) {
    return name ? store_find(&s->store, name, strlen(name)) : NULL;
}

/* A committed table's rows, or its commits (seqTxn); 0 if unknown. */
static int64_t table_count(qsink *s, const char *name, int commits) {
    pthread_mutex_lock(&s->mu);
    struct stable *t = table(s, name);
    int64_t n = !t ? 0 : commits ? t->seq_txn : t->rows;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int64_t qsink_rows(qsink *s, const char *name) {
    return table_count(s, name, 0);
}

int64_t qsink_commits(qsink *s, const char *name) {
    return table_count(s, name, 1);
}

int64_t qsink_staged_rows(qsink *s, const char *name) {
    pthread_mutex_lock(&s->mu);
    int64_t n = 0;
    for (struct conn *c = s->conns; c; c = c->next) {
        struct stable *t = name ? store_find(&c->staging, name, strlen(name)) : NULL;
        n += t ? t->rows : 0;
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

int qsink_table_count(qsink *s) {
    pthread_mutex_lock(&s->mu);
    int n = s->store.n;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int qsink_table_name(qsink *s, int i, char *out, size_t cap) {
    pthread_mutex_lock(&s->mu);
    int rc = -1;
    if (i >= 0 && i < s->store.n) {
        snprintf(out, cap, "%s", s->store.t[i]->name);
        rc = 0;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int qsink_cell(qsink *s, const char *name, int64_t row, const char *column, char *out, size_t cap) {
    pthread_mutex_lock(&s->mu);
    struct stable *t = table(s, name);
    int rc = t ? stable_cell_text(t, row, stable_col(t, column), out, cap) : -1;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int qsink_column_type(qsink *s, const char *name, const char *column) {
    pthread_mutex_lock(&s->mu);
    struct stable *t = table(s, name);
    int c = t ? stable_col(t, column) : -1;
    int type = c >= 0 ? t->cols[c].type : -1;
    pthread_mutex_unlock(&s->mu);
    return type;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *) a, *(char *const *) b);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;
    return (x > y) - (x < y);
}

/* Integer and floating keys: sort their 64-bit patterns (a double compares
 * equal exactly when its bits do, NaNs aside) and count equal neighbours. */
static int64_t count_dups_num(const struct stable *t, int col) {
    int64_t *k = malloc(((size_t) t->rows + 1) * sizeof *k);
    int64_t n = 0, dups = 0;
    if (!k)
        return -1;
    for (int64_t r = 0; r < t->rows; r++)
        if (!t->cols[col].cells[r].null)
            k[n++] = t->cols[col].cells[r].v.i;
    qsort(k, (size_t) n, sizeof *k, cmp_i64);
    for (int64_t r = 1; r < n; r++)
        dups += k[r] == k[r - 1];
    free(k);
    return dups;
}

/* Other keys: sort their text. Null keys are not counted. */
static int64_t count_dups(const struct stable *t, int col) {
    if (msg_value_kind(t->cols[col].type) != MSG_BYTES)
        return count_dups_num(t, col);
    char **keys = calloc((size_t) t->rows + 1, sizeof *keys);
    int64_t n = 0, dups = 0;
    if (!keys)
        return -1;
    char v[512];
    for (int64_t r = 0; r < t->rows; r++)
        if (!t->cols[col].cells[r].null && stable_cell_text(t, r, col, v, sizeof v) == 0)
            keys[n++] = strdup(v);
    qsort(keys, (size_t) n, sizeof *keys, cmp_str);
    for (int64_t r = 1; r < n; r++)
        dups += keys[r] && keys[r - 1] && strcmp(keys[r], keys[r - 1]) == 0;
    for (int64_t r = 0; r < n; r++)
        free(keys[r]);
    free(keys);
    return dups;
}

int64_t qsink_duplicates(qsink *s, const char *name, const char *key) {
    pthread_mutex_lock(&s->mu);
    struct stable *t = table(s, name);
    int c = t ? stable_col(t, key) : -1;
    int64_t n = c >= 0 && t->cols[c].cells ? count_dups(t, c) : -1;
    if (c >= 0 && t->rows == 0)
        n = 0;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Compares the key cells of rows a and b of column c: <0, 0, >0. */
static int key_cmp(const struct stable *t, int c, int64_t a, int64_t b) {
    const struct scell *x = &t->cols[c].cells[a], *y = &t->cols[c].cells[b];
    if (x->null || y->null)
        return x->null - y->null;
    switch (msg_value_kind(t->cols[c].type)) {
    case MSG_I64:
        return (x->v.i > y->v.i) - (x->v.i < y->v.i);
    case MSG_F64:
        return (x->v.d > y->v.d) - (x->v.d < y->v.d);
    default: {
        char va[512], vb[512];
        stable_cell_text(t, a, c, va, sizeof va);
        stable_cell_text(t, b, c, vb, sizeof vb);
        return strcmp(va, vb);
    }
    }
}

int64_t qsink_first_out_of_order(qsink *s, const char *name, const char *key) {
    pthread_mutex_lock(&s->mu);
    struct stable *t = table(s, name);
    int c = t ? stable_col(t, key) : -1;
    int64_t at = -2;
    if (c >= 0 && (t->cols[c].cells || t->rows == 0)) {
        at = -1;
        for (int64_t r = 1; r < t->rows && at < 0; r++)
            if (key_cmp(t, c, r, r - 1) <= 0)
                at = r;
    }
    pthread_mutex_unlock(&s->mu);
    return at;
}

static struct crec *crec_of(qsink *s, int conn) {
    for (int i = 0; i < s->nrecs; i++)
        if (s->recs[i]->conn == conn)
            return s->recs[i];
    return NULL;
}

int64_t qsink_frames(qsink *s, int conn, qsink_frame *out, size_t cap) {
    pthread_mutex_lock(&s->mu);
    struct crec *r = crec_of(s, conn);
    int64_t n = r ? (int64_t) r->n : -1;
    for (size_t i = 0; r && i < r->n && i < cap; i++)
        out[i] = r->f[i].f;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int64_t qsink_frame_payload(qsink *s, int conn, int64_t i, uint8_t *out, size_t cap) {
    pthread_mutex_lock(&s->mu);
    struct crec *r = crec_of(s, conn);
    int64_t n = -1;
    if (r && i >= 0 && (size_t) i < r->n && r->f[i].payload) {
        n = r->f[i].f.size;
        memcpy(out, r->f[i].payload, (size_t) n < cap ? (size_t) n : cap);
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

int64_t qsink_errors(qsink *s, qsink_error *out, size_t cap) {
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nerrs && i < cap; i++)
        out[i] = s->errs[i];
    int64_t n = (int64_t) s->nerrs;
    pthread_mutex_unlock(&s->mu);
    return n;
}

int qsink_last_request(qsink *s, char *out, size_t cap) {
    pthread_mutex_lock(&s->mu);
    int n = snprintf(out, cap, "%s", s->last_request);
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* ---- waits ---- */

enum { W_ROWS, W_CONNS, W_UPGRADES, W_FRAMES, W_IDLE };

/* The count a wait watches (-1: no such table yet). */
static int64_t count_of(qsink *s, int what, const char *name) {
    switch (what) {
    case W_ROWS: {
        struct stable *t = table(s, name);
        return t ? t->rows : -1;
    }
    case W_CONNS:
        return s->st.accepted;
    case W_UPGRADES:
        return s->st.upgrades;
    case W_IDLE:
        return s->st.open;
    default:
        return s->st.frames;
    }
}

static int reached(int what, int64_t count, int64_t n) {
    return what == W_IDLE ? count == 0 : count >= n;
}

/* timeout_ms from now on the condition variable's clock (CLOCK_MONOTONIC). */
static struct timespec deadline_in(int timeout_ms) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long) (timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    return dl;
}

/* Waits on the loop's broadcast (every turn) until the count reaches n; each
 * change of the count restarts the timeout, so only a stall ends the wait: a
 * slow machine makes it longer, never a failure. */
static int wait_for(qsink *s, int what, const char *name, int64_t n, int timeout_ms) {
    pthread_mutex_lock(&s->mu);
    int64_t count = count_of(s, what, name), mark = count;
    struct timespec dl = deadline_in(timeout_ms);
    int rc = 0;
    while (!reached(what, count, n) && rc == 0) {
        rc = pthread_cond_timedwait(&s->cv, &s->mu, &dl);
        count = count_of(s, what, name);
        if (count != mark) {
            mark = count;
            dl = deadline_in(timeout_ms);
            rc = 0;
        }
    }
    int ok = reached(what, count, n);
    pthread_mutex_unlock(&s->mu);
    return ok ? 0 : -1;
}

int qsink_wait_rows(qsink *s, const char *name, int64_t n, int timeout_ms) {
    return wait_for(s, W_ROWS, name, n, timeout_ms);
}

int qsink_wait_connections(qsink *s, int64_t n, int timeout_ms) {
    return wait_for(s, W_CONNS, NULL, n, timeout_ms);
}

int qsink_wait_upgrades(qsink *s, int64_t n, int timeout_ms) {
    return wait_for(s, W_UPGRADES, NULL, n, timeout_ms);
}

int qsink_wait_frames(qsink *s, int64_t n, int timeout_ms) {
    return wait_for(s, W_FRAMES, NULL, n, timeout_ms);
}

int qsink_wait_idle(qsink *s, int timeout_ms) {
    return wait_for(s, W_IDLE, NULL, 0, timeout_ms);
}

/* ---- summary ---- */

static void put_json_string(FILE *f, const char *name) {
    struct buf b = {0};
    if (json_string(&b, name) == 0)
        fwrite(b.p, 1, b.len, f);
    buf_free(&b);
}

/* ,"duplicates":{"t":n,...} for the tables that have the key column. */
static void summary_dups(qsink *s, FILE *f) {
    if (!s->o.key_column)
        return;
    fputs(",\"duplicates\":{", f);
    int first = 1;
    for (int i = 0; i < s->store.n; i++) {
        const struct stable *t = s->store.t[i];
        int c = stable_col(t, s->o.key_column);
        if (c < 0 || !t->cols[c].cells)
            continue;
        fputs(first ? "" : ",", f);
        put_json_string(f, t->name);
        fprintf(f, ":%" PRId64, count_dups(t, c));
        first = 0;
    }
    fputc('}', f);
}

int qsink_summary_json(qsink *s, char *out, size_t cap) {
    char *mem = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&mem, &len);
    if (!f)
        return -1;
    pthread_mutex_lock(&s->mu);
    const qsink_stats *st = &s->st;
    fprintf(f,
            "{\"connections\":%" PRId64 ",\"upgrades\":%" PRId64 ",\"rejected\":%" PRId64
            ",\"frames\":%" PRId64 ",\"bytes\":%" PRId64 ",\"rows\":{",
            st->accepted, st->upgrades, st->rejected, st->frames, st->bytes);
    for (int i = 0; i < s->store.n; i++) {
        fputs(i ? "," : "", f);
        put_json_string(f, s->store.t[i]->name);
        fprintf(f, ":%" PRId64, s->store.t[i]->rows);
    }
    fprintf(f, "}");
    summary_dups(s, f);
    if (s->store.append) /* rows and duplicates above are this run's only */
        fprintf(f, ",\"append_rows_before_start\":%lld", s->store.append->rows_before);
    fprintf(f,
            ",\"oks\":%" PRId64 ",\"errors\":%" PRId64 ",\"durable_acks\":%" PRId64
            ",\"closes\":%" PRId64 ",\"open\":%" PRId64 "}",
            st->oks, st->errors, st->durable_acks, st->closes, st->open);
    pthread_mutex_unlock(&s->mu);
    fclose(f);
    if (cap > 0)
        snprintf(out, cap, "%s", mem);
    free(mem);
    return (int) len;
}
