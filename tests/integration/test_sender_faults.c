/* Each qwp-sink fault against a live sender: the rows that reach the sink are
 * every row published (duplicates only where a replay allows them), and each
 * server status meets its policy (docs/PROTOCOL.md §9, §10). */
#include "itest.h"

#include "log.h"
#include "os/os.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"

/* One sink, one fault, 3000 rows in 30 frames; everything arrives. */
static void survive(const char *fault_line, const char *extra, bool allow_dups) {
    qsink *sink = it_sink(NULL);
    it_fault(sink, fault_line);
    char conf[512], ex[256];
    snprintf(ex, sizeof ex, FAST "%s", extra ? extra : "");
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ex));
    int64_t fsn = it_publish(s, "t", 0, 3000, 100);
    it_wait_acked(s, fsn);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 3000, allow_dups);
    qsink_stop(sink);
}

static void close_codes_reconnect_and_replay(void **state) {
    (void) state;
    survive("close=1011:boom conn=1 after=5", NULL, true);
    survive("close=1001:restarting conn=1 after=5", NULL, true);
    survive("close=1000 conn=1-2 after=3", NULL, true);
    survive("close=4000 conn=1 after=10", NULL, true);
}

static void resets_and_half_closes_reconnect(void **state) {
    (void) state;
    survive("rst conn=1 after=4", NULL, true);
    survive("rst conn=1 bytes=5000", NULL, true); /* mid-frame */
    survive("fin conn=1 after=4", NULL, true);
}

static void fragmented_responses_with_pings_are_reassembled(void **state) {
    (void) state;
    survive("fragment=3:ping conn=1+", NULL, false);
}

static void tiny_batch_cap_splits_frames(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.record_payloads = 1;
    o.max_batch = 4000;
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush=off;"));
    int64_t fsn = it_publish(s, "t", 0, 5000, 0); /* one flush, far more than 3600 bytes */
    assert_true(fsn >= 10);
    it_wait_acked(s, fsn);
    static qsink_frame fr[4096];
    int64_t n = qsink_frames(sink, 1, fr, 4096);
    assert_true(n > 10);
    int deferred = 0;
    for (int64_t i = 0; i < n; i++) {
        assert_true(fr[i].size <= 3600); /* 90 % of the advertised cap */
        deferred += (fr[i].flags & 0x01) != 0;
    }
    assert_true(deferred > 0); /* all frames of the split but the last */
    it_close_and_check(s, sink, "t", 5000, false);
}

static void retriable_statuses_replay_and_report(void **state) {
    (void) state;
    const int statuses[] = {0x09, 0x06, 0x04, 0x0C, 0x7F};
    const int cats[] = {QSF_CAT_WRITE_ERROR, QSF_CAT_INTERNAL_ERROR, QSF_CAT_UNKNOWN,
                        QSF_CAT_NOT_WRITABLE, QSF_CAT_UNKNOWN};
    for (int i = 0; i < 5; i++) {
        qsink *sink = it_sink(NULL);
        char line[128], conf[512];
        snprintf(line, sizeof line, "status=0x%02X:try_later conn=1 seq=3", statuses[i]);
        it_fault(sink, line);
        qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
        int64_t fsn = it_publish(s, "t", 0, 1000, 100);
        it_wait_acked(s, fsn);
        qsf_error_record r;
        assert_int_equal(qsf_poll_error(s, &r), 1);
        assert_int_equal(r.category, cats[i]);
        assert_int_equal(r.policy,
                         statuses[i] == 0x0C ? QSF_POLICY_RETRIABLE_OTHER : QSF_POLICY_RETRIABLE);
        assert_int_equal(r.status, statuses[i]);
        assert_int_equal(r.wire_seq, 3);
        assert_int_equal(r.from_fsn, 3);
        assert_string_equal(r.table, "t");
        assert_non_null(strstr(r.message, "try_later"));
        qsf_stats st;
        qsf_stats_get(s, &st);
        assert_true(st.server_errors >= 1);
        assert_true(st.reconnects_succeeded >= 1);
        qsf_errinfo e;
        assert_int_equal(qsf_close(s, &e), QSF_OK);
        it_assert_rows(sink, "t", 1000, false); /* the pipeline broke at 3: no dups */
        qsink_stop(sink);
    }
}

/* Server text reaches the application and the log as visible text: a
 * terminal escape in an error message cannot drive anyone's terminal. */
