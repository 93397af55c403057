/* Bounded drop-oldest inboxes of fixed-size items, their dispatcher thread,
 * and the error inbox built on them. */
#include "inbox.h"

#include "log.h"
#include "os/os.h"
#include "qsf_assert.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ERROR_INBOX_MIN_CAP 16
#define CLOSE_DELIVERY_NS   100000000ll /* 100 ms */

struct qsf_inbox {
    const qsf_inbox_kind *kind;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* an item queued, a handler set, a call finished, stopping */
    unsigned char *q;  /* cap items of kind->item_size */
    void *item;        /* the dispatcher's copy of the item it delivers */
    int cap, head, count;
    void (*fn)(void);
    void *user;
    pthread_t thr;
    bool thr_started, stopping, joined;
    bool calling;         /* the dispatcher is inside the handler */
    uint64_t calls_ended; /* calls that have returned: tells one call from the next */
    _Atomic uint64_t dropped, delivered;
};

static unsigned char *slot(qsf_inbox *ib, int i) {
    return ib->q + (size_t) (i % ib->cap) * ib->kind->item_size;
}

qsf_inbox *qsf_inbox_new_of(const qsf_inbox_kind *kind, int cap) {
    qsf_inbox *ib = calloc(1, sizeof *ib);
    if (!ib)
        return NULL;
    ib->kind = kind;
    ib->cap = cap < kind->min_cap ? kind->min_cap : cap;
    ib->q = calloc((size_t) ib->cap, kind->item_size);
    ib->item = malloc(kind->item_size);
    if (!ib->q || !ib->item) {
        free(ib->q);
        free(ib->item);
        free(ib);
        return NULL;
    }
    pthread_mutex_init(&ib->mu, NULL);
    pthread_cond_init(&ib->cv, NULL);
    return ib;
}

void qsf_inbox_put(qsf_inbox *ib, const void *item) {
    pthread_mutex_lock(&ib->mu);
    if (ib->count == ib->cap) { /* drop the oldest: the newest says the most */
        ib->head = (ib->head + 1) % ib->cap;
        ib->count--;
        atomic_fetch_add(&ib->dropped, 1);
    }
    memcpy(slot(ib, ib->head + ib->count++), item, ib->kind->item_size);
    qsf_assert(ib->count <= ib->cap);
    pthread_cond_broadcast(&ib->cv);
    pthread_mutex_unlock(&ib->mu);
}

static bool take_locked(qsf_inbox *ib, void *out) {
    qsf_assert_held(&ib->mu);
    if (!ib->count)
        return false;
    memcpy(out, slot(ib, ib->head), ib->kind->item_size);
    ib->head = (ib->head + 1) % ib->cap;
    ib->count--;
    return true;
}

int qsf_inbox_take(qsf_inbox *ib, void *out) {
    pthread_mutex_lock(&ib->mu);
    bool got = take_locked(ib, out);
    pthread_mutex_unlock(&ib->mu);
    return got ? 1 : 0;
}

/* The inbox whose dispatcher this thread is, or NULL: a dispatcher thread
 * runs dispatch_main and nothing else. The one record of which thread
 * dispatches for whom: set by the thread itself, read only by it. */
static _Thread_local const qsf_inbox *dispatching;

static bool on_dispatcher(const qsf_inbox *ib) {
    return dispatching == ib;
}

/* The dispatcher: one item at a time, outside the lock, so a handler is never
 * re-entered and a slow one only delays later items. */
static void *dispatch_main(void *arg) {
    qsf_inbox *ib = arg;
    void *item = ib->item;
    dispatching = ib;
    pthread_mutex_lock(&ib->mu);
    for (;;) {
        while (!ib->stopping && (!ib->count || !ib->fn))
            pthread_cond_wait(&ib->cv, &ib->mu);
        if (ib->stopping)
            break;
        void (*fn)(void) = ib->fn;
        void *user = ib->user;
        qsf_assert(!ib->calling && on_dispatcher(ib)); /* one call at a time, on this thread */
        take_locked(ib, item);
        ib->calling = true;
        pthread_mutex_unlock(&ib->mu);
        ib->kind->call(fn, user, item);
        atomic_fetch_add(&ib->delivered, 1);
        pthread_mutex_lock(&ib->mu);
        ib->calling = false;
        ib->calls_ended++;
        pthread_cond_broadcast(&ib->cv); /* for a set_fn waiting for this call */
    }
    pthread_mutex_unlock(&ib->mu);
    return NULL;
}

bool qsf_inbox_is_dispatcher(qsf_inbox *ib) {
    return ib && on_dispatcher(ib);
}

bool qsf_inbox_on_a_dispatcher(void) {
    return dispatching != NULL;
}

/* Setting a handler waits for the one it replaces to return. Inside another
 * inbox's handler that wait could be the other half of a cycle: two handlers
 * setting each other's handler each wait for the other. Not waiting would
 * break the promise that the handler replaced is not running any more, on
 * which a caller frees what that handler uses; so the call is refused. */
