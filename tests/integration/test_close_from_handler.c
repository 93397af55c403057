/* qsf_close called from the sender's own error or event handler (the obvious
 * reaction to a terminal record) is refused with QSF_E_STATE and changes
 * nothing (docs/THREADING.md "Which call from where"): before, it freed the inbox under
 * the dispatcher that called the handler, a heap-use-after-free in
 * dispatch_main under AddressSanitizer and silent heap corruption without.
 * The sender then goes on, and closes normally from the producer thread. CI
 * runs this test in its AddressSanitizer build. A close of another sender
 * from a handler is refused too: test_close_pair_from_handlers.c. */
#include "itest.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int handler_rc;   /* what qsf_close returned inside the handler */
static atomic_int report_rc;    /* what qsf_close_report returned there */
static atomic_int handler_done; /* 1 once the handler has made both calls */
static char handler_msg[QSF_ERRINFO_MSG_MAX];

static void close_here(qsf_sender *s) {
    if (atomic_load(&handler_done))
        return;
    qsf_errinfo e;
    atomic_store(&handler_rc, qsf_close(s, &e));
    snprintf(handler_msg, sizeof handler_msg, "%s", e.msg);
    qsf_close_info ci = {.struct_size = sizeof ci};
    atomic_store(&report_rc, qsf_close_report(s, &ci, &e));
    atomic_store(&handler_done, 1);
}

static void on_event(void *user, const qsf_event *ev) {
    if (ev->kind == QSF_EVENT_CONNECTED)
        close_here(user);
}

static void on_error(void *user, const qsf_error_record *r) {
    (void) r;
    close_here(user);
}

static int reset(void **state) {
    (void) state;
    atomic_store(&handler_rc, 0);
    atomic_store(&report_rc, 0);
    atomic_store(&handler_done, 0);
    handler_msg[0] = 0;
    return 0;
}

/* The handler has run (20 s bound); its answers were refusals. */
static void expect_refused(void) {
    for (int i = 0; i < 2000 && !atomic_load(&handler_done); i++)
        it_sleep_ms(10);
    assert_int_equal(atomic_load(&handler_done), 1);
    assert_int_equal(atomic_load(&handler_rc), QSF_E_STATE);
    assert_int_equal(atomic_load(&report_rc), QSF_E_STATE);
    assert_non_null(strstr(handler_msg, "called from this sender's error or event handler"));
}

static void close_in_the_event_handler_is_refused(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    assert_int_equal(qsf_set_event_handler(s, on_event, s), QSF_OK);
    expect_refused();
    it_wait_acked(s, it_publish(s, "t", 0, 100, 50)); /* the sender goes on */
    it_close_and_check(s, sink, "t", 100, false);
}

static void close_in_the_error_handler_is_refused(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "reconnect_initial_backoff_millis=10;"
                                      "reconnect_max_backoff_millis=100;"));
    assert_int_equal(qsf_set_error_handler(s, on_error, s), QSF_OK);
    int64_t fsn = it_publish(s, "t", 0, 100, 100);
    if (qsink_wait_frames(sink, fsn + 1, 20000) != 0)
        fail_msg("the sink did not receive frame %lld", (long long) fsn);
    qsink_restart(sink); /* connection lost with a frame unacknowledged: a record */
    expect_refused();
    it_wait_acked(s, fsn); /* replayed on the next connection */
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 100, true);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(close_in_the_event_handler_is_refused, reset),
        cmocka_unit_test_setup(close_in_the_error_handler_is_refused, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
