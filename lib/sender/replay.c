/* Replaying an opened slot until a target is acknowledged (replay.h). */
#include "sender/replay.h"

#include "err.h"
#include "inbox.h"
#include "log.h"
#include "sender/opts.h"

#include <string.h>
#include <time.h>

static void sleep_ms(int64_t ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

static int start_io(const qsf_conf *conf, qsf_ring *ring, const qsf_recovery_report *rep,
                    qsf_inbox **inbox, qsf_io **io, qsf_errinfo *err) {
    qsf_io_conf ic;
    int rc = qsf_io_conf_build(conf, rep, &ic, err);
    if (rc != QSF_OK)
        return rc;
    ic.opts.initial_mode = QSF_IO_INIT_ASYNC; /* retried in the background */
    ic.opts.drainer = true;                   /* ... within a drainer's budgets */
    ic.opts.cap_gap_window_ms = qsf_conf_ms(conf->catch_up_cap_gap_min_escalation_window_millis);
    *inbox = qsf_inbox_new(16);
    /* The ring's own latch: a terminal error of this slot ends the replay and
     * never passes for one of a sender's. */
    rc = *inbox ? qsf_io_start(&ic.opts, ring, *inbox, qsf_ring_latch(ring), io, err)
                : qsf_err_set(err, QSF_E_NOMEM, 0, 0, "out of memory");
    qsf_io_conf_clear(&ic);
    if (rc != QSF_OK) {
        qsf_inbox_free(*inbox);
        *inbox = NULL;
    }
    return rc;
}

static void drain_inbox(qsf_inbox *inbox, const qsf_replay_hooks *h) {
    qsf_error_record rec;
    while (qsf_inbox_poll(inbox, &rec) == 1) /* already logged when queued */
        if (h && h->on_error)
            h->on_error(h->user, &rec);
}

static int wait_for(qsf_ring *ring, qsf_io *io, qsf_inbox *inbox, int64_t target,
                    const qsf_replay_hooks *h, qsf_errinfo *err) {
    qsf_latch *latch = qsf_ring_latch(ring);
    int64_t poll = h && h->poll_ms > 0 ? h->poll_ms : 50;
    for (;;) {
        if (qsf_ring_acked_fsn(ring) >= target)
            return QSF_REPLAY_DONE;
        if (qsf_latch_get(latch, err) != QSF_OK) {
            drain_inbox(inbox, h); /* the record of what failed */
            /* everything may have been acknowledged just before */
            return qsf_ring_acked_fsn(ring) >= target ? QSF_REPLAY_DONE : QSF_REPLAY_FAILED;
        }
        if (h && h->stop && h->stop(h->user, io))
            return QSF_REPLAY_STOPPED;
        sleep_ms(poll);
        drain_inbox(inbox, h);
        if (h && h->progress)
            h->progress(h->user, io);
    }
}

int qsf_replay(const qsf_conf *conf, qsf_ring *ring, const qsf_recovery_report *rep, int64_t target,
               const qsf_replay_hooks *hooks, qsf_errinfo *err) {
    qsf_inbox *inbox = NULL;
    qsf_io *io = NULL;
    if (start_io(conf, ring, rep, &inbox, &io, err) != QSF_OK)
        return QSF_REPLAY_NOT_STARTED;
    int out = wait_for(ring, io, inbox, target, hooks, err);
    qsf_io_stop(io);
    qsf_io_free(io);
    drain_inbox(inbox, hooks);
    qsf_inbox_free(inbox);
    return out;
}
