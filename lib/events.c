/* The connection-event inbox: an inbox of qsf_event (events.h). */
#include "events.h"

#include "os/os.h"

#include <stddef.h>
#include <string.h>

static void call_event_handler(void (*fn)(void), void *user, const void *item) {
    ((qsf_event_handler) fn)(user, item);
}

static const qsf_inbox_kind event_kind = {
    .item_size = sizeof(qsf_event),
    .min_cap = 1,
    .call = call_event_handler,
    .thread = "qsf-events",
    .setter = "qsf_set_event_handler",
};

qsf_inbox *qsf_events_new(int cap) {
    return qsf_inbox_new_of(&event_kind, cap);
}

void qsf_event_init(qsf_event *ev, int kind) {
    memset(ev, 0, sizeof *ev);
    ev->struct_size = sizeof *ev;
    ev->kind = kind;
    ev->timestamp_us = QSF_OS->wall_us();
    ev->from_fsn = ev->to_fsn = ev->acked_fsn = ev->published_fsn = -1;
}

void qsf_events_push(qsf_inbox *ib, const qsf_event *ev) {
    if (ib)
        qsf_inbox_put(ib, ev);
}

/* The fields a caller knows: struct_size must reach past kind. */
#define EVENT_MIN_SIZE (offsetof(qsf_event, kind) + sizeof(int))

int qsf_events_poll(qsf_inbox *ib, qsf_event *out) {
    if (!out || out->struct_size < EVENT_MIN_SIZE)
        return QSF_E_INVAL;
    qsf_event ev;
    if (qsf_inbox_take(ib, &ev) != 1)
        return 0;
    size_t n = out->struct_size < sizeof ev ? out->struct_size : sizeof ev;
    ev.struct_size = n; /* the bytes filled */
    memcpy(out, &ev, n);
    return 1;
}

int qsf_events_set_handler(qsf_inbox *ib, qsf_event_handler fn, void *user) {
    return qsf_inbox_set_fn(ib, (void (*)(void)) fn, user);
}

QSF_API const char *qsf_event_name(int kind) {
    static const char *const names[] = {
        "UNKNOWN",      "CONNECTED",   "RECONNECTED",        "FAILED_OVER",
        "DISCONNECTED", "REPLAY_DONE", "BACKPRESSURE_BEGIN", "BACKPRESSURE_END",
        "PAUSED",       "RESUMED",     "NO_PROGRESS",
    };
    return kind > 0 && kind < (int) (sizeof names / sizeof names[0]) ? names[kind] : "UNKNOWN";
}
