/* What the ring's own threads (the manager, manager.c; the spare thread,
 * spares.c) share: sleeping on their condition variable until kicked, stopped
 * or timed out, and being stopped and joined by close. */
#include "sf/ring_int.h"
#include "qsf_assert.h"

#include <time.h>

/* A thread that does not stop within this (stuck in a syscall on a dead
 * disk) makes close fail rather than free what it still uses. */
#define STOP_WAIT_S 5

void qsf_ring_thread_wait(qsf_ring *r, pthread_cond_t *cv, const bool *kick, const bool *stop,
                          int64_t wait_ns) {
    qsf_assert_held(&r->mu);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t ns = ts.tv_nsec + wait_ns;
    ts.tv_sec += ns / 1000000000;
    ts.tv_nsec = ns % 1000000000;
    while (!*kick && !*stop)
        if (pthread_cond_timedwait(cv, &r->mu, &ts) != 0)
            break;
}

bool qsf_ring_thread_stop(qsf_ring *r, pthread_t t, pthread_cond_t *cv, bool *stop) {
    pthread_mutex_lock(&r->mu);
    *stop = true;
    pthread_cond_signal(cv);
    pthread_mutex_unlock(&r->mu);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += STOP_WAIT_S;
    return pthread_timedjoin_np(t, NULL, &ts) == 0;
}
