/* Connection events of the I/O thread (lib/io/notify.c): the exact sequence
 * a connection's life produces, with what each event carries, driven for
 * real against the fake WebSocket layer of tests/support/fake_ws.h (no
 * socket): the first connection, a loss and the reconnect that replays what
 * was unacknowledged, a failover, an orderly close by the server, a rejected
 * frame, a pause, the stop, and an inbox too small for them. */
#include "testutil.h"

#include "fake_ws.h"

#include "bytes.h"
#include "events.h"
#include "inbox.h"
#include "io/io.h"
#include "latch.h"
#include "sf/ring.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PORT_A 19011 /* nothing listens: the fake never opens a socket */
#define PORT_B 19012

static struct {
    fake_ws *f;
    qsf_ring *ring;
    qsf_inbox *inbox, *events;
    qsf_latch latch;
    qsf_io *io;
    qsf_io_addr addrs[2];
    qsf_io_opts o;
} H;

static int setup(void **state) {
    (void) state;
    memset(&H, 0, sizeof H);
    H.f = fws_new(); /* first: it installs the clock the ring's manager reads */
    qsf_latch_init(&H.latch);
    qsf_ring_opts ro = {.segment_bytes = 64 * 1024,
                        .total_bytes = 1 << 20,
                        .durability = QSF_DUR_MEMORY,
                        .append_deadline_ms = 1000,
                        .latch = &H.latch};
    qsf_errinfo e;
    if (qsf_ring_open(&ro, &H.ring, NULL, &e) != QSF_OK)
        fail_msg("qsf_ring_open: %s", e.msg);
    H.inbox = qsf_inbox_new(64);
    H.events = qsf_events_new(64);
    assert_non_null(H.inbox);
    assert_non_null(H.events);
    H.addrs[0] = (qsf_io_addr){"127.0.0.1", PORT_A};
    H.addrs[1] = (qsf_io_addr){"127.0.0.1", PORT_B};
    H.o = (qsf_io_opts){
        .addrs = H.addrs,
        .n_addrs = 1,
        .client_id = "test",
        .connect_timeout_ms = 20000,
        .auth_timeout_ms = 10000,
        .backoff_initial_ms = 5,
        .backoff_max_ms = 20,
        .reconnect_max_duration_ms = 1000,
        .max_frame_rejections = 100,
        .initial_mode = QSF_IO_INIT_ASYNC,
        .recovered_published_fsn = -1,
        .self_sufficient = true, /* the test frames are not QWP: no catch-up */
        .ws_ops = &fws_ops,
        .events = H.events,
    };
    return 0;
}

static int teardown(void **state) {
    (void) state;
    fws_clock_advance_ms(60000);
    qsf_io_free(H.io);
    qsf_ring_close(H.ring, NULL);
    qsf_inbox_free(H.inbox);
    qsf_inbox_free(H.events);
    qsf_latch_destroy(&H.latch);
    fws_free(H.f);
    return 0;
}

static void start(void) {
    qsf_ws_hs hs = fws_hs(1, false, 2097138);
    fws_set_auto_open(H.f, &hs);
    qsf_errinfo e;
    int rc = qsf_io_start(&H.o, H.ring, H.inbox, &H.latch, &H.io, &e);
    if (rc != QSF_OK)
        fail_msg("qsf_io_start: %d %s", rc, e.msg);
}

/* Waits until connection n is open and announced (the transition is logged
 * before it is announced: the sync waits for the thread to move on). */
static void opened_nth(int n) {
    FWS_WAIT(H.f, fws_connects(H.f) == n && fws_state_is(H.f, "OPEN"));
    fws_sync(H.f);
}

static void start_open(void) {
    start();
    opened_nth(1);
}

static void stop(void) {
    qsf_io_stop(H.io);
}

/* Appends n frames and wakes the I/O thread. */
static void publish(int n) {
    for (int i = 0; i < n; i++) {
        uint8_t buf[16] = {0};
        qsf_put_i64(buf, qsf_ring_published_fsn(H.ring) + 1);
        qsf_errinfo e;
        if (qsf_ring_append(H.ring, buf, sizeof buf, NULL, &e) != QSF_OK)
            fail_msg("append: %s", e.msg);
    }
    qsf_io_wake(H.io);
}

/* ---- the events ---- */

static qsf_event next_event(void) {
    qsf_event ev;
    ev.struct_size = sizeof ev;
    if (qsf_events_poll(H.events, &ev) != 1)
        fail_msg("no event queued");
    return ev;
}

