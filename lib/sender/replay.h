/* Replaying an opened slot to a server until a target FSN is acknowledged, on
 * a connection of its own: the loop of an orphan drainer (drain.c) and of the
 * operator's `qsf slot drain`. The connection uses the conf's addresses,
 * credentials, TLS and durable-ack settings, connects in the background and
 * gives up where a drainer does (io.h, opts.drainer). Its error records go to
 * an inbox of its own (each is logged once when it is queued) and to
 * hooks->on_error; they never reach a sender's inbox: they name FSNs of this
 * slot. */
#ifndef QSF_SENDER_REPLAY_H
#define QSF_SENDER_REPLAY_H

#include "conf/conf.h"
#include "io/io.h"
#include "sf/ring.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct qsf_replay_hooks {
    /* true: stop waiting (what is unacknowledged stays in the slot) */
    bool (*stop)(void *user, qsf_io *io);
    /* each error record of the connection */
    void (*on_error)(void *user, const qsf_error_record *rec);
    /* after each poll, with the connection's state (qsf_io_stats) */
    void (*progress)(void *user, qsf_io *io);
    void *user;
    int64_t poll_ms; /* 50 when 0 */
} qsf_replay_hooks;

enum qsf_replay_outcome {
    QSF_REPLAY_DONE = 0,        /* ackedFsn reached the target */
    QSF_REPLAY_FAILED = 1,      /* the connection failed for good: the reason in *err */
    QSF_REPLAY_STOPPED = 2,     /* hooks->stop ended the wait */
    QSF_REPLAY_NOT_STARTED = 3, /* no connection could be started (memory, threads): *err */
};

/* Replays `ring` (opened by the caller, `rep` what its recovery reported)
 * until its ackedFsn reaches `target`. Returns an enum qsf_replay_outcome;
 * the connection is stopped and freed before it returns. hooks may be NULL. */
int qsf_replay(const qsf_conf *conf, qsf_ring *ring, const qsf_recovery_report *rep, int64_t target,
               const qsf_replay_hooks *hooks, qsf_errinfo *err);

#endif