static bool refused_here(const qsf_inbox *ib) {
    if (!dispatching || dispatching == ib)
        return false;
    qsf_log(QSF_LOG_WARN,
            "%s refused (QSF_E_STATE): called from an error or event handler (of any sender) on "
            "another handler than that one; it would wait for the handler it replaces to return, "
            "and handlers that set each other's handler would wait for each other forever; set "
            "it from an application thread",
            ib->kind->setter ? ib->kind->setter : "setting a handler");
    return true;
}

int qsf_inbox_set_fn(qsf_inbox *ib, void (*fn)(void), void *user) {
    if (refused_here(ib))
        return QSF_E_STATE;
    int rc = QSF_OK;
    pthread_mutex_lock(&ib->mu);
    ib->fn = fn;
    ib->user = user;
    if (fn && !ib->thr_started && !ib->stopping) { /* none starts once stopped */
        if (pthread_create(&ib->thr, NULL, dispatch_main, ib) == 0) {
            ib->thr_started = true;
            pthread_setname_np(ib->thr, ib->kind->thread);
        } else
            rc = QSF_E_INTERNAL;
    }
    pthread_cond_broadcast(&ib->cv);
    /* the handler replaced may be running: it has returned when we do. Only
     * that call: the next one, which may start before we wake, is the new
     * handler's (waiting for it too could wait on the caller itself). */
    uint64_t running = ib->calls_ended;
    while (ib->calling && ib->calls_ended == running && !on_dispatcher(ib))
        pthread_cond_wait(&ib->cv, &ib->mu);
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

void qsf_inbox_stop(qsf_inbox *ib) {
    if (!ib || ib->joined)
        return;
    drain_for_close(ib);
    if (ib->thr_started) /* after a handler that is running has returned */
        pthread_join(ib->thr, NULL);
    ib->joined = true;
}

void qsf_inbox_free(qsf_inbox *ib) {
    if (!ib)
        return;
    qsf_inbox_stop(ib);
    pthread_mutex_destroy(&ib->mu);
    pthread_cond_destroy(&ib->cv);
    free(ib->q);
    free(ib->item);
    free(ib);
}

uint64_t qsf_inbox_dropped(const qsf_inbox *ib) {
    return atomic_load(&((qsf_inbox *) ib)->dropped);
}

uint64_t qsf_inbox_delivered(const qsf_inbox *ib) {
    return atomic_load(&((qsf_inbox *) ib)->delivered);
}

/* ---- the error inbox ---- */

static void call_error_handler(void (*fn)(void), void *user, const void *item) {
    ((qsf_error_handler) fn)(user, item);
}

static const qsf_inbox_kind error_kind = {
    .item_size = sizeof(qsf_error_record),
    .min_cap = ERROR_INBOX_MIN_CAP,
    .call = call_error_handler,
    .thread = "qsf-dispatch",
    .setter = "qsf_set_error_handler",
};

qsf_inbox *qsf_inbox_new(int cap) {
    return qsf_inbox_new_of(&error_kind, cap);
}

void qsf_inbox_push_logged(qsf_inbox *ib, const qsf_error_record *rec) {
    qsf_assert(ib->kind == &error_kind);
    qsf_error_record r = *rec;
    r.struct_size = sizeof r; /* what a handler may read */
    qsf_inbox_put(ib, &r);
}

/* "(server status 3, wire seq 7, FSN 12..12)": only what the record has; a
 * record about no frame (a connection lost with nothing unacknowledged) says
 * nothing of FSNs rather than an empty span. */
static void record_where(const qsf_error_record *rec, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    if (rec->status >= 0)
        n += (size_t) snprintf(buf + n, cap - n, ", server status %d", rec->status);
    if (rec->wire_seq >= 0 && n < cap)
        n += (size_t) snprintf(buf + n, cap - n, ", wire seq %lld", (long long) rec->wire_seq);
    if (rec->from_fsn >= 0 && rec->from_fsn <= rec->to_fsn && n < cap)
        snprintf(buf + n, cap - n, ", FSN %lld..%lld", (long long) rec->from_fsn,
                 (long long) rec->to_fsn);
}

void qsf_inbox_push_from(qsf_inbox *ib, const qsf_error_record *rec, const char *who) {
    bool loud = rec->policy == QSF_POLICY_TERMINAL || rec->policy == QSF_POLICY_ABANDONED;
    char where[128]; /* the longest: 19 + 30 + 46 bytes */
    record_where(rec, where, sizeof where);
    qsf_log(loud ? QSF_LOG_ERROR : QSF_LOG_WARN, "%s%s error at %s: %s%s%s%s", who,
            qsf_policy_name(rec->policy), rec->endpoint[0] ? rec->endpoint : "-", rec->message,
            where[0] ? " (" : "", where[0] ? where + 2 : "", where[0] ? ")" : "");
    qsf_inbox_push_logged(ib, rec);
}

void qsf_inbox_push(qsf_inbox *ib, const qsf_error_record *rec) {
    qsf_inbox_push_from(ib, rec, "");
}

int qsf_inbox_poll(qsf_inbox *ib, qsf_error_record *out) {
    return qsf_inbox_take(ib, out);
}

int qsf_inbox_set_handler(qsf_inbox *ib, qsf_error_handler fn, void *user) {
    return qsf_inbox_set_fn(ib, (void (*)(void)) fn, user);
}
