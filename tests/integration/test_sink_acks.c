/* qwp-sink acknowledgement semantics (docs/PROTOCOL.md §6; docs/QWP-SINK.md §2.3-§2.5): cumulative
 * OKs every 8 frames and at the end of a read, per-frame mode, the OK before an error, the broken
 * pipeline (and the legacy leapfrog), deferred groups, the durable-ack poll rule and the frame log.
 */
#include "sinktest.h"

#include <pthread.h>

static void batched_every_8_and_end_of_read(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    /* one write of 20 frames arrives in one read: OK at 7, 15, then 19 */
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_EMPTY_COMMIT, 14, 20), 0);
    assert_int_equal(st_expect_ok(&w, 7), 0);
    st_expect_ok(&w, 15);
    st_expect_ok(&w, 19);
    /* a single frame in its own read is acknowledged at the end of that read */
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    st_expect_ok(&w, 20);
    rawws_close(&w);
    qsink_stop(s);
}

static void per_frame_mode(void **state) {
    (void) state;
    qsink_opts o = {.ack_mode = QSINK_ACK_PER_FRAME};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_EMPTY_COMMIT, 14, 3), 0);
    st_expect_ok(&w, 0);
    st_expect_ok(&w, 1);
    st_expect_ok(&w, 2);
    rawws_close(&w);
    qsink_stop(s);
}

/* Three frames in one write: good, good, bad magic. */
static void send_good_good_bad(rawws *w) {
    uint8_t bad[14];
    memcpy(bad, RAWWS_EMPTY_COMMIT, 14);
    bad[0] = 'X';
    assert_int_equal(rawws_send_binary_n(w, RAWWS_EMPTY_COMMIT, 14, 2), 0);
    assert_int_equal(rawws_send_binary(w, bad, 14), 0);
}

static void error_after_ok_then_pipeline_broken(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    send_good_good_bad(&w);
    st_expect_ok(&w, 1);
    st_expect_error(&w, 0x05, 2);
    /* later frames are consumed but never answered, not even by a later OK */
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_EMPTY_COMMIT, 14, 3), 0);
    rawws_frame before[4];
    assert_int_equal(st_ping_collect(&w, before, 4), 0);
    qsink_frame fr[8];
    assert_int_equal(qsink_frames(s, 1, fr, 8), 6);
    assert_int_equal(fr[1].status, 0x00);
    assert_int_equal(fr[2].status, 0x05);
    assert_int_equal(fr[5].wire_seq, 5);
    assert_int_equal(fr[5].status, 0xFF);
    assert_int_equal(fr[5].flags, 0x08);
    qsink_error e[2];
    assert_int_equal(qsink_errors(s, e, 2), 1);
    assert_int_equal(e[0].wire_seq, 2);
    assert_non_null(strstr(e[0].msg, "magic"));
    rawws_close(&w);
    qsink_stop(s);
}

static void legacy_mode_keeps_going(void **state) {
    (void) state;
    qsink_opts o = {.legacy = 1};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    send_good_good_bad(&w);
    st_expect_ok(&w, 1);
    st_expect_error(&w, 0x05, 2);
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    st_expect_ok(&w, 3); /* the leapfrog older servers produce */
    rawws_close(&w);
    qsink_stop(s);
}

static void deferred_group_not_acked_until_commit(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_EMPTY_COMMIT, 14, 1), 0);
    st_expect_ok(&w, 0);
    /* two deferred (catch-up) frames: no OK, not even on PING */
    uint8_t empty_defer[14];
    memcpy(empty_defer, RAWWS_EMPTY_COMMIT, 14);
    empty_defer[5] = 0x09;
    assert_int_equal(rawws_send_binary_n(&w, empty_defer, 14, 2), 0);
    rawws_frame before[4];
    assert_int_equal(st_ping_collect(&w, before, 4), 0);
    /* the committing frame acknowledges the whole group */
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    st_expect_ok(&w, 3);
    /* a group left open by a disconnect is never committed */
    assert_int_equal(rawws_send_binary(&w, empty_defer, 14), 0);
    assert_int_equal(st_ping_collect(&w, before, 4), 0);
    rawws_close(&w);
    qsink_frame fr[8];
    assert_int_equal(qsink_frames(s, 1, fr, 8), 5);
    assert_int_equal(fr[1].status, 0x00);
    assert_int_equal(fr[2].status, 0x00);
    assert_int_equal(fr[4].status, 0xFF);
    qsink_stop(s);
}

static void header_checks(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    uint8_t v2[14];
    memcpy(v2, RAWWS_EMPTY_COMMIT, 14);
    v2[4] = 2; /* version other than the negotiated one */
    assert_int_equal(rawws_send_binary(&w, v2, 14), 0);
    st_expect_error(&w, 0x05, 0);
    qsink_error e;
    qsink_errors(s, &e, 1);
    assert_non_null(strstr(e.msg, "version"));
    rawws_close(&w);
    /* a durable-ack poll without durable acks negotiated */
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    const uint8_t poll[12] = {0x51, 0x57, 0x50, 0x31, 1, 0x02, 0, 0, 0, 0, 0, 0};
    assert_int_equal(rawws_send_binary(&w, poll, 12), 0);
    st_expect_error(&w, 0x05, 0);
    qsink_error e2[2];
    assert_int_equal(qsink_errors(s, e2, 2), 2);
    assert_string_equal(e2[1].msg, "durable ACK poll was not negotiated");
    rawws_close(&w);
    qsink_stop(s);
}

static void payload_recording(void **state) {
    (void) state;
    qsink_opts o = {.record_payloads = 1};
    qsink *s = st_start(&o);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_CATCHUP_AB, sizeof RAWWS_CATCHUP_AB), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    assert_int_equal(qsink_wait_frames(s, 2, 5000), 0);
    uint8_t p[64];
    assert_int_equal(qsink_frame_payload(s, 1, 0, p, sizeof p), sizeof RAWWS_CATCHUP_AB);
    assert_memory_equal(p, RAWWS_CATCHUP_AB, sizeof RAWWS_CATCHUP_AB);
    assert_int_equal(qsink_frame_payload(s, 1, 2, p, sizeof p), -1);
    assert_int_equal(qsink_frames(s, 2, NULL, 0), -1);
    rawws_close(&w);
    qsink_stop(s);
}

/* Stopping the sink with a session open: the pending OK, CLOSE 1001, then FIN. */
static void *stop_later(void *arg) {
    qsink_stop(arg);
    return NULL;
}

static void stop_is_graceful(void **state) {
    (void) state;
    qsink *s = st_start(NULL);
    st_fault(s, "delay-ok=60000");
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(s), NULL), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    assert_int_equal(qsink_wait_frames(s, 1, 5000), 0);
    pthread_t t;
    pthread_create(&t, NULL, stop_later, s);
    st_expect_ok(&w, 0);
    st_expect_close(&w, 1001);
    assert_int_equal(rawws_wait_eof(&w, 5000), 0);
    rawws_close(&w);
    pthread_join(t, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batched_every_8_and_end_of_read),
        cmocka_unit_test(per_frame_mode),
        cmocka_unit_test(error_after_ok_then_pipeline_broken),
        cmocka_unit_test(legacy_mode_keeps_going),
        cmocka_unit_test(deferred_group_not_acked_until_commit),
        cmocka_unit_test(header_checks),
        cmocka_unit_test(payload_recording),
        cmocka_unit_test(stop_is_graceful),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
