/* Edge paths of the sender API against qwp-sink: flushes that are all or
 * nothing, close adding no frame of its own (docs/ERRORS.md §6), the FSN an empty flush returns
 * (docs/ERRORS.md §2), wait's argument checks (docs/PROTOCOL.md §8.8), a terminal error waking a
 * producer blocked on a full ring (docs/ERRORS.md §4), and append mode's frame writes and barrier
 * failing. */
#include "itest.h"

#include "os/os.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FAST_RECONNECT "reconnect_initial_backoff_millis=10;reconnect_max_backoff_millis=100;"

static const uint8_t EMPTY_COMMIT[] = {0x51, 0x57, 0x50, 0x31, 0x01, 0x08, 0x00,
                                       0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00};

/* One row of table "t" with a 1000-byte binary column; returns the rc of the row. */
static int big_row(qsf_sender *s, int64_t k) {
    static const char pad[1000] = {'x'};
    qsf_errinfo e;
    int rc = qsf_table(s, "t", 1, &e);
    if (rc == QSF_OK)
        rc = qsf_col_i64(s, "k", 1, k, &e);
    if (rc == QSF_OK)
        rc = qsf_col_binary(s, "b", 1, pad, sizeof pad, &e);
    if (rc == QSF_OK)
        rc = qsf_at_micros(s, 1700000000000000ll + k, &e);
    return rc;
}

/* ---- a flush is all or nothing ---- */

static int64_t publish_big_rows(qsf_sender *s, int64_t from, int64_t n) {
    for (int64_t i = from; i < from + n; i++)
        assert_int_equal(big_row(s, i), QSF_OK);
    return from + n;
}

/* A flush split into deferred frames that the ring cannot take before its
 * deadline (acknowledgements withheld) fails with nothing published and every
 * row still buffered; once the server acknowledges again the same rows flush
 * and arrive exactly once. Before, the leading deferred frames were published
 * and close committed them with an empty frame: rows of a failed flush. */
static void failed_split_flush_is_never_delivered(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 8192, .record_payloads = 1};
    qsink *sink = it_sink(&o);
    it_fault(sink, "withhold-ok conn=1"); /* nothing acked: the ring fills */
    char conf[512];
    qsf_sender *s =
        it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                          "sf_max_segment_bytes=64k;sf_max_total_bytes=512k;"
                          "sf_append_deadline_millis=100;auto_flush=off;" FAST_RECONNECT));
    qsf_errinfo e;
    int64_t k = publish_big_rows(s, 0, 300); /* ~300 KB: fits the empty ring */
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
    int64_t first_frames = qsf_published_fsn(s) + 1;
    k = publish_big_rows(s, k, 300); /* the ring holds the first flush, unacknowledged */
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_FULL);
    assert_true(e.flags & QSF_ERRF_RETRIABLE);
    assert_false(e.flags & QSF_ERRF_IN_DOUBT); /* nothing of it was published */
    assert_int_equal(qsf_buffered_rows(s), 300);
    assert_int_equal(qsf_published_fsn(s), first_frames - 1);
    assert_int_equal(qsink_wait_frames(sink, first_frames, 20000), 0);
    it_sleep_ms(100);
    qsink_frame fr[256];
    assert_int_equal(qsink_frames(sink, 1, fr, 256), first_frames); /* none of the second */
    qsink_fault_clear(sink);
    qsink_restart(sink); /* acks flow again; the first flush is replayed */
    it_wait_acked(s, first_frames - 1);
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK); /* the same 300 rows, now */
    it_wait_acked(s, fsn);
    /* the first flush was committed but not acknowledged, so it is replayed
     * once; the second arrives exactly once */
    assert_int_equal(qsink_rows(sink, "t"), 300 * 2 + 300);
    it_close_and_check(s, sink, "t", k, true);
}

/* A flush that can never fit the ring fails at once (not after the append
 * deadline) with QSF_E_TOO_LARGE, not retriable, naming the sizes; nothing is
 * published and the rows stay buffered until qsf_close drops them, saying so. */
