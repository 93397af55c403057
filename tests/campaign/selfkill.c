/* The self-kill watcher of crash-producer (see selfkill.h). */
#include "selfkill.h"

#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins (yielding) rather than sleeping: the window is shorter than a timer
 * tick. It only runs for the length of one flush. */
static void *watch(void *arg) {
    selfkill *k = arg;
    while (!atomic_load(&k->done)) {
        if (mono_ns() >= k->at_ns)
            kill(getpid(), SIGKILL);
        sched_yield();
    }
    return NULL;
}

int selfkill_arm(selfkill *k, int64_t after_ns) {
    k->at_ns = mono_ns() + after_ns;
    atomic_store(&k->done, 0);
    return pthread_create(&k->thr, NULL, watch, k) == 0 ? 0 : -1;
}

void selfkill_disarm(selfkill *k) {
    atomic_store(&k->done, 1);
    pthread_join(k->thr, NULL);
}
