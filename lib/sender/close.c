/* qsf_close: publish what is buffered, drain (bounded), stop, and tell the
 * application exactly what was left behind (docs/ERRORS.md §6, and the
 * contract in include/qsf.h). */
#include "sender/internal.h"
#include "sender/stream_target.h"
#include "qsf_assert.h"

#include "err.h"
#include "log.h"
#include "os/os.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Step 1: publish the buffered rows; those that cannot be published (a latched
 * error, the ring stayed full) are dropped and counted. An open row was never
 * completed and is not counted. With transaction=on nothing is published: the
 * open transaction (staged and buffered rows) is aborted and counted. */
static int close_flush(qsf_sender *s, qsf_close_info *ci, qsf_errinfo *err) {
    qsf_assert(qsf_guard_held(&s->guard));
    if (qsf_qwp_batch_row_open(s->batch))
        qsf_qwp_batch_row_cancel(s->batch);
    if (s->conf->transaction) { /* only qsf_flush commits: close gives it up */
        ci->txn_rows_uncommitted = qsf_sender_txn_abandon(s);
        return QSF_OK;
    }
    int rc = qsf_latch_get(&s->latch, err);
    if (rc == QSF_OK)
        rc = qsf_sender_flush_locked(s, NULL, err);
    ci->rows_unpublished = qsf_qwp_batch_rows(s->batch);
    if (ci->rows_unpublished)
        qsf_qwp_batch_reset(s->batch);
    return rc;
}

/* Step 3: wait, bounded by close_flush_timeout_millis, until the last committing
 * frame is acknowledged (frames of a group that never committed cannot be).
 * Every flush publishes whole, ending with its committing frame, and recovery
 * cuts what never committed, so that is the last frame published, recovered
 * ones included (a sender that only recovered a tail has published nothing). */
static void close_drain(qsf_sender *s) {
    int64_t tmo = qsf_conf_ms(s->conf->close_flush_timeout_millis);
    int64_t target = qsf_ring_published_fsn(s->ring);
    if (target < s->last_commit_fsn)
        target = s->last_commit_fsn;
    if (tmo <= 0 || target <= qsf_ring_acked_fsn(s->ring) || qsf_latch_code(&s->latch))
        return;
    qsf_errinfo e;
    (void) qsf_io_wait(s->io, target, QSF_WAIT_DURABLE, tmo, true, &e);
}

/* Step 4: the drainers stop (at their deadline at the latest) and say what
 * they left in their slots; a loss one of them reported is in the latch
 * before the verdict reads it. */
static void close_drainers(qsf_sender *s, qsf_close_info *ci) {
    qsf_drain_counts dc;
    qsf_drainers_stop(s->drainers, &dc);
    s->drainers = NULL;
    ci->orphan_slots_left = dc.interrupted;
    ci->orphan_frames_left = dc.frames_left;
    ci->orphan_bytes_left = dc.bytes_left;
    ci->orphan_slots_not_started = dc.not_started;
}

/* What is left unacknowledged once the I/O thread has stopped. In memory mode
 * it is lost, and recorded as a loss in the latch. */
static void count_unacked(qsf_sender *s, qsf_close_info *ci) {
    int64_t acked = qsf_ring_acked_fsn(s->ring), pub = qsf_ring_published_fsn(s->ring);
    ci->frames_unacked = pub > acked ? (uint64_t) (pub - acked) : 0;
    ci->bytes_unacked = qsf_ring_pending_bytes(s->ring);
    ci->kept_on_disk = s->conf->sf_dir != NULL;
    if (ci->frames_unacked == 0 || ci->kept_on_disk)
        return;
    bool exact;
    uint64_t rows = qsf_backlog_unacked_rows(&s->backlog, acked, &exact);
    char what[256];
    snprintf(what, sizeof what,
             "%" PRIu64 " frames (%" PRIu64 " bytes, %s%" PRIu64
             " rows) were not acknowledged when the memory-mode sender closed",
             ci->frames_unacked, ci->bytes_unacked, exact ? "" : "at most ", rows);
    qsf_latch_note_loss(&s->latch, ci->frames_unacked, rows, what);
}

