/* qsf_wait from the outside: bounds at their extremes, and the I/O loop's
 * spin (lib/io/io.c wants_spin), which only a thread inside qsf_wait may ask
 * for, after waits that ended every way a wait ends; and a qsf_wait or a
 * qsf_pause under way when qsf_close starts.
 *
 * The spin is counted (qsf_io_spins), not timed: a waiter count left raised
 * by a wait that ended early would show as spins while nobody waits. */
#include "itest.h"

#include "sender/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define FLUSHES 50

/* A memory-mode sender on `sink`, connected, row 0 acknowledged. */
static qsf_sender *connected_sender(qsink *sink, const char *extra) {
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    it_wait_acked(s, it_publish(s, "t", 0, 1, 1));
    return s;
}

static int resume_rc = -1;

static void *resume_later(void *arg) {
    it_sleep_ms(200);
    resume_rc = qsf_resume(arg);
    return NULL;
}

/* INT64_MAX is "no bound": published while the wire is paused, the frame is
 * acknowledged once another thread resumes, and the wait returns then. Its
 * nanoseconds overflowed, and the wait timed out before it had waited. */
static void a_wait_of_int64_max_waits_for_the_ack(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = connected_sender(sink, NULL);
    assert_int_equal(qsf_pause(s), QSF_OK);
    int64_t fsn = it_publish(s, "t", 1, 2, 1);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, resume_later, s), 0);
    qsf_errinfo e;
    int rc = qsf_wait(s, fsn, QSF_WAIT_OK, INT64_MAX, &e);
    pthread_join(t, NULL);
    assert_int_equal(resume_rc, QSF_OK);
    if (rc != QSF_OK)
        fail_msg("qsf_wait(INT64_MAX) returned %s: %s", qsf_err_name(rc), e.msg);
    assert_true(qsf_acked_fsn(s) >= fsn);
    it_close_and_check(s, sink, "t", 2, false);
}

/* Streams FLUSHES flushes nobody waits for (it_poll_acked stays out of
 * qsf_wait): the loop must not spin for any of them. */
static void streaming_without_a_waiter_does_not_spin(qsf_sender *s, int64_t *next,
                                                     const char *after) {
    uint64_t s0 = qsf_io_spins(s->io);
    for (int i = 0; i < FLUSHES; i++, (*next)++)
        it_poll_acked(s, it_publish(s, "t", *next, *next + 1, 1));
    uint64_t spins = qsf_io_spins(s->io) - s0;
    if (spins != 0)
        fail_msg("after %s: %llu spins over %d flushes nobody waited for", after,
                 (unsigned long long) spins, FLUSHES);
}

/* One thread's wait for `fsn` (the OK level, 20 s without progress). */
typedef struct waiter {
    qsf_sender *s;
    int64_t fsn;
    int rc;
    pthread_t t;
} waiter;

static void *wait_main(void *arg) {
    waiter *w = arg;
    qsf_errinfo e;
    w->rc = qsf_wait(w->s, w->fsn, QSF_WAIT_OK, 20000, &e);
    return NULL;
}