static void flush_that_can_never_fit_fails_at_once(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 8192, .record_payloads = 1};
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "sf_max_segment_bytes=64k;sf_max_total_bytes=128k;"
                                      "sf_append_deadline_millis=600000;auto_flush=off;"));
    publish_big_rows(s, 0, 300); /* ~300 KB into a ring of 128 KiB */
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_TOO_LARGE); /* else: a 10-minute wait */
    assert_false(e.flags & QSF_ERRF_RETRIABLE);
    assert_non_null(strstr(e.msg, "sf_max_total_bytes=131072"));
    assert_non_null(strstr(e.msg, "nothing was published"));
    assert_int_equal(qsf_buffered_rows(s), 300);
    assert_int_equal(qsf_published_fsn(s), -1);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_TOO_LARGE); /* the same, every time */
    /* the application can give them up explicitly and carry on */
    assert_int_equal(qsf_buffer_clear(s), 300);
    assert_int_equal(qsf_buffered_rows(s), 0);
    publish_big_rows(s, 300, 50);
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    publish_big_rows(s, 0, 300); /* and close drops what it cannot publish, saying so */
    qsf_close_info ci = {.struct_size = sizeof ci};
    assert_int_equal(qsf_close_report(s, &ci, &e), QSF_E_DATA_LOSS);
    assert_int_equal(ci.rows_unpublished, 300);
    assert_non_null(strstr(e.msg, "300 buffered rows dropped"));
    assert_int_equal(qsink_rows(sink, "t"), 50);
    qsink_stop(sink);
}

/* QSF_E_TOO_LARGE means the rows need more of the ring than
 * sf_max_total_bytes allows (qsf.h). A flush of 100 rows (15 frames) fits a
 * ring of two 64 KiB segments (9 frames each), and does on an empty ring;
 * after an earlier, acknowledged flush it starts in the tail of the active
 * segment, needs a third segment and fails with QSF_E_TOO_LARGE, the same on
 * every retry (it starts at the same place), so the rows can only be given
 * up. */
static void flush_that_fits_the_ring_is_not_too_large(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 8192};
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "sf_max_segment_bytes=64k;sf_max_total_bytes=128k;"
                                      "sf_append_deadline_millis=5000;auto_flush=off;"));
    qsf_errinfo e;
    int64_t fsn;
    publish_big_rows(s, 0, 100); /* alone on an empty ring it fits */
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    publish_big_rows(s, 100, 50);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn); /* everything acknowledged: the whole ring is free */
    publish_big_rows(s, 150, 100);
    int rc = qsf_flush(s, &fsn, &e);
    if (rc != QSF_OK)
        fail_msg("a flush as large as one that fit the ring before: %d: %s", rc, e.msg);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 250, false);
}

/* A row accepted by qsf_at_* can always be flushed: rows were checked against
 * a fixed 1,992,294-byte limit whatever sf_max_segment_bytes was, so a 100 KB
 * row in a 64 KiB segment was accepted and then every flush failed with
 * QSF_E_TOO_LARGE, no call could remove it, and close dropped every row.
 * Now the call that completes such a row refuses it, and the rows before it
 * stay intact and flush. */
static void row_too_large_for_the_segment_is_refused_by_its_at_call(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(
        it_conf(conf, sizeof conf, qsink_port(sink), "sf_max_segment_bytes=64k;auto_flush=off;"));
    qsf_errinfo e;
    int64_t k = publish_big_rows(s, 0, 10);
    static char blob[100000];
    static double arr[12000];
    int32_t shape[1] = {12000}; /* 96 KB of doubles */
    for (int which = 0; which < 2; which++) {
        assert_int_equal(qsf_table(s, "t", 1, &e), QSF_OK);
        assert_int_equal(qsf_col_i64(s, "k", 1, 999, &e), QSF_OK);
        if (which == 0)
            assert_int_equal(qsf_col_binary(s, "b", 1, blob, sizeof blob, &e), QSF_OK);
        else
            assert_int_equal(qsf_col_f64_array(s, "a", 1, 1, shape, arr, &e), QSF_OK);
        assert_int_equal(qsf_at_micros(s, 1700000000000000ll, &e), QSF_E_TOO_LARGE);
        assert_non_null(strstr(e.msg, "the row was discarded"));
        assert_int_equal(qsf_buffered_rows(s), 10); /* the rows before it are intact */
    }
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", k, false);
}

