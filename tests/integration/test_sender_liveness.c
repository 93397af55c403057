/* A dead, silent or failing server is noticed, survived and reported
 * (docs/ERRORS.md, "Connections"): a server that stops answering or stops
 * acknowledging is found dead within its deadline and replaced, and every row
 * arrives afterwards; a healthy slow or idle server is left alone; every way
 * a connection can fail backs off instead of storming; each failure reaches
 * the application once as an error record and a WARN line, not once per
 * attempt; close keeps its timeout whatever the peer does. */
#include "itest.h"

#include "log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"
/* Deadlines short enough for a test; a margin for a loaded machine. */
#define LIVE      "ping_interval_millis=200;liveness_timeout_millis=1000;"
#define MARGIN_MS 3000
/* a silent server whose host acknowledges is waited for this long in all */
#define FROZEN "frozen_server_timeout_millis=2000;"

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void stats(qsf_sender *s, qsf_stats *st) {
    qsf_stats_get(s, st);
}

/* Waits (bounded) until the sender counted a liveness timeout; returns the
 * time it took. */
static int64_t wait_dead(qsf_sender *s, int64_t bound_ms) {
    int64_t t0 = now_ms();
    qsf_stats st;
    for (;;) {
        stats(s, &st);
        if (st.liveness_timeouts > 0)
            return now_ms() - t0;
        if (now_ms() - t0 > bound_ms)
            fail_msg("no liveness timeout within %lld ms", (long long) bound_ms);
        it_sleep_ms(10);
    }
}

static int records(qsf_sender *s, int category, const char *needle, qsf_error_record *first) {
    return it_records(s, category, needle, first);
}

/* Waits (bounded) until a record of category containing `needle` was queued,
 * copying the first to *first. The I/O thread moves the counters before it
 * queues the record (and writes its line in between), so a counter seen
 * does not mean the record is there yet. */
static void wait_record(qsf_sender *s, int category, const char *needle, qsf_error_record *first) {
    for (int64_t t0 = now_ms(); records(s, category, needle, first) == 0; it_sleep_ms(10))
        if (now_ms() - t0 > 10000)
            fail_msg("no error record \"%s\" within 10 s", needle);
}

static void expect_endpoint(const qsf_error_record *r, qsink *sink) {
    char ep[64];
    snprintf(ep, sizeof ep, "127.0.0.1:%u", qsink_port(sink));
    assert_string_equal(r->endpoint, ep);
}

static qsf_sender *sf_sender(qsink *sink, const char *extra) {
    char conf[2048], ex[1536];
    snprintf(ex, sizeof ex, "sf_dir=%s;sender_id=live;%s", it_dir, extra);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ex));
}

/* ---- dead servers ---- */

/* A stalled server's host still acknowledges (its kernel takes the bytes, then
 * answers the window probes): waited for as a frozen server, up to
 * frozen_server_timeout_millis, then replaced. */
static void a_server_that_stops_answering_is_found_dead_and_replaced(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sf_sender(sink, FAST LIVE FROZEN "ack_timeout_millis=0;");
    it_wait_acked(s, it_publish(s, "t", 0, 300, 100));
    it_fault(sink, "stall conn=1 after=4"); /* from frame 4 on: reads nothing, answers nothing */
    int64_t fsn = it_publish(s, "t", 300, 1000, 100);
    int64_t took = wait_dead(s, 2000 + MARGIN_MS);
    print_message("# found dead after %lld ms (frozen_server_timeout_millis=2000)\n",
                  (long long) took);
    it_wait_acked(s, fsn); /* the next connection replays what the dead one held */
    qsf_error_record r;
    wait_record(s, QSF_CAT_CONNECTION, "is dead: nothing received", &r);
    assert_int_equal(r.policy, QSF_POLICY_RETRIABLE);
    expect_endpoint(&r, sink);
    qsf_stats st;
    stats(s, &st);
    assert_true(st.connections_lost >= 1);
    it_close_and_check(s, sink, "t", 1000, true);
}

static void a_server_stalled_in_the_middle_of_a_frame_is_found_dead(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sf_sender(sink, FAST LIVE FROZEN "ack_timeout_millis=0;");
    it_wait_acked(s, it_publish(s, "t", 0, 300, 100));
    it_fault(sink, "half-frame conn=1 after=4"); /* a response cut short, then silence */
    int64_t fsn = it_publish(s, "t", 300, 1000, 100);
    wait_dead(s, 2000 + MARGIN_MS); /* the PONGs stay behind the half frame */
    it_wait_acked(s, fsn);
    qsf_error_record r;
    wait_record(s, QSF_CAT_CONNECTION, "is dead: nothing received", &r);
    expect_endpoint(&r, sink);
    it_close_and_check(s, sink, "t", 1000, true);
}

