/* The producer guard: at most one thread inside a call on a sender, the others
 * refused with QSF_E_BUSY (docs/THREADING.md, "The producer guard").
 *
 * Every row call passes it twice, so its fast path has no atomic
 * read-modify-write and no fence: an exchange drains the store buffer, and
 * with the codec's stores in it that was a fifth of a narrow row's CPU. The
 * guard remembers the thread that got in last (the owner). The owner enters
 * with plain stores and loads:
 *
 *   owner thread T (fast)            another thread U (slow, under mu)
 *   T.in = 1                         owner = U
 *   if (owner == T) -> inside        membarrier: every running thread of the
 *   else T.in = 0, take the slow       process passes a full barrier
 *        path                        if (old owner's in == 1) -> QSF_E_BUSY
 *   ...                              else inside (holding mu)
 *   T.in = 0 (release)               ... unlock mu
 *
 * Either T's load of `owner` comes after the barrier and sees U (T backs off),
 * or T's store to T.in came before it and U sees it (U backs off); never both
 * inside. `in` has one writer, its thread, so a backing-off T cannot erase
 * anyone else's mark. A call on the slow path holds mu for its whole length,
 * so two slow callers exclude each other with a trylock. Where membarrier
 * (Linux ≥ 4.14, private expedited) is not available, or a thread's record
 * cannot be allocated, every call takes the slow path: a trylock per call.
 *
 * Records are per thread, allocated on a thread's first call and never freed:
 * at thread exit a record goes to a free list for the next new thread, so a
 * guard's `owner` never dangles. */
#ifndef QSF_GUARD_H
#define QSF_GUARD_H

#include "qsf_assert.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

typedef struct qsf_guard_rec {
    atomic_int in; /* 1 while its thread is inside on the fast path; written by it alone */
    struct qsf_guard_rec *next; /* on the free list */
} qsf_guard_rec;

typedef struct qsf_guard {
    _Atomic(qsf_guard_rec *) owner; /* the thread that may take the fast path, or NULL */
    pthread_mutex_t mu;             /* held by a call on the slow path */
    bool fast;                      /* membarrier is available: owners take the fast path */
    unsigned forks;                 /* qsf_guard_forks when the guard was made */
} qsf_guard;

/* This thread's record, NULL until its first slow-path call made one. */
extern __thread qsf_guard_rec *qsf_guard_self __attribute__((tls_model("initial-exec")));

/* Counts the fork() calls this process descends from (a pthread_atfork child
 * handler, registered with the first guard, adds one and clears the forking
 * thread's record, so a child never takes the fast path). A guard made in
 * another process than the caller's admits nobody: qsf_guard_forked. */
extern unsigned qsf_guard_forks;

/* True when the guard was made in another process (this one is a child of a
 * fork() after it): every call on its sender is refused. */
static inline bool qsf_guard_forked(const qsf_guard *g) {
    return g->forks != qsf_guard_forks;
}

void qsf_guard_init(qsf_guard *g);
void qsf_guard_destroy(qsf_guard *g);

/* The slow path of qsf_guard_enter: true when this thread got in. */
bool qsf_guard_enter_slow(qsf_guard *g);

/* The owner's fast path alone: true when this thread got in without the
 * slow path (then leave with qsf_guard_leave_fast); false otherwise, with
 * nothing held. */
static inline bool qsf_guard_enter_fast(qsf_guard *g) {
    qsf_guard_rec *me = qsf_guard_self;
    if (me && atomic_load_explicit(&g->owner, memory_order_relaxed) == me) {
        atomic_store_explicit(&me->in, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst); /* the store, then the load (see above) */
        if (atomic_load_explicit(&g->owner, memory_order_acquire) == me)
            return true;
        atomic_store_explicit(&me->in, 0, memory_order_release);
    }
    return false;
}

/* Leaves after a successful qsf_guard_enter_fast, on the same thread. */
static inline void qsf_guard_leave_fast(void) {
    atomic_store_explicit(&qsf_guard_self->in, 0, memory_order_release);
}

/* True when this thread got in; false when another thread is inside. */
static inline bool qsf_guard_enter(qsf_guard *g) {
    return qsf_guard_enter_fast(g) || qsf_guard_enter_slow(g);
}

#ifdef QSF_ASSERTS
/* Whether this thread is inside a call on g, by either path (qsf_assert only:
 * "producer thread, inside the guard"). */
static inline bool qsf_guard_held(qsf_guard *g) {
    qsf_guard_rec *me = qsf_guard_self;
    if (me && atomic_load_explicit(&me->in, memory_order_relaxed) &&
        atomic_load_explicit(&g->owner, memory_order_relaxed) == me)
        return true;
    return qsf_mutex_held(&g->mu);
}
#endif

/* Leaves after a successful qsf_guard_enter, on the same thread. */
static inline void qsf_guard_leave(qsf_guard *g) {
    qsf_guard_rec *me = qsf_guard_self;
    if (me && atomic_load_explicit(&me->in, memory_order_relaxed))
        atomic_store_explicit(&me->in, 0, memory_order_release);
    else
        pthread_mutex_unlock(&g->mu);
}

#endif
