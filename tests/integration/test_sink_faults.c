/* qwp-sink fault scripts (docs/QWP-SINK.md §4, docs/QWP-SINK.md): each fault
 * does what it says, on the connections it selects, at its trigger. */
#include "sinktest.h"

static qsink *S;

static int setup(void **state) {
    (void) state;
    S = st_start(NULL);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    qsink_stop(S);
    return 0;
}

/* Each test gets a fresh sink so connection numbers start at 1. */
static void fresh(const qsink_opts *o) {
    qsink_stop(S);
    S = st_start(o);
}

static void open_ok(rawws *w) {
    assert_int_equal(rawws_open(w, qsink_port(S), NULL), 0);
}

static void send_frames(rawws *w, int n) {
    assert_int_equal(rawws_send_binary_n(w, RAWWS_EMPTY_COMMIT, 14, n), 0);
}

static void close_after_n_with_each_code(void **state) {
    (void) state;
    const int codes[] = {1000, 1001, 1002, 1009, 1011, 4001};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fresh(NULL);
        char line[64];
        snprintf(line, sizeof line, "close=%d:bye after=3", codes[i]);
        st_fault(S, line);
        rawws w;
        open_ok(&w);
        send_frames(&w, 5);
        st_expect_ok(&w, 2); /* acks for what came before go out first */
        rawws_frame f;
        st_next(&w, &f);
        assert_int_equal(f.opcode, 8);
        assert_int_equal((f.payload[0] << 8) | f.payload[1], codes[i]);
        assert_memory_equal(f.payload + 2, "bye", 3);
        assert_int_equal(rawws_wait_eof(&w, 5000), 0);
        rawws_close(&w);
    }
}

static void rst_after_frames_and_mid_frame(void **state) {
    (void) state;
    st_fault(S, "rst after=2");
    rawws w;
    open_ok(&w);
    send_frames(&w, 4);
    rawws_frame f;
    int r;
    while ((r = rawws_recv(&w, &f, 5000)) == 1)
        ; /* an OK may or may not get out before the reset */
    assert_int_equal(r, -2);
    rawws_close(&w);
    /* bytes=N: reset after 10 bytes, in the middle of the first 20-byte frame */
    fresh(NULL);
    st_fault(S, "rst bytes=10");
    open_ok(&w);
    send_frames(&w, 1);
    assert_int_equal(rawws_wait_eof(&w, 5000), -2);
    qsink_stats st;
    qsink_get_stats(S, &st);
    assert_int_equal(st.frames, 0);
    assert_int_equal(st.bytes, 10);
    rawws_close(&w);
}

static void fin_without_close_frame(void **state) {
    (void) state;
    st_fault(S, "fin after=1");
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    st_expect_ok(&w, 0);
    assert_int_equal(rawws_wait_eof(&w, 5000), 0); /* no CLOSE frame before the FIN */
    rawws_close(&w);
}

static void stall_stops_reading(void **state) {
    (void) state;
    st_fault(S, "stall after=1");
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    st_expect_ok(&w, 0);
    send_frames(&w, 3);
    assert_int_equal(rawws_send_frame(&w, 1, 0, 9, "x", 1, 1), 0);
    st_expect_quiet(&w, 300); /* not even a PONG: nothing is read */
    qsink_stats st;
    qsink_get_stats(S, &st);
    assert_int_equal(st.frames, 1);
    rawws_close(&w);
}

static void silent_never_answers(void **state) {
    (void) state;
    st_fault(S, "silent");
    rawws w;
    open_ok(&w);
    send_frames(&w, 10);
    rawws_frame f[2];
    assert_int_equal(st_ping_collect(&w, f, 2), 0);
    qsink_stats st;
    qsink_get_stats(S, &st);
    assert_int_equal(st.frames, 10);
    assert_int_equal(st.oks, 0);
    rawws_close(&w);
}

static void withhold_ok_keeps_errors(void **state) {
    (void) state;
    st_fault(S, "withhold-ok");
    rawws w;
    open_ok(&w);
    send_frames(&w, 2);
    assert_int_equal(rawws_send_binary(&w, "nope", 4), 0);
    st_expect_error(&w, 0x05, 2); /* no OK before it */
    rawws_close(&w);
}

static void delay_ok(void **state) {
    (void) state;
    st_fault(S, "delay-ok=400");
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    st_expect_quiet(&w, 150);
    st_expect_ok(&w, 0);
    rawws_close(&w);
}

static void status_for_frame_n_every_code(void **state) {
    (void) state;
    const int codes[] = {0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
                         0x0A, 0x0B, 0x0C, 0x0D, 0x42, 0xFF};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        fresh(NULL);
        char line[64];
        snprintf(line, sizeof line, "status=%d:injected seq=2", codes[i]);
        st_fault(S, line);
        rawws w;
        open_ok(&w);
        send_frames(&w, 4);
        st_expect_ok(&w, 1);
        st_expect_error(&w, (uint8_t) codes[i], 2);
        rawws_close(&w);
    }
}