/* A close whose last frame commits adds no empty frame. */
static void close_after_a_committing_frame_adds_no_empty_frame(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 8192};
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush=off;"));
    for (int64_t i = 0; i < 30; i++) /* buffered: close's own flush publishes them */
        assert_int_equal(big_row(s, i), QSF_OK);
    qsf_errinfo e;
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    it_assert_rows(sink, "t", 30, false);
    qsink_frame fr[16];
    int64_t total = qsink_frames(sink, 1, fr, 16);
    assert_true(total >= 2 && total <= 16); /* split into several frames */
    assert_false(fr[total - 1].flags & 0x01);
    assert_true(fr[total - 1].size > sizeof EMPTY_COMMIT);
    qsink_stop(sink);
}

/* ---- append mode: a failed barrier ---- */

/* A sender on slot `id` of it_dir with sf_durability=append, flushed by hand. */
static qsf_sender *append_sender(qsink *sink, const char *id) {
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=%s;sf_durability=append;auto_flush=off;",
             it_dir, id);
    return it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
}

static _Atomic int segment_syncs_fail;

static int eio_segment_fdatasync(int fd) {
    if (atomic_load(&segment_syncs_fail) && tu_fd_path_ends_with(fd, ".sfa")) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

/* sf_durability=append: the flush's barrier fails, and so does making the
 * undoing of its frames durable. qsf_flush must say the outcome is in doubt
 * (qsf.h: QSF_E_DURABILITY with QSF_ERRF_IN_DOUBT), since a host crash could
 * bring the whole flush, committing frame included, back. */
static void append_barrier_whose_undo_fails_is_in_doubt(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    QSF_OS->fdatasync = eio_segment_fdatasync; /* before any thread reads the table */
    qsf_sender *s = append_sender(sink, "a");
    qsf_errinfo e;
    int64_t fsn;
    publish_big_rows(s, 0, 10);
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    atomic_store(&segment_syncs_fail, 1);
    publish_big_rows(s, 10, 10);
    int rc = qsf_flush(s, NULL, &e);
    atomic_store(&segment_syncs_fail, 0);
    assert_int_equal(rc, QSF_E_DURABILITY);
    assert_int_equal(qsf_published_fsn(s), fsn); /* nothing of it published */
    if (!(e.flags & QSF_ERRF_IN_DOUBT))
        fail_msg("the undo could not be made durable, yet the error is not in doubt "
                 "(flags 0x%x): %s",
                 e.flags, e.msg);
    assert_int_not_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
    qsf_os_reset(); /* no thread is left to read the table */
}

/* ---- append mode: a frame the disk does not take ---- */

/* The n-th pwrite into a segment file from now, on the thread that armed it
 * (the producer: the spare thread writes segment headers too), fails with
 * `errno_to_fail`; later ones go through. */
static _Atomic int frame_write_errno, frame_write_countdown;
static pthread_t frame_write_thread;

static ssize_t failing_segment_pwrite(int fd, const void *buf, size_t n, off_t off) {
    int e = atomic_load(&frame_write_errno);
    if (e && pthread_equal(pthread_self(), frame_write_thread) &&
        tu_fd_path_ends_with(fd, ".sfa") && atomic_fetch_sub(&frame_write_countdown, 1) == 1) {
        atomic_store(&frame_write_errno, 0);
        errno = e;
        return -1;
    }
    return pwrite(fd, buf, n, off);
}

/* Flushes 30 rows (several frames) whose nth_write-th segment pwrite fails
 * with e: the flush fails, naming the segment file, with the code of the
 * errno and retriable (docs/ERRORS.md §2), nothing published, every row still
 * buffered. */
static void flush_fails_at_write(qsf_sender *s, int e, int nth_write, int code) {
    int64_t before = qsf_published_fsn(s);
    size_t rows = qsf_buffered_rows(s);
    frame_write_thread = pthread_self();
    atomic_store(&frame_write_countdown, nth_write);
    atomic_store(&frame_write_errno, e);
    qsf_errinfo err;
    int rc = qsf_flush(s, NULL, &err);
    atomic_store(&frame_write_errno, 0);
    if (rc != code || !(err.flags & QSF_ERRF_RETRIABLE))
        fail_msg("write %d failing with %s: %s (flags 0x%x), not %s and retriable: %s", nth_write,
                 strerror(e), qsf_err_name(rc), err.flags, qsf_err_name(code), err.msg);
    assert_non_null(strstr(err.msg, ".sfa at offset"));
    assert_non_null(strstr(err.msg, strerror(e)));
    assert_int_equal(qsf_published_fsn(s), before);
    assert_int_equal(qsf_buffered_rows(s), rows);
}

/* sf_durability=append writes frames with pwrite (docs/DURABILITY.md §3.2). A
 * full disk or an I/O error there fails the flush as the barrier's failure
 * does: undone, retriable, the rows kept; once the disk takes writes again the
 * same flush goes through and every row arrives once. */
static void append_frame_write_failure_is_retriable(void **state) {
    (void) state;
    qsink_opts o = {.max_batch = 8192};
    qsink *sink = it_sink(&o);
    QSF_OS->pwrite = failing_segment_pwrite; /* before any thread reads the table */
    qsf_sender *s = append_sender(sink, "w");
    qsf_errinfo e;
    publish_big_rows(s, 0, 10);
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_OK);
    publish_big_rows(s, 10, 30);
    /* each frame is 3 writes (envelope, payload, CRC; 2 when its CRC straddles
     * a page): the first frame's envelope, then frames further in */
    flush_fails_at_write(s, ENOSPC, 1, QSF_E_NOSPC);
    flush_fails_at_write(s, ENOSPC, 8, QSF_E_NOSPC);
    flush_fails_at_write(s, EIO, 6, QSF_E_IO);
    int64_t fsn;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    it_wait_acked(s, fsn);
    it_close_and_check(s, sink, "t", 40, false);
    qsf_os_reset(); /* no thread is left to read the table */
}

