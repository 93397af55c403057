/* The reconnect backoff of one sender.
 *
 * Every way a connection ends badly, and every round in which no endpoint
 * could be reached, draws its delay from one sequence; only progress (an OK
 * that acknowledges frames not acknowledged before) resets it, so a server
 * that accepts connections and then fails each of them meets the same
 * doubling as one that refuses them.
 *
 *   failure k since progress   delay before the next attempt
 *   k = 0, immediate_first      0 (a restart or a failover is retried at once)
 *   otherwise                   b + uniform[0, b),  b = min(initial << n, max)
 *                               with n = k - 1 after an immediate first, else k
 *
 * Single-threaded (the I/O thread); the jitter is deterministic under a seed. */
#ifndef QSF_IO_BACKOFF_H
#define QSF_IO_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

typedef struct qsf_backoff {
    int64_t initial_ms, max_ms;
    int failures; /* since the last progress */
    uint64_t rng;
} qsf_backoff;

void qsf_backoff_init(qsf_backoff *b, int64_t initial_ms, int64_t max_ms, uint64_t seed);

/* Counts a failure and returns the delay before the next attempt. */
int64_t qsf_backoff_next(qsf_backoff *b, bool immediate_first);

/* Progress: the next failure starts the sequence again. */
void qsf_backoff_progress(qsf_backoff *b);

/* Equal jitter: b + uniform[0, b) (0 for b <= 0). */
int64_t qsf_jitter_ms(uint64_t *rng, int64_t b);

#endif
