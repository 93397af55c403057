/* Per-flush record of the unacknowledged backlog (see backlog.h). */
#include "sender/backlog.h"
#include "qsf_assert.h"

#include <string.h>

void qsf_backlog_init(qsf_backlog *b) {
    memset(b, 0, sizeof *b);
    pthread_mutex_init(&b->mu, NULL);
}

void qsf_backlog_destroy(qsf_backlog *b) {
    pthread_mutex_destroy(&b->mu);
}

void qsf_backlog_published(qsf_backlog *b, int64_t last_fsn, uint64_t rows, int64_t ns) {
    pthread_mutex_lock(&b->mu);
    qsf_assert(b->count == 0 || last_fsn >= b->fsn[(b->head + b->count - 1) % QSF_BACKLOG_SLOTS]);
    b->rows_published += rows;
    if (b->count == QSF_BACKLOG_SLOTS) { /* keep the oldest: they define the age */
        int last = (b->head + b->count - 1) % QSF_BACKLOG_SLOTS;
        b->fsn[last] = last_fsn;
        b->rows[last] = b->rows_published;
        b->merged = true;
    } else {
        int i = (b->head + b->count++) % QSF_BACKLOG_SLOTS;
        b->fsn[i] = last_fsn;
        b->ns[i] = ns;
        b->rows[i] = b->rows_published;
    }
    pthread_mutex_unlock(&b->mu);
}

/* Under mu: drops the records wholly at or below acked. */
static void drop_acked_locked(qsf_backlog *b, int64_t acked) {
    qsf_assert_held(&b->mu);
    while (b->count && b->fsn[b->head] <= acked) {
        b->rows_acked = b->rows[b->head];
        b->head = (b->head + 1) % QSF_BACKLOG_SLOTS;
        b->count--;
    }
    if (b->count == 0)
        b->merged = false;
}

int64_t qsf_backlog_age_ms(qsf_backlog *b, int64_t acked, int64_t now_ns) {
    pthread_mutex_lock(&b->mu);
    drop_acked_locked(b, acked);
    int64_t age = b->count ? (now_ns - b->ns[b->head]) / 1000000 : -1;
    pthread_mutex_unlock(&b->mu);
    return age;
}

uint64_t qsf_backlog_unacked_rows(qsf_backlog *b, int64_t acked, bool *exact) {
    pthread_mutex_lock(&b->mu);
    drop_acked_locked(b, acked);
    uint64_t n = b->rows_published - b->rows_acked;
    if (exact)
        *exact = !b->merged;
    pthread_mutex_unlock(&b->mu);
    return n;
}