static void a_server_that_stops_acknowledging_is_replaced(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1"); /* PONGs still come back */
    qsf_sender *s = sf_sender(sink, FAST LIVE "ack_timeout_millis=1500;");
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    wait_dead(s, 1500 + MARGIN_MS);
    it_wait_acked(s, fsn);
    qsf_error_record r;
    wait_record(s, QSF_CAT_CONNECTION, "frames unacknowledged", &r);
    expect_endpoint(&r, sink);
    it_close_and_check(s, sink, "t", 1000, true);
}

/* ---- healthy servers are left alone ---- */

static void an_idle_connection_stays_up_on_pings(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sf_sender(sink, "ping_interval_millis=100;liveness_timeout_millis=400;");
    int64_t fsn = it_publish(s, "t", 0, 10, 10);
    it_wait_acked(s, fsn);
    it_sleep_ms(1500); /* idle for many liveness timeouts: each PING is answered */
    qsf_stats st;
    stats(s, &st);
    assert_int_equal(st.liveness_timeouts, 0);
    assert_int_equal(st.connections_lost, 0);
    assert_int_equal(st.reconnect_attempts, 0);
    it_close_and_check(s, sink, "t", 10, false);
}

static void a_slow_server_is_not_mistaken_for_a_dead_one(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "delay-ok=700"); /* slower than the liveness timeout; a PING flushes it */
    qsf_sender *s = sf_sender(sink, "ping_interval_millis=100;liveness_timeout_millis=400;"
                                    "ack_timeout_millis=5000;");
    int64_t fsn = it_publish(s, "t", 0, 2000, 100);
    it_wait_acked(s, fsn);
    qsf_stats st;
    stats(s, &st);
    assert_int_equal(st.liveness_timeouts, 0);
    assert_int_equal(st.reconnect_attempts, 0);
    it_close_and_check(s, sink, "t", 2000, false); /* no reconnect: exactly once */
}

/* ---- no storms ---- */

static void wait_disconnected(qsf_sender *s) {
    qsf_stats st;
    for (int64_t t0 = now_ms();; it_sleep_ms(2)) {
        stats(s, &st);
        if (!st.connected)
            return;
        if (now_ms() - t0 > 10000)
            fail_msg("the sender did not notice the restart");
    }
}

/* Reconnect attempts made within `ms` after the first one. */
static uint64_t attempts_within(qsf_sender *s, int ms) {
    qsf_stats st;
    int64_t t0 = now_ms();
    for (;;) {
        stats(s, &st);
        if (st.reconnect_attempts > 0)
            break;
        if (now_ms() - t0 > 10000)
            fail_msg("no reconnect attempt");
        it_sleep_ms(5);
    }
    uint64_t first = st.reconnect_attempts;
    it_sleep_ms(ms);
    stats(s, &st);
    return st.reconnect_attempts - first + 1;
}

static void a_server_that_drops_every_connection_meets_the_backoff(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sf_sender(sink, ""); /* default backoff: 100 ms doubling to 5 s */
    int64_t fsn = it_publish(s, "t", 0, 100, 100);
    it_wait_acked(s, fsn);
    it_fault(sink, "close=1011:bye conn=2+"); /* right after every later upgrade */
    qsink_restart(sink);
    wait_disconnected(s);
    it_publish(s, "t", 100, 200, 100);
    uint64_t n = attempts_within(s, 3000);
    print_message("# %llu reconnect attempts in 3 s\n", (unsigned long long) n);
    assert_true(n <= 12); /* 0, ~0.15, ~0.3, ~0.6, ~1.2, ~2.4 s: never a storm */
    qsf_error_record r;
    /* one outage, one record: the restart's loss; the closes after it repeat it */
    wait_record(s, QSF_CAT_CONNECTION, "lost (code 1006", &r);
    qsink_fault_clear(sink);
    it_close_and_check(s, sink, "t", 200, true);
}

static void rejected_catch_up_frames_back_off_and_escalate(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s =
        sf_sender(sink, "max_frame_rejections=4;poison_min_escalation_window_millis=2000;");
    int64_t fsn = it_publish(s, "t", 0, 100, 100); /* the sym column fills the dictionary */
    it_wait_acked(s, fsn);
    /* every later connection starts with its catch-up frame, and it is refused */
    it_fault(sink, "status=0x06:nope conn=2+ seq=0");
    qsink_restart(sink);
    wait_disconnected(s); /* the restart is asynchronous: the rows below must meet it */
    int64_t last = it_publish(s, "t", 100, 200, 100);
    uint64_t n = attempts_within(s, 1500);
    print_message("# %llu reconnect attempts in 1.5 s\n", (unsigned long long) n);
    assert_true(n <= 8);
    /* the same head-of-line frame held up again and again: poisoned, terminal */
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, last, QSF_WAIT_OK, 20000, &e), QSF_E_PROTOCOL);
    qsf_error_record r;
    assert_true(records(s, QSF_CAT_PROTOCOL_VIOLATION, "poisoned", &r) == 1);
    assert_int_equal(r.from_fsn, fsn + 1);
    qsf_close(s, &e);
    qsink_stop(sink);
}

