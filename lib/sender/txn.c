/* transaction=on: one application transaction from one qsf_flush to the next
 * (docs/DURABILITY.md §16).
 *
 * It is the ring's flush transaction (sf/ring.h) held open across calls. An
 * auto-flush encodes the buffered rows into it with FLAG_DEFER_COMMIT on every
 * frame, the last one included, and frees the row buffer; qsf_flush appends
 * the rest with a committing last frame (or the empty commit frame) and
 * commits the ring's flush, which publishes every frame of the transaction at
 * once:
 *
 *   auto-flush  auto-flush            qsf_flush
 *   [D D D]     [D D]                 [D C]       D deferred, C committing
 *   '--------- written, unpublished --------'-->  published all at once
 *
 * So nothing of it reaches a server before qsf_flush (a reconnect meanwhile
 * has none of it to replay), and after it the group goes out from its first
 * frame: the server's watermark stays below a group until its committing
 * frame, so a replay after a disconnect sends the whole group again. A
 * process that dies with it open leaves deferred frames with no committing
 * frame after them, which the next recovery cuts (docs/FORMAT.md). The ring
 * bounds it: a transaction that needs more than sf_max_total_bytes fails with
 * QSF_E_TOO_LARGE. Once frames are staged, QSF_E_FULL (no room yet) rolls the
 * failed call back to a mark (ring.h) and the transaction stays open, to be
 * retried; any other failure aborts it whole, and the application starts it
 * again. */
#include "sender/internal.h"
#include "sender/backpressure.h"
#include "qsf_assert.h"

#include "err.h"
#include "qwp/encoder.h"

#include <inttypes.h>
#include <stdio.h>

/* The staged frames go, the symbol table forgets what they carried, and the
 * buffered rows of the transaction go with them. Returns the rows. */
uint64_t qsf_sender_txn_abandon(qsf_sender *s) {
    uint64_t rows = s->txn.rows + qsf_qwp_batch_rows(s->batch);
    if (s->txn.open) {
        qsf_errinfo e; /* if the undo fails the ring latches it: every call says so */
        qsf_ring_txn_abort(s->ring, &e);
        qsf_symtab_set_published(s->symtab, s->txn.published0);
    }
    qsf_qwp_batch_reset(s->batch);
    qsf_interval_reset(&s->ivl);
    s->txn = (qsf_sender_txn){0};
    qsf_ring_srcpos_unstage(s->ring); /* it covered rows that are gone */
    return rows;
}

/* A failure with frames staged: the whole transaction is aborted, and err
 * says so (it cannot be retried as it was: its rows are gone). */
static int txn_fail(qsf_sender *s, int rc, qsf_errinfo *err) {
    uint64_t staged = s->txn.rows, frames = s->txn.frames;
    size_t buffered = qsf_qwp_batch_rows(s->batch);
    qsf_sender_txn_abandon(s);
    rc = qsf_sender_failed(s, rc, err);
    if (!err)
        return rc;
    char cause[QSF_ERRINFO_MSG_MAX];
    snprintf(cause, sizeof cause, "%s", err->msg);
    unsigned flags = err->flags & ~(unsigned) QSF_ERRF_RETRIABLE;
    const char *hint = rc == QSF_E_TOO_LARGE ? "; a transaction must fit the ring, whatever the "
                                               "auto-flushes: commit smaller ones"
                                             : "";
    return qsf_err_set(err, rc, flags, err->sys_errno,
                       "transaction aborted, nothing of it was committed: %" PRIu64
                       " rows given up (%" PRIu64 " staged in %" PRIu64 " frames, %zu buffered)%s: "
                       "%.700s",
                       staged + buffered, staged, frames, buffered, hint, cause);
}

/* Opens the ring's flush for the transaction, remembering the symbols'
 * watermark to go back to. */
static int txn_begin(qsf_sender *s, bool fresh, qsf_errinfo *err) {
    qsf_assert(!s->txn.open); /* the first auto-flush opens it, once */
    int rc = fresh ? qsf_ring_txn_begin_fresh(s->ring, err) : qsf_ring_txn_begin(s->ring, err);
    if (rc == QSF_OK)
        s->txn = (qsf_sender_txn){.open = true, .published0 = qsf_symtab_published(s->symtab)};
    return rc;
}

/* The rows of an encode are in the transaction: the row buffer is free. */
static void staged(qsf_sender *s, const qsf_qwp_encode_result *res) {
    qsf_assert(s->txn.open);
    s->txn.rows += res->rows_consumed;
    s->txn.frames += res->frames;
    qsf_qwp_batch_reset(s->batch);
    qsf_interval_reset(&s->ivl);
}

/* The row API's encode into the ring's open flush. */
static int encode_rows(qsf_sender *s, void *user, bool stage, qsf_qwp_encode_result *res,
                       qsf_errinfo *err) {
    (void) user;
    return qsf_sender_encode(s, stage, res, err);
}

/* The first auto-flush of a transaction opens it. Until it succeeds a failure
 * is that of an ordinary flush: nothing is kept, every row stays buffered. */
