/* The one owner of a sender's terminal state, and of the record of data it had
 * to give up.
 *
 * Terminal: the first terminal condition wins (a server rejection with a
 * terminal status, a protocol violation, credentials refused before the first
 * connection, a poisoned frame, a flush that could not be retracted). Any
 * thread may set it; it never changes afterwards. Every producer call and
 * qsf_close read it, and return it every time: a record delivered to an error
 * handler or polled from the inbox never counts as "the application saw it".
 * Whoever is blocked on the sender's behalf (a producer waiting for ring space,
 * a qsf_wait caller, the creation waiting for the first connection) is woken
 * by the subscribers registered at creation.
 *
 * Loss: frames and rows the sender gave up without delivering them (recovery
 * found them damaged, a memory-mode close left them unacknowledged). Losses
 * add up; they do not stop the sender. qsf_close reports them (QSF_E_DATA_LOSS
 * unless a terminal error outranks it).
 *
 * Threads: every function may be called from any thread; qsf_latch_subscribe
 * and _unsubscribe only while no thread can set the latch. */
#ifndef QSF_LATCH_H
#define QSF_LATCH_H

#include "qsf.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define QSF_LATCH_SUBSCRIBERS 4

/* Called by the thread that latched the terminal error, after it is visible. */
typedef void (*qsf_latch_fn)(void *user, int code);

typedef struct qsf_latch {
    _Atomic int code; /* 0 until the terminal error is latched; never changes after */
    pthread_mutex_t mu;
    qsf_errinfo terminal; /* under mu, written once */
    /* losses, under mu */
    uint64_t lost_frames, lost_rows;
    uint32_t losses;
    char loss_msg[QSF_ERRINFO_MSG_MAX]; /* the first loss, described */
    struct {
        qsf_latch_fn fn;
        void *user;
    } subs[QSF_LATCH_SUBSCRIBERS];
    int nsubs;
} qsf_latch;

void qsf_latch_init(qsf_latch *l);
void qsf_latch_destroy(qsf_latch *l);

/* Registers fn to run whenever the terminal error is latched. QSF_E_INTERNAL
 * when the table is full. */
int qsf_latch_subscribe(qsf_latch *l, qsf_latch_fn fn, void *user);

/* Removes a subscription (before its user is freed). */
void qsf_latch_unsubscribe(qsf_latch *l, qsf_latch_fn fn, void *user);

/* Latches `code` (< 0) with a message (printf-style) unless a terminal error is
 * already latched. Returns true when this call latched it. */
bool qsf_latch_set(qsf_latch *l, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The latched code, 0 if none: one atomic load, for the producer's fast path. */
static inline int qsf_latch_code(const qsf_latch *l) {
    return atomic_load_explicit(&((qsf_latch *) l)->code, memory_order_acquire);
}

/* The latched code, and the error (flag QSF_ERRF_FATAL) copied into err. */
int qsf_latch_get(const qsf_latch *l, qsf_errinfo *err);

/* Adds a loss of `frames` frames holding `rows` rows, described by `what`. */
void qsf_latch_note_loss(qsf_latch *l, uint64_t frames, uint64_t rows, const char *what);

/* Losses so far: count of events (0 if none), frames, rows, the first one's text. */
uint32_t qsf_latch_losses(const qsf_latch *l, uint64_t *frames, uint64_t *rows, char *msg,
                          size_t cap);

#endif
