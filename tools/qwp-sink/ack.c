/* Message processing and responses (docs/PROTOCOL.md §6; docs/QWP-SINK.md §2.3-§2.5): wireSeq
 * assignment, the commit model with deferred groups, cumulative OKs, errors that
 * break the pipeline, and durable acks sent only on inbound events.
 *
 * Response layouts (little-endian):
 *   OK       [00][i64 seq][u16 n]{u16 len, name, i64 seqTxn} x n
 *   error    [status][i64 seq][u16 len][message <= 1024 bytes]
 *   durable  [02][u16 n]{u16 len, name, i64 seqTxn} x n */
#include "sink_int.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

#define MAX_ERR_MSG 1024

static void rec_frame(struct conn *c, int64_t seq, const uint8_t *p, size_t len) {
    struct crec *r = c->rec;
    if (c->sink->o.no_frame_log)
        return;
    if (r->n == r->cap) {
        struct frec *nf = qsf_grow(r->f, &r->cap, 64);
        if (!nf)
            return;
        r->f = nf;
    }
    struct frec *f = &r->f[r->n++];
    memset(f, 0, sizeof *f);
    f->f.wire_seq = seq;
    f->f.size = (uint32_t) len;
    f->f.flags = len >= QWP_HEADER_LEN ? p[5] : 0;
    f->f.status = 0xFF;
    if (c->sink->o.record_payloads && (f->payload = malloc(len ? len : 1)) != NULL)
        memcpy(f->payload, p, len);
}

static void mark(struct conn *c, int64_t from, int64_t to, uint8_t status) {
    for (int64_t i = from; i <= to && i < (int64_t) c->rec->n; i++)
        if (c->rec->f[i].f.status == 0xFF)
            c->rec->f[i].f.status = status;
}

/* Queues a response, as the half-frame or malformed fault says (once). */
void ack_send_response(struct conn *c, const uint8_t *p, size_t n) {
    if (c->half_frame) {
        malformed_half(c, p, n);
        return;
    }
    int kind = c->malformed;
    c->malformed = 0;
    if (kind)
        malformed_send(c, kind, p, n);
    else
        conn_emit(c, WS_OP_BINARY, p, n, &c->style);
}

/* Appends {u16 len, name, i64 txn} to b. */
static void put_entry(struct buf *b, const char *name, int64_t txn) {
    size_t l = strlen(name);
    uint8_t h[2], t[8];
    qsf_put_u16(h, (uint16_t) l);
    qsf_put_i64(t, txn);
    buf_append(b, h, 2);
    buf_append(b, name, l);
    buf_append(b, t, 8);
}

/* An acknowledgement may only cover rows the append file already holds:
 * writes what is pending. 1 when it is written (or there is no file). */
static int rows_stored(struct conn *c) {
    struct appendlog *a = c->sink->store.append;
    return !a || appendlog_write(a) == 0;
}

void ack_send_ok(struct conn *c, int now) {
    if (c->highest <= c->last_ok || c->silent || c->withhold)
        return;
    if (!now && c->delay_ok_ms > 0) {
        if (c->ok_due_ms == 0)
            c->ok_due_ms = sink_now_ms() + c->delay_ok_ms;
        return;
    }
    if (!rows_stored(c))
        return; /* stays due: the next attempt writes again */
    struct buf b = {0};
    uint8_t h[11];
    h[0] = QS_OK;
    qsf_put_i64(h + 1, c->highest);
    qsf_put_u16(h + 9, (uint16_t) c->nok);
    buf_append(&b, h, sizeof h);
    for (int i = 0; i < c->nok; i++)
        put_entry(&b, c->ok[i].name, c->ok[i].txn);
    ack_send_response(c, b.p, b.len);
    buf_free(&b);
    c->nok = 0;
    c->last_ok = c->highest;
    c->ok_due_ms = 0;
    c->sink->st.oks++;
}

void ack_send_forged(struct conn *c, int64_t seq) {
    uint8_t h[11];
    h[0] = QS_OK;
    qsf_put_i64(h + 1, seq);
    qsf_put_u16(h + 9, 0);
    ack_send_response(c, h, sizeof h);
}

/* The wide-durable fault: made-up tables in front of the n real entries, so
 * the ack names `total` tables in all (the real ones last). */
static int wide_fillers(struct conn *c, struct buf *b, int n) {
    int extra = c->wide_durable - n;
    c->wide_durable = 0;
    if (extra > 65535 - n)
        extra = 65535 - n;
    for (int i = 0; i < extra; i++) {
        char name[32];
        snprintf(name, sizeof name, "wide_durable_%d", i);
        put_entry(b, name, 1);
    }
    return extra > 0 ? extra : 0;
}

