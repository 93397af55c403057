/* Creation modes, failure cleanup, wait timeouts, the error handler and the
 * OK-leapfrog rule (docs/PROTOCOL.md §8.4, §8.8, §10.5; docs/ERRORS.md §5). */
#include "itest.h"

#include "log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAST "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=50;"

static void initial_connect_off_fails_and_leaves_the_slot_unlocked(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=s;initial_connect_retry=off;", it_dir);
    it_conf(conf, sizeof conf, qsink_port(sink), extra);
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_new(conf, strlen(conf), &s, &e), QSF_E_CONNECT);
    assert_null(s);
    assert_non_null(strstr(e.msg, "127.0.0.1:"));
    assert_non_null(strstr(e.msg, "503"));
    /* nothing stayed locked or running: the same slot opens at once */
    qsink_fault_clear(sink);
    s = it_sender(conf);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void initial_connect_on_retries_until_a_host_accepts(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1-3 times=3");
    char conf[512];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST "initial_connect_retry=on;"));
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.connected, 1); /* connected before creation returned */
    qsink_stats ks;
    qsink_get_stats(sink, &ks);
    assert_int_equal(ks.rejected, 3);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static void initial_connect_on_gives_up_after_the_budget(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[512];
    it_conf(conf, sizeof conf, qsink_port(sink),
            FAST "initial_connect_retry=on;reconnect_max_duration_millis=200;");
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_new(conf, strlen(conf), &s, &e), QSF_E_CONNECT);
    qsink_stats ks;
    qsink_get_stats(sink, &ks);
    assert_true(ks.rejected >= 2); /* several rounds */
    qsink_stop(sink);
}

static void async_creation_returns_at_once_and_delivers_later(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "reject=503 conn=1+ times=0");
    char conf[512];
    qsf_sender *s = it_sender(
        it_conf(conf, sizeof conf, qsink_port(sink), FAST "initial_connect_retry=async;"));
    int64_t fsn = it_publish(s, "t", 0, 500, 100);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_int_equal(st.ever_connected, 0);
    qsink_fault_clear(sink);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 500, false);
}

static void wait_times_out_only_without_progress(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = it_publish(s, "t", 0, 100, 0);
    qsf_errinfo e;
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 100, &e), QSF_E_TIMEOUT);
    assert_non_null(strstr(e.msg, "no progress"));
    qsink_restart(sink); /* acknowledgements resume on the next connection */
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 5000, &e), QSF_OK);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

