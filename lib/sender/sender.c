/* Public API glue: sender lifecycle, flush, wait, pause, close, stats, errors
 * (docs/ERRORS.md §2, §5, §6; docs/PROTOCOL.md §8.8, §10.5, §12). */
#include "sender/internal.h"
#include "qsf_assert.h"
#include "sender/losses.h"

#include "err.h"
#include "events.h"
#include "sender/backpressure.h"
#include "sender/opts.h"
#include "log.h"
#include "os/os.h"
#include "qwp/types.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOT_ADVERTISED_FRAME 1992294u /* ~1.9 MiB when the server gives no cap */

/* ------------------------------------------------------------------------- */
/* Producer guard                                                            */
/* ------------------------------------------------------------------------- */

int qsf_sender_check_fork(const qsf_sender *s, qsf_errinfo *err) {
    if (!s || !qsf_guard_forked(&s->guard))
        return QSF_OK;
    return qsf_err_set(err, QSF_E_STATE, 0, 0,
                       "this sender belongs to process %ld, which created it; process %ld is a "
                       "child of fork() and may not use it (only qsf_close, which releases this "
                       "process's copy; the parent's sender is unaffected)",
                       (long) s->pid, (long) getpid());
}

int qsf_sender_refuse(const qsf_sender *s, qsf_errinfo *err) {
    if (!s)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sender is NULL");
    if (qsf_guard_forked(&s->guard))
        return qsf_sender_check_fork(s, err);
    return qsf_err_set(err, QSF_E_BUSY, QSF_ERRF_RETRIABLE, 0,
                       "another thread is inside a call on this sender");
}

int qsf_sender_terminal(qsf_sender *s, qsf_errinfo *err) {
    int code = qsf_latch_get(&s->latch, err);
    qsf_guard_leave(&s->guard);
    return code;
}

/* ------------------------------------------------------------------------- */
/* Flush                                                                     */
/* ------------------------------------------------------------------------- */

/* Write-ahead: new dictionary entries go to .symbol-dict before their frame. */
static int on_new_symbols(void *u, uint32_t first, uint32_t count, const char *const *strs,
                          const size_t *lens, qsf_errinfo *err) {
    qsf_sender *s = u;
    uint32_t small[64] = {0};
    uint32_t *l32 = count <= 64 ? small : malloc(count * sizeof *l32);
    if (!l32)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory writing symbols");
    for (uint32_t i = 0; i < count; i++)
        l32[i] = (uint32_t) lens[i];
    int rc = qsf_ring_symdict_append(s->ring, first, count, strs, l32, err);
    if (l32 != small)
        free(l32);
    return rc;
}

static int emit_frame(void *u, const uint8_t *frame, size_t len, bool is_last, qsf_errinfo *err) {
    qsf_sender *s = u;
    (void) is_last;
    int rc = qsf_ring_txn_append(s->ring, frame, len, NULL, err);
    return qsf_backpressure_full(s->ring, s->io, rc, err);
}

/* Frames are built in the ring where it has room for them (no copy). */
static uint8_t *place_frame(void *u, size_t cap) {
    return qsf_ring_txn_place(((qsf_sender *) u)->ring, cap);
}

static void seal_frame(void *u, size_t len, bool is_last) {
    (void) is_last;
    qsf_ring_txn_append_placed(((qsf_sender *) u)->ring, len, NULL);
}

static void unplace_frame(void *u, size_t cap) {
    qsf_ring_txn_unplace(((qsf_sender *) u)->ring, cap);
}

static const qsf_qwp_placer ring_placer = {place_frame, seal_frame, unplace_frame};

/* Frame cap: ~90% of the advertised batch size, and what one segment holds. */
static size_t max_frame(qsf_sender *s) {
    int64_t mb = qsf_io_max_batch(s->io);
    size_t cap = mb > 0 ? (size_t) (mb / 10 * 9) : NOT_ADVERTISED_FRAME;
    size_t seg = qsf_ring_max_payload(s->ring);
    return cap < seg ? cap : seg;
}

/* The row limit of qsf_at_*: the frame cap as it is now, so that a row it
 * accepts always fits a frame. A cap that shrinks later (a server with a
 * smaller batch size) does not strand rows accepted before: the encoder then
 * sends such a row alone in a frame up to the segment's payload capacity. */
void qsf_sender_set_frame_limits(qsf_sender *s) {
    s->eo.max_frame = max_frame(s);
    s->eo.row_frame_max = qsf_ring_max_payload(s->ring);
    qsf_qwp_batch_set_max_row_frame(s->batch, s->eo.max_frame);
}