/* ---- docs/ERRORS.md §2: an empty flush reports the current published FSN ---- */

static void empty_flush_returns_the_published_fsn(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[1024], extra[700];
    snprintf(extra, sizeof extra, "sf_dir=%s;sender_id=e;auto_flush=off;", it_dir);
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    qsf_errinfo e;
    int64_t fsn = 12345;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, -1); /* fresh slot: nothing ever published */
    int64_t last = it_publish(s, "t", 0, 30, 10);
    assert_int_equal(last, 2);
    fsn = 12345;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, last); /* not stale, not -1, not last + 1 */
    it_close_and_check(s, sink, "t", 30, false);
    /* a slot closed fully drained starts fresh: -1 again, then the new FSNs */
    sink = it_sink(NULL);
    s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), extra));
    fsn = 12345;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, -1);
    last = it_publish(s, "t", 30, 40, 0);
    assert_int_equal(last, 0);
    fsn = 12345;
    assert_int_equal(qsf_flush(s, &fsn, &e), QSF_OK);
    assert_int_equal(fsn, last);
    assert_int_equal(qsf_close(s, &e), QSF_OK);
    qsink_stop(sink);
}

/* ---- docs/PROTOCOL.md §8.8: qsf_wait argument checks ---- */

static void wait_rejects_durable_without_negotiation_and_future_fsns(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    char conf[512];
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush=off;"));
    qsf_errinfo e;
    int64_t fsn = it_publish(s, "t", 0, 10, 0);
    assert_int_equal(fsn, 0);
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_DURABLE, 1000, &e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "request_durable_ack"));
    assert_int_equal(qsf_wait(s, fsn + 1, QSF_WAIT_OK, 1000, &e), QSF_E_INVAL);
    assert_non_null(strstr(e.msg, "fsn 1"));
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_OK, 20000, &e), QSF_OK);
    /* neither failure poisoned the sender */
    int64_t fsn2 = it_publish(s, "t", 10, 20, 0);
    assert_int_equal(fsn2, 1);
    assert_int_equal(qsf_wait(s, fsn2, QSF_WAIT_OK, 20000, &e), QSF_OK);
    it_close_and_check(s, sink, "t", 20, false);
}

