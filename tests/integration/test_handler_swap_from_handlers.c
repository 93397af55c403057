/* qsf_set_event_handler and qsf_set_error_handler called from an error or
 * event handler on another handler than its own (docs/THREADING.md "Which
 * call from where"). Replacing a handler waits for the handler it replaces
 * to return, so that when the call returns it is not running any more:
 *
 * - two handlers that replace or remove each other's handler each wait for
 *   the other to return, which waits in its own call: neither ever returns.
 *   The same holds for two senders' event handlers, two senders' error
 *   handlers, and the event and error handlers of one sender.
 *
 * Such a call is refused with QSF_E_STATE and changes nothing: the handlers
 * stay installed (each still receives the PAUSED event of a qsf_pause), the
 * replacement is never called, and the senders go on and close normally. A
 * handler replacing its own handler is not waited for and goes on working.
 *
 * Every wait is on an event; the watchdog (watchdog.h) ends a stuck test
 * naming its step: before the rule, the first three tests stalled there. */
#include "itest.h"
#include "watchdog.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define ROWS 100

enum { EVENTS, ERRORS }; /* which handler of a sender */

/* One handler: on its first call it waits for `wait_for` (when set), then
 * replaces the `target_kind` handler of `target` with a replacement (or
 * removes it, when `remove`) and records what the call returned. */
typedef struct side {
    qsf_sender *target;
    int target_kind;
    bool remove;
    const int *wait_for;
    int inside;   /* the handler has been called */
    int replaced; /* its call returned */
    int paused;   /* it received a PAUSED event */
    atomic_int rc;
} side;

static side a, b;
static atomic_int replacement_calls; /* a refused call must never install it */
static int replacement_paused;       /* the replacement received a PAUSED event */
static atomic_int refusals[2];       /* log lines saying a qsf_set_*_handler was refused */

/* Counts the refusals' lines, naming the call; passes every line on. */
static void on_log(void *user, int level, const char *line) {
    (void) user;
    if (level == QSF_LOG_WARN && strstr(line, "qsf_set_event_handler refused (QSF_E_STATE)"))
        atomic_fetch_add(&refusals[EVENTS], 1);
    if (level == QSF_LOG_WARN && strstr(line, "qsf_set_error_handler refused (QSF_E_STATE)"))
        atomic_fetch_add(&refusals[ERRORS], 1);
    fprintf(stderr, "qsf %d %s\n", level, line);
}

static int start(void **state) {
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    atomic_store(&replacement_calls, 0);
    replacement_paused = 0;
    atomic_store(&refusals[EVENTS], 0);
    atomic_store(&refusals[ERRORS], 0);
    qsf_set_log_handler(QSF_LOG_DEFAULT, on_log, NULL);
    return wd_start(state);
}

static int stop(void **state) {
    qsf_set_log_handler(QSF_LOG_DEFAULT, NULL, NULL);
    return wd_stop(state);
}

static void replacement_event(void *user, const qsf_event *ev) {
    (void) user;
    atomic_fetch_add(&replacement_calls, 1);
    if (ev->kind == QSF_EVENT_PAUSED)
        wd_raise(&replacement_paused);
}

static void replacement_error(void *user, const qsf_error_record *r) {
    (void) user;
    (void) r;
    atomic_fetch_add(&replacement_calls, 1);
}

static int replace(const side *me) {
    if (me->target_kind == EVENTS)
        return qsf_set_event_handler(me->target, me->remove ? NULL : replacement_event, NULL);
    return qsf_set_error_handler(me->target, me->remove ? NULL : replacement_error, NULL);
}

/* Runs once per side, on its first call. */
static void handle(side *me) {
    if (!wd_raise(&me->inside))
        return;
    if (me->wait_for)
        wd_await(me->wait_for);
    atomic_store(&me->rc, replace(me));
    wd_raise(&me->replaced);
}

static void on_event(void *user, const qsf_event *ev) {
    side *me = user;
    if (ev->kind == QSF_EVENT_CONNECTED)
        handle(me);
    else if (ev->kind == QSF_EVENT_PAUSED)
        wd_raise(&me->paused);
}

static void on_error(void *user, const qsf_error_record *r) {
    (void) r;
    handle(user);
}

/* Both sides made their call, both were refused, and a line for each
 * names the call refused. */
static void expect_both_refused(void) {
    wd_await(&a.replaced);
    wd_await(&b.replaced);
    assert_int_equal(atomic_load(&a.rc), QSF_E_STATE);
    assert_int_equal(atomic_load(&b.rc), QSF_E_STATE);
    int lines[2] = {0, 0};
    lines[a.target_kind]++;
    lines[b.target_kind]++;
    assert_int_equal(atomic_load(&refusals[EVENTS]), lines[EVENTS]);
    assert_int_equal(atomic_load(&refusals[ERRORS]), lines[ERRORS]);
}

/* The event handler of s (side me) is still the one installed: it receives
 * the PAUSED event of a pause. */
static void still_installed(qsf_sender *s, side *me) {
    wd_step("waiting for the PAUSED event to reach the handler a refused call left");
    assert_int_equal(qsf_pause(s), QSF_OK);
    wd_await(&me->paused);
    assert_int_equal(qsf_resume(s), QSF_OK);
}

/* The sender goes on: the keys from..from+ROWS reach its sink, it closes
 * cleanly, and the sink holds every key below from+ROWS (some twice after
 * a replay). */
static void goes_on(qsf_sender *s, qsink *sink, const char *table, int64_t from, bool replayed) {
    wd_step("publishing after the refused calls, then closing");
    it_wait_acked(s, it_publish(s, table, from, from + ROWS, 50));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, table, from + ROWS, replayed);
}

