/* The producer guard's slow path, the per-thread records and membarrier (see
 * guard.h). */
#include "sender/guard.h"

#include <linux/membarrier.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread qsf_guard_rec *qsf_guard_self __attribute__((tls_model("initial-exec")));

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool have_membarrier;
static pthread_key_t rec_key;
static pthread_mutex_t free_mu = PTHREAD_MUTEX_INITIALIZER;
static qsf_guard_rec *free_recs;

static long membarrier(int cmd) {
    return syscall(__NR_membarrier, cmd, 0, 0);
}

/* At thread exit: the record goes back for a later thread (a guard may still
 * name it as its owner, which is harmless: its thread is gone). */
static void rec_release(void *p) {
    qsf_guard_rec *r = p;
    pthread_mutex_lock(&free_mu);
    r->next = free_recs;
    free_recs = r;
    pthread_mutex_unlock(&free_mu);
}

unsigned qsf_guard_forks;

/* The child of fork(), on its only thread: senders of the parent are not its
 * own. The forking thread's record is the parent's, still named as the owner
 * of its guards: dropped, so the fast path cannot admit this thread. */
static void forked_child(void) {
    qsf_guard_forks++;
    qsf_guard_self = NULL;
}

static void setup(void) {
    pthread_atfork(NULL, NULL, forked_child);
    long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    have_membarrier = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
                      membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
                      pthread_key_create(&rec_key, rec_release) == 0;
}

void qsf_guard_init(qsf_guard *g) {
    pthread_once(&once, setup);
    atomic_init(&g->owner, NULL);
    pthread_mutex_init(&g->mu, NULL);
    g->fast = have_membarrier;
    g->forks = qsf_guard_forks;
}

void qsf_guard_destroy(qsf_guard *g) {
    pthread_mutex_destroy(&g->mu);
}

/* This thread's record, made on first use; NULL if there is no memory (the
 * thread then always takes the slow path). */
static qsf_guard_rec *self_rec(void) {
    if (qsf_guard_self)
        return qsf_guard_self;
    pthread_mutex_lock(&free_mu);
    qsf_guard_rec *r = free_recs;
    if (r)
        free_recs = r->next;
    pthread_mutex_unlock(&free_mu);
    if (!r && !(r = calloc(1, sizeof *r)))
        return NULL;
    atomic_init(&r->in, 0);
    r->next = NULL;
    if (pthread_setspecific(rec_key, r) != 0) {
        rec_release(r);
        return NULL;
    }
    return qsf_guard_self = r;
}

/* Every running thread of the process passes a full barrier. The
 * registration made in setup() belongs to the address space: a child of
 * fork() has none and registers again here. False if it cannot: the caller
 * then cannot know whether the owner is inside and must refuse. */
static bool barrier_all(void) {
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0)
        return true;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 &&
           membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0;
}

/* Under mu: takes the fast path away from its owner, to `me`. False when the
 * owner is inside: it keeps the guard and gets the fast path back (were it
 * left with `me`, this thread's next call would take the fast path while the
 * owner is still inside). */
static bool take_over(qsf_guard *g, qsf_guard_rec *me) {
    qsf_guard_rec *prev = atomic_load_explicit(&g->owner, memory_order_relaxed);
    if (prev == me)
        return true;
    atomic_store_explicit(&g->owner, me, memory_order_seq_cst);
    if (!prev)
        return true; /* nobody could be on the fast path */
    if (barrier_all() && atomic_load_explicit(&prev->in, memory_order_acquire) == 0)
        return true;
    atomic_store_explicit(&g->owner, prev, memory_order_relaxed);
    return false;
}

bool qsf_guard_enter_slow(qsf_guard *g) {
    if (qsf_guard_forked(g)) /* its mutex may be held by a thread of the parent */
        return false;
    if (pthread_mutex_trylock(&g->mu) != 0)
        return false;
    if (!g->fast || take_over(g, self_rec()))
        return true;
    pthread_mutex_unlock(&g->mu);
    return false;
}
