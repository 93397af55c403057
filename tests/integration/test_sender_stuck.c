/* A network fault never stops the sender (docs/PROTOCOL.md §9.3, docs/ERRORS.md
 * §8): a server that resets every connection, or answers PINGs and never
 * acknowledges, is retried for as long as it takes, reported once per outage,
 * and the sender says it is stuck ("no progress for T") instead of giving up;
 * once the server works again everything arrives. A server that closes in
 * order without confirming anything is a failure from its first repetition;
 * a cluster of replicas (HTTP 421) meets the backoff after a few rounds.
 * Each waits on what the sink and the sender count, never on a sleep. */
#include "itest.h"

#include "log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=50;"
/* the poison detector at its most eager: a loss that counted as a strike
 * would end the sender within a few connections */
#define EAGER "max_frame_rejections=2;poison_min_escalation_window_millis=0;"
#define LIVE  "ping_interval_millis=200;liveness_timeout_millis=1000;"

static int stuck_warns, connection_warns;
static void count_warns(int level, const char *line, void *user) {
    (void) user;
    if (level != QSF_LOG_WARN)
        return;
    if (strstr(line, "no progress for"))
        __atomic_fetch_add(&stuck_warns, 1, __ATOMIC_RELAXED);
    else if (strstr(line, "RETRIABLE error at") && strstr(line, "connection to"))
        __atomic_fetch_add(&connection_warns, 1, __ATOMIC_RELAXED);
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int records(qsf_sender *s, int category, const char *needle, qsf_error_record *first) {
    return it_records(s, category, needle, first);
}

static void wait_stuck_warning(void) {
    for (int64_t t0 = now_ms(); __atomic_load_n(&stuck_warns, __ATOMIC_RELAXED) == 0;
         it_sleep_ms(10))
        if (now_ms() - t0 > 20000)
            fail_msg("no \"no progress for\" warning within 20 s");
}

/* The sender said it is stuck with an event too: FSNs from `from` on wait. */
static void wait_no_progress_event(qsf_sender *s, int64_t from) {
    qsf_event ev;
    for (int64_t t0 = now_ms();; it_sleep_ms(10)) {
        ev.struct_size = sizeof ev;
        while (qsf_poll_event(s, &ev) == 1)
            if (ev.kind == QSF_EVENT_NO_PROGRESS) {
                assert_int_equal(ev.from_fsn, from);
                assert_true(ev.to_fsn >= from);
                assert_true(ev.duration_ms >= 1000); /* liveness_timeout_millis */
                return;
            }
        if (now_ms() - t0 > 20000)
            fail_msg("no NO_PROGRESS event within 20 s");
    }
}

/* The sender is alive and well: nothing latched, a flush still works. */
static void not_terminal(qsf_sender *s) {
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.terminal_error_code, 0);
    assert_int_equal(st.last_error_code, QSF_E_CONNECT);
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
}

static qsf_sender *sender(qsink *sink, const char *extra) {
    char conf[1024];
    stuck_warns = connection_warns = 0;
    qsf_log_set(count_warns, NULL, QSF_LOG_WARN);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

/* A flaky proxy or a crash-looping server: every connection is reset after
 * its first frame, before any acknowledgement. */
static void a_server_that_resets_every_connection_never_ends_the_sender(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "rst after=1");
    qsf_sender *s = sender(sink, FAST EAGER LIVE);
    int64_t fsn = it_publish(s, "t", 0, 500, 100);
    assert_int_equal(qsink_wait_connections(sink, 12, 30000), 0);
    wait_stuck_warning();
    wait_no_progress_event(s, 0);
    not_terminal(s);
    qsf_stats st;
    qsf_stats_get(s, &st);
    /* the stat says it too: about the second of the warning (the stat reads
     * the wall clock, the warning the monotonic one) */
    assert_true(st.oldest_unacked_age_ms >= 900);
    qsf_error_record r;
    assert_int_equal(records(s, QSF_CAT_CONNECTION, NULL, &r), 1); /* one outage, one record */
    assert_non_null(strstr(r.message, "lost"));
    assert_int_equal(__atomic_load_n(&connection_warns, __ATOMIC_RELAXED), 1);
    qsink_fault_clear(sink);
    it_wait_acked(s, fsn);
    qsf_log_set(NULL, NULL, -1);
    it_close_and_check(s, sink, "t", 500, true);
}

/* A server that answers PINGs but never acknowledges: each connection is
 * found dead at ack_timeout_millis and replaced, forever. */
static void a_server_that_never_acknowledges_never_ends_the_sender(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok");
    qsf_sender *s = sender(sink, FAST EAGER LIVE "ack_timeout_millis=300;");
    int64_t fsn = it_publish(s, "t", 0, 500, 100);
    qsf_stats st;
    for (int64_t t0 = now_ms();; it_sleep_ms(10)) {
        qsf_stats_get(s, &st);
        if (st.liveness_timeouts >= 6 || st.terminal_error_code)
            break;
        if (now_ms() - t0 > 30000)
            fail_msg("only %llu connections found dead in 30 s",
                     (unsigned long long) st.liveness_timeouts);
    }
    wait_stuck_warning();
    not_terminal(s);
    qsf_error_record r;
    assert_int_equal(records(s, QSF_CAT_CONNECTION, NULL, &r), 1);
    assert_non_null(strstr(r.message, "frames unacknowledged"));
    assert_non_null(strstr(r.message, "may be committed twice unless the table has DEDUP"));
    qsink_fault_clear(sink);
    it_wait_acked(s, fsn);
    qsf_log_set(NULL, NULL, -1);
    it_close_and_check(s, sink, "t", 500, true);
}

