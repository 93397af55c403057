/* Bounded drop-oldest error inbox and the dispatcher thread. */
#include "inbox.h"

#include "log.h"
#include "os/os.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INBOX_MIN_CAP     16
#define CLOSE_DELIVERY_NS 100000000ll /* 100 ms */

struct qsf_inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    qsf_error_record *q;
    int cap, head, count;
    qsf_error_handler fn;
    void *user;
    pthread_t thr;
    bool thr_started, stopping;
    _Atomic uint64_t dropped, delivered;
};

static const char *policy_name(int p) {
    switch (p) {
    case QSF_POLICY_RETRIABLE:
        return "RETRIABLE";
    case QSF_POLICY_RETRIABLE_OTHER:
        return "RETRIABLE_OTHER";
    case QSF_POLICY_TERMINAL:
        return "TERMINAL";
    default:
        return "ABANDONED";
    }
}

qsf_inbox *qsf_inbox_new(int cap) {
    qsf_inbox *ib = calloc(1, sizeof *ib);
    if (!ib)
        return NULL;
    ib->cap = cap < INBOX_MIN_CAP ? INBOX_MIN_CAP : cap;
    ib->q = calloc((size_t) ib->cap, sizeof *ib->q);
    if (!ib->q) {
        free(ib);
        return NULL;
    }
    pthread_mutex_init(&ib->mu, NULL);
    pthread_cond_init(&ib->cv, NULL);
    return ib;
}

void qsf_inbox_push(qsf_inbox *ib, const qsf_error_record *rec) {
    bool loud = rec->policy == QSF_POLICY_TERMINAL || rec->policy == QSF_POLICY_ABANDONED;
    qsf_log(loud ? QSF_LOG_ERROR : QSF_LOG_WARN,
            "%s error (status %d, wire seq %lld, fsn %lld..%lld) at %s: %s",
            policy_name(rec->policy), rec->status, (long long) rec->wire_seq,
            (long long) rec->from_fsn, (long long) rec->to_fsn,
            rec->endpoint[0] ? rec->endpoint : "-", rec->message);
    pthread_mutex_lock(&ib->mu);
    if (ib->count == ib->cap) { /* drop the oldest: the newest says the most */
        ib->head = (ib->head + 1) % ib->cap;
        ib->count--;
        atomic_fetch_add(&ib->dropped, 1);
    }
    qsf_error_record *slot = &ib->q[(ib->head + ib->count++) % ib->cap];
    *slot = *rec;
    slot->struct_size = sizeof *slot; /* what a handler may read */
    pthread_cond_broadcast(&ib->cv);
    pthread_mutex_unlock(&ib->mu);
}

static bool take_locked(qsf_inbox *ib, qsf_error_record *out) {
    if (!ib->count)
        return false;
    *out = ib->q[ib->head];
    ib->head = (ib->head + 1) % ib->cap;
    ib->count--;
    return true;
}

int qsf_inbox_poll(qsf_inbox *ib, qsf_error_record *out) {
    pthread_mutex_lock(&ib->mu);
    bool got = take_locked(ib, out);
    pthread_mutex_unlock(&ib->mu);
    return got ? 1 : 0;
}

/* The dispatcher: one record at a time, outside the lock, so a handler is never
 * re-entered and a slow one only delays later notifications. */
static void *dispatch_main(void *arg) {
    qsf_inbox *ib = arg;
    qsf_error_record rec;
    pthread_mutex_lock(&ib->mu);
    for (;;) {
        while (!ib->stopping && (!ib->count || !ib->fn))
            pthread_cond_wait(&ib->cv, &ib->mu);
        if (ib->stopping)
            break;
        qsf_error_handler fn = ib->fn;
        void *user = ib->user;
        take_locked(ib, &rec);
        pthread_mutex_unlock(&ib->mu);
        fn(user, &rec);
        atomic_fetch_add(&ib->delivered, 1);
        pthread_mutex_lock(&ib->mu);
    }
    pthread_mutex_unlock(&ib->mu);
    return NULL;
}

int qsf_inbox_set_handler(qsf_inbox *ib, qsf_error_handler fn, void *user) {
    int rc = QSF_OK;
    pthread_mutex_lock(&ib->mu);
    ib->fn = fn;
    ib->user = user;
    if (fn && !ib->thr_started) {
        if (pthread_create(&ib->thr, NULL, dispatch_main, ib) == 0) {
            ib->thr_started = true;
            pthread_setname_np(ib->thr, "qsf-dispatch");
        } else
            rc = QSF_E_INTERNAL;
    }
    pthread_cond_broadcast(&ib->cv);
    pthread_mutex_unlock(&ib->mu);
    return rc;
}

/* Waits up to 100 ms for the dispatcher to empty the queue. */
static void drain_for_close(qsf_inbox *ib) {
    int64_t deadline = QSF_OS->mono_ns() + CLOSE_DELIVERY_NS;
    pthread_mutex_lock(&ib->mu);
    while (ib->thr_started && ib->fn && ib->count && QSF_OS->mono_ns() < deadline) {
        pthread_mutex_unlock(&ib->mu);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
        pthread_mutex_lock(&ib->mu);
    }
    if (ib->fn) /* undeliverable now */
        atomic_fetch_add(&ib->dropped, (uint64_t) ib->count);
    ib->stopping = true;
    pthread_cond_broadcast(&ib->cv);
    pthread_mutex_unlock(&ib->mu);
}

void qsf_inbox_free(qsf_inbox *ib) {
    if (!ib)
        return;
    drain_for_close(ib);
    if (ib->thr_started)
        pthread_join(ib->thr, NULL);
    pthread_mutex_destroy(&ib->mu);
    pthread_cond_destroy(&ib->cv);
    free(ib->q);
    free(ib);
}

uint64_t qsf_inbox_dropped(const qsf_inbox *ib) {
    return atomic_load(&((qsf_inbox *) ib)->dropped);
}

uint64_t qsf_inbox_delivered(const qsf_inbox *ib) {
    return atomic_load(&((qsf_inbox *) ib)->delivered);
}