static pthread_t main_thread;
static int handled;
static void on_error(void *user, const qsf_error_record *r) {
    int *seen = user;
    if (!pthread_equal(pthread_self(), main_thread) && r->category == QSF_CAT_WRITE_ERROR)
        __atomic_store_n(seen, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static void error_handler_runs_on_a_dispatcher_thread(void **state) {
    (void) state;
    main_thread = pthread_self();
    qsink *sink = it_sink(NULL);
    it_fault(sink, "status=0x09:busy conn=1 seq=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int seen = 0;
    assert_int_equal(qsf_set_error_handler(s, on_error, &seen), QSF_OK);
    int64_t fsn = it_publish(s, "t", 0, 300, 100);
    it_wait_acked(s, fsn);
    for (int k = 0; k < 500 && !__atomic_load_n(&seen, __ATOMIC_SEQ_CST); k++)
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    assert_int_equal(seen, 1);
    qsf_stats st;
    qsf_stats_get(s, &st);
    assert_true(st.error_notifications_delivered >= 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* An older server keeps committing after an error and a later cumulative OK
 * covers the rejected frame: the client must not trim past it. */
static void ok_after_an_error_never_covers_the_rejected_frame(void **state) {
    (void) state;
    qsink_opts o;
    memset(&o, 0, sizeof o);
    o.legacy = 1;
    o.ack_mode = QSINK_ACK_PER_FRAME;
    qsink *sink = it_sink(&o);
    it_fault(sink, "status=0x09:busy conn=1 seq=2");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), FAST));
    int64_t fsn = it_publish(s, "t", 0, 1000, 100);
    it_wait_acked(s, fsn);
    qsf_stats st;
    qsf_stats_get(s, &st);
    /* The rejected frame and whatever followed it were replayed; how many depends
     * on how far the producer had got when the error arrived. The row check
     * below is what proves no OK leapfrogged the rejected frame. */
    assert_true(st.frames_replayed >= 1);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 1000, true); /* rows 200..299 arrive on the replay */
    qsink_stop(sink);
}

static void null_and_bad_arguments(void **state) {
    (void) state;
    qsf_errinfo e;
    assert_int_equal(qsf_table(NULL, "t", 1, &e), QSF_E_INVAL);
    assert_int_equal(qsf_flush(NULL, NULL, &e), QSF_E_INVAL);
    assert_int_equal(qsf_close(NULL, &e), QSF_OK);
    assert_int_equal(qsf_published_fsn(NULL), -1);
    qsf_stats st;
    qsf_stats_get(NULL, &st);
    assert_int_equal(st.published_fsn, -1);
    qsf_sender *s = (qsf_sender *) 1;
    assert_int_equal(qsf_sender_new("http::addr=x;", 13, &s, &e), QSF_E_CONF);
}

static void one_row(qsf_sender *s, int64_t k) {
    qsf_errinfo e;
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
    assert_int_equal(qsf_col_i64(s, "k", 1, k, &e), QSF_OK);
    assert_int_equal(qsf_at_micros(s, 1700000000000000ll + k, &e), QSF_OK);
}

static void auto_flush_by_interval_and_by_bytes(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "auto_flush_rows=off;auto_flush_interval=50;"));
    one_row(s, 0);
    assert_int_equal(qsf_published_fsn(s), -1);
    it_sleep_ms(80);
    one_row(s, 1); /* checked on the next row: the oldest row is 80 ms old */
    assert_int_equal(qsf_published_fsn(s), 0);
    assert_int_equal(qsf_buffered_rows(s), 0);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                          "auto_flush_rows=off;auto_flush_interval=off;auto_flush_bytes=2000;"));
    int k = 0;
    while (qsf_published_fsn(s) < 0 && k < 10000)
        one_row(s, k++);
    assert_true(k > 10 && k < 10000); /* flushed once the batch reached ~2000 bytes */
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* Past QSF_INTERVAL_EXACT_ROWS buffered rows the I/O thread's tick compares the
 * clock (lib/interval.h): the interval still flushes the batch at the next row
 * once it ran out, and never before. */
static void auto_flush_by_interval_on_a_fast_stream(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "auto_flush_rows=off;auto_flush_interval=50;"));
    for (int k = 0; k < 300; k++)
        one_row(s, k);
    assert_int_equal(qsf_published_fsn(s), -1); /* 300 rows in far less than 50 ms */
    it_sleep_ms(300);                           /* the interval and a few ticks */
    one_row(s, 300);
    assert_int_equal(qsf_published_fsn(s), 0);
    assert_int_equal(qsf_buffered_rows(s), 0);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                          "auto_flush_rows=off;auto_flush_interval=10000;"));
    for (int k = 0; k < 300; k++)
        one_row(s, k);
    it_sleep_ms(100); /* ticks that find the batch not yet due */
    one_row(s, 300);
    assert_int_equal(qsf_published_fsn(s), -1);
    assert_int_equal(qsf_buffered_rows(s), 301);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* auto_flush_interval takes milliseconds up to INT64_MAX: an interval longer
 * than int64 nanoseconds hold (292 years) is one that never runs out, not one
 * that wrapped round to the past and flushes every row (lib/interval.h). */
static void auto_flush_interval_of_centuries_never_runs_out(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "auto_flush_rows=off;auto_flush_interval=9999999999999;"));
    for (int k = 0; k < 300; k++) /* the coarse clock's rows, then the I/O thread's */
        one_row(s, k);
    it_sleep_ms(100); /* ticks of the I/O thread */
    one_row(s, 300);
    assert_int_equal(qsf_published_fsn(s), -1);
    assert_int_equal(qsf_buffered_rows(s), 301);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

typedef struct blocked_flush {
    qsf_sender *s;
    int rc;
} blocked_flush;