/* A close message holds at most QSF_ERRINFO_MSG_MAX - 1 bytes. Its parts
 * come in the order of importance (the terminal error's own text, bounded;
 * the counts; then the causes), and a text that must be cut ends with
 * CUT_MARK, cut on a UTF-8 boundary, never silently mid-text. */
#define CUT_MARK   " [...]"
#define TERM_ROOM  240 /* of the message, for the terminal error's own text */
#define PARTS_ROOM 1024

/* Appends `src` to out[*n..cap) (cap includes the NUL); what does not fit is
 * cut and marked. */
static void put_fit(char *out, size_t cap, size_t *n, const char *src) {
    size_t room = cap - 1 - *n, len = strlen(src);
    if (len > room) {
        size_t mark = sizeof CUT_MARK - 1;
        len = room > mark ? room - mark : 0;
        while (len > 0 && ((unsigned char) src[len] & 0xC0) == 0x80)
            len--; /* not inside a UTF-8 sequence */
        memcpy(out + *n, src, len);
        memcpy(out + *n + len, CUT_MARK, room - len < mark ? room - len : mark);
        *n += len + (room - len < mark ? room - len : mark);
    } else {
        memcpy(out + *n, src, len);
        *n += len;
    }
    out[*n] = 0;
}

/* "12 frames (3456 bytes) not acknowledged, kept in the slot for the next
 * sender; ...": every count, nothing cut (a few hundred bytes at most). */
static void describe_counts(const qsf_close_info *ci, bool loss, char *out, size_t cap) {
    size_t n = 0;
    out[0] = 0;
    if (ci->rows_unpublished)
        n += (size_t) snprintf(out + n, cap - n, "%" PRIu64 " buffered rows dropped; ",
                               ci->rows_unpublished);
    if (n < cap && ci->txn_rows_uncommitted)
        n += (size_t) snprintf(out + n, cap - n,
                               "%" PRIu64 " rows of the open transaction not committed "
                               "(transaction=on: only qsf_flush commits), nothing of them sent; ",
                               ci->txn_rows_uncommitted);
    if (n < cap && ci->frames_unacked && ci->kept_on_disk)
        n += (size_t) snprintf(out + n, cap - n,
                               "%" PRIu64 " frames (%" PRIu64
                               " bytes) not acknowledged, kept in the slot for the next sender; ",
                               ci->frames_unacked, ci->bytes_unacked);
    if (n < cap && ci->orphan_slots_left)
        n +=
            (size_t) snprintf(out + n, cap - n,
                              "%" PRIu64 " orphan slots not fully drained, %" PRIu64
                              " frames (%" PRIu64 " bytes) kept in them; ",
                              ci->orphan_slots_left, ci->orphan_frames_left, ci->orphan_bytes_left);
    if (n < cap && ci->orphan_slots_not_started)
        n += (size_t) snprintf(out + n, cap - n,
                               "%" PRIu64 " orphan slots never started, their frames kept in "
                               "them for a later sender with drain_orphans=on; ",
                               ci->orphan_slots_not_started);
    if (n < cap && ci->frames_lost)
        n += (size_t) snprintf(out + n, cap - n, "%" PRIu64 " frames lost; ", ci->frames_lost);
    else if (n < cap && loss)
        n += (size_t) snprintf(out + n, cap - n, "data lost; ");
    if (n >= 2 && n < cap)
        out[n - 2] = 0; /* the last "; " */
}

/* "(buffered rows: <why the flush failed>; loss: <the first loss>)", or "". */
static void describe_causes(const qsf_close_info *ci, const char *loss_msg,
                            const qsf_errinfo *flush_err, char *out, size_t cap) {
    bool rows = ci->rows_unpublished && flush_err->msg[0];
    snprintf(out, cap, "%s%s%s%s%s%s", rows || loss_msg[0] ? " (" : "",
             rows ? "buffered rows: " : "", rows ? flush_err->msg : "",
             rows && loss_msg[0] ? "; " : "", loss_msg[0] ? "loss: " : "",
             loss_msg[0] ? loss_msg : "");
    if (out[0])
        snprintf(out + strlen(out), cap - strlen(out), ")");
}

