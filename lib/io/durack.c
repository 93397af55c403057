/* Durable-ack matching: a FIFO of OKs and a per-table watermark map. */
#include "io/durack.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct entry {
    char *name; /* NUL-terminated copy */
    int64_t seq_txn;
} entry;

typedef struct queued_ok {
    int64_t fsn;
    entry *tables;
    size_t n;
} queued_ok;

struct qsf_durack {
    queued_ok *q; /* ring buffer of OKs */
    size_t head, count, cap;
    entry *marks; /* durable watermark per table */
    size_t nmarks, capmarks;
};

qsf_durack *qsf_durack_new(void) {
    return calloc(1, sizeof(qsf_durack));
}

static void free_ok(queued_ok *o) {
    for (size_t i = 0; i < o->n; i++)
        free(o->tables[i].name);
    free(o->tables);
    o->tables = NULL;
    o->n = 0;
}

void qsf_durack_reset(qsf_durack *d) {
    for (size_t i = 0; i < d->count; i++)
        free_ok(&d->q[(d->head + i) % d->cap]);
    d->head = d->count = 0;
    for (size_t i = 0; i < d->nmarks; i++)
        free(d->marks[i].name);
    d->nmarks = 0;
}

void qsf_durack_free(qsf_durack *d) {
    if (!d)
        return;
    qsf_durack_reset(d);
    free(d->q);
    free(d->marks);
    free(d);
}

static char *dup_name(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

static int grow_queue(qsf_durack *d) {
    size_t cap = d->cap ? d->cap * 2 : 16;
    queued_ok *nq = malloc(cap * sizeof *nq);
    if (!nq)
        return -1;
    for (size_t i = 0; i < d->count; i++)
        nq[i] = d->q[(d->head + i) % d->cap];
    free(d->q);
    d->q = nq;
    d->cap = cap;
    d->head = 0;
    return 0;
}

int qsf_durack_push_ok(qsf_durack *d, int64_t ok_fsn, const qsf_response *ok) {
    if (d->count == d->cap && grow_queue(d) < 0)
        return -1;
    queued_ok o = {ok_fsn, NULL, 0};
    if (ok->table_count) {
        o.tables = calloc(ok->table_count, sizeof *o.tables);
        if (!o.tables)
            return -1;
    }
    size_t pos = 0;
    qsf_resp_table t;
    while (qsf_response_table(ok, &pos, &t)) {
        o.tables[o.n].name = dup_name(t.name, t.name_len);
        o.tables[o.n].seq_txn = t.seq_txn;
        if (!o.tables[o.n++].name) {
            free_ok(&o);
            return -1;
        }
    }
    d->q[(d->head + d->count++) % d->cap] = o;
    return 0;
}

static entry *find_mark(qsf_durack *d, const char *name, size_t n) {
    for (size_t i = 0; i < d->nmarks; i++)
        if (strlen(d->marks[i].name) == n && strncasecmp(d->marks[i].name, name, n) == 0)
            return &d->marks[i];
    return NULL;
}

static int merge_mark(qsf_durack *d, const qsf_resp_table *t) {
    entry *e = find_mark(d, t->name, t->name_len);
    if (e) {
        if (t->seq_txn > e->seq_txn)
            e->seq_txn = t->seq_txn;
        return 0;
    }
    if (d->nmarks == d->capmarks) {
        size_t cap = d->capmarks ? d->capmarks * 2 : 8;
        entry *nm = realloc(d->marks, cap * sizeof *nm);
        if (!nm)
            return -1;
        d->marks = nm;
        d->capmarks = cap;
    }
    char *name = dup_name(t->name, t->name_len);
    if (!name)
        return -1;
    d->marks[d->nmarks++] = (entry){name, t->seq_txn};
    return 0;
}

static bool ok_is_durable(qsf_durack *d, const queued_ok *o) {
    for (size_t i = 0; i < o->n; i++) {
        entry *e = find_mark(d, o->tables[i].name, strlen(o->tables[i].name));
        if (!e || e->seq_txn < o->tables[i].seq_txn)
            return false;
    }
    return true;
}

int64_t qsf_durack_apply(qsf_durack *d, const qsf_response *dack) {
    size_t pos = 0;
    qsf_resp_table t;
    while (qsf_response_table(dack, &pos, &t))
        if (merge_mark(d, &t) < 0)
            return -2;
    int64_t fsn = -1;
    while (d->count && ok_is_durable(d, &d->q[d->head])) {
        fsn = d->q[d->head].fsn;
        free_ok(&d->q[d->head]);
        d->head = (d->head + 1) % d->cap;
        d->count--;
    }
    return fsn;
}

size_t qsf_durack_pending(const qsf_durack *d) {
    return d->count;
}
