/* The auto_flush_interval trigger (docs/CONFIGURATION.md) without a clock read
 * on every row of a fast stream.
 *
 * The open batch's start is read precisely at its first row. While fewer than
 * QSF_INTERVAL_EXACT_ROWS rows are buffered, every completed row compares the
 * coarse clock with it (never early, at most one coarse tick late): a slow
 * stream's rows go out as soon as they are due. From then on the rows come
 * fast and the I/O thread's tick (every 20 ms) compares instead: it marks the
 * batch due by copying its start into due_for, and the next completed row
 * flushes; never early, at most one tick late, and no clock read per row (a
 * coarse read was about a tenth of a narrow row's CPU).
 *
 *   producer                          I/O thread (tick)
 *   first row: start_ns = now         s = start_ns
 *   each row:  rows < EXACT ?         if s && now - s >= every_ns:
 *                coarse now - start      due_for = s
 *              : due_for == start_ns
 *   flush:     start_ns = 0
 *
 * Starts are strictly increasing, so a mark left for an earlier batch never
 * matches a later one. Relaxed atomics: the two values carry nothing else. */
#ifndef QSF_INTERVAL_H
#define QSF_INTERVAL_H

#include "os/os.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define QSF_INTERVAL_EXACT_ROWS 128

typedef struct qsf_interval {
    int64_t every_ns;         /* auto_flush_interval; 0 = off. Set before the I/O thread runs */
    int64_t last_start_ns;    /* producer only: the previous batch's start */
    _Atomic int64_t start_ns; /* written by the producer: the open batch's first row, 0 = none */
    _Atomic int64_t due_for;  /* written by the I/O thread: a start it found due */
} qsf_interval;

/* every_ms comes capped by qsf_conf_ms (conf.h): its nanoseconds fit, and
 * the cap's 100 years never run out. */
static inline void qsf_interval_init(qsf_interval *v, int64_t every_ms) {
    v->every_ns = every_ms > 0 ? every_ms * 1000000 : 0;
    v->last_start_ns = 0;
    atomic_init(&v->start_ns, 0);
    atomic_init(&v->due_for, 0);
}

/* Producer, at a completed row: the batch's start, read once. */
static inline void qsf_interval_row(qsf_interval *v) {
    if (atomic_load_explicit(&v->start_ns, memory_order_relaxed))
        return;
    int64_t now = QSF_OS->mono_ns();
    if (now <= v->last_start_ns)
        now = v->last_start_ns + 1;
    v->last_start_ns = now;
    atomic_store_explicit(&v->start_ns, now, memory_order_relaxed);
}

/* Producer: the batch was published or given up. */
static inline void qsf_interval_reset(qsf_interval *v) {
    atomic_store_explicit(&v->start_ns, 0, memory_order_relaxed);
}

/* Producer, after qsf_interval_row: true when the open batch is due. */
static inline bool qsf_interval_due(const qsf_interval *v, size_t rows) {
    int64_t start = atomic_load_explicit(&v->start_ns, memory_order_relaxed);
    if (!v->every_ns || !start)
        return false;
    if (rows < QSF_INTERVAL_EXACT_ROWS)
        return QSF_OS->mono_coarse_ns() - start >= v->every_ns;
    return atomic_load_explicit(&v->due_for, memory_order_relaxed) == start;
}

/* I/O thread, on its tick. */
static inline void qsf_interval_tick(qsf_interval *v, int64_t now_ns) {
    int64_t start = atomic_load_explicit(&v->start_ns, memory_order_relaxed);
    if (v->every_ns && start && now_ns - start >= v->every_ns)
        atomic_store_explicit(&v->due_for, start, memory_order_relaxed);
}

#endif