int qsf_close_outcome(const qsf_close_info *ci, bool lost) {
    if (lost || ci->rows_unpublished || ci->txn_rows_uncommitted)
        return QSF_E_DATA_LOSS;
    if (ci->frames_unacked || ci->orphan_slots_left || ci->orphan_slots_not_started)
        return QSF_E_TIMEOUT;
    return QSF_OK;
}

/* The message of a close that did not return QSF_OK, into msg (of
 * QSF_ERRINFO_MSG_MAX bytes): the terminal error's text if one is latched
 * (`term`), the counts, the timeout a TIMEOUT outcome ran into (`tmo`, or
 * ""), then the causes (left out after a terminal error: it was the flush's
 * failure, and is said already). */
static void compose(char *msg, const qsf_errinfo *term, const char *counts, const char *tmo,
                    const char *causes) {
    size_t n = 0;
    msg[0] = 0;
    if (term)
        put_fit(msg, counts[0] ? TERM_ROOM : QSF_ERRINFO_MSG_MAX, &n, term->msg);
    if (counts[0] || !term)
        put_fit(msg, QSF_ERRINFO_MSG_MAX, &n, term ? "; close: " : "close: ");
    put_fit(msg, QSF_ERRINFO_MSG_MAX, &n, counts);
    put_fit(msg, QSF_ERRINFO_MSG_MAX, &n, tmo);
    if (!term)
        put_fit(msg, QSF_ERRINFO_MSG_MAX, &n, causes);
}

/* The contract of qsf_close (qsf.h): terminal > data loss > SF timeout > a
 * failed close of the ring > OK; every message carries the counts. */
static int verdict(qsf_sender *s, const qsf_close_info *ci, const qsf_errinfo *flush_err,
                   int ring_rc, const qsf_errinfo *ring_err, qsf_errinfo *err) {
    char loss_msg[QSF_ERRINFO_MSG_MAX], counts[PARTS_ROOM], causes[PARTS_ROOM];
    char msg[QSF_ERRINFO_MSG_MAX], tmo[64] = "";
    uint32_t losses = qsf_latch_losses(&s->latch, NULL, NULL, loss_msg, sizeof loss_msg);
    if (!losses)
        loss_msg[0] = 0;
    describe_counts(ci, losses > 0, counts, sizeof counts);
    describe_causes(ci, loss_msg, flush_err, causes, sizeof causes);
    qsf_errinfo term;
    int code = qsf_latch_get(&s->latch, &term);
    int outcome = qsf_close_outcome(ci, losses > 0);
    if (!code && outcome == QSF_E_TIMEOUT)
        snprintf(tmo, sizeof tmo, " (close_flush_timeout_millis=%" PRId64 ")",
                 s->conf->close_flush_timeout_millis);
    if (code || outcome != QSF_OK)
        compose(msg, code ? &term : NULL, counts, tmo, causes);
    if (code)
        return qsf_err_set(err, code, QSF_ERRF_FATAL, term.sys_errno, "%s", msg);
    if (outcome != QSF_OK)
        return qsf_err_set(err, outcome, 0, 0, "%s", msg);
    if (ring_rc != QSF_OK) {
        qsf_err_copy(err, ring_err);
        return ring_rc;
    }
    qsf_err_clear(err);
    return QSF_OK;
}

/* The bytes both sides know; struct_size says how many (docs/METRICS.md §1). */
static void copy_info(qsf_close_info *out, const qsf_close_info *ci) {
    if (!out || out->struct_size < sizeof(size_t))
        return;
    size_t n = out->struct_size < sizeof *ci ? out->struct_size : sizeof *ci;
    memcpy(out, ci, n);
    out->struct_size = n;
}

/* qsf_close in a child of fork() (docs/THREADING.md "fork()"): the segments
 * are unmapped and this process's descriptors closed, nothing else. No
 * thread is joined (the child has none of them), no file changes, no lock is
 * released, nothing is counted: the parent's sender owns all of it. The rest
 * of the memory stays allocated (its locks may be held by threads that exist
 * only in the parent). */
static int close_in_child(qsf_sender *s, qsf_errinfo *err) {
    qsf_ring_forsake(s->ring);
    s->ring = NULL;
    return qsf_sender_check_fork(s, err);
}

_Thread_local const qsf_sender *qsf_stream_target;