/* The next event is of `kind` (its name in the failure otherwise). */
static qsf_event expect(int kind) {
    qsf_event ev = next_event();
    if (ev.kind != kind)
        fail_msg("event %s (%s), want %s", qsf_event_name(ev.kind), ev.cause, qsf_event_name(kind));
    assert_int_equal(ev.struct_size, sizeof ev);
    assert_true(ev.timestamp_us > 0);
    return ev;
}

static void expect_none(void) {
    qsf_event ev;
    ev.struct_size = sizeof ev;
    if (qsf_events_poll(H.events, &ev) == 1)
        fail_msg("unexpected event %s (%s)", qsf_event_name(ev.kind), ev.cause);
}

static void expect_connected(int kind, int port, uint64_t attempts) {
    qsf_event ev = expect(kind);
    char want[32];
    snprintf(want, sizeof want, "127.0.0.1:%d", port);
    assert_string_equal(ev.endpoint, want);
    assert_int_equal(ev.qwp_version, 1);
    assert_int_equal(ev.max_batch_bytes, 2097138);
    assert_int_equal(ev.durable_ack, 0);
    assert_int_equal(ev.attempts, attempts);
}

static qsf_event expect_disconnected(int code, const char *cause) {
    qsf_event ev = expect(QSF_EVENT_DISCONNECTED);
    assert_int_equal(ev.code, code);
    if (!strstr(ev.cause, cause))
        fail_msg("cause \"%s\" does not say \"%s\"", ev.cause, cause);
    return ev;
}

/* The connection `conn` has sent n frames. */
static void sent_on(int conn, int n) {
    FWS_WAIT(H.f, fws_frames_on(H.f, conn) == n);
}

/* ---- tests ---- */

/* Five frames, one OK for the first two, a loss: the reconnect sends the
 * other three again, and says so once they are out. */
static void a_loss_and_the_reconnect_that_replays(void **state) {
    (void) state;
    start_open();
    publish(5);
    sent_on(1, 5);
    fws_wait_done(H.f, fws_ok(H.f, 1));
    assert_int_equal(qsf_ring_acked_fsn(H.ring), 1);
    fws_peer_close(H.f, 1006, "");
    sent_on(2, 3);
    fws_sync(H.f);
    expect_connected(QSF_EVENT_CONNECTED, PORT_A, 1);
    qsf_event d = expect_disconnected(QSF_E_CONNECT, "lost (code 1006");
    assert_string_equal(d.endpoint, "127.0.0.1:19011");
    assert_int_equal(d.acked_fsn, 1);
    assert_int_equal(d.published_fsn, 4);
    expect_connected(QSF_EVENT_RECONNECTED, PORT_A, 1);
    qsf_event r = expect(QSF_EVENT_REPLAY_DONE);
    assert_int_equal(r.frames, 3);
    assert_int_equal(r.from_fsn, 2);
    assert_int_equal(r.to_fsn, 4);
    assert_string_equal(r.endpoint, "127.0.0.1:19011");
    expect_none();
    /* the error record of the loss is the one line of the disconnection */
    qsf_error_record rec;
    assert_int_equal(qsf_inbox_poll(H.inbox, &rec), 1);
    assert_string_equal(rec.message, d.cause);
    stop();
    expect_disconnected(0, "the sender is closing");
    expect_none();
}

/* Frames published while no connection is open go out for the first time
 * after the reconnect: the replay covers them (REPLAY_DONE counts the whole
 * backlog), but frames_replayed counts only what was sent before, the frames
 * that may reach the server twice. */
static void frames_published_in_an_outage_are_not_resends(void **state) {
    (void) state;
    start_open();
    publish(3);
    sent_on(1, 3);
    fws_wait_done(H.f, fws_ok(H.f, 0));
    fws_set_auto_open(H.f, NULL);
    fws_set_auto_fail(H.f, 503, "unavailable");
    fws_peer_close(H.f, 1006, "");
    FWS_WAIT(H.f, fws_connects(H.f) >= 2);
    publish(2); /* fsn 3, 4: never sent */
    qsf_ws_hs hs = fws_hs(1, false, 2097138);
    fws_set_auto_open(H.f, &hs);
    fws_set_auto_fail(H.f, 0, NULL);
    fws_clock_advance_ms(1000); /* the backoff */
    FWS_WAIT(H.f, fws_state_is(H.f, "OPEN"));
    int conn = fws_connects(H.f);
    sent_on(conn, 4);
    fws_sync(H.f);
    qsf_stats st;
    memset(&st, 0, sizeof st);
    qsf_io_stats(H.io, &st);
    assert_int_equal(st.frames_sent, 7);
    assert_int_equal(st.frames_replayed, 2); /* fsn 1, 2 */
    expect(QSF_EVENT_CONNECTED);
    expect(QSF_EVENT_DISCONNECTED);
    expect(QSF_EVENT_RECONNECTED);
    qsf_event r = expect(QSF_EVENT_REPLAY_DONE);
    assert_int_equal(r.frames, 4);
    assert_int_equal(r.from_fsn, 1);
    assert_int_equal(r.to_fsn, 4);
    stop();
}

