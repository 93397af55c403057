/* Backpressure episodes of the ring (lib/sf/ring_append.c): what a full ring
 * says it waits for, and the hook that reports each episode (ring.h) to the
 * sender, which logs one line per episode and queues its events. Memory mode,
 * segments of 1 KiB and a cap of two: 8 frames of 208 bytes fill the ring.
 * The reader's cursor pins the oldest segment, so the manager cannot free it
 * although every frame in it is acknowledged: the producer then waits for the
 * manager, not for the server. */
#include "ring_testutil.h"

#include "log.h"
#include "sf/ring.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define FRAME 200

static qsf_ring_opts opts(int64_t deadline_ms) {
    qsf_ring_opts o = {0};
    o.sender_id = "t";
    o.segment_bytes = 1024;
    o.total_bytes = 2048;
    o.durability = QSF_DUR_MEMORY;
    o.append_deadline_ms = deadline_ms;
    return o;
}

static int append(qsf_ring *r, qsf_errinfo *e) {
    uint8_t b[FRAME] = {0};
    return qsf_ring_append(r, b, sizeof b, NULL, e);
}

/* Fills the ring (FSN 0..7), pins the oldest segment with a cursor and
 * acknowledges every frame: the next append has to wait. */
static qsf_ring *full_of_acknowledged(int64_t deadline_ms, qsf_ring_cursor *pin) {
    qsf_ring_opts o = opts(deadline_ms);
    qsf_ring *r = rt_open(&o);
    RT_WAIT_UNTIL(qsf_ring_owned_bytes(r) == 2048); /* active + spare */
    qsf_errinfo e;
    for (int i = 0; i < 8; i++)
        assert_int_equal(append(r, &e), QSF_OK);
    memset(pin, 0, sizeof *pin);
    assert_int_equal(qsf_ring_cursor_seek(r, pin, 0), 0);
    assert_true(qsf_ring_acknowledge(r, 7));
    return r;
}

static void status(void *user, char *buf, size_t cap) {
    (void) user;
    snprintf(buf, cap, "connected to test:1");
}

/* Every published frame is acknowledged: a QSF_E_FULL that said
 * "acknowledgements not keeping up ... acked FSN 7 of published 7" would
 * contradict itself. */
static void a_ring_full_of_acknowledged_frames_does_not_blame_acknowledgements(void **state) {
    (void) state;
    qsf_ring_cursor pin;
    qsf_ring *r = full_of_acknowledged(100, &pin);
    qsf_ring_set_status_fn(r, status, NULL);
    qsf_errinfo e;
    assert_int_equal(append(r, &e), QSF_E_FULL);
    if (strstr(e.msg, "not keeping up") || strstr(e.msg, "connected to"))
        fail_msg("blames the server although every frame is acknowledged: %s", e.msg);
    assert_non_null(strstr(e.msg, "acked FSN 7 of published 7"));
    assert_non_null(strstr(e.msg, "waiting for acknowledged segments to be freed"));
    qsf_ring_cursor_release(r, &pin);
    qsf_ring_set_status_fn(r, NULL, NULL);
    assert_int_equal(qsf_ring_close(r, NULL), QSF_OK);
}

int main(void) {
    qsf_log_set(NULL, NULL, QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            a_ring_full_of_acknowledged_frames_does_not_blame_acknowledgements, rt_setup,
            rt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
