/* Steady streaming, cumulative acks, the upgrade request, flush/wait/close
 * semantics against an in-process qwp-sink. */
#include "itest.h"

#include "log.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void stream_and_close(const char *extra, int64_t rows, int per_flush) {
    qsink *sink = it_sink(NULL);
    char conf[1024];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    int64_t fsn = it_publish(s, "trades", 0, rows, per_flush);
    assert_true(fsn >= 0);
    assert_int_equal(qsf_published_fsn(s), fsn);
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 10000, &e), QSF_OK);
    it_wait_acked(s, fsn);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.connected, 1);
    assert_int_equal(st.acked_fsn, fsn);
    assert_int_equal(st.pending_frames, 0);
    assert_int_equal(st.oldest_unacked_age_ms, -1);
    assert_true(st.frames_sent == (uint64_t) fsn + 1);
    assert_int_equal(st.frames_replayed, 0);
    assert_int_equal(strncmp(st.current_host, "127.0.0.1:", 10), 0);
    it_close_and_check(s, sink, "trades", rows, false);
}

static void streaming_memory_mode(void **state) {
    (void) state;
    stream_and_close("", 20000, 500);
}

static void streaming_sf_mode_removes_a_drained_slot(void **state) {
    (void) state;
    char extra[700], slot[600];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=s1;", it_dir);
    snprintf(slot, sizeof slot, "%s/s1", it_dir);
    stream_and_close(extra, 20000, 0); /* auto-flush every 1000 rows */
    snprintf(slot, sizeof slot, "%s/s1", it_dir);
    /* fully acknowledged: the ring removed its segment files */
    assert_true(it_count_segments(slot, NULL, 0) <= 0);
}

static void upgrade_request_has_exactly_the_qsf_headers(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.auth_basic = "alice:s3cret";
    qsink *sink = it_sink(&o);
    char conf[512], req[4096];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "username=alice;password=s3cret;client_id=probe/7;"));
    assert_true(qsink_last_request(sink, req, sizeof req) > 0);
    assert_non_null(strstr(req, "GET /write/v4 HTTP/1.1\r\n"));
    assert_non_null(strstr(req, "X-QWP-Max-Version: 1\r\n"));
    assert_non_null(strstr(req, "X-QWP-Client-Id: probe/7\r\n"));
    /* base64("alice:s3cret") */
    assert_non_null(strstr(req, "Authorization: Basic YWxpY2U6czNjcmV0\r\n"));
    assert_non_null(strstr(req, "Sec-WebSocket-Version: 13\r\n"));
    assert_null(strcasestr(req, "\r\nOrigin:"));
    assert_null(strcasestr(req, "Sec-WebSocket-Protocol"));
    assert_null(strcasestr(req, "Sec-WebSocket-Extensions"));
    assert_null(strcasestr(req, "X-QWP-Request-Durable-Ack"));
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);

    /* default client id and the durable-ack request */
    memset(&o, 0, sizeof o);
    o.durable = 1;
    sink = it_sink(&o);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "request_durable_ack=on;"));
    assert_true(qsink_last_request(sink, req, sizeof req) > 0);
    assert_non_null(strstr(req, "X-QWP-Client-Id: qsf/" QSF_VERSION_STRING "\r\n"));
    assert_non_null(strstr(req, "X-QWP-Request-Durable-Ack: true\r\n"));
    assert_null(strcasestr(req, "Authorization"));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void cumulative_acks_cover_many_frames(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL); /* batched: an OK per 8 frames / per read */
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush=off;"));
    int64_t fsn = it_publish(s, "t", 0, 4000, 1); /* one frame per row */
    assert_int_equal(fsn, 3999);
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 10000, &e), QSF_OK);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_true(st.acks > 0 && st.acks < 4000); /* cumulative, not one per frame */
    assert_int_equal(st.highest_ok_fsn, 3999);
    assert_int_equal(qsf_acked_fsn(s), 3999);
    it_close_and_check(s, sink, "t", 4000, false);
}

static void empty_flush_and_wait_arguments(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    int64_t fsn = 7;
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, -1); /* never published */
    int64_t last = it_publish(s, "t", 0, 10, 0);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, last); /* empty flush: the current published FSN */
    assert_int_equal(qsf_wait(s, last + 1, QSF_WAIT_OK, 100, &e), QSF_E_INVAL);
    assert_int_equal(qsf_wait(s, last, QSF_WAIT_DURABLE, 100, &e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "request_durable_ack"));
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void close_times_out_keeps_the_tail_and_releases_the_lock(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char err[128], conf[1024], extra[700];
    assert_int_equal(qsink_fault(sink, "withhold-ok conn=1", err, sizeof err), 0);
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=tail;close_flush_timeout_millis=300;",
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    int64_t fsn = it_publish(s, "t", 0, 3000, 1000);
    assert_int_equal(fsn, 2);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT);
    assert_int_equal(qsink_rows(sink, "t"), 3000); /* committed, never acknowledged */

    /* the same slot opens again (lock released) and replays the tail */
    qsf_sender *s2 = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    assert_int_equal(qsf_published_fsn(s2), 2);
    it_wait_acked(s2, 2);
    qsf_stats st;
    qsf_stats_get(s2, &st);
    assert_int_equal(st.frames_replayed, 3);
    assert_int_equal(qsf_close(s2, &e), QSF_OK);
    it_assert_rows(sink, "t", 3000, true); /* the replay duplicates: allowed */
    assert_int_equal(qsink_rows(sink, "t"), 6000);
    qsink_stop(sink);
}

static void fast_close_skips_the_drain(void **state) {
    (void) state;
    const char *modes[] = {"0", "-1"};
    for (int m = 0; m < 2; m++) {
        qsink *sink = it_sink(NULL);
        char err[128], conf[1024], extra[700];
        assert_int_equal(qsink_fault(sink, "stall conn=1", err, sizeof err), 0);
        snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=fast%d;close_flush_timeout_millis=%s;",
                 it_dir, m, modes[m]);
        qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
        it_publish(s, "t", 0, 100, 0);
        qsf_errinfo e;
        qsf_close_info ci = {.struct_size = sizeof ci};
        /* not everything was acknowledged: close says so, and that it is kept */
        assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_TIMEOUT);
        assert_true(ci.frames_unacked >= 1);
        assert_int_equal(ci.kept_on_disk, 1);
        assert_int_equal(ci.frames_lost, 0);
        qsink_fault_clear(sink);
        qsink_restart(sink);
        /* the tail stayed on disk: a new sender delivers it */
        qsf_sender *s2 = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
        it_wait_acked(s2, qsf_published_fsn(s2));
        assert_int_equal(qsf_close(s2, &e), QSF_OK);
        it_assert_rows(sink, "t", 100, true);
        qsink_stop(sink);
    }
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_ERROR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(streaming_memory_mode, it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(streaming_sf_mode_removes_a_drained_slot, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(upgrade_request_has_exactly_the_qsf_headers, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(cumulative_acks_cover_many_frames, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(empty_flush_and_wait_arguments, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(close_times_out_keeps_the_tail_and_releases_the_lock,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(fast_close_skips_the_drain, it_setup_dir, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