/* Nothing unacknowledged when the connection comes back: no REPLAY_DONE. */
static void a_reconnect_with_nothing_to_replay(void **state) {
    (void) state;
    start_open();
    publish(2);
    sent_on(1, 2);
    fws_wait_done(H.f, fws_ok(H.f, 1));
    fws_peer_close(H.f, 1000, "bye");
    opened_nth(2);
    expect_connected(QSF_EVENT_CONNECTED, PORT_A, 1);
    /* closed in order: no error record, code 0 */
    expect_disconnected(0, "closed by the server (code 1000: bye)");
    expect_connected(QSF_EVENT_RECONNECTED, PORT_A, 1);
    expect_none();
    qsf_error_record rec;
    assert_int_equal(qsf_inbox_poll(H.inbox, &rec), 0);
}

/* A host lost mid-stream is demoted: the next connection goes to the other
 * one, and says where it came from. */
static void a_failover_names_both_endpoints(void **state) {
    (void) state;
    H.o.n_addrs = 2;
    start_open();
    fws_peer_close(H.f, 1006, "");
    opened_nth(2);
    assert_int_equal(fws_connect_port(H.f, 2), PORT_B);
    expect_connected(QSF_EVENT_CONNECTED, PORT_A, 1);
    expect_disconnected(QSF_E_CONNECT, "lost");
    qsf_event ev = expect(QSF_EVENT_FAILED_OVER);
    assert_string_equal(ev.endpoint, "127.0.0.1:19012");
    assert_string_equal(ev.previous_endpoint, "127.0.0.1:19011");
    assert_int_equal(ev.attempts, 1);
    expect_none();
}

/* A rejected frame ends the connection: its record is the cause. */
static void a_rejected_frame_is_the_cause(void **state) {
    (void) state;
    start_open();
    publish(1);
    sent_on(1, 1);
    fws_error(H.f, 0x09, 0, "disk_full");
    opened_nth(2);
    sent_on(2, 1);
    fws_sync(H.f);
    expect_connected(QSF_EVENT_CONNECTED, PORT_A, 1);
    qsf_event d = expect_disconnected(QSF_E_SERVER, "WRITE_ERROR");
    assert_non_null(strstr(d.cause, "disk_full"));
    expect_connected(QSF_EVENT_RECONNECTED, PORT_A, 1);
    qsf_event r = expect(QSF_EVENT_REPLAY_DONE);
    assert_int_equal(r.frames, 1);
    expect_none();
}

/* Pause: the connection ends in order, then the wire is idle; resume
 * reconnects. */
static void pause_and_resume(void **state) {
    (void) state;
    start_open();
    qsf_io_pause(H.io, true);
    FWS_WAIT(H.f, fws_state_is(H.f, "PAUSED"));
    qsf_io_pause(H.io, false);
    opened_nth(2);
    expect_connected(QSF_EVENT_CONNECTED, PORT_A, 1);
    expect_disconnected(0, "qsf_pause");
    expect(QSF_EVENT_PAUSED);
    expect(QSF_EVENT_RESUMED);
    expect_connected(QSF_EVENT_RECONNECTED, PORT_A, 1);
    expect_none();
}

/* Frames wait and none is confirmed: NO_PROGRESS after liveness_timeout_ms
 * (15 s when disabled, as here), then twice as long again; a paused wire says
 * nothing of it, however long it stays paused. */