/* With durable acks negotiated the same wait is accepted. */
static void wait_durable_is_accepted_when_negotiated(void **state) {
    (void) state;
    qsink_opts o = {.durable = 1};
    qsink *sink = it_sink(&o);
    char conf[512];
    qsf_sender *s = it_sender(
        it_conf(conf, sizeof conf, qsink_port(sink), "auto_flush=off;request_durable_ack=on;"));
    qsf_errinfo e;
    int64_t fsn = it_publish(s, "t", 0, 10, 0);
    assert_int_equal(qsf_wait(s, fsn, QSF_WAIT_DURABLE, 20000, &e), QSF_OK);
    assert_int_equal(qsf_wait(s, fsn + 1, QSF_WAIT_DURABLE, 1000, &e), QSF_E_INVAL);
    it_close_and_check(s, sink, "t", 10, false);
}

/* ---- a terminal error wakes a producer blocked on a full ring ---- */

typedef struct {
    qsf_sender *s;
    int rc;
    qsf_errinfo e;
} producer;

static void *produce_until_error(void *arg) {
    producer *p = arg;
    p->rc = QSF_OK;
    for (int64_t i = 0; p->rc == QSF_OK; i++) {
        p->rc = big_row(p->s, i);
        if (p->rc == QSF_OK && i % 10 == 9)
            p->rc = qsf_flush(p->s, NULL, &p->e);
    }
    return NULL;
}

static void terminal_error_wakes_a_blocked_producer(void **state) {
    (void) state;
    qsink *sink = it_sink(NULL);
    it_fault(sink, "withhold-ok conn=1");
    char conf[512];
    /* the append deadline is far beyond the test's timeout: only the error
     * can end the wait */
    qsf_sender *s = it_sender(it_conf(conf, sizeof conf, qsink_port(sink),
                                      "sf_max_segment_bytes=64k;sf_max_total_bytes=128k;"
                                      "sf_append_deadline_millis=600000;auto_flush=off;"
                                      "reconnect_initial_backoff_millis=10;"
                                      "reconnect_max_backoff_millis=50;"
                                      "close_flush_timeout_millis=0;"));
    producer p = {.s = s};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, produce_until_error, &p), 0);
    qsf_stats st;
    do { /* until the producer waits for space */
        it_sleep_ms(10);
        qsf_stats_get(s, &st);
    } while (st.backpressure_stalls == 0);
    it_sleep_ms(100);
    /* the replay on the next connection is refused with PARSE_ERROR */
    it_fault(sink, "status=0x05:badframe conn=2 seq=0");
    qsink_restart(sink);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(p.rc, QSF_E_SERVER);
    assert_non_null(strstr(p.e.msg, "PARSE_ERROR"));
    qsf_errinfo e;
    assert_int_equal(qsf_flush(s, NULL, &e), QSF_E_SERVER); /* latched */
    /* returned again by close, although the application has seen it */
    assert_int_equal(qsf_close(s, &e), QSF_E_SERVER);
    qsink_stop(sink);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failed_split_flush_is_never_delivered),
        cmocka_unit_test(flush_that_can_never_fit_fails_at_once),
        cmocka_unit_test(flush_that_fits_the_ring_is_not_too_large),
        cmocka_unit_test(row_too_large_for_the_segment_is_refused_by_its_at_call),
        cmocka_unit_test(close_after_a_committing_frame_adds_no_empty_frame),
        cmocka_unit_test_setup_teardown(empty_flush_returns_the_published_fsn, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test(wait_rejects_durable_without_negotiation_and_future_fsns),
        cmocka_unit_test(wait_durable_is_accepted_when_negotiated),
        cmocka_unit_test(terminal_error_wakes_a_blocked_producer),
        cmocka_unit_test_setup_teardown(append_frame_write_failure_is_retriable, it_setup_dir,
                                        it_teardown_dir),
        cmocka_unit_test_setup_teardown(append_barrier_whose_undo_fails_is_in_doubt, it_setup_dir,
                                        it_teardown_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
