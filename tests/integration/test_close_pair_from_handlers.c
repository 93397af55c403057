/* qsf_close of one sender called from another sender's error or event handler
 * (docs/THREADING.md "Which call from where"). A close joins the closed
 * sender's dispatchers, so a close from a handler waits for the other
 * sender's handlers to return:
 *
 * - two handlers that close each other's sender each wait for the other's
 *   dispatcher, which waits in its own close: neither ever returns;
 * - a handler that closes a sender whose own handler is still busy (here: it
 *   waits for that close to return) waits for as long as that handler runs.
 *
 * Such a close is refused with QSF_E_STATE and changes nothing; both senders
 * go on and close normally from the application's thread, with every row
 * delivered. A refused close on a handler must not disturb the close the
 * application makes of the handler's own sender meanwhile.
 *
 * Every wait is on an event. A watchdog ends the process with the step it was
 * stuck in when a test makes no progress for WATCHDOG_S seconds: before the
 * rule, the first test stalled there for good. */
#include "itest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WATCHDOG_S 60
#define ROWS       100

/* ---- the watchdog and the flags the threads wait on ---- */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER; /* a flag raised */
static pthread_cond_t dog_cv;                        /* the test ended (CLOCK_MONOTONIC) */
static pthread_t dog;
static bool test_over;
static const char *step = "starting"; /* what the test waits for now (under mu) */

static void at_step(const char *what) {
    pthread_mutex_lock(&mu);
    step = what;
    pthread_mutex_unlock(&mu);
}