void qsf_sender_frame_outputs(const qsf_sender *s, qsf_qwp_on_new_symbols_fn *on_new,
                              qsf_qwp_emit_fn *emit, const qsf_qwp_placer **placer) {
    *on_new = s->eo.self_sufficient ? NULL : on_new_symbols;
    *emit = emit_frame;
    *placer = &ring_placer;
}

int qsf_sender_encode(qsf_sender *s, bool stage, qsf_qwp_encode_result *res, qsf_errinfo *err) {
    qsf_assert(qsf_guard_held(&s->guard)); /* the row buffer is the producer's */
    *res = (qsf_qwp_encode_result){0};
    s->eo.defer_last = stage;
    qsf_qwp_on_new_symbols_fn on_new;
    qsf_qwp_emit_fn emit;
    const qsf_qwp_placer *placer;
    qsf_sender_frame_outputs(s, &on_new, &emit, &placer);
    int rc = qsf_qwp_encode_placed(s->enc, s->batch, &s->eo, on_new, emit, placer, s, res, err);
    s->eo.defer_last = false;
    return rc;
}

/* One attempt at encoding the buffered rows and publishing the frames all or
 * nothing; on error nothing is published and every row is buffered as before. */
static int encode_and_publish(qsf_sender *s, bool fresh, qsf_qwp_encode_result *res,
                              qsf_errinfo *err) {
    uint32_t published = qsf_symtab_published(s->symtab);
    *res = (qsf_qwp_encode_result){0};
    int rc = fresh ? qsf_ring_txn_begin_fresh(s->ring, err) : qsf_ring_txn_begin(s->ring, err);
    if (rc == QSF_OK)
        rc = qsf_sender_encode(s, false, res, err);
    if (rc == QSF_OK)
        rc = qsf_ring_txn_commit(s->ring, err); /* aborts itself if its barrier fails */
    else {
        qsf_errinfo e;
        qsf_ring_txn_abort(s->ring, &e);
    }
    if (rc != QSF_OK)
        qsf_qwp_batch_rewind(s->batch, published);
    return rc;
}

int qsf_sender_failed(qsf_sender *s, int rc, qsf_errinfo *err) {
    unsigned doubt = err ? err->flags & QSF_ERRF_IN_DOUBT : 0;
    int t = qsf_latch_get(&s->latch, err); /* it may have ended a blocked append */
    if (t && err)
        err->flags |= doubt; /* the latched error says what, the flag still says whether */
    return t ? t : rc;
}

void qsf_sender_published(qsf_sender *s, uint64_t rows) {
    /* a row still open was not in the flush (a transaction committed with
     * every row staged): it stays, the rest is published */
    if (!qsf_qwp_batch_row_open(s->batch))
        qsf_qwp_batch_reset(s->batch);
    qsf_interval_reset(&s->ivl);
    qsf_assert(qsf_guard_held(&s->guard));
    qsf_assert(qsf_ring_published_fsn(s->ring) >= s->last_commit_fsn); /* never moves back */
    s->last_commit_fsn = qsf_ring_published_fsn(s->ring);
    qsf_backlog_published(&s->backlog, s->last_commit_fsn, rows, QSF_OS->mono_ns());
    qsf_io_wake(s->io);
}

/* Publishes the buffered rows all or nothing. A flush too large for the ring
 * only because it started behind older frames in their segment is tried once
 * more from a fresh segment (those frames are then trimmed once acknowledged). */
static int publish_batch(qsf_sender *s, qsf_errinfo *err) {
    qsf_sender_set_frame_limits(s);
    qsf_qwp_encode_result res;
    int rc = encode_and_publish(s, false, &res, err);
    if (rc == QSF_E_TOO_LARGE && qsf_ring_txn_started_behind(s->ring))
        rc = encode_and_publish(s, true, &res, err);
    if (rc != QSF_OK)
        return qsf_sender_failed(s, rc, err);
    qsf_sender_published(s, res.rows_consumed);
    return QSF_OK;
}

int qsf_sender_flush_locked(qsf_sender *s, int64_t *fsn_out, qsf_errinfo *err) {
    qsf_assert(qsf_guard_held(&s->guard)); /* the producer, inside the guard */
    int rc = QSF_OK;
    if (s->txn.open)
        rc = qsf_sender_txn_commit(s, err);
    else if (qsf_qwp_batch_rows(s->batch) > 0)
        rc = publish_batch(s, err);
    else
        rc = qsf_sender_srcpos_empty(s, err);
    if (fsn_out)
        *fsn_out = qsf_ring_published_fsn(s->ring);
    return rc;
}

