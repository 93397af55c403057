/* The connection-event inbox of a sender (docs/ERRORS.md §11): an inbox
 * (inbox.h) of qsf_event, with the struct_size rule of include/qsf.h. The I/O
 * thread queues the connection's events (io/notify.c), the producer its
 * backpressure episodes (sender/backpressure.c); each logs its own line, so
 * nothing here logs. */
#ifndef QSF_EVENTS_H
#define QSF_EVENTS_H

#include "inbox.h"
#include "qsf.h"

/* An inbox of qsf_event; cap at least 1. NULL on OOM. */
qsf_inbox *qsf_events_new(int cap);

/* An event of `kind` now: struct_size and the timestamp set, FSNs -1, the
 * rest zero. */
void qsf_event_init(qsf_event *ev, int kind);

/* Queues a copy. NULL inbox: nothing (a drainer's connection has none). */
void qsf_events_push(qsf_inbox *ib, const qsf_event *ev);

/* qsf_poll_event: 1 and the oldest event (as much of it as out->struct_size
 * holds; struct_size set to the bytes filled), 0 when empty, QSF_E_INVAL when
 * out cannot hold the kind. */
int qsf_events_poll(qsf_inbox *ib, qsf_event *out);

int qsf_events_set_handler(qsf_inbox *ib, qsf_event_handler fn, void *user);

#endif