static void status_every_frame_from_conn_2(void **state) {
    (void) state;
    qsink_opts o = {.legacy = 1};
    fresh(&o);
    st_fault(S, "status=0x09:disk_full seq=* conn=2+");
    rawws a, b;
    open_ok(&a);
    send_frames(&a, 1);
    st_expect_ok(&a, 0);
    open_ok(&b);
    send_frames(&b, 2);
    st_expect_error(&b, 0x09, 0);
    st_expect_error(&b, 0x09, 1);
    rawws_close(&a);
    rawws_close(&b);
}

static int upgrade_status(char *resp, size_t cap) {
    rawws w;
    assert_int_equal(rawws_connect(&w, qsink_port(S)), 0);
    int st = rawws_upgrade(&w, "/write/v4", "X-QWP-Request-Durable-Ack: true\r\n", resp, cap);
    rawws_close(&w);
    return st;
}

static void reject_next_k_upgrades(void **state) {
    (void) state;
    char r[2048];
    const int statuses[] = {401, 403, 404, 426, 500, 503};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        char line[32];
        snprintf(line, sizeof line, "reject=%d", statuses[i]);
        st_fault(S, line);
        assert_int_equal(upgrade_status(r, sizeof r), statuses[i]);
    }
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    st_fault(S, "reject=421 role=PRIMARY_CATCHUP zone=z1 times=2");
    assert_int_equal(upgrade_status(r, sizeof r), 421);
    assert_non_null(strstr(r, "X-QuestDB-Role: PRIMARY_CATCHUP\r\nX-QuestDB-Zone: z1\r\n"));
    assert_int_equal(upgrade_status(r, sizeof r), 421);
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    st_fault(S, "reject=421");
    assert_int_equal(upgrade_status(r, sizeof r), 421);
    assert_null(strstr(r, "X-QuestDB-Role"));
}

static void non_standard_101(void **state) {
    (void) state;
    qsink_opts o = {.durable = 1};
    fresh(&o);
    char r[2048];
    st_fault(S, "upgrade=no-version conn=1");
    st_fault(S, "upgrade=version:0 conn=2");
    st_fault(S, "upgrade=no-durable conn=3");
    st_fault(S, "upgrade=batch:100 conn=4");
    st_fault(S, "upgrade=no-batch conn=5");
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    assert_null(strstr(r, "X-QWP-Version"));
    assert_non_null(strstr(r, "X-QWP-Durable-Ack: enabled"));
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    assert_non_null(strstr(r, "X-QWP-Version: 0\r\n"));
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    assert_null(strstr(r, "X-QWP-Durable-Ack"));
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    assert_non_null(strstr(r, "X-QWP-Max-Batch-Size: 100\r\n"));
    assert_int_equal(upgrade_status(r, sizeof r), 101);
    assert_null(strstr(r, "X-QWP-Max-Batch-Size"));
    assert_non_null(strstr(r, "X-QWP-Version: 1\r\n"));
}

static void fragmented_responses(void **state) {
    (void) state;
    st_fault(S, "fragment=4:ping");
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    /* the 11-byte OK as 4 + PING + 4 + PING + 3 */
    uint8_t msg[16];
    size_t got = 0;
    int pings = 0, pieces = 0;
    for (;;) {
        rawws_frame f;
        st_next(&w, &f);
        if (f.opcode == 9) {
            pings++;
            continue;
        }
        assert_int_equal(f.opcode, pieces == 0 ? 2 : 0);
        memcpy(msg + got, f.payload, f.len);
        got += f.len;
        pieces++;
        if (f.fin)
            break;
    }
    assert_int_equal(pieces, 3);
    assert_int_equal(pings, 2);
    assert_int_equal(got, 11);
    assert_int_equal(msg[0], 0);
    assert_int_equal(qsf_get_i64(msg + 1), 0);
    rawws_close(&w);
}

/* The OK for one frame under a malformed fault. */
static void malformed_ok(const char *kind, rawws_frame *f) {
    fresh(NULL);
    char line[64];
    snprintf(line, sizeof line, "malformed=%s", kind);
    st_fault(S, line);
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    st_next(&w, f);
    rawws_close(&w);
}

static void malformed_responses(void **state) {
    (void) state;
    rawws_frame f;
    malformed_ok("bad-length", &f);
    assert_int_equal(f.len, 11);
    assert_int_equal(qsf_get_u16(f.payload + 9), 1); /* claims a table it does not carry */
    malformed_ok("trailing", &f);
    assert_int_equal(f.len, 12);
    malformed_ok("text", &f);
    assert_int_equal(f.opcode, 1);
    malformed_ok("masked", &f);
    assert_int_equal(f.masked, 1);
    assert_int_equal(f.payload[0], 0); /* unmasks to the real OK */
    malformed_ok("rsv", &f);
    assert_int_equal(f.rsv, 4);
    malformed_ok("bad-close", &f);
    assert_int_equal(f.opcode, 8);
    assert_int_equal(f.len, 1);
}

static void forged_ok_after_upgrade(void **state) {
    (void) state;
    st_fault(S, "forged-ok=5");
    rawws w;
    open_ok(&w);
    st_expect_ok(&w, 5); /* before any frame was sent */
    rawws_close(&w);
}

