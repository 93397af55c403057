/* Flags to wait on and the watchdog that bounds the waits (watchdog.h). */
#include "watchdog.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; /* a flag raised */
static pthread_cond_t dog_cv;                        /* the test ended (CLOCK_MONOTONIC) */
static pthread_t dog;
static bool test_over;
static const char *step = "starting"; /* what the test waits for now (under mu) */

void wd_step(const char *what) {
    pthread_mutex_lock(&mu);
    step = what;
    pthread_mutex_unlock(&mu);
}

bool wd_raise(int *flag) {
    pthread_mutex_lock(&mu);
    bool first = !*flag;
    *flag = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return first;
}

void wd_await(const int *flag) {
    pthread_mutex_lock(&mu);
    while (!*flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

static void *watch(void *arg) {
    (void) arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += WD_BOUND_S;
    pthread_mutex_lock(&mu);
    while (!test_over && pthread_cond_timedwait(&dog_cv, &mu, &until) == 0)
        ;
    if (!test_over) {
        fprintf(stderr, "FAIL: no progress in %d s while %s: the threads wait for each other\n",
                WD_BOUND_S, step);
        fflush(stderr);
        _exit(1);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

int wd_start(void **state) {
    (void) state;
    test_over = false;
    step = "starting";
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&dog_cv, &ca);
    pthread_condattr_destroy(&ca);
    return pthread_create(&dog, NULL, watch, NULL) == 0 ? 0 : -1;
}

int wd_stop(void **state) {
    (void) state;
    pthread_mutex_lock(&mu);
    test_over = true;
    pthread_cond_signal(&dog_cv);
    pthread_mutex_unlock(&mu);
    pthread_join(dog, NULL);
    pthread_cond_destroy(&dog_cv);
    return 0;
}