static void server_text_is_escaped_in_error_records(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "status=0x09:disk\x1b[2Jfull conn=1 seq=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    it_wait_acked(s, it_publish(s, "t", 0, 300, 100));
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_null(strchr(r.message, 0x1b));
    assert_non_null(strstr(r.message, "disk\\x1b[2Jfull"));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void dictionary_gap_reregisters_the_dictionary(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.record_payloads = 1;
    qsink *sink = it_sink(&o);
    it_fault(sink, "status=0x0D:gap conn=1 seq=2");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    it_wait_acked(s, fsn);
    static qsink_frame fr[256];
    assert_true(qsink_frames(sink, 2, fr, 256) > 1);
    assert_int_equal(fr[0].flags, 0x09); /* catch-up first on the new connection */
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DICTIONARY_GAP);
    it_close_and_check(s, sink, "t", 1000, false);
}

static void terminal_status_latches_and_close_rethrows_it(void **state) {
    (void) state;
    const int statuses[] = {0x03, 0x05, 0x08};
    for (int i = 0; i < 3; i++) {
        qsink *sink = it_sink(NULL);
        char line[128], conf[512];
        snprintf(line, sizeof line, "status=0x%02X:column_type conn=2 seq=2", statuses[i]);
        it_fault(sink, line);
        qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
        /* publish while paused, so the rejection arrives after the last producer call */
        assert_int_equal(qsf_pause(s), QSF_OK);
        it_publish(s, "t", 0, 300, 100);
        assert_int_equal(qsf_resume(s), QSF_OK);
        qsf_stats st;
        for (int k = 0; k < 1000; k++) {
            qsf_stats_get(s, &st);
            if (st.last_error_code)
                break;
            nanosleep(&(struct timespec){0, 5000000}, NULL);
        }
        assert_int_equal(st.last_error_code, QSF_E_SERVER);
        qsf_errinfo e;
        int rc = qsf_close(s, &e); /* the application never saw it: close says it */
        assert_int_equal(rc, QSF_E_SERVER);
        assert_true(e.flags & QSF_ERRF_FATAL);
        assert_non_null(strstr(e.msg, "column_type"));
        /* nothing after the rejected frame was acknowledged or committed */
        assert_int_equal(qsink_rows(sink, "t"), 100);
        qsink_stop(sink);
    }
}

static void terminal_error_fails_producer_calls(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "status=0x03:schema conn=1 seq=0");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    it_publish(s, "t", 0, 10, 0);
    qsf_errinfo e;
    int rc = QSF_OK;
    for (int k = 0; k < 500 && rc == QSF_OK; k++) {
        rc = qsf_table(s, "t", 1, &e);
        if (rc == QSF_OK)
            qsf_row_cancel(s);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    assert_int_equal(rc, QSF_E_SERVER);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_SERVER);
    assert_int_equal(qsf_wait(s, 0, QSF_WAIT_OK, 100, &e), QSF_E_SERVER);
    /* seen by every producer call, and still returned by close (latch.h) */
    assert_int_equal(qsf_close(s, &e), QSF_E_SERVER);
    assert_true(e.flags & QSF_ERRF_FATAL);
    qsink_stop(sink);
}

/* The terminal error of the observed report: an error handler receives it
 * before the next producer call. A record delivered to a handler is not "the
 * application saw it": every later producer call and close still return it,
 * and close says how many frames a memory-mode sender leaves unacknowledged. */
static _Atomic int handled;
static void count_handler(void *user, const qsf_error_record *r) {
    (void) user;
    if (r->policy == QSF_POLICY_TERMINAL)
        atomic_fetch_add(&handled, 1);
}

static void terminal_error_seen_by_a_handler_is_still_returned(void **state) {
    (void) state;
    const int statuses[] = {0x08, 0x03};
    for (int i = 0; i < 2; i++) {
        atomic_store(&handled, 0);
        qsink *sink = it_sink(NULL);
        char line[128], conf[512];
        snprintf(line, sizeof line, "status=0x%02X:denied conn=2 seq=4", statuses[i]);
        it_fault(sink, line);
        qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
        assert_int_equal(qsf_set_error_handler(s, count_handler, NULL), QSF_OK);
        /* published while paused, so the rejection arrives after the last
         * producer call of the application */
        assert_int_equal(qsf_pause(s), QSF_OK);
        it_publish(s, "t", 0, 2000, 100);
        assert_int_equal(qsf_resume(s), QSF_OK);
        for (int k = 0; k < 2000 && atomic_load(&handled) == 0; k++)
            it_sleep_ms(5);
        assert_int_equal(atomic_load(&handled), 1);
        qsf_errinfo e;
        qsf_close_info ci = {.struct_size = sizeof ci};
        assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_SERVER);
        assert_true(e.flags & QSF_ERRF_FATAL);
        assert_non_null(strstr(e.msg, "denied"));
        assert_true(ci.frames_unacked > 0);
        assert_int_equal(ci.kept_on_disk, 0); /* memory mode: lost, and counted */
        assert_int_equal(ci.frames_lost, ci.frames_unacked);
        assert_true(ci.rows_lost >= 100 * ci.frames_unacked - 100);
        assert_non_null(strstr(e.msg, "frames lost"));
        assert_true(qsink_rows(sink, "t") < 2000);
        qsink_stop(sink);
    }
}

