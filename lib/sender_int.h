/* The sender object shared by sender.c (lifecycle, flush, wait, close, stats)
 * and sender_rows.c (the row API). */
#ifndef QSF_SENDER_INT_H
#define QSF_SENDER_INT_H

#include "conf.h"
#include "drain.h"
#include "inbox.h"
#include "io/io.h"
#include "qsf.h"
#include "qwp/batch.h"
#include "qwp/encoder.h"
#include "qwp/symtab.h"
#include "sf/ring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define QSF_AGE_SLOTS 1024 /* flushes remembered for oldest_unacked_age_ms */

struct qsf_sender {
    qsf_conf *conf;
    qsf_ring *ring;
    qsf_recovery_report rep;
    qsf_inbox *inbox;
    qsf_io *io;
    qsf_drainers *drainers; /* drain_orphans=on: the orphan drainer pool, or NULL */
    qsf_symtab *symtab;
    qsf_qwp_batch *batch;
    qsf_qwp_encoder *enc;
    qsf_qwp_enc_opts eo;
    atomic_int busy;
    bool terminal_seen;   /* a producer call already returned the terminal error */
    bool last_deferred;   /* the last frame published carries FLAG_DEFER_COMMIT */
    int64_t first_row_ns; /* when the oldest buffered row was added, 0 if none */
    /* (last FSN of a flush, time) pairs for the age gauge; any thread reads */
    pthread_mutex_t age_mu;
    int64_t age_fsn[QSF_AGE_SLOTS], age_ns[QSF_AGE_SLOTS];
    int age_head, age_count;
};

/* Producer-call guard: NULL check, the in-use latch, the latched terminal error.
 * Returns QSF_OK with the latch held, or an error without it. */
int qsf_sender_enter(qsf_sender *s, qsf_errinfo *err);
void qsf_sender_leave(qsf_sender *s);

/* Runs the auto-flush triggers after a completed row (latch held). */
int qsf_sender_after_row(qsf_sender *s, qsf_errinfo *err);

#endif
