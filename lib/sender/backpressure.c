/* Backpressure episodes: the ring's hook, turned into events and log lines
 * (backpressure.h). Runs on the producer thread. */
#include "sender/backpressure.h"

#include "err.h"
#include "events.h"
#include "log.h"

#include <inttypes.h>
#include <stdio.h>

static void began(qsf_inbox *events, const qsf_ring_episode *ep) {
    QSF_LOGD("backpressure: the producer waits for %s: %s", ep->waiting, ep->cause);
    qsf_event ev;
    qsf_event_init(&ev, QSF_EVENT_BACKPRESSURE_BEGIN);
    ev.acked_fsn = ep->acked_now;
    ev.published_fsn = ep->published;
    snprintf(ev.cause, sizeof ev.cause, "%s", ep->cause);
    qsf_events_push(events, &ev);
}

static void ended(qsf_inbox *events, const qsf_ring_episode *ep) {
    qsf_event ev;
    qsf_event_init(&ev, QSF_EVENT_BACKPRESSURE_END);
    ev.duration_ms = ep->waited_ns / 1000000;
    ev.frames = (uint64_t) (ep->acked_now - ep->acked_begin);
    if (ev.frames) {
        ev.from_fsn = ep->acked_begin + 1;
        ev.to_fsn = ep->acked_now;
    }
    ev.acked_fsn = ep->acked_now;
    ev.published_fsn = ep->published;
    ev.code = ep->rc;
    snprintf(ev.cause, sizeof ev.cause, "waited for %s", ep->waiting);
    bool loud = ep->rc != QSF_OK || ev.duration_ms >= QSF_BACKPRESSURE_WARN_MS;
    qsf_log(
        loud ? QSF_LOG_WARN : QSF_LOG_INFO,
        "backpressure: the producer waited %" PRId64 " ms for room in the ring (for %s); %" PRIu64
        " frame%s acknowledged meanwhile (acked FSN %" PRId64 " -> %" PRId64
        " of published %" PRId64 ")%s%s",
        ev.duration_ms, ep->waiting, ev.frames, ev.frames == 1 ? " was" : "s were", ep->acked_begin,
        ep->acked_now, ep->published, ep->rc != QSF_OK ? "; the append failed: " : "",
        ep->rc != QSF_OK ? qsf_err_name(ep->rc) : "");
    qsf_events_push(events, &ev);
}

static void on_episode(void *user, int phase, const qsf_ring_episode *ep) {
    switch (phase) {
    case QSF_RING_EPISODE_BEGIN:
        began(user, ep);
        break;
    case QSF_RING_EPISODE_LONG:
        QSF_LOGW("backpressure: the producer has waited %" PRId64 " ms for room in the ring: %s",
                 ep->waited_ns / 1000000, ep->cause);
        break;
    default:
        ended(user, ep);
    }
}

void qsf_backpressure_attach(qsf_ring *r, qsf_inbox *events) {
    if (r)
        qsf_ring_set_episode_fn(r, on_episode, events, QSF_BACKPRESSURE_WARN_MS);
}

int qsf_backpressure_full(qsf_ring *r, qsf_io *io, int rc, qsf_errinfo *err) {
    if (rc != QSF_E_FULL || !io || !err || !qsf_ring_full_awaits_acks(r))
        return rc;
    char status[QSF_RING_FULL_CAUSE_MAX];
    qsf_io_status(io, status, sizeof status);
    qsf_ring_full_add_status(err, status);
    return rc;
}
