/* The progress watch (docs/ERRORS.md §8): a network fault never ends a
 * sender, so a sender that is stuck must say so. While frames wait for
 * confirmation and none is confirmed, the I/O thread writes a WARN "no
 * progress for T ms" and queues a NO_PROGRESS event, at growing intervals: the
 * first after liveness_timeout_millis (15 s when that is disabled), the next
 * after twice as long again, then four times, ..., at most an hour apart.
 * Any confirmation (an OK, a durable ack, a retired flush) starts it over;
 * a paused wire and a stopped sender say nothing. I/O thread, every tick,
 * connected or not. */
#include "io/io_int.h"

#include "events.h"
#include "log.h"

#include <inttypes.h>
#include <stdio.h>

#define FIRST_DEFAULT_MS 15000
#define STEP_MAX_MS      3600000

static int64_t first_step_ms(const qsf_io *io) {
    return io->o.liveness_timeout_ms > 0 ? io->o.liveness_timeout_ms : FIRST_DEFAULT_MS;
}

/* Nothing waits, something was confirmed since the last look, or nothing is
 * expected: the wire is paused on purpose, or the sender stopped (its ERROR
 * said why). */
static bool progressed(qsf_io *io, int64_t now) {
    qsf_io_loop *l = &io->l;
    int64_t ok = atomic_load(&io->x.highest_ok), acked = qsf_ring_acked_fsn(io->ring);
    bool expected = l->st != QSF_IO_PAUSED && l->st != QSF_IO_TERMINAL && l->st != QSF_IO_STOPPED;
    if (expected && qsf_ack_head_of_line(io) >= 0 && ok == l->seen_ok && acked == l->seen_acked)
        return false;
    l->seen_ok = ok;
    l->seen_acked = acked;
    l->progress_ns = now;
    l->stuck_step_ms = first_step_ms(io);
    l->stuck_next_ns = now + l->stuck_step_ms * QSF_IO_MS;
    return true;
}

static void say_stuck(qsf_io *io, int64_t now) {
    qsf_event ev;
    qsf_event_init(&ev, QSF_EVENT_NO_PROGRESS);
    ev.acked_fsn = qsf_ring_acked_fsn(io->ring);
    ev.published_fsn = qsf_ring_published_fsn(io->ring);
    ev.from_fsn = qsf_ack_head_of_line(io);
    ev.to_fsn = ev.published_fsn;
    ev.duration_ms = (now - io->l.progress_ns) / QSF_IO_MS;
    char status[400];
    qsf_io_status(io, status, sizeof status);
    pthread_mutex_lock(&io->x.mu);
    snprintf(ev.endpoint, sizeof ev.endpoint, "%s", io->x.cur_host);
    pthread_mutex_unlock(&io->x.mu);
    QSF_LOGW("%sno progress for %" PRId64 " ms: FSN %" PRId64 "..%" PRId64
             " not confirmed (%s); still trying: a network fault never stops the sender",
             io->o.drainer ? "drain_orphans: " : "", ev.duration_ms, ev.from_fsn, ev.to_fsn,
             status);
    qsf_events_push(io->o.events, &ev);
}

void qsf_progress_tick(qsf_io *io, int64_t now) {
    qsf_io_loop *l = &io->l;
    if (progressed(io, now) || now < l->stuck_next_ns)
        return;
    say_stuck(io, now);
    l->stuck_step_ms = l->stuck_step_ms * 2 > STEP_MAX_MS ? STEP_MAX_MS : l->stuck_step_ms * 2;
    l->stuck_next_ns = now + l->stuck_step_ms * QSF_IO_MS;
}