/* transaction=on: a connection found dead with a transaction's committing
 * frame sent and not acknowledged: the record says it may commit twice. */
static void a_lost_commit_says_it_may_commit_twice(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    qsf_sender *s = sender(sink, FAST LIVE "ack_timeout_millis=300;transaction=on;");
    int64_t fsn = it_publish(s, "t", 0, 100, 0); /* one transaction, one commit */
    qsf_error_record r;
    for (int64_t t0 = now_ms(); records(s, QSF_CAT_CONNECTION, NULL, &r) == 0; it_sleep_ms(10))
        if (now_ms() - t0 > 20000)
            fail_msg("no CONNECTION record within 20 s");
    char span[64];
    snprintf(span, sizeof span, "FSN 0..%lld were sent and not confirmed", (long long) fsn);
    assert_non_null(strstr(r.message, span));
    assert_non_null(strstr(r.message, "may be committed twice unless the table has DEDUP"));
    it_wait_acked(s, fsn);
    qsf_log_set(NULL, NULL, -1);
    it_close_and_check(s, sink, "t", 100, true);
}

/* A server that closes in order without confirming anything (`first`: the
 * fault of its first connection, which confirms frame 0 and closes; `later`:
 * every later one's). The first such close is believed (a restart), the
 * second is a failure: reported, counted. */
static void quiet_closes(const char *first, const char *later) {
    qsink *sink = it_sink(NULL);
    it_fault(sink, first);
    it_fault(sink, later);
    qsf_sender *s = sender(sink, FAST);
    it_wait_acked(s, it_publish(s, "t", 0, 10, 10)); /* the symbol column fills the dictionary */
    int64_t fsn = it_publish(s, "t", 10, 20, 10);
    qsf_error_record r;
    for (int64_t t0 = now_ms(); records(s, QSF_CAT_CONNECTION, NULL, &r) == 0; it_sleep_ms(10))
        if (now_ms() - t0 > 20000)
            fail_msg("no CONNECTION record within 20 s: the orderly closes stall in silence");
    assert_non_null(strstr(r.message, "again before confirming any frame"));
    not_terminal(s);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_true(st.connections_lost >= 1);
    assert_int_equal(__atomic_load_n(&connection_warns, __ATOMIC_RELAXED), 1);
    qsink_fault_clear(sink);
    it_wait_acked(s, fsn);
    qsf_log_set(NULL, NULL, -1);
    it_close_and_check(s, sink, "t", 20, true);
}

static void orderly_closes_right_after_the_upgrade_are_failures(void **state) {
    (void) state;
    quiet_closes("close=1000 conn=1 after=1", "close=1000 conn=2+");
}

/* ... and after the server acknowledged only the dictionary catch-up frame */
static void orderly_closes_after_the_catch_up_are_failures(void **state) {
    (void) state;
    quiet_closes("close=1001 conn=1 after=1", "close=1001 conn=2+ after=1");
}

/* Every endpoint a replica (HTTP 421, role REPLICA): three rounds at the
 * fixed reconnect_initial_backoff_millis, then the backoff of any failure.
 * Before, every round slept 100 ms forever: about 30 upgrades in 3 s. */
static void role_rejections_back_off_after_a_few_rounds(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=421 role=REPLICA times=1000000");
    qsf_sender *s = sender(sink, "initial_connect_retry=async;close_flush_timeout_millis=0;");
    qsink_stats st;
    for (int64_t t0 = now_ms();; it_sleep_ms(5)) {
        qsink_get_stats(sink, &st);
        if (st.rejected >= 1)
            break;
        if (now_ms() - t0 > 10000)
            fail_msg("no upgrade attempt within 10 s");
    }
    int64_t first = st.rejected;
    it_sleep_ms(3000); /* the default backoff: 100 ms doubling to 5 s */
    qsink_get_stats(sink, &st);
    int64_t n = st.rejected - first + 1;
    print_message("# %lld upgrades refused with 421 in 3 s\n", (long long) n);
    assert_true(n <= 12);
    assert_int_equal(records(s, QSF_CAT_CONNECTION, "HTTP 421, role REPLICA", NULL), 1);
    qsf_errinfo e;
    qsf_close(s, &e);
    qsf_log_set(NULL, NULL, -1);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_server_that_resets_every_connection_never_ends_the_sender,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_server_that_never_acknowledges_never_ends_the_sender,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(orderly_closes_right_after_the_upgrade_are_failures,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(orderly_closes_after_the_catch_up_are_failures,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(role_rejections_back_off_after_a_few_rounds, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_lost_commit_says_it_may_commit_twice, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
