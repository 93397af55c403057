/* The event inbox (lib/events.c on lib/inbox.c): drop-oldest counted down to
 * a capacity of one, delivery in order on a dispatcher thread, the
 * struct_size rule of qsf_event, and the promise that a handler replaced or
 * an inbox freed is not running any more when the call returns. */
#include "testutil.h"

#include "events.h"
#include "inbox.h"
#include "log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

static qsf_event ev_of(int kind, int64_t n) {
    qsf_event ev;
    qsf_event_init(&ev, kind);
    ev.frames = (uint64_t) n;
    return ev;
}

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){0, ms * 1000000L}, NULL);
}

static void a_capacity_of_one_keeps_the_newest(void **state) {
    (void) state;
    qsf_inbox *ib = qsf_events_new(1);
    for (int i = 0; i < 5; i++) {
        qsf_event ev = ev_of(QSF_EVENT_DISCONNECTED, i);
        qsf_events_push(ib, &ev);
    }
    assert_int_equal(qsf_inbox_dropped(ib), 4);
    qsf_event out;
    out.struct_size = sizeof out;
    assert_int_equal(qsf_events_poll(ib, &out), 1);
    assert_int_equal(out.kind, QSF_EVENT_DISCONNECTED);
    assert_int_equal(out.frames, 4);
    assert_int_equal(out.from_fsn, -1);
    assert_int_equal(qsf_events_poll(ib, &out), 0);
    qsf_inbox_free(ib);
}

/* ---- a handler that takes its time ---- */

static atomic_int calls, inside;
static atomic_llong last = -1;
static pthread_t handler_thread;

static void slow_handler(void *user, const qsf_event *ev) {
    (void) user;
    atomic_fetch_add(&inside, 1);
    handler_thread = pthread_self();
    assert_int_equal((int64_t) ev->frames, atomic_load(&last) + 1); /* in order */
    atomic_store(&last, (long long) ev->frames);
    sleep_ms(20);
    atomic_fetch_add(&calls, 1);
    atomic_fetch_sub(&inside, 1);
}

static void reset_handler(void) {
    atomic_store(&calls, 0);
    atomic_store(&inside, 0);
    atomic_store(&last, -1);
}

static void push_n(qsf_inbox *ib, int n) {
    for (int i = 0; i < n; i++) {
        qsf_event ev = ev_of(QSF_EVENT_REPLAY_DONE, i);
        qsf_events_push(ib, &ev);
    }
}

static void wait_calls(int n) {
    for (int i = 0; i < 5000 && atomic_load(&calls) < n; i++)
        sleep_ms(1);
    assert_int_equal(atomic_load(&calls), n);
}

static void handled_in_order_on_a_dispatcher(void **state) {
    (void) state;
    reset_handler();
    qsf_inbox *ib = qsf_events_new(8);
    push_n(ib, 3);
    assert_int_equal(qsf_events_set_handler(ib, slow_handler, NULL), QSF_OK);
    wait_calls(3);
    assert_false(pthread_equal(handler_thread, pthread_self()));
    assert_int_equal(qsf_inbox_delivered(ib), 3);
    qsf_inbox_free(ib);
}

/* Removing the handler while it runs returns once it has returned. */
static void removing_the_handler_waits_for_a_running_call(void **state) {
    (void) state;
    reset_handler();
    qsf_inbox *ib = qsf_events_new(8);
    assert_int_equal(qsf_events_set_handler(ib, slow_handler, NULL), QSF_OK);
    push_n(ib, 1);
    while (!atomic_load(&inside) && !atomic_load(&calls))
        sleep_ms(1);
    assert_int_equal(qsf_events_set_handler(ib, NULL, NULL), QSF_OK);
    assert_int_equal(atomic_load(&inside), 0);
    assert_int_equal(atomic_load(&calls), 1);
    push_n(ib, 1); /* no handler: it waits for a poll */
    sleep_ms(30);
    assert_int_equal(atomic_load(&calls), 1);
    qsf_event out;
    out.struct_size = sizeof out;
    assert_int_equal(qsf_events_poll(ib, &out), 1);
    qsf_inbox_free(ib);
}

/* Freeing delivers what it can in 100 ms, counts the rest as dropped, and
 * returns only when no handler runs; none runs afterwards. */
static void no_handler_runs_after_free(void **state) {
    (void) state;
    reset_handler();
    qsf_inbox *ib = qsf_events_new(64);
    push_n(ib, 20); /* 20 ms each: about 5 fit in the 100 ms */
    assert_int_equal(qsf_events_set_handler(ib, slow_handler, NULL), QSF_OK);
    qsf_inbox_free(ib);
    assert_int_equal(atomic_load(&inside), 0);
    int n = atomic_load(&calls);
    assert_true(n < 20);
    sleep_ms(50);
    assert_int_equal(atomic_load(&calls), n);
}

static void event_names(void **state) {
    (void) state;
    assert_string_equal(qsf_event_name(QSF_EVENT_CONNECTED), "CONNECTED");
    assert_string_equal(qsf_event_name(QSF_EVENT_RESUMED), "RESUMED");
    assert_string_equal(qsf_event_name(QSF_EVENT_NO_PROGRESS), "NO_PROGRESS");
    assert_string_equal(qsf_event_name(0), "UNKNOWN");
    assert_string_equal(qsf_event_name(99), "UNKNOWN");
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_capacity_of_one_keeps_the_newest),
        cmocka_unit_test(handled_in_order_on_a_dispatcher),
        cmocka_unit_test(removing_the_handler_waits_for_a_running_call),
        cmocka_unit_test(no_handler_runs_after_free),
        cmocka_unit_test(event_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
