/* What an application sees of a sender's life through qsf_set_log_handler
 * and the connection events, against an in-process qwp-sink: an outage (the
 * sink drops every connection while 20 frames wait for their OK) is a few
 * lines, none per frame, and the events CONNECTED, DISCONNECTED,
 * RECONNECTED, REPLAY_DONE in that order; a tiny inbox counts what it drops;
 * a slow server gives backpressure episodes, each a BEGIN/END pair and one
 * INFO line with figures that agree; and no handler runs after qsf_close
 * returns. */
#include "itest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROWS      2000
#define PER_FLUSH 100 /* 20 frames */

/* ---- what the handlers received (they run on qsf's threads) ---- */

typedef struct seen_line {
    int level;
    char text[600];
} seen_line;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static seen_line lines[512];
static int nlines;
static qsf_event events[256];
static int nevents;
static atomic_int inside; /* handlers running now */
static atomic_int calls;  /* handler calls so far */
static atomic_int slow_ms;

static void sleep_ms(int ms) {
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

static void enter(void) {
    atomic_fetch_add(&inside, 1);
    int ms = atomic_load(&slow_ms);
    if (ms)
        sleep_ms(ms);
}

static void leave(void) {
    atomic_fetch_add(&calls, 1);
    atomic_fetch_sub(&inside, 1);
}

static void on_log(void *user, int level, const char *line) {
    (void) user;
    if (getenv("QSF_TEST_LOG"))
        fprintf(stderr, "qsf %d %s\n", level, line);
    enter();
    pthread_mutex_lock(&mu);
    if (nlines < (int) (sizeof lines / sizeof lines[0])) {
        lines[nlines].level = level;
        snprintf(lines[nlines].text, sizeof lines[0].text, "%s", line);
        nlines++;
    }
    pthread_mutex_unlock(&mu);
    leave();
}

static void on_event(void *user, const qsf_event *ev) {
    (void) user;
    enter();
    assert_int_equal(ev->struct_size, sizeof(qsf_event));
    pthread_mutex_lock(&mu);
    if (nevents < (int) (sizeof events / sizeof events[0]))
        events[nevents++] = *ev;
    pthread_mutex_unlock(&mu);
    leave();
}

static void on_error(void *user, const qsf_error_record *r) {
    (void) user;
    (void) r;
    enter();
    leave();
}

static int reset(void **state) {
    (void) state;
    pthread_mutex_lock(&mu);
    nlines = nevents = 0;
    pthread_mutex_unlock(&mu);
    atomic_store(&slow_ms, 0);
    atomic_store(&calls, 0);
    assert_int_equal(qsf_set_log_handler(QSF_LOG_INFO, on_log, NULL), QSF_OK);
    return 0;
}

static int restore(void **state) {
    (void) state;
    qsf_set_log_handler(getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF, NULL, NULL);
    return 0;
}

static int events_seen(void) {
    pthread_mutex_lock(&mu);
    int n = nevents;
    pthread_mutex_unlock(&mu);
    return n;
}

/* Every line so far, for a failure message. */
static const char *all_lines(void) {
    static char buf[16384];
    size_t at = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nlines && at < sizeof buf; i++)
        at += (size_t) snprintf(buf + at, sizeof buf - at, "\n  %d %s", lines[i].level,
                                lines[i].text);
    pthread_mutex_unlock(&mu);
    return buf;
}

/* The first line at or after *from containing needle; its index, *from moved
 * past it. Fails when there is none. */
static int line_after(int *from, const char *needle) {
    pthread_mutex_lock(&mu);
    int i = *from;
    while (i < nlines && !strstr(lines[i].text, needle))
        i++;
    int n = nlines;
    pthread_mutex_unlock(&mu);
    if (i >= n)
        fail_msg("no line with \"%s\" after line %d:%s", needle, *from, all_lines());
    *from = i + 1;
    return i;
}

static int count_lines(const char *needle, int max_level) {
    int n = 0;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nlines; i++)
        n += lines[i].level <= max_level && (!needle || strstr(lines[i].text, needle));
    pthread_mutex_unlock(&mu);
    return n;
}

/* ---- the outage ---- */