static void restart_drops_connections(void **state) {
    (void) state;
    st_fault(S, "restart conn=1 after=2");
    rawws w;
    open_ok(&w);
    send_frames(&w, 2);
    rawws_frame f;
    int r;
    while ((r = rawws_recv(&w, &f, 5000)) == 1)
        ;
    assert_true(r < 0);
    rawws_close(&w);
    open_ok(&w); /* the port is still served */
    send_frames(&w, 1);
    st_expect_ok(&w, 0);
    qsink_restart(S);
    while ((r = rawws_recv(&w, &f, 5000)) == 1)
        ;
    assert_true(r < 0);
    rawws_close(&w);
}

static void selectors(void **state) {
    (void) state;
    st_fault(S, "close=1011 conn=2");
    st_fault(S, "close=4000 conn=3-4 after=1");
    rawws w[5];
    for (int i = 0; i < 5; i++)
        open_ok(&w[i]);
    send_frames(&w[0], 1);
    st_expect_ok(&w[0], 0);
    st_expect_close(&w[1], 1011); /* after=0: right after the upgrade */
    for (int i = 2; i < 4; i++) {
        send_frames(&w[i], 1);
        st_expect_ok(&w[i], 0);
        st_expect_close(&w[i], 4000);
    }
    send_frames(&w[4], 1);
    st_expect_ok(&w[4], 0);
    for (int i = 0; i < 5; i++)
        rawws_close(&w[i]);
}

/* What the sink did to each of 12 connections that send 4 frames under random
 * faults: frames it read on each, and the errors it sent. */
static void random_outcomes(char *out, size_t cap) {
    fresh(NULL);
    st_fault(S, "random=0.3:77");
    for (int i = 0; i < 12; i++) {
        rawws w;
        open_ok(&w);
        send_frames(&w, 4);
        /* the PONG (or the end of the connection) says the sink is done with
         * all four frames */
        rawws_send_frame(&w, 1, 0, 9, "", 0, 1);
        rawws_frame f;
        while (rawws_recv(&w, &f, 5000) == 1 && f.opcode != 10)
            ;
        rawws_close(&w);
    }
    size_t o = 0;
    for (int c = 1; c <= 12; c++)
        o += (size_t) snprintf(out + o, cap - o, "%d:%d ", c, (int) qsink_frames(S, c, NULL, 0));
    qsink_error e[64];
    int64_t n = qsink_errors(S, e, 64);
    for (int64_t i = 0; i < n && i < 64; i++)
        o += (size_t) snprintf(out + o, cap - o, "e%d/%d/%d ", e[i].conn, (int) e[i].wire_seq,
                               e[i].status);
}

static void random_faults_are_seeded(void **state) {
    (void) state;
    char a[1024], b[1024];
    random_outcomes(a, sizeof a);
    random_outcomes(b, sizeof b);
    assert_string_equal(a, b);
    qsink_stats st;
    qsink_get_stats(S, &st);
    assert_true(st.errors + st.closes > 0); /* at rate 0.3 over 48 frames, something fired */
}

static void grammar_errors_name_the_token(void **state) {
    (void) state;
    char err[256];
    assert_int_equal(qsink_fault(S, "explode", err, sizeof err), -1);
    assert_non_null(strstr(err, "explode"));
    assert_int_equal(qsink_fault(S, "close=abc", err, sizeof err), -1);
    assert_non_null(strstr(err, "abc"));
    assert_int_equal(qsink_fault(S, "rst after=x", err, sizeof err), -1);
    assert_non_null(strstr(err, "'x'"));
    assert_int_equal(qsink_fault(S, "reject=401 after=3", err, sizeof err), -1);
    assert_int_equal(qsink_fault(S, "close=1000 seq=3", err, sizeof err), -1);
    assert_int_equal(qsink_fault(S, "upgrade=sideways", err, sizeof err), -1);
    assert_int_equal(qsink_fault(S, "# a comment", err, sizeof err), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(close_after_n_with_each_code, setup, teardown),
        cmocka_unit_test_setup_teardown(rst_after_frames_and_mid_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(fin_without_close_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(stall_stops_reading, setup, teardown),
        cmocka_unit_test_setup_teardown(silent_never_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(withhold_ok_keeps_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(delay_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(status_for_frame_n_every_code, setup, teardown),
        cmocka_unit_test_setup_teardown(status_every_frame_from_conn_2, setup, teardown),
        cmocka_unit_test_setup_teardown(reject_next_k_upgrades, setup, teardown),
        cmocka_unit_test_setup_teardown(non_standard_101, setup, teardown),
        cmocka_unit_test_setup_teardown(fragmented_responses, setup, teardown),
        cmocka_unit_test_setup_teardown(malformed_responses, setup, teardown),
        cmocka_unit_test_setup_teardown(forged_ok_after_upgrade, setup, teardown),
        cmocka_unit_test_setup_teardown(restart_drops_connections, setup, teardown),
        cmocka_unit_test_setup_teardown(selectors, setup, teardown),
        cmocka_unit_test_setup_teardown(random_faults_are_seeded, setup, teardown),
        cmocka_unit_test_setup_teardown(grammar_errors_name_the_token, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
