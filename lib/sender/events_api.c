/* The public API of connection events (include/qsf.h): the handler, polling
 * and the counts of a sender's event inbox (events.h). */
#include "sender/internal.h"

#include "events.h"

QSF_API int qsf_set_event_handler(qsf_sender *s, qsf_event_handler fn, void *user) {
    if (!s)
        return QSF_E_INVAL;
    if (qsf_guard_forked(&s->guard))
        return QSF_E_STATE;
    return qsf_events_set_handler(s->events, fn, user);
}

QSF_API int qsf_poll_event(qsf_sender *s, qsf_event *out) {
    if (!s || !out)
        return QSF_E_INVAL;
    if (qsf_guard_forked(&s->guard))
        return QSF_E_STATE;
    return qsf_events_poll(s->events, out);
}

QSF_API void qsf_event_counts(const qsf_sender *s, uint64_t *delivered, uint64_t *dropped) {
    s = qsf_sender_own(s);
    if (delivered)
        *delivered = s ? qsf_inbox_delivered(s->events) : 0;
    if (dropped)
        *dropped = s ? qsf_inbox_dropped(s->events) : 0;
}