static qsf_sender *sender_on(qsink *sink, const char *extra) {
    char conf[512];
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

/* A sender whose sink never acknowledges on the first connection: once the
 * sink restarts, that connection is lost with a frame unacknowledged (an
 * error record), and the next one acknowledges the replay. */
static qsf_sender *losing_sender(qsink *sink) {
    it_fault(sink, "withhold-ok conn=1");
    return sender_on(sink, "reconnect_initial_backoff_millis=10;"
                           "reconnect_max_backoff_millis=100;");
}

/* Publishes and waits until the sink holds the frame it withholds. */
static int64_t publish_withheld(qsf_sender *s, qsink *sink, const char *table) {
    int64_t fsn = it_publish(s, table, 0, ROWS, ROWS);
    if (qsink_wait_frames(sink, fsn + 1, 20000) != 0)
        fail_msg("the sink of %s did not receive frame %lld", table, (long long) fsn);
    return fsn;
}

/* a's event handler removes b's while b's replaces a's. */
static void event_handlers_replace_each_other(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *sa = sender_on(sink, ""), *sb = sender_on(sink, "");
    a = (side){.target = sb, .target_kind = EVENTS, .remove = true, .wait_for = &b.inside};
    b = (side){.target = sa, .target_kind = EVENTS, .wait_for = &a.inside};
    wd_step("waiting for both event handlers to replace the other's handler");
    assert_int_equal(qsf_set_event_handler(sa, on_event, &a), QSF_OK);
    assert_int_equal(qsf_set_event_handler(sb, on_event, &b), QSF_OK);
    expect_both_refused();
    still_installed(sa, &a);
    still_installed(sb, &b);
    goes_on(sa, sink, "a", 0, false);
    goes_on(sb, sink, "b", 0, false);
    assert_int_equal(atomic_load(&replacement_calls), 0);
    qsink_stop(sink);
}

/* The same with error handlers: each sender loses its connection with a
 * frame unacknowledged, on a sink of its own. */
static void error_handlers_replace_each_other(void **state) {
    (void) state;
    qsink *sink_a = it_sink(NULL), *sink_b = it_sink(NULL);
    qsf_sender *sa = losing_sender(sink_a), *sb = losing_sender(sink_b);
    a = (side){.target = sb, .target_kind = ERRORS, .wait_for = &b.inside};
    b = (side){.target = sa, .target_kind = ERRORS, .remove = true, .wait_for = &a.inside};
    assert_int_equal(qsf_set_error_handler(sa, on_error, &a), QSF_OK);
    assert_int_equal(qsf_set_error_handler(sb, on_error, &b), QSF_OK);
    wd_step("waiting for the sinks to receive the frames they withhold");
    int64_t fa = publish_withheld(sa, sink_a, "a");
    int64_t fb = publish_withheld(sb, sink_b, "b");
    wd_step("waiting for both error handlers to replace the other's handler");
    qsink_restart(sink_a);
    qsink_restart(sink_b);
    expect_both_refused();
    it_wait_acked(sa, fa); /* replayed on the next connection */
    it_wait_acked(sb, fb);
    goes_on(sa, sink_a, "a", ROWS, true);
    goes_on(sb, sink_b, "b", ROWS, true);
    assert_int_equal(atomic_load(&replacement_calls), 0);
    qsink_stop(sink_a);
    qsink_stop(sink_b);
}

/* One sender: its event handler replaces its error handler while its error
 * handler removes its event handler. Two dispatchers of one sender wait for
 * each other the same way. */
static void a_sender_s_two_handlers_replace_each_other(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = losing_sender(sink);
    a = (side){.target = s, .target_kind = ERRORS, .wait_for = &b.inside};
    b = (side){.target = s, .target_kind = EVENTS, .remove = true, .wait_for = &a.inside};
    assert_int_equal(qsf_set_event_handler(s, on_event, &a), QSF_OK); /* CONNECTED */
    assert_int_equal(qsf_set_error_handler(s, on_error, &b), QSF_OK);
    wd_step("waiting for the sink to receive the frame it withholds");
    int64_t fsn = publish_withheld(s, sink, "a");
    wd_step("waiting for the event and error handlers to replace each other");
    qsink_restart(sink);
    expect_both_refused();
    it_wait_acked(s, fsn);
    still_installed(s, &a);
    goes_on(s, sink, "a", ROWS, true);
    assert_int_equal(atomic_load(&replacement_calls), 0);
    qsink_stop(sink);
}

/* A handler replacing its own handler is not refused, and does not wait for
 * itself: the replacement receives the next event. */
static void a_handler_replaces_its_own(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sender_on(sink, "");
    a = (side){.target = s, .target_kind = EVENTS};
    wd_step("waiting for the event handler to replace itself");
    assert_int_equal(qsf_set_event_handler(s, on_event, &a), QSF_OK);
    wd_await(&a.replaced);
    assert_int_equal(atomic_load(&a.rc), QSF_OK);
    wd_step("waiting for the PAUSED event to reach the replacement");
    assert_int_equal(qsf_pause(s), QSF_OK);
    wd_await(&replacement_paused);
    assert_int_equal(qsf_resume(s), QSF_OK);
    goes_on(s, sink, "a", 0, false);
    assert_int_equal(a.paused, 0); /* the handler replaced is called no more */
    assert_int_equal(atomic_load(&refusals[EVENTS]), 0);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(event_handlers_replace_each_other, start, stop),
        cmocka_unit_test_setup_teardown(error_handlers_replace_each_other, start, stop),
        cmocka_unit_test_setup_teardown(a_sender_s_two_handlers_replace_each_other, start, stop),
        cmocka_unit_test_setup_teardown(a_handler_replaces_its_own, start, stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
