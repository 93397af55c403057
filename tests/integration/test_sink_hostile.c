/* qwp-sink faults of a hostile or wedged server (docs/QWP-SINK.md): each one
 * puts on the wire exactly the bytes it promises, and nothing else. */
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

static void open_ok(rawws *w) {
    assert_int_equal(rawws_open(w, qsink_port(S), NULL), 0);
}

static void send_frames(rawws *w, int n) {
    assert_int_equal(rawws_send_binary_n(w, RAWWS_EMPTY_COMMIT, 14, n), 0);
}

/* half-frame: the OK for frame 0 (11 bytes) goes out as its 2-byte header and
 * 5 bytes of payload; then nothing, not even a PONG or a CLOSE echo, while the
 * sink goes on reading and processing frames. */
static void half_frame_then_silence(void **state) {
    (void) state;
    st_fault(S, "half-frame after=1");
    rawws w;
    open_ok(&w);
    send_frames(&w, 1);
    rawws_frame f;
    assert_int_equal(rawws_recv(&w, &f, 300), 0); /* no complete frame */
    assert_int_equal(w.len, 7);
    assert_int_equal(w.in[0], 0x82);
    assert_int_equal(w.in[1], 11);
    assert_int_equal(w.in[2], 0x00); /* status OK, then 4 of the 8 sequence bytes */
    send_frames(&w, 3);
    assert_int_equal(rawws_send_frame(&w, 1, 0, 9, "p", 1, 1), 0);
    const uint8_t close_1000[2] = {0x03, 0xE8};
    assert_int_equal(rawws_send_frame(&w, 1, 0, 8, close_1000, 2, 1), 0);
    assert_int_equal(qsink_wait_frames(S, 4, 5000), 0); /* still reading */
    assert_int_equal(rawws_recv(&w, &f, 300), 0);
    assert_int_equal(w.len, 7); /* not one byte more */
    qsink_stats st;
    qsink_get_stats(S, &st);
    assert_int_equal(st.open, 1); /* the client's CLOSE did not end it either */
    rawws_close(&w);
    assert_int_equal(qsink_wait_idle(S, 5000), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(half_frame_then_silence, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
