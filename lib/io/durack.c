/* Durable-ack matching (see durack.h): the work is linear in the table
 * entries received, whatever a server puts in them.
 *
 *   names   qsf_strmap: ASCII-lower-cased table name -> dense id, hashed with
 *           a per-matcher random key (a server cannot aim names at one probe
 *           chain)
 *   mark    mark[id]: the table's durable watermark (INT64_MIN: none yet)
 *   q       FIFO of queued OKs {fsn, n}; their tables, {id, seqTxn} each, lie
 *           back to back in the FIFO tabs, the head OK's first at tabs_head
 *   covered how many of the head OK's tables are known durable: a watermark
 *           never goes down, so they are not looked at again
 *
 * An OK costs one name lookup per table, a durable ack one per entry, and
 * every queued table is checked against its mark once when it is covered,
 * plus one failed check per durable ack.
 *
 * Memory: names come from OKs (the tables the connection wrote) and, ahead of
 * their OK, from durable acks ("early" names, by_ok[id] = 0). A server may
 * name at most as many early tables as the widest OK of the connection did,
 * in one durable ack and in all: more is a protocol violation (-3), so a
 * server naming never-seen tables cannot grow the map without bound. */
#include "io/durack.h"

#include "os/os.h"
#include "qwp/strmap.h"

#include <stdlib.h>
#include <string.h>

#define NO_MARK INT64_MIN

typedef struct ok_table {
    uint32_t id;
    int64_t seq_txn;
} ok_table;

typedef struct queued_ok {
    int64_t fsn;
    size_t n; /* its tables: the next n of tabs */
} queued_ok;

struct qsf_durack {
    qsf_strmap names;
    int64_t *mark;
    uint8_t *by_ok; /* by_ok[id]: an OK named the table */
    size_t capmark;
    size_t widest;  /* the most tables one OK of the connection named */
    size_t n_early; /* names only durable acks named */
    queued_ok *q;   /* ring buffer of OKs */
    size_t head, count, cap;
    ok_table *tabs; /* tables of the queued OKs, in queue order */
    size_t tabs_head, tabs_len, tabs_cap;
    size_t covered;
    char *fold; /* a name being looked up, lower-cased */
    size_t fold_cap;
    uint64_t key; /* hash key */
    uint64_t work;
};

qsf_durack *qsf_durack_new(void) {
    qsf_durack *d = calloc(1, sizeof(qsf_durack));
    if (!d)
        return NULL;
    qsf_strmap_init(&d->names);
    d->key = QSF_OS->mono_ns() ^ (uint64_t) (uintptr_t) d ^ 0x9E3779B97F4A7C15ull;
    return d;
}

void qsf_durack_reset(qsf_durack *d) {
    qsf_strmap_clear(&d->names);
    d->head = d->count = 0;
    d->tabs_head = d->tabs_len = 0;
    d->covered = 0;
    d->widest = d->n_early = 0;
}

void qsf_durack_free(qsf_durack *d) {
    if (!d)
        return;
    qsf_strmap_destroy(&d->names);
    free(d->mark);
    free(d->by_ok);
    free(d->q);
    free(d->tabs);
    free(d->fold);
    free(d);
}

/* A keyed hash of the folded name (64-bit multiply-xorshift rounds). */
static uint32_t keyed_hash(uint64_t key, const char *s, size_t len) {
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    uint64_t h = key ^ (len * k);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t t = 0;
    for (size_t j = 0; i + j < len; j++)
        t |= (uint64_t) (unsigned char) s[i + j] << (8 * j);
    h = ((h ^ t) + key) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h *= 0x94D049BB133111EBull;
    return (uint32_t) (h ^ (h >> 32));
}

/* Room for one more name's mark. */
static int reserve_mark(qsf_durack *d) {
    if (d->names.count < d->capmark)
        return 0;
    size_t cap = d->capmark ? d->capmark * 2 : 64;
    int64_t *m = realloc(d->mark, cap * sizeof *m);
    if (m)
        d->mark = m;
    uint8_t *b = m ? realloc(d->by_ok, cap) : NULL;
    if (!b)
        return -1;
    d->by_ok = b;
    d->capmark = cap;
    return 0;
}

/* The id of a table name (matched case-insensitively, ASCII), added with no
 * watermark when new. An OK's name counts as named by an OK; a durable ack's
 * new name is early, refused (-3) past the widest OK. -1 on OOM. */
