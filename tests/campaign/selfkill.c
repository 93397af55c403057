/* The self-kill watcher of crash-producer (see selfkill.h). */
#include "selfkill.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

/* Spins (yielding) rather than sleeping: the window is shorter than a timer
 * tick. It only runs for the length of one flush. */
static void *watch(void *arg) {
    selfkill *k = arg;
    while (!atomic_load(&k->done)) {
        if (qsf_published_fsn(k->s) >= k->target)
            kill(getpid(), SIGKILL);
        sched_yield();
    }
    return NULL;
}

int selfkill_arm(selfkill *k, const qsf_sender *s, int64_t target) {
    k->s = s;
    k->target = target;
    atomic_store(&k->done, 0);
    return pthread_create(&k->thr, NULL, watch, k) == 0 ? 0 : -1;
}

void selfkill_disarm(selfkill *k) {
    atomic_store(&k->done, 1);
    pthread_join(k->thr, NULL);
}