static void raise_flag(int *flag) {
    pthread_mutex_lock(&mu);
    *flag = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* Waits for *flag, for as long as the watchdog lets it. */
static void await_flag(const int *flag) {
    pthread_mutex_lock(&mu);
    while (!*flag)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

/* No test may hang CI: past the bound, the process ends with the step it was
 * in (cmocka can fail a test only from its own thread, which is the one
 * stuck). */
static void *watch(void *arg) {
    (void) arg;
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += WATCHDOG_S;
    pthread_mutex_lock(&mu);
    while (!test_over && pthread_cond_timedwait(&dog_cv, &mu, &until) == 0)
        ;
    if (!test_over) {
        fprintf(stderr, "FAIL: no progress in %d s while %s: the threads wait for each other\n",
                WATCHDOG_S, step);
        fflush(stderr);
        _exit(1);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* ---- two senders and their handlers ---- */

/* One sender of the pair: its handler waits for `wait_for` (when set), then
 * closes `target` (when set) and records what close said. */
typedef struct side {
    qsf_sender *s, *target;
    const int *wait_for;
    int inside; /* its handler has been called */
    int closed; /* its handler's close returned */
    atomic_int rc;
    char msg[QSF_ERRINFO_MSG_MAX];
} side;

static side a, b;
static int app_closing; /* the application thread is about to close a.s */

static int start(void **state) {
    (void) state;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    app_closing = 0;
    test_over = false;
    step = "starting";
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&dog_cv, &ca);
    pthread_condattr_destroy(&ca);
    return pthread_create(&dog, NULL, watch, NULL) == 0 ? 0 : -1;
}

static int stop(void **state) {
    (void) state;
    pthread_mutex_lock(&mu);
    test_over = true;
    pthread_cond_signal(&dog_cv);
    pthread_mutex_unlock(&mu);
    pthread_join(dog, NULL);
    pthread_cond_destroy(&dog_cv);
    return 0;
}

/* Runs once per side, on its first call. */
static void handle(side *me) {
    pthread_mutex_lock(&mu);
    bool first = !me->inside;
    me->inside = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    if (!first)
        return;
    if (me->wait_for)
        await_flag(me->wait_for);
    if (me->target) {
        qsf_errinfo e;
        atomic_store(&me->rc, qsf_close(me->target, &e));
        snprintf(me->msg, sizeof me->msg, "%s", e.msg);
        raise_flag(&me->closed);
    }
}

static void on_connected(void *user, const qsf_event *ev) {
    if (ev->kind == QSF_EVENT_CONNECTED)
        handle(user);
}

static void on_error(void *user, const qsf_error_record *r) {
    (void) r;
    handle(user);
}

static void expect_refused(const side *me) {
    assert_int_equal(atomic_load(&me->rc), QSF_E_STATE);
    assert_non_null(strstr(me->msg, "another sender's error or event handler"));
}

/* Both senders go on after the refused closes: each delivers the keys
 * from..from+ROWS, closes cleanly, and its sink holds every key below
 * from+ROWS (twice, some of them, after a replay). */
static void both_go_on(qsink *sink_a, qsink *sink_b, int64_t from, bool replayed) {
    at_step("publishing after the refused closes");
    it_wait_acked(a.s, it_publish(a.s, "a", from, from + ROWS, 50));
    it_wait_acked(b.s, it_publish(b.s, "b", from, from + ROWS, 50));
    at_step("closing both senders from the application thread");
    qsf_errinfo e;
    assert_int_equal(qsf_close(a.s, &e), QSF_OK);
    assert_int_equal(qsf_close(b.s, &e), QSF_OK);
    it_assert_rows(sink_a, "a", from + ROWS, replayed);
    it_assert_rows(sink_b, "b", from + ROWS, replayed);
}

/* A sink, and the two senders into it (a.s, b.s; nothing else of a and b
 * set). */
static qsink *pair_on_one_sink(void) {
    qsink *sink = it_sink(NULL);
    char conf[512];
    it_conf(conf, sizeof conf, qsink_port(sink), "");
    a.s = it_sender(conf);
    b.s = it_sender(conf);
    return sink;
}

/* Each event handler waits until the other is inside too, then closes the
 * other's sender. */
static void event_handlers_close_each_other(void **state) {
    (void) state;
    qsink *sink = pair_on_one_sink();
    a.wait_for = &b.inside;
    b.wait_for = &a.inside;
    a.target = b.s;
    b.target = a.s;
    at_step("waiting for both event handlers to close the other's sender");
    assert_int_equal(qsf_set_event_handler(a.s, on_connected, &a), QSF_OK);
    assert_int_equal(qsf_set_event_handler(b.s, on_connected, &b), QSF_OK);
    await_flag(&a.closed);
    await_flag(&b.closed);
    expect_refused(&a);
    expect_refused(&b);
    both_go_on(sink, sink, 0, false);
    qsink_stop(sink);
}

/* The same with error handlers: each sender loses its connection with a
 * frame unacknowledged (a record), on a sink of its own. */
static void withheld_sender(qsink *sink, side *me) {
    it_fault(sink, "withhold-ok conn=1");
    char conf[512];
    me->s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                              "reconnect_initial_backoff_millis=10;"
                              "reconnect_max_backoff_millis=100;"));
}

static void error_handlers_close_each_other(void **state) {
    (void) state;
    qsink *sink_a = it_sink(NULL), *sink_b = it_sink(NULL);
    withheld_sender(sink_a, &a);
    withheld_sender(sink_b, &b);
    a.target = b.s;
    b.target = a.s;
    a.wait_for = &b.inside;
    b.wait_for = &a.inside;
    assert_int_equal(qsf_set_error_handler(a.s, on_error, &a), QSF_OK);
    assert_int_equal(qsf_set_error_handler(b.s, on_error, &b), QSF_OK);
    int64_t fa = it_publish(a.s, "a", 0, ROWS, ROWS);
    int64_t fb = it_publish(b.s, "b", 0, ROWS, ROWS);
    at_step("waiting for the sinks to receive the frames they withhold");
    if (qsink_wait_frames(sink_a, fa + 1, 20000) != 0 ||
        qsink_wait_frames(sink_b, fb + 1, 20000) != 0)
        fail_msg("a sink did not receive its frame");
    at_step("waiting for both error handlers to close the other's sender");
    qsink_restart(sink_a);
    qsink_restart(sink_b);
    await_flag(&a.closed);
    await_flag(&b.closed);
    expect_refused(&a);
    expect_refused(&b);
    it_wait_acked(a.s, fa); /* replayed on the next connection */
    it_wait_acked(b.s, fb);
    both_go_on(sink_a, sink_b, ROWS, true);
    qsink_stop(sink_a);
    qsink_stop(sink_b);
}

/* a's handler closes b while the application thread closes a: the close of
 * a waits for that handler, whose close of b is refused; a's close is
 * ordinary, and b is the application's to close. */
static void handler_closes_b_while_the_application_closes_a(void **state) {
    (void) state;
    qsink *sink = pair_on_one_sink();
    a.wait_for = &app_closing;
    a.target = b.s;
    it_wait_acked(a.s, it_publish(a.s, "a", 0, ROWS, 50));
    it_wait_acked(b.s, it_publish(b.s, "b", 0, ROWS, 50));
    at_step("waiting for a's event handler to be called");
    assert_int_equal(qsf_set_event_handler(a.s, on_connected, &a), QSF_OK);
    await_flag(&a.inside);
    at_step("closing a while its handler closes b");
    raise_flag(&app_closing);
    qsf_errinfo e;
    assert_int_equal(qsf_close(a.s, &e), QSF_OK);
    assert_int_equal(a.closed, 1); /* the close of a waited for its handler */
    expect_refused(&a);
    it_wait_acked(b.s, it_publish(b.s, "b", ROWS, 2 * ROWS, 50)); /* b goes on */
    at_step("closing b from the application thread");
    assert_int_equal(qsf_close(b.s, &e), QSF_OK);
    it_assert_rows(sink, "a", ROWS, false);
    it_assert_rows(sink, "b", 2 * ROWS, false);
    qsink_stop(sink);
}

/* a's handler closes b while b's handler is busy until that close returns:
 * the close does not wait for b's handler, it is refused at once. */
static void handler_closes_b_while_b_handler_is_busy(void **state) {
    (void) state;
    qsink *sink = pair_on_one_sink();
    a.wait_for = &b.inside;
    b.wait_for = &a.closed;
    a.target = b.s;
    at_step("waiting for a's handler to close b while b's handler waits for that close");
    assert_int_equal(qsf_set_event_handler(b.s, on_connected, &b), QSF_OK);
    assert_int_equal(qsf_set_event_handler(a.s, on_connected, &a), QSF_OK);
    await_flag(&a.closed);
    expect_refused(&a);
    both_go_on(sink, sink, 0, false);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(event_handlers_close_each_other, start, stop),
        cmocka_unit_test_setup_teardown(error_handlers_close_each_other, start, stop),
        cmocka_unit_test_setup_teardown(handler_closes_b_while_the_application_closes_a, start,
                                        stop),
        cmocka_unit_test_setup_teardown(handler_closes_b_while_b_handler_is_busy, start, stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