/* ---- reported once, not once per attempt ---- */

static int warns;
static void count_warns(int level, const char *line, void *user) {
    (void) user;
    if (level == QSF_LOG_WARN && strstr(line, "every endpoint failed"))
        __atomic_fetch_add(&warns, 1, __ATOMIC_RELAXED);
}

/* Binds 127.0.0.1:port without listening: a connection there is refused as
 * when nothing is bound, and no other test's server, started meanwhile by a
 * parallel test program, can take the port. */
static int hold_port(uint16_t port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *) &a, sizeof a) != 0)
        fail_msg("cannot hold port %u: %s", port, strerror(errno));
    return fd;
}

static void an_unreachable_server_is_reported_once_per_outage(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    uint16_t port = qsink_port(sink);
    qsink_stop(sink); /* nothing listens there any more */
    int hold = hold_port(port);
    warns = 0;
    qsf_log_set(count_warns, NULL, QSF_LOG_WARN);
    char conf[512];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, port,
                          "initial_connect_retry=async;" FAST "close_flush_timeout_millis=0;"));
    it_sleep_ms(1500); /* many rounds at a 100 ms cap */
    qsf_stats st;
    stats(s, &st);
    assert_true(st.reconnect_attempts >= 2); /* every attempt after the first counts */
    assert_int_equal(st.reconnects_succeeded, 0);
    assert_int_equal(records(s, QSF_CAT_CONNECTION, "every endpoint failed", NULL), 1);
    assert_int_equal(__atomic_load_n(&warns, __ATOMIC_RELAXED), 1);
    qsf_errinfo e;
    qsf_close(s, &e);
    qsf_log_set(NULL, NULL, -1);
    close(hold);
}

/* ---- close keeps its timeout ---- */

static void close_keeps_its_timeout_with_a_silent_server(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "stall conn=1 after=1");
    /* liveness off: the connection stays "up" and close must bound itself */
    qsf_sender *s = sf_sender(sink, "ping_interval_millis=0;liveness_timeout_millis=0;"
                                    "ack_timeout_millis=0;close_flush_timeout_millis=1000;");
    it_publish(s, "t", 0, 100, 100);
    it_sleep_ms(300); /* the sink read that frame and stopped reading */
    it_publish(s, "t", 100, 1000, 100);
    qsf_errinfo e;
    int64_t t0 = now_ms();
    int rc = qsf_close(s, &e);
    int64_t took = now_ms() - t0;
    print_message("# close took %lld ms (close_flush_timeout_millis=1000)\n", (long long) took);
    assert_int_equal(rc, QSF_E_TIMEOUT); /* the tail stays in the slot */
    assert_true(took < 1000 + MARGIN_MS);
    qsink_stop(sink);
}

/* The millisecond keys take up to INT64_MAX, the Java clients' "forever": such
 * a deadline never passes (it used to wrap negative in nanoseconds and pass at
 * once, so the connection was found dead at its first tick). */
static void deadlines_of_int64_max_never_pass(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    qsf_sender *s = sf_sender(sink, "ping_interval_millis=9223372036854775807;"
                                    "liveness_timeout_millis=9223372036854775807;"
                                    "ack_timeout_millis=9223372036854775807;"
                                    "auth_timeout_ms=9223372036854775807;"
                                    "connect_timeout=9223372036854775807;"
                                    "durable_ack_keepalive_interval_millis=9223372036854775807;"
                                    "close_flush_timeout_millis=9223372036854775807;");
    for (int i = 0; i < 20; i++) {
        it_wait_acked(s, it_publish(s, "t", i * 10, i * 10 + 10, 10));
        it_sleep_ms(25); /* a tick or more with frames in flight or just acknowledged */
    }
    qsf_stats st;
    stats(s, &st);
    assert_int_equal(st.liveness_timeouts, 0);
    assert_int_equal(st.connections_lost, 0);
    assert_int_equal(st.reconnect_attempts, 0);
    it_close_and_check(s, sink, "t", 200, false);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_server_that_stops_answering_is_found_dead_and_replaced,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_server_stalled_in_the_middle_of_a_frame_is_found_dead,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_server_that_stops_acknowledging_is_replaced, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(an_idle_connection_stays_up_on_pings, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_slow_server_is_not_mistaken_for_a_dead_one, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(a_server_that_drops_every_connection_meets_the_backoff,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(rejected_catch_up_frames_back_off_and_escalate,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(an_unreachable_server_is_reported_once_per_outage,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(deadlines_of_int64_max_never_pass, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(close_keeps_its_timeout_with_a_silent_server, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
