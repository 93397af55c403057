/* The sender's terminal latch and loss record (see latch.h). */
#include "latch.h"

#include "err.h"
#include "qsf_assert.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void qsf_latch_init(qsf_latch *l) {
    memset(l, 0, sizeof *l);
    atomic_init(&l->code, 0);
    pthread_mutex_init(&l->mu, NULL);
}

void qsf_latch_destroy(qsf_latch *l) {
    pthread_mutex_destroy(&l->mu);
}

int qsf_latch_subscribe(qsf_latch *l, qsf_latch_fn fn, void *user) {
    if (l->nsubs == QSF_LATCH_SUBSCRIBERS)
        return QSF_E_INTERNAL;
    l->subs[l->nsubs].fn = fn;
    l->subs[l->nsubs].user = user;
    l->nsubs++;
    return QSF_OK;
}

void qsf_latch_unsubscribe(qsf_latch *l, qsf_latch_fn fn, void *user) {
    for (int i = 0; i < l->nsubs; i++)
        if (l->subs[i].fn == fn && l->subs[i].user == user) {
            l->subs[i] = l->subs[--l->nsubs];
            return;
        }
}

bool qsf_latch_set(qsf_latch *l, int code, const char *fmt, ...) {
    qsf_assert(code < 0); /* a QSF_E_* code: 0 would read as "not latched" */
    if (qsf_latch_code(l))
        return false;
    pthread_mutex_lock(&l->mu);
    bool first = atomic_load(&l->code) == 0;
    if (first) {
        va_list ap;
        va_start(ap, fmt);
        qsf_err_vset(&l->terminal, code, QSF_ERRF_FATAL, 0, fmt, ap);
        va_end(ap);
        /* The message is complete before anyone can see the code; the code
         * is written once and never changes (the latch is monotonic). */
        atomic_store_explicit(&l->code, code, memory_order_release);
    }
    pthread_mutex_unlock(&l->mu);
    if (first)
        for (int i = 0; i < l->nsubs; i++)
            l->subs[i].fn(l->subs[i].user, code);
    return first;
}

int qsf_latch_get(const qsf_latch *cl, qsf_errinfo *err) {
    qsf_latch *l = (qsf_latch *) cl;
    int code = qsf_latch_code(l);
    if (code && err) {
        pthread_mutex_lock(&l->mu);
        qsf_err_copy(err, &l->terminal);
        pthread_mutex_unlock(&l->mu);
    }
    return code;
}

void qsf_latch_note_loss(qsf_latch *l, uint64_t frames, uint64_t rows, const char *what) {
    pthread_mutex_lock(&l->mu);
    if (l->losses++ == 0)
        snprintf(l->loss_msg, sizeof l->loss_msg, "%s", what);
    l->lost_frames += frames;
    l->lost_rows += rows;
    pthread_mutex_unlock(&l->mu);
}

uint32_t qsf_latch_losses(const qsf_latch *cl, uint64_t *frames, uint64_t *rows, char *msg,
                          size_t cap) {
    qsf_latch *l = (qsf_latch *) cl;
    pthread_mutex_lock(&l->mu);
    uint32_t n = l->losses;
    if (frames)
        *frames = l->lost_frames;
    if (rows)
        *rows = l->lost_rows;
    if (msg && cap)
        snprintf(msg, cap, "%s", l->loss_msg);
    pthread_mutex_unlock(&l->mu);
    return n;
}