/* Rows without symbols: no catch-up frames, so wireSeq 0 is always the frame at
 * the head of line and a fault on seq=0 rejects the same FSN on every connection. */
static void publish_plain(qsf_sender *s, int n) {
    qsf_errinfo e;
    for (int i = 0; i < n; i++) {
        assert_int_equal(qsf_table(s, "p", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, i, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + i, &e), QSF_OK);
    }
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
}

static void poison_frame_escalates_after_four_strikes_and_five_seconds(void **state) {
    (void) state;
    it_clock_install();
    qsink *sink = it_sink(NULL);
    it_fault(sink, "status=0x09:disk_busy conn=1+ seq=0");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    publish_plain(s, 50);
    qsf_stats st;
    for (int k = 0; k < 1000; k++) {
        qsf_stats_get(s, &st);
        if (st.server_errors >= 6)
            break;
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    assert_true(st.server_errors >= 6); /* 6 strikes in well under 5 s: no verdict yet */
    assert_int_equal(st.last_error_code, QSF_E_SERVER); /* the reported rejections */
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK); /* nothing latched */
    it_clock_advance_ms(6000);
    for (int k = 0; k < 1000 && st.last_error_code != QSF_E_PROTOCOL; k++) {
        qsf_stats_get(s, &st);
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    assert_int_equal(st.last_error_code, QSF_E_PROTOCOL);
    assert_int_equal(qsf_acked_fsn(s), -1); /* the poisoned frame was never skipped */
    assert_int_equal(qsf_close(s, &e), QSF_E_PROTOCOL);
    assert_non_null(strstr(e.msg, "fsn=0"));
    assert_non_null(strstr(e.msg, "poisoned frame"));
    qsink_stop(sink);
    qsf_os_reset();
}

static void role_rejects_rotate_across_three_sinks(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.role = "REPLICA";
    qsink *a = it_sink(&o);
    o.role = "PRIMARY_CATCHUP";
    qsink *b = it_sink(&o);
    qsink *c = it_sink(NULL);
    char conf[512];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u,127.0.0.1:%u,127.0.0.1:%u;" FAST,
             qsink_port(a), qsink_port(b), qsink_port(c));
    qsf_sender *s = it_sender(conf);
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    it_wait_acked(s, fsn);
    qsf_stats st;
    qsf_stats_get(s, &st);
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%u", qsink_port(c));
    assert_string_equal(st.current_host, want);
    qsink_stats as, bs;
    qsink_get_stats(a, &as);
    qsink_get_stats(b, &bs);
    assert_true(as.rejected >= 1 && bs.rejected >= 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(c, "t", 1000, false);
    qsink_stop(a);
    qsink_stop(b);
    qsink_stop(c);
}

static void auth_rejected_before_first_success_is_terminal(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.auth_bearer = "right";
    qsink *sink = it_sink(&o);
    char conf[512];
    it_conf(conf, sizeof conf, qsink_port(sink), "token=wrong;");
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_new(conf, strlen(conf), &s, &e), QSF_E_AUTH);
    assert_null(s);
    assert_null(strstr(e.msg, "wrong")); /* secrets never appear */
    qsink_stop(sink);
}