/* Four threads wait for the same late OK at once; all get it. */
static void several_waiters(qsf_sender *s, int64_t fsn) {
    waiter w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (waiter){s, fsn, -1, 0};
        assert_int_equal(pthread_create(&w[i].t, NULL, wait_main, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(w[i].t, NULL);
        assert_int_equal(w[i].rc, QSF_OK);
    }
}

/* Waits that end by QSF_E_INVAL (beyond the published FSN, an unknown level,
 * DURABLE without durable acks), by a timeout (0 ms and 50 ms without
 * progress, the wire paused), after a connection reset, and several at once
 * each leave nobody counted as waiting. */
static void waits_that_end_any_way_leave_no_waiter_behind(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = connected_sender(sink, "reconnect_initial_backoff_millis=10;");
    int64_t next = 1;
    qsf_errinfo e;
    streaming_without_a_waiter_does_not_spin(s, &next, "nothing");

    assert_int_equal(qsf_wait(s, qsf_published_fsn(s) + 1, QSF_WAIT_OK, 1000, &e), QSF_E_INVAL);
    assert_int_equal(qsf_wait(s, 0, QSF_WAIT_DURABLE, 1000, &e), QSF_E_INVAL);
    assert_int_equal(qsf_wait(s, 0, 7, 1000, &e), QSF_E_INVAL);
    streaming_without_a_waiter_does_not_spin(s, &next, "waits refused with QSF_E_INVAL");

    assert_int_equal(qsf_pause(s), QSF_OK);
    int64_t fsn = it_publish(s, "t", next, next + 1, 1);
    next++;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 0, &e), QSF_E_TIMEOUT);
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 50, &e), QSF_E_TIMEOUT);
    assert_int_equal(qsf_resume(s), QSF_OK);
    it_wait_acked(s, fsn);
    streaming_without_a_waiter_does_not_spin(s, &next, "waits that timed out");

    /* the connection's OKs are withheld and it is reset: the wait spans the
     * reconnect and the replay */
    qsink_stats st;
    qsink_get_stats(sink, &st);
    char f[96];
    snprintf(f, sizeof f, "withhold-ok conn=%lld", (long long) st.accepted);
    it_fault(sink, f);
    snprintf(f, sizeof f, "rst conn=%lld after=%d", (long long) st.accepted, FLUSHES + 3);
    it_fault(sink, f);
    for (int i = 0; i < 3; i++, next++)
        fsn = it_publish(s, "t", next, next + 1, 1);
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 20000, &e), QSF_OK);
    streaming_without_a_waiter_does_not_spin(s, &next, "a wait across a reset");

    it_fault(sink, "delay-ok=200 times=1");
    fsn = it_publish(s, "t", next, next + 1, 1);
    next++;
    several_waiters(s, fsn);
    streaming_without_a_waiter_does_not_spin(s, &next, "four waiters at once");
    it_close_and_check(s, sink, "t", next, true);
}

/* A thread inside qsf_wait when qsf_close starts (the server withholds its
 * OKs): the wait returns QSF_E_CLOSED, and it has returned by the time
 * qsf_close does, which frees what it waits on. It used to wait out its bound
 * (20 s here) on the freed sender. */
static void a_wait_under_way_when_close_starts_returns_closed(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok");
    char conf[512];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "close_flush_timeout_millis=100;"));
    waiter w = {s, it_publish(s, "t", 0, 1, 1), -1, 0};
    assert_int_equal(pthread_create(&w.t, NULL, wait_main, &w), 0);
    it_sleep_ms(200); /* inside its wait: nothing acknowledges the frame */
    qsf_errinfo e;
    assert_int_not_equal(qsf_close(s, &e), QSF_OK); /* the frame is lost: memory mode */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    if (pthread_timedjoin_np(w.t, NULL, &ts) != 0)
        fail_msg("qsf_wait still waiting 5 s after qsf_close returned");
    assert_int_equal(w.rc, QSF_E_CLOSED);
    qsink_stop(sink);
}

typedef struct pauser {
    qsf_sender *s;
    int rc;
    atomic_bool returned;
    pthread_t t;
} pauser;

static void *pause_main(void *arg) {
    pauser *p = arg;
    p->rc = qsf_pause(p->s);
    atomic_store(&p->returned, true);
    return NULL;
}

/* A thread inside qsf_pause when qsf_close starts: the server stops reading
 * after the first frame, so the orderly close the pause waits for takes its
 * full 500 ms, and qsf_close comes 100 ms into it. The pause returns before
 * qsf_close does, which frees what it waits on. It used to return about 10 ms
 * after, from the freed I/O thread's mutex (AddressSanitizer:
 * heap-use-after-free in qsf_io_pause). */
static void a_pause_under_way_when_close_starts_returns(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall after=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), NULL));
    it_wait_acked(s, it_publish(s, "t", 0, 1, 1));
    pauser p = {.s = s, .rc = -1};
    assert_int_equal(pthread_create(&p.t, NULL, pause_main, &p), 0);
    it_sleep_ms(100); /* inside its wait: the close handshake has no answer */
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK); /* row 0 was acknowledged */
    bool returned = atomic_load(&p.returned);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    if (pthread_timedjoin_np(p.t, NULL, &ts) != 0)
        fail_msg("qsf_pause still waiting 5 s after qsf_close returned");
    if (!returned)
        fail_msg("qsf_pause returned after qsf_close, which had freed what it waits on");
    assert_int_equal(p.rc, QSF_OK);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_wait_of_int64_max_waits_for_the_ack),
        cmocka_unit_test(waits_that_end_any_way_leave_no_waiter_behind),
        cmocka_unit_test(a_wait_under_way_when_close_starts_returns_closed),
        cmocka_unit_test(a_pause_under_way_when_close_starts_returns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
