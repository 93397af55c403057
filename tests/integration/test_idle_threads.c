/* A sender's threads sleep while there is nothing to do.
 *
 * The I/O thread (lib/io/ws.c, qsf_ws_service): with libwebsockets 4.1 it used
 * to poll without a timeout through the last millisecond before each of its
 * timers, hundreds of loop turns per timer, so an idle sender burnt CPU and a
 * streaming one spent most of its I/O thread's time in poll().
 *
 * The ring manager (lib/sf/manager.c, next_wait): it ran a pass every 1 ms
 * whatever the ring did, 1.4-1.8 % of a core per idle sender; it now backs off
 * to 64 ms while nothing is published or acknowledged, and a flush wakes it.
 *
 * The I/O loop's spin after a turn with work (QSF_WS_SPIN_US) is for an
 * application waiting for its acknowledgement; a sender streaming with nobody
 * waiting spent about half its I/O thread's CPU on it, and now sleeps.
 *
 * Counted in loop turns and passes, not in time: the bounds hold on a loaded
 * machine, which can only make a busy loop turn less often. */
#include "itest.h"

#include "sender/internal.h"

#include <stdio.h>

/* The I/O loop's 20 ms tick (lib/io/io_int.h), and room for lws's own timers
 * and a wake or two per event on top. After a turn with work the loop polls
 * without sleeping for 50 us on purpose (QSF_WS_SPIN_US); what must not happen
 * is a wait that comes back with nothing to do (qsf_io_empty_waits). */
#define TICK_MS     20
#define IDLE_MS     1000
#define SLACK       40
#define FLUSHES     100
#define MGR_IDLE_MS 64 /* the manager's longest idle wait (lib/sf/manager.c) */

/* A memory-mode sender on a fresh sink, connected, row 0 acknowledged. */
static qsf_sender *connected_sender(qsink **sink) {
    char conf[512];
    *sink = it_sink(NULL);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(*sink), NULL));
    it_wait_acked(s, it_publish(s, "t", 0, 1, 1));
    return s;
}

static void idle_connected_sender_sleeps(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = connected_sender(&sink);
    uint64_t t0 = qsf_io_loop_turns(s->io), e0 = qsf_io_empty_waits(s->io);
    it_sleep_ms(IDLE_MS);
    uint64_t n = qsf_io_loop_turns(s->io) - t0, e = qsf_io_empty_waits(s->io) - e0;
    print_message("# idle %d ms: %llu loop turns, %llu empty waits\n", IDLE_MS,
                  (unsigned long long) n, (unsigned long long) e);
    assert_true(n <= IDLE_MS / TICK_MS * 2 + SLACK);
    assert_true(e <= SLACK);
    it_close_and_check(s, sink, "t", 1, false);
}

/* Each acknowledgement arms the watermark timer 1-2 ms ahead: the loop must
 * sleep until then, not poll again and again. */
static void streaming_sender_sleeps_between_acks(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = connected_sender(&sink);
    uint64_t e0 = qsf_io_empty_waits(s->io);
    for (int i = 1; i <= FLUSHES; i++) {
        it_wait_acked(s, it_publish(s, "t", i, i + 1, 1));
        it_sleep_ms(3); /* the timer armed by that ack is due meanwhile */
    }
    uint64_t e = qsf_io_empty_waits(s->io) - e0;
    print_message("# %d flushes: %llu empty waits\n", FLUSHES, (unsigned long long) e);
    assert_true(e <= (uint64_t) FLUSHES + SLACK);
    it_close_and_check(s, sink, "t", FLUSHES + 1, false);
}

/* Flushes with nobody in qsf_wait (it_poll_acked polls qsf_acked_fsn): the
 * loop never spins. The same flushes each waited for with qsf_wait: it does,
 * so that the acknowledgement is read without a scheduler wake-up. */
static void only_a_waiting_application_makes_the_loop_spin(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = connected_sender(&sink);
    uint64_t s0 = qsf_io_spins(s->io);
    it_poll_acked(s, it_publish(s, "t", 1, 1 + FLUSHES * 10, 10));
    uint64_t unwaited = qsf_io_spins(s->io) - s0;
    qsf_errinfo e;
    for (int i = 0; i < FLUSHES; i++) {
        int64_t fsn = it_publish(s, "t", 1 + FLUSHES * 10 + i, 2 + FLUSHES * 10 + i, 1);
        assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 10000, &e), QSF_OK);
    }
    uint64_t waited = qsf_io_spins(s->io) - s0 - unwaited;
    print_message("# %d flushes nobody waited for: %llu spins; %d waited for: %llu\n", FLUSHES,
                  (unsigned long long) unwaited, FLUSHES, (unsigned long long) waited);
    assert_int_equal(unwaited, 0);
    assert_true(waited > 0);
    it_close_and_check(s, sink, "t", 1 + FLUSHES * 11, false);
}

static void idle_manager_sleeps(const char *extra) {
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    it_wait_acked(s, it_publish(s, "t", 0, 1, 1));
    it_sleep_ms(200); /* the backoff reaches its longest wait */
    uint64_t p0 = qsf_ring_manager_passes(s->ring), sp0 = qsf_ring_spare_passes(s->ring);
    it_sleep_ms(IDLE_MS);
    uint64_t n = qsf_ring_manager_passes(s->ring) - p0;
    uint64_t sp = qsf_ring_spare_passes(s->ring) - sp0; /* SF mode only has the thread */
    print_message("# idle %d ms (%s): %llu manager passes, %llu spare thread passes\n", IDLE_MS,
                  extra ? extra : "memory", (unsigned long long) n, (unsigned long long) sp);
    assert_true(n <= IDLE_MS / MGR_IDLE_MS * 2 + SLACK);
    assert_true(sp <= IDLE_MS / MGR_IDLE_MS * 2 + SLACK);
    /* and it still trims and persists what a flush publishes afterwards */
    it_wait_acked(s, it_publish(s, "t", 1, 101, 10));
    it_close_and_check(s, sink, "t", 101, false);
}

static void idle_manager_sleeps_memory(void **state) {
    (void) state;
    idle_manager_sleeps(NULL);
}

static void idle_manager_sleeps_sf(void **state) {
    char extra[600];
    (void) state;
    snprintf(extra, sizeof extra, "sf_dir=%s;", it_dir);
    idle_manager_sleeps(extra);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(idle_connected_sender_sleeps),
        cmocka_unit_test(streaming_sender_sleeps_between_acks),
        cmocka_unit_test(only_a_waiting_application_makes_the_loop_spin),
        cmocka_unit_test(idle_manager_sleeps_memory),
        cmocka_unit_test_setup_teardown(idle_manager_sleeps_sf, it_setup_dir, it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