/* Durable ack for tables whose watermark moved since the last one sent here. */
static void durable_tick(struct conn *c) {
    struct qsink *s = c->sink;
    if (!c->durable || c->silent || c->ndt == 0 || !rows_stored(c))
        return;
    struct buf real = {0};
    int n = 0;
    int64_t now = sink_now_ms();
    for (int i = 0; i < c->ndt; i++) {
        struct stable *t = store_find(&s->store, c->dt[i].name, strlen(c->dt[i].name));
        int64_t wm =
            t ? stable_durable_txn(t, s->o.durable_lag_commits, s->o.durable_lag_ms, now) : 0;
        if (wm > c->dt[i].sent) {
            put_entry(&real, c->dt[i].name, wm);
            c->dt[i].sent = wm;
            n++;
        }
    }
    if (n > 0) {
        struct buf b = {0};
        uint8_t h[3] = {QS_DURABLE_ACK, 0, 0};
        buf_append(&b, h, 3);
        int total = n + (c->wide_durable ? wide_fillers(c, &b, n) : 0);
        qsf_put_u16(b.p + 1, (uint16_t) total);
        buf_append(&b, real.p, real.len);
        ack_send_response(c, b.p, b.len);
        buf_free(&b);
        s->st.durable_acks++;
    }
    buf_free(&real);
}

void ack_flush(struct conn *c) {
    if (c->state != CS_WS)
        return;
    ack_send_ok(c, 1);
    durable_tick(c);
}

void ack_end_of_read(struct conn *c) {
    if (c->processed_in_read == 0 || c->state != CS_WS)
        return;
    rows_stored(c); /* one write per read, also when no OK goes out (withheld, delayed) */
    ack_send_ok(c, 0);
    durable_tick(c);
}

static void record_error(struct qsink *s, int conn, int64_t seq, uint8_t status, const char *m) {
    if (s->nerrs == s->caperrs) {
        qsink_error *n = qsf_grow(s->errs, &s->caperrs, 16);
        if (!n)
            return;
        s->errs = n;
    }
    qsink_error *e = &s->errs[s->nerrs++];
    e->conn = conn;
    e->wire_seq = seq;
    e->status = status;
    snprintf(e->msg, sizeof e->msg, "%s", m);
}

void ack_send_error(struct conn *c, int64_t seq, uint8_t status, const char *msg) {
    ack_send_ok(c, 1); /* the OK for earlier frames goes first */
    size_t ml = strlen(msg);
    if (ml > MAX_ERR_MSG) {
        ml = MAX_ERR_MSG;
        while (ml > 0 && ((uint8_t) msg[ml] & 0xC0) == 0x80)
            ml--; /* cut at a UTF-8 character boundary */
    }
    uint8_t b[11 + MAX_ERR_MSG];
    b[0] = status;
    qsf_put_i64(b + 1, seq);
    qsf_put_u16(b + 9, (uint16_t) ml);
    memcpy(b + 11, msg, ml);
    if (!c->silent)
        ack_send_response(c, b, 11 + ml);
    mark(c, seq, seq, status);
    record_error(c->sink, c->no, seq, status, msg);
    c->sink->st.errors++;
    if (!c->sink->o.legacy)
        c->broken = 1;
}

static void on_commit(void *user, const struct stable *t) {
    struct conn *c = user;
    int i;
    for (i = 0; i < c->nok && strcmp(c->ok[i].name, t->name) != 0; i++)
        ;
    if (i == c->nok) {
        struct okent *n = realloc(c->ok, (size_t) (c->nok + 1) * sizeof *n);
        if (!n)
            return;
        c->ok = n;
        snprintf(c->ok[c->nok++].name, sizeof c->ok[0].name, "%s", t->name);
    }
    c->ok[i].txn = t->seq_txn;
    for (i = 0; i < c->ndt && strcmp(c->dt[i].name, t->name) != 0; i++)
        ;
    if (i == c->ndt) {
        struct dtrack *n = realloc(c->dt, (size_t) (c->ndt + 1) * sizeof *n);
        if (!n)
            return;
        c->dt = n;
        snprintf(c->dt[c->ndt].name, sizeof c->dt[0].name, "%s", t->name);
        c->dt[c->ndt++].sent = 0;
    }
}

/* Commits the open group and this frame's tables: straight into the store when
 * nothing is staged, else through staging so each table commits once. */
static int commit_tables(struct conn *c, const struct msg_decoded *m) {
    struct store *dst = &c->sink->store;
    int64_t now = sink_now_ms();
    if (c->staging.n == 0 && store_can_commit_direct(dst))
        return store_commit_direct(dst, m->tables, m->ntables, now, on_commit, c);
    for (int i = 0; i < m->ntables; i++)
        if (m->tables[i].rows > 0 && store_add(&c->staging, &m->tables[i]) != 0)
            return -1;
    return store_commit(dst, &c->staging, now, on_commit, c);
}

