/* An error or event handler may make any "any thread" call (docs/THREADING.md),
 * and handlers still run while qsf_close delivers what their inboxes hold.
 * A handler cannot tell that the sender is closing, so every such call must
 * work on the items close delivers: the close's own DISCONNECTED event, and
 * an error record whose handler is still busy when close stops the I/O
 * thread and the ring. */
#include "itest.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static atomic_int handled; /* handler calls that made every call */
static atomic_int error_sleep_ms;

/* Every call THREADING.md allows a handler, on the sender it belongs to.
 * Counts the calls that answered sensibly (cmocka asserts on the main thread
 * only). */
static void call_everything(qsf_sender *s) {
    qsf_stats st;
    qsf_stats_get(s, &st);
    bool ok = st.struct_size == sizeof st;
    ok = ok && qsf_published_fsn(s) >= qsf_acked_fsn(s);
    char buf[8192];
    ok = ok && qsf_stats_json(s, buf, sizeof buf) > 0;
    ok = ok && qsf_metrics_prometheus(s, buf, sizeof buf) > 0;
    qsf_error_record r;
    (void) qsf_poll_error(s, &r);
    qsf_event ev = {.struct_size = sizeof ev};
    ok = ok && qsf_poll_event(s, &ev) >= 0;
    uint64_t delivered, dropped;
    qsf_event_counts(s, &delivered, &dropped);
    if (ok)
        atomic_fetch_add(&handled, 1);
}

static void on_event(void *user, const qsf_event *ev) {
    qsf_sender *s = user;
    if (ev->kind == QSF_EVENT_DISCONNECTED && strstr(ev->cause, "closing")) {
        it_sleep_ms(300); /* a slow handler: close goes on meanwhile */
        qsf_errinfo e;    /* the calls that wait for the I/O thread return at their bound */
        (void) qsf_wait(s, qsf_published_fsn(s) + 1, QSF_WAIT_OK, 10, &e);
        (void) qsf_pause(s);
        (void) qsf_resume(s);
    }
    call_everything(s);
}

static void on_error(void *user, const qsf_error_record *r) {
    (void) r;
    it_sleep_ms(atomic_load(&error_sleep_ms)); /* still busy when close stops the sender */
    call_everything(user);
}

static int reset(void **state) {
    (void) state;
    atomic_store(&handled, 0);
    atomic_store(&error_sleep_ms, 0);
    return 0;
}

/* The last event of a sender, DISCONNECTED "the sender is closing", is
 * delivered by qsf_close; its handler, a slow one, reads the stats and the
 * FSNs. */
static void an_event_handler_reads_the_stats_of_the_close_event(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    assert_int_equal(qsf_set_event_handler(s, on_event, s), QSF_OK);
    it_wait_acked(s, it_publish(s, "t", 0, 100, 100));
    for (int i = 0; i < 500 && atomic_load(&handled) < 1; i++)
        it_sleep_ms(10); /* CONNECTED handled */
    int before = atomic_load(&handled);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    assert_int_equal(atomic_load(&handled), before + 1); /* the close's DISCONNECTED */
    qsink_stop(sink);
}

/* An error handler that is still working on a record when the application
 * closes: once it returns it reads the stats, which must still answer. */
static void an_error_handler_busy_during_close_reads_the_stats(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    it_fault(sink, "withhold-ok conn=1");
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    assert_int_equal(qsf_set_error_handler(s, on_error, s), QSF_OK);
    atomic_store(&error_sleep_ms, 400);
    int64_t fsn = it_publish(s, "t", 0, 100, 100);
    if (qsink_wait_frames(sink, fsn + 1, 20000) != 0)
        fail_msg("the sink did not receive frame %lld", (long long) fsn);
    qsink_restart(sink); /* connection lost with a frame unacknowledged: a record */
    qsf_stats st;
    for (int i = 0; i < 500; i++) { /* the record is in the handler's hands */
        qsf_stats_get(s, &st);
        if (st.connections_lost)
            break;
        it_sleep_ms(10);
    }
    assert_true(st.connections_lost >= 1);
    qsf_errinfo e;
    (void) qsf_close(s, &e);
    assert_true(atomic_load(&handled) >= 1);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(an_event_handler_reads_the_stats_of_the_close_event, reset),
        cmocka_unit_test_setup(an_error_handler_busy_during_close_reads_the_stats, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
