/* qsf_stats: one snapshot of the sender's counters and gauges, gathered from
 * their owners (the I/O thread's atomics, the ring, the backlog, the inbox,
 * the latch, the drainer pool), and handed out in the size the caller knows
 * (docs/METRICS.md). */
#include "sender/internal.h"

#include "os/os.h"

#include <string.h>

static void null_sender(qsf_stats *st) {
    st->published_fsn = st->acked_fsn = st->highest_ok_fsn = -1;
    st->oldest_unacked_age_ms = -1;
}

/* Frames recovered from the slot carry no publish time of their own: the
 * segment that holds the oldest of them was created at or before it was
 * written, so its createdMicros gives an age that is never too young. Frames
 * published since have their flush's time in the backlog. */
static int64_t oldest_age_ms(const qsf_sender *s, int64_t acked) {
    if (acked < s->rep.published_fsn) {
        int64_t created = qsf_ring_created_us(s->ring, acked + 1);
        if (created >= 0) {
            int64_t age = (QSF_OS->wall_us() - created) / 1000;
            return age > 0 ? age : 0;
        }
    }
    return qsf_backlog_age_ms((qsf_backlog *) &s->backlog, acked, QSF_OS->mono_ns());
}

static void ring_gauges(const qsf_sender *s, qsf_stats *st) {
    st->published_fsn = qsf_ring_published_fsn(s->ring);
    st->acked_fsn = qsf_ring_acked_fsn(s->ring);
    if (st->published_fsn < st->acked_fsn) /* read in this order: acked may have moved */
        st->published_fsn = qsf_ring_published_fsn(s->ring);
    st->pending_frames = (uint64_t) (st->published_fsn - st->acked_fsn);
    st->pending_bytes = qsf_ring_pending_bytes(s->ring);
    st->backpressure_stalls = qsf_ring_backpressure_stalls(s->ring);
    st->oldest_unacked_age_ms = st->pending_frames ? oldest_age_ms(s, st->acked_fsn) : -1;
}

static void drain_gauges(const qsf_sender *s, qsf_stats *st) {
    qsf_drain_counts dc;
    qsf_drainers_stats(s->drainers, &dc);
    st->active_drainers = dc.active;
    st->orphans_queued = dc.queued;
    st->failed_slots = dc.failed_slots;
    st->drainers_succeeded = dc.succeeded;
    st->drainers_failed = dc.failed;
}

void qsf_sender_stats(const qsf_sender *s, qsf_stats *st) {
    s = qsf_sender_own(s); /* a sender inherited through fork(): the defaults */
    memset(st, 0, sizeof *st);
    st->struct_size = sizeof *st;
    if (!s) {
        null_sender(st);
        return;
    }
    qsf_io_stats(s->io, st);
    ring_gauges(s, st);
    st->error_notifications_dropped = qsf_inbox_dropped(s->inbox);
    st->error_notifications_delivered = qsf_inbox_delivered(s->inbox);
    st->events_delivered = qsf_inbox_delivered(s->events);
    st->events_dropped = qsf_inbox_dropped(s->events);
    int t = qsf_latch_code(&s->latch);
    st->terminal_error_code = t;
    if (t)
        st->last_error_code = t; /* a latched terminal error outranks later reports */
    st->data_losses = qsf_latch_losses(&s->latch, &st->frames_lost, &st->rows_lost, NULL, 0);
    drain_gauges(s, st);
}

QSF_API size_t qsf_stats_get_sized(const qsf_sender *s, qsf_stats *out, size_t size) {
    if (!out || size < sizeof out->struct_size)
        return 0;
    qsf_stats st;
    qsf_sender_stats(s, &st);
    size_t n = size < sizeof st ? size : sizeof st;
    st.struct_size = n;
    memcpy(out, &st, n);
    return n;
}
