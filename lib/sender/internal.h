/* The sender object shared by sender.c (lifecycle, flush, wait), rows.c (the
 * row API), close.c, stats.c and metrics.c. */
#ifndef QSF_SENDER_INT_H
#define QSF_SENDER_INT_H

#include "sender/backlog.h"
#include "conf/conf.h"
#include "sender/drain.h"
#include "sender/guard.h"
#include "inbox.h"
#include "interval.h"
#include "io/io.h"
#include "latch.h"
#include "qsf.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"
#include "qwp/symtab.h"
#include "sender/opts.h"
#include "sf/ring.h"

#include <pthread.h>
#include <sys/types.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The open application transaction (transaction=on, txn.c): the ring's flush
 * transaction held open across calls, and what is staged in it. */
typedef struct qsf_sender_txn {
    bool open;           /* the ring's flush is open with staged frames (or being staged) */
    uint32_t published0; /* the symbol table's published watermark when it began */
    uint64_t rows;       /* rows staged in the ring (deferred frames, not visible) */
    uint64_t frames;     /* their frames */
} qsf_sender_txn;

struct qsf_sender {
    qsf_conf *conf;
    qsf_latch latch; /* the one owner of the terminal state (latch.h) */
    qsf_ring *ring;
    qsf_recovery_report rep;
    qsf_inbox *inbox;  /* error records */
    qsf_inbox *events; /* connection events (events.h) */
    qsf_io_conf ic;    /* built before the slot is opened (a bad tls_roots touches no slot) */
    qsf_io *io;
    qsf_drainers *drainers; /* drain_orphans=on: the orphan drainer pool, or NULL */
    qsf_symtab *symtab;
    qsf_qwp_batch *batch;
    qsf_qwp_encoder *enc;
    qsf_qwp_enc_opts eo;
    qsf_guard guard;         /* one thread inside a call at a time (guard.h) */
    bool last_deferred;      /* the last frame published carries FLAG_DEFER_COMMIT */
    int64_t last_commit_fsn; /* FSN of the last committing frame published, -1 if none */
    qsf_interval ivl;        /* auto_flush_interval: the open batch's start (interval.h) */
    size_t quiet_below;  /* rows under which only the interval can flush (qsf_sender_row_quiet) */
    qsf_backlog backlog; /* per-flush times and rows of what is unacknowledged */
    qsf_sender_txn txn;  /* transaction=on: the open transaction */
    pid_t pid;           /* the process that created it (fork(): docs/THREADING.md) */
};

/* The sender as this process may use it: NULL for NULL and for a sender
 * inherited through fork() (docs/THREADING.md "fork()"), so that the calls
 * which cannot return QSF_E_STATE answer as for a NULL sender. */
static inline const qsf_sender *qsf_sender_own(const qsf_sender *s) {
    return s && !qsf_guard_forked(&s->guard) ? s : NULL;
}

/* QSF_E_STATE for a sender inherited through fork(), naming both processes;
 * QSF_OK for a sender of this process (NULL included). */
int qsf_sender_check_fork(const qsf_sender *s, qsf_errinfo *err);

/* The refusals of qsf_sender_enter, out of line: a NULL sender or another
 * thread inside (QSF_E_BUSY), and the latched terminal error (the guard was
 * entered and is left). */
int qsf_sender_refuse(const qsf_sender *s, qsf_errinfo *err);
int qsf_sender_terminal(qsf_sender *s, qsf_errinfo *err);

/* Producer-call guard: NULL check, the guard, the latched terminal error.
 * Returns QSF_OK inside the guard, or an error outside it. Every row call goes
 * through it: the guard's fast path is plain loads and stores (guard.h), and
 * the terminal code is one relaxed load, read again with acquire ordering and
 * its message only when it is set. */
static inline int qsf_sender_enter(qsf_sender *s, qsf_errinfo *err) {
    if (!s || !qsf_guard_enter(&s->guard))
        return qsf_sender_refuse(s, err);
    if (atomic_load_explicit(&s->latch.code, memory_order_relaxed) == 0)
        return QSF_OK;
    return qsf_sender_terminal(s, err);
}
static inline void qsf_sender_leave(qsf_sender *s) {
    qsf_guard_leave(&s->guard);
}

/* The row calls' fast path: the owner thread, no terminal error latched.
 * True inside the guard (leave with qsf_sender_leave_fast); false with
 * nothing held, and the caller takes qsf_sender_enter's full path, which
 * reports why. */
static inline bool qsf_sender_enter_fast(qsf_sender *s) {
    if (!s || !qsf_guard_enter_fast(&s->guard))
        return false;
    if (atomic_load_explicit(&s->latch.code, memory_order_relaxed) == 0)
        return true;
    qsf_guard_leave_fast();
    return false;
}
static inline void qsf_sender_leave_fast(void) {
    qsf_guard_leave_fast();
}