/* What an auto-flush publishes: with transaction=on the rows are only staged
 * in the open transaction (txn.c), otherwise it is a flush. */
static int auto_flush(qsf_sender *s, qsf_errinfo *err) {
    return s->conf->transaction ? qsf_sender_txn_stage(s, err)
                                : qsf_sender_flush_locked(s, NULL, err);
}

/* The rule of include/qsf.h "Rows": a row call that returns an error leaves
 * the row out. The auto-flush this row triggered failed, so the row is taken
 * back; the rows accepted before it stay buffered for the next flush. (When
 * the failure aborted a transaction the row went with it: txn_fail's message
 * counts it among the rows given up.) */
static int row_left_out(qsf_sender *s, int rc, qsf_errinfo *err) {
    if (!qsf_qwp_batch_drop_last_row(s->batch) || !err)
        return rc;
    char cause[QSF_ERRINFO_MSG_MAX];
    snprintf(cause, sizeof cause, "%s", err->msg);
    return qsf_err_set(err, rc, err->flags, err->sys_errno,
                       "auto-flush failed; this row was not buffered (the %zu rows accepted "
                       "before it stay buffered): %.400s",
                       qsf_qwp_batch_rows(s->batch), cause);
}

int qsf_sender_after_row(qsf_sender *s, qsf_errinfo *err) {
    qsf_assert(qsf_guard_held(&s->guard));
    const qsf_conf *c = s->conf;
    qsf_interval_row(&s->ivl);
    if (!c->auto_flush)
        return QSF_OK;
    size_t rows = qsf_qwp_batch_rows(s->batch);
    bool due = (c->auto_flush_rows > 0 && rows >= (size_t) c->auto_flush_rows) ||
               qsf_interval_due(&s->ivl, rows);
    if (!due && c->auto_flush_bytes > 0) {
        int64_t mb = qsf_io_max_batch(s->io);
        int64_t lim = c->auto_flush_bytes;
        if (mb > 0 && lim > mb / 10 * 9)
            lim = mb / 10 * 9;
        due = qsf_qwp_batch_est_bytes(s->batch) >= (size_t) lim;
    }
    if (!due)
        return QSF_OK;
    int rc = auto_flush(s, err);
    return rc == QSF_OK ? QSF_OK : row_left_out(s, rc, err);
}

QSF_API int qsf_flush(qsf_sender *s, int64_t *fsn_out, qsf_errinfo *err) {
    int rc = qsf_sender_enter(s, err);
    if (rc != QSF_OK)
        return rc;
    rc = qsf_sender_flush_locked(s, fsn_out, err);
    qsf_sender_leave(s);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Creation                                                                  */
/* ------------------------------------------------------------------------- */

static int ring_open(qsf_sender *s, qsf_errinfo *err) {
    qsf_ring_opts ro = qsf_ring_opts_from_conf(s->conf, NULL);
    ro.latch = &s->latch;
    return qsf_ring_open(&ro, &s->ring, &s->rep, err);
}

/* Seeds the symbol table from the recovered dictionary (ids persist per slot). */
static int seed_symbols(qsf_sender *s, qsf_errinfo *err) {
    uint32_t n = qsf_ring_symdict_size(s->ring);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len;
        const char *e = qsf_ring_symdict_entry(s->ring, i, &len);
        int rc = qsf_symtab_seed(s->symtab, e ? e : "", e ? len : 0, err);
        if (rc != QSF_OK)
            return rc;
    }
    qsf_symtab_set_persisted(s->symtab, n);
    qsf_symtab_set_published(s->symtab, n);
    return QSF_OK;
}

static int codec_open(qsf_sender *s, qsf_errinfo *err) {
    const qsf_conf *c = s->conf;
    int rc = qsf_symtab_new(&s->symtab, err);
    if (rc == QSF_OK)
        rc = seed_symbols(s, err);
    qsf_qwp_batch_opts bo = {.init_buf_size = c->init_buf_size,
                             .max_buf_size = c->max_buf_size,
                             .max_name_len = (int) c->max_name_len,
                             .max_row_frame = NOT_ADVERTISED_FRAME};
    if (bo.max_row_frame > qsf_ring_max_payload(s->ring)) /* the real limit from the start */
        bo.max_row_frame = qsf_ring_max_payload(s->ring);
    if (rc == QSF_OK)
        rc = qsf_qwp_batch_new(s->symtab, &bo, &s->batch, err);
    if (rc == QSF_OK)
        rc = qsf_qwp_encoder_new(&s->enc, err);
    qsf_qwp_enc_opts_default(&s->eo);
    s->eo.self_sufficient = s->rep.self_sufficient;
    s->eo.keep_rows = true;
    return rc;
}