/* Publishes 20 frames the sink receives and never acknowledges, then drops
 * every connection: the next connection (which the fault does not cover)
 * sends the 20 again and they are acknowledged. Returns the last FSN. */
static int64_t outage(qsink *sink, qsf_sender *s) {
    int64_t fsn = it_publish(s, "t", 0, ROWS, PER_FLUSH);
    assert_int_equal(fsn, ROWS / PER_FLUSH - 1);
    if (qsink_wait_frames(sink, fsn + 1, 20000) != 0)
        fail_msg("the sink did not receive %lld frames", (long long) fsn + 1);
    assert_int_equal(qsf_acked_fsn(s), -1);
    qsink_restart(sink);
    it_wait_acked(s, fsn);
    return fsn;
}

static qsf_sender *outage_sender(qsink **sink, const char *extra) {
    *sink = it_sink(NULL);
    it_fault(*sink, "withhold-ok conn=1");
    char conf[512];
    return it_sender(it_conf(conf, sizeof conf, qsink_port(*sink), extra));
}

static void an_outage_is_a_few_lines_and_none_per_frame(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = outage_sender(&sink, "");
    outage(sink, s);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.frames_replayed, ROWS / PER_FLUSH);
    for (int i = 0; i < 200 && count_lines("replay to", QSF_LOG_INFO) == 0; i++)
        sleep_ms(10);
    it_close_and_check(s, sink, "t", ROWS, true);
    int at = 0;
    line_after(&at, "connecting to 127.0.0.1:");
    int c = line_after(&at, "connected to 127.0.0.1:");
    assert_non_null(strstr(lines[c].text, "(QWP version 1, max batch 2097138 bytes, durable acks "
                                          "off; attempt 1)"));
    assert_int_equal(lines[c].level, QSF_LOG_INFO);
    int lost = line_after(&at, "lost (code");
    assert_int_equal(lines[lost].level, QSF_LOG_WARN); /* the CONNECTION record, once */
    int back = line_after(&at, "reconnected to 127.0.0.1:");
    assert_int_equal(lines[back].level, QSF_LOG_WARN); /* the level of its outage */
    assert_non_null(strstr(lines[back].text, "replaying FSN 0..19"));
    int replay = line_after(&at, "replay to 127.0.0.1:");
    assert_non_null(strstr(lines[replay].text, "done: 20 frames sent (FSN 0..19)"));
    line_after(&at, "disconnected from 127.0.0.1:");
    /* 40 frames went out: the lines are about state changes only */
    if (count_lines(NULL, QSF_LOG_DEBUG) > 10)
        fail_msg("%d lines for one outage:%s", count_lines(NULL, QSF_LOG_DEBUG), all_lines());
    assert_int_equal(count_lines("lost", QSF_LOG_DEBUG), 1);
}

static const char *kind(int i) {
    return qsf_event_name(events[i].kind);
}

static void events_arrive_in_order(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = outage_sender(&sink, "");
    assert_int_equal(qsf_set_event_handler(s, on_event, NULL), QSF_OK);
    outage(sink, s);
    for (int i = 0; i < 500 && events_seen() < 4; i++)
        sleep_ms(10);
    uint64_t delivered, dropped;
    qsf_event_counts(s, &delivered, &dropped);
    assert_int_equal(delivered, 4);
    assert_int_equal(dropped, 0);
    qsf_stats st;
    qsf_stats_get(s, &st);
    uint16_t port = qsink_port(sink);
    it_close_and_check(s, sink, "t", ROWS, true);
    assert_int_equal(nevents, 5); /* the close's DISCONNECTED was delivered before it returned */
    char ep[32];
    snprintf(ep, sizeof ep, "127.0.0.1:%u", port);
    assert_string_equal(kind(0), "CONNECTED");
    assert_string_equal(events[0].endpoint, ep);
    assert_int_equal(events[0].qwp_version, 1);
    assert_int_equal(events[0].max_batch_bytes, 2097138);
    assert_string_equal(kind(1), "DISCONNECTED");
    assert_int_equal(events[1].code, QSF_E_CONNECT);
    assert_non_null(strstr(events[1].cause, "lost"));
    assert_int_equal(events[1].acked_fsn, -1);
    assert_int_equal(events[1].published_fsn, 19);
    assert_string_equal(kind(2), "RECONNECTED");
    assert_string_equal(events[2].endpoint, ep);
    assert_true(events[2].attempts >= 1);
    assert_string_equal(kind(3), "REPLAY_DONE");
    assert_int_equal(events[3].frames, 20);
    assert_int_equal(events[3].frames, st.frames_replayed);
    assert_int_equal(events[3].from_fsn, 0);
    assert_int_equal(events[3].to_fsn, 19);
    assert_string_equal(kind(4), "DISCONNECTED");
    assert_int_equal(events[4].code, 0);
    assert_string_equal(events[4].cause, "the sender is closing");
    for (int i = 1; i < nevents; i++)
        assert_true(events[i].timestamp_us >= events[i - 1].timestamp_us);
}

