/* qwp-sink WebSocket rules (docs/PROTOCOL.md §11; docs/QWP-SINK.md §2.2): close codes for
 * fragmented, text, oversized and malformed frames, unmasked drop, PING/PONG,
 * client CLOSE echo, acks flushed before every CLOSE, graceful FIN. */
#include "sinktest.h"

static qsink *S;

static int setup(void **state) {
    (void) state;
    qsink_opts o = {.recv_buf = 4096};
    S = st_start(&o);
    return 0;
}

static int teardown(void **state) {
    (void) state;
    qsink_stop(S);
    return 0;
}

/* Opens a session, sends one good frame so an OK is pending when the bad frame
 * arrives in the same write, then expects OK(0) and CLOSE(code) and a FIN. */
static void bad_frame_closes(const uint8_t *bad, size_t n, int code) {
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(S), NULL), 0);
    uint8_t buf[8192];
    size_t l = 0;
    buf[l++] = 0x82;
    buf[l++] = 0x80 | sizeof RAWWS_EMPTY_COMMIT;
    memset(buf + l, 0, 4); /* zero mask: payload as is */
    l += 4;
    memcpy(buf + l, RAWWS_EMPTY_COMMIT, sizeof RAWWS_EMPTY_COMMIT);
    l += sizeof RAWWS_EMPTY_COMMIT;
    memcpy(buf + l, bad, n);
    assert_int_equal(rawws_send_raw(&w, buf, l + n), 0);
    st_expect_ok(&w, 0);
    st_expect_close(&w, code);
    assert_int_equal(rawws_wait_eof(&w, 5000), 0); /* FIN, never RST */
    rawws_close(&w);
}

static void fragmented_binary_1002(void **state) {
    (void) state;
    const uint8_t frag[] = {0x02, 0x80, 0, 0, 0, 0}; /* BINARY, FIN=0, empty, masked */
    bad_frame_closes(frag, sizeof frag, 1002);
    const uint8_t cont[] = {0x80, 0x80, 0, 0, 0, 0}; /* CONTINUATION */
    bad_frame_closes(cont, sizeof cont, 1002);
}

static void text_1003(void **state) {
    (void) state;
    const uint8_t text[] = {0x81, 0x81, 0, 0, 0, 0, 'x'};
    bad_frame_closes(text, sizeof text, 1003);
}

static void oversized_1009_from_declared_length(void **state) {
    (void) state;
    /* declares 1 MiB against a 4 KiB receive buffer; no payload follows */
    const uint8_t big[] = {0x82, 0xFF, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0, 0};
    bad_frame_closes(big, sizeof big, 1009);
}

static void rsv_opcode_and_control_rules_1002(void **state) {
    (void) state;
    const uint8_t rsv[] = {0xC2, 0x80, 0, 0, 0, 0};
    bad_frame_closes(rsv, sizeof rsv, 1002);
    const uint8_t op3[] = {0x83, 0x80, 0, 0, 0, 0};
    bad_frame_closes(op3, sizeof op3, 1002);
    const uint8_t ping_nofin[] = {0x09, 0x80, 0, 0, 0, 0};
    bad_frame_closes(ping_nofin, sizeof ping_nofin, 1002);
    const uint8_t close1[] = {0x88, 0x81, 0, 0, 0, 0, 0x03}; /* 1-byte close payload */
    bad_frame_closes(close1, sizeof close1, 1002);
}

static void unmasked_frame_dropped(void **state) {
    (void) state;
    qsink_stats before, st;
    qsink_get_stats(S, &before);
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(S), NULL), 0);
    assert_int_equal(rawws_send_frame(&w, 1, 0, 2, RAWWS_EMPTY_COMMIT, 14, 0), 0);
    rawws_frame f;
    /* no CLOSE frame, no OK: the connection just ends */
    assert_true(rawws_recv(&w, &f, 5000) < 0);
    rawws_close(&w);
    qsink_get_stats(S, &st);
    assert_int_equal(st.frames, before.frames);
    assert_int_equal(st.closes, before.closes);
}

static void ping_flushes_acks_then_pong(void **state) {
    (void) state;
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(S), NULL), 0);
    assert_int_equal(rawws_send_binary(&w, RAWWS_EMPTY_COMMIT, 14), 0);
    st_expect_ok(&w, 0);
    rawws_frame before[4];
    assert_int_equal(st_ping_collect(&w, before, 4), 0); /* nothing pending: just the PONG */
    rawws_close(&w);
    /* with the OK held back (delay-ok), a PING flushes it ahead of the PONG */
    st_fault(S, "delay-ok=60000");
    assert_int_equal(rawws_open(&w, qsink_port(S), NULL), 0);
    assert_int_equal(rawws_send_binary_n(&w, RAWWS_EMPTY_COMMIT, 14, 3), 0);
    assert_int_equal(qsink_wait_frames(S, 4, 5000), 0);
    assert_int_equal(st_ping_collect(&w, before, 4), 1);
    assert_int_equal(before[0].payload[0], 0x00);
    assert_int_equal(qsf_get_i64(before[0].payload + 1), 2);
    rawws_close(&w);
    qsink_fault_clear(S);
}

static void client_close_echo(int sent, int echoed, int with_code) {
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(S), NULL), 0);
    uint8_t p[2] = {(uint8_t) (sent >> 8), (uint8_t) sent};
    assert_int_equal(rawws_send_frame(&w, 1, 0, 8, p, with_code ? 2 : 0, 1), 0);
    rawws_frame f;
    st_next(&w, &f);
    assert_int_equal(f.opcode, 8);
    assert_int_equal(f.len, 2);
    assert_int_equal((f.payload[0] << 8) | f.payload[1], echoed);
    assert_int_equal(rawws_wait_eof(&w, 5000), 0);
    rawws_close(&w);
}

static void client_close_normalised(void **state) {
    (void) state;
    client_close_echo(1000, 1000, 1);
    client_close_echo(1001, 1001, 1);
    client_close_echo(4321, 4321, 1);
    client_close_echo(1004, 1002, 1);
    client_close_echo(2500, 1002, 1);
    client_close_echo(999, 1000, 1);
    client_close_echo(5000, 1000, 1);
    client_close_echo(1005, 1000, 1);
    client_close_echo(1006, 1000, 1);
    client_close_echo(1015, 1000, 1);
    client_close_echo(0, 1000, 0); /* no code */
}

static void client_close_flushes_ok_first(void **state) {
    (void) state;
    rawws w;
    assert_int_equal(rawws_open(&w, qsink_port(S), NULL), 0);
    uint8_t buf[64];
    size_t l = 0;
    buf[l++] = 0x82, buf[l++] = 0x80 | 14;
    memset(buf + l, 0, 4), l += 4;
    memcpy(buf + l, RAWWS_EMPTY_COMMIT, 14), l += 14;
    const uint8_t close[] = {0x88, 0x82, 0, 0, 0, 0, 0x03, 0xE8};
    memcpy(buf + l, close, sizeof close), l += sizeof close;
    assert_int_equal(rawws_send_raw(&w, buf, l), 0);
    st_expect_ok(&w, 0);
    st_expect_close(&w, 1000);
    rawws_close(&w);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fragmented_binary_1002),
        cmocka_unit_test(text_1003),
        cmocka_unit_test(oversized_1009_from_declared_length),
        cmocka_unit_test(rsv_opcode_and_control_rules_1002),
        cmocka_unit_test(unmasked_frame_dropped),
        cmocka_unit_test(ping_flushes_acks_then_pong),
        cmocka_unit_test(client_close_normalised),
        cmocka_unit_test(client_close_flushes_ok_first),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