static int64_t name_id(qsf_durack *d, const char *name, size_t n, bool ok) {
    if (n > d->fold_cap) {
        char *f = realloc(d->fold, n);
        if (!f)
            return -1;
        d->fold = f;
        d->fold_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        d->fold[i] = c >= 'A' && c <= 'Z' ? (char) (c + 32) : c;
    }
    d->work++;
    uint32_t h = keyed_hash(d->key, d->fold, n);
    int64_t id = qsf_strmap_find(&d->names, d->fold, n, h);
    if (id >= 0) {
        if (ok && !d->by_ok[id]) {
            d->by_ok[id] = 1;
            d->n_early--;
        }
        return id;
    }
    if (!ok && d->n_early >= d->widest)
        return -3;
    if (reserve_mark(d) < 0)
        return -1;
    id = qsf_strmap_add(&d->names, d->fold, n, h);
    if (id >= 0) {
        d->mark[id] = NO_MARK;
        d->by_ok[id] = ok;
        d->n_early += !ok;
    }
    return id;
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

/* Room for n more queued tables: the popped prefix is dropped first. */
static int reserve_tabs(qsf_durack *d, size_t n) {
    if (d->tabs_head > 0 && d->tabs_head >= d->tabs_len - d->tabs_head) {
        memmove(d->tabs, d->tabs + d->tabs_head, (d->tabs_len - d->tabs_head) * sizeof *d->tabs);
        d->tabs_len -= d->tabs_head;
        d->tabs_head = 0;
    }
    if (d->tabs_len + n <= d->tabs_cap)
        return 0;
    size_t cap = d->tabs_cap ? d->tabs_cap : 64;
    while (cap < d->tabs_len + n)
        cap *= 2;
    ok_table *t = realloc(d->tabs, cap * sizeof *t);
    if (!t)
        return -1;
    d->tabs = t;
    d->tabs_cap = cap;
    return 0;
}

int qsf_durack_push_ok(qsf_durack *d, int64_t ok_fsn, const qsf_response *ok) {
    if ((d->count == d->cap && grow_queue(d) < 0) || reserve_tabs(d, ok->table_count) < 0)
        return -1;
    size_t pos = 0, n = 0;
    qsf_resp_table t;
    if (ok->table_count > d->widest)
        d->widest = ok->table_count;
    while (qsf_response_table(ok, &pos, &t)) {
        int64_t id = name_id(d, t.name, t.name_len, true);
        if (id < 0)
            return -1; /* nothing of this OK is queued yet */
        d->tabs[d->tabs_len + n++] = (ok_table){(uint32_t) id, t.seq_txn};
    }
    d->tabs_len += n;
    d->q[(d->head + d->count++) % d->cap] = (queued_ok){ok_fsn, n};
    return 0;
}

/* Whether every table of the head OK is durable, resuming where the last
 * look stopped. */
static bool head_durable(qsf_durack *d) {
    const queued_ok *o = &d->q[d->head];
    while (d->covered < o->n) { /* indexed: tabs is NULL while no OK has named a table */
        const ok_table *t = &d->tabs[d->tabs_head + d->covered];
        d->work++;
        if (d->mark[t->id] < t->seq_txn)
            return false;
        d->covered++;
    }
    return true;
}

int64_t qsf_durack_apply(qsf_durack *d, const qsf_response *dack) {
    size_t pos = 0;
    qsf_resp_table t;
    while (qsf_response_table(dack, &pos, &t)) {
        int64_t id = name_id(d, t.name, t.name_len, false);
        if (id < 0)
            return id == -3 ? -3 : -2;
        if (t.seq_txn > d->mark[id])
            d->mark[id] = t.seq_txn;
    }
    int64_t fsn = -1;
    while (d->count && head_durable(d)) {
        fsn = d->q[d->head].fsn;
        d->tabs_head += d->q[d->head].n;
        d->covered = 0;
        d->head = (d->head + 1) % d->cap;
        d->count--;
    }
    return fsn;
}

size_t qsf_durack_pending(const qsf_durack *d) {
    return d->count;
}

uint64_t qsf_durack_work(const qsf_durack *d) {
    return d->work;
}

size_t qsf_durack_names(const qsf_durack *d) {
    return d->names.count;
}

size_t qsf_durack_widest(const qsf_durack *d) {
    return d->widest;
}
