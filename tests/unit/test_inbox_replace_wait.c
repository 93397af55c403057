/* qsf_inbox_set_fn (qsf_set_event_handler, qsf_set_error_handler) waits for
 * the handler it replaces to return, and for nothing else: not for the new
 * handler, which the dispatcher may start on the next item the moment the old
 * one returns. A caller that holds a lock of its own while it replaces a
 * handler, and a new handler that takes that lock, is the pattern that shows
 * it: waiting for the new handler too would never end. */
#include "testutil.h"

#include "inbox.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>

static void call_int(void (*fn)(void), void *user, const void *item) {
    ((void (*)(void *, const int *)) fn)(user, item);
}

static const qsf_inbox_kind int_kind = {sizeof(int), 1, call_int, "test-inbox", NULL};

static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool old_started, replacing;
static atomic_int new_calls;

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){0, ms * 1000000L}, NULL);
}

/* The old handler: busy on the first item until the replacing call is on
 * its way, so that call has a running handler to wait for. */
static void old_handler(void *user, const int *item) {
    (void) user;
    (void) item;
    atomic_store(&old_started, true);
    while (!atomic_load(&replacing))
        sleep_ms(1);
    sleep_ms(50);
}

/* The new handler takes the application's lock. */
static void new_handler(void *user, const int *item) {
    (void) user;
    (void) item;
    pthread_mutex_lock(&app_lock);
    atomic_fetch_add(&new_calls, 1);
    pthread_mutex_unlock(&app_lock);
}

static void replacing_waits_for_the_old_handler_only(void **state) {
    (void) state;
    qsf_inbox *ib = qsf_inbox_new_of(&int_kind, 8);
    assert_non_null(ib);
    int items[3] = {1, 2, 3};
    for (int i = 0; i < 3; i++)
        qsf_inbox_put(ib, &items[i]);
    assert_int_equal(qsf_inbox_set_fn(ib, (void (*)(void)) old_handler, NULL), QSF_OK);
    while (!atomic_load(&old_started))
        sleep_ms(1);
    pthread_mutex_lock(&app_lock);
    atomic_store(&replacing, true);
    /* returns once old_handler has: new_handler then waits for app_lock */
    assert_int_equal(qsf_inbox_set_fn(ib, (void (*)(void)) new_handler, NULL), QSF_OK);
    pthread_mutex_unlock(&app_lock);
    while (atomic_load(&new_calls) < 2)
        sleep_ms(1);
    assert_int_equal(qsf_inbox_delivered(ib) >= 2, true);
    qsf_inbox_free(ib);
    assert_int_equal(atomic_load(&new_calls), 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(replacing_waits_for_the_old_handler_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
