/* Shared helpers for the qwp-sink tests: start a sink, open a session, read
 * the next response, parse OK / error / durable-ack payloads. */
#ifndef QSF_TEST_SINKTEST_H
#define QSF_TEST_SINKTEST_H

#include "testutil.h"

#include <string.h>

#include "bytes.h"
#include "rawws.h"
#include "sink.h"

static inline qsink *st_start(const qsink_opts *o) {
    char err[256];
    qsink *s = qsink_start(o, err, sizeof err);
    if (!s)
        fail_msg("qsink_start: %s", err);
    return s;
}

static inline void st_fault(qsink *s, const char *line) {
    char err[256];
    if (qsink_fault(s, line, err, sizeof err) != 0)
        fail_msg("qsink_fault(%s): %s", line, err);
}

/* How long st_next lets the connection stay silent before it fails: a bound
 * on a stall (rawws_recv restarts it with every byte read), generous so that
 * a loaded machine or a sanitizer build only makes a test slower. */
#define ST_NO_PROGRESS_MS 60000

/* Next frame, failing the test if the connection stays silent for
 * ST_NO_PROGRESS_MS first. */
static inline void st_next(rawws *w, rawws_frame *f) {
    int r = rawws_recv(w, f, ST_NO_PROGRESS_MS);
    if (r != 1)
        fail_msg("expected a frame from the sink, got %d (0: silent for %d ms, -1: EOF, -2: reset)",
                 r, ST_NO_PROGRESS_MS);
}

/* Next frame must be an OK for seq; returns its table count. */
static inline int st_expect_ok(rawws *w, int64_t seq) {
    rawws_frame f;
    st_next(w, &f);
    assert_int_equal(f.opcode, 2);
    assert_true(f.len >= 11);
    assert_int_equal(f.payload[0], 0x00);
    assert_int_equal(qsf_get_i64(f.payload + 1), seq);
    return qsf_get_u16(f.payload + 9);
}

/* Next frame must be an error with this status for seq; checks the length rule. */
static inline void st_expect_error(rawws *w, uint8_t status, int64_t seq) {
    rawws_frame f;
    st_next(w, &f);
    assert_int_equal(f.opcode, 2);
    assert_int_equal(f.payload[0], status);
    assert_int_equal(qsf_get_i64(f.payload + 1), seq);
    assert_int_equal(f.len, 11 + qsf_get_u16(f.payload + 9));
}

/* Next frame must be a CLOSE with this code. */
static inline void st_expect_close(rawws *w, int code) {
    rawws_frame f;
    st_next(w, &f);
    assert_int_equal(f.opcode, 8);
    assert_true(f.len >= 2);
    assert_int_equal((f.payload[0] << 8) | f.payload[1], code);
}

/* Nothing arrives within ms (a frame is a failure). */
static inline void st_expect_quiet(rawws *w, int ms) {
    rawws_frame f;
    int r = rawws_recv(w, &f, ms);
    if (r == 1)
        fail_msg("unexpected frame opcode %d status 0x%02x", f.opcode, f.len ? f.payload[0] : 0);
}

/* A PING with a payload and its PONG: everything before the PONG is collected
 * into out (up to max). Returns the number of frames before the PONG. */
static inline int st_ping_collect(rawws *w, rawws_frame *out, int max) {
    assert_int_equal(rawws_send_frame(w, 1, 0, 9, "pq", 2, 1), 0);
    for (int n = 0;; n++) {
        rawws_frame f;
        st_next(w, &f);
        if (f.opcode == 10) {
            assert_int_equal(f.len, 2);
            assert_memory_equal(f.payload, "pq", 2);
            return n;
        }
        if (n < max)
            out[n] = f;
    }
}

#endif