static void a_tiny_inbox_drops_and_counts(void **state) {
    (void) state;
    qsink *sink;
    qsf_sender *s = outage_sender(&sink, "connection_listener_inbox_capacity=1;");
    outage(sink, s);
    qsf_event ev;
    ev.struct_size = sizeof ev;
    for (int i = 0; i < 500; i++) { /* the replay's end may follow the acks */
        uint64_t dropped;
        qsf_event_counts(s, NULL, &dropped);
        if (dropped == 3)
            break;
        sleep_ms(10);
    }
    assert_int_equal(qsf_poll_event(s, &ev), 1);
    assert_string_equal(qsf_event_name(ev.kind), "REPLAY_DONE");
    assert_int_equal(qsf_poll_event(s, &ev), 0);
    uint64_t delivered, dropped;
    qsf_event_counts(s, &delivered, &dropped);
    assert_int_equal(delivered, 0); /* polled, not handed to a handler */
    assert_int_equal(dropped, 3);   /* CONNECTED, DISCONNECTED, RECONNECTED */
    qsf_stats st = {.struct_size = sizeof st};
    qsf_stats_get(s, &st);
    assert_int_equal(st.events_dropped, 3); /* the stats and the metrics say the same */
    assert_int_equal(st.events_delivered, 0);
    char prom[16384];
    assert_true(qsf_metrics_prometheus(s, prom, sizeof prom) < sizeof prom);
    assert_non_null(strstr(prom, "qsf_events_dropped_total{sender_id=\""));
    it_close_and_check(s, sink, "t", ROWS, true);
}

/* ---- backpressure ---- */

#define BP_ROWS 500 /* of 1 KiB: the ring holds 128 KiB */

/* Rows k = 0..BP_ROWS-1 with 1 KiB of padding, 50 per flush: any producer
 * outruns a server that acknowledges 200 ms late. */
static int64_t publish_padded(qsf_sender *s) {
    static char pad[1024];
    memset(pad, 'p', sizeof pad);
    qsf_errinfo e;
    int64_t fsn = -1;
    for (int i = 0; i < BP_ROWS; i++) {
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, i, &e), QSF_OK);
        assert_int_equal(qsf_col_varchar(s, "pad", 3, pad, sizeof pad, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll + i, &e), QSF_OK);
        if (i % 50 == 49 && qsf_flush(s, &fsn, &e) != QSF_OK)
            fail_msg("qsf_flush: %s", e.msg);
    }
    return fsn;
}

static void a_slow_server_gives_backpressure_episodes(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "delay-ok=200");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "sf_max_segment_bytes=64k;sf_max_total_bytes=128k;"));
    assert_int_equal(qsf_set_event_handler(s, on_event, NULL), QSF_OK);
    int64_t fsn = publish_padded(s);
    it_wait_acked(s, fsn);
    qsf_stats st;
    qsf_stats_get(s, &st);
    it_close_and_check(s, sink, "t", BP_ROWS, false);
    assert_true(st.backpressure_stalls > 0);
    int begins = 0, ends = 0;
    for (int i = 0; i < nevents; i++) {
        const qsf_event *ev = &events[i];
        if (ev->kind == QSF_EVENT_BACKPRESSURE_BEGIN) {
            assert_int_equal(begins++, ends); /* never two begins in a row */
            assert_true(ev->cause[0] != 0);
        } else if (ev->kind == QSF_EVENT_BACKPRESSURE_END) {
            assert_int_equal(++ends, begins);
            assert_int_equal(ev->code, QSF_OK);
            assert_true(ev->duration_ms >= 0);
            assert_true(ev->acked_fsn <= ev->published_fsn);
            if (ev->frames)
                assert_int_equal(ev->frames, ev->to_fsn - ev->from_fsn + 1);
            assert_non_null(strstr(ev->cause, "waited for "));
        }
    }
    assert_int_equal(begins, st.backpressure_stalls);
    assert_int_equal(ends, begins);
    /* one line per episode, at INFO: a slow server is no failure */
    assert_int_equal(count_lines("backpressure:", QSF_LOG_INFO), ends);
    if (count_lines(NULL, QSF_LOG_WARN))
        fail_msg("a slow server logged warnings:%s", all_lines());
}

