/* The waits the integration tests share bound a stall, not the wait: a
 * loaded machine or a sanitizer build makes them longer, never a failure.
 *
 * qsink_wait_rows (tools/qwp-sink/query.c wait_for) gave up a fixed time
 * after it began, however steadily the rows came; it_wait_acked polled
 * qsf_acked_fsn every 10 ms for a fixed 20 s instead of waiting in qsf_wait,
 * whose timeout counts time without progress. */
#include "itest.h"

#include "sender/internal.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define STALL_MS 2000
#define ROWS     10
#define PACE_MS  250 /* (ROWS - 1) * PACE_MS > STALL_MS > PACE_MS */
#define FLUSHES  100

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A memory-mode sender on a fresh sink. */
static qsf_sender *sender_on(qsink **sink) {
    char conf[512];
    *sink = it_sink(NULL);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(*sink), NULL));
}

/* One row per flush, PACE_MS apart: a producer slower in total than the
 * wait's timeout, never stalled as long. */
static void *paced_rows(void *arg) {
    qsf_sender *s = arg;
    for (int i = 0; i < ROWS; i++) {
        if (i > 0)
            it_sleep_ms(PACE_MS);
        it_publish(s, "t", i, i + 1, 1);
    }
    return NULL;
}

static void a_sink_wait_outlives_its_timeout_while_rows_arrive(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = sender_on(&sink);
    int64_t t0 = now_ms();
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, paced_rows, s), 0);
    int rc = qsink_wait_rows(sink, "t", ROWS, STALL_MS);
    int64_t took = now_ms() - t0;
    pthread_join(t, NULL);
    print_message("# %d rows %d ms apart: the wait took %lld ms\n", ROWS, PACE_MS,
                  (long long) took);
    if (rc != 0)
        fail_msg("qsink_wait_rows gave up after %lld ms with %lld of %d rows, still arriving",
                 (long long) took, (long long) qsink_rows(sink, "t"), ROWS);
    assert_true(took > STALL_MS); /* it did outlive its timeout */
    it_close_and_check(s, sink, "t", ROWS, false);
}

static void a_sink_wait_ends_after_a_stall(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = sender_on(&sink);
    it_wait_acked(s, it_publish(s, "t", 0, 1, 1));
    int64_t t0 = now_ms();
    assert_int_equal(qsink_wait_rows(sink, "t", 2, 200), -1); /* row 1 never comes */
    assert_true(now_ms() - t0 >= 200);
    it_close_and_check(s, sink, "t", 1, false);
}

/* The I/O loop spins after a turn with work only while a thread is inside
 * qsf_wait (lib/io/io.c wants_spin): it_wait_acked is one, it_poll_acked is
 * not. */
static void it_wait_acked_waits_in_qsf_wait(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = sender_on(&sink);
    it_wait_acked(s, it_publish(s, "t", 0, 1, 1));
    uint64_t s0 = qsf_io_spins(s->io);
    for (int i = 1; i <= FLUSHES; i++)
        it_wait_acked(s, it_publish(s, "t", i, i + 1, 1));
    uint64_t waited = qsf_io_spins(s->io) - s0;
    for (int i = FLUSHES + 1; i <= 2 * FLUSHES; i++)
        it_poll_acked(s, it_publish(s, "t", i, i + 1, 1));
    uint64_t polled = qsf_io_spins(s->io) - s0 - waited;
    print_message("# %d flushes: %llu spins waited for, %llu polled for\n", FLUSHES,
                  (unsigned long long) waited, (unsigned long long) polled);
    assert_true(waited > 0);
    assert_int_equal(polled, 0);
    it_close_and_check(s, sink, "t", 2 * FLUSHES + 1, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_sink_wait_outlives_its_timeout_while_rows_arrive),
        cmocka_unit_test(a_sink_wait_ends_after_a_stall),
        cmocka_unit_test(it_wait_acked_waits_in_qsf_wait),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