static int stage_first(qsf_sender *s, qsf_sender_encode_fn fn, void *user, bool fresh,
                       qsf_errinfo *err) {
    int rc = txn_begin(s, fresh, err);
    if (rc != QSF_OK)
        return rc;
    qsf_qwp_encode_result res;
    rc = fn(s, user, true, &res, err);
    if (rc == QSF_OK) {
        staged(s, &res);
        return QSF_OK;
    }
    qsf_errinfo e;
    qsf_ring_txn_abort(s->ring, &e);
    qsf_qwp_batch_rewind(s->batch, s->txn.published0);
    s->txn = (qsf_sender_txn){0};
    return rc;
}

/* An encode into the open transaction failed. QSF_E_FULL (no room yet) takes
 * it back to where the encode began: its rows are buffered again and it stays
 * open, so the call can be retried. Anything else aborts it whole. */
static int staged_fail(qsf_sender *s, const qsf_ring_mark *m, uint32_t published, int rc,
                       qsf_errinfo *err) {
    qsf_errinfo e;
    if (rc != QSF_E_FULL || qsf_ring_txn_rollback(s->ring, m, &e) != QSF_OK)
        return txn_fail(s, rc, err);
    qsf_qwp_batch_rewind(s->batch, published);
    return qsf_sender_failed(s, rc, err);
}

/* Encodes with fn into the open transaction (`stage`: deferred only),
 * failing as staged_fail says. */
static int encode_more(qsf_sender *s, qsf_sender_encode_fn fn, void *user, bool stage,
                       qsf_qwp_encode_result *res, qsf_errinfo *err) {
    qsf_assert(s->txn.open); /* into the open transaction only */
    qsf_ring_mark m;
    qsf_ring_txn_mark(s->ring, &m);
    uint32_t published = qsf_symtab_published(s->symtab);
    int rc = fn(s, user, stage, res, err);
    return rc == QSF_OK ? QSF_OK : staged_fail(s, &m, published, rc, err);
}

int qsf_sender_txn_stage_with(qsf_sender *s, qsf_sender_encode_fn fn, void *user,
                              qsf_errinfo *err) {
    qsf_assert(s->conf->transaction && qsf_guard_held(&s->guard));
    qsf_sender_set_frame_limits(s);
    if (s->txn.open) {
        qsf_qwp_encode_result res;
        int rc = encode_more(s, fn, user, true, &res, err);
        if (rc == QSF_OK)
            staged(s, &res);
        return rc;
    }
    int rc = stage_first(s, fn, user, false, err);
    if (rc == QSF_E_TOO_LARGE && qsf_ring_txn_started_behind(s->ring))
        rc = stage_first(s, fn, user, true, err);
    return rc == QSF_OK ? QSF_OK : qsf_sender_failed(s, rc, err);
}

int qsf_sender_txn_stage(qsf_sender *s, qsf_errinfo *err) {
    if (qsf_qwp_batch_rows(s->batch) == 0)
        return QSF_OK;
    return qsf_sender_txn_stage_with(s, encode_rows, NULL, err);
}

/* A transaction whose rows are all staged commits with the empty commit
 * frame. */
static int append_commit_frame(qsf_sender *s, qsf_errinfo *err) {
    uint8_t frame[QSF_QWP_EMPTY_COMMIT_LEN];
    size_t len = qsf_qwp_empty_commit(frame);
    qsf_ring_mark m;
    qsf_ring_txn_mark(s->ring, &m);
    int rc = qsf_ring_txn_append(s->ring, frame, len, NULL, err);
    rc = qsf_backpressure_full(s->ring, s->io, rc, err);
    return rc == QSF_OK ? QSF_OK : staged_fail(s, &m, qsf_symtab_published(s->symtab), rc, err);
}

/* A row being built is not part of the transaction. With complete rows
 * buffered the encoder refuses to run while it is open (QSF_E_STATE, "end or
 * cancel it"), a call-order error found before anything is written: it keeps
 * the transaction as it is, as it keeps the rows without transaction=on.
 * With every row staged the commit goes ahead and the row stays open
 * (qsf_sender_published), the first of the next transaction. */
int qsf_sender_txn_commit(qsf_sender *s, qsf_errinfo *err) {
    qsf_assert(s->txn.open && qsf_guard_held(&s->guard));
    qsf_sender_set_frame_limits(s);
    qsf_qwp_encode_result res = {0};
    bool buffered = qsf_qwp_batch_rows(s->batch) > 0;
    if (buffered && qsf_qwp_batch_row_open(s->batch))
        return qsf_sender_encode(s, false, &res, err); /* its QSF_E_STATE, nothing written */
    int rc = buffered ? encode_more(s, encode_rows, NULL, false, &res, err)
                      : append_commit_frame(s, err);
    if (rc != QSF_OK)
        return rc;                          /* failed as staged_fail says */
    rc = qsf_ring_txn_commit(s->ring, err); /* aborts itself if its barrier fails */
    if (rc != QSF_OK)
        return txn_fail(s, rc, err);
    uint64_t rows = s->txn.rows + res.rows_consumed;
    s->txn = (qsf_sender_txn){0};
    qsf_sender_published(s, rows);
    return QSF_OK;
}

QSF_API uint64_t qsf_txn_rows(const qsf_sender *s) {
    return qsf_sender_own(s) ? s->txn.rows + qsf_qwp_batch_rows(s->batch) : 0;
}
