/* Bounded drop-oldest inboxes and their dispatchers (docs/ERRORS.md §5).
 *
 * An inbox holds fixed-size items of one kind: error records (this header's
 * qsf_inbox_push / _poll / _set_handler) or connection events (events.h).
 * Any thread queues; on overflow the oldest item is dropped and counted. The
 * application polls, or registers a handler that the inbox's dispatcher
 * thread (started with the first handler) calls for each item, one at a time,
 * outside every lock: a handler never runs on the thread that queued, is
 * never re-entered, and a slow one only delays later items. When
 * qsf_inbox_set_fn returns QSF_OK, the handler it replaced is not running any
 * more (unless it was called from that handler), and qsf_inbox_free returns only
 * once the dispatcher has ended: no handler runs after either.
 *
 * Every error record is logged once when queued (ERROR for TERMINAL /
 * ABANDONED, WARN otherwise), unless its caller says its line was written
 * already (qsf_inbox_push_logged). Events are logged by whoever emits them. */
#ifndef QSF_INBOX_H
#define QSF_INBOX_H

#include "qsf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct qsf_inbox qsf_inbox;

/* Calls the application's handler, of the type the kind knows, with one item. */
typedef void (*qsf_inbox_call)(void (*fn)(void), void *user, const void *item);

typedef struct qsf_inbox_kind {
    size_t item_size;
    int min_cap;         /* a smaller capacity is raised to it */
    qsf_inbox_call call; /* how the dispatcher calls a handler */
    const char *thread;  /* the dispatcher's thread name (at most 15 characters) */
    const char *setter;  /* the public call that sets its handler, for a refusal's log line */
} qsf_inbox_kind;

/* NULL on OOM. The kind must outlive the inbox. */
qsf_inbox *qsf_inbox_new_of(const qsf_inbox_kind *kind, int cap);

/* Delivers what is queued to the handler for at most 100 ms, counts the rest as
 * dropped and stops the dispatcher (waiting for a handler that is running):
 * no handler runs after it returns, and none is started. The inbox itself
 * stays, for the calls a handler made while it ran. Once only is enough; a
 * later call does nothing. NULL is a no-op. */
void qsf_inbox_stop(qsf_inbox *ib);

/* qsf_inbox_stop, then frees. NULL is a no-op. */
void qsf_inbox_free(qsf_inbox *ib);

/* Any thread. Never blocks on the handler. */
void qsf_inbox_put(qsf_inbox *ib, const void *item);

/* 1 and the oldest item, or 0 when empty. Any thread. */
int qsf_inbox_take(qsf_inbox *ib, void *out);

/* Registers (or with NULL removes) the handler; starts the dispatcher on first
 * use. Returns QSF_OK or QSF_E_INTERNAL if the thread cannot start. On the
 * dispatcher of another inbox (inside a handler, of any sender) it returns
 * QSF_E_STATE, logs why and changes nothing: it would wait there for this
 * inbox's handler to return, and two handlers that set each other's handler
 * (or a ring of them) would wait for each other forever. On this inbox's own
 * dispatcher it works and does not wait (for the caller itself). */
int qsf_inbox_set_fn(qsf_inbox *ib, void (*fn)(void), void *user);

/* True on the inbox's dispatcher thread, i.e. inside one of its handlers:
 * there the inbox must not be stopped or freed (the dispatcher goes on using
 * it when the handler returns). NULL: false. */
bool qsf_inbox_is_dispatcher(qsf_inbox *ib);

/* True on the dispatcher thread of any inbox, of any sender: inside an error
 * or event handler. */
bool qsf_inbox_on_a_dispatcher(void);

uint64_t qsf_inbox_dropped(const qsf_inbox *ib);
uint64_t qsf_inbox_delivered(const qsf_inbox *ib);

/* ---- the error inbox ---- */

/* An inbox of qsf_error_record; cap is raised to at least 16. */
qsf_inbox *qsf_inbox_new(int cap);

/* Logs the record once, then queues it. */
void qsf_inbox_push(qsf_inbox *ib, const qsf_error_record *rec);

/* The same, the line starting with `who` (e.g. "drain_orphans: ", whose
 * records name another slot's FSNs; "" for none). */
void qsf_inbox_push_from(qsf_inbox *ib, const qsf_error_record *rec, const char *who);

/* Queues a record whose failure was logged already (by the code that found
 * it), so it is not logged twice. */
void qsf_inbox_push_logged(qsf_inbox *ib, const qsf_error_record *rec);

int qsf_inbox_poll(qsf_inbox *ib, qsf_error_record *out);
int qsf_inbox_set_handler(qsf_inbox *ib, qsf_error_handler fn, void *user);

#endif
