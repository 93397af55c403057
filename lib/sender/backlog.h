/* The sender's view of its unacknowledged backlog, per flush: when each flush
 * was published and how many rows it carried. It answers "how old is the
 * oldest unacknowledged frame" (qsf_stats.oldest_unacked_age_ms) and "how many
 * rows are not acknowledged yet" (what a memory-mode close loses), which the
 * ring, knowing only frames and bytes, cannot.
 *
 * A bounded FIFO of (last FSN of a flush, publish time, rows published up to
 * and including it). When it is full the newest record absorbs later flushes:
 * the oldest records, which decide the age, are kept exact; the row count of a
 * partly acknowledged merged record is then an upper bound (rows_exact false).
 *
 * Threads: the producer records; any thread queries (one mutex). */
#ifndef QSF_BACKLOG_H
#define QSF_BACKLOG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define QSF_BACKLOG_SLOTS 1024

typedef struct qsf_backlog {
    pthread_mutex_t mu;
    int64_t fsn[QSF_BACKLOG_SLOTS];   /* last FSN of the flush */
    int64_t ns[QSF_BACKLOG_SLOTS];    /* monotonic publish time */
    uint64_t rows[QSF_BACKLOG_SLOTS]; /* cumulative rows published up to it */
    int head, count;
    uint64_t rows_published; /* cumulative, all flushes */
    uint64_t rows_acked;     /* cumulative rows of records known to be acknowledged */
    bool merged;             /* the newest record absorbed later flushes */
} qsf_backlog;

void qsf_backlog_init(qsf_backlog *b);
void qsf_backlog_destroy(qsf_backlog *b);

/* A flush published `rows` rows ending at FSN `last_fsn`, at monotonic time ns. */
void qsf_backlog_published(qsf_backlog *b, int64_t last_fsn, uint64_t rows, int64_t ns);

/* Age in ms of the oldest flush with frames above `acked` at time now_ns, -1 if
 * none (records at or below acked are dropped). */
int64_t qsf_backlog_age_ms(qsf_backlog *b, int64_t acked, int64_t now_ns);

/* Rows published in flushes not wholly at or below `acked`; *exact (may be
 * NULL) false when merged records make it an upper bound. */
uint64_t qsf_backlog_unacked_rows(qsf_backlog *b, int64_t acked, bool *exact);

#endif