/* Runs the auto-flush triggers after a completed row (latch held). */
int qsf_sender_after_row(qsf_sender *s, qsf_errinfo *err);

/* True when the row just completed cannot trigger an auto-flush, so that
 * qsf_sender_after_row need not run: past the interval's exact rows (its start
 * is set), under auto_flush_rows, no byte trigger, and the I/O thread has not
 * marked the batch due (interval.h). `rows`: the batch's rows. */
static inline bool qsf_sender_row_quiet(const qsf_sender *s, size_t rows) {
    return rows >= QSF_INTERVAL_EXACT_ROWS && rows < s->quiet_below &&
           !qsf_interval_due(&s->ivl, rows); /* past the exact rows: the mark alone, no clock */
}

/* Encodes every buffered row and publishes the frames (latch held). */
int qsf_sender_flush_locked(qsf_sender *s, int64_t *fsn_out, qsf_errinfo *err);

/* The frame caps of the encoder and the row limit, from the server's batch
 * cap and the segment size as they are now. */
void qsf_sender_set_frame_limits(qsf_sender *s);

/* Encodes every buffered row into the ring's open flush (begun by the
 * caller); `stage`: the last frame carries FLAG_DEFER_COMMIT too. */
int qsf_sender_encode(qsf_sender *s, bool stage, qsf_qwp_encode_result *res, qsf_errinfo *err);

/* Where the sender's frames go (sender.c): the write-ahead into .symbol-dict
 * (NULL in self-sufficient mode), the ring's append, and its placer; `user`
 * is the sender. For encoders besides the row buffer's (lib/chunk). */
void qsf_sender_frame_outputs(const qsf_sender *s, qsf_qwp_on_new_symbols_fn *on_new,
                              qsf_qwp_emit_fn *emit, const qsf_qwp_placer **placer);

/* After a failed flush: the latched terminal error if one is set (keeping
 * QSF_ERRF_IN_DOUBT from err), else rc. */
int qsf_sender_failed(qsf_sender *s, int rc, qsf_errinfo *err);

/* After a committed flush of `rows` rows: the batch is reset, the backlog
 * and the I/O thread told. */
void qsf_sender_published(qsf_sender *s, uint64_t rows);

/* transaction=on (txn.c). stage: an auto-flush, the buffered rows go into the
 * open transaction as deferred frames (opening it). commit: qsf_flush, the
 * rest and the committing frame, then the whole transaction is published.
 * abandon: the open transaction and the buffered rows are given up; returns
 * their rows. Once frames are staged, QSF_E_FULL from stage or commit leaves
 * the transaction as it was before the call (open, the rows buffered again);
 * any other failure aborts the whole transaction (nothing of it is ever
 * delivered) and says so in err. */
int qsf_sender_txn_stage(qsf_sender *s, qsf_errinfo *err);
/* An encode into the ring's open flush: `stage`, its last frame deferred too.
 * On error it leaves the symbol table's ids as they were (the caller puts the
 * published watermark back). */
typedef int (*qsf_sender_encode_fn)(qsf_sender *s, void *user, bool stage,
                                    qsf_qwp_encode_result *res, qsf_errinfo *err);
/* As qsf_sender_txn_stage, with the frames fn encodes (lib/chunk's chunks);
 * the row buffer must be empty (stage the rows first). */
int qsf_sender_txn_stage_with(qsf_sender *s, qsf_sender_encode_fn fn, void *user, qsf_errinfo *err);
int qsf_sender_txn_commit(qsf_sender *s, qsf_errinfo *err);
uint64_t qsf_sender_txn_abandon(qsf_sender *s);
/* srcpos.c: qsf_flush with nothing to publish commits a staged position. */
int qsf_sender_srcpos_empty(qsf_sender *s, qsf_errinfo *err);

/* Stops the drainers and the I/O thread and closes the ring (SF: a fully
 * acknowledged slot's files are removed, docs/DURABILITY.md §12); returns the ring
 * close's result. Idempotent. */
int qsf_sender_stop(qsf_sender *s, qsf_errinfo *err);

/* The whole snapshot of qsf_stats (stats.c); a NULL sender gives the
 * defaults. Any thread. */
void qsf_sender_stats(const qsf_sender *s, qsf_stats *st);

/* The line of the slot recovery found, and what it repaired (recovery_line.c). */
void qsf_sender_log_recovery(const qsf_sender *s);

/* What qsf_close returns for what it found (close.c), before the latched
 * terminal error (which outranks it) and the ring's own close: DATA_LOSS for
 * data given up (`lost`: a loss was recorded), TIMEOUT for frames left in
 * slots (the sender's own, orphan slots interrupted or never started), else
 * QSF_OK. */
int qsf_close_outcome(const qsf_close_info *ci, bool lost);

/* qsf_sender_stop, then frees everything. */
void qsf_sender_free(qsf_sender *s);

#endif