static void no_progress_while_connected_but_not_while_paused(void **state) {
    (void) state;
    start_open();
    publish(2);
    sent_on(1, 2);
    fws_clock_advance_ms(15000);
    fws_sync(H.f);
    expect_connected(QSF_EVENT_CONNECTED, PORT_A, 1);
    qsf_event ev = expect(QSF_EVENT_NO_PROGRESS);
    assert_int_equal(ev.from_fsn, 0);
    assert_int_equal(ev.to_fsn, 1);
    assert_true(ev.duration_ms >= 15000);
    fws_clock_advance_ms(15000); /* the next one is 30 s later */
    fws_sync(H.f);
    expect_none();
    qsf_io_pause(H.io, true);
    FWS_WAIT(H.f, fws_state_is(H.f, "PAUSED"));
    fws_clock_advance_ms(60000);
    fws_sync(H.f);
    expect_disconnected(0, "qsf_pause");
    expect(QSF_EVENT_PAUSED);
    expect_none();
}

/* Attempts that fail count into the next CONNECTED; a stop while no
 * connection is open disconnects nothing. */
static void failed_attempts_are_counted(void **state) {
    (void) state;
    H.o.n_addrs = 2;
    fws_set_auto_fail(H.f, 503, "unavailable");
    qsf_errinfo e;
    assert_int_equal(qsf_io_start(&H.o, H.ring, H.inbox, &H.latch, &H.io, &e), QSF_OK);
    FWS_WAIT(H.f, fws_connects(H.f) >= 3);
    qsf_ws_hs hs = fws_hs(1, true, 0);
    fws_set_auto_open(H.f, &hs); /* goes first: every later connect() opens */
    fws_set_auto_fail(H.f, 0, NULL);
    fws_clock_advance_ms(1000); /* the round's backoff */
    FWS_WAIT(H.f, fws_state_is(H.f, "OPEN"));
    fws_sync(H.f); /* the transition is logged before it is announced */
    int connects = fws_connects(H.f);
    qsf_event ev = expect(QSF_EVENT_CONNECTED);
    assert_int_equal(ev.attempts, connects);
    assert_int_equal(ev.durable_ack, 1);
    assert_int_equal(ev.max_batch_bytes, 0);
    expect_none();
    stop();
    expect_disconnected(0, "closing");
}

/* An inbox of one: the newest event stays, the others are counted as dropped. */
static void a_tiny_inbox_counts_what_it_drops(void **state) {
    (void) state;
    qsf_inbox_free(H.events);
    H.events = H.o.events = qsf_events_new(1);
    start_open();
    fws_peer_close(H.f, 1006, "");
    opened_nth(2);
    expect(QSF_EVENT_RECONNECTED); /* CONNECTED and DISCONNECTED made room for it */
    expect_none();
    assert_int_equal(qsf_inbox_dropped(H.events), 2);
}

/* A caller that knows a shorter qsf_event gets what it knows, nothing more;
 * one that knows a longer one learns how much qsf filled. */
static void callers_get_the_fields_both_know(void **state) {
    (void) state;
    start_open();
    struct {
        qsf_event ev;
        char guard[8];
    } small, big;
    memset(&small, 0x5a, sizeof small);
    small.ev.struct_size = offsetof(qsf_event, previous_endpoint);
    assert_int_equal(qsf_events_poll(H.events, &small.ev), 1);
    assert_int_equal(small.ev.struct_size, offsetof(qsf_event, previous_endpoint));
    assert_int_equal(small.ev.kind, QSF_EVENT_CONNECTED);
    assert_string_equal(small.ev.endpoint, "127.0.0.1:19011");
    assert_int_equal((unsigned char) small.ev.previous_endpoint[0], 0x5a); /* not written */
    qsf_event tiny;
    tiny.struct_size = sizeof(size_t);
    assert_int_equal(qsf_events_poll(H.events, &tiny), QSF_E_INVAL);
    qsf_io_pause(H.io, true); /* DISCONNECTED, PAUSED */
    memset(&big, 0x5a, sizeof big);
    big.ev.struct_size = sizeof big; /* a qsf.h newer than the library */
    assert_int_equal(qsf_events_poll(H.events, &big.ev), 1);
    assert_int_equal(big.ev.struct_size, sizeof(qsf_event));
    assert_int_equal(big.ev.kind, QSF_EVENT_DISCONNECTED);
    assert_int_equal((unsigned char) big.guard[0], 0x5a); /* not written */
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(a_loss_and_the_reconnect_that_replays),
        T(frames_published_in_an_outage_are_not_resends),
        T(a_reconnect_with_nothing_to_replay),
        T(a_failover_names_both_endpoints),
        T(a_rejected_frame_is_the_cause),
        T(pause_and_resume),
        T(failed_attempts_are_counted),
        T(a_tiny_inbox_counts_what_it_drops),
        T(callers_get_the_fields_both_know),
        T(no_progress_while_connected_but_not_while_paused),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