/* Why close cannot run on this thread (docs/THREADING.md "Which call from
 * where"), or NULL when it can. */
static const char *refused_here(qsf_sender *s) {
    if (qsf_stream_target == s)
        return "a callback of the ArrowArrayStream (or of one of its batches) that "
               "qsf_send_arrow_stream is publishing into this sender: the call is still using it; "
               "close once it has returned";
    if (qsf_inbox_is_dispatcher(s->inbox) || qsf_inbox_is_dispatcher(s->events))
        return "this sender's error or event handler: it would free the handler's own "
               "dispatcher; close from another thread once the handler has returned";
    /* close joins the closed sender's dispatchers: from a handler it waits
     * for that sender's handlers, and two handlers closing each other's
     * sender (or any ring of them) would wait for each other for good */
    if (qsf_inbox_on_a_dispatcher())
        return "another sender's error or event handler: close waits for the closed sender's "
               "handlers to return, and handlers that close each other's senders would wait "
               "for each other forever; close from an application thread";
    if (qsf_log_in_handler())
        return "the log handler: it runs on the thread that logs (perhaps this sender's own "
               "I/O thread, or this very close) holding the log lock that every sender's "
               "threads wait for; close from another thread once the handler has returned";
    return NULL;
}

QSF_API int qsf_close_report(qsf_sender *s, qsf_close_info *info, qsf_errinfo *err) {
    qsf_close_info ci;
    memset(&ci, 0, sizeof ci);
    ci.struct_size = sizeof ci;
    if (!s) {
        copy_info(info, &ci);
        qsf_err_clear(err);
        return QSF_OK;
    }
    if (qsf_guard_forked(&s->guard)) {
        copy_info(info, &ci);
        return close_in_child(s, err);
    }
    const char *why = refused_here(s);
    if (why) {
        copy_info(info, &ci); /* refused: nothing happened, nothing is counted */
        return qsf_err_set(err, QSF_E_STATE, 0, 0,
                           "qsf_close called from %s (the sender is unchanged)", why);
    }
    qsf_errinfo flush_err, ring_err;
    qsf_err_clear(&flush_err);
    qsf_err_clear(&ring_err);
    int64_t tmo = qsf_conf_ms(s->conf->close_flush_timeout_millis);
    /* the drainers' time runs alongside our own drain */
    qsf_drainers_signal_stop(s->drainers, QSF_OS->mono_ns() + (tmo > 0 ? tmo * 1000000 : 0));
    if (qsf_guard_enter(&s->guard)) { /* another thread inside: its rows are not flushed */
        close_flush(s, &ci, &flush_err);
        qsf_guard_leave(&s->guard);
    }
    close_drain(s);
    /* Stopped before the verdict: nothing latches or acknowledges after this. */
    qsf_io_stop(s->io);
    close_drainers(s, &ci);
    count_unacked(s, &ci);
    /* The handlers get what is left while the I/O thread's and the ring's
     * state still answers the calls they may make (docs/THREADING.md). */
    qsf_inbox_stop(s->inbox);
    qsf_inbox_stop(s->events);
    qsf_errinfo verdict_err;
    int ring_rc = qsf_sender_stop(s, &ring_err);
    qsf_latch_losses(&s->latch, &ci.frames_lost, &ci.rows_lost, NULL, 0);
    int rc = verdict(s, &ci, &flush_err, ring_rc, &ring_err, &verdict_err);
    qsf_assert(rc != QSF_E_STATE); /* qsf.h: QSF_E_STATE means the sender was not freed */
    /* data given up is ERROR (docs/ERRORS.md §11); a latched terminal error
     * had its ERROR line when it latched, and this repeats it at WARN */
    if (rc == QSF_E_DATA_LOSS)
        QSF_LOGE("%s", verdict_err.msg);
    else if (rc != QSF_OK && rc != QSF_E_TIMEOUT)
        QSF_LOGW("%s", verdict_err.msg);
    qsf_sender_free(s);
    qsf_err_copy(err, &verdict_err);
    copy_info(info, &ci);
    return rc;
}

QSF_API int qsf_close(qsf_sender *s, qsf_errinfo *err) {
    return qsf_close_report(s, NULL, err);
}
