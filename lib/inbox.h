/* The bounded error inbox and its dispatcher (docs/ERRORS.md §5).
 *
 * The I/O thread pushes error records; on overflow the oldest entry is dropped
 * and counted. The application polls, or registers a handler that a dispatcher
 * thread (started lazily) calls for each entry: handlers never run on the I/O
 * thread and are never re-entered. Every record is logged once when queued
 * (ERROR for TERMINAL / ABANDONED, WARN otherwise). */
#ifndef QSF_INBOX_H
#define QSF_INBOX_H

#include "qsf.h"

#include <stdint.h>

typedef struct qsf_inbox qsf_inbox;

/* cap is clamped to at least 16. NULL on OOM. */
qsf_inbox *qsf_inbox_new(int cap);

/* Delivers what is queued to the handler for at most 100 ms, counts the rest as
 * dropped, stops the dispatcher and frees. */
void qsf_inbox_free(qsf_inbox *ib);

/* Any thread. Never blocks on the handler. */
void qsf_inbox_push(qsf_inbox *ib, const qsf_error_record *rec);

/* 1 and the oldest record, or 0 when empty. Any thread. */
int qsf_inbox_poll(qsf_inbox *ib, qsf_error_record *out);

/* Registers (or with NULL removes) the handler; starts the dispatcher on first
 * use. Returns QSF_OK or QSF_E_NOMEM / QSF_E_INTERNAL if the thread cannot start. */
int qsf_inbox_set_handler(qsf_inbox *ib, qsf_error_handler fn, void *user);

uint64_t qsf_inbox_dropped(const qsf_inbox *ib);
uint64_t qsf_inbox_delivered(const qsf_inbox *ib);

#endif