static int io_open(qsf_sender *s, qsf_errinfo *err) {
    qsf_io_opts *o = &s->ic.opts;
    o->recovered_published_fsn = s->rep.published_fsn;
    o->self_sufficient = s->rep.self_sufficient;
    o->events = s->events;
    o->interval = &s->ivl;
    if (s->conf->tls && !o->tls_verify)
        QSF_LOGW("tls_verify=unsafe_off: the server certificate is not verified");
    int rc = qsf_io_start(o, s->ring, s->inbox, &s->latch, &s->io, err);
    qsf_io_conf_clear(&s->ic);
    if (rc == QSF_OK) {
        qsf_backpressure_attach(s->ring, s->events);
    }
    return rc;
}

int qsf_sender_stop(qsf_sender *s, qsf_errinfo *err) {
    qsf_drainers_stop(s->drainers, NULL); /* they use the conf */
    s->drainers = NULL;
    qsf_io_free(s->io);
    s->io = NULL;
    int rc = s->ring ? qsf_ring_close(s->ring, err) : QSF_OK;
    s->ring = NULL;
    return rc;
}

void qsf_sender_free(qsf_sender *s) {
    qsf_sender_stop(s, NULL);
    qsf_io_conf_clear(&s->ic); /* when creation failed before the I/O thread */
    qsf_inbox_free(s->inbox);
    qsf_inbox_free(s->events);
    qsf_qwp_batch_free(s->batch);
    qsf_qwp_encoder_free(s->enc);
    qsf_symtab_free(s->symtab);
    qsf_conf_free(s->conf);
    qsf_backlog_destroy(&s->backlog);
    qsf_latch_destroy(&s->latch);
    qsf_guard_destroy(&s->guard);
    free(s);
}

static void report_quarantine(qsf_sender *s) {
    if (!s->rep.quarantined_slot[0])
        return;
    qsf_error_record r;
    memset(&r, 0, sizeof r);
    r.category = QSF_CAT_DATA_LOSS;
    r.policy = QSF_POLICY_ABANDONED;
    r.status = -1;
    r.wire_seq = r.from_fsn = r.to_fsn = -1;
    r.timestamp_us = QSF_OS->wall_us();
    snprintf(r.quarantined_path, sizeof r.quarantined_path, "%s", s->rep.quarantined_slot);
    snprintf(
        r.message, sizeof r.message,
        "unreplayable store-and-forward slot quarantined as %.500s; continuing on a fresh slot",
        s->rep.quarantined_slot);
    qsf_inbox_push(s->inbox, &r);
    qsf_latch_note_loss(&s->latch, 0, 0, r.message);
}

/* Opens the slot (recovering it), then starts the I/O thread; what recovery
 * gave up reaches the application as DATA_LOSS records (losses.c). */
QSF_API int qsf_sender_from_conf(const qsf_conf *conf, qsf_sender **out, qsf_errinfo *err) {
    if (!conf || !out)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "conf and out must not be NULL");
    *out = NULL;
    qsf_sender *s = calloc(1, sizeof *s);
    if (!s)
        return qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory creating a sender");
    qsf_backlog_init(&s->backlog);
    qsf_latch_init(&s->latch);
    qsf_guard_init(&s->guard);
    s->pid = getpid();
    s->last_commit_fsn = -1;
    qsf_interval_init(&s->ivl, conf->auto_flush ? qsf_conf_ms(conf->auto_flush_interval) : 0);
    s->quiet_below = !conf->auto_flush            ? SIZE_MAX
                     : conf->auto_flush_bytes > 0 ? 0
                     : conf->auto_flush_rows > 0  ? (size_t) conf->auto_flush_rows
                                                  : SIZE_MAX;
    s->conf = qsf_conf_clone(conf);
    s->inbox = qsf_inbox_new((int) conf->error_inbox_capacity);
    s->events = qsf_events_new((int) conf->connection_listener_inbox_capacity);
    int rc = s->conf && s->inbox && s->events
                 ? QSF_OK
                 : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory creating a sender");
    if (rc == QSF_OK) /* what the string names outside the slot is checked first */
        rc = qsf_io_conf_build(s->conf, NULL, &s->ic, err);
    if (rc == QSF_OK)
        rc = ring_open(s, err);
    if (rc == QSF_OK)
        rc = codec_open(s, err);
    if (rc == QSF_OK) {
        qsf_sender_log_recovery(s);
        report_quarantine(s);
        qsf_report_losses(s->ring, s->inbox, &s->latch);
        rc = io_open(s, err);
    }
    if (rc == QSF_OK)
        qsf_sender_set_frame_limits(s); /* the first server's cap, where it advertised one */
    if (rc == QSF_OK && s->conf->drain_orphans) /* after our own slot is held */
        qsf_drainers_start(s->conf, s->inbox, &s->latch, &s->drainers);
    if (rc != QSF_OK) {
        qsf_sender_free(s); /* nothing stays locked or running */
        return rc;
    }
    *out = s;
    return QSF_OK;
}