static void auth_rejected_after_first_success_is_reported_and_retried(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.auth_bearer = "tok";
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST "token=tok;"));
    int64_t fsn = it_publish(s, "t", 0, 200, 100);
    it_wait_acked(s, fsn);
    it_fault(sink, "reject=401 conn=2-4 times=3");
    qsink_restart(sink);
    qsf_stats st;
    for (int k = 0; k < 2000; k++) {
        qsf_stats_get(s, &st);
        if (!st.connected)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    fsn = it_publish(s, "t", 200, 400, 100);
    qsf_error_record r;
    bool saw = false;
    for (int k = 0; k < 2000 && !saw; k++) {
        while (qsf_poll_error(s, &r))
            saw |= r.category == QSF_CAT_SECURITY_ERROR && r.policy == QSF_POLICY_RETRIABLE;
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    assert_true(saw);
    it_wait_acked(s, fsn);
    qsink_stats ss;
    qsink_get_stats(sink, &ss);
    assert_true(ss.rejected >= 3); /* connections 2..4 were refused, the sender kept going */
    it_close_and_check(s, sink, "t", 400, false);
}

static void missing_durable_echo_fails_the_initial_connect(void **state) {
    (void) state;
    qsink *a = it_sink(NULL); /* neither grants durable acks */
    qsink *b = it_sink(NULL);
    char conf[512];
    snprintf(conf, sizeof conf, "ws::addr=127.0.0.1:%u,127.0.0.1:%u;request_durable_ack=on;",
             qsink_port(a), qsink_port(b));
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_new(conf, strlen(conf), &s, &e), QSF_E_PROTOCOL);
    assert_non_null(strstr(e.msg, "durable"));
    /* async: the same verdict is latched in the background */
    snprintf(conf, sizeof conf,
             "ws::addr=127.0.0.1:%u;request_durable_ack=on;initial_connect_retry=async;",
             qsink_port(a));
    s = it_sender(conf);
    qsf_stats st;
    for (int k = 0; k < 1000; k++) {
        qsf_stats_get(s, &st);
        if (st.last_error_code)
            break;
        it_sleep_ms(5);
    }
    assert_int_equal(st.last_error_code, QSF_E_PROTOCOL);
    assert_int_equal(qsf_close(s, &e), QSF_E_PROTOCOL); /* never seen before close */
    qsink_stop(a);
    qsink_stop(b);
}

static void malformed_server_frame_is_a_protocol_violation(void **state) {
    (void) state;
    const char *faults[] = {"malformed=bad-length conn=1 after=1", "malformed=text conn=1 after=1",
                            "malformed=bad-close conn=1 after=1",
                            "malformed=trailing conn=1 after=1"};
    const char *says[] = {"malformed", "text frame", "close payload", "malformed"};
    for (int i = 0; i < 4; i++) {
        qsink *sink = it_sink(NULL);
        it_fault(sink, faults[i]);
        char conf[512];
        qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
        it_publish(s, "t", 0, 10, 0);
        qsf_errinfo e;
        qsf_stats st;
        for (int k = 0; k < 1000; k++) {
            qsf_stats_get(s, &st);
            if (st.last_error_code)
                break;
            it_sleep_ms(5);
        }
        assert_int_equal(st.last_error_code, QSF_E_PROTOCOL);
        assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_PROTOCOL);
        if (!strstr(e.msg, says[i]))
            fail_msg("%s: message '%s' does not say '%s'", faults[i], e.msg, says[i]);
        qsf_error_record r;
        assert_int_equal(qsf_poll_error(s, &r), 1);
        assert_int_equal(r.category, QSF_CAT_PROTOCOL_VIOLATION);
        assert_int_equal(r.policy, QSF_POLICY_TERMINAL);
        assert_int_equal(qsf_close(s, &e), QSF_E_PROTOCOL);
        qsink_stop(sink);
    }
}

int main(void) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    if (getenv("QSF_TEST_ONLY")) {
        const struct CMUnitTest one[] = {
            cmocka_unit_test(terminal_status_latches_and_close_rethrows_it)};
        return cmocka_run_group_tests(one, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(close_codes_reconnect_and_replay),
        cmocka_unit_test(resets_and_half_closes_reconnect),
        cmocka_unit_test(fragmented_responses_with_pings_are_reassembled),
        cmocka_unit_test(tiny_batch_cap_splits_frames),
        cmocka_unit_test(retriable_statuses_replay_and_report),
        cmocka_unit_test(server_text_is_escaped_in_error_records),
        cmocka_unit_test(dictionary_gap_reregisters_the_dictionary),
        cmocka_unit_test(terminal_status_latches_and_close_rethrows_it),
        cmocka_unit_test(terminal_error_fails_producer_calls),
        cmocka_unit_test(terminal_error_seen_by_a_handler_is_still_returned),
        cmocka_unit_test(poison_frame_escalates_after_four_strikes_and_five_seconds),
        cmocka_unit_test(role_rejects_rotate_across_three_sinks),
        cmocka_unit_test(auth_rejected_before_first_success_is_terminal),
        cmocka_unit_test(auth_rejected_after_first_success_is_reported_and_retried),
        cmocka_unit_test(missing_durable_echo_fails_the_initial_connect),
        cmocka_unit_test(malformed_server_frame_is_a_protocol_violation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