static void *flush_main(void *arg) {
    blocked_flush *b = arg;
    qsf_errinfo e;
    b->rc = qsf_flush(b->s, NULL, &e);
    return NULL;
}

static void overlapping_calls_get_busy(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "sf_max_segment_bytes=64k;sf_max_total_bytes=128k;"
                                      "sf_append_deadline_millis=1500;auto_flush=off;"
                                      "close_flush_timeout_millis=0;"));
    qsf_errinfo e;
    static const char pad[1000] = {'x'};
    int rc = QSF_OK;
    for (int i = 0; i < 100000 && rc == QSF_OK; i++) { /* fill the ring */
        assert_int_equal(qsf_table(s, "f", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_binary(s, "b", 1, pad, sizeof pad, &e), QSF_OK);
        assert_int_equal(qsf_at_now(s, &e), QSF_OK);
        if (i % 10 == 9)
            rc = qsf_flush(s, NULL, &e);
    }
    assert_int_equal(rc, QSF_E_FULL); /* the rows of that flush stay buffered */
    blocked_flush b = {s, 0};
    pthread_t t;
    pthread_create(&t, NULL, flush_main, &b);
    it_sleep_ms(300); /* the flush is now blocked on the full ring, inside the sender */
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_E_BUSY);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_BUSY);
    pthread_join(t, NULL);
    assert_int_equal(b.rc, QSF_E_FULL);
    assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK); /* free again */
    qsf_row_cancel(s);
    one_row(s, 1);
    /* close cannot publish the buffered rows into the full ring: it says so,
     * with the count, and that they are gone */
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_true(ci.rows_unpublished >= 1);
    assert_non_null(strstr(e.msg, "buffered rows dropped"));
    assert_non_null(strstr(e.msg, "ring full"));
    qsink_stop(sink);
}

static void upgrade_that_never_answers_times_out(void **state) {
    (void) state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(lfd, (struct sockaddr *) &a, sizeof a), 0);
    assert_int_equal(listen(lfd, 4), 0); /* the kernel completes the TCP handshake */
    assert_int_equal(getsockname(lfd, (struct sockaddr *) &a, &al), 0);
    char conf[512];
    it_conf(conf, sizeof conf, ntohs(a.sin_port), "auth_timeout_ms=200;connect_timeout=200;");
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_new(conf, strlen(conf), &s, &e), QSF_E_CONNECT);
    assert_non_null(strstr(e.msg, "timed out"));
    close(lfd);
}

static void sender_from_env(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    setenv("QDB_CLIENT_CONF", it_conf(conf, sizeof conf, qsink_port(sink), ""), 1);
    qsf_sender *s = NULL;
    qsf_errinfo e;
    assert_int_equal(qsf_sender_from_env(&s, &e), QSF_OK);
    one_row(s, 0);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 1, false);
    unsetenv("QDB_CLIENT_CONF");
    assert_int_equal(qsf_sender_from_env(&s, &e), QSF_E_CONF);
    qsink_stop(sink);
}

int main(void) {
    qsf_log_set(NULL, NULL, getenv("QSF_TEST_LOG") ? QSF_LOG_DEBUG : QSF_LOG_OFF);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(initial_connect_off_fails_and_leaves_the_slot_unlocked,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(initial_connect_on_retries_until_a_host_accepts,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(initial_connect_on_gives_up_after_the_budget, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(async_creation_returns_at_once_and_delivers_later,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test_setup_teardown(wait_times_out_only_without_progress, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(error_handler_runs_on_a_dispatcher_thread, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(ok_after_an_error_never_covers_the_rejected_frame,
                                        it_setup_dir, it_teardown_dir),
        cmocka_unit_test(null_and_bad_arguments),
        cmocka_unit_test(auto_flush_by_interval_and_by_bytes),
        cmocka_unit_test(auto_flush_by_interval_on_a_fast_stream),
        cmocka_unit_test(auto_flush_interval_of_centuries_never_runs_out),
        cmocka_unit_test(overlapping_calls_get_busy),
        cmocka_unit_test(upgrade_that_never_answers_times_out),
        cmocka_unit_test(sender_from_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