QSF_API int qsf_sender_new(const char *str, size_t len, qsf_sender **out, qsf_errinfo *err) {
    qsf_conf *c;
    int rc = qsf_conf_parse(str, len, &c, err);
    if (rc != QSF_OK)
        return rc;
    rc = qsf_sender_from_conf(c, out, err);
    qsf_conf_free(c);
    return rc;
}

QSF_API int qsf_sender_from_env(qsf_sender **out, qsf_errinfo *err) {
    qsf_conf *c;
    int rc = qsf_conf_from_env(&c, err);
    if (rc != QSF_OK)
        return rc;
    rc = qsf_sender_from_conf(c, out, err);
    qsf_conf_free(c);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Progress, wait, pause                                                     */
/* ------------------------------------------------------------------------- */

QSF_API int64_t qsf_published_fsn(const qsf_sender *s) {
    return qsf_sender_own(s) ? qsf_ring_published_fsn(s->ring) : -1;
}

QSF_API int64_t qsf_acked_fsn(const qsf_sender *s) {
    return qsf_sender_own(s) ? qsf_ring_acked_fsn(s->ring) : -1;
}

QSF_API int qsf_wait(qsf_sender *s, int64_t fsn, int level, int64_t no_progress_timeout_ms,
                     qsf_errinfo *err) {
    if (!s)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "sender is NULL");
    if (qsf_guard_forked(&s->guard)) /* no I/O thread here would ever wake it */
        return qsf_sender_check_fork(s, err);
    if (level != QSF_WAIT_OK && level != QSF_WAIT_DURABLE)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "unknown wait level %d", level);
    if (level == QSF_WAIT_DURABLE && !s->conf->request_durable_ack)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0, "QSF_WAIT_DURABLE needs request_durable_ack=on");
    /* docs/ERRORS.md §4: the latched error every time, even for an FSN
     * acknowledged before it latched */
    int t = qsf_latch_get(&s->latch, err);
    if (t)
        return t;
    int64_t pub = qsf_ring_published_fsn(s->ring);
    if (fsn > pub)
        return qsf_err_set(err, QSF_E_INVAL, 0, 0,
                           "fsn %" PRId64 " is beyond the published fsn %" PRId64, fsn, pub);
    return qsf_io_wait(s->io, fsn, level, no_progress_timeout_ms, false, err);
}

QSF_API int qsf_pause(qsf_sender *s) {
    if (!s)
        return QSF_E_INVAL;
    if (qsf_guard_forked(&s->guard))
        return QSF_E_STATE;
    qsf_io_pause(s->io, true);
    return QSF_OK;
}

QSF_API int qsf_resume(qsf_sender *s) {
    if (!s)
        return QSF_E_INVAL;
    if (qsf_guard_forked(&s->guard))
        return QSF_E_STATE;
    qsf_io_pause(s->io, false);
    return QSF_OK;
}

/* ------------------------------------------------------------------------- */
/* Errors (the stats: stats.c)                                               */
/* ------------------------------------------------------------------------- */

QSF_API int qsf_poll_error_sized(qsf_sender *s, qsf_error_record *out, size_t size) {
    qsf_error_record r;
    if (s && qsf_guard_forked(&s->guard)) /* the inbox's lock may be a parent thread's */
        return QSF_E_STATE;
    if (!s || !out || size < sizeof out->struct_size || !qsf_inbox_poll(s->inbox, &r))
        return 0;
    r.struct_size = size < sizeof r ? size : sizeof r;
    memcpy(out, &r, r.struct_size);
    return 1;
}

QSF_API int qsf_set_error_handler(qsf_sender *s, qsf_error_handler fn, void *user) {
    if (!s)
        return QSF_E_INVAL;
    if (qsf_guard_forked(&s->guard))
        return QSF_E_STATE;
    return qsf_inbox_set_handler(s->inbox, fn, user);
}
