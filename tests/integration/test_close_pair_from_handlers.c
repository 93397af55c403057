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
 * stuck in when a test makes no progress for WD_BOUND_S seconds: before the
 * rule, the first test stalled there for good. */
#include "itest.h"
#include "watchdog.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define ROWS 100

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
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    app_closing = 0;
    return wd_start(state);
}

/* Runs once per side, on its first call. */
static void handle(side *me) {
    if (!wd_raise(&me->inside))
        return;
    if (me->wait_for)
        wd_await(me->wait_for);
    if (me->target) {
        qsf_errinfo e;
        atomic_store(&me->rc, qsf_close(me->target, &e));
        snprintf(me->msg, sizeof me->msg, "%s", e.msg);
        wd_raise(&me->closed);
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
    wd_step("publishing after the refused closes");
    it_wait_acked(a.s, it_publish(a.s, "a", from, from + ROWS, 50));
    it_wait_acked(b.s, it_publish(b.s, "b", from, from + ROWS, 50));
    wd_step("closing both senders from the application thread");
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
    wd_step("waiting for both event handlers to close the other's sender");
    assert_int_equal(qsf_set_event_handler(a.s, on_connected, &a), QSF_OK);
    assert_int_equal(qsf_set_event_handler(b.s, on_connected, &b), QSF_OK);
    wd_await(&a.closed);
    wd_await(&b.closed);
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
    wd_step("waiting for the sinks to receive the frames they withhold");
    if (qsink_wait_frames(sink_a, fa + 1, 20000) != 0 ||
        qsink_wait_frames(sink_b, fb + 1, 20000) != 0)
        fail_msg("a sink did not receive its frame");
    wd_step("waiting for both error handlers to close the other's sender");
    qsink_restart(sink_a);
    qsink_restart(sink_b);
    wd_await(&a.closed);
    wd_await(&b.closed);
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
    wd_step("waiting for a's event handler to be called");
    assert_int_equal(qsf_set_event_handler(a.s, on_connected, &a), QSF_OK);
    wd_await(&a.inside);
    wd_step("closing a while its handler closes b");
    wd_raise(&app_closing);
    qsf_errinfo e;
    assert_int_equal(qsf_close(a.s, &e), QSF_OK);
    assert_int_equal(a.closed, 1); /* the close of a waited for its handler */
    expect_refused(&a);
    it_wait_acked(b.s, it_publish(b.s, "b", ROWS, 2 * ROWS, 50)); /* b goes on */
    wd_step("closing b from the application thread");
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
    wd_step("waiting for a's handler to close b while b's handler waits for that close");
    assert_int_equal(qsf_set_event_handler(b.s, on_connected, &b), QSF_OK);
    assert_int_equal(qsf_set_event_handler(a.s, on_connected, &a), QSF_OK);
    wd_await(&a.closed);
    expect_refused(&a);
    both_go_on(sink, sink, 0, false);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(event_handlers_close_each_other, start, wd_stop),
        cmocka_unit_test_setup_teardown(error_handlers_close_each_other, start, wd_stop),
        cmocka_unit_test_setup_teardown(handler_closes_b_while_the_application_closes_a, start,
                                        wd_stop),
        cmocka_unit_test_setup_teardown(handler_closes_b_while_b_handler_is_busy, start, wd_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