static void commit(struct conn *c, int64_t seq, const struct msg_decoded *m) {
    struct qsink *s = c->sink;
    int64_t from = c->group_first >= 0 ? c->group_first : seq;
    if (commit_tables(c, m) != 0) {
        ack_send_error(c, seq, QS_INTERNAL_ERROR, "out of memory while committing");
        return;
    }
    s->st.rows = store_rows_total(&s->store);
    mark(c, from, seq, QS_OK);
    c->group_first = -1;
    c->highest = seq;
    if (s->o.ack_mode == QSINK_ACK_PER_FRAME || c->highest - c->last_ok >= QSINK_ACK_BATCH)
        ack_send_ok(c, 0);
}

/* Status faults and random faults for this wireSeq; 1 if the frame is done. */
static int seq_faults(struct conn *c, int64_t seq) {
    struct fault f[8];
    int n = fault_take(&c->sink->faults, c->no, FT_SEQ, seq, f, 8);
    int done = 0;
    for (int i = 0; i < n && !done; i++) {
        if (f[i].action == FA_STATUS) {
            ack_send_error(c, seq, (uint8_t) f[i].code, f[i].text);
            done = 1;
        } else {
            conn_apply_fault(c, &f[i]);
            done = c->state != CS_WS;
        }
    }
    return done;
}

/* A LONG[] column anywhere in the message: the real server refuses it
 * outright, for a new table as well, with this text (docs/QWP-SINK.md). */
static int has_long_array(const struct msg_table *t) {
    for (uint32_t c = 0; c < t->ncols; c++)
        if (t->cols[c].type == QT_LONG_ARRAY)
            return 1;
    return 0;
}

/* SCHEMA_MISMATCH for a LONG[] column and against committed and staged tables. */
static int check_schemas(struct conn *c, int64_t seq, const struct msg_decoded *m) {
    char err[512];
    for (int i = 0; i < m->ntables; i++) {
        const struct msg_table *t = &m->tables[i];
        if (has_long_array(t)) {
            ack_send_error(c, seq, QS_SCHEMA_MISMATCH,
                           "long arrays are not supported, only double arrays");
            return -1;
        }
        if (store_check_schema(&c->sink->store, t, err, sizeof err) != 0 ||
            store_check_schema(&c->staging, t, err, sizeof err) != 0) {
            ack_send_error(c, seq, QS_SCHEMA_MISMATCH, err);
            return -1;
        }
    }
    return 0;
}

/* Stages the rows of a deferred frame. */
static int stage(struct conn *c, int64_t seq, const struct msg_decoded *m) {
    for (int i = 0; i < m->ntables; i++) {
        if (m->tables[i].rows > 0 && store_add(&c->staging, &m->tables[i]) != 0) {
            ack_send_error(c, seq, QS_INTERNAL_ERROR, "out of memory while staging rows");
            return -1;
        }
    }
    return 0;
}

/* A durable-ack poll (docs/PROTOCOL.md §3.2): a QWP header with flag 0x02. */
static int is_poll(const uint8_t *p, size_t len) {
    return len >= QWP_HEADER_LEN && memcmp(p, "QWP1", 4) == 0 && (p[5] & QF_DURABLE_POLL);
}

void ack_on_binary(struct conn *c, uint8_t *p, size_t len) {
    int64_t seq = c->seq_next++;
    c->sink->st.frames++;
    c->processed_in_read++;
    rec_frame(c, seq, p, len);
    if ((c->broken && !c->sink->o.legacy) || seq_faults(c, seq))
        return;
    int poll = is_poll(p, len);
    if (poll && !c->durable) {
        ack_send_error(c, seq, QS_PARSE_ERROR, "durable ACK poll was not negotiated");
        return;
    }
    if (poll)
        p[5] &= (uint8_t) ~QF_DURABLE_POLL; /* the decoder sees an ordinary empty frame */
    char err[512];
    struct msg_decoded m;
    int st = msg_decode(c->msg, p, len, c->version, &m, err, sizeof err);
    if (st != QS_OK) {
        ack_send_error(c, seq, (uint8_t) st, err);
        return;
    }
    if (check_schemas(c, seq, &m) != 0)
        return;
    if (poll) {
        if (c->group_first < 0) {
            c->highest = seq; /* a poll never commits or closes a deferred group */
            mark(c, seq, seq, QS_OK);
        }
    } else if (m.flags & QF_DEFER_COMMIT) {
        if (stage(c, seq, &m) == 0 && c->group_first < 0)
            c->group_first = seq;
    } else {
        commit(c, seq, &m);
    }
}

void ack_discard_uncommitted(struct conn *c) {
    store_clear(&c->staging);
    c->group_first = -1;
}