/* ---- close ---- */

/* Slow handlers of every kind, busy while the sender closes: when qsf_close
 * returns none is running, and none is called afterwards. */
static void no_handler_runs_after_close(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), ""));
    assert_int_equal(qsf_set_event_handler(s, on_event, NULL), QSF_OK);
    assert_int_equal(qsf_set_error_handler(s, on_error, NULL), QSF_OK);
    atomic_store(&slow_ms, 30);
    it_publish(s, "t", 0, 200, 100);
    qsink_restart(sink); /* a loss: an error record and events for the handlers */
    qsf_errinfo e;
    qsf_close(s, &e);
    assert_int_equal(atomic_load(&inside), 0);
    int n = atomic_load(&calls);
    assert_true(n > 0);
    sleep_ms(200);
    assert_int_equal(atomic_load(&calls), n);
    assert_int_equal(atomic_load(&inside), 0);
    qsink_stop(sink);
}

/* ---- a damaged slot ---- */

static void flip_byte(const char *path, off_t off) {
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    uint8_t b;
    assert_int_equal(pread(fd, &b, 1, off), 1);
    b ^= 0x5A;
    assert_int_equal(pwrite(fd, &b, 1, off), 1);
    close(fd);
}

/* A flipped byte in the middle of a slot's segment: recovery gives up the
 * flush it hit and logs that once, at ERROR; the DATA_LOSS record reaches
 * the application without a second line; the slot's state is one INFO line. */
static void a_damaged_slot_is_one_error_line(void **state) {
    (void) state;
    char conf[1024], extra[900];
    snprintf(extra, sizeof extra,
             "sf_dir=%s;sender_id=d;initial_connect_retry=async;close_flush_timeout_millis=0;",
             it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, 1, extra)); /* nothing on port 1 */
    it_publish(s, "t", 0, 100000, 1000);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_E_TIMEOUT); /* the rows stay on disk */
    char seg[700];
    snprintf(seg, sizeof seg, "%s/d/sf-initial.sfa", it_dir);
    flip_byte(seg, 1000000);
    reset(NULL);
    qsink *sink = it_sink(NULL);
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=d;", it_dir);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_error_record r;
    assert_int_equal(qsf_poll_error(s, &r), 1);
    assert_int_equal(r.category, QSF_CAT_DATA_LOSS);
    if (count_lines(NULL, QSF_LOG_ERROR) != 1)
        fail_msg("the loss is not one ERROR line:%s", all_lines());
    int at = 0;
    int rec = line_after(&at, "/d recovered: ");
    assert_int_equal(lines[rec].level, QSF_LOG_INFO);
    assert_non_null(strstr(lines[rec].text, "frames given up in 1 damaged place"));
    it_wait_acked(s, qsf_published_fsn(s));
    assert_int_equal(qsf_close(s, &e), QSF_E_DATA_LOSS);
    qsink_stop(sink);
}

static int damaged_setup(void **state) {
    reset(state);
    return it_setup_dir(state);
}

static int damaged_teardown(void **state) {
    restore(state);
    return it_teardown_dir(state);
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, reset, restore)
        T(an_outage_is_a_few_lines_and_none_per_frame),
        T(events_arrive_in_order),
        T(a_tiny_inbox_drops_and_counts),
        T(a_slow_server_gives_backpressure_episodes),
        T(no_handler_runs_after_close),
        cmocka_unit_test_setup_teardown(a_damaged_slot_is_one_error_line, damaged_setup,
                                        damaged_teardown),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
